"""Hourly and five-minute checks (docs/operations.md, "Hourly checks" and "Five-minute checks").

The same check as the daily scan (initialize, notifications/initialized, tools/list; never a tool call),
of a chosen few endpoints, landed in their own raw kind (`raw/hourly`, `raw/five_minute`: not covered by
roots). They never enter a day code or uptime: daily_status reads daily checks only.

- hourly: the most used endpoints. robots.txt is obeyed as the daily scan obeys it, re-read at most hourly:
  the day's copy (raw/origins, read once per run) is reused while it is under an hour old, else read
  again for this run (not landed: raw/origins holds the daily scan's fetches). One we cannot read is
  not_checked (robots_unavailable), never d, unless a policy of the last 24 hours stands in.
- submitted: servers submitted for the map, every 6 hours for 7 days (registry/submissions.py), robots.txt
  obeyed as hourly.
- five_minute: endpoints whose owner verified control of the host. robots.txt is not read again (the owner
  asked for these checks); each check has 30 s overall; a check the run could not start before its
  window closed is `skipped` ("not reached in time"), never counted as down.

Opted-out hosts are never contacted by either. One request at a time per host, as in the daily scan.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
import uuid
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ..lake.parquet_io import write_parquet
from ..lake.paths import LakePaths, registry_in_force
from ..lake.schemas import RAW_FIVE_MINUTE, RAW_HOURLY, RAW_SUBMITTED, conform
from ..registry.listing import SkipReason
from .checker import CheckResult, EndpointCheck
from .config import PROBER_VERSION, ProbeConfig
from .hosts import Admission, Clock, HostRunner, HostSession, Robots, by_host
from .loop import run_prober
from .origins import OriginBook
from .scan import naming_order, not_checked_row, probe_row, prober_error_row, skip_row

KINDS = {"hourly": RAW_HOURLY, "five_minute": RAW_FIVE_MINUTE, "submitted": RAW_SUBMITTED}
NOT_REACHED = "not reached in time"
HOURLY_ROBOTS = dt.timedelta(hours=1)  # robots.txt re-read at most hourly by the hourly checks
FIVE_MINUTE_WINDOW_SECONDS = 240.0  # a run must end before the next one starts (every 5 minutes)


@dataclass
class FrequentRun:
    kind: str
    day: dt.date
    run_id: str
    checks: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    not_listed: list[str] = field(default_factory=list)  # asked for, not listed to probe by the snapshot in force
    seconds: float = 0.0
    path: str | None = None


def listings_for(lake: LakePaths, day: dt.date, keys: Collection[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """The listings of `keys` to be contacted in the registry snapshot in force on `day` (the one the day's rows
    name endpoints by: lake/paths.py registry_in_force), and the keys it does not list that way (never
    checked: the map is the registry's)."""
    path = registry_in_force(lake, day)
    if path is None:
        return [], sorted(keys)
    rows = pq.read_table(path).to_pylist()
    found: dict[str, dict[str, Any]] = {}
    for row in rows:  # the listing the day's row names the endpoint by (status-1.4), as the daily scan checks it
        key = row.get("server_key")
        if key in keys and row.get("listing") == "probe" and (key not in found or
                                                             naming_order(row) < naming_order(found[key])):
            found[key] = row
    return list(found.values()), sorted(set(keys) - set(found))


def _refusal_row(kind: str, listing: dict[str, Any], day: dt.date, run_id: str, now: dt.datetime,
                 refused: Admission) -> dict[str, Any]:
    """The row of an endpoint a frequent check may not contact, in the frequent checks' words."""
    if refused.kind is None:
        assert refused.seen is not None
        return not_checked_row(listing, day, run_id, now, refused.seen.unavailable_reason,
                               f"{refused.seen.unavailable}; the endpoint was not contacted", kind)
    if refused.kind is SkipReason.NON_PUBLIC:
        assert refused.seen is not None and refused.seen.skip_reason is not None
        return skip_row(listing, day, run_id, now, refused.seen.skip_reason, kind)
    return skip_row(listing, day, run_id, now, refused.kind, kind)


async def _checked(kind: str, client: Any, listing: dict[str, Any], day: dt.date, run_id: str,
                   config: ProbeConfig, started: dt.datetime) -> dict[str, Any]:
    checker = EndpointCheck(client, config, listing["url"], started, listing.get("remote_type") or "streamable-http")
    if kind != "five_minute":
        return probe_row(await checker.run(), listing, day, run_id, check_kind=kind)
    cap = config.timeouts.check_overall
    try:
        async with asyncio.timeout(cap):
            check = await checker.run()
    except TimeoutError:
        check = CheckResult(url=listing["url"], started_at=started, outcome="timeout",
                            outcome_detail=f"no complete answer within the check's {cap:g} s overall",
                            handshake_ms=int(cap * 1000))
    return probe_row(check, listing, day, run_id, check_kind=kind)


async def _run(kind: str, listings: Iterable[dict[str, Any]], day: dt.date, run_id: str, config: ProbeConfig,
               clock: Clock, window_seconds: float | None, book: OriginBook) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    closes = time.monotonic() + window_seconds if window_seconds else None
    # robots.txt is obeyed as the daily scan obeys it, at most an hour old; the five-minute checks an owner
    # asked for do not read it (the module's docstring).
    robots = Robots.never() if kind == "five_minute" else Robots(
        lambda known, origin, now: known.within(origin, now, HOURLY_ROBOTS))
    runner: HostRunner[dict[str, Any]] = HostRunner(config, clock, robots, book)

    async def one(session: HostSession, listing: dict[str, Any]) -> None:
        if closes is not None and time.monotonic() >= closes and not session.opted_out(listing["url"]):
            rows.append(skip_row(listing, day, run_id, clock(), NOT_REACHED, kind))
            return
        refused = await session.admission(listing["url"])
        if refused is not None:
            rows.append(_refusal_row(kind, listing, day, run_id, clock(), refused))
            return
        rows.append(await _checked(kind, session.client_for(listing["url"]), listing, day, run_id, config, clock()))

    def failed(listing: dict[str, Any], exc: BaseException, _whole_host: bool) -> None:
        rows.append(prober_error_row(listing, day, run_id, clock(), exc, f"the {kind} check", kind))

    await runner.run(by_host(listings, lambda listing: listing["url"]), one, failed)
    return rows


def frequent_checks(lake: LakePaths, kind: str, keys: Collection[str], config: ProbeConfig, clock: Clock,
                    window_seconds: float | None = None,
                    listings: list[dict[str, Any]] | None = None) -> FrequentRun:
    """Check `keys` now (hourly, five_minute or submitted) and land the rows as one part file of raw/<kind>.
    The listings are the registry snapshot's, unless given (a submitted server is not in the registry)."""
    spec = KINDS[kind]
    now = clock()
    day = now.date()
    started = time.perf_counter()
    run = FrequentRun(kind, day, f"{kind}-{now:%H%M%S}-{uuid.uuid4().hex[:8]}")
    if listings is None:
        listings, run.not_listed = listings_for(lake, day, set(keys))
    if kind == "five_minute" and window_seconds is None:
        window_seconds = FIVE_MINUTE_WINDOW_SECONDS
    book = OriginBook.from_lake(lake, day) if listings and kind != "five_minute" else OriginBook()
    rows = run_prober(_run(kind, listings, day, run.run_id, config, clock, window_seconds, book)) if listings else []
    if rows:
        for row in rows:
            row["prober_version"] = PROBER_VERSION
            run.outcomes[row["outcome"]] = run.outcomes.get(row["outcome"], 0) + 1
        path = lake.root / f"raw/{kind}/day={day}/{run.run_id}.parquet"
        write_parquet(lake, path, conform(pa.Table.from_pylist(rows, spec.schema), spec))
        run.path, run.checks = str(path), len(rows)
    run.seconds = time.perf_counter() - started
    return run
