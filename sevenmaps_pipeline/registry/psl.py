"""Registrable domains from the Public Suffix List shipped in the `publicsuffixlist` package.

The list is read from the installed package (never downloaded) and its SHA-256 is checked against the
pinned package version's, so a changed list is a loud error rather than a silent change of redirect rules.
"""

from __future__ import annotations

import functools
import hashlib
import ipaddress
from pathlib import Path

import publicsuffixlist
from publicsuffixlist import PublicSuffixList

from .listing import host_of

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


@functools.lru_cache(maxsize=1 << 17)  # hosts recur: endpoints share them (gateways), days repeat them
def registrable_domain(host: str) -> str | None:
    """eTLD+1 of a host name (`api.example.co.uk` -> `example.co.uk`); None for a bare public suffix."""
    return _psl().privatesuffix(host.lower().rstrip("."))


def site_of_url(url: str | None) -> str | None:
    """The registrable domain of a URL's host (the host itself when it has none, e.g. an IP literal)."""
    if not url:
        return None
    try:
        host = host_of(url)
    except ValueError:
        return None
    if not host:
        return None
    try:
        ipaddress.ip_address(host.split("%")[0])
        return host  # an address has no registrable domain
    except ValueError:
        return registrable_domain(host) or host
