"""A scan killed half way (SIGKILL) keeps every check it landed; run again on the same open day, it checks
only what has no completed check yet: every listed endpoint ends with exactly one deciding check."""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter

import pyarrow.parquet as pq

from sevenmaps_pipeline import curated
from sevenmaps_pipeline.devtools.bench_probe import bench_timeline
from sevenmaps_pipeline.devtools.fleet.run import Fleet
from sevenmaps_pipeline.lake.paths import LakePaths

DAY = dt.date(2026, 11, 12)
ENDPOINTS = 120

SCAN = textwrap.dedent("""
    import datetime as dt, json, sys
    from pathlib import Path
    from sevenmaps_pipeline.lake.paths import LakePaths
    from sevenmaps_pipeline.probe.config import ProbeConfig
    from sevenmaps_pipeline.probe.run import ReplayClock, scan_day
    spec = json.loads(Path(sys.argv[1]).read_text())
    day = dt.date.fromisoformat(spec["day"])
    config = ProbeConfig(host_map=spec["host_map"], ca_file=Path(spec["ca_file"]), concurrency=6)
    report = scan_day(LakePaths.at(spec["lake"]), day, spec["registry_url"], config, ReplayClock(day), flush_rows=8)
    print(json.dumps({"resumed_from": report.resumed_from, "probe_rows": report.probe_rows,
                      "registry_reused": report.registry_reused}))
""")


def _daily_rows(lake: LakePaths) -> Counter[str]:
    keys: Counter[str] = Counter()
    for path in lake.raw_files("probes", DAY):
        table = pq.read_table(path, columns=["server_key", "check_kind"])
        keys.update(k for k, kind in zip(table.column("server_key").to_pylist(),
                                         table.column("check_kind").to_pylist(), strict=True) if kind == "daily")
    return keys


def test_a_killed_scan_resumes_with_exactly_one_check_per_endpoint(tmp_path):
    lake = LakePaths.at(tmp_path / "lake")
    fleet = Fleet(timeline=bench_timeline(ENDPOINTS))
    with fleet:
        fleet.latency.update({h.host: 0.04 for h in fleet.hosts})  # ~0.3 s an endpoint: a scan of ~6 s
        spec = tmp_path / "spec.json"
        spec.write_text(json.dumps({"day": DAY.isoformat(), "host_map": fleet.host_map, "lake": str(lake.root),
                                    "ca_file": str(fleet.ca_file), "registry_url": fleet.registry_url}))
        script = tmp_path / "scan.py"
        script.write_text(SCAN)
        env = {**os.environ, "PYTHONPATH": os.getcwd()}
        first = subprocess.Popen([sys.executable, str(script), str(spec)], env=env, stdout=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while len(lake.raw_files("probes", DAY)) < 4:  # a few part files have landed: half way, or so
            assert first.poll() is None, "the scan ended before it could be killed"
            assert time.monotonic() < deadline, "no part files landed"
            time.sleep(0.05)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
        landed = _daily_rows(lake)
        assert 0 < sum(landed.values()) < ENDPOINTS and max(landed.values()) == 1
        print(f"\nkilled after {sum(landed.values())} of {ENDPOINTS} checks had landed in "
              f"{len(lake.raw_files('probes', DAY))} part files")

        second = subprocess.run([sys.executable, str(script), str(spec)], env=env, capture_output=True, text=True,
                                timeout=300)
        assert second.returncode == 0, second.stderr[-2000:]
        report = json.loads(second.stdout.strip().splitlines()[-1])
        print(f"resumed: {report}")
    assert report["registry_reused"] is True and report["resumed_from"] == sum(landed.values())
    assert report["probe_rows"] == ENDPOINTS - sum(landed.values())
    rows = _daily_rows(lake)
    assert len(rows) == ENDPOINTS and set(rows.values()) == {1}, "an endpoint lost or checked twice"
    curated.build_quarantine(lake, DAY)
    status = pq.read_table(curated.build_daily_status(lake, DAY).path)
    assert status.num_rows == ENDPOINTS and set(status.column("code").to_pylist()) == {"o"}
