"""The endpoint key: the unit of the map (docs/data-dictionary.md)."""

from __future__ import annotations

import hashlib
from urllib.parse import urlsplit


def server_key(url: str) -> str:
    """Normalise a URL: lower-case host without `www.` and port, path without trailing slash,
    no scheme, query or fragment. Raises ValueError for a URL with no host."""
    parts = urlsplit(url.strip())
    host = (parts.hostname or "").lower().rstrip(".")
    if not host:
        raise ValueError(f"URL has no host: {url!r}")
    if host.startswith("www."):
        host = host[4:]
    path = parts.path.rstrip("/")
    return host + path


def server_id(key: str) -> str:
    """First 12 hex digits of SHA-256 of the key, as 7Maps publishes it."""
    return hashlib.sha256(key.encode()).hexdigest()[:12]


def origin(url: str) -> str:
    """scheme://host[:port] — never the userinfo a listed URL may carry."""
    parts = urlsplit(url.strip())
    host = parts.netloc.rpartition("@")[2].lower()
    return f"{parts.scheme.lower()}://{host}"
