"""A day's scan: every listed endpoint once, one request at a time per host, bounded concurrency.

Per host, in order: robots.txt and the well-known documents of its origin (once a UTC day: reused from
the day's first fetch), then its endpoints; a robots.txt that disallows 7Maps-bot (or `*`) turns the
endpoint into a skip with that reason, one we could not read (and no policy of the last 24 hours) into
not_checked (robots_unavailable): our trouble, n, never d.

Nothing one endpoint or host does can take the scan down: each endpoint's check, and each host's
worker as a whole, is isolated, and whatever escapes becomes a `prober_error` row (our fault: day code
n). Rows go to a `sink` as they are made; the caller lands them in part files during the scan, so a
crash or a kill keeps every check already made (see probe/run.py).
"""

from __future__ import annotations

import datetime as dt
import traceback
from collections.abc import Awaitable, Callable, Collection, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..lake.keys import origin as origin_of
from ..lake.keys import server_id, server_key
from ..registry.listing import SkipReason
from ..rules.fingerprints import summarize_tools
from ..rules.methods import FINDINGS_PARAMS, OVERLOAD_PARAMS
from ..rules.namespace import namespace_owns_host
from ..rules.outcomes import NOT_CHECKED, PROBER_OVERLOADED, PROBER_RESOURCES, not_checked_detail
from .checker import CheckResult, EndpointCheck
from .config import PROBER_VERSION, ProbeConfig
from .hosts import Admission, Clock, HostRunner, HostSession, Robots, by_host, day_copy
from .http import build_client, ssl_context
from .load import LoadMonitor
from .origins import OriginBook, OriginResult


class Sink(Protocol):
    def add_probe(self, row: dict[str, Any]) -> None: ...

    def add_origin(self, row: dict[str, Any]) -> None: ...


@dataclass
class ScanResult:
    """A sink that keeps everything in memory (`sevenmaps probe`, tests)."""

    probe_rows: list[dict[str, Any]] = field(default_factory=list)
    origin_rows: list[dict[str, Any]] = field(default_factory=list)

    def add_probe(self, row: dict[str, Any]) -> None:
        self.probe_rows.append(row)

    def add_origin(self, row: dict[str, Any]) -> None:
        self.origin_rows.append(row)


def probe_row(check: CheckResult, listing: dict[str, Any], day: dt.date, run_id: str,
              check_kind: str = "daily") -> dict[str, Any]:
    key = listing.get("server_key") or server_key(check.url)
    url = listing.get("url") or check.url
    row: dict[str, Any] = {
        "day": day, "check_kind": check_kind, "run_id": run_id, "server_key": key, "server_id": server_id(key),
        "server_name": listing.get("server_name"), "server_version": listing.get("server_version"),
        "remote_type": listing.get("remote_type"), "url": url,
        "origin": origin_of(url), "started_at": check.started_at,
        "handshake_ms": check.handshake_ms, "outcome": check.outcome, "outcome_detail": check.outcome_detail[:2000],
        "http_status": check.http_status, "protocol_version": check.protocol_version,
        "server_info_name": check.server_info_name, "server_info_version": check.server_info_version,
        "pages_read": check.pages_read, "tool_list_complete": check.tool_list_complete,
        "redirect_location": check.redirect_location, "www_authenticate": check.www_authenticate,
        "resource_metadata_url": check.resource_metadata_url, "payment_json": check.payment_json,
        "skip_reason": check.skip_reason, "discover_supported": check.discover_supported, "ttl_ms": check.ttl_ms,
        "cache_scope": check.cache_scope, "prober_version": PROBER_VERSION,
    }
    if check.tools is not None:
        summary = summarize_tools(check.tools)
        row.update(tools_json=summary.tools_json, tool_count=summary.tool_count,
                   tool_list_size=summary.tool_list_size, tools_hash=summary.tools_hash)
    return row


def prober_error_row(listing: dict[str, Any], day: dt.date, run_id: str, now: dt.datetime,
                     exc: BaseException, where: str, check_kind: str = "daily") -> dict[str, Any]:
    """The row for a check our own code could not finish: kept, classified, and a day code n."""
    frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    at = f" at {frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}" if frame else ""
    check = CheckResult(url=listing.get("url") or "", started_at=now, outcome="prober_error",
                        outcome_detail=f"{where}: {type(exc).__name__}: {str(exc)[:300]}{at}", handshake_ms=0)
    return probe_row(check, listing, day, run_id, check_kind)


def skip_row(listing: dict[str, Any], day: dt.date, run_id: str, now: dt.datetime, reason: str,
             check_kind: str = "daily") -> dict:
    """The row of a listing not contacted, with the reason (a skip is a listing decision, never a result)."""
    check = CheckResult(url=listing["url"], started_at=now, outcome="skipped", outcome_detail=reason,
                        skip_reason=reason, handshake_ms=0)
    return probe_row(check, listing, day, run_id, check_kind)


def not_checked_row(listing: dict[str, Any], day: dt.date, run_id: str, now: dt.datetime, reason: str,
                    detail: str, check_kind: str = "daily", handshake_ms: int = 0) -> dict[str, Any]:
    """The row of a check we could not make fairly (our trouble, rules/outcomes.py): kept with its reason
    kind, a day code n, never d, and checked again by a later slice or a resumed scan."""
    check = CheckResult(url=listing.get("url") or "", started_at=now, outcome=NOT_CHECKED,
                        outcome_detail=not_checked_detail(reason, detail), skip_reason=reason,
                        handshake_ms=handshake_ms)
    return probe_row(check, listing, day, run_id, check_kind)


def unfair_if_overloaded(row: dict[str, Any]) -> bool:
    """Whether the row's outcome rests on timing that an overloaded prober can spoil: a timeout, or an
    answer slower than the slow finding's threshold."""
    if row["outcome"] == "timeout":
        return True
    answered = row["outcome"] in ("ok", "needs_auth", "http_402")
    return answered and (row["handshake_ms"] or 0) > FINDINGS_PARAMS["slow_ms"]


def overloaded_row(row: dict[str, Any], why: str, then: str) -> dict[str, Any]:
    """A check seen while the prober could not keep up: a timeout (or a robots.txt that failed meanwhile)
    becomes not_checked (prober_overloaded); an answer stays what it is (it did answer) without its
    handshake time, which was ours as much as theirs."""
    if row["outcome"] in ("timeout", NOT_CHECKED):
        return {**row, "outcome": NOT_CHECKED, "skip_reason": PROBER_OVERLOADED,
                "outcome_detail": not_checked_detail(PROBER_OVERLOADED, f"{why}; saw: {row['outcome_detail']}; "
                                                                        f"{then}")[:2000]}
    return {**row, "handshake_ms": None,
            "outcome_detail": f"{row['outcome_detail']} [handshake time not kept: {why}; {then}]"[:2000]}


def _nulls_last(value: Any) -> tuple[bool, str]:
    return value is None, "" if value is None else str(value)


def naming_order(listing: dict[str, Any]) -> tuple:
    """Which of an endpoint's listings it is checked under: a listing to probe before an SSE-only one, then the one
    the day's rows name it by (status-1.4, sql/naming_listings.sql, in the same order): active first, then one
    whose namespace owns its URL's host (rules/namespace.py: so that a stranger's listing of another's endpoint
    under a variant URL never replaces the owner's), then by name, URL and version (nulls last), so the check's
    row, the readiness lines and the day's row name one listing, whatever the registry's order
    (tests/test_naming_order_property.py)."""
    return (listing.get("listing") != "probe", listing.get("status") != "active",
            not namespace_owns_host(listing.get("server_name"), listing.get("url")),
            *(_nulls_last(listing.get(k)) for k in ("server_name", "url", "server_version")))


def endpoints_to_check(listings: Iterable[dict[str, Any]]) -> tuple[dict[str, dict], list[dict]]:
    """(endpoints to contact by server_key, listings skipped by the listing rules): one per server_key."""
    to_check: dict[str, dict[str, Any]] = {}
    skipped: dict[str, dict[str, Any]] = {}
    for listing in listings:
        key = listing.get("server_key")
        if not key:
            continue
        if listing.get("listing") == "probe" or (listing.get("listing") == "skip"
                                                  and listing.get("skip_reason") == SkipReason.SSE_ONLY):
            if key not in to_check or naming_order(listing) < naming_order(to_check[key]):
                to_check[key] = listing
                skipped.pop(key, None)
        elif listing.get("listing") == "skip" and key not in to_check and (
                key not in skipped or naming_order(listing) < naming_order(skipped[key])):
            skipped[key] = listing  # by the same order, so a skip row's name is not the registry file's order
    return to_check, list(skipped.values())


def _refusal_row(listing: dict[str, Any], day: dt.date, run_id: str, now: dt.datetime,
                 refused: Admission) -> dict[str, Any]:
    """The row of an endpoint the daily scan may not contact, in the daily scan's words."""
    seen = refused.seen
    if refused.kind is SkipReason.OPTED_OUT:
        return skip_row(listing, day, run_id, now, SkipReason.OPTED_OUT)
    assert seen is not None
    if refused.kind is SkipReason.NON_PUBLIC:
        return skip_row(listing, day, run_id, now, f"{seen.skip_reason} ({seen.robots_detail})")
    if refused.kind is None:
        return not_checked_row(listing, day, run_id, now, seen.unavailable_reason,
                               f"{seen.unavailable}; the endpoint was not contacted")
    reason = str(SkipReason.ROBOTS)
    if seen.robots_policy == "disallow_all":
        reason += f" ({seen.robots_detail})"
    return skip_row(listing, day, run_id, now, reason)


class _DailyScan:
    """One run of the daily scan over the endpoints of a snapshot (or of a slice of it): the main pass, then
    the checks the prober could not make fairly, once more (docs/methodology.md, "When the prober is
    overloaded"). Politeness is the host runner's (probe/hosts.py)."""

    def __init__(self, day: dt.date, run_id: str, config: ProbeConfig, clock: Clock, out: Sink, book: OriginBook,
                 progress: Callable[[int, int], None] | None, total: int) -> None:
        self.day, self.run_id, self.config, self.clock, self.out = day, run_id, config, clock, out
        self.book, self.progress, self.total, self.done = book, progress, total, 0
        self.monitor = LoadMonitor()
        self.overloaded: dict[str, str] = {}  # server_key -> why the prober could not keep up during its check
        self.overloaded_origins: dict[str, str] = {}  # origin -> why, for a robots.txt fetch that failed meanwhile
        self.rechecks: list[dict[str, Any]] = []

    def runner(self, concurrency: int | None = None) -> HostRunner[dict[str, Any]]:
        return HostRunner(self.config, self.clock, Robots(day_copy(self.day), documents=True, fetched=self.fetched),
                          self.book, concurrency)

    async def fetched(self, origin: str, fetch: Callable[[], Awaitable[OriginResult]]) -> OriginResult:
        """The day's first fetch of an origin: landed (only the first is: docs/methodology.md, "Per origin,
        once a day"), and watched, since a robots.txt that failed while we could not keep up is asked again."""
        with self.monitor.watch() as reading:
            result = await fetch()
        why = reading[0].overloaded() if result.unavailable is not None else None
        if why is not None:
            self.overloaded_origins[origin] = f"robots.txt: {why}"
        self.out.add_origin(result.landed_row(self.day, self.run_id))
        return result

    async def check_one(self, session: HostSession, listing: dict[str, Any]) -> dict[str, Any]:
        refused = await session.admission(listing["url"])
        if refused is None:
            return await self.measured_check(session.client_for(listing["url"]), listing)
        if refused.unavailable is not None and origin_of(listing["url"]) in self.overloaded_origins:
            self.overloaded[listing["server_key"]] = self.overloaded_origins[origin_of(listing["url"])]
        return _refusal_row(listing, self.day, self.run_id, self.clock(), refused)

    async def measured_check(self, client: Any, listing: dict[str, Any]) -> dict[str, Any]:
        with self.monitor.watch() as reading:
            check = await EndpointCheck(client, self.config, listing["url"], self.clock(),
                                        listing.get("remote_type") or "streamable-http").run()
        row = probe_row(check, listing, self.day, self.run_id)
        why = reading[0].overloaded() if unfair_if_overloaded(row) else None
        if why is not None:
            self.overloaded[listing["server_key"]] = why
        return row

    async def check_and_land(self, session: HostSession, listing: dict[str, Any], then: str) -> bool:
        """Check one endpoint and land its row; whether it was not checked fairly: the prober was overloaded
        meanwhile (then the row is not_checked, or an answer without its handshake time, and `then` says what
        follows), or our machine could not make the request (not_checked, prober_resources)."""
        row = await self.check_one(session, listing)
        why = self.overloaded.pop(listing["server_key"], None)
        if why is not None:
            row = overloaded_row(row, why, then)
        self.out.add_probe(row)
        return why is not None or row.get("skip_reason") == PROBER_RESOURCES

    async def first(self, session: HostSession, listing: dict[str, Any]) -> None:
        if await self.check_and_land(session, listing, "checked again at the end of the scan"):
            self.rechecks.append(listing)
        self.count()

    async def again(self, session: HostSession, listing: dict[str, Any]) -> None:
        await self.check_and_land(session, listing, "overloaded in the second pass too")

    def failed(self, where: str) -> Callable[[dict[str, Any], BaseException, bool], None]:
        def land(listing: dict[str, Any], exc: BaseException, whole_host: bool) -> None:
            self.overloaded.pop(listing["server_key"], None)
            self.out.add_probe(prober_error_row(listing, self.day, self.run_id, self.clock(), exc,
                                                "the host's worker" if whole_host else where))
            if whole_host or where == "checking the endpoint":
                self.count()
        return land

    def count(self) -> None:
        self.done += 1
        if self.progress:
            self.progress(self.done, self.total)

    async def recheck_overloaded(self) -> None:
        """The checks the prober could not make fairly, once more after the main pass, at a fraction of its
        concurrency (one request at a time per host still): a fair answer decides the day; overloaded
        again, the check is not_checked (prober_overloaded), n, never d (docs/methodology.md)."""
        p = OVERLOAD_PARAMS
        await self.monitor.calm(p["recheck_calm_s"], p["recheck_calm_at_most_s"])
        self.overloaded_origins.clear()  # their robots.txt is asked again (a failed fetch is never the day's copy)
        runner = self.runner(max(1, self.config.concurrency // p["recheck_concurrency_divisor"]))
        groups = by_host(self.rechecks, lambda listing: listing["url"])
        await runner.run(groups, self.again, self.failed("checking the endpoint again"))


async def scan(listings: Iterable[dict[str, Any]], day: dt.date, run_id: str, config: ProbeConfig, clock: Clock,
               control_url: str | None = None, progress: Callable[[int, int], None] | None = None,
               sink: Sink | None = None, already_checked: Collection[str] = (),
               book: OriginBook | None = None) -> Sink:
    """Check every endpoint of the snapshot once (except those in `already_checked`: a resumed scan).
    Listings that are not to be contacted are recorded as skips; sse-only remotes are only opened (seed
    004) and recorded as skips too. `book`: the origins the day already read (probe/origins.py), reused."""
    out: Sink = sink if sink is not None else ScanResult()
    to_check, skipped = endpoints_to_check(listings)
    for listing in skipped:
        if listing["server_key"] not in already_checked:
            out.add_probe(skip_row(listing, day, run_id, clock(), listing["skip_reason"]))
    pending = [listing for key, listing in to_check.items() if key not in already_checked]
    groups = by_host(pending, lambda listing: listing["url"])
    run = _DailyScan(day, run_id, config, clock, out, book if book is not None else OriginBook(), progress,
                     len(pending))
    if control_url:
        async with build_client(config, ssl_context(config), max_connections=2) as client:
            check = await EndpointCheck(client, config, control_url, clock()).run()
        out.add_probe(probe_row(check, {"url": control_url, "server_name": "control"}, day, run_id,
                                check_kind="control"))
    # Longest queues first: a host with many endpoints is checked one request at a time, so the scan can
    # end no sooner than its queue does; started last, it would run alone after everything else
    # (docs/scaling.md, "The whole registry, simulated").
    queues = dict(sorted(groups.items(), key=lambda group: len(group[1]), reverse=True))
    async with run.monitor:
        await run.runner().run(queues, run.first, run.failed("checking the endpoint"))
        if run.rechecks:
            await run.recheck_overloaded()
    return out
