"""Retention (docs/operations.md, "Retention"): the frequent raw batches are aggregated, then deleted past
their window, only once the day's aggregate exists; signed files are never touched; every deletion is
logged with what it deleted. Through Dagster: the retention job."""

from __future__ import annotations

import datetime as dt
import json

import dagster as dg
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import probe

from sevenmaps_pipeline.defs.runner import defs
from sevenmaps_pipeline.lake.parquet_io import write_parquet
from sevenmaps_pipeline.lake.retention import aggregate_file, apply_retention, log_file
from sevenmaps_pipeline.lake.schemas import RAW_HOURLY, conform
from sevenmaps_pipeline.surfaces.oplog import OpLog, oplog_folder

TODAY = dt.date(2026, 11, 30)
NOW = dt.datetime.combine(TODAY, dt.time(1, 30), dt.UTC)


def _batch(lake, kind: str, day: dt.date, outcomes: list[str], name: str = "b1") -> None:
    rows = [probe(f"https://mcp{i % 2}.example.com/mcp", o, day=day, hour=i % 24, check_kind=kind)
            for i, o in enumerate(outcomes)]
    write_parquet(lake, lake.root / f"raw/{kind}/day={day}/{name}.parquet",
                  conform(pa.Table.from_pylist(rows, RAW_HOURLY.schema), RAW_HOURLY))


def test_old_batches_are_aggregated_then_deleted_and_each_deletion_is_logged(lake):
    old, recent = TODAY - dt.timedelta(days=31), TODAY - dt.timedelta(days=3)
    _batch(lake, "hourly", old, ["ok", "timeout", "ok", "skipped"])
    _batch(lake, "hourly", old, ["ok"], name="b2")
    _batch(lake, "hourly", recent, ["ok", "ok"])
    _batch(lake, "hourly", TODAY, ["ok"])  # the open day: never aggregated, never deleted
    _batch(lake, "five_minute", old, ["ok", "ok"])  # within its 90-day window
    report = apply_retention(lake, TODAY, NOW)
    assert sorted(report.aggregated) == [("five_minute", old), ("hourly", old), ("hourly", recent)]
    assert report.deleted == [("hourly", old, 2, report.deleted[0][3])] and report.deleted[0][3] > 0
    assert not (lake.root / f"raw/hourly/day={old}").exists()
    assert (lake.root / f"raw/hourly/day={recent}").is_dir() and (lake.root / f"raw/hourly/day={TODAY}").is_dir()
    assert (lake.root / f"raw/five_minute/day={old}").is_dir()
    rows = {r["server_key"]: r for r in pq.read_table(aggregate_file(lake, "hourly", old)).to_pylist()}
    counts = {k: (r["checks"], r["counted"], r["answered"], r["batches"]) for k, r in rows.items()}
    # mcp0: ok, ok (b1) and ok (b2); mcp1: a timeout and a skip, which is not counted
    assert counts == {"mcp0.example.com/mcp": (3, 3, 3, 2), "mcp1.example.com/mcp": (2, 1, 0, 1)}
    (entry,) = [json.loads(line) for line in log_file(lake).read_text().splitlines()]
    assert entry["kind"] == "hourly" and entry["day"] == old.isoformat()
    assert sorted(f["path"] for f in entry["files"]) == [f"raw/hourly/day={old}/b1.parquet",
                                                          f"raw/hourly/day={old}/b2.parquet"]
    assert all(len(f["sha256"]) == 64 and f["bytes"] > 0 for f in entry["files"])
    assert not apply_retention(lake, TODAY, NOW).deleted  # nothing left to do: nothing deleted twice


def test_a_torn_batch_stops_no_days_retention(lake, caplog):
    """helper-87: a torn hourly batch made the aggregate of its day, and so the whole retention run, fail every night
    (no aggregates, no deletions, the raw data growing). It is left out of the aggregate, named in a warning."""
    old = TODAY - dt.timedelta(days=31)
    _batch(lake, "hourly", old, ["ok", "timeout"])
    (lake.root / f"raw/hourly/day={old}/torn.parquet").write_bytes(b"PAR1 torn")
    report = apply_retention(lake, TODAY, NOW)
    assert report.aggregated == [("hourly", old)] and report.deleted[0][:3] == ("hourly", old, 2)
    assert "leaves out 1 unreadable batch(es)" in caplog.text and "torn.parquet" in caplog.text
    rows = pq.read_table(aggregate_file(lake, "hourly", old)).to_pylist()
    assert sum(r["checks"] for r in rows) == 2


def test_a_day_without_an_aggregate_or_named_by_a_root_is_kept(lake):
    old = TODAY - dt.timedelta(days=40)
    folder = lake.root / f"raw/hourly/day={old}"
    folder.mkdir(parents=True)
    (folder / "broken.txt").write_text("not parquet")  # nothing readable to aggregate
    report = apply_retention(lake, TODAY, NOW)
    assert report.kept_without_aggregate == [("hourly", old, "no readable batch to aggregate")] and folder.is_dir()
    # A file a signed root names is never deleted, whatever its folder.
    other = TODAY - dt.timedelta(days=45)
    _batch(lake, "hourly", other, ["ok"])
    lake.roots_dir.mkdir(parents=True)
    (lake.roots_dir / f"day={other}.json").write_text(json.dumps(
        {"lines": [f"{'0' * 64}  raw/hourly/day={other}/b1.parquet"]}))
    report = apply_retention(lake, TODAY, NOW)
    assert ("hourly", other, "a file is named by a signed root") in report.kept_without_aggregate
    assert (lake.root / f"raw/hourly/day={other}/b1.parquet").is_file()
    with pytest.raises(ValueError, match="covered by the signed roots"):
        apply_retention(lake, TODAY, NOW, windows={"probes": 1})


def test_the_retention_job_runs_through_dagster(lake):
    old = TODAY - dt.timedelta(days=35)
    _batch(lake, "hourly", old, ["ok"])
    # The map's MCP server's operational log is short: 30 days (surfaces/oplog.py).
    oplog = OpLog.at(oplog_folder(lake))
    for day in (old, TODAY - dt.timedelta(days=30), TODAY - dt.timedelta(days=1)):
        oplog.record("route", "client", oplog.agent_code("198.51.100.7", "client"), "ok",
                     dt.datetime.combine(day, dt.time(12), dt.UTC))
    with dg.DagsterInstance.ephemeral() as instance:
        result = defs.resolve_job_def("retention_job").execute_in_process(
            instance=instance, run_config={"resources": {"lake": {"config": {"root": str(lake.root)}},
                                                         "prober": {"config": {"replay_day": f"{TODAY}T01"}}}})
    assert result.success
    assert not (lake.root / f"raw/hourly/day={old}").exists() and aggregate_file(lake, "hourly", old).is_file()
    kept = sorted(p.name for p in oplog_folder(lake).glob("day=*.jsonl"))
    assert kept == [f"day={TODAY - dt.timedelta(days=30)}.jsonl", f"day={TODAY - dt.timedelta(days=1)}.jsonl"]
    assert "198.51.100.7" not in "".join(p.read_text() for p in oplog_folder(lake).glob("day=*.jsonl"))
