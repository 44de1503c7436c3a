"""The tool-tables benchmark: tools, token cost, findings, categories and changes at 100,000 endpoints.

A synthetic lake of two UTC days with about 20 tools per list (5,000 distinct lists; 8% of endpoints change
their list on the second day). Each asset's work (the `curated.build_*` function its Dagster asset calls)
runs in a fresh process, so its peak RSS is its own. Day 1 is the cold case (every list is new under the
method); day 2 the everyday case (only the changed lists are new, and tool_changes has 8,000 endpoints to
diff). The tokenizer is timed alone on the texts tool_facts counted: tokens per second. Prints figures,
asserts nothing, writes .bench/tools-results.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq

from .. import curated
from ..curated import probe_files
from ..lake.paths import LakePaths
from ..rules.tokens import count_many, encoding
from .bench import BENCH_DIR, peak_rss_mb, synthetic_lake
from .bench_history import record

SETUP = ("quarantine", "daily_status")
MEASURED = ("tool_facts", "tools", "token_cost", "findings", "server_categories", "tool_changes")


def _say(msg: str) -> None:
    print(f"[bench] {msg}", flush=True)


def _tokenizer_throughput(lake: LakePaths, day: dt.date) -> dict:
    """Time o200k_base alone over what tool_facts counted that day: each new list's JSON and descriptions."""


    new = set(pq.read_table(lake.curated_file("tool_lists", day), columns=["tools_hash"]).column(0).to_pylist())
    descriptions = [d for d in pq.read_table(lake.curated_file("tool_facts", day), columns=["description"])
                    .column(0).to_pylist() if d]
    seen: set[str] = set()
    lists: list[str] = []
    for path in probe_files(lake, [day - dt.timedelta(days=1), day]):
        table = pq.read_table(path, columns=["tools_hash", "tools_json"])
        for h, j in zip(table.column(0).to_pylist(), table.column(1).to_pylist(), strict=True):
            if h in new and h not in seen and j:
                seen.add(h)
                lists.append(j)
    texts = lists + descriptions
    encoding()  # loading the BPE file is not counting
    started = time.perf_counter()
    tokens = sum(count_many(texts))
    seconds = time.perf_counter() - started
    return {"texts": len(texts), "bytes": sum(len(t.encode()) for t in texts), "tokens": tokens,
            "seconds": seconds, "tokens_per_second": tokens / seconds if seconds else None}


def _child(step: str, day: dt.date, lake_root: Path) -> dict:
    lake = LakePaths.at(lake_root)
    started = time.perf_counter()
    result = getattr(curated, f"build_{step}")(lake, day)
    seconds = time.perf_counter() - started
    figures = {"step": step, "seconds": seconds, "rows": result.rows,
               "peak_rss_mb": peak_rss_mb(),
               "stats": {k: v for k, v in result.stats.items() if isinstance(v, (int, float, str, dict))}}
    if step == "tool_facts":
        figures["tokenizer"] = _tokenizer_throughput(lake, day)
    return figures


# As in devtools/bench.py: a `-c` main, so that the build's worker processes do not import this module again.
CHILD_MAIN = "import sys; from sevenmaps_pipeline.devtools.bench_tools import child_main; child_main(sys.argv[1:])"


def _measure(step: str, day: dt.date, lake: LakePaths) -> dict:
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", CHILD_MAIN, "--child", step, day.isoformat(), str(lake.root)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{step} for {day} failed:\n{proc.stderr[-4000:]}")
    figures = json.loads(proc.stdout.strip().splitlines()[-1])
    figures["wall_seconds"] = time.perf_counter() - started
    return figures


def run_tools_bench(servers: int = 100_000, seed: int = 1, mean_tools: float = 20.0) -> dict:
    source, meta = synthetic_lake(f"tools-{servers}x2-seed{seed}-t{mean_tools:g}", servers, 2, seed,
                                  missing_days=0, mean_tools=mean_tools)
    end = dt.date.fromisoformat(meta["end"])
    days = (end - dt.timedelta(days=1), end)
    work = BENCH_DIR / "work-tools"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    subprocess.run(["cp", "-al", str(source.root / "raw"), str(work / "raw")], check=True)
    lake = LakePaths.at(work)

    results: dict = {"endpoints": servers, "mean_tools": mean_tools, "probe_rows": meta["probe_rows"], "days": {}}
    for label, day in zip(("cold", "next"), days, strict=True):
        _say(f"{day} ({'every list new' if label == 'cold' else 'only changed lists new'}) ...")
        for step in SETUP:
            _measure(step, day, lake)
        results["days"][label] = {"day": day.isoformat(), "steps": {s: _measure(s, day, lake) for s in MEASURED}}
    (BENCH_DIR / "tools-results.json").write_text(json.dumps(results, indent=2, default=str))
    return results


def print_tools_bench(results: dict) -> None:
    print()
    print(f"sevenmaps bench (tool tables): {results['endpoints']:,} endpoints, about {results['mean_tools']:g} "
          "tools per list, one day each; each asset's work in a fresh process")
    for label, title in (("cold", "day 1, every list new"), ("next", "day 2, only changed lists new")):
        steps = results["days"][label]["steps"]
        print(f"  {title}:")
        print(f"    {'asset':<18} {'seconds':>8} {'peak RSS':>10} {'rows':>12}")
        for name, s in steps.items():
            print(f"    {name:<18} {s['seconds']:8.2f} {s['peak_rss_mb']:8,.0f} MB {s['rows']:>12,}")
        total = sum(s["seconds"] for s in steps.values())
        print(f"    {'total':<18} {total:8.2f}")
        facts = steps["tool_facts"]
        tok = facts["tokenizer"]
        if tok["seconds"]:
            print(f"    o200k_base alone: {tok['tokens']:,} tokens in {tok['seconds']:.2f} s = "
                  f"{tok['tokens_per_second']:,.0f} tokens/s ({tok['bytes'] / tok['seconds'] / 1e6:.1f} MB/s) over "
                  f"{facts['stats'].get('new_lists', 0):,} new lists")
        changes = steps["tool_changes"]["stats"].get("kinds", {})
        if changes:
            print(f"    tool_changes kinds: {dict(sorted(changes.items()))}")
    print(f"figures written to {BENCH_DIR / 'tools-results.json'}")
    record("tools", results)


def child_main(argv: list[str]) -> None:
    """One measured build (`_measure`'s child): its figures as the last line of standard output."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--child", nargs=3, metavar=("STEP", "DAY", "LAKE"), required=True)
    step, day, lake_root = parser.parse_args(argv).child
    print(json.dumps(_child(step, dt.date.fromisoformat(day), Path(lake_root))))


if __name__ == "__main__":
    child_main(sys.argv[1:])
