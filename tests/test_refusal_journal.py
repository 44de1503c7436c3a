"""A refused raw file's reason survives a build that dies before its table is written
(curated/refusal_journal.py): the next build of the day records it, and a journal that cannot be written
keeps the file where it was."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
from conftest import DAY, land_reports, land_status, report

from sevenmaps_pipeline import curated
from sevenmaps_pipeline.curated.common import quarantine_unreadable_files
from sevenmaps_pipeline.curated.refusal_journal import journal_file
from sevenmaps_pipeline.curated.report_batches import refuse_report_files


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
