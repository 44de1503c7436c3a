"""Days do not depend on the machine's time zone: the synthetic map built and signed under
TZ=America/New_York and under TZ=UTC gives identical files and identical roots."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow.parquet as pq

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
