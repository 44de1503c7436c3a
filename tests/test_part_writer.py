"""The scan's and the readiness run's part files when our disk refuses a write (probe/run.py _DiskRefusals): the
rows wait in memory and land at the next try; nothing ends the run but its last write failing."""

from __future__ import annotations

import datetime as dt

import pyarrow.parquet as pq
from conftest import DAY, probe

from sevenmaps_pipeline.probe.origins import OriginResult
from sevenmaps_pipeline.probe.run import PartWriter, ReadinessWriter


def _row(i: int) -> dict:
    return probe(f"https://s{i}.example.com/mcp", "ok", day=DAY)


def test_a_write_the_disk_refuses_keeps_its_rows_for_the_next_try(lake):
    writer = PartWriter(lake, DAY, "run-1", flush_rows=2, flush_seconds=0)
    folder = lake.raw_dir("probes", DAY)
    folder.parent.mkdir(parents=True)
    folder.write_bytes(b"")  # the day's folder cannot be made: every write fails, as on a full disk
    for i in range(5):
        writer.add_probe(_row(i))  # before: the first failing write raised out of the scan
    assert writer.refused.count >= 1 and writer.probe_rows == 0
    folder.unlink()  # the disk has room again
    writer.add_probe(_row(5))
    writer.flush()
    landed = [r["server_key"] for p in sorted(folder.glob("*.parquet")) for r in pq.read_table(p).to_pylist()]
    assert landed == [f"s{i}.example.com/mcp" for i in range(6)] and writer.probe_rows == 6


def test_the_readiness_runs_writes_wait_for_the_disk_too(lake):
    writer = ReadinessWriter(lake, DAY, "run-1", flush_rows=1, retry_seconds=0)
    folder = lake.raw_dir("origins", DAY)
    folder.parent.mkdir(parents=True)
    folder.write_bytes(b"")  # as on a full disk
    at = dt.datetime(2026, 11, 10, 3, tzinfo=dt.UTC)
    for i in range(3):
        writer.add_origin(OriginResult(origin=f"https://o{i}.example.com", fetched_at=at).landed_row(DAY, "run-1"))
    assert writer.refused.count == 3 and writer.counts["origins"] == 0
    folder.unlink()
    writer.flush()
    assert [r["origin"] for p in sorted(folder.glob("*.parquet")) for r in pq.read_table(p).to_pylist()] == [
        f"https://o{i}.example.com" for i in range(3)]
