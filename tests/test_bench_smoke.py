"""`make bench` at a toy size, as a fresh clone runs it: every figure comes out and the signed days verify.
Nothing here asserts a time (the figures are the benchmark's to print)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def _bench(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    sevenmaps = Path(sys.executable).with_name("sevenmaps")
    # No SEVENMAPS_FIRST_DAY and no lake: the bench must bring its own partitions' first day, as on a
    # fresh clone whose data_lake is empty.
    env = {k: v for k, v in os.environ.items() if k not in ("SEVENMAPS_FIRST_DAY", "SEVENMAPS_LAKE")}
    env["SEVENMAPS_BENCH_DIR"] = str(tmp_path / "bench")
    return subprocess.run([str(sevenmaps), "bench", *args], env=env, capture_output=True, text=True, timeout=600,
                          cwd=tmp_path)


def test_the_lake_bench_runs_at_a_toy_size_and_its_days_verify(tmp_path):
    proc = _bench(tmp_path, "--only", "lake", "--servers", "120", "--days", "2")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    results = json.loads((tmp_path / "bench" / "results.json").read_text())
    assert results["endpoints"] == 120 and results["days"] == 2
    assert results["verify"]["verify_ok"] and results["verify"]["log_check_ok"] and results["verify"]["days"] == 2
    assert results["one_day"]["site_seconds"] > 0 and results["one_day_compute_to_bare_scan"] > 0
    assert "ratio one-day compute / bare scan" in proc.stdout


def test_the_registry_bench_scans_a_small_simulated_registry_one_request_at_a_time_per_host(tmp_path):
    proc = _bench(tmp_path, "--only", "registry", "--registry-endpoints", "150")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    figures = json.loads((tmp_path / "bench" / "registry.json").read_text())
    assert figures["endpoints"] == 150 and figures["max_in_flight_per_host"] == 1
    assert sum(figures["outcomes"].values()) == 150
    assert figures["outcomes"]["timeout"] >= 15 and figures["outcomes"]["unreachable"] >= 7  # 10% and 5%
    assert figures["ideal_seconds"] > 0 and figures["requests"] > 150 * 4
