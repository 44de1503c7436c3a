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
    assert writer.refused.count == 5 and writer.probe_rows == 0
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


def test_a_write_refused_after_another_landed_loses_and_repeats_no_row(lake):
    """helper-92: the readiness writer emptied each kind as it landed, so a retry wrote later rows under a part name
    that held earlier ones (they were gone); the scan's counted its origins twice."""
    at = dt.datetime(2026, 11, 10, 3, tzinfo=dt.UTC)

    def origin(i: int) -> dict:
        return OriginResult(origin=f"https://o{i}.example.com", fetched_at=at).landed_row(DAY, "run-1")

    scan, readiness = PartWriter(lake, DAY, "run-1", flush_rows=1, flush_seconds=0), ReadinessWriter(
        lake, DAY, "run-2", flush_rows=1, retry_seconds=0)
    refused = [lake.raw_dir("probes", DAY), lake.raw_dir("skills", DAY)]
    for folder in refused:
        folder.parent.mkdir(parents=True, exist_ok=True)
        folder.write_bytes(b"")  # the second kind's write is refused, the first's lands
    scan.add_origin(origin(0))
    scan.add_probe(_row(0))
    readiness.add_skill({"day": DAY, "run_id": "run-2", "skill_key": "k", "folder_url": "https://github.com/o/r/tree/m/s",
                         "folder_name": "s", "requested_at": at})  # refused
    readiness.add_origin(origin(10))  # its origins land, its skills are refused again
    readiness.add_origin(origin(11))
    for folder in refused:
        folder.unlink()
    scan.add_origin(origin(1))
    scan.add_probe(_row(1))
    scan.flush()
    readiness.flush()
    landed = [r["origin"] for p in sorted(lake.raw_dir("origins", DAY).glob("*.parquet"))
              for r in pq.read_table(p).to_pylist()]
    assert sorted(landed) == [f"https://o{i}.example.com" for i in (0, 1, 10, 11)]
    assert (scan.origin_rows, scan.probe_rows, readiness.counts["origins"]) == (2, 2, 2)
