"""A refused raw file's reason survives a build that dies before its table is written
(curated/refusal_journal.py): the next build of the day records it, and a journal that cannot be written
keeps the file where it was."""

from __future__ import annotations

import shutil

import dagster as dg
import pyarrow.parquet as pq
import pytest
from conftest import DAY, land_probes, land_registry, land_reports, land_status, probe, report

from sevenmaps_pipeline import curated
from sevenmaps_pipeline.curated.common import quarantine_unreadable_files
from sevenmaps_pipeline.curated.day import stale_reason
from sevenmaps_pipeline.curated.refusal_journal import journal_file
from sevenmaps_pipeline.curated.report_batches import refuse_report_files
from sevenmaps_pipeline.defs.runner import run_days
from sevenmaps_pipeline.lake.paths import LakePaths


def _torn_probe_file(lake):
    folder = lake.raw_dir("probes", DAY)
    folder.mkdir(parents=True, exist_ok=True)
    torn = folder / "run-9-0.parquet"
    torn.write_bytes(b"PAR1 torn by a crash")
    return torn


def test_a_probe_file_moved_by_a_build_that_died_is_refused_by_the_next(lake):
    torn = _torn_probe_file(lake)
    quarantine_unreadable_files(lake, DAY)  # the file left the raw area; the build died before its table
    assert not torn.exists()
    curated.build_quarantine(lake, DAY)
    rows = pq.read_table(lake.curated_file("quarantine", DAY)).to_pylist()
    [row] = [r for r in rows if r["source_file"] == f"raw/probes/day={DAY}/run-9-0.parquet"]
    assert row["problem"].startswith("unreadable Parquet") and "moved to quarantine/raw/probes" in row["problem"]
    curated.build_quarantine(lake, DAY)  # built again: the same rows, once each
    assert pq.read_table(lake.curated_file("quarantine", DAY)).to_pylist() == rows


def test_a_report_batch_deleted_by_a_build_that_died_is_refused_by_the_next(lake):
    land_status(lake, DAY, {"up.example.com/mcp": "o"})
    land_reports(lake, [report("up.example.com/mcp")], batch="fine")
    garbage = lake.raw_dir("agent_reports", DAY) / "garbage.parquet"
    garbage.write_bytes(b"PAR1 this is not parquet")
    refuse_report_files(lake, DAY)  # deleted; the build died before its table
    assert not garbage.exists()
    curated.build_agent_reports(lake, DAY)
    refused = pq.read_table(lake.curated_file("agent_report_quarantine", DAY)).to_pylist()
    [row] = [r for r in refused if r["source_file"] == f"raw/agent_reports/day={DAY}/garbage.parquet"]
    assert row["problem"].startswith("unreadable Parquet") and "was deleted" in row["problem"]


def test_a_refusal_that_cannot_be_written_down_leaves_its_file_in_place(lake):
    torn = _torn_probe_file(lake)
    journal_file(lake, "quarantine", DAY).mkdir(parents=True)  # no file can be appended there
    with pytest.raises(OSError):
        quarantine_unreadable_files(lake, DAY)
    assert torn.exists()


def test_a_line_torn_by_a_crash_never_swallows_the_next_refusal(lake):
    torn = _torn_probe_file(lake)
    journal = journal_file(lake, "quarantine", DAY)
    journal.parent.mkdir(parents=True)
    journal.write_text('{"day": "2026-11-10", "problem": "unreadable Par')  # a build killed mid-append
    quarantine_unreadable_files(lake, DAY)  # the next build refuses the file again, moves it, and dies too
    assert not torn.exists()
    curated.build_quarantine(lake, DAY)
    assert f"raw/probes/day={DAY}/run-9-0.parquet" in _sources(lake)


def test_a_build_that_died_midway_and_the_next_write_what_one_that_never_died_writes(lake, tmp_path):
    """helper-90: rows refused after the crash came first, those journaled before it last."""
    first, second = _torn_probe_file(lake), lake.raw_dir("probes", DAY) / "run-9-1.parquet"
    second.write_bytes(b"PAR1 torn too")
    clean = LakePaths.at(tmp_path / "clean")
    shutil.copytree(lake.root, clean.root)
    held = tmp_path / "held"
    shutil.move(second, held)  # the dying build refuses the first file only
    quarantine_unreadable_files(lake, DAY)
    shutil.move(held, second)
    curated.build_quarantine(lake, DAY)
    curated.build_quarantine(clean, DAY)
    assert _sources(lake) == _sources(clean) == [f"raw/probes/day={DAY}/{p.name}" for p in (first, second)]


def test_a_day_whose_rebuild_died_after_a_refusal_is_stale_until_built_again(lake, signing_key):
    """helper-90: the day looked fresh (its file had left the raw area), so it was signed without the refusal."""
    url = "https://mcp.weather.example.com/mcp"
    land_registry(lake, [url], day=DAY)
    land_probes(lake, [probe(url, "ok", day=DAY)], day=DAY, run_id="run-1")
    with dg.DagsterInstance.ephemeral() as instance:
        assert run_days("daily_map_job", DAY, DAY, instance, lake.root, signing_key).success
        _torn_probe_file(lake)  # lands after the build
        quarantine_unreadable_files(lake, DAY)  # the rebuild refuses it and is killed
        assert "refused after quarantine" in (stale_reason(lake, DAY) or "")
        assert not run_days("sign_day_job", DAY, DAY, instance, lake.root, signing_key,
                            raise_on_error=False).success  # a stale day is never signed
        assert run_days("daily_map_job", DAY, DAY, instance, lake.root, signing_key).success
        assert stale_reason(lake, DAY) is None
        assert run_days("sign_day_job", DAY, DAY, instance, lake.root, signing_key).success
    assert f"raw/probes/day={DAY}/run-9-0.parquet" in _sources(lake)


def _sources(lake) -> list[str]:
    return [r["source_file"] for r in pq.read_table(lake.curated_file("quarantine", DAY)).to_pylist()
            if r["row_number"] is None]
