"""The one place politeness is kept, for every loop that contacts servers (the daily scan, the frequent checks,
the readiness probe; docs/methodology.md, "Politeness"): a host's work runs in order on one client of its
own, so one request at a time per host; at most `concurrency` hosts at once; an opted-out host is never
contacted; robots.txt is read once per origin per run (or reused from the day's book) and obeyed; every
connection goes through the guard (probe/netguard.py, inside the client). Across the runs of one lake, which
run side by side in their lanes, a host's session also holds the host's lease (probe/leases.py), so two
runs never have one host in flight at once.

A loop gives the runner its items keyed by host and says, per item, what to do; the runner says why a URL
may not be contacted (`Admission`), and the loop writes that down in its own rows. A host's session hands
out its client only for a URL it admitted on that host (`client_for`), so no loop can contact a URL
without asking, nor another host than the session's; and one host is never in two sessions at once, even
over two runs of one runner. Nothing one item or one host does takes the run down: an item's error, or its
host's client failing, is handed back to the loop as an error for that item."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ..lake.keys import origin as origin_of
from ..registry.listing import SkipReason, is_opted_out
from ..rules.hosts import host_of
from .config import ProbeConfig
from .http import build_client, ssl_context
from .leases import host_lease
from .origins import OriginBook, OriginResult, check_origin

T = TypeVar("T")
Clock = Callable[[], dt.datetime]


@dataclass(frozen=True)
class Robots:
    """How a loop reads robots.txt: `reuse` picks a copy from the book (the day's, or one at most an hour
    old), else it is fetched, with the well-known documents when `documents`; `fetched` is told of each
    fetch (the daily scan lands it and watches its own load meanwhile). `Robots.never()`: the five-minute
    checks an owner asked for do not read it."""

    reuse: Callable[[OriginBook, str, dt.datetime], OriginResult | None] | None
    documents: bool = False
    fetched: Callable[[str, Callable[[], Awaitable[OriginResult]]], Awaitable[OriginResult]] | None = None

    @classmethod
    def never(cls) -> Robots:
        return cls(reuse=None)

    @property
    def obeyed(self) -> bool:
        return self.reuse is not None


@dataclass(frozen=True)
class Admission:
    """Why an item may not be contacted: `kind` is OPTED_OUT, NON_PUBLIC, ROBOTS, or None with `unavailable`
    set (robots.txt could not be read: our trouble, n). `seen` is its origin's policy, for the loop's line."""

    kind: SkipReason | None
    seen: OriginResult | None = None

    @property
    def unavailable(self) -> str | None:
        return self.seen.unavailable if self.kind is None and self.seen is not None else None


class NotAdmitted(RuntimeError):
    """A loop asked for the client for a URL its host's session did not admit, or of another host: a bug in
    the loop, landed as that item's prober error (never a request)."""


class HostSession:
    """One host's client and the origins read for it; the client only for URLs admitted on this host."""

    def __init__(self, runner: HostRunner, host: str, client: Any) -> None:
        self.runner, self.host, self._client = runner, host, client
        self._admitted: set[str] = set()

    async def origin(self, origin: str) -> OriginResult:
        return await self.runner.origin(self._client, origin)

    def opted_out(self, url: str) -> bool:
        return is_opted_out(host_of(url), self.runner.config.opted_out_hosts)

    async def admission(self, url: str) -> Admission | None:
        """None when `url` may be contacted now (then `client_for(url)` gives the client); else why not."""
        if host_of(url) != self.host:
            raise NotAdmitted(f"{url} is not on {self.host}: a host's session contacts its own host only")
        if self.opted_out(url):
            return Admission(SkipReason.OPTED_OUT)
        if self.runner.robots.obeyed:
            seen = await self.origin(origin_of(url))
            if seen.skip_reason is not None:
                return Admission(SkipReason.NON_PUBLIC, seen)
            if seen.unavailable is not None:
                return Admission(None, seen)
            if not seen.allows(url):
                return Admission(SkipReason.ROBOTS, seen)
        self._admitted.add(url)
        return None

    def client_for(self, url: str) -> Any:
        """The host's client, for a URL `admission` let through."""
        if url not in self._admitted:
            raise NotAdmitted(f"{url} was not admitted on {self.host}: ask `admission` first")
        return self._client


class HostRunner(Generic[T]):
    """Runs a loop's items host by host (see the module's docstring)."""

    def __init__(self, config: ProbeConfig, clock: Clock, robots: Robots, book: OriginBook | None = None,
                 concurrency: int | None = None) -> None:
        self.config, self.clock, self.robots = config, clock, robots
        self.book = book if book is not None else OriginBook()
        self.origins: dict[str, OriginResult] = {}
        self._context = ssl_context(config)
        self._gate = asyncio.Semaphore(concurrency or config.concurrency)
        self._busy: dict[str, asyncio.Lock] = defaultdict(asyncio.Lock)  # host -> held while it has a session

    async def origin(self, client: Any, origin: str) -> OriginResult:
        """The origin's policy for this run: read once (from the book when `robots.reuse` finds a copy)."""
        if origin not in self.origins:
            assert self.robots.reuse is not None
            reused = self.robots.reuse(self.book, origin, self.clock())
            if reused is not None:
                self.origins[origin] = reused
            else:
                def fetch() -> Awaitable[OriginResult]:
                    return check_origin(client, self.config, origin, self.clock(), documents=self.robots.documents,
                                        cached=self.book.stand_in(origin, self.clock()))
                fetched = await (self.robots.fetched(origin, fetch) if self.robots.fetched else fetch())
                self.origins[origin] = fetched
                self.book.add(fetched)
        return self.origins[origin]

    async def run(self, groups: Mapping[str, Sequence[T]], work: Callable[[HostSession, T], Awaitable[None]],
                  failed: Callable[[T, BaseException, bool], None]) -> None:
        """Each host's items (`groups`: host -> items, see `by_host`) in order on one client, hosts side by
        side up to the concurrency, in the mapping's order. `failed(item, error, whole_host)` is told of an
        item whose work raised, or (whole_host) of each item left when the host's client itself failed."""
        await asyncio.gather(*(self._host(host, group, work, failed) for host, group in groups.items()))

    async def _host(self, host: str, group: Sequence[T], work: Callable[[HostSession, T], Awaitable[None]],
                    failed: Callable[[T, BaseException, bool], None]) -> None:
        finished = 0
        try:
            # The lease inside the gate: a run takes a host only when it is about to contact it (taken
            # before, a run would hold all its hosts from its start); while it waits, one of its places waits.
            async with self._busy[host], self._gate, host_lease(self.config.host_leases, host), \
                    build_client(self.config, self._context, max_connections=2) as client:
                session = HostSession(self, host, client)
                for item in group:
                    try:
                        await work(session, item)
                    except Exception as exc:  # noqa: BLE001 - one item never takes its host or the run down
                        failed(item, exc, False)
                    finished += 1
        except Exception as exc:  # noqa: BLE001 - the host's client itself failed: its items not yet done
            for item in group[finished:]:
                failed(item, exc, True)


def by_host(items: Iterable[T], url_of: Callable[[T], str],
            unreadable: Callable[[T, ValueError], None] | None = None) -> dict[str, list[T]]:
    """Items grouped by the host of their URL, in the order given. An item whose URL has no readable host
    (urlsplit raises: an unclosed "[", a bracketed host that is no address) goes to `unreadable`, never
    contacted, and the others are grouped still; without `unreadable` the ValueError is raised."""
    groups: dict[str, list[T]] = defaultdict(list)
    for item in items:
        try:
            host = host_of(url_of(item))
        except ValueError as exc:
            if unreadable is None:
                raise
            unreadable(item, exc)
            continue
        groups[host].append(item)
    return groups


def day_copy(day: dt.date) -> Callable[[OriginBook, str, dt.datetime], OriginResult | None]:
    """The daily scan's and the readiness probe's reuse: the origin's copy fetched on `day`, once a day."""
    return lambda book, origin, _now: book.of_day(origin, day)
