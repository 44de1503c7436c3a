"""The moving daily hour (docs/operations.md, "The moving daily hour"): the day's scan in 24 hourly slices,
each endpoint in one slice a day at an hour that moves, every hour reached within 24 days; a slice that
did not run leaves exactly its endpoints n. Through Dagster: the hourly schedule, the slice asset, and the
day's map over replayed slices."""

from __future__ import annotations

import datetime as dt
import json
from collections import defaultdict

import dagster as dg
import pyarrow.parquet as pq
import pytest
from test_scan import EXPECTED as WITH_SECOND_WEATHER
from test_scan import config_for

from sevenmaps_pipeline.defs.jobs import daily_map_schedule, scan_slice_schedule
from sevenmaps_pipeline.defs.runner import run_days, run_partition
from sevenmaps_pipeline.devtools.fleet.run import Fleet
from sevenmaps_pipeline.probe.run import ReplayClock, scan_day, scan_slice
from sevenmaps_pipeline.probe.slices import SliceMissedError, slot_hour

DAY = dt.date(2026, 11, 20)
EXPECTED = {k: code for k, code in WITH_SECOND_WEATHER.items() if k != "mcp.weather.test/v2/mcp"}  # the fleet's own
KEYS = [f"mcp{i}.example.test/mcp" for i in range(2000)] + list(EXPECTED)


def test_over_24_days_every_server_is_checked_at_every_hour_once_a_day():
    start = dt.date(2026, 3, 5)
    seen: dict[str, set[int]] = defaultdict(set)
    for i in range(24):
        day = start + dt.timedelta(days=i)
        for key in KEYS:
            seen[key].add(slot_hour(key, day))  # one slot per key per day, by construction
    assert all(hours == set(range(24)) for hours in seen.values())
    # The hour moves a little (one hour) each day, and the slices stay about equal in size.
    assert all((slot_hour(k, start + dt.timedelta(days=1)) - slot_hour(k, start)) % 24 == 1 for k in KEYS)
    sizes = defaultdict(int)
    for key in KEYS[:2000]:
        sizes[slot_hour(key, start)] += 1
    assert min(sizes.values()) > 2000 / 24 / 2 and max(sizes.values()) < 2000 / 24 * 2


@pytest.fixture(scope="module")
def fleet():
    with Fleet(slow_seconds=8) as running:
        yield running


def _prober(fleet: Fleet, replay: str, **extra) -> dict:
    return {"registry_url": fleet.registry_url, "host_map_json": json.dumps(fleet.host_map),
            "ca_file": str(fleet.ca_file), "replay_day": replay,
            "opted_out_hosts": fleet.timeline["opted_out_hosts"], "readiness": False, **extra}


def test_a_missed_slice_leaves_exactly_its_endpoints_n(fleet, lake):
    missed = slot_hour("mcp.weather.test/mcp", DAY)
    in_missed = {k for k in EXPECTED if slot_hour(k, DAY) == missed}
    with dg.DagsterInstance.ephemeral() as instance:
        run = run_days("daily_map_job", DAY, DAY, instance, lake.root,
                       prober=_prober(fleet, DAY.isoformat(), replay_missed_hours=[missed]))
        # The UI shows the replayed day's slices done, each with its checks; the missed one stays missing.
        slices = instance.get_materialized_partitions(dg.AssetKey("probe_slice"))
        latest = instance.get_latest_materialization_event(dg.AssetKey("probe_slice"))
    assert run.success
    assert slices == {f"{DAY}-{h:02d}:00" for h in range(24) if h != missed}
    assert latest is not None and latest.asset_materialization.metadata["checks"].value >= 0
    codes = {r["server_key"]: r["code"] for r in pq.read_table(lake.curated_file("daily_status", DAY)).to_pylist()}
    assert codes == {k: ("n" if k in in_missed else code) for k, code in EXPECTED.items()}
    assert "mcp.weather.test/mcp" in in_missed and len(in_missed) < len(EXPECTED)
    # Every other daily check ran in its own slot's hour, once.
    daily = [r for path in lake.raw_files("probes", DAY) for r in pq.read_table(path).to_pylist()
             if r["check_kind"] == "daily"]
    assert len(daily) == len({r["server_key"] for r in daily})
    assert all(r["started_at"].hour == slot_hour(r["server_key"], DAY) != missed for r in daily)


def test_the_hourly_schedule_runs_the_slice_of_its_hour_and_only_within_it(fleet, lake):
    hour = slot_hour("mcp.notes.test/mcp", DAY)
    at = dt.datetime.combine(DAY, dt.time(hour, 0), dt.UTC)
    request = scan_slice_schedule(dg.build_schedule_context(scheduled_execution_time=at))
    assert request.partition_key == f"{DAY}-{hour:02d}:00"
    # The map of a day is built once the day has ended.
    built = daily_map_schedule(dg.build_schedule_context(scheduled_execution_time=at + dt.timedelta(days=1)))
    assert built.partition_key == DAY.isoformat()
    with dg.DagsterInstance.ephemeral() as instance:
        # The hour after: that slice's hour has passed, nothing is scanned or materialised, and the run fails
        # saying it was missed and why (never a green run that scanned nothing).
        late = run_partition("scan_slice_job", request.partition_key, instance, lake.root, raise_on_error=False,
                             prober=_prober(fleet, f"{DAY}T{(hour + 1) % 24:02d}"))
        assert not late.success and not late.get_asset_materialization_events()
        (failure,) = [e for e in late.all_events if e.is_step_failure]
        assert failure.step_key == "probe_slice.slice_shards"
        assert f"{request.partition_key}: the slice's hour is not now" in failure.step_failure_data.error.message
        assert "never scanned" in failure.step_failure_data.error.message
        assert not lake.raw_files("probes", DAY)
        run = run_partition("scan_slice_job", request.partition_key, instance, lake.root,
                            prober=_prober(fleet, f"{DAY}T{hour:02d}"))
        assert run.success
        # The slice, then the open day so far (its provisional tables: curated/open_day.py).
        event, open_day = run.get_asset_materialization_events()
        assert event.asset_key.to_user_string() == "probe_slice" and event.partition == request.partition_key
        assert open_day.asset_key.to_user_string() == "open_day" and open_day.partition == request.partition_key
        assert open_day.materialization.metadata["endpoints_checked"].value >= 1
        assert event.materialization.metadata["slice_method"].value == "moving-hour-1.0"
    keys = {r["server_key"] for path in lake.raw_files("probes", DAY) for r in pq.read_table(path).to_pylist()}
    assert {k for k in EXPECTED if slot_hour(k, DAY) == hour} <= keys and "mcp.notes.test/mcp" in keys
    assert all(slot_hour(k, DAY) == hour for k in keys)  # no endpoint of another slice was contacted


def test_a_slice_runs_only_within_its_hour(fleet, lake):
    with pytest.raises(SliceMissedError, match="never made up"):
        scan_slice(lake, DAY, 4, fleet.registry_url, config_for(fleet), ReplayClock(DAY, 5))
    assert not lake.raw_dir("probes", DAY).exists()
    # The whole-day scan (sevenmaps run's one-off) still checks every endpoint at once.
    report = scan_day(lake, DAY, fleet.registry_url, config_for(fleet), ReplayClock(DAY, 5))
    assert report.hours == () and report.probe_rows >= len(EXPECTED)


SHARDED_SLICE = """
import json, sys
from pathlib import Path
import dagster as dg
from sevenmaps_pipeline.defs.runner import run_slice_in_processes
key, home, lake, prober = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
with dg.DagsterInstance.local_temp(home) as instance:
    result = run_slice_in_processes(key, instance, Path(lake), prober)
    events = [e.get_dagster_event() for e in instance.all_logs(result.run_id) if e.is_dagster_event]
    (run_start,) = [e for e in events if e.event_type == dg.DagsterEventType.RUN_START]
    (materialised,) = [e for e in events if e.event_type == dg.DagsterEventType.ASSET_MATERIALIZATION
                       and e.asset_key.to_user_string() == "probe_slice"]
    print(json.dumps({"success": result.success, "run_pid": run_start.pid,
                      "steps": {e.step_key: e.pid for e in events if e.event_type == dg.DagsterEventType.STEP_START},
                      "metadata": {k: v.value for k, v in materialised.step_materialization_data.materialization
                                   .metadata.items() if k in ("checks", "shards", "run_id")}}))
"""


def test_a_sharded_slice_runs_its_shards_as_steps_in_processes_of_their_own(fleet, lake, tmp_path):
    # SEVENMAPS_SCAN_SHARDS=2: the slice job runs under the multiprocess executor, one step per shard by host
    # (docs/scaling.md, "Shards"), as a launched run does: each shard checks its own hosts' endpoints once.
    import os
    import subprocess
    import sys

    from sevenmaps_pipeline.probe.shards import Shard

    by_hour = defaultdict(list)
    for key in EXPECTED:
        by_hour[slot_hour(key, DAY)].append(key)
    hour, keys = max(by_hour.items(), key=lambda kv: (len({Shard(0, 2).holds("https://" + k) for k in kv[1]}),
                                                       len(kv[1])))
    assert {Shard(0, 2).holds("https://" + k) for k in keys} == {True, False}  # both shards have endpoints
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "SEVENMAPS_SCAN_SHARDS": "2", "SEVENMAPS_LAKE": str(lake.root), "DAGSTER_HOME": str(home)}
    proc = subprocess.run([sys.executable, "-c", SHARDED_SLICE, f"{DAY}-{hour:02d}:00", str(home), str(lake.root),
                           json.dumps(_prober(fleet, f"{DAY}T{hour:02d}", concurrency=8))],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    ran = json.loads(proc.stdout.strip().splitlines()[-1])
    assert ran["success"]
    shard_steps = {step: pid for step, pid in ran["steps"].items() if step.startswith("probe_slice.scan_shard")}
    assert sorted(shard_steps) == ["probe_slice.scan_shard[s1of2]", "probe_slice.scan_shard[s2of2]"]
    # A process per step: neither shard ran in the run's own process, nor both in one.
    assert len(set(shard_steps.values())) == 2 and ran["run_pid"] not in shard_steps.values()
    assert ran["metadata"]["shards"] == 2
    daily = [r for path in lake.raw_files("probes", DAY) for r in pq.read_table(path).to_pylist()
             if r["check_kind"] == "daily"]
    checked = [r["server_key"] for r in daily]
    assert len(checked) == len(set(checked)) and set(keys) <= set(checked)  # every endpoint of the slice, once
    assert all(slot_hour(k, DAY) == hour for k in checked)
    runs = {r["run_id"]: set() for r in daily}
    for r in daily:
        runs[r["run_id"]].add(Shard(0, 2).holds(r["url"]))
    assert sorted(run[-5:] for run in runs) == ["s1of2", "s2of2"] and all(len(v) == 1 for v in runs.values())
    assert ran["metadata"]["checks"] == len(checked)
