"""Days do not depend on the machine's time zone: the synthetic map built and signed under
TZ=America/New_York and under TZ=UTC gives identical files and identical roots."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
from conftest import land_status, probe

from sevenmaps_pipeline.lake.keys import server_key
from sevenmaps_pipeline.lake.parquet_io import write_parquet
from sevenmaps_pipeline.lake.paths import LakePaths
from sevenmaps_pipeline.lake.schemas import RAW_FIVE_MINUTE, RAW_HOURLY, conform
from sevenmaps_pipeline.lake.warehouse import publish_warehouse

CHILD = textwrap.dedent("""
    import datetime as dt, sys
    from pathlib import Path
    import dagster as dg
    from sevenmaps_pipeline.defs.runner import run_map_and_sign
    from sevenmaps_pipeline.devtools.synth import synthesize
    from sevenmaps_pipeline.integrity.keys import generate_key
    from sevenmaps_pipeline.lake.paths import LakePaths
    out = Path(sys.argv[1])
    lake = LakePaths.at(out / "lake")
    key = generate_key(out / "key.pem")
    result = synthesize(lake, 150, 2, seed=5, end_day=dt.date(2026, 11, 20), missing_days=0)
    with dg.DagsterInstance.ephemeral() as instance:
        runs = run_map_and_sign(result.days[0], result.days[-1], instance, lake.root, key, log_level="WARNING")
    assert all(r.success for r in runs)
""")


def _build(tmp_path: Path, zone: str) -> Path:
    out = tmp_path / zone.replace("/", "_")
    out.mkdir()
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    proc = subprocess.run([sys.executable, str(script), str(out)], env={**os.environ, "TZ": zone},
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out / "lake"


def _files(lake: Path) -> dict[str, str]:
    # cache/ records the identity (inode, time) of the files each baseline stands for, which no two builds
    # share: its rows are compared apart.
    return {p.relative_to(lake).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(lake.rglob("*.parquet")) if p.relative_to(lake).parts[0] != "cache"}


def test_the_map_is_the_same_in_every_time_zone(tmp_path):
    utc, new_york = _build(tmp_path, "UTC"), _build(tmp_path, "America/New_York")
    files = _files(utc)
    assert files and _files(new_york) == files
    cached = sorted(p.name for p in (utc / "cache").glob("*.parquet"))
    assert cached and cached == sorted(p.name for p in (new_york / "cache").glob("*.parquet"))
    for name in cached:
        assert pq.read_table(utc / "cache" / name).replace_schema_metadata(None).equals(
            pq.read_table(new_york / "cache" / name).replace_schema_metadata(None))
    roots = {p.name: json.loads(p.read_text())["root"] for p in sorted((utc / "roots").glob("*.json"))}
    assert len(roots) == 2
    assert {p.name: json.loads(p.read_text())["root"] for p in sorted((new_york / "roots").glob("*.json"))} == roots
    # Nothing was refused for lying outside its day (what the machine's zone used to cause).
    quarantine = [p for p in (new_york / "curated" / "quarantine").rglob("*.parquet")]
    assert sum(pq.read_table(p).num_rows for p in quarantine) == sum(
        pq.read_table(p).num_rows for p in (utc / "curated" / "quarantine").rglob("*.parquet"))


def test_the_warehouse_views_answer_the_same_to_a_reader_in_any_time_zone(tmp_path):
    """A plain DuckDB reader (docs/analyst.md) has the machine's zone as its session zone, where the map's own
    connections are UTC (lake/duck.py): the views of sql/ must not depend on it. current_status read the
    hourly checks after an endpoint's n day from midnight in the reader's zone (a cast to TIMESTAMPTZ), and
    five_minute_uptime's 30 days were 30 calendar days of that zone (one hour off across a DST change)."""
    lake = LakePaths.at(tmp_path / "lake")
    day = dt.date(2026, 11, 20)
    url, five = "https://n.example.com/mcp", "https://five.example.com/mcp"
    land_status(lake, day, {server_key(url): "n"})  # no valid daily check that day: no checked_at
    for when, outcome in ((dt.datetime(2026, 11, 19, 2, tzinfo=dt.UTC), "ok"),
                          (dt.datetime(2026, 11, 20, 10, tzinfo=dt.UTC), "timeout")):
        row = probe(url, outcome, day=when.date(), hour=when.hour, check_kind="hourly")
        write_parquet(lake, lake.root / f"raw/hourly/day={when.date()}/h.parquet",
                      conform(pa.Table.from_pylist([row], RAW_HOURLY.schema), RAW_HOURLY))
    # 30 days before 2026-11-20 12:00 UTC is 2026-10-21 12:00 UTC; in New York's calendar (EDT then), 11:00 UTC.
    for when, outcome in ((dt.datetime(2026, 11, 20, 12, tzinfo=dt.UTC), "ok"),
                          (dt.datetime(2026, 10, 21, 11, 30, tzinfo=dt.UTC), "timeout")):
        row = probe(five, outcome, day=when.date(), hour=when.hour, minute=when.minute, check_kind="five_minute")
        write_parquet(lake, lake.root / f"raw/five_minute/day={when.date()}/f.parquet",
                      conform(pa.Table.from_pylist([row], RAW_FIVE_MINUTE.schema), RAW_FIVE_MINUTE))
    publish_warehouse(lake, force=True)
    queries = ("SELECT server_key, current_code, decided_by, decided_at FROM current_status ORDER BY server_key",
               "SELECT server_key, checks_30d, uptime_30d_pct, checks_90d FROM five_minute_uptime ORDER BY server_key")
    answers = {}
    for zone in ("UTC", "America/New_York", "Asia/Kolkata"):
        with duckdb.connect(str(lake.warehouse), read_only=True) as con:
            con.execute(f"SET TimeZone = '{zone}'")  # what TZ=<zone> gives a plain reader
            answers[zone] = [con.execute(q).fetchall() for q in queries]
    assert answers["UTC"][0][0][1:3] == ("o", "hourly")  # the 02:00 answer of the day before, as the map says
    assert answers["UTC"][1][0][1:] == (1, 100.0, 2)
    assert answers["America/New_York"] == answers["UTC"] == answers["Asia/Kolkata"]
