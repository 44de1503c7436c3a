"""The fleet's own count of requests in flight per host: the instrument the scan's politeness tests and the
benchmarks read ("one request in flight per host"), so it must see a real overlap and must not invent one."""

from __future__ import annotations

import asyncio
import datetime as dt

import httpx
import pytest

from sevenmaps_pipeline.devtools.bench_registry import SimHost, registry_timeline
from sevenmaps_pipeline.devtools.fleet.run import SETTLE_TURNS, Fleet, OpenRequest
from sevenmaps_pipeline.lake.paths import LakePaths
from sevenmaps_pipeline.probe.config import ProbeConfig, Timeouts
from sevenmaps_pipeline.probe.http import build_client
from sevenmaps_pipeline.probe.run import ReplayClock, readiness_day, scan_day

HOST = "mcp.weather.test"


def _ledger_with(earlier: OpenRequest) -> Fleet:
    fleet = Fleet(record=False)
    fleet._open[HOST] = [earlier]  # noqa: SLF001 - the ledger as counting_router leaves it
    return fleet


def _count(fleet: Fleet, earlier: OpenRequest, end_after_turns: int | None, how: str) -> None:
    """A new request arrives while `earlier` is open; `earlier` ends `how` a few loop turns later (or never)."""
    async def main() -> None:
        async def end_later() -> None:
            for _ in range(end_after_turns or 0):
                await asyncio.sleep(0)
            fleet._close(HOST, earlier, how)  # noqa: SLF001

        ending = asyncio.ensure_future(end_later()) if end_after_turns is not None else None
        await fleet._count_in_flight(HOST, OpenRequest("POST", "/mcp", 1.0), [earlier])  # noqa: SLF001
        if ending:
            await ending

    asyncio.run(main())


def test_a_request_the_client_had_hung_up_on_is_not_an_overlap():
    # The loop reads the next request a turn before it notices the hang-up of the one before (seen in the
    # registry bench: the third well-known abandoned at the origin's 4 s, then initialize at once).
    earlier = OpenRequest("GET", "/.well-known/agent.json", 0.0)
    fleet = _ledger_with(earlier)
    _count(fleet, earlier, end_after_turns=2, how="abandoned")
    assert fleet.max_in_flight[HOST] == 1 and fleet.overlaps == []


def test_a_request_still_being_answered_when_the_next_arrives_is_an_overlap():
    earlier = OpenRequest("GET", "/robots.txt", 0.0)
    fleet = _ledger_with(earlier)
    _count(fleet, earlier, end_after_turns=2, how="answered")  # answered after the next one came: overlapped
    assert fleet.max_in_flight[HOST] == 2
    assert fleet.overlaps == [{"host": HOST, "request": "POST /mcp",
                               "open": [{"request": "GET /robots.txt", "open_seconds": 1.0, "ended": "answered"}]}]


def test_a_request_never_ended_is_counted_after_a_bounded_wait():
    earlier = OpenRequest("POST", "/mcp", 0.5)
    fleet = _ledger_with(earlier)
    _count(fleet, earlier, end_after_turns=None, how="")
    assert fleet.max_in_flight[HOST] == 2
    assert fleet.overlaps[0]["open"][0]["ended"] == "still open"
    # Ended only after the wait: too late to be forgiven, since the next request was read long before.
    late = OpenRequest("GET", "/robots.txt", 0.0)
    fleet = _ledger_with(late)
    _count(fleet, late, end_after_turns=SETTLE_TURNS + 5, how="abandoned")
    assert fleet.max_in_flight[HOST] == 2


def test_the_running_fleet_counts_real_concurrent_requests_and_a_polite_client_as_one():
    with Fleet(record=False) as fleet:
        fleet.latency[HOST] = 0.3
        config = ProbeConfig(host_map=fleet.host_map, ca_file=fleet.ca_file)

        async def polite_then_rude() -> list[int]:
            async with build_client(config, max_connections=4) as client:
                # One at a time, the second sent as soon as the client gave up on the first.
                with pytest.raises(httpx.TimeoutException):
                    await client.get(f"https://{HOST}/robots.txt", timeout=httpx.Timeout(0.1))
                first = (await client.get(f"https://{HOST}/robots.txt")).status_code
                polite = fleet.max_in_flight[HOST]
                # Two at once on two connections: what the prober must never do.
                answers = await asyncio.gather(*(client.get(f"https://{HOST}/robots.txt") for _ in range(2)))
                return [first, polite, *(a.status_code for a in answers)]

        first, polite, *both = asyncio.run(polite_then_rude())
        assert first in (200, 404) and both == [first, first]  # answered (weather.test has no robots.txt)
        assert polite == 1
        assert fleet.max_in_flight[HOST] == 2
        assert [o["request"] for o in fleet.overlaps] == ["GET /robots.txt"]
        assert fleet.overlaps[0]["open"][0]["ended"] == "still open"  # its 0.3 s had not passed


def test_a_host_that_never_answers_is_left_before_the_next_request_and_the_fleet_sees_it(tmp_path):
    """A host whose initialize hangs: the daily check gives up at its timeout and the readiness probe then asks
    the host again (its documents, a new handshake, its server card). The prober leaves the hung request
    before each next one, and the fleet, watching the connection while it holds the answer back, counts one
    request in flight; while the hang only slept, it counted the next request as a second (the full-scale
    registry bench listed such overlaps, docs/scaling.md)."""
    day = dt.datetime.now(dt.UTC).date()
    hung = "s0.wild.test"
    timeline = registry_timeline([SimHost(hung, 1, 0.0, "timeout"), SimHost("mcp.ok.test", 1, 0.0, "up")])
    with Fleet(timeline=timeline, slow_seconds=6.0) as fleet:
        config = ProbeConfig(host_map=fleet.host_map, ca_file=fleet.ca_file, timeouts=Timeouts(initialize=1.0))
        lake = LakePaths.at(tmp_path / "lake")
        scan_day(lake, day, fleet.registry_url, config, ReplayClock(day, 3))
        readiness_day(lake, day, config, ReplayClock(day, 23))
    asked_again = [r for r in fleet.recorded if r["host"] == hung][5:]  # after the scan's robots.txt, 3 documents, POST
    assert len(asked_again) >= 3, asked_again
    assert fleet.max_in_flight[hung] == 1 and fleet.overlaps == [], fleet.overlaps
