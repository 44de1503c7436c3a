"""A client for the official registry's list API, tolerant of what real registry data holds.

`/v0.1/servers` (falling back to `/v0/servers`), cursor pagination (`nextCursor`, or the older
`next_cursor`), the latest version of each entry, deleted entries left out, older snake_case records
read, and every malformed entry recorded with a reason instead of aborting the snapshot.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from ..lake.keys import server_id, server_key
from ..rules.http_values import RETRY_AFTER_MAX, retry_after_seconds
from .listing import (
    ListingDecision,
    Malformed,
    listing_decision,
    redact_text,
    redact_userinfo,
    redacted_entry,
    redacted_url,
)

MAX_PAGES = 2000  # 100 per page: 200,000 entries before we call the registry broken
PAGE_LIMIT = 100
PAGE_MAX_BYTES = 64 << 20  # a page of 100 entries is some hundreds of KB; past this it is not a page
CURSOR_MAX_CHARS = 4096
# A page the registry failed to serve (no connection, a broken or late answer, HTTP 429 or 5xx) is asked again
# after each of these pauses, so one passing fault does not cost the day's first slice (docs/methodology.md,
# "Listing rules"). A Retry-After of up to RETRY_AFTER_MAX seconds is waited instead, when longer.
PAGE_RETRY_PAUSES = (2.0, 8.0)
SNAPSHOT_RETRIES_MAX = 6  # in all, over the snapshot's pages: a registry failing page after page fails it
_PASSING_STATUSES = frozenset({429, 500, 502, 503, 504})


class RegistryError(RuntimeError):
    pass


@dataclass
class Snapshot:
    rows: list[dict[str, Any]] = field(default_factory=list)
    pages: int = 0
    entries: int = 0
    api: str = ""
    retries: int = 0  # pages asked again after a passing fault


def _official(entry: Any) -> dict:
    meta = entry.get("_meta") if isinstance(entry, dict) else None
    official = meta.get("io.modelcontextprotocol.registry/official") if isinstance(meta, dict) else None
    return official if isinstance(official, dict) else {}


def _parse_time(value: Any) -> dt.datetime | None:
    """A listing's time in UTC (one without a zone read as UTC, as the snapshot's column stores it), or None when
    unreadable. Turned into UTC here: a time whose UTC falls outside years 1 to 9999 (0001-01-01T00:00+01:00) was
    stored, and every later slice reading the day's snapshot back failed on it (docs/methodology.md,
    "The prober")."""
    if not isinstance(value, str):
        return None
    try:
        moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        return (moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.UTC)).astimezone(dt.UTC)
    except (ValueError, OverflowError):
        return None


def _server_of(entry: Any) -> tuple[dict | None, ListingDecision | None]:
    if not isinstance(entry, dict):
        return None, ListingDecision("malformed", Malformed.NOT_AN_OBJECT, f" ({type(entry).__name__})")
    server = entry.get("server", entry)
    if not isinstance(server, dict):
        return None, ListingDecision("malformed", Malformed.SERVER_NOT_AN_OBJECT)
    return server, None


def _version(server: dict) -> str | None:
    if isinstance(server.get("version"), str):
        return server["version"]
    detail = server.get("version_detail")  # pre-2025-09-16 snake_case records
    return detail.get("version") if isinstance(detail, dict) else None


def _is_latest(entry: dict, server: dict) -> bool:
    official = _official(entry)
    for spelling in ("isLatest", "is_latest"):  # the older v0 API spelled the official fields in snake_case
        if spelling in official:
            return official[spelling] is True
    detail = server.get("version_detail")
    if isinstance(detail, dict) and "is_latest" in detail:
        return detail["is_latest"] is True
    return True


def rows_for_entry(entry: Any, day: dt.date, fetched_at: dt.datetime, *, opted_out: Collection[str] = (),
                   host_map: Mapping[str, int] | None = None) -> list[dict[str, Any]]:
    """One snapshot row per remote of a registry entry (or one 'malformed' row saying why)."""
    try:
        raw = redact_userinfo(json.dumps(redacted_entry(entry), ensure_ascii=False, default=str))[:100_000]
    except RecursionError:
        return [{"day": day, "fetched_at": fetched_at, "entry_json": None, "listing": "malformed",
                 "skip_reason": Malformed.TOO_DEEP.value}]
    base = {"day": day, "fetched_at": fetched_at, "entry_json": raw}
    server, problem = _server_of(entry)
    if server is None:
        return [{**base, "listing": "malformed", "skip_reason": problem.text if problem else None}]
    name = server.get("name")
    official = _official(entry)
    status = official.get("status", "active")
    version = _version(server)
    base.update(server_name=redact_text(name) if isinstance(name, str) else None,
                server_version=redact_text(version) if isinstance(version, str) else None,
                status=status if isinstance(status, str) else None,
                published_at=_parse_time(official.get("publishedAt", official.get("published_at"))),
                updated_at=_parse_time(official.get("updatedAt", official.get("updated_at"))))
    if not isinstance(name, str) or "/" not in name:
        return [{**base, "listing": "malformed", "skip_reason": Malformed.NO_VALID_NAME.value}]
    remotes = server.get("remotes")
    remotes = [] if remotes is None else remotes  # none: a server of packages only, not on the map
    if not isinstance(remotes, list):
        return [{**base, "listing": "malformed", "skip_reason": Malformed.REMOTES_NOT_A_LIST.value}]
    rows = []
    for remote in remotes:
        if not isinstance(remote, dict):
            rows.append({**base, "listing": "malformed", "skip_reason": Malformed.REMOTE_NOT_AN_OBJECT.value})
            continue
        remote_type = remote.get("type") or remote.get("transport_type")
        url = remote.get("url")
        decision = listing_decision(url, remote_type, opted_out=opted_out, host_map=host_map)
        listed = url
        if isinstance(url, str):
            url = redacted_url(url)  # a credential is never stored or printed (the listing is skipped for it)
        row = {**base, "remote_type": redact_text(remote_type) if isinstance(remote_type, str) else None,
               "url": url if isinstance(url, str) else None, "listing": decision.verdict,
               "skip_reason": redact_text(decision.text) if decision.text else None}
        if isinstance(url, str):
            try:
                key = server_key(url)
                row.update(server_key=key, server_id=server_id(key))
            except ValueError as exc:  # its words quote the URL: the stored (redacted) one, never the listed one
                said = str(exc).replace(repr(listed), repr(url)).replace(str(listed), url)
                row.update(listing="malformed",
                           skip_reason=ListingDecision("malformed", Malformed.NOT_KEYABLE, f": {said}").text)
        rows.append(row)
    return rows


class _Versions:
    """The entries read so far: the latest version of each name, the names whose latest version is deleted
    (the entry leaves the map) and the entries that are not a server at all (kept, to be listed malformed)."""

    def __init__(self) -> None:
        self.latest: dict[str, tuple[Any, dict]] = {}
        self.deleted: set[str] = set()
        self.broken: list[Any] = []

    def add(self, entry: Any) -> None:
        server, _problem = _server_of(entry)
        if server is None or not isinstance(server.get("name"), str):
            self.broken.append(entry)
            return
        is_latest = _is_latest(entry, server)
        if str(_official(entry).get("status", "active")).lower() == "deleted":
            if is_latest:
                self.deleted.add(server["name"])
            return
        if is_latest or server["name"] not in self.latest:
            self.latest[server["name"]] = (entry, server)

    def entries(self) -> list[Any]:
        """The entries to list: each name's latest version, then the broken ones."""
        for name in self.deleted:
            self.latest.pop(name, None)  # an older version never comes back in place of a deleted latest one
        return [entry for entry, _server in self.latest.values()] + self.broken


async def _get_page(client: httpx.AsyncClient, url: str, params: dict[str, str], timeout: float) -> tuple[int, bytes]:
    """One page's status and body: the body at most PAGE_MAX_BYTES once decoded (a compressed page is no way
    around it), the whole answer within `timeout` (not only each read: a registry sending a byte at a time
    would never end)."""
    body = bytearray()
    try:
        async with asyncio.timeout(timeout), client.stream("GET", url, params=params) as response:
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > PAGE_MAX_BYTES:
                    raise RegistryError(f"registry page exceeds {PAGE_MAX_BYTES:,} bytes")
    except TimeoutError as exc:
        raise _PassingFault(f"registry page not read within {timeout:g} s") from exc
    except httpx.DecodingError as exc:  # a compressed page that does not decode: no page
        raise RegistryError(f"registry page does not decode ({exc})") from exc
    if response.status_code in _PASSING_STATUSES:
        raise _PassingFault(f"registry answered HTTP {response.status_code}: {_said(bytes(body))}",
                            retry_after_seconds(response.headers.get("retry-after")))
    return response.status_code, bytes(body)


class _PassingFault(RegistryError):
    """A page the registry did not serve this time, which it may serve when asked again."""

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


async def _get_page_again(client: httpx.AsyncClient, url: str, params: dict[str, str], timeout: float,
                          pauses: tuple[float, ...], snapshot: Snapshot,
                          final: Callable[[BaseException], bool]) -> tuple[int, bytes]:
    """`_get_page`, asked again after each of `pauses` while the registry fails in a way that passes; then the
    last fault, as a RegistryError that says how often the page was asked for. A fault `final` names (the
    caller's own refusal to connect) is never asked again: it would be the same fault after every pause."""
    for attempt, pause in enumerate((*pauses, None)):
        try:
            return await _get_page(client, url, params, timeout)
        except (httpx.TransportError, _PassingFault) as exc:
            if pause is None or snapshot.retries >= SNAPSHOT_RETRIES_MAX or final(exc):
                times = "once" if attempt == 0 else f"{attempt + 1} times"
                raise RegistryError(f"{_fault_text(exc)} (asked {times}; {snapshot.retries} retries in the "
                                    "snapshot)") from exc
            retry_after = exc.retry_after if isinstance(exc, _PassingFault) else None
            snapshot.retries += 1
            await asyncio.sleep(max(pause, min(retry_after or 0.0, RETRY_AFTER_MAX)))
    raise AssertionError("unreachable: the last attempt returns or raises")


def _fault_text(exc: Exception) -> str:
    if isinstance(exc, _PassingFault):
        return str(exc)
    return f"registry not reached: {type(exc).__name__}{': ' + str(exc) if str(exc) else ''}"


def _said(body: bytes) -> str:
    return " ".join(body[:200].decode("utf-8", "replace").split())


def _well_formed(value: Any) -> Any:
    """`value` with each lone surrogate in its strings (keys too) as U+FFFD: the day's registry snapshot could not
    be written with one, and so the day's scan stopped at its first step (helper-84)."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace") if not value.isascii() else value
    if isinstance(value, list):
        return [_well_formed(item) for item in value]
    if isinstance(value, dict):
        return {_well_formed(key): _well_formed(item) for key, item in value.items()}
    return value


def _read_page(status: int, body: bytes, api: str, number: int) -> tuple[list[Any], str | None]:
    """A page's entries and its next cursor (None on the last page); RegistryError when it is not a page."""
    if status != 200:
        raise RegistryError(f"registry {api} answered HTTP {status}: {_said(body)}")
    try:
        page = json.loads(body)
    except RecursionError as exc:
        raise RegistryError(f"registry {api} page {number} is nested too deeply to read") from exc
    except ValueError as exc:
        raise RegistryError(f"registry {api} answered non-JSON: {exc}") from exc
    if b"\\u" in body:  # a JSON escape may spell a lone surrogate (`"\ud800"`), which no Parquet file can hold
        page = _well_formed(page)
    entries = page.get("servers") if isinstance(page, dict) else None
    if not isinstance(entries, list):
        raise RegistryError(f"registry {api} page {number} has no servers list")
    metadata = page.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    cursor = metadata.get("nextCursor") or metadata.get("next_cursor")
    if cursor and not isinstance(cursor, str):
        raise RegistryError(f"registry {api} page {number} has a cursor that is not a string")
    if cursor and len(cursor) > CURSOR_MAX_CHARS:
        raise RegistryError(f"registry {api} page {number} has a cursor of {len(cursor):,} characters")
    return entries, cursor or None


async def fetch_snapshot(client: httpx.AsyncClient, base_url: str, day: dt.date, now: dt.datetime, *,
                         opted_out: Collection[str] = (), host_map: Mapping[str, int] | None = None,
                         timeout: float = 30.0, retry_pauses: tuple[float, ...] = PAGE_RETRY_PAUSES,
                         final: Callable[[BaseException], bool] = lambda _exc: False) -> Snapshot:
    """Read every page of the registry and keep the latest, non-deleted version of each entry. A page the
    registry fails to serve in a way that passes is asked for again after each of `retry_pauses`, unless
    `final` says its fault cannot pass (the prober's own refusal of a non-public address)."""
    snapshot = Snapshot()
    api = "/v0.1/servers"
    cursor: str | None = None
    versions = _Versions()
    seen_cursors: set[str] = set()
    while True:
        params = {"limit": str(PAGE_LIMIT)}
        if cursor:
            params["cursor"] = cursor
        status, body = await _get_page_again(client, base_url.rstrip("/") + api, params, timeout, retry_pauses,
                                             snapshot, final)
        if status == 404 and api == "/v0.1/servers" and snapshot.pages == 0:
            api = "/v0/servers"
            continue
        entries, cursor = _read_page(status, body, api, snapshot.pages + 1)
        snapshot.pages += 1
        snapshot.entries += len(entries)
        for entry in entries:
            versions.add(entry)
        if not cursor:
            break
        if cursor in seen_cursors or snapshot.pages >= MAX_PAGES:
            raise RegistryError(f"registry pagination does not end (cursor {cursor!r} after {snapshot.pages} pages)")
        seen_cursors.add(cursor)
    snapshot.api = api
    for entry in versions.entries():
        snapshot.rows += rows_for_entry(entry, day, now, opted_out=opted_out, host_map=host_map)
    return snapshot
