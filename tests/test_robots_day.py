"""robots.txt trouble is never d, and each per-origin document is read once a UTC day
(docs/methodology.md, "Per origin, once a day"; DESIGN §9 "Truth first")."""

from __future__ import annotations

import copy
import datetime as dt

import pyarrow.parquet as pq
import pytest

from sevenmaps_pipeline import curated
from sevenmaps_pipeline.devtools.fleet.run import Fleet, load_timeline
from sevenmaps_pipeline.lake.paths import LakePaths
from sevenmaps_pipeline.probe.config import PROBER_VERSION, ProbeConfig, Timeouts
from sevenmaps_pipeline.probe.frequent import frequent_checks
from sevenmaps_pipeline.probe.origins import WELL_KNOWN, OriginResult
from sevenmaps_pipeline.probe.run import PartWriter, ReplayClock, readiness_day, scan_day, scan_slice

DAY = dt.date(2026, 11, 20)
# robots.txt gets 2 s (not the methodology's 3 s) so the slow host need not be waited on for long.
FAST = Timeouts(robots_txt=2, initialize=4, notifications_initialized=4, tools_list_per_page=4,
                well_known_per_origin=4, check_overall=8, legacy_sse_endpoint_event=4)
ALLOW = "User-agent: *\nAllow: /\n"
ROBOTS = {  # host name -> what its robots.txt does
    "slow": f"SLOW 6\n{ALLOW}",          # answers after the robots timeout
    "flaky": f"BROKEN ONCE\n{ALLOW}",    # the first connection breaks; the retry answers
    "busy": "HTTP 503",
    "cached": f"SLOW 6\n{ALLOW}",        # slow too, but a policy of 13 hours ago stands in
    "gone": ALLOW,                       # down (day 1): no robots.txt, no MCP answer
    "gonecached": ALLOW,                 # down (day 1), with a policy of 13 hours ago
    "many": ALLOW,                       # 30 endpoints over the day's 24 slices
}
MANY = 30


def _server(name: str, robots: str) -> dict:
    timeline = [{"days": "all", "tools": "single", "version": "1.0.0"}]
    if name.startswith("gone"):
        timeline.append({"days": "1", "state": "down"})
    return {"name": name, "host": f"mcp.{name}.test", "kind": "mcp_json", "registry_name": f"test.{name}/{name}",
            "timeline": timeline, "robots": robots}


@pytest.fixture(scope="module")
def fleet():
    timeline = copy.deepcopy(load_timeline())
    timeline.update(servers=[_server(name, robots) for name, robots in ROBOTS.items()], agent_reports=[],
                    skills=[], extra_listings=[
                        {"server": {"name": f"test.many/m{i}", "version": "1.0.0", "remotes": [
                            {"type": "streamable-http", "url": f"https://mcp.many.test/mcp/{i}"}]}}
                        for i in range(1, MANY)])
    with Fleet(timeline=timeline, slow_seconds=8) as running:
        yield running


def config_for(fleet: Fleet) -> ProbeConfig:
    return ProbeConfig(host_map=fleet.host_map, ca_file=fleet.ca_file, timeouts=FAST)


def seed_policy(lake, origin: str, at: dt.datetime, robots: str = ALLOW) -> None:
    """A robots.txt fetched by an earlier scan, landed as the scan lands it."""
    run_id = f"scan-seed-{origin.split('//')[1]}"  # one part file per seeded origin
    writer = PartWriter(lake, at.date(), run_id)
    seen = OriginResult(origin=origin, fetched_at=at, robots_status=200, robots_policy="rules", robots_txt=robots,
                        robots_detail="parsed", documents={name: (404, None) for name in WELL_KNOWN})
    writer.add_origin({"day": at.date(), "run_id": run_id, "prober_version": PROBER_VERSION, **seen.row()})
    writer.flush()


def day_codes(lake: LakePaths) -> dict[str, str]:
    curated.build_quarantine(lake, DAY)
    curated.build_daily_status(lake, DAY)
    return {r["server_key"]: r["code"] for r in pq.read_table(lake.curated_file("daily_status", DAY)).to_pylist()}


def probes_of(lake, kind: str = "probes") -> dict[str, dict]:
    return {p["server_key"]: p for path in lake.raw_files(kind, DAY) for p in pq.read_table(path).to_pylist()}


@pytest.fixture(scope="module")
def scanned(fleet, tmp_path_factory):
    """One day's scan of the fleet with gone and gonecached down, and policies of 13 hours ago landed for
    cached and gonecached: (probe rows, day codes, origin rows) by server_key and origin."""
    lake = LakePaths.at(tmp_path_factory.mktemp("lake"))
    thirteen_hours_ago = dt.datetime.combine(DAY, dt.time(12), dt.UTC) - dt.timedelta(hours=13)
    seed_policy(lake, "https://mcp.cached.test", thirteen_hours_ago)
    seed_policy(lake, "https://mcp.gonecached.test", thirteen_hours_ago)
    fleet.set_day(1)
    try:
        scan_day(lake, DAY, fleet.registry_url, config_for(fleet), ReplayClock(DAY))
    finally:
        fleet.set_day(0)
    origins = {o["origin"]: o for path in lake.raw_files("origins", DAY) for o in pq.read_table(path).to_pylist()}
    return probes_of(lake), day_codes(lake), origins


@pytest.mark.parametrize(("name", "what"), [
    ("slow", "no answer within 2 s"),    # a timeout
    ("busy", "HTTP 503"),                # RFC 9309's complete disallow: we do not check
])
def test_robots_txt_we_cannot_read_is_not_checked_never_d_never_off_the_map(scanned, name, what):
    probes, codes, _ = scanned
    row = probes[f"mcp.{name}.test/mcp"]
    assert (row["outcome"], row["skip_reason"]) == ("not_checked", "robots_unavailable")
    assert row["outcome_detail"].startswith("robots_unavailable: ") and what in row["outcome_detail"]
    assert codes[f"mcp.{name}.test/mcp"] == "n"


def test_a_broken_robots_txt_connection_is_retried_once_and_the_retry_rules(fleet, scanned):
    probes, codes, origins = scanned
    assert probes["mcp.flaky.test/mcp"]["outcome"] == "ok" and codes["mcp.flaky.test/mcp"] == "o"
    assert origins["https://mcp.flaky.test"]["robots_policy"] == "rules"
    assert [r["path"] for r in fleet.requests_to("mcp.flaky.test")][:2] == ["/robots.txt", "/robots.txt"]


def test_a_policy_of_the_last_24_hours_stands_in_for_a_failed_fetch_and_the_origin_row_says_so(scanned):
    probes, codes, origins = scanned
    assert probes["mcp.cached.test/mcp"]["outcome"] == "ok" and codes["mcp.cached.test/mcp"] == "o"
    cached = origins["https://mcp.cached.test"]
    assert cached["robots_policy"] == "rules" and cached["robots_txt"] == ALLOW
    assert "no answer within 2 s; used the cached policy fetched at 2026-11-19 23:00:00" in cached["robots_detail"]


def test_a_host_where_nothing_listens_is_d_from_its_own_mcp_check_without_a_policy_to_go_by(scanned):
    """A refused robots.txt connection: nothing listens, so robots.txt cannot hide the outage; the
    endpoint's own check is made and fails the same way."""
    probes, codes, origins = scanned
    gone = probes["mcp.gone.test/mcp"]
    assert gone["outcome"] == "unreachable" and gone["outcome_detail"].startswith("initialize:")
    assert codes["mcp.gone.test/mcp"] == "d"
    assert origins["https://mcp.gone.test"]["robots_policy"] == "host_unreachable"
    assert "nothing listens" in origins["https://mcp.gone.test"]["robots_detail"]


def test_a_host_that_is_down_with_a_policy_to_go_by_is_d_from_its_own_mcp_check(scanned):
    probes, codes, _ = scanned
    gone = probes["mcp.gonecached.test/mcp"]
    assert gone["outcome"] == "unreachable" and gone["outcome_detail"].startswith("initialize:")
    assert codes["mcp.gonecached.test/mcp"] == "d"


def test_a_stand_in_is_never_older_than_24_hours(fleet, lake):
    seed_policy(lake, "https://mcp.cached.test", dt.datetime.combine(DAY, dt.time(11, 59), dt.UTC)
                - dt.timedelta(days=1))
    scan_day(lake, DAY, fleet.registry_url, config_for(fleet), ReplayClock(DAY))
    row = probes_of(lake)["mcp.cached.test/mcp"]
    assert (row["outcome"], row["skip_reason"]) == ("not_checked", "robots_unavailable")


def test_each_per_origin_document_is_read_once_a_day_by_every_slice_hourly_check_and_readiness_run(fleet, lake):
    before = len(fleet.recorded)
    config = config_for(fleet)
    for hour in range(24):
        scan_slice(lake, DAY, hour, fleet.registry_url, config, ReplayClock(DAY, hour))
    seen = probes_of(lake)
    assert sum(key.startswith("mcp.many.test/") for key in seen) == MANY  # every endpoint, each in its slice
    # The readiness run of the day reuses the day's copy; the hourly checks reuse it while under an hour old.
    readiness_day(lake, DAY, config, ReplayClock(DAY, 23))
    paths = [r["path"] for r in fleet.recorded[before:] if r["host"] == "mcp.many.test"]
    for path in ["/robots.txt", *WELL_KNOWN.values()]:
        assert paths.count(path) == 1, path
    origins = [o for p in lake.raw_files("origins", DAY) for o in pq.read_table(p).to_pylist()
               if o["origin"] == "https://mcp.many.test"]
    assert len(origins) == 1  # the first fetch's row; a reuse lands none
    fetched = origins[0]["fetched_at"]
    within_the_hour = fetched + dt.timedelta(minutes=30)
    frequent_checks(lake, "hourly", {"mcp.many.test/mcp"}, config, lambda: within_the_hour)
    assert [r["path"] for r in fleet.recorded[before:] if r["host"] == "mcp.many.test"].count("/robots.txt") == 1
    later = fetched + dt.timedelta(minutes=90)  # over an hour old: the hourly check reads robots.txt again
    assert later.date() == DAY
    frequent_checks(lake, "hourly", {"mcp.many.test/mcp"}, config, lambda: later)
    assert [r["path"] for r in fleet.recorded[before:] if r["host"] == "mcp.many.test"].count("/robots.txt") == 2
