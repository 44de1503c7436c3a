"""Judging what the readiness probe's documents said (docs/methodology.md, "Readiness": discovery surfaces,
the publisher's domain, the RFC 9728 line, the namespace file). Method DISCOVERY_METHOD; plain code,
no I/O, and nothing a document holds can raise.

A server card is read in the shape of the server-card draft (SEP-2127: `name` is the registry name,
`version` the server's version, `remotes[].supportedProtocolVersions`) and in the older draft's shape
(`serverInfo.name` / `serverInfo.version`, `protocolVersion`); it disagrees with the server when the
server's own answer says otherwise, because clients are told to prefer the live values.
"""

from __future__ import annotations

import ipaddress
import json
import re
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import httpx

CARD_SURFACES = ("server_card", "well_known_server_card", "well_known_mcp_json")
_RESOURCE_METADATA = re.compile(r'resource_metadata="([^"]+)"')
_MARKDOWN_TYPES = ("text/markdown", "text/x-markdown")
_LABEL = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?")


def _json_object(body: str | None) -> dict | None:
    if not body:
        return None
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _looks_like_html(body: str) -> bool:
    head = body.lstrip()[:200].lower()
    return head.startswith("<!doctype html") or head.startswith("<html") or head.startswith("<")


def answered(surface: str, status: int | None, content_type: str | None, body: str | None,
             revalidation: str | None = None) -> tuple[bool, str]:
    """Whether the document answered as what it should be, and what it is (or why not). A card a 304 kept
    (revalidation `not_modified`: the body is the card it kept) is judged as that card; any other 304 keeps
    nothing."""
    if status == 304 and revalidation == "not_modified":
        ok, what = answered(surface, 200, content_type, body)
        return ok, f"revalidated (304), {what}"
    if status == 304:
        return False, "HTTP 304 though no If-None-Match was sent: nothing kept"
    if status != 200:
        return False, f"HTTP {status}" if status is not None else "no answer"
    text = body or ""
    ctype = (content_type or "").lower()
    if surface == "ai_catalog":  # the catalog's path since 2026-07-20, with its own media type
        if _json_object(text) is None:
            return False, "not a JSON object"
        return True, f"a JSON object served as {ctype or 'nothing'}"
    if surface in CARD_SURFACES or surface in ("catalog", "resource_metadata"):
        return (True, "a JSON object") if _json_object(text) is not None else (False, "not a JSON object")
    if surface == "llms_txt":
        first = next((line for line in text.splitlines() if line.strip()), "")
        if "html" in ctype or _looks_like_html(text):
            return False, "an HTML page, not llms.txt"
        return (True, f"starts {first[:80]!r}") if first.startswith("# ") else (False, "no '# ' title line first")
    if surface == "markdown_negotiated":
        return (True, f"served as {ctype}") if ctype in _MARKDOWN_TYPES else (False, f"served as {ctype or 'nothing'}")
    if surface == "markdown_index":
        if "html" in ctype or _looks_like_html(text) or not text.strip():
            return False, "not markdown"
        return (True, f"served as {ctype}") if ctype in (*_MARKDOWN_TYPES, "text/plain") else (
            False, f"served as {ctype or 'nothing'}")
    if surface == "registry_auth":
        return (True, "a v=MCPv1 record") if text.lstrip().startswith("v=MCPv1") else (False, "no v=MCPv1 record")
    return False, f"unknown surface {surface!r}"


def _valid_host(raw_host: bytes) -> bool:
    """An IP address, or a name of LDH labels (underscores allowed, as DNS has them) once IDNA-encoded."""
    host = raw_host.decode("ascii", "replace").rstrip(".")
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return len(host) <= 253 and all(_LABEL.fullmatch(label) for label in host.split("."))


def resource_metadata_of(www_authenticate: str | None) -> tuple[str | None, str | None]:
    """(the RFC 9728 resource_metadata URL a 401's WWW-Authenticate names, if it may be asked for; why it may
    not, when it names one that may not). Only an https URL with a host is asked for (docs/methodology.md,
    "Readiness"): a server's header never decides where else the probe goes, nor raises."""
    match = _RESOURCE_METADATA.search(www_authenticate or "")
    if match is None:
        return None, None
    url = match.group(1)
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a malformed port
        # the URL the probe would ask must parse as httpx reads it, to a host that can be resolved: a name
        # with a space or a "<" is no host (httpx would percent-encode it and the probe try to resolve it)
        usable = parts.scheme.lower() == "https" and bool(parts.hostname) and _valid_host(httpx.URL(url).raw_host)
    except (ValueError, httpx.InvalidURL):  # an unclosed "[", a bracketed host that is no IPv6 address, a bad port
        usable = False
    if not usable:
        return None, f"resource_metadata {url[:200]!r} is not an https URL with a host: not asked"
    return url, None


def without_userinfo(url: str) -> str:
    """A URL `resource_metadata_of` accepted, as the probe asks it: never with userinfo, which an HTTP client would
    send as credentials (a server's header names no credential of ours)."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def names_resource(body: str | None, url: str) -> bool:
    """The RFC 9728 document is a JSON object whose `resource` is this endpoint (or its origin)."""
    data = _json_object(body)
    resource = data.get("resource") if data else None
    if not isinstance(resource, str):
        return False
    split = urlsplit(url)
    return resource.rstrip("/") in (url.rstrip("/"), f"{split.scheme}://{split.netloc}")


@dataclass(frozen=True)
class Card:
    name: str | None
    version: str | None
    protocol_versions: tuple[str, ...]
    name_is_registry: bool  # the SEP-2127 shape: `name` is the registry name


def read_card(body: str | None, url: str) -> Card | None:
    """The card's name, version and protocol versions (those of the remote with this URL, when it lists
    remotes); None when it is not a JSON object."""
    data = _json_object(body)
    if data is None:
        return None
    info = data.get("serverInfo")
    if isinstance(info, dict):
        name, version, registry = info.get("name"), info.get("version"), False
    else:
        name, version, registry = data.get("name"), data.get("version"), True
    versions: list[str] = []
    remotes = data.get("remotes")
    if isinstance(remotes, list):
        for remote in remotes:
            if isinstance(remote, dict) and isinstance(remote.get("url"), str) \
                    and remote["url"].rstrip("/") == url.rstrip("/"):
                listed = remote.get("supportedProtocolVersions")
                versions += [v for v in listed if isinstance(v, str)] if isinstance(listed, list) else []
    for key in ("protocolVersions", "supportedProtocolVersions"):
        if isinstance(data.get(key), list):
            versions += [v for v in data[key] if isinstance(v, str)]
    if isinstance(data.get("protocolVersion"), str):
        versions.append(data["protocolVersion"])
    return Card(name[:300] if isinstance(name, str) else None, version[:100] if isinstance(version, str) else None,
                tuple(dict.fromkeys(v[:40] for v in versions)), registry)


def disagreement(card: Card, registry_name: str | None, server_name: str | None, server_version: str | None,
                 protocol_version: str | None) -> str | None:
    """Where the card says otherwise than the server (or, for the name in the SEP-2127 shape, the registry
    listing); None when it agrees on everything both say."""
    out = []
    expected_name = registry_name if card.name_is_registry else server_name
    if card.name is not None and expected_name is not None and card.name != expected_name:
        out.append(f"name {card.name!r}, the {'listing' if card.name_is_registry else 'server'} says "
                   f"{expected_name!r}")
    if card.version is not None and server_version is not None and card.version != server_version:
        out.append(f"version {card.version!r}, the server says {server_version!r}")
    if card.protocol_versions and protocol_version is not None and protocol_version not in card.protocol_versions:
        out.append(f"protocol versions {', '.join(card.protocol_versions)}, the server answered {protocol_version}")
    return "; ".join(out) or None
