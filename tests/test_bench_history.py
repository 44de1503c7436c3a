"""The benches' history and its guard (devtools/bench_history.py; docs/scaling.md, "The history and --compare"):
each part appends its figures, marked lower or higher is better, with its outcomes, the commit, the time, the
load and the machine; `sevenmaps bench --compare` names a figure more than 20% worse than the median of the
three runs before and an outcome that drifted. Nothing here times anything: the figures are made up."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sevenmaps_pipeline.devtools import bench_history
from sevenmaps_pipeline.devtools.bench_history import begin, compare, record

SETUP = {"endpoints": 50, "concurrency": 8, "shards": 2}


@pytest.fixture
def history(tmp_path) -> Iterator[Path]:
    path = tmp_path / "history.jsonl"
    begin(path)
    yield path
    begin(None)


def probe_run(wall: float = 10.0, ok: int = 50, **more) -> dict:
    """The prober part's results as run_probe_bench returns them (the figures made up)."""
    return {**SETUP, "quiet_wall_seconds": wall, "quiet_ratio": wall / 5, "quiet_cpu_ms_per_request": 2.0,
            "quiet_ok": ok, "quiet_max_in_flight_per_host": 1, "registry_requests": 400,
            "quiet_latency_bound_seconds": 5.0, **more}


def test_a_run_is_recorded_with_its_figures_marked_outcomes_commit_time_load_and_machine(history):
    line = record("probe", probe_run(sharded_wall_seconds=[3.0, 9.0, 4.0]))
    written = [json.loads(text) for text in history.read_text().splitlines()]
    assert written == [line]
    assert line["part"] == "probe" and line["setup"] == SETUP
    assert line["figures"]["quiet_wall_seconds"] == {"value": 10.0, "better": "lower"}
    assert line["figures"]["sharded_wall_seconds"] == {"value": 4.0, "better": "lower"}  # a list: its median
    assert line["outcomes"] == {"quiet_ok": 50, "quiet_max_in_flight_per_host": 1}
    assert line["context"]["registry_requests"] == 400
    # What the marks name and this run does not hold is said, not guessed.
    assert {"sharded_ratio", "sharded_ok", "sdk_failed"} <= set(line["absent"])
    assert isinstance(line["commit"], str) and line["commit"]
    assert line["dirty"] in (True, False, None) and (line["commit"] != "unknown" or line["dirty"] is None)
    assert dt.datetime.fromisoformat(line["utc"]).utcoffset() == dt.timedelta(0)
    assert len(line["load"]["start"]) == 3 and len(line["load"]["end"]) == 3
    assert line["machine"]["cores"] == os.cpu_count() and line["machine"]["memory_mb"] > 0
    assert "hostname" not in json.dumps(line["machine"])


def test_compare_names_a_figure_25_percent_worse_and_not_one_15_percent_worse(history):
    for wall in (10.0, 11.0, 9.0):  # the median of the three runs before: 10
        record("probe", probe_run(wall))
    record("probe", probe_run(11.5, quiet_cpu_ms_per_request=2.5))  # wall +15%, CPU +25%
    result = compare(history)
    worse = [line for line in result.lines if "worse " in line]
    assert result.worse == 1 and len(worse) == 1, result.lines
    assert "quiet_cpu_ms_per_request 2.5 against a median of 2 over 3 run(s) (+25%; lower is better)" in worse[0]
    assert result.exit_code == 1


def test_higher_is_better_is_worse_when_it_falls(history):
    for share in (0.90, 0.80, 0.85):
        record("risk", {"all": {"binary_share": share, "level_share": 0.5, "tools": 10}})
    record("risk", {"all": {"binary_share": 1.0, "level_share": 0.36, "tools": 10}})  # a rise; a fall of 28%
    result = compare(history)
    assert result.worse == 1 and result.drifted == 0
    assert [line for line in result.lines if "worse " in line] == [
        "  worse    risk: all.level_share 0.36 against a median of 0.5 over 3 run(s) (-28%; higher is better)"]


def test_an_outcome_that_drifted_from_the_run_before_is_named(history):
    record("probe", probe_run(ok=50))
    record("probe", probe_run(ok=49))
    result = compare(history)
    assert result.drifted == 1 and result.worse == 0 and result.exit_code == 1
    assert "  drifted  probe, concurrency=8, endpoints=50, shards=2: quiet_ok was 50, now 49" in result.lines
    assert "  probe, concurrency=8, endpoints=50, shards=2: only 1 run(s) before this one; compared with that" \
        in result.lines


def test_runs_at_other_sizes_are_not_compared_and_a_first_run_has_no_history(history):
    record("probe", probe_run(1.0))
    record("probe", {**probe_run(100.0), "endpoints": 5000})
    result = compare(history)
    assert result.exit_code == 0 and result.compared == 0
    assert "  probe, concurrency=8, endpoints=5000, shards=2: no history yet (this is its first run)" in result.lines
    assert "  probe, concurrency=8, endpoints=5000, shards=2: 1 earlier run(s) at other sizes not compared" \
        in result.lines


def test_an_empty_or_missing_history_is_no_history_yet(tmp_path):
    missing = compare(tmp_path / "none.jsonl")
    assert missing.exit_code == 0 and missing.lines[0].startswith("no history yet")
    (tmp_path / "empty.jsonl").write_text("")
    empty = compare(tmp_path / "empty.jsonl")
    assert empty.exit_code == 0 and empty.lines == [f"no history yet: no run in {tmp_path / 'empty.jsonl'}"]


def test_a_corrupt_or_cut_line_is_named_by_its_number_and_skipped(history):
    record("probe", probe_run(10.0))
    with open(history, "a") as fh:
        fh.write("{not json\n")
        fh.write(json.dumps({"part": "probe", "figures": {"quiet_wall_seconds": {"value": "fast"}},
                             "outcomes": {}}) + "\n")
        fh.write("[]\n")
    record("probe", probe_run(13.0))
    with open(history, "a") as fh:
        fh.write('{"part": "probe", "figu')  # a run killed while writing
    result = compare(history)
    skipped = [line for line in result.lines if line.startswith("skipped")]
    assert [line.split(": ", 1)[0] for line in skipped] == [f"skipped  {history}:{n}" for n in (2, 3, 4, 6)]
    assert "quiet_wall_seconds is not a number" in skipped[1] and "not a bench run" in skipped[2]
    assert result.skipped == 4 and result.worse == 2  # the two good runs still compared (wall and ratio +30%)


def test_the_cli_records_a_part_and_compares_its_history(tmp_path):
    """The real command line: `bench --only risk --history FILE` appends a run of the (deterministic) risk part
    after what the history holds; `bench --compare` finds nothing worse; a run whose outcome drifted makes it
    exit 1."""
    history = tmp_path / "h.jsonl"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    env.pop(bench_history.HISTORY_ENV, None)

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "sevenmaps_pipeline.cli", "bench", *args], env=env,
                              capture_output=True, text=True, timeout=300, cwd=tmp_path)

    begin(history)
    earlier = record("probe", probe_run())  # a run of another part, before
    begin(None)
    done = cli("--only", "risk", "--history", str(history))
    assert done.returncode == 0, done.stderr
    assert f"appended to {history}" in done.stderr
    kept, appended = history.read_text().splitlines()
    assert json.loads(kept) == earlier
    # A second run of the part: its line again, where the test ran the part twice (7 s of CPU each;
    # docs/development.md, "The suite's time"). That the risk rules give the same outcomes each run is what
    # tests/test_method_pins.py holds; this test is about the history and its guard.
    with open(history, "a") as fh:
        fh.write(appended + "\n")
    runs = [json.loads(line) for line in history.read_text().splitlines()][1:]
    assert [r["part"] for r in runs] == ["risk", "risk"] and runs[0]["figures"] and runs[0]["outcomes"]
    same = cli("--compare", "--history", str(history))
    assert same.returncode == 0, same.stdout
    assert same.stdout.splitlines()[-1].startswith("bench --compare: no figure worse, no outcome drifted: 0 figure(s)")
    drifted = dict(runs[-1], outcomes={**runs[-1]["outcomes"], "all.tools": runs[-1]["outcomes"]["all.tools"] + 1})
    with open(history, "a") as fh:
        fh.write(json.dumps(drifted) + "\n")
    changed = cli("--compare", "--history", str(history))
    assert changed.returncode == 1
    assert "  drifted  risk: all.tools was 311, now 312" in changed.stdout.splitlines()
    assert "1 outcome(s) drifted" in changed.stdout.splitlines()[-1]


def test_runs_of_another_machine_are_named_not_compared(history):
    """The history is kept in the repository, so it holds other machines' runs: a figure is compared only with
    the runs of the machine it was measured on."""
    for wall in (1.0, 1.1, 0.9):  # a faster machine's runs, recorded here as theirs
        line = record("probe", probe_run(wall))
        runs = history.read_text().splitlines()
        runs[-1] = json.dumps({**line, "machine": {**line["machine"], "cpu_model": "a faster CPU", "cores": 64}})
        history.write_text("\n".join(runs) + "\n")
    record("probe", probe_run(10.0))  # ten times as slow, on this machine: its first run here
    result = compare(history)
    assert result.worse == 0 and result.compared == 0 and result.exit_code == 0, result.lines
    key = "probe, concurrency=8, endpoints=50, shards=2"
    assert f"  {key}: no history yet (this is its first run)" in result.lines
    assert [line for line in result.lines if "another machine" in line] == [
        f"  {key}: 3 earlier run(s) on another machine not compared (this one: {os.cpu_count()} cores, "
        f"{bench_history.machine()['cpu_model'] or 'CPU unknown'}, {bench_history.machine()['memory_mb']} MB)"]
    record("probe", probe_run(13.0))  # the same machine again: compared with its own run only (+30%)
    again = compare(history)
    assert [line.split(":")[1].split()[0] for line in again.lines if "worse " in line] == [
        "quiet_ratio", "quiet_wall_seconds"]
