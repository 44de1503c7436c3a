"""The methodology's redirect rule (docs/methodology.md), in one place for the checks and the per-origin
GETs: a redirect to the same registrable domain over https is followed once; any other (another domain,
plain http, a URL carrying credentials, an invalid Location) is recorded and not followed. An IP literal has
no registrable domain: it is the same site only as the same address; so is a name without one (`localhost`):
only the very same host."""

from __future__ import annotations

import ipaddress
from urllib.parse import urljoin, urlsplit

import httpx

from ..registry.listing import has_userinfo
from ..rules.hosts import ascii_host, whatwg_ipv4
from ..rules.psl import registrable_domain


def _site(host: str) -> str | None:
    """What a redirect must stay within: the registrable domain of a name, or the address itself for an IP
    literal (read as a browser reads it: `127.1` is 127.0.0.1), never its last two octets as if a name."""
    try:
        # A zone id (`%eth0`) belongs to an IPv6 address only: `203.0.113.5%.evil.com` is a name under evil.com,
        # and the client resolves it as one.
        return f"address {ipaddress.ip_address(host.split('%')[0] if ':' in host else host)}"
    except ValueError:
        pass
    try:
        address = whatwg_ipv4(host)
    except ValueError:
        return f"invalid address {host}"  # ends in a number yet no address: only the very same host matches
    if address is not None:
        return f"address {address}"
    # A name with no registrable domain (`localhost`, `intranet`, a bare suffix such as `ai`) is its own site:
    # None == None would make any two of them one domain (docs/methodology.md, "Redirects"). A name is read in
    # the ASCII form the client connects to, so `bücher.de` and `xn--bcher-kva.de` are one domain.
    domain = registrable_domain(ascii_host(host))
    return domain if domain is not None else f"host {host}"


def redirect_target(url: str, location: str) -> tuple[str | None, str | None]:
    """(the absolute target, or None when the Location is not a valid URL; why it may not be followed,
    or None when it may)."""
    try:
        target = urljoin(url, location.strip())
        parts = urlsplit(target)
        host = (parts.hostname or "").lower().rstrip(".")
        parts.port  # noqa: B018 - raises on a malformed port
        httpx.URL(target)
    except (ValueError, httpx.InvalidURL):
        return None, "an invalid Location"
    if has_userinfo(target):
        return target, "a URL carrying credentials"
    # Never a step down from https. A plain-http URL is contacted only when an owner allows it (`sevenmaps probe
    # --allow-private`: listings are https or skipped), and its redirect to plain http on the same site (a
    # framework's `/mcp` -> `/mcp/`) is no step down.
    if parts.scheme != "https" and not (parts.scheme == "http" and urlsplit(url).scheme == "http"):
        return target, f"plain {parts.scheme or 'non-https'} ({host})"
    if not host or _site(host) != _site((urlsplit(url).hostname or "").lower().rstrip(".")):
        return target, f"another domain ({host})"
    return target, None


def invalid_location(exc: BaseException) -> bool:
    """httpx raises RemoteProtocolError for a Location header it cannot parse (it builds the redirect
    request even when redirects are not followed): the server answered, with a bad redirect."""
    return isinstance(exc, httpx.RemoteProtocolError) and str(exc).startswith("Invalid URL in location header")
