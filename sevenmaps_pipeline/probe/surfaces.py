"""The documents the readiness probe asks for besides the MCP endpoint itself (docs/methodology.md,
"Readiness": discovery surfaces and the publisher's domain). Each is one GET, never a redirect followed,
under the same caps as every well-known document; what comes back is kept as a row of
raw/readiness_surfaces, and judged later (curated/readiness_tables.py), so a change of judgement needs no
new request.

- per endpoint: its server card at `<mcp-url>/server-card` (Accept: application/mcp-server-card+json);
  its RFC 9728 resource metadata, when a 401 named one;
- per origin: the card paths seen in the wild, `/.well-known/mcp/server-card.json` and `/.well-known/mcp.json`;
- per publisher domain: the domain catalog `/.well-known/mcp/catalog.json`, `/llms.txt`, the markdown door
  (the home page asked for with `Accept: text/markdown`, then `/index.md`), and for a reverse-DNS namespace
  the registry's proof file `/.well-known/mcp-registry-auth`.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from dataclasses import dataclass
from typing import Any

import httpx

from ..rules.namespace import namespace_domain
from ..rules.psl import registrable_domain
from .netguard import refused_address
from .redirects import invalid_location
from .wire import read_body

CARD_ACCEPT = "application/mcp-server-card+json"
MARKDOWN_ACCEPT = "text/markdown"
JSON_ACCEPT = "application/json"

# (surface, path, Accept) of each scope; the endpoint's card path is appended to its URL.
ORIGIN_SURFACES = (("well_known_server_card", "/.well-known/mcp/server-card.json", JSON_ACCEPT),
                   ("well_known_mcp_json", "/.well-known/mcp.json", JSON_ACCEPT))
DOMAIN_SURFACES = (("catalog", "/.well-known/mcp/catalog.json", JSON_ACCEPT),
                   ("llms_txt", "/llms.txt", "text/plain, text/markdown;q=0.9"),
                   ("markdown_negotiated", "/", MARKDOWN_ACCEPT),
                   ("markdown_index", "/index.md", "text/markdown, text/plain;q=0.9"))
REGISTRY_AUTH = ("registry_auth", "/.well-known/mcp-registry-auth", "text/plain")


@dataclass
class Document:
    status: int | None
    content_type: str | None
    body: str | None
    detail: str


def publisher_domain(server_name: Any, url: str) -> str | None:
    """Where the publisher's /llms.txt and markdown door are looked for: the namespace's domain for a
    reverse-DNS registry name (the registry proved it is theirs), else the registrable domain of the
    endpoint's host (a GitHub namespace says nothing about a domain)."""
    if isinstance(server_name, str) and "/" in server_name:
        domain = namespace_domain(server_name.split("/", 1)[0])
        if domain is not None:
            return domain
    host = httpx.URL(url).host if url else ""
    return registrable_domain(host) if host else None


async def fetch_document(client: httpx.AsyncClient, url: str, accept: str, timeout: float, cap: int) -> Document:
    """One GET with this Accept; a redirect is recorded, not followed. Never raises."""
    try:
        async with asyncio.timeout(timeout):
            async with client.stream("GET", url, headers={"Accept": accept}) as response:
                ctype = response.headers.get("content-type", "").split(";")[0].strip().lower() or None
                if response.is_redirect:
                    where = response.headers.get("location", "")[:300]
                    return Document(response.status_code, ctype, None, f"redirects to {where!r}; not followed")
                if response.status_code != 200:
                    return Document(response.status_code, ctype, None, f"HTTP {response.status_code}")
                body, problem = await read_body(response, cap)
                return Document(200, ctype, body.decode("utf-8", "replace"), problem or "")
    except TimeoutError:
        return Document(None, None, None, f"no answer within {timeout:g} s")
    except httpx.TimeoutException as exc:
        return Document(None, None, None, type(exc).__name__)
    except httpx.HTTPError as exc:
        if invalid_location(exc):
            return Document(302, None, None, "redirects to an invalid Location; not followed")
        if refused_address(exc):
            return Document(None, None, None, f"not contacted: {exc}"[:300])
        return Document(None, None, None, f"{type(exc).__name__}: {exc}"[:300])


def surface_row(day: dt.date, run_id: str, scope: str, subject: str, surface: str, url: str, accept: str | None,
                requested_at: dt.datetime, document: Document | None, detail: str | None = None) -> dict[str, Any]:
    """A raw/readiness_surfaces row; `document` None when it was not asked for (detail says why)."""
    return {"day": day, "run_id": run_id, "scope": scope, "subject": subject, "surface": surface, "url": url,
            "accept": accept, "requested_at": requested_at,
            "status": document.status if document else None,
            "content_type": document.content_type if document else None,
            "body": document.body if document else None,
            "detail": (document.detail if document else detail or "not asked")[:500]}
