"""Our overload is never their outage (docs/methodology.md, "When the prober is overloaded"): a timeout seen
while the prober's event loop could not keep up is checked again at the end of the scan, and recorded
not_checked (prober_overloaded, day code n) when the prober is overloaded again; never d.

The overload is real: a task on the prober's own event loop blocks it (time.sleep), as a CPU-starved or
busy loop does, while a real fleet server (in its own thread) answers in time. The origin's robots.txt and
well-knowns were read by the day's first slice (`day_copy`), as they are for every later slice of a day, so
the blocks fall on the endpoint's check itself."""

from __future__ import annotations

import asyncio
import datetime as dt
import time

import pyarrow.parquet as pq
import pytest
from conftest import land_probes, land_registry

from sevenmaps_pipeline import curated
from sevenmaps_pipeline.devtools.fleet.run import Fleet
from sevenmaps_pipeline.lake.keys import server_key
from sevenmaps_pipeline.probe.config import ProbeConfig, Timeouts
from sevenmaps_pipeline.probe.load import LoadMonitor, LoadReading
from sevenmaps_pipeline.probe.origins import OriginBook, OriginResult
from sevenmaps_pipeline.probe.scan import ScanResult, scan
from sevenmaps_pipeline.rules.methods import OVERLOAD_PARAMS

DAY = dt.date(2026, 11, 20)
# robots.txt and the well-knowns get all the time they need; initialize gets less than one blocked turn.
TIMEOUTS = Timeouts(robots_txt=60, initialize=1.0, notifications_initialized=5, tools_list_per_page=5,
                    well_known_per_origin=0.01, check_overall=60, legacy_sse_endpoint_event=4)
BLOCK_S = 1.2


@pytest.fixture(scope="module")
def fleet():
    with Fleet(slow_seconds=30) as running:
        yield running


@pytest.fixture(scope="module")
def day_copy(fleet) -> list[dict]:
    """The weather origin's robots.txt and well-knowns as the day's first slice landed them, at 00:00 of DAY.
    The scans below reuse this copy, as a day's later slices do: fetched under the hog instead, they took a
    dozen blocked turns of the loop (about 15 s) before each pass's check began."""
    config = ProbeConfig(host_map=fleet.host_map, ca_file=fleet.ca_file, timeouts=TIMEOUTS)
    first = ScanResult()
    asyncio.run(scan([listing(fleet.host("weather").url)], DAY, "run-0", config,
                     lambda: dt.datetime.combine(DAY, dt.time(0), dt.UTC), sink=first))
    assert [(r["robots_status"], r["robots_policy"]) for r in first.origin_rows] == [(404, "allow_all")]
    return first.origin_rows


def listing(url: str) -> dict:
    return {"server_key": server_key(url), "url": url, "listing": "probe", "remote_type": "streamable-http",
            "server_name": "io.test/weather", "server_version": "1.0.0"}


class StopOnOverload(ScanResult):
    """Keeps the rows; stops the hog once `overloads` overloaded checks have landed (the load has passed: what
    is left of the scan, its clients closing, is nothing a test asserts, and took four blocked turns)."""

    def __init__(self, stop: asyncio.Event, overloads: int) -> None:
        super().__init__()
        self.stop, self.overloads = stop, overloads

    def add_probe(self, row: dict) -> None:
        super().add_probe(row)
        if sum(r["outcome"] == "not_checked" for r in self.probe_rows) >= self.overloads:
            self.stop.set()


async def scan_with_hog(fleet: Fleet, url: str, overloads: int, day_copy: list[dict]) -> ScanResult:
    """The scan, its loop blocked again and again until `overloads` overloaded checks have landed."""
    stop = asyncio.Event()

    async def hog() -> None:  # blocks the prober's event loop again and again, as an overloaded prober is
        while not stop.is_set():
            await asyncio.sleep(0)  # one turn of the loop between blocks
            time.sleep(BLOCK_S)

    config = ProbeConfig(host_map=fleet.host_map, ca_file=fleet.ca_file, timeouts=TIMEOUTS)
    sink = StopOnOverload(stop, overloads)
    hogging = asyncio.create_task(hog())
    try:
        await scan([listing(url)], DAY, "run-1", config, lambda: dt.datetime.now(dt.UTC), sink=sink,
                   book=OriginBook(OriginResult.from_row(row) for row in day_copy))
    finally:
        stop.set()
        await hogging
    assert not sink.origin_rows  # the day's copy was reused in both passes: no robots.txt was fetched again
    return sink


def day_code(lake, rows: list[dict], url: str) -> dict:
    land_registry(lake, [url], day=DAY)
    land_probes(lake, [{**r, "started_at": r["started_at"].replace(year=DAY.year, month=DAY.month, day=DAY.day)}
                       for r in rows], day=DAY)
    curated.build_quarantine(lake, DAY)
    (status,) = pq.read_table(curated.build_daily_status(lake, DAY).path).to_pylist()
    return status


def test_a_timeout_while_the_prober_was_overloaded_is_checked_again_and_the_fair_check_decides(fleet, day_copy, lake):
    url = fleet.host("weather").url
    rows = asyncio.run(scan_with_hog(fleet, url, overloads=1, day_copy=day_copy)).probe_rows
    assert [r["outcome"] for r in rows] == ["not_checked", "ok"]
    first = rows[0]
    assert first["skip_reason"] == "prober_overloaded"
    assert first["outcome_detail"].startswith("prober_overloaded: event loop")
    # What it saw is kept: a step the blocked loop let time out (initialize, or under a busier machine the
    # notification after it; which one depends on where the blocks fall).
    assert "; saw: no complete answer to " in first["outcome_detail"]
    assert day_code(lake, rows, url)["code"] == "o"


def test_a_prober_overloaded_twice_records_n_never_d(fleet, day_copy, lake, monkeypatch):
    monkeypatch.setitem(OVERLOAD_PARAMS, "recheck_calm_at_most_s", 2.0)
    url = fleet.host("weather").url
    rows = asyncio.run(scan_with_hog(fleet, url, overloads=2, day_copy=day_copy)).probe_rows
    assert [r["outcome"] for r in rows] == ["not_checked", "not_checked"]
    assert "overloaded in the second pass too" in rows[1]["outcome_detail"]
    status = day_code(lake, rows, url)
    assert status["code"] == "n" and status["reason"].startswith("not checked fairly: prober_overloaded")


def test_a_server_that_really_times_out_is_d_when_the_prober_kept_up(fleet):
    """No hog: the monitor sees no lateness, the timeout is the server's, and it is checked once."""
    slow = fleet.host("sleepy").url
    config = ProbeConfig(host_map=fleet.host_map, ca_file=fleet.ca_file, timeouts=TIMEOUTS)
    rows = asyncio.run(scan([listing(slow)], DAY, "run-1", config, lambda: dt.datetime.now(dt.UTC))).probe_rows
    assert [r["outcome"] for r in rows] == ["timeout"]


def test_the_monitor_measures_how_late_a_blocked_loop_woke():
    async def go() -> tuple[LoadReading, LoadReading]:
        async with LoadMonitor() as monitor:
            with monitor.watch() as quiet:
                await asyncio.sleep(0.5)
            with monitor.watch() as blocked:
                await asyncio.sleep(0.05)
                time.sleep(1.3)
                await asyncio.sleep(0.3)
        return quiet[0], blocked[0]

    quiet, blocked = asyncio.run(go())
    assert blocked.max_lag_s >= 1.1 and blocked.overloaded() is not None
    assert "event loop" in blocked.overloaded()
    assert quiet.max_lag_s < 1.0


@pytest.mark.parametrize(("reading", "overloaded"), [
    (LoadReading(wall_s=8.0, max_lag_s=0.2, cpu_wait_s=0.1, pressure_s=7.0), False),  # others waited: not us
    (LoadReading(wall_s=8.0, max_lag_s=1.0, cpu_wait_s=0.0, pressure_s=0.0), True),
    (LoadReading(wall_s=8.0, max_lag_s=0.1, cpu_wait_s=0.9, pressure_s=0.0), True),   # 11% of the check
    (LoadReading(wall_s=8.0, max_lag_s=0.1, cpu_wait_s=0.7, pressure_s=0.0), False),  # under 10%
    (LoadReading(wall_s=2.0, max_lag_s=0.1, cpu_wait_s=0.4, pressure_s=0.0), False),  # under 0.5 s
])
def test_the_thresholds(reading, overloaded):
    assert (reading.overloaded() is not None) is overloaded
