"""The documents the readiness probe asks for besides the MCP endpoint itself (docs/methodology.md,
"Readiness": discovery surfaces and the publisher's domain). Each is one GET, never a redirect followed,
under the same caps as every well-known document; what comes back is kept as a row of
raw/readiness_surfaces, and judged later (curated/readiness_tables.py), so a change of judgement needs no
new request.

- per endpoint: its server card at `<mcp-url>/server-card` (Accept: application/mcp-server-card+json);
  its RFC 9728 resource metadata, when a 401 named one;
- per origin: the card paths seen in the wild, `/.well-known/mcp/server-card.json` and `/.well-known/mcp.json`;
- per publisher domain: the domain catalog at both its paths, `/.well-known/ai-catalog.json` (the
  server-card extension's path since its change of 2026-07-20, asked as `application/ai-catalog+json`) and
  the older `/.well-known/mcp/catalog.json`, each its own row; `/llms.txt`, the markdown door (the home
  page asked for with `Accept: text/markdown`, then `/index.md`), and for a reverse-DNS namespace the
  registry's proof file `/.well-known/mcp-registry-auth`.

A server card is revalidated (docs/methodology.md, "Readiness": revalidated cards): the ETag of the last
card fetched (yesterday's or today's raw rows, `CardBook.from_lake`) goes out as `If-None-Match`, and a
304 keeps that card, landed again with its hash, as revalidated rather than missing.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..lake.paths import LakePaths
from ..registry.listing import redact_text, redact_value, redacted_url
from ..rules.discovery import CARD_SURFACES
from ..rules.namespace import namespace_domain
from ..rules.psl import registrable_domain
from .netguard import refused_address
from .redirects import invalid_location
from .values import header_token
from .wire import STREAM_READ_SECONDS, read_body, read_document_stream

CARD_ACCEPT = "application/mcp-server-card+json"
MARKDOWN_ACCEPT = "text/markdown"
JSON_ACCEPT = "application/json"
AI_CATALOG_ACCEPT = "application/ai-catalog+json, application/json"
# An ETag is sent back only when it is a short run of visible ASCII (what a header may carry).
ETAG_MAX = 300

# (surface, path, Accept) of each scope; the endpoint's card path is appended to its URL.
ORIGIN_SURFACES = (("well_known_server_card", "/.well-known/mcp/server-card.json", JSON_ACCEPT),
                   ("well_known_mcp_json", "/.well-known/mcp.json", JSON_ACCEPT))
DOMAIN_SURFACES = (("ai_catalog", "/.well-known/ai-catalog.json", AI_CATALOG_ACCEPT),
                   ("catalog", "/.well-known/mcp/catalog.json", JSON_ACCEPT),
                   ("llms_txt", "/llms.txt", "text/plain, text/markdown;q=0.9"),
                   ("markdown_negotiated", "/", MARKDOWN_ACCEPT),
                   ("markdown_index", "/index.md", "text/markdown, text/plain;q=0.9"))
REGISTRY_AUTH = ("registry_auth", "/.well-known/mcp-registry-auth", "text/plain")


# How a card asked for conditionally came back (raw readiness_surfaces.revalidation): a 304 to our
# If-None-Match keeps the card we held; a 200 to it is a new card; a 304 though we sent no If-None-Match
# has nothing to keep, so no card.
NOT_MODIFIED, MODIFIED, UNASKED_304 = "not_modified", "modified", "unasked_304"


@dataclass
class Document:
    status: int | None
    content_type: str | None
    body: str | None
    detail: str
    etag: str | None = None  # the answer's ETag (on a kept card: the kept card's)
    if_none_match: str | None = None  # the ETag we sent, if we sent one
    revalidation: str | None = None  # NOT_MODIFIED | MODIFIED | UNASKED_304 | None (asked unconditionally)


@dataclass(frozen=True)
class KeptCard:
    """The last card fetched from one URL, with the ETag it came with."""

    etag: str
    body: str
    content_type: str | None
    requested_at: dt.datetime


class CardBook:
    """The cards to revalidate: per (surface, URL), the latest card row of the raw readiness_surfaces read,
    kept when it holds a card (answered 200, or kept by a 304) and an ETag. A later row without one (a 404,
    a card now served without an ETag) means nothing is kept, so the next request is unconditional."""

    def __init__(self, rows: Iterable[Mapping[str, Any]] = ()) -> None:
        latest: dict[tuple[str, str], Mapping[str, Any]] = {}
        for row in rows:
            surface, url, at = row.get("surface"), row.get("url"), row.get("requested_at")
            if surface not in CARD_SURFACES or not isinstance(url, str) or not isinstance(at, dt.datetime):
                continue
            key = (str(surface), url)
            seen = latest.get(key)
            if seen is None or at >= seen["requested_at"]:
                latest[key] = row
        self._kept: dict[tuple[str, str], KeptCard] = {}
        for key, row in latest.items():
            etag, body = header_token(row.get("etag")), row.get("body")
            holds_card = row.get("status") == 200 or row.get("revalidation") == NOT_MODIFIED
            if holds_card and etag is not None and len(etag) <= ETAG_MAX and isinstance(body, str):
                self._kept[key] = KeptCard(etag, body, row.get("content_type"), row["requested_at"])

    @classmethod
    def from_lake(cls, lake: LakePaths, day: dt.date) -> CardBook:
        """The cards of the day before and of `day` (a resumed run), read as OriginBook.from_lake reads
        robots.txt: a run missed for more than a day asks unconditionally, which costs one full answer."""
        columns = ["surface", "url", "requested_at", "status", "content_type", "body", "etag", "revalidation"]
        rows: list[dict[str, Any]] = []
        for back in (1, 0):
            for path in lake.raw_files("readiness_surfaces", day - dt.timedelta(days=back)):
                try:
                    present = set(pq.read_schema(path).names)
                    if not {"etag", "revalidation"} <= present:
                        continue  # written before cards were revalidated: no ETag kept
                    table = pq.read_table(path, columns=columns)
                except Exception:  # noqa: BLE001 - an unreadable part is quarantined later; its cards asked afresh
                    continue
                # only card rows with an ETag become Python objects: the other documents' bodies stay out
                cards = pc.and_(pc.is_in(table["surface"], value_set=pa.array(CARD_SURFACES)),
                                pc.is_valid(table["etag"]))
                rows += table.filter(cards).to_pylist()
        return cls(rows)

    def kept(self, surface: str, url: str) -> KeptCard | None:
        return self._kept.get((surface, url))


def revalidated(document: Document, kept: KeptCard | None) -> Document:
    """What a card request that sent `kept`'s ETag (or none, `kept` None) came back as: a 304 to our
    If-None-Match is the kept card again; a 304 we did not ask for keeps nothing."""
    if document.status == 304 and kept is not None:
        when = kept.requested_at.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return Document(304, kept.content_type, kept.body, f"304 Not Modified: the card fetched {when} kept",
                        kept.etag, kept.etag, NOT_MODIFIED)
    if document.status == 304:
        return Document(304, document.content_type, None, "HTTP 304 though no If-None-Match was sent: no card to "
                        "keep", document.etag, None, UNASKED_304)
    if kept is not None:
        document.if_none_match = kept.etag
        document.revalidation = MODIFIED if document.status == 200 else None
    return document


def body_sha256(body: str | None) -> str | None:
    return hashlib.sha256(body.encode("utf-8")).hexdigest() if body is not None else None


def publisher_domain(server_name: Any, url: str) -> str | None:
    """Where the publisher's /llms.txt and markdown door are looked for: the namespace's domain for a
    reverse-DNS registry name (the registry proved it is theirs), else the registrable domain of the
    endpoint's host (a GitHub namespace says nothing about a domain)."""
    if isinstance(server_name, str) and "/" in server_name:
        domain = namespace_domain(server_name.split("/", 1)[0])
        if domain is not None:
            return domain
    try:
        host = httpx.URL(url).host if url else ""
    except httpx.InvalidURL:  # an unreadable URL has no domain; its check row still lands ("Outcomes")
        return None
    return registrable_domain(host) if host else None


async def _stream_document(response: httpx.Response, ctype: str, cap: int, seconds: float,
                           etag: str | None) -> Document:
    kind, body, detail = await read_document_stream(response, cap, seconds)
    if kind == "cut":
        return Document(None, None, None, detail)
    return Document(200, ctype, body.decode("utf-8", "replace") if kind == "file" else None, detail, etag)


async def fetch_document(client: httpx.AsyncClient, url: str, accept: str, timeout: float, cap: int,
                         if_none_match: str | None = None) -> Document:
    """One GET with this Accept (and If-None-Match, when given); a redirect is recorded, not followed; the
    answer's ETag is kept when a header may carry it back. Never raises."""
    headers = {"Accept": accept, **({"If-None-Match": if_none_match} if if_none_match else {})}
    try:
        async with asyncio.timeout(timeout):
            async with client.stream("GET", url, headers=headers) as response:
                ctype = response.headers.get("content-type", "").split(";")[0].strip().lower() or None
                etag = header_token(response.headers.get("etag"))
                etag = etag if etag is not None and len(etag) <= ETAG_MAX else None
                if response.is_redirect:
                    where = redact_value(response.headers.get("location", ""))[:300]  # a URL, read as one
                    return Document(response.status_code, ctype, None, f"redirects to {where!r}; not followed")
                if response.status_code != 200:
                    return Document(response.status_code, ctype, None, f"HTTP {response.status_code}", etag)
                if ctype == "text/event-stream":  # may never end (probe/wire.py)
                    return await _stream_document(response, ctype, cap, min(timeout, STREAM_READ_SECONDS) - 0.05, etag)
                body, problem = await read_body(response, cap)
                return Document(200, ctype, body.decode("utf-8", "replace"), problem or "", etag)
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
    """A raw/readiness_surfaces row; `document` None when it was not asked for (detail says why). Its URL and
    detail are stored with any credential in them REDACTED (a resource_metadata URL is the server's own, asked as
    given; a redirect's Location is the server's text)."""
    return {"day": day, "run_id": run_id, "scope": scope, "subject": subject, "surface": surface,
            "url": redacted_url(url),
            "accept": accept, "requested_at": requested_at,
            "status": document.status if document else None,
            "content_type": document.content_type if document else None,
            "body": document.body if document else None,
            "detail": redact_text(document.detail if document else detail or "not asked")[:500],
            "etag": document.etag if document else None,
            "if_none_match": document.if_none_match if document else None,
            "body_sha256": body_sha256(document.body) if document else None,
            "revalidation": document.revalidation if document else None}
