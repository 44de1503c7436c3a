"""`sevenmaps bench --only registry` at truth, at a toy size: every endpoint of a simulated registry (a real
fleet in its own process, the real prober, the real lake) is held against what it was set up to do, and a
record that differs from the intended one is reported and fails the bench. Nothing here asserts a time."""

from __future__ import annotations

import json

from sevenmaps_pipeline.devtools import bench_registry
from sevenmaps_pipeline.devtools.bench_registry import SimHost, print_registry_bench, run_registry_bench
from sevenmaps_pipeline.devtools.bench_truth import (
    ANSWERS,
    OUR_OVERLOAD,
    REFUSES,
    ROBOTS_SLOW,
    TIMES_OUT,
    Intent,
    truth,
)
from sevenmaps_pipeline.probe.config import Timeouts

# Latencies far from every timeout: what each endpoint records never hangs on a few milliseconds.
TIMEOUTS = Timeouts(robots_txt=0.5, initialize=0.5, session_end=0.5, legacy_sse_endpoint_event=0.5,
                    well_known_per_origin=0.5, notifications_initialized=0.5, tools_list_per_page=0.5)
MIX = [SimHost("mcp.gw0.test", 8, 0.01, "up"), *(SimHost(f"mcp.r{i}.test", 1, 0.01, "up") for i in range(12)),
       SimHost("mcp.r20.test", 1, 0.05, "paged"), SimHost("mcp.r21.test", 1, 0.01, "timeout"),
       SimHost("mcp.r22.test", 1, 0.01, "down"), SimHost("mcp.r23.test", 1, 1.5, "up")]


def test_every_endpoint_of_a_toy_registry_is_recorded_as_intended_and_a_wrong_one_fails_the_bench(
        tmp_path, monkeypatch, capsys):
    figures = run_registry_bench(concurrency=16, timeouts=TIMEOUTS, mix=MIX)
    t = figures["truth"]
    assert t["endpoints"] == 24 and t["misclassified"] == 0, t
    assert t["confusion"] == {"answers (o) 10 tools": {"o 10 tools": 1}, "answers (o) 3 tools": {"o 3 tools": 20},
                              "refuses (d)": {"d:unreachable": 1}, "times out (d)": {"d:timeout": 1},
                              "robots.txt too slow (n)": {"n:robots_unavailable": 1}}
    # The hour beside it: a slice of the same registry (checked too), the readiness of its endpoints and the
    # lookups.
    hour = figures["hour"]
    assert hour["truth"]["misclassified"] == 0 and hour["endpoints"] == hour["truth"]["endpoints"]
    assert hour["readiness_checks"] == hour["endpoints"] and hour["packages"] >= 1 and hour["domains"] >= 10
    assert hour["total_seconds"] == hour["scan_seconds"] + hour["readiness_seconds"] + hour["lookups_seconds"]
    monkeypatch.setattr(bench_registry, "BENCH_DIR", tmp_path)
    assert print_registry_bench(figures) == 0
    flat = json.loads((tmp_path / "registry.json").read_text())["flat"]
    assert flat["misclassified"] == 0 and flat["outcome.ok"] == 21 and "hour.total_seconds" in flat
    assert all(isinstance(v, int | float) for v in flat.values())

    # Records as the scan made them, against a deliberately wrong intent: an answering endpoint said to time
    # out, and one said to list 4 tools. Both are reported, by (intended, recorded), and the bench exits 1.
    wanted = bench_registry.intents(MIX, TIMEOUTS, answer_tools=3)
    records = {key: (intent.code, intent.tools) for key, intent in wanted.items()}
    assert truth(wanted, records)["misclassified"] == 0
    wrong = {**wanted, "mcp.r0.test/mcp": Intent(TIMES_OUT), "mcp.r1.test/mcp": Intent(ANSWERS, 4)}
    t = truth(wrong, records)
    assert t["misclassified"] == 2
    assert t["wrong"] == {"answers (o) 4 tools -> o 3 tools": 1,
                          "times out (d) -> o": 1}
    assert t["wrong_keys"] == ["mcp.r0.test/mcp", "mcp.r1.test/mcp"]
    assert figures["truth"]["wrong_examples"] == []  # nothing was wrong in the scan itself
    figures["truth"] = {**t, "wrong_examples": ["mcp.r0.test/mcp check daily at 12:00:01.000000: ok () run scan-1"]}
    assert print_registry_bench(figures) == 1
    assert "      mcp.r0.test/mcp check daily at 12:00:01.000000: ok () run scan-1" in capsys.readouterr().out


def test_the_overload_rule_makes_n_prober_overloaded_right_only_where_timing_decides():
    """Our overload is never their outage: a check that rests on timing may be n prober_overloaded; a refused
    connection does not rest on timing, and a missing check is never right."""
    wanted = {"a": Intent(ANSWERS, 3), "t": Intent(TIMES_OUT), "r": Intent(ROBOTS_SLOW), "d": Intent(REFUSES),
              "m": Intent(ANSWERS, 3)}
    got = {k: (OUR_OVERLOAD, None) for k in "atrd"}
    t = truth(wanted, got)
    assert t["misclassified"] == 2 and t["overload_rule_n"] == 3
    assert t["wrong"] == {"answers (o) 3 tools -> missing": 1, "refuses (d) -> n:prober_overloaded": 1}
    # A timeout recorded against a server that answers is the server blamed for us: wrong.
    assert truth({"a": Intent(ANSWERS, 3)}, {"a": (TIMES_OUT, None)})["misclassified"] == 1


def test_an_endpoint_recorded_wrong_is_shown_with_its_rows_from_the_lake(monkeypatch):
    """A rare miss can be read after the run: the report carries the wrong endpoint's checks and its origin's
    robots.txt rows as the scan landed them (the intent is made wrong here, so the scan's own rows show)."""
    real = bench_registry.recorded

    def one_said_to_time_out(lake, day):
        got = real(lake, day)
        got["mcp.r0.test/mcp"] = (TIMES_OUT, None)
        return got

    monkeypatch.setattr(bench_registry, "recorded", one_said_to_time_out)
    figures = run_registry_bench(concurrency=16, timeouts=TIMEOUTS, mix=MIX, hour=False)
    t = figures["truth"]
    assert t["misclassified"] == 1 and t["wrong_keys"] == ["mcp.r0.test/mcp"]
    examples = t["wrong_examples"]
    assert any(line.startswith("mcp.r0.test/mcp check daily at ") and ": ok (" in line for line in examples)
    assert any(line.startswith("https://mcp.r0.test robots.txt at ") for line in examples)
