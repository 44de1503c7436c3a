"""End to end through a real Dagster instance: partitions, a range backfill, the CLI backfill, schedules."""

from __future__ import annotations

import datetime as dt

import dagster as dg
import duckdb
import pyarrow.parquet as pq
import pytest
from conftest import land_probes, probe
from dagster._core.asset_graph_view.asset_graph_view import AssetGraphView, TemporalContext
from dagster._core.definitions.data_version import CachingStaleStatusResolver, StaleStatus
from dagster._time import get_current_datetime

from sevenmaps_pipeline.definitions import defs
from sevenmaps_pipeline.defs.jobs import MAP_ASSET_NAMES, daily_map_schedule, sign_schedule
from sevenmaps_pipeline.defs.partitions import finished_days
from sevenmaps_pipeline.defs.runner import run_days, run_map_and_sign
from sevenmaps_pipeline.devtools.synth import synthesize
from sevenmaps_pipeline.integrity import keys
from sevenmaps_pipeline.integrity.export_check import verify_export
from sevenmaps_pipeline.integrity.report import Trust
from sevenmaps_pipeline.integrity.verify import verify_lake

END = dt.date(2026, 11, 20)


@pytest.fixture
def instance():
    # Dagster's in-memory storage: the same SQL event log, on an in-memory SQLite; a lake's own home on disk is
    # what test_dagster_homes.py, test_lanes.py and test_ui_backfill.py open (docs/development.md, "The suite's
    # time").
    with dg.DagsterInstance.ephemeral() as inst:
        yield inst


def failures(result) -> list[str]:
    return [e.event_specific_data.error.message for e in result.all_events if e.is_step_failure]


def unsynced(instance: dg.DagsterInstance, days: list[dt.date]) -> dict[str, list[str]]:
    """The days' partitions of the daily assets (the map's and signing's) that Dagster's UI would mark "Unsynced"
    (stale), each with its first causes, as the UI's own resolver finds them."""
    graph = defs.resolve_asset_graph()
    view = AssetGraphView(temporal_context=TemporalContext(effective_dt=get_current_datetime(), last_event_id=None),
                          instance=instance, asset_graph=graph)
    resolver = CachingStaleStatusResolver(instance=instance, asset_graph=graph, loading_context=view)
    found = {}
    for key in graph.materializable_asset_keys:
        if graph.get(key).partitions_def != finished_days:
            continue
        for day in days:
            if resolver.get_status(key, day.isoformat()) == StaleStatus.STALE:
                causes = resolver.get_stale_causes(key, day.isoformat())
                found[f"{key.to_user_string()} {day}"] = [f"{c.reason} {c.dependency}" for c in causes[:2]]
    return found


def test_range_backfill_with_a_missed_day_gives_n_never_d(lake, signing_key, instance):
    # 60 endpoints over 6 days (not 120 over 8): two days missed, and incidents live on the last day
    synth = synthesize(lake, 60, 6, seed=5, end_day=END, missing_days=2)
    assert len(synth.missing_days) == 2
    runs = run_map_and_sign(synth.days[0], synth.days[-1], instance, lake.root, signing_key)
    assert [r.success for r in runs] == [True, True]
    checks = [c for r in runs for c in r.get_asset_check_evaluations()]
    assert {c.check_name for c in checks} == {"daily_status_codes_valid", "server_history_windows_valid",
                                              "incidents_only_confirmed_are_shown", "reliable_rankings_eligible",
                                              "readiness_unseen_lines_not_counted", "daily_root_chain_intact",
                                              "day_snapshot_verifies"}
    assert all(c.passed for c in checks)
    # Every day's own materialisation is logged after the range's results, so Dagster records the provenance of
    # what a step builds from what it built before without a "Data version mismatch" warning for each asset.
    warnings = [e.user_message for r in runs for e in instance.all_logs(r.run_id) if e.level >= 30]
    assert not [w for w in warnings if "Data version mismatch" in w], warnings
    keys = [d.isoformat() for d in synth.days]
    # The demo's summary counts the incidents live on the last day, not incident-day rows over the lake.
    from sevenmaps_pipeline.devtools.demo import summary

    line = next(x for x in summary(lake).splitlines() if x.startswith("Incidents live on"))
    with duckdb.connect(str(lake.warehouse), read_only=True) as con:
        live = con.execute("SELECT list(server_key ORDER BY server_key) FROM incidents WHERE status = 'live' "
                           "AND day = (SELECT max(day) FROM daily_status)").fetchone()[0] or []
    assert live and line.startswith(f"Incidents live on {synth.days[-1]}: {', '.join(live) or 'none'}.")
    for asset in ("raw_probes", "daily_status", "server_history", "daily_root", "day_snapshot"):
        assert sorted(instance.get_materialized_partitions(dg.AssetKey(asset))) == keys
    # Nothing the backfill built is "Unsynced" in the UI: each day's own materialisation carries the range
    # result's data version and provenance (defs/per_day.py), as a run of that day alone would. Asked of the
    # range's first day, a day it missed and its last, which the same code logs as every other: Dagster's resolver
    # reads every day of every window of each asset, 10 s of CPU for all six (docs/development.md, "The suite's
    # time").
    assert unsynced(instance, [synth.days[0], synth.missing_days[0], synth.days[-1]]) == {}
    # ... and a day rebuilt under them still makes what read it Unsynced, as it would without a backfill.
    rebuilt = synth.days[-2]
    again = defs.resolve_job_def("daily_map_job").execute_in_process(
        instance=instance, tags={"dagster/partition": rebuilt.isoformat()}, asset_selection=[dg.AssetKey("raw_probes")],
        run_config={"resources": {"lake": {"config": {"root": str(lake.root), "signing_key": str(signing_key)}}}})
    assert again.success
    stale = unsynced(instance, [synth.days[0], rebuilt, synth.days[-1]])
    assert {f"daily_status {rebuilt}", f"daily_status {synth.days[-1]}"} <= stale.keys(), stale
    assert not [k for k in stale if k.endswith(str(synth.days[0]))], stale

    for missed in synth.missing_days:
        codes = pq.read_table(lake.curated_file("daily_status", missed), columns=["code"]).column("code").to_pylist()
        assert codes and set(codes) == {"n"}
    con = duckdb.connect(str(lake.warehouse), read_only=True)
    histories = [h for (h,) in con.execute("SELECT history FROM server_history WHERE day = $d",
                                           {"d": synth.days[-1]}).fetchall()]
    con.close()
    offset = 30 - len(synth.days)
    for m in synth.missing_days:
        pos = offset + (m - synth.days[0]).days
        assert {h[pos] for h in histories} == {"n"}, f"{m} must be n for every endpoint"
    assert verify_lake(lake).ok


def test_open_day_builds_but_is_not_signed(lake, signing_key, instance):
    today = dt.datetime.now(dt.UTC).date()
    land_probes(lake, [probe("https://a.example.com/mcp", "ok", day=today, hour=0)], day=today)
    # No scan is configured here, so building the open day must be asked for explicitly (no_scan).
    result = run_days("daily_map_job", today, today, instance, lake.root, signing_key, prober={"no_scan": True})
    assert result.success
    assert lake.curated_file("daily_status", today).exists()
    result = run_days("sign_day_job", today, today, instance, lake.root, signing_key, raise_on_error=False)
    assert not result.success
    assert any(f"day {today} has not ended" in msg for msg in failures(result))
    assert not lake.root_file(today).exists()


def test_a_range_through_the_open_day_before_its_scan_records_only_the_days_it_built(lake, instance):
    """A run tagged through the open day (by hand: `sevenmaps backfill` maps the open day in a run of its own),
    the registry set, no slice landed yet: the days before it are built, each recorded as built and checked; the
    open day is not built, and nothing of it is recorded (it is no partition of the map yet: defs/partitions.py),
    raw_probes' validation of nothing included."""
    today = dt.datetime.now(dt.UTC).date()
    yesterday = today - dt.timedelta(days=1)
    url = "https://a.example.com/mcp"
    land_probes(lake, [probe(url, "ok", day=yesterday)], day=yesterday)
    # A past day is never probed and the open day's slices are its scan: nothing contacts the registry.
    run = run_days("daily_map_job", yesterday, today, instance, lake.root, prober={"registry_url": "http://127.0.0.1:9"})
    assert run.success
    recorded = {name: instance.get_materialized_partitions(dg.AssetKey(name)) for name in MAP_ASSET_NAMES}
    assert recorded == dict.fromkeys(MAP_ASSET_NAMES, {yesterday.isoformat()})
    checks = [e.event_specific_data for e in run.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"]
    assert checks and all(check.passed for check in checks)
    assert pq.read_table(lake.curated_file("daily_status", yesterday)).column("code").to_pylist() == ["o"]
    assert not lake.curated_file("daily_status", today).exists()


def test_signing_a_day_catches_up_earlier_days_in_chain_order(lake, signing_key, instance):
    synth = synthesize(lake, 40, 3, seed=2, end_day=END, missing_days=0)
    assert run_days("daily_map_job", synth.days[0], synth.days[-1], instance, lake.root, signing_key).success
    result = run_days("sign_day_job", synth.days[-1], synth.days[-1], instance, lake.root, signing_key)
    assert result.success
    signed = sorted(instance.get_materialized_partitions(dg.AssetKey("daily_root")))
    assert signed == [d.isoformat() for d in synth.days]
    assert [d.isoformat() for d in verify_lake(lake).days_verified] == [d.isoformat() for d in synth.days]
    # The sign job also writes the signed day's researchers' snapshot, which verifies on its own, and the
    # snapshots of the days it caught up, recorded under their own partitions: no signed day lacks one.
    snapshot = lake.root / "exports" / synth.days[-1].isoformat()
    assert verify_export(snapshot, Trust(keys.read_published_key(lake))).ok
    assert sorted(instance.get_materialized_partitions(dg.AssetKey("day_snapshot"))) == signed
    # Only the newest day's site is built (docs/scaling.md); the earlier days' are recorded as superseded by it,
    # so the sign job shows every signed day done, none missing.
    assert sorted(instance.get_materialized_partitions(dg.AssetKey("day_site"))) == signed
    (superseded,) = instance.fetch_materializations(dg.AssetRecordsFilter(
        asset_key=dg.AssetKey("day_site"), asset_partitions=[signed[0]]), limit=1).records
    assert superseded.asset_materialization.metadata["built"].value is False
    assert not (lake.root / "site" / "days" / signed[0]).exists()
    assert all(verify_export(lake.root / "exports" / d.isoformat(), Trust(keys.read_published_key(lake))).ok
               for d in synth.days)
    root_before = lake.root_file(synth.days[-1]).read_bytes()
    again = run_days("sign_day_job", synth.days[-1], synth.days[-1], instance, lake.root, signing_key)
    assert again.success  # asked again, a signed day is checked against its root, never signed twice
    assert lake.root_file(synth.days[-1]).read_bytes() == root_before
    (materialization,) = again.asset_materializations_for_node("daily_root")
    assert materialization.metadata["already_signed_days"].value == [synth.days[-1].isoformat()]
    # A snapshot changed after it was written: asked again it is left as it is, and its check fails naming it.
    exported = snapshot / "curated" / "daily_status" / f"day={synth.days[-1]}" / "part-0.parquet"
    kept = exported.read_bytes()
    exported.unlink()  # a hard link to the signed file: replace it, as a writer of the snapshot would
    exported.write_bytes(kept + b"x")
    rerun = run_days("sign_day_job", synth.days[-1], synth.days[-1], instance, lake.root, signing_key,
                     raise_on_error=False)
    (check,) = [c for c in rerun.get_asset_check_evaluations() if c.check_name == "day_snapshot_verifies"]
    assert not check.passed and check.metadata["problems"].value == 1
    assert synth.days[-1].isoformat() in check.metadata["detail"].data
    assert lake.curated_file("daily_status", synth.days[-1]).read_bytes() == kept  # the lake is untouched
    exported.write_bytes(kept)
    path = lake.curated_file("server_history", synth.days[-1])
    path.write_bytes(path.read_bytes() + b"tampered")
    tampered = run_days("sign_day_job", synth.days[-1], synth.days[-1], instance, lake.root, signing_key,
                        raise_on_error=False)
    assert not tampered.success
    assert any("is signed but does not verify" in msg and "file changed: curated/server_history" in msg
               for msg in failures(tampered))


def test_rematerialising_a_signed_day_changes_nothing_or_fails_naming_it(lake, signing_key, instance):
    """A backfill over frozen days (Dagster includes downstream days of a backfilled day) passes when the
    days come out the same, leaving their files untouched, and fails loudly when they would not."""
    synth = synthesize(lake, 30, 2, seed=3, end_day=END, missing_days=0)
    assert all(r.success for r in run_map_and_sign(synth.days[0], synth.days[-1], instance, lake.root, signing_key))
    files = {p: p.read_bytes() for d in synth.days for p in lake.root.glob(f"curated/*/day={d}/*.parquet")}
    result = run_days("daily_map_job", synth.days[0], synth.days[-1], instance, lake.root, signing_key)
    assert result.success
    assert {p: p.read_bytes() for p in files} == files
    assert verify_lake(lake).ok
    # The same days computed from a changed input: the first frozen day that would change stops the run.
    registry = lake.registry_file(synth.days[0])
    rows = pq.read_table(registry).slice(0, 10)
    import pyarrow as pa  # noqa: PLC0415

    (lake.root / "elsewhere").mkdir()
    pq.write_table(pa.table(rows), lake.root / "elsewhere" / "servers.parquet")
    (lake.root / "elsewhere" / "servers.parquet").replace(registry)  # a tampered input, as an attacker would
    result = run_days("daily_map_job", synth.days[0], synth.days[0], instance, lake.root, signing_key,
                      raise_on_error=False)
    assert not result.success
    assert any(f"day {synth.days[0]} is signed" in m for m in failures(result))
    assert {p: p.read_bytes() for p in files if "curated/daily_status" in str(p)} == \
        {p: b for p, b in files.items() if "curated/daily_status" in str(p)}


def test_the_readmes_backfill_through_yesterday_never_targets_the_open_day(instance):
    """The README's backfill (every asset but the hourly group, days from the first missing one through
    yesterday) as Dagster's daemon computes its target: it carries the map's windowed tables on to every later
    day their windows reach, and the last of those is yesterday, since the map's partitions are finished days
    (defs/partitions.py); so every asset has the days picked, and one run builds and signs them. When the
    windows reached the open day, the unbuilt open day was recorded as built, or failed the whole backfill
    (docs/operations.md, "Backfilling missed days")."""
    from dagster._core.execution.asset_backfill import AssetBackfillData

    graph = defs.resolve_asset_graph()
    selected = dg.AssetSelection.from_string("not group:hourly").resolve(graph)
    yesterday = dt.datetime.now(dt.UTC).date() - dt.timedelta(days=1)
    days = [(yesterday - dt.timedelta(days=i)).isoformat() for i in range(6, -1, -1)]
    target = AssetBackfillData.from_asset_partitions(
        asset_graph=graph, partition_names=days, asset_selection=list(selected), dynamic_partitions_store=instance,
        backfill_start_timestamp=get_current_datetime().timestamp(), all_partitions=False).target_subset
    targeted = {key.to_user_string(): sorted(subset.get_partition_keys())
                for key, subset in target.partitions_subsets_by_asset_key.items()}
    assert targeted == dict.fromkeys([*MAP_ASSET_NAMES, "daily_root", "day_snapshot", "day_site"], days)


def test_the_schedules_ask_for_the_day_that_ended_to_be_mapped_and_signed():
    at = dt.datetime(2026, 11, 30, 0, 30, tzinfo=dt.UTC)
    req = sign_schedule(dg.build_schedule_context(scheduled_execution_time=at))
    assert (req.partition_key, req.run_key) == ("2026-11-29", "sign-2026-11-29")
    # The map of the day that ended is built at 00:10, once its last hourly slice (23:00) has run.
    at = dt.datetime(2026, 12, 1, 0, 10, tzinfo=dt.UTC)
    req = daily_map_schedule(dg.build_schedule_context(scheduled_execution_time=at))
    assert (req.partition_key, req.run_key) == ("2026-11-30", "map-2026-11-30")


def test_every_cadence_schedule_asks_for_its_own_run():
    from sevenmaps_pipeline.defs.frequent_assets import (
        hourly_check_schedule,
        retention_schedule,
        submission_schedule,
    )
    from sevenmaps_pipeline.defs.jobs import scan_slice_schedule
    from sevenmaps_pipeline.defs.lookup_assets import lookups_schedule
    from sevenmaps_pipeline.defs.partitions import FIRST_DAY

    def at(when: dt.datetime):
        return dg.build_schedule_context(scheduled_execution_time=when)

    t = dt.datetime(2026, 11, 30, 13, 0, tzinfo=dt.UTC)
    assert (scan_slice_schedule(at(t)).partition_key, scan_slice_schedule(at(t)).run_key) == \
        ("2026-11-30-13:00", "slice-2026-11-30-13:00")
    assert hourly_check_schedule(at(t.replace(minute=30))).partition_key == "2026-11-30-13:00"
    assert submission_schedule(at(t.replace(hour=12, minute=15))).run_key == "submissions-2026-11-30T12"
    assert retention_schedule(at(t.replace(hour=1, minute=30))).run_key == "retention-2026-11-30"
    assert lookups_schedule(at(t.replace(hour=12))).run_key == "lookups-2026-11-30"
    before = dt.datetime.combine(FIRST_DAY - dt.timedelta(days=1), dt.time(5), dt.UTC)
    assert isinstance(scan_slice_schedule(at(before)), dg.SkipReason)


def test_definitions_load_with_descriptions():
    from sevenmaps_pipeline.definitions import defs

    repo = defs.get_repository_def()
    # The map's asset list is written once (curated/day.py): every day asset is in it, in graph order.
    day_assets = {n.key.to_user_string() for n in repo.asset_graph.asset_nodes
                  if isinstance(n.partitions_def, dg.DailyPartitionsDefinition)
                  and n.key.to_user_string() not in ("daily_root", "day_snapshot", "day_site")}
    assert day_assets == set(MAP_ASSET_NAMES)
    for name in MAP_ASSET_NAMES:
        for parent in repo.asset_graph.get(dg.AssetKey(name)).parent_keys:
            if parent.to_user_string() == "probe_slice":  # the hourly scan upstream of the day's map
                assert name == "raw_probes"
                continue
            assert MAP_ASSET_NAMES.index(parent.to_user_string()) < MAP_ASSET_NAMES.index(name), (parent, name)
    for node in repo.asset_graph.asset_nodes:
        assert node.description, node.key
    for job in repo.get_all_jobs():
        if not job.name.startswith("__"):
            assert job.description, job.name
    for schedule in repo.schedule_defs:
        assert schedule.description, schedule.name
