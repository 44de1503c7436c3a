"""/live/ of `sevenmaps serve` (docs/agents.md "Live badges and lists"): the live pages of publishing/live.py,
answered with headers a CDN can use (a strong `ETag` over the bytes, `Cache-Control` with a short max-age),
`304 Not Modified` to a matching `If-None-Match`, and kept here for FRESH_SECONDS, so that a page asked for
a thousand times a minute is rendered once; a path naming a server or category the day does not have is a 404
from an index of the day's names, without reading the map. Rendering reads the served day, so it passes the
same gate as a tool call (surfaces/call_gate.py): when the map is busy, or a render fails, the copy kept is
answered (however old, and it says how old in `Age`), else 503 with Retry-After."""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections import OrderedDict
from dataclasses import dataclass

from ..publishing.live import Known, Rendered, kind_of, known, render
from ..publishing.mapday import NoMapError
from .call_gate import CallGate, MapBusy
from .mcp_server import MapService

# How long a rendered page is answered without reading the map again (the status shown now changes with an
# hourly or five-minute batch or a slice's build: minutes apart).
FRESH_SECONDS = 30.0
# What a CDN or browser may keep without asking again, and how long it may serve a stale copy meanwhile.
CACHE_CONTROL = "public, max-age=60, stale-while-revalidate=60, stale-if-error=600"
# Pages kept (a page per endpoint and two badges: the most asked are kept, the others rendered again).
MAX_KEPT = 4096


@dataclass(frozen=True)
class LivePage:
    body: bytes
    media_type: str
    etag: str
    rendered_at: float  # time.monotonic()
    found: bool = True  # False: the path names nothing on the map (kept too, so asking again reads nothing)


def etag_of(body: bytes) -> str:
    return '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def matches(if_none_match: str | None, etag: str) -> bool:
    """Whether an If-None-Match header names `etag` (weak comparison, RFC 9110 13.1.2)."""
    if not if_none_match:
        return False
    if if_none_match.strip() == "*":
        return True
    bare = etag.removeprefix("W/")
    return any(tag.strip().removeprefix("W/") == bare for tag in if_none_match.split(","))


class LivePages:
    def __init__(self, service: MapService, gate: CallGate, fresh_seconds: float = FRESH_SECONDS) -> None:
        self.service, self.gate, self.fresh_seconds = service, gate, fresh_seconds
        self._kept: OrderedDict[str, LivePage] = OrderedDict()
        self._rendering: dict[str, asyncio.Future[LivePage]] = {}
        self._known: tuple[float, Known] | None = None

    def _fresh(self, at: float) -> bool:
        return time.monotonic() - at < self.fresh_seconds

    def _keep(self, path: str, page: LivePage) -> None:
        self._kept[path] = page
        self._kept.move_to_end(path)
        while len(self._kept) > MAX_KEPT:
            self._kept.popitem(last=False)

    async def _names(self, kind: str, arg: str | None) -> bool:
        """Whether the served day has what the path names (server ids and categories, read once every
        fresh_seconds): a flood of made-up ids never reaches the map."""
        if kind not in ("badge", "uptime_badge", "server", "category"):
            return True
        if self._known is None or not self._fresh(self._known[0]):
            try:
                self._known = (time.monotonic(), await self.gate.run(lambda: self.service.read(known)))
            except MapBusy:
                if self._known is None:
                    raise
        return self._known[1].names(kind, arg)

    async def get(self, path: str) -> LivePage | None:
        """The live page at `path` (None: not a live page, or it names nothing on the map). Raises MapBusy when
        the map is busy and no copy is kept, NoMapError when the lake has no built day."""
        found = kind_of(path)
        if found is None or not await self._names(*found):
            return None
        kept = self._kept.get(path)
        if kept is not None and self._fresh(kept.rendered_at):
            self._kept.move_to_end(path)
            return kept if kept.found else None
        if path not in self._rendering:  # one rendering per page at a time: the others wait for it
            task = asyncio.ensure_future(self._render(path, *found, kept))
            self._rendering[path] = task
            task.add_done_callback(lambda _: self._rendering.pop(path, None))
        page = await asyncio.shield(self._rendering[path])
        return page if page.found else None

    async def _render(self, path: str, kind: str, arg: str | None, kept: LivePage | None) -> LivePage:
        try:
            rendered: Rendered | None = await self.gate.run(
                lambda: self.service.read(lambda day: render(day, kind, arg)))
        except MapBusy:
            if kept is not None:  # stale, and said so by its Age
                return kept
            raise
        except NoMapError:
            raise
        except Exception:
            # A provisional build deleted under a long call, a file mid-rename: the copy kept, if any, until the
            # next try (a CDN's stale-if-error does the same in front of us).
            if kept is not None:
                return kept
            raise
        page = (LivePage(b"", "", "", time.monotonic(), found=False) if rendered is None else
                LivePage(rendered.body, rendered.media_type, etag_of(rendered.body), time.monotonic()))
        self._keep(path, page)
        return page


__all__ = ["CACHE_CONTROL", "FRESH_SECONDS", "LivePage", "LivePages", "NoMapError", "etag_of", "matches"]
