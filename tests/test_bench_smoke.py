"""`make bench`'s lake benchmark at a toy size, as a fresh clone runs it: its run in a fresh process builds
and signs a day older than the checkout's lake, the site is timed apart, and the signed day verifies
against sha256sum's view of the same files. Nothing here asserts a time (the figures are the bench's)."""

from __future__ import annotations

import datetime as dt

from sevenmaps_pipeline.devtools import bench
from sevenmaps_pipeline.devtools.synth import synthesize


def test_the_bench_run_builds_and_signs_its_own_lakes_days_and_they_verify(lake, signing_key, monkeypatch):
    # No first day and no lake from the environment: on a fresh clone the code location's partitions would
    # begin today, after every day of the bench's lake, unless the bench names its lake's first day.
    monkeypatch.delenv("SEVENMAPS_FIRST_DAY", raising=False)
    monkeypatch.delenv("SEVENMAPS_LAKE", raising=False)
    day = dt.date(2026, 1, 5)  # before the first day of any lake the checkout may hold (the demo's: 30 days ago)
    synthesize(lake, 40, 1, seed=2, end_day=day, missing_days=0)
    figures = bench._measure("map_and_sign", day, day, lake, signing_key)
    assert figures["success"] and figures["in_run_seconds"] > figures["site_seconds"] > 0
    assert (lake.root / "site" / "days" / day.isoformat() / "index.html").is_file()
    verifying = bench._verify_figures(lake, signing_key)
    assert verifying["verify_ok"] and verifying["log_check_ok"] and verifying["days"] == 1
    assert verifying["files"] > 10 and verifying["sha256sum_seconds"] > 0
