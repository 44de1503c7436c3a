"""`make bench`'s lake benchmark at a toy size, as a fresh clone runs it: its run in a fresh process builds
and signs a day older than the checkout's lake, the site is timed apart, and the signed day verifies
beside `openssl dgst -sha256` and sha256sum over the same files. Nothing here asserts a time (the figures
are the bench's)."""

from __future__ import annotations

import datetime as dt
import json

import duckdb
import pyarrow.parquet as pq
import pytest

from sevenmaps_pipeline.cli import main as cli_main
from sevenmaps_pipeline.curated.day import DAY_TABLES, build_day
from sevenmaps_pipeline.devtools import bench, bench_history, bench_probe
from sevenmaps_pipeline.devtools.bench_floor import (
    EARLIER_METHOD,
    EARLIER_RULES,
    cold_morning,
    flat_figures,
    rules_changed_morning,
    run_floor,
)
from sevenmaps_pipeline.devtools.fleet.run import load_timeline
from sevenmaps_pipeline.devtools.synth import synthesize
from sevenmaps_pipeline.devtools.synth_lists import corpus_pool, published
from sevenmaps_pipeline.devtools.tool_corpus import SHAPE_LISTS, load_servers
from sevenmaps_pipeline.integrity.verify import verify_lake
from sevenmaps_pipeline.rules.fingerprints import summarize_tools


def test_the_bench_run_builds_and_signs_its_own_lakes_days_and_they_verify(lake, signing_key, monkeypatch,
                                                                           tmp_path):
    # No first day and no lake from the environment: on a fresh clone the code location's partitions would
    # begin today, after every day of the bench's lake, unless the bench names its lake's first day.
    monkeypatch.delenv("SEVENMAPS_FIRST_DAY", raising=False)
    monkeypatch.delenv("SEVENMAPS_LAKE", raising=False)
    day = dt.date(2026, 1, 5)  # before the first day of any lake the checkout may hold (the demo's: 30 days ago)
    synthesize(lake, 40, 2, seed=2, end_day=day + dt.timedelta(days=1), missing_days=0)
    figures = bench._measure("map_and_sign", day, day, lake, signing_key)
    assert figures["success"] and figures["in_run_seconds"] > figures["site_seconds"] > 0
    # Where the peak fell: a step of the run (its span holds the sampled peak), or the run process's own.
    assert figures["peak_during"] == "the run process alone" or set(figures["peak_during"].split(", ")) <= {
        *figures["step_seconds"], "between steps"}
    assert (lake.root / "site" / "days" / day.isoformat() / "index.html").is_file()
    verifying = bench._verify_figures(lake, signing_key)
    assert verifying["verify_ok"] and verifying["log_check_ok"] and verifying["days"] == 1
    assert verifying["files"] > 10 and verifying["sha256sum_seconds"] > 0
    assert verifying["openssl_seconds"] > 0 and verifying["verify_to_openssl"] > 0 and verifying["rounds"] == 3
    # The next day in the lake as it stood that morning, then the bare scan of what its run read (the
    # caches of the day before among them: each a group of its own, their schemas differ).
    after = day + dt.timedelta(days=1)
    morning = bench._clone(lake, tmp_path / "morning", morning_of=after, key=signing_key)
    assert not morning.curated_file("daily_status", after).exists()
    next_day = bench._measure("map_and_sign", after, after, morning, signing_key)
    assert next_day["success"] and {"daily_status", "server_history"} <= set(next_day["build_seconds"])
    assert all((morning.root / "cache" / f"{kind}-{day}.parquet").is_file()
               for kind in ("change_baseline", "history_state"))
    # The floor of that day: it reads the inputs the day read (the caches of the day before among them) and
    # writes what the day wrote, the same rows, into a lake of its own.
    floor = run_floor(morning, after, tmp_path / "floor")
    assert floor["floor_files_read"] >= 10 and floor["floor_seconds"] > 0
    built = {f"curated/{t}/day={after}/part-0.parquet" for t in DAY_TABLES}
    assert built <= set(floor["floor_rows_written"])
    for rel, rows in floor["floor_rows_written"].items():
        written, built_rows = (pq.read_metadata(root / rel).num_rows for root in (tmp_path / "floor", morning.root))
        assert written == rows == built_rows, rel
    assert floor["floor_rows_read"]["the day's landed probes (validated: every value)"] == sum(
        pq.read_metadata(f).num_rows for f in morning.raw_files("probes", after))
    # ... and the day's site: every file with its bytes, a badge of a text many endpoints share a link, as built.
    built_site, floor_site = (root / "site" / "days" / after.isoformat() for root in (morning.root, tmp_path / "floor"))
    built_files = {p.relative_to(built_site): p for p in built_site.rglob("*") if p.is_file()}
    assert floor["floor_site_files"] == len(built_files) > 30 and floor["floor_site_seconds"] > 0
    assert {p.relative_to(floor_site) for p in floor_site.rglob("*") if p.is_file()} == set(built_files)
    assert all((floor_site / rel).read_bytes() == p.read_bytes() for rel, p in built_files.items())
    badges = [rel for rel in built_files if rel.parts[0] == "badges"]
    assert len({(floor_site / rel).stat().st_ino for rel in badges}) == len(  # as many files of the texts as built
        {(built_site / rel).stat().st_ino for rel in badges}) < len(badges)
    figures = flat_figures(next_day, floor, None)
    assert figures["lake_day_to_floor"] > figures["lake_map_to_floor"] > 0
    # The same day cold, after a method change: no list known, so the day computes the facts of every list.
    cold = cold_morning(bench._clone(lake, tmp_path / "cold", morning_of=after, key=signing_key), after, signing_key)
    # Signed anew over the rewritten files, as a lake built under the older method was: it verifies, and the
    # surfaces call its days signed (they refuse what differs from its root: integrity/served.py).
    assert verify_lake(cold).ok and {m for p in (cold.root / "curated" / "tool_lists").glob("day=*/part-0.parquet")
                                     for m in pq.read_table(p).column("method_version").to_pylist()} == {EARLIER_METHOD}
    build_day(cold, after)
    day_lists = set(pq.read_table(cold.curated_file("daily_status", after)).column("tools_hash").to_pylist()) - {None}
    computed = set(pq.read_table(cold.curated_file("tool_lists", after)).column("tools_hash").to_pylist())
    assert day_lists and day_lists <= computed
    # The same day after a change of the risk rules alone: the earlier days' lists carry an older method (in
    # the clone only), so every list is new, and its counts are those the warm day counted.
    rules = rules_changed_morning(bench._clone(lake, tmp_path / "rules", morning_of=after, key=signing_key), after,
                                  signing_key)
    earlier = [pq.read_table(p).column("method_version").to_pylist()
               for root in (rules.root, lake.root) for p in [root / "curated" / "tool_lists" / f"day={day}" /
                                                            "part-0.parquet"]]
    assert verify_lake(rules).ok and {m.split("+")[0] for m in earlier[0]} == {EARLIER_RULES}
    assert EARLIER_RULES not in {m.split("+")[0] for m in earlier[1]}  # the lake it was cloned from is untouched
    known = set(pq.read_table(rules.root / "curated" / "tool_lists" / f"day={day}" / "part-0.parquet",
                              columns=["tools_hash"]).column("tools_hash").to_pylist())
    facts = build_day(rules, after).built["tool_facts"].stats
    counted = {r["tools_hash"]: r["definition_tokens"] for r in
               pq.read_table(rules.curated_file("tool_lists", after)).to_pylist()}
    warm = {r["tools_hash"]: r["definition_tokens"] for r in pq.read_table(
        morning.curated_file("tool_lists", after)).to_pylist()} | {
        r["tools_hash"]: r["definition_tokens"] for r in pq.read_table(
            lake.curated_file("tool_lists", day)).to_pylist()}
    assert day_lists <= set(counted) and all(counted[h] == warm[h] for h in day_lists)
    # Every list an earlier day held is taken over, not counted again; only a list new that day is counted.
    assert facts["new_lists"] == len(counted) and 0 < facts["counted_before"] == len(set(counted) & known)


def test_the_peak_counts_the_workers_of_the_measured_run():
    """A run's memory includes its worker processes' (the site's): tree_rss_mb sums a process's descendants."""
    import os
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "import sys, time; x = bytearray(200 * 2**20); "
                              "print(len(x), flush=True); time.sleep(30)"], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == str(200 * 2**20)
        alone, with_child = bench.tree_rss_mb(child.pid), bench.tree_rss_mb(os.getpid())
        assert alone >= 200 and with_child >= alone + 10  # the child's 200 MB, and this process on top
    finally:
        child.kill()
        child.wait()


def test_the_serve_bench_floods_a_real_sevenmaps_serve_and_counts_every_call(lake, signing_key, tmp_path):
    """`sevenmaps bench --only serve` at a toy size: `sevenmaps serve` in its own process over a built, signed
    lake with its site; every call of the flood ends answered or told busy, and pages were fetched quiet and
    under the flood."""
    from sevenmaps_pipeline.curated.day import build_day
    from sevenmaps_pipeline.devtools.bench_history import history_path
    from sevenmaps_pipeline.devtools.bench_serve import print_serve_bench, run_serve_bench
    from sevenmaps_pipeline.integrity.roots import sign_through
    from sevenmaps_pipeline.publishing.site import build_site

    day = dt.date(2026, 1, 5)
    synthesize(lake, 60, 1, seed=3, end_day=day, missing_days=0)
    build_day(lake, day)
    sign_through(lake, day, signing_key)
    build_site(lake, day)
    figures = run_serve_bench(calls=120, lake=lake, quiet_seconds=1.0, results_file=tmp_path / "serve.json")
    outcomes = figures["flood"]["outcomes"]
    assert set(outcomes) <= {"answered", "busy (503, before the SDK)", "busy (tool error, the gate)"}, outcomes
    assert sum(outcomes.values()) == 120 and outcomes.get("answered", 0) >= 1
    assert figures["pages"]["quiet"]["n"] >= 1 and figures["pages"]["flood"]["n"] >= 1
    assert not figures["page_failures"]
    assert (tmp_path / "serve.json").is_file()
    # Printed, the part appends its line to the history (the test run's own: conftest.py).
    print_serve_bench(figures)
    line = json.loads(history_path().read_text().splitlines()[-1])
    assert line["part"] == "serve" and line["setup"] == {"endpoints": figures["endpoints"], "calls": 120}
    assert line["outcomes"] == {"page_failure_count": 0} and line["figures"]["flood.wall"]["better"] == "lower"


def test_the_real_shaped_lake_draws_its_lists_from_the_corpora_and_changes_seven_in_a_hundred_a_day(lake):
    """synthesize(shape="real"): each list is a real server's list of the corpora's first two gatherings
    (SHAPE_LISTS; tools_hash as the prober computes it), about 45 distinct lists per 100 endpoints, about 7% of
    the lists of endpoints that answered on two days in a row changed, and each day's checks land in 24 part
    files."""
    end = dt.date(2026, 1, 8)
    result = synthesize(lake, 600, 4, seed=5, end_day=end, missing_days=0, shape="real")
    corpus = [[published(dict(t)) for t in s.tools] for s in load_servers(SHAPE_LISTS) if s.tools]
    counts = [len(tools) for tools in corpus]
    names = {t["name"] for tools in corpus for t in tools}
    con = duckdb.connect()
    rows = con.execute("SELECT day, server_key, tools_hash, tools_json, tool_count FROM read_parquet($f) "
                       "WHERE check_kind = 'daily' AND tools_hash IS NOT NULL",
                       {"f": [str(p) for d in result.days for p in lake.raw_files("probes", d)]}).fetchall()
    assert rows and all(min(counts) <= n <= max(counts) + 4 for *_, n in rows)
    for _, _, tools_hash, tools_json, _ in rows[::40]:
        tools = json.loads(tools_json)
        assert summarize_tools(tools).tools_hash == tools_hash
        # A real tool's name, or one with the list's tag (a tool without a description carries it there).
        assert all({t["name"], *(t["name"].rsplit("_", k)[0] for k in (1, 2))} & names for t in tools)
    assert all(len(lake.raw_files("probes", d)) == 24 for d in result.days)
    by_day: dict = {}
    for day, key, tools_hash, *_ in rows:
        by_day.setdefault(day, {})[key] = tools_hash
    last = by_day[end]
    assert 0.35 * 600 <= len(set(last.values())) <= 0.55 * 600
    pairs = [(by_day[d][k], by_day[d - dt.timedelta(days=1)][k]) for d in result.days[1:] for k in by_day[d]
             if k in by_day[d - dt.timedelta(days=1)]]
    changed = sum(a != b for a, b in pairs) / len(pairs)
    assert len(pairs) > 500 and 0.045 <= changed <= 0.095, changed
    assert len(corpus_pool().lists) == len(corpus)


def test_the_prober_bench_counts_its_requests_its_cpu_and_runs_the_sdk_at_the_same_concurrency(tmp_path, monkeypatch,
                                                                                               capsys):
    """`sevenmaps bench --only probe` at a toy size: the prober's CPU is divided by the requests the fleet
    served (8 an endpoint, and the registry's pages), quiet and beside a busy process; the SDK's client ran
    over the same endpoints at the same concurrency, and its requests are counted the same way."""
    monkeypatch.setattr(bench_probe, "BENCH_DIR", tmp_path / "bench")
    endpoints, concurrency = 12, 4
    figures = bench_probe.run_probe_bench(endpoints=endpoints, concurrency=concurrency, median_ms=5, rounds=1,
                                          shards=1, busy=1)
    assert figures["kinds"] == {"DELETE /mcp": 1, "GET /.well-known/": 3, "GET /robots.txt": 1, "POST /mcp": 3}
    assert figures["requests_per_endpoint"] == 8 and figures["registry_requests"] >= 1
    for run in ("quiet", "loaded"):
        assert figures[f"{run}_ok"] == endpoints and figures[f"{run}_max_in_flight_per_host"] == 1
        assert figures[f"{run}_requests"] == 8 * endpoints + figures["registry_requests"]
        assert figures[f"{run}_cpu_ms_per_request"] > 0
        assert figures[f"{run}_cpu_ms_per_endpoint"] > figures[f"{run}_cpu_ms_per_request"]
        assert figures[f"{run}_cpu_bound_seconds"] == figures[f"{run}_prober_cpu_seconds"]  # one event loop
        assert figures[f"{run}_bound_seconds"] == max(figures[f"{run}_latency_bound_seconds"],
                                                      figures[f"{run}_cpu_bound_seconds"]) > 0
        assert figures[f"{run}_ratio"] == figures[f"{run}_wall_seconds"] / figures[f"{run}_bound_seconds"]
    # The SDK: the same endpoints, the same concurrency (reached), its own requests as the fleet counts them.
    assert figures["sdk_concurrency"] == figures["sdk_most_at_once"] == concurrency
    assert figures["sdk_answered"] == endpoints and figures["sdk_failed"] == 0, figures["sdk_failures"]
    assert figures["sdk_kinds"] == {"DELETE /mcp": 1, "GET /mcp": 1, "POST /mcp": 3}
    assert figures["sdk_requests"] == 5 * endpoints and figures["sdk_cpu_ms_per_request"] > 0
    assert figures["wall_vs_sdk"] > 0 and figures["cpu_vs_sdk"] > 0
    numbers = bench_probe.history_figures(figures)
    assert {"quiet_cpu_ms_per_request", "loaded_ratio", "sdk_cpu_ms_per_request", "cpu_vs_sdk"} <= set(numbers)
    assert all(isinstance(v, int | float) for v in numbers.values()) and "kinds" not in numbers
    bench_probe.print_probe_bench(figures)
    printed = capsys.readouterr().out
    assert "ms a request" in printed and "the SDK's client at the same concurrency (4" in printed
    assert (tmp_path / "bench" / "probe.json").is_file()


def test_a_fleet_process_killed_after_its_counts_leaves_its_files_in_the_callers_folder(tmp_path):
    """The benches kill their fleet's process once it has written its last counts (bench_probe._RemoteFleet):
    its folder, its CA's private key among its files, is in the folder the caller removes, not one of its own
    in the system's temporary folder, which a killed process never removes."""
    fleet = bench_probe._RemoteFleet(load_timeline(), {}, tmp_path)  # noqa: SLF001 - the benches' fleet itself
    try:
        assert fleet.ca_file.is_relative_to(tmp_path / "fleet") and fleet.ca_file.is_file()
        assert (tmp_path / "fleet" / "tls" / "server-key.pem").is_file()
    finally:
        fleet.finish()
    assert fleet.proc.returncode is not None  # killed, or ended on its own once its standard input closed


def test_a_failed_bench_run_says_why_before_the_one_line_error(lake, tmp_path, capsys, monkeypatch):
    """A run that did not succeed names its failed step and why (the command line renders an error to one line:
    the whole of it goes to the console first); a child that dies says its exit code."""
    monkeypatch.delenv("SEVENMAPS_LAKE", raising=False)
    day = dt.date(2026, 1, 5)
    synthesize(lake, 10, 1, seed=3, end_day=day, missing_days=0)
    with pytest.raises(RuntimeError, match=r"the Dagster run of 2026-01-05 \.\. 2026-01-05 did not succeed: \S"):
        bench._measure("map_and_sign", day, day, lake, tmp_path / "no-such-key.pem")
    said = capsys.readouterr().out
    assert "[bench] the map_and_sign run of 2026-01-05 .. 2026-01-05" in said and "no-such-key.pem" in said
    with pytest.raises(RuntimeError, match=r"failed \(exit code 1\)"):
        bench._measure("no-such-job", day, day, lake, tmp_path / "no-such-key.pem")
    assert "the end of its stderr" in capsys.readouterr().out


def test_an_earlier_runs_folder_is_set_aside_by_a_rename_and_removed_after_the_figures(lake, tmp_path):
    """A clone over an earlier run's folder renames that folder into `.trash` (its removal would slow the files the
    measured day creates next: docs/scaling.md), and empty_trash removes it, read-only signed files included."""
    synthesize(lake, 5, 1, seed=3, end_day=dt.date(2026, 1, 5), missing_days=0)
    earlier = tmp_path / "work-day"
    (earlier / "site").mkdir(parents=True)
    kept = earlier / "site" / "signed.parquet"
    kept.write_text("x")
    kept.chmod(0o444)
    inode = earlier.stat().st_ino
    clone = bench._clone(lake, earlier, curated=False)
    assert clone.root == earlier and not (earlier / "site").exists() and (earlier / "raw").is_dir()
    (aside,) = (tmp_path / ".trash").iterdir()
    assert aside.name.startswith("work-day-") and aside.stat().st_ino == inode and (aside / "site").is_dir()
    assert bench.empty_trash(tmp_path)[1] and not (tmp_path / ".trash").exists()


def test_what_was_set_aside_is_removed_after_a_part_run_alone_and_left_by_a_whole_benchs_part(tmp_path, monkeypatch,
                                                                                                capsys):
    """A whole bench runs each part with SEVENMAPS_BENCH_KEEP_TRASH and removes the trash after its last part, so no
    part measures on a disk slowed by the removal; a part run alone removes it when it ends."""
    monkeypatch.setattr(bench_history, "BENCH_DIR", tmp_path)
    (tmp_path / ".trash" / "work-day-1").mkdir(parents=True)
    history = ["--history", str(tmp_path / "history.jsonl")]
    monkeypatch.setenv("SEVENMAPS_BENCH_KEEP_TRASH", "1")
    assert cli_main(["bench", "--only", "categories", *history]) == 0
    assert (tmp_path / ".trash" / "work-day-1").is_dir() and "removed in" not in capsys.readouterr().out
    monkeypatch.delenv("SEVENMAPS_BENCH_KEEP_TRASH")
    assert cli_main(["bench", "--only", "categories", *history]) == 0
    assert not (tmp_path / ".trash").exists() and "[bench] removed in" in capsys.readouterr().out
