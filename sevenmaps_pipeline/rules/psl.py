"""Registrable domains from the Public Suffix List shipped in the `publicsuffixlist` package.

The list is read from the installed package (never downloaded) and its SHA-256 is checked against the
pinned package version's, so a changed list is a loud error rather than a silent change of redirect rules.
"""

from __future__ import annotations

import functools
import hashlib
import ipaddress
from dataclasses import dataclass
from pathlib import Path

import publicsuffixlist
from publicsuffixlist import PublicSuffixList

from .hosts import ascii_host, host_of, is_address

PSL_FILE = Path(publicsuffixlist.__file__).with_name("public_suffix_list.dat")
# sha256 of public_suffix_list.dat in publicsuffixlist==1.1.2.20261023 (pinned in pyproject.toml)
PSL_SHA256 = "0232f4df0831911356e8ee1f4d5c3b6b12c0ed3f6bd66b0f81c8ab5d3d49e9ca"


class PublicSuffixListError(RuntimeError):
    pass


@functools.cache
def _psl() -> PublicSuffixList:
    data = PSL_FILE.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != PSL_SHA256:
        raise PublicSuffixListError(f"{PSL_FILE} has sha256 {digest}, expected {PSL_SHA256}; "
                                    "pin the publicsuffixlist version that ships the checked list")
    return PublicSuffixList(source=data.decode().splitlines(), accept_unknown=True)


@dataclass(frozen=True)
class _Rules:
    """The list's rules as publicsuffixlist parsed them (its IDNA-encoded forms included), and every label
    suffix of a rule's name, which tells a lookup when no longer suffix of the host can match any rule."""
    rules: frozenset[str]
    names: frozenset[str]


@functools.cache
def _rules() -> _Rules:
    rules = frozenset(_psl()._publicsuffix)  # noqa: SLF001 - the parsed set of the exactly pinned version
    names: set[str] = set()
    for rule in rules:
        name = rule.removeprefix("!").removeprefix("*.")
        labels = name.split(".")
        names.update(".".join(labels[i:]) for i in range(len(labels)))
    return _Rules(rules, frozenset(names))


@functools.lru_cache(maxsize=1 << 17)  # hosts recur: endpoints share them (gateways), days repeat them
def registrable_domain(host: str) -> str | None:
    """eTLD+1 of a host name (`api.example.co.uk` -> `example.co.uk`); None for a bare public suffix.

    publicsuffixlist's own rule evaluation (its privatesuffix, with unknown TLDs public), walked from the
    TLD up instead of from the longest suffix down: the longest matching suffix decides either way, and the
    walk stops at the first suffix that is no rule's name or part of one, so most hosts take two steps, not
    six (a day's 100,000 endpoints, docs/scaling.md). tests/test_registry.py holds it to the library on every
    rule of the list and on generated hosts."""
    labels = host.lower().rstrip(".").split(".")
    if "" in labels:
        return None
    count = len(labels)
    public = 1  # an unknown TLD is public, as are single labels
    if count > 1:
        table = _rules()
        for depth in range(1, count + 1):
            suffix = ".".join(labels[-depth:])
            if suffix not in table.names:
                break
            if "!" + suffix in table.rules:  # an exception: its parent is the public suffix
                public = depth - 1
            elif "*." + suffix in table.rules:  # a wildcard: one more label is public, if there is one
                public = depth + 1 if depth < count else depth
            elif suffix in table.rules:
                public = depth
    if not public or count < public + 1:
        return None
    return ".".join(labels[-(public + 1):])


def _host_of_url(url: str | None) -> str | None:
    """A URL's host, or None when it has none or cannot be read."""
    try:
        return host_of(url) or None if url else None
    except ValueError:
        return None


def site_of_url(url: str | None) -> str | None:
    """The registrable domain of a URL's host (the host itself when it has none, e.g. an IP literal)."""
    host = _host_of_url(url)
    if host is None:
        return None
    try:
        ipaddress.ip_address(host.split("%")[0])
        return host  # an address has no registrable domain
    except ValueError:
        return registrable_domain(host) or host


def domain_of_url(url: str | None) -> str | None:
    """The registrable domain of a URL's host in the ASCII form a client connects to (`bücher.de` ->
    `xn--bcher-kva.de`, so both spellings are one domain), as domain age reads it (docs/methodology.md, "Domain
    age"); None for an address, a bare public suffix or no host."""
    host = _host_of_url(url)
    return registrable_domain(ascii_host(host).lower()) if host and not is_address(host) else None
