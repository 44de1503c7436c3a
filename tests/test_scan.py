"""A day's scan of the fleet through the production path, and the scan asset in Dagster."""

from __future__ import annotations

import copy
import datetime as dt
import json

import dagster as dg
import pyarrow.parquet as pq
import pytest

from sevenmaps_pipeline import curated
from sevenmaps_pipeline.defs.runner import run_days
from sevenmaps_pipeline.devtools.fleet.run import Fleet, load_timeline
from sevenmaps_pipeline.probe.config import ProbeConfig, Timeouts
from sevenmaps_pipeline.probe.origins import OriginResult
from sevenmaps_pipeline.probe.run import (
    PartWriter,
    PastDayError,
    ReplayClock,
    SnapshotMissingError,
    scan_day,
    take_snapshot,
)
from sevenmaps_pipeline.probe.shards import Shard, shard_of

DAY = dt.date(2026, 11, 20)
FAST = Timeouts(robots_txt=4, initialize=4, notifications_initialized=4, tools_list_per_page=4,
                well_known_per_origin=4, check_overall=8, legacy_sse_endpoint_event=4)
EXPECTED = {  # endpoint -> day code on timeline day 0
    "mcp.weather.test/mcp": "o", "mcp.notes.test/mcp": "o", "mcp.calendar.test/mcp": "o",
    "mcp.catalog.test/mcp": "o", "mcp.loop.test/mcp": "o", "mcp.brokenlist.test/mcp": "d",
    "mcp.secure.test/mcp": "a", "mcp.plainauth.test/mcp": "a", "mcp.scoped.test/mcp": "a",
    "mcp.paywall.test/mcp": "p", "mcp.badreq.test/mcp": "d", "mcp.getonly.test/mcp": "d",
    "mcp.crash.test/mcp": "d", "mcp.htmlpage.test/mcp": "d", "mcp.rpcfail.test/mcp": "d",
    "mcp.hop.test/mcp": "o", "mcp.away.test/mcp": "d", "mcp.ops.test/mcp": "o", "mcp.deploy.test/mcp": "o",
    "mcp.shop.test/mcp": "o", "mcp.outage.test/mcp": "o", "mcp.agentcard.test/mcp": "o",
    "mcp.weather.test/v2/mcp": "d",
    # the readiness cases answer the daily check like any SDK server
    "mcp.ready.test/mcp": "o", "mcp.heavy.test/mcp": "o", "mcp.shuffle.test/mcp": "o", "mcp.bloated.test/mcp": "o",
    "mcp.elder.test/mcp": "o",
    # the 2026 surfaces' hosts (a card's ETag, the skills extension, a claim of 2026-07-28) answer it too
    "mcp.newcat.test/mcp": "o", "mcp.skillful.test/mcp": "o", "mcp.claimant.test/mcp": "o",
}


@pytest.fixture(scope="module")
def fleet():
    timeline = copy.deepcopy(load_timeline())
    # A second endpoint on one host: the scan must still send that host one request at a time.
    timeline["extra_listings"].append({"server": {"name": "test.weather/v2", "version": "2.0.0", "remotes": [
        {"type": "streamable-http", "url": "https://mcp.weather.test/v2/mcp"}]}})
    with Fleet(timeline=timeline, slow_seconds=8) as running:
        yield running


def config_for(fleet: Fleet) -> ProbeConfig:
    return ProbeConfig(host_map=fleet.host_map, ca_file=fleet.ca_file, timeouts=FAST,
                       opted_out_hosts=frozenset(fleet.timeline["opted_out_hosts"]))


def test_a_day_scan_lands_registry_probes_and_origins_and_maps_every_endpoint(fleet, lake):
    report = scan_day(lake, DAY, fleet.registry_url, config_for(fleet), ReplayClock(DAY),
                      control_url=fleet.control_url)
    assert lake.registry_file(DAY).exists() and lake.raw_files("probes", DAY) and lake.raw_files("origins", DAY)
    probes = pq.read_table(lake.raw_files("probes", DAY)[0]).to_pylist()
    assert all(p["day"] == DAY and p["started_at"].date() == DAY for p in probes)
    (control,) = [p for p in probes if p["check_kind"] == "control"]
    assert control["outcome"] == "ok"
    skipped = {p["server_key"]: p["skip_reason"] for p in probes if p["outcome"] == "skipped"}
    assert skipped["mcp.robots.test/mcp"].startswith("robots.txt disallows 7Maps-bot")
    assert skipped["mcp.optout.test/mcp"] == "host opted out"
    assert skipped["mcp.legacy.test/sse"] == "sse-only remote"
    assert report.outcomes["ok"] >= 12

    curated.build_quarantine(lake, DAY)
    curated.build_daily_status(lake, DAY)
    status = {r["server_key"]: r for r in pq.read_table(lake.curated_file("daily_status", DAY)).to_pylist()}
    assert {k: r["code"] for k, r in status.items()} == EXPECTED
    assert status["mcp.badreq.test/mcp"]["shown_status"] == "answers, but not as a standard MCP endpoint"
    assert status["mcp.catalog.test/mcp"]["tool_count"] == 7
    assert pq.read_table(lake.curated_file("quarantine", DAY)).num_rows == 0
    assert fleet.max_in_flight["mcp.weather.test"] == 1  # one request at a time per host


def test_two_shards_by_host_check_every_endpoint_once_and_give_the_same_day(fleet, lake, tmp_path):
    """The scan split by host (probe/shards.py): the snapshot first, then each shard its own run, with its
    own control check; together exactly the checks and day codes of one whole scan."""
    with pytest.raises(SnapshotMissingError, match="snapshot has not landed"):
        scan_day(lake, DAY, fleet.registry_url, config_for(fleet), ReplayClock(DAY), shard=Shard(0, 2))
    take_snapshot(lake, DAY, fleet.registry_url, config_for(fleet), ReplayClock(DAY))
    reports = [scan_day(lake, DAY, fleet.registry_url, config_for(fleet), ReplayClock(DAY),
                        control_url=fleet.control_url, shard=Shard(k, 2)) for k in range(2)]
    assert all(r.registry_reused for r in reports) and all(r.probe_rows > 1 for r in reports)
    probes = [row for path in lake.raw_files("probes", DAY) for row in pq.read_table(path).to_pylist()]
    daily = [p for p in probes if p["check_kind"] == "daily"]
    assert sorted(p["server_key"] for p in daily) == sorted({p["server_key"] for p in daily})  # once each
    runs = {p["run_id"] for p in probes}
    assert len(runs) == 2 and all(r.endswith(("-s1of2", "-s2of2")) for r in runs)
    assert sorted(p["run_id"] for p in probes if p["check_kind"] == "control") == sorted(runs)
    hosts_by_run: dict[str, set] = {}
    for p in daily:
        hosts_by_run.setdefault(p["run_id"], set()).add(p["origin"])
    first, second = hosts_by_run.values()
    assert not first & second  # a host is one shard's
    curated.build_quarantine(lake, DAY)
    curated.build_daily_status(lake, DAY)
    status = {r["server_key"]: r["code"] for r in pq.read_table(lake.curated_file("daily_status", DAY)).to_pylist()}
    assert status == EXPECTED


def test_a_shard_is_one_of_count_and_every_host_falls_in_exactly_one():
    hosts = [f"mcp.h{i}.test" for i in range(400)]
    assert all(sum(Shard(k, 3).holds(f"https://{h}/mcp") for k in range(3)) == 1 for h in hosts)
    assert {shard_of(h, 3) for h in hosts} == {0, 1, 2}
    assert shard_of("MCP.H1.test.", 3) == shard_of("mcp.h1.test", 3)
    assert Shard(0, 2).holds("not a url") and not Shard(1, 2).holds("not a url")
    with pytest.raises(ValueError, match="does not exist"):
        Shard(2, 2)


def test_a_host_that_is_down_is_d_not_skipped(fleet, lake):
    # The day's copy of its robots.txt, read by an earlier slice (probe/origins.py): d comes from the
    # endpoint's own MCP check (without a policy to go by, it is n: tests/test_robots_day.py).
    writer = PartWriter(lake, DAY, "scan-earlier")
    earlier = OriginResult(origin="https://mcp.notes.test", fetched_at=dt.datetime.combine(DAY, dt.time(1), dt.UTC),
                           robots_status=404, robots_policy="allow_all", robots_detail="HTTP 404: no robots.txt")
    writer.add_origin({"day": DAY, "run_id": "scan-earlier", **earlier.row()})
    writer.flush()
    fleet.set_day(2)  # "notes" is down (connection refused) on day 2
    try:
        scan_day(lake, DAY, fleet.registry_url, config_for(fleet), ReplayClock(DAY))
    finally:
        fleet.set_day(0)
    probes = {p["server_key"]: p for path in lake.raw_files("probes", DAY) for p in pq.read_table(path).to_pylist()}
    notes = probes["mcp.notes.test/mcp"]
    assert notes["outcome"] == "unreachable" and notes["skip_reason"] is None
    assert notes["outcome_detail"].startswith("initialize:")
    curated.build_quarantine(lake, DAY)
    curated.build_daily_status(lake, DAY)
    status = {r["server_key"]: r["code"] for r in pq.read_table(lake.curated_file("daily_status", DAY)).to_pylist()}
    assert status["mcp.notes.test/mcp"] == "d"


def test_the_past_is_never_probed(fleet, lake):
    with pytest.raises(PastDayError, match="never probed"):
        scan_day(lake, DAY, fleet.registry_url, config_for(fleet), ReplayClock(DAY + dt.timedelta(days=1)))
    assert not lake.raw_dir("probes", DAY).exists() and not lake.registry_file(DAY).exists()


def test_the_scan_asset_probes_the_open_day_only(fleet, lake, signing_key):
    prober = {"registry_url": fleet.registry_url, "host_map_json": json.dumps(fleet.host_map),
              "ca_file": str(fleet.ca_file), "replay_day": DAY.isoformat(),
              "opted_out_hosts": fleet.timeline["opted_out_hosts"]}
    with dg.DagsterInstance.ephemeral() as instance:
        run = run_days("daily_map_job", DAY, DAY, instance, lake.root, signing_key, prober=prober)
        assert run.success
        codes = {r["server_key"]: r["code"] for r in
                 pq.read_table(lake.curated_file("daily_status", DAY)).to_pylist()}
        assert codes == EXPECTED
        # The next day, materialised once it has passed (a late backfill): nothing is probed, nothing lands,
        # and every endpoint still listed is n, never d.
        missed = DAY + dt.timedelta(days=1)
        later = {**prober, "replay_day": (DAY + dt.timedelta(days=2)).isoformat()}
        run = run_days("daily_map_job", missed, missed, instance, lake.root, signing_key, prober=later)
        assert run.success
    assert not lake.raw_dir("probes", missed).exists() and not lake.registry_file(missed).exists()
    codes = pq.read_table(lake.curated_file("daily_status", missed)).column("code").to_pylist()
    assert len(codes) == len(EXPECTED) and set(codes) == {"n"}


def test_sevenmaps_run_never_probes_a_past_day(lake, tmp_path, monkeypatch, capsys):
    from sevenmaps_pipeline.cli import main

    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    past = dt.datetime.now(dt.UTC).date() - dt.timedelta(days=3)
    # The official registry URL: if the past day were probed, this test would try the internet.
    assert main(["--lake", str(lake.root), "run", "--day", past.isoformat()]) == 0
    out = capsys.readouterr().out
    assert "succeeded" in out
    assert out.startswith(f"building {past} (a past day: not probed) into ") and "scanning" not in out  # helper-89
    # It ends with one line saying what the day holds (nothing here: the past day is never probed).
    assert out.splitlines()[-1].endswith(f"{past}: 0 endpoints on the map (o=0 a=0 p=0 d=0 n=0); 0 checks landed, "
                                         f"0 listings skipped with a reason; query them with `sevenmaps sql \"FROM "
                                         f"daily_status WHERE day = '{past}'\"`")
    assert len(out.splitlines()) == 2  # no log lines in between
    assert not lake.raw_dir("probes", past).exists() and not lake.registry_file(past).exists()
    assert lake.curated_file("daily_status", past).exists()


def test_one_endpoint_our_code_cannot_handle_never_takes_its_host_or_the_day_down(fleet):
    """A listing no registry row would carry ('probe' with an unparseable URL) makes our own code raise:
    it ends as prober_error (n, our fault) and every other endpoint, on its host too, is still checked."""
    import asyncio

    from sevenmaps_pipeline.probe.scan import scan

    good = {"server_key": "mcp.weather.test/mcp", "url": "https://mcp.weather.test/mcp", "listing": "probe",
            "server_name": "test.weather/weather", "remote_type": "streamable-http"}
    same_host = {**good, "server_key": "mcp.weather.test/v2/mcp", "url": "https://mcp.weather.test/v2/mcp"}
    broken = {**good, "server_key": "mcp.weather.test/broken", "url": "https://mcp.weather.test:bad/mcp"}
    out = asyncio.run(scan([good, broken, same_host], DAY, "run-x", config_for(fleet), ReplayClock(DAY)))
    by_key = {r["server_key"]: r for r in out.probe_rows}
    assert by_key["mcp.weather.test/broken"]["outcome"] == "prober_error"
    assert "InvalidURL" in by_key["mcp.weather.test/broken"]["outcome_detail"]
    assert by_key["mcp.weather.test/mcp"]["outcome"] == "ok"
    assert by_key["mcp.weather.test/v2/mcp"]["outcome"] in ("ok", "http_404", "no_tool_list", "not_mcp")
    assert len(out.probe_rows) == 3


@pytest.mark.parametrize("setting, env, default, good, bads", [
    ("scan_concurrency", "SEVENMAPS_SCAN_CONCURRENCY", 64, 256, ("abc", "0", "-3", "99999")),
    ("scan_shards", "SEVENMAPS_SCAN_SHARDS", 1, 4, ("two", "0", "-1", "65")),
])
def test_the_scan_settings_come_from_the_environment_or_name_their_variable(monkeypatch, setting, env, default,
                                                                            good, bads):
    from sevenmaps_pipeline.defs import resources

    read = getattr(resources, setting)
    monkeypatch.delenv(env, raising=False)
    assert read() == default
    monkeypatch.setenv(env, str(good))
    assert read() == good
    for bad in bads:
        monkeypatch.setenv(env, bad)
        with pytest.raises(ValueError, match=env):
            read()
