"""A URL's host, as every part of the map reads it."""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

import httpx

# Names that never denote a public host (RFC 6761/6762/8375 and common private zones).
PRIVATE_SUFFIXES = (".localhost", ".local", ".internal", ".intranet", ".lan", ".home", ".corp", ".private",
                    ".home.arpa", ".test", ".example", ".invalid", ".onion")

# A URL whose authority is a plain name (letters, digits, dots, hyphens) and an optional port, followed by
# the path, query, fragment or the end: the hostname urlsplit gives is that name, lowercased.
_PLAIN_AUTHORITY = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://([A-Za-z0-9.-]+)(?::[0-9]*)?(?=[/?#]|\Z)")


# The full stops a browser's URL parser (UTS 46) reads as ".": `example.com。` is example.com. (helper-86)
FULL_STOPS = str.maketrans({"\u3002": ".", "\uff0e": ".", "\uff61": "."})


def connect_name(host: str) -> str | None:
    """The ASCII name httpx connects to for `host` (its IDNA 2008 form, full stops read as "."), or None when it
    cannot be one."""
    try:
        return httpx.URL(f"https://{host}/").raw_host.decode("ascii").lower().rstrip(".")
    except (httpx.InvalidURL, UnicodeError):
        return None


def host_of(url: str) -> str:
    """The URL's hostname, lowercased, without a trailing dot ('' when it has none), as urlsplit reads it.
    Plain authorities (nearly every listed URL) are read by one regular expression, four times faster:
    the map reads the host of every endpoint every day."""
    plain = _PLAIN_AUTHORITY.match(url)
    if plain is not None:
        return plain.group(1).lower().rstrip(".")
    return (urlsplit(url).hostname or "").lower().rstrip(".")


def _ipv4_number(part: str) -> int:
    """One part of a WHATWG IPv4 host: decimal, 0x hex or 0-led octal; ValueError for anything else."""
    digits, radix = part, 10
    if part[:2].lower() == "0x":
        digits, radix = part[2:], 16
    elif len(part) > 1 and part[0] == "0":
        digits, radix = part[1:], 8
    allowed = {10: "0123456789", 16: "0123456789abcdefABCDEF", 8: "01234567"}[radix]
    if part == "" or any(c not in allowed for c in digits):
        raise ValueError(f"{part!r} is not an IPv4 number")
    return int(digits, radix) if digits else 0


def _labels(host: str) -> list[str]:
    labels = host.split(".")
    return labels[:-1] if len(labels) > 1 and labels[-1] == "" else labels


def ends_in_a_number(host: str) -> bool:
    """The WHATWG URL standard's test: a host whose last label is a number (decimal, or 0x hex) is read as
    IPv4, never as a name, whether or not it is a valid address."""
    last = _labels(host)[-1]
    return bool(last) and (last.isascii() and last.isdigit() or (
        last[:2].lower() == "0x" and all(c in "0123456789abcdefABCDEF" for c in last[2:])))


def whatwg_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """The IPv4 address a browser's URL parser (the WHATWG URL standard) reads `host` as: `127.1`,
    `0x7f.0.0.1`, `2130706433` and `0177.0.0.1` are all 127.0.0.1, as the guard at connect time sees them.
    None for a host that is a name; ValueError for one whose last label is a number but that is no valid
    IPv4 address (the standard rejects such a URL)."""
    if not ends_in_a_number(host):
        return None
    labels = _labels(host)
    if len(labels) > 4:
        raise ValueError(f"{host!r} ends in a number but has more than four parts")
    numbers = [_ipv4_number(label) for label in labels]
    if any(n > 255 for n in numbers[:-1]) or numbers[-1] >= 256 ** (5 - len(numbers)):
        raise ValueError(f"{host!r} ends in a number but is out of IPv4's range")
    value = numbers[-1] + sum(n * 256 ** (3 - i) for i, n in enumerate(numbers[:-1]))
    return ipaddress.IPv4Address(value)


def ip_literal(host: str) -> bool:
    """Whether a host is written as an IP address (an IPv6 one in brackets or not, with a zone or not)."""
    try:
        ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return False
    return True


def is_address(host: str) -> bool:
    """Whether a URL's host is an address, never a name: an IP literal, or anything a browser reads as IPv4
    (`127.1`, `0x7f.0.0.1`), or a host that ends in a number without being one (no name)."""
    if ip_literal(host):
        return True
    try:
        return whatwg_ipv4(host) is not None
    except ValueError:
        return True


def ascii_host(host: str) -> str:
    """A host name in the ASCII form a client connects to (`bücher.de` -> `xn--bcher-kva.de`): httpx's own
    encoding (IDNA 2008). Python's "idna" codec is IDNA 2003, which reads `faß` as `fass`, another domain. A
    name the client cannot encode is given as written."""
    try:
        return httpx.URL(f"https://{host}/").raw_host.decode("ascii")
    except (httpx.InvalidURL, UnicodeError, ValueError):
        return host


def ascii_domain(domain: str) -> str:
    """A domain name in the ASCII form a client writes, lower case (an ASCII name as it is)."""
    return domain.lower() if domain.isascii() else ascii_host(domain).lower()
