"""The listing rules: which registry remotes may be probed, and why each other one is skipped.

The methodology's `scope.skipped` (docs/methodology.md, "The prober"): sse-only remotes, templated
addresses, non-https addresses, IP addresses, localhost and private names, opted-out hosts (robots.txt is
read per origin by the prober); and URLs that carry credentials (userinfo), since 7Maps-bot never sends
credentials: such a URL is never contacted and is stored redacted. A public name that resolves to a
non-public address is refused later, at connect time (probe/netguard.py), and skipped with SKIP_NON_PUBLIC.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Collection, Mapping
from urllib.parse import urlsplit

# Names that never denote a public host (RFC 6761/6762/8375 and common private zones).
PRIVATE_SUFFIXES = (".localhost", ".local", ".internal", ".intranet", ".lan", ".home", ".corp", ".private",
                    ".home.arpa", ".test", ".example", ".invalid", ".onion")

SKIP_SSE_ONLY = "sse-only remote"
SKIP_TEMPLATED = "templated URL"
SKIP_NOT_HTTPS = "non-https URL"
SKIP_IP = "IP address"
SKIP_PRIVATE = "localhost or private name"
SKIP_OPTED_OUT = "host opted out"
SKIP_ROBOTS = "robots.txt disallows 7Maps-bot"
SKIP_CREDENTIALS = "credentials in URL"
SKIP_NON_PUBLIC = "resolves to a non-public address"
REDACTED = "REDACTED"
# userinfo (`user:secret@`) in any http(s) URL inside a text: what is stored in its place.
_USERINFO = re.compile(r"(?i)\b(https?:(?://|\\/\\/))[^/\\\s\"'?#]*@")


def has_userinfo(url: str) -> bool:
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return "@" in url
    return "@" in parts.netloc


def redact_userinfo(text: str) -> str:
    """The text with the userinfo of every http(s) URL in it replaced by REDACTED (a URL in a registry
    entry's JSON included, slashes escaped or not): credentials are never stored (the methodology's `never`)."""
    return _USERINFO.sub(lambda m: m.group(1) + REDACTED + "@", text)


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return False
    return True


def is_private_name(host: str) -> bool:
    if host in ("localhost", "") or "." not in host:
        return True
    return any(host.endswith(s) or host == s[1:] for s in PRIVATE_SUFFIXES)


def is_opted_out(host: str, opted_out: Collection[str]) -> bool:
    """The host, or a name it is under, opted out (an opt-out covers every name under the host)."""
    host = host.lower().rstrip(".")
    return any(host == h or host.endswith("." + h) for h in (o.lower().rstrip(".") for o in opted_out))


def listing_decision(url: str | None, remote_type: str | None, *, opted_out: Collection[str] = (),
                     host_map: Mapping[str, int] | None = None) -> tuple[str, str | None]:
    """('probe', None) or ('skip', reason) or ('malformed', reason) for one registry remote.

    Names in `host_map` (demo and test configuration only) are the fleet's, so they are not private."""
    if not isinstance(url, str) or not url.strip():
        return "malformed", "remote has no URL"
    if remote_type not in ("streamable-http", "sse"):
        return "malformed", f"unknown remote type {remote_type!r}"
    if "{" in url or "}" in url:
        return "skip", SKIP_TEMPLATED
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError as exc:
        return "malformed", f"unparseable URL: {exc}"
    if "@" in parts.netloc:  # before anything else is read from it: this URL is never contacted
        return "skip", SKIP_CREDENTIALS
    if parts.scheme.lower() != "https":
        return "skip", SKIP_NOT_HTTPS
    host = (parts.hostname or "").lower().rstrip(".")
    if not host:
        return "malformed", "URL has no host"
    if _is_ip(host):
        return "skip", SKIP_IP
    # The fleet's map is normalised already (probe.config.HostMap): look the name up, and normalise the
    # keys only when it is not found (never once per listing for every name).
    mapped = host_map is not None and (host in host_map or host in {h.lower().rstrip(".") for h in host_map})
    if not mapped and is_private_name(host):
        return "skip", SKIP_PRIVATE
    if is_opted_out(host, opted_out):
        return "skip", SKIP_OPTED_OUT
    if remote_type == "sse":  # last: only a public, permitted SSE endpoint is opened (and kept off the map)
        return "skip", SKIP_SSE_ONLY
    return "probe", None
