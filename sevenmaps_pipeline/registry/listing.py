"""The listing rules: which registry remotes may be probed, and why each other one is skipped.

The methodology's `scope.skipped` (docs/methodology.md, "The prober"): sse-only remotes, templated
addresses, non-https addresses, IP addresses, localhost and private names, opted-out hosts (robots.txt is
read per origin by the prober); and URLs that carry credentials (userinfo), since 7Maps-bot never sends
credentials: such a URL is never contacted and is stored redacted. A public name that resolves to a
non-public address is refused later, at connect time (probe/netguard.py), and skipped with SkipReason.NON_PUBLIC.
"""

from __future__ import annotations

import enum
import ipaddress
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ..rules.hosts import whatwg_ipv4

# Names that never denote a public host (RFC 6761/6762/8375 and common private zones).
PRIVATE_SUFFIXES = (".localhost", ".local", ".internal", ".intranet", ".lan", ".home", ".corp", ".private",
                    ".home.arpa", ".test", ".example", ".invalid", ".onion")


class SkipReason(enum.StrEnum):
    """Why a listing is not contacted (the methodology's `scope.skipped`), each a named kind whose value is
    the text stored in `skip_reason`."""

    SSE_ONLY = "sse-only remote"
    TEMPLATED = "templated URL"
    NOT_HTTPS = "non-https URL"
    IP = "IP address"
    PRIVATE = "localhost or private name"
    OPTED_OUT = "host opted out"
    ROBOTS = "robots.txt disallows 7Maps-bot"
    CREDENTIALS = "credentials in URL"
    NON_PUBLIC = "resolves to a non-public address"


class Malformed(enum.StrEnum):
    """Why a registry entry or remote is not a listing at all."""

    NOT_AN_OBJECT = "entry is not an object"
    SERVER_NOT_AN_OBJECT = "entry.server is not an object"
    NO_VALID_NAME = "entry has no valid name"
    REMOTES_NOT_A_LIST = "remotes is not a list"
    REMOTE_NOT_AN_OBJECT = "remote is not an object"
    NOT_KEYABLE = "URL cannot be keyed"
    NO_URL = "remote has no URL"
    UNKNOWN_TYPE = "unknown remote type"
    UNPARSEABLE = "unparseable URL"
    NO_HOST = "URL has no host"
    TOO_DEEP = "entry nests too deeply to be read"
    NOT_HTTP = "not an http(s) URL"  # an owner's own check (--allow-private) takes plain http too, nothing else


@dataclass(frozen=True)
class ListingDecision:
    """What the listing rules decide for one remote: probe it, skip it (`kind`: a SkipReason) or set it aside
    as malformed (`kind`: a Malformed); `text` is the line stored as its skip_reason."""

    verdict: str  # probe | skip | malformed
    kind: SkipReason | Malformed | None = None
    detail: str | None = None  # what the text adds to the kind (the remote type given, the parser's words)

    @property
    def text(self) -> str | None:
        if self.kind is None:
            return None
        return str(self.kind) if self.detail is None else f"{self.kind}{self.detail}"


PROBE = ListingDecision("probe")
REDACTED = "REDACTED"
# userinfo (`user:secret@`) in any http(s) URL inside a text: what is stored in its place.
_USERINFO = re.compile(r"(?i)\b(https?:(?://|\\/\\/))[^/\\\s\"'?#]*@")


# A URL's userinfo as a browser may read it: after the scheme and any slashes or backslashes, everything up to the
# last "@" before the path, whatever it holds (a backslash, a space, quotes), slashes or none (`https:user:pw@host`).
_URL_USERINFO = re.compile(r"(?is)^(\s*[a-z][a-z0-9+.-]*:[/\\]*)[^/?#]*@")
# A secret a listing's JSON may carry outside a URL: a header's value, and an Authorization value in any text.
_SECRET_HEADERS = {"authorization", "proxy-authorization", "cookie", "x-api-key", "api-key", "apikey", "x-auth-token"}
_AUTH_VALUE = re.compile(r"(?i)\b(bearer|basic|token)(\s+)[a-z0-9._~+/=-]{6,}")


def has_userinfo(url: str) -> bool:
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return "@" in url
    return "@" in parts.netloc or _URL_USERINFO.match(url) is not None


def redacted_url(url: str) -> str:
    """A listed URL as it may be stored: its userinfo, in any form a browser may read as one, made REDACTED."""
    return redact_userinfo(_URL_USERINFO.sub(lambda m: m.group(1) + REDACTED + "@", url, count=1))


def redacted_entry(entry: Any) -> Any:
    """A registry entry as it may be stored: every URL in it redacted as `redacted_url`, and the value of a secret
    header (`isSecret`, or an Authorization, Cookie or API-key header) REDACTED. RecursionError when it nests
    too deeply to walk (the caller lists it malformed)."""
    if isinstance(entry, str):
        return _AUTH_VALUE.sub(lambda m: m.group(1) + m.group(2) + REDACTED, redacted_url(entry))
    if isinstance(entry, list):
        return [redacted_entry(item) for item in entry]
    if not isinstance(entry, dict):
        return entry
    secret = "value" in entry and (entry.get("isSecret") is True or entry.get("is_secret") is True or (
        isinstance(entry.get("name"), str) and entry["name"].strip().lower() in _SECRET_HEADERS))
    return {key: REDACTED if secret and key == "value" else redacted_entry(value) for key, value in entry.items()}


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
                     host_map: Mapping[str, int] | None = None) -> ListingDecision:
    """Whether one registry remote is probed, skipped (and why) or malformed (and why).

    Names in `host_map` (demo and test configuration only) are the fleet's, so they are not private."""
    if not isinstance(url, str) or not url.strip():
        return ListingDecision("malformed", Malformed.NO_URL)
    if remote_type not in ("streamable-http", "sse"):
        return ListingDecision("malformed", Malformed.UNKNOWN_TYPE, f" {remote_type!r}")
    if "{" in url or "}" in url:
        return ListingDecision("skip", SkipReason.TEMPLATED)
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError as exc:
        return ListingDecision("malformed", Malformed.UNPARSEABLE, f": {exc}")
    if "@" in parts.netloc:  # before anything else is read from it: this URL is never contacted
        return ListingDecision("skip", SkipReason.CREDENTIALS)
    if parts.scheme.lower() != "https":
        return ListingDecision("skip", SkipReason.NOT_HTTPS)
    host = (parts.hostname or "").lower().rstrip(".")
    if not host:
        return ListingDecision("malformed", Malformed.NO_HOST)
    try:  # a host a browser reads as IPv4 (127.1, 0x7f.0.0.1, 2130706433) is an IP address too
        numeric = whatwg_ipv4(host)
    except ValueError as exc:
        return ListingDecision("malformed", Malformed.UNPARSEABLE, f": {exc}")
    if numeric is not None or _is_ip(host):
        return ListingDecision("skip", SkipReason.IP)
    # The fleet's map is normalised already (probe.config.HostMap): look the name up, and normalise the
    # keys only when it is not found (never once per listing for every name).
    mapped = host_map is not None and (host in host_map or host in {h.lower().rstrip(".") for h in host_map})
    if not mapped and is_private_name(host):
        return ListingDecision("skip", SkipReason.PRIVATE)
    if is_opted_out(host, opted_out):
        return ListingDecision("skip", SkipReason.OPTED_OUT)
    if remote_type == "sse":  # last: only a public, permitted SSE endpoint is opened (and kept off the map)
        return ListingDecision("skip", SkipReason.SSE_ONLY)
    return PROBE


# Which of an endpoint's listings names it (status-1.4; sql/naming_listings.sql holds the same two tests in SQL,
# tests/test_naming_order_property.py holds them to one listing): an endpoint's key ignores the port, the query,
# `www.` and a trailing dot or slash, so anyone may list another's endpoint under a URL of the same key. A listing
# whose registry namespace is the URL's host (the registry proves a reverse-DNS namespace by DNS or HTTP) comes
# first, then a URL that is the key's own plain form, so a stranger's variant never replaces the owner's listing.
NAMESPACE_DOMAIN = re.compile(r"[A-Za-z0-9.-]+")
URL_HOST = re.compile(r"^[Hh][Tt][Tt][Pp][Ss]?://([A-Za-z0-9.-]+)")
PLAIN_URL = re.compile(r"https://[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(/[^?#]*[^/?#])?")


def namespace_owns_host(server_name: Any, url: Any) -> bool:
    """Whether a listing's reverse-DNS namespace (`com.example/...`) is its URL's host or a parent of it."""
    if not isinstance(server_name, str) or not isinstance(url, str):
        return False
    namespace = server_name.split("/", 1)[0]
    found = URL_HOST.match(url)
    if not NAMESPACE_DOMAIN.fullmatch(namespace) or found is None:
        return False
    domain, host = ".".join(reversed(namespace.split("."))).lower(), found.group(1).lower()
    return "." in domain and (host == domain or host.endswith("." + domain))


def plain_url(url: Any) -> bool:
    """https://host/path with no port, userinfo, query, fragment, trailing slash or trailing dot."""
    return isinstance(url, str) and PLAIN_URL.fullmatch(url) is not None
