"""A day's builds two at a time (curated/day.py build_day, what the map's one Dagster step runs): the same
files as one after another, and a failure or a held check keeps exactly what reads it unbuilt."""

from __future__ import annotations

import datetime as dt
import hashlib
import warnings
from pathlib import Path

import dagster as dg
import pyarrow as pa
import pyarrow.parquet as pq
from conftest import DAY

from sevenmaps_pipeline.curated.day import DAY_GRAPH, MAP_ASSET_NAMES, build_day
from sevenmaps_pipeline.devtools.synth import synthesize
from sevenmaps_pipeline.lake.paths import LakePaths

# What reads tool_facts, directly or through another day asset (DAY_GRAPH), written out by hand.
READS_TOOL_FACTS = {"tools", "token_cost", "findings", "server_categories", "tool_changes", "server_history",
                    "reliable_rankings"}
# What reads daily_status, directly or not: everything but the scan's own tables and readiness.
NOT_READING_STATUS = {"raw_probes", "readiness_discovery", "readiness_lines", "readiness_scores",
                      "package_advisories"}


def _curated_digests(lake: LakePaths) -> dict[str, str]:
    return {p.relative_to(lake.root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted((lake.root / "curated").rglob("*.parquet"))}


def _synth(root: Path, days: int = 3) -> tuple[LakePaths, list[dt.date]]:
    lake = LakePaths.at(root)
    return lake, synthesize(lake, 60, days, seed=11, end_day=DAY, missing_days=0).days


def test_two_at_a_time_writes_the_same_files_as_one_after_another(tmp_path):
    one, days = _synth(tmp_path / "one")
    two, _ = _synth(tmp_path / "two")
    for day in days:
        for _, build, _, _ in DAY_GRAPH:
            build(one, day)
        report = build_day(two, day, workers=2)
        assert report.ok and list(report.built) == list(MAP_ASSET_NAMES)
    assert _curated_digests(one) == _curated_digests(two)
    assert len(_curated_digests(one)) >= len(days) * 20


def _block(lake: LakePaths, table: str, day: dt.date) -> None:
    """A file where the table's day folder goes: its build fails writing (whoever runs the tests)."""
    folder = lake.curated_file(table, day).parent
    folder.parent.mkdir(parents=True, exist_ok=True)
    folder.write_text("not a folder")


def test_a_failed_build_leaves_only_what_reads_it_unbuilt(tmp_path):
    lake, days = _synth(tmp_path / "lake", days=1)
    _block(lake, "tool_lists", days[0])  # tool_facts writes tool_lists first
    report = build_day(lake, days[0])
    assert list(report.failed) == ["tool_facts"]
    assert set(report.not_built) == READS_TOOL_FACTS
    assert set(report.built) == set(MAP_ASSET_NAMES) - READS_TOOL_FACTS - {"tool_facts"}
    assert not report.ok
    for asset in READS_TOOL_FACTS:
        assert not lake.curated_file(asset, days[0]).exists(), asset


def test_a_held_build_keeps_its_readers_back(tmp_path):
    lake, days = _synth(tmp_path / "lake", days=1)
    seen = []

    def after(asset, result):
        seen.append(asset)
        return "its check failed" if asset == "daily_status" else None

    report = build_day(lake, days[0], after=after)
    assert report.held == {"daily_status": "its check failed"}
    assert set(report.built) == NOT_READING_STATUS | {"daily_status"}
    assert set(report.not_built) == set(MAP_ASSET_NAMES) - NOT_READING_STATUS - {"daily_status"}
    assert sorted(seen) == sorted(report.built)


def test_a_selection_builds_only_itself_and_reads_the_rest(tmp_path):
    lake, days = _synth(tmp_path / "lake", days=1)
    assert build_day(lake, days[0]).ok
    before = _curated_digests(lake)
    history = lake.curated_file("server_history", days[0])
    history.unlink()
    report = build_day(lake, days[0], ["server_history"])
    assert list(report.built) == ["server_history"] and report.ok
    assert _curated_digests(lake) == before


def test_the_map_step_fails_naming_the_asset_and_records_what_it_built(tmp_path, signing_key):
    from sevenmaps_pipeline.defs.runner import run_days

    lake, days = _synth(tmp_path / "lake", days=1)
    _block(lake, "tool_lists", days[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with dg.DagsterInstance.ephemeral() as instance:
            run = run_days("daily_map_job", days[0], days[0], instance, lake.root, signing_key, raise_on_error=False)
            assert not run.success
            (message,) = [e.event_specific_data.error.message for e in run.all_events if e.is_step_failure]
            assert f"{days[0]}: tool_facts failed" in message and "tools was not built (tool_facts" in message
            built = {e.asset_key.to_user_string() for e in run.get_asset_materialization_events()}
            assert built == set(MAP_ASSET_NAMES) - READS_TOOL_FACTS - {"tool_facts"}
            checks = {c.check_name: c.passed for c in run.get_asset_check_evaluations()}
            # server_history and reliable_rankings were not built, so neither was checked.
            assert checks == {"daily_status_codes_valid": True, "incidents_only_confirmed_are_shown": True,
                              "readiness_unseen_lines_not_counted": True}


def test_what_more_builds_wait_for_goes_first(tmp_path):
    """One at a time, the order shows the choice among ready builds: tool_changes (server_history and the
    rankings wait for it) before tools (nothing does), daily_status's readers before the readiness tables."""
    lake, days = _synth(tmp_path / "lake", days=1)
    order: list[str] = []
    report = build_day(lake, days[0], workers=1, after=lambda asset, result: order.append(asset))
    assert report.ok and sorted(order) == sorted(MAP_ASSET_NAMES)
    assert order[:4] == ["raw_probes", "daily_status", "tool_facts", "tool_changes"]
    assert order.index("server_history") < order.index("tools")
    assert order.index("reliable_rankings") > order.index("server_categories")


def test_a_signed_day_that_would_change_stops_the_map_step_naming_it(tmp_path, signing_key):
    from sevenmaps_pipeline.defs.runner import run_days, run_map_and_sign

    lake, days = _synth(tmp_path / "lake", days=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with dg.DagsterInstance.ephemeral() as instance:
            assert all(r.success for r in run_map_and_sign(days[0], days[0], instance, lake.root, signing_key))
            signed = lake.curated_file("daily_status", days[0]).read_bytes()
            # A check put into the signed day's raw folder by another writer (write_parquet itself refuses a
            # signed day): recomputing the day would change its daily_status.
            first = lake.raw_files("probes", days[0])[0]
            late = pq.read_table(first).slice(0, 1)
            rows = late.to_pylist()
            rows[0]["outcome"] = "timeout" if rows[0]["outcome"] == "ok" else "ok"
            rows[0]["started_at"] = rows[0]["started_at"] + dt.timedelta(minutes=1)
            pq.write_table(pa.Table.from_pylist(rows, late.schema), first.parent / "part-late.parquet")
            run = run_days("daily_map_job", days[0], days[0], instance, lake.root, signing_key,
                           raise_on_error=False)
            assert not run.success
            (message,) = [e.event_specific_data.error.message for e in run.all_events if e.is_step_failure]
            assert f"day {days[0]} is signed" in message and "signed history is never rewritten" in message
            assert lake.curated_file("daily_status", days[0]).read_bytes() == signed


def test_a_copy_of_a_day_folder_beside_it_stops_no_build_nor_the_freshness_check(tmp_path):
    """helper-83: `curated/<table>/day=D.bak` (a backup kept beside the day) made every later day's tool_facts and
    the builds after it fail, and the freshness check (so signing and `sevenmaps status`) raise on the name: a
    stray folder is no day of the table (integrity/stray.py names it)."""
    import shutil

    from sevenmaps_pipeline.curated.day import stale_reason

    lake, days = _synth(tmp_path / "lake", days=2)
    assert build_day(lake, days[0]).ok
    for table in ("tool_facts", "tool_lists", "daily_status"):
        folder = lake.curated_file(table, days[0]).parent
        shutil.copytree(folder, folder.parent / f"{folder.name}.bak")
    report = build_day(lake, days[1])
    assert report.ok and list(report.built) == list(MAP_ASSET_NAMES), report.failed
    assert stale_reason(lake, days[1]) is None


def test_a_frequent_check_landing_after_the_build_never_makes_the_day_stale(tmp_path):
    """helper-86: the day's build checks the day's hourly, five-minute and submitted batches (a torn one stopped the
    warehouse and the retention), but an hourly run of 23:30 may land after the 00:10 map build: that must not stop
    the day's signing. A probe batch landing late still does."""
    import os
    import time

    from sevenmaps_pipeline.curated.day import stale_reason

    lake, days = _synth(tmp_path / "lake", days=1)
    assert build_day(lake, days[0]).ok
    later = time.time() + 60
    for kind in ("hourly", "five_minute", "submitted"):
        late = lake.raw_dir(kind, days[0]) / "late-run.parquet"
        late.parent.mkdir(parents=True, exist_ok=True)
        late.write_bytes(b"PAR1 late")
        os.utime(late, (later, later))
    assert stale_reason(lake, days[0]) is None
    probes = lake.raw_dir("probes", days[0]) / "late-run.parquet"
    probes.write_bytes(b"PAR1 late")
    os.utime(probes, (later, later))
    assert stale_reason(lake, days[0]) == f"raw/probes/day={days[0]}/late-run.parquet changed after quarantine of " \
        f"{days[0]} was built"
