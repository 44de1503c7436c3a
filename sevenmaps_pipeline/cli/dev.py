"""The developer's commands: demo, synth, bench. Their imports of devtools stay inside the functions that
need them: devtools is not the product, and the packages only it needs (fleet, demo, benches) come with the
`devtools` extra."""

from __future__ import annotations

import argparse
import datetime as dt
import os
import subprocess
import sys
import time
from pathlib import Path

from ..lake.paths import parse_day
from .common import _lake
from .parser import BENCH_PARTS


def cmd_demo(args: argparse.Namespace) -> int:
    from ..devtools.demo import run_demo, run_fleet_demo

    key = Path(args.signing_key).resolve() if args.signing_key else None
    if args.synthetic:
        return run_demo(_lake(args), args.servers, args.days, args.seed, key)
    return run_fleet_demo(_lake(args), args.days, key)


def cmd_synth(args: argparse.Namespace) -> int:
    from ..devtools.synth import synthesize

    lake = _lake(args)
    end = parse_day(args.end_day) if args.end_day else dt.datetime.now(dt.UTC).date() - dt.timedelta(days=1)
    started = time.perf_counter()
    print(f"synthesising {args.servers:,} endpoints x {args.days} days ending {end} into {lake.root}", flush=True)
    result = synthesize(lake, args.servers, args.days, args.seed, end, args.missing_days,
                        progress=lambda msg: print(f"  {msg}", flush=True))
    print(f"done in {time.perf_counter() - started:.1f}s: {result.probe_rows:,} probe rows, "
          f"{result.registry_rows:,} registry rows, {result.distinct_tool_lists:,} distinct tool lists")
    return 0


# Set for the parts of a whole bench, each in its own process: the folders they set aside are removed once, after
# the last part, so that no part measures on a disk slowed by a mass removal (devtools/bench.py set_aside).
_KEEP_TRASH = "SEVENMAPS_BENCH_KEEP_TRASH"


def _empty_trash() -> None:
    from ..devtools.bench import empty_trash
    from ..devtools.bench_history import BENCH_DIR

    if not (BENCH_DIR / ".trash").exists():
        return  # nothing set aside: the part's output stays its figures alone
    print("[bench] removing the earlier runs' folders, set aside so that no figure paid for their removal ...",
          flush=True)
    seconds, gone = empty_trash(BENCH_DIR)
    print(f"[bench] removed in {seconds:.1f} s" if gone else
          f"[bench] {BENCH_DIR / '.trash'} could not be removed whole in {seconds:.1f} s: remove it by hand",
          flush=True)


def _bench_each_part_apart(args: argparse.Namespace, parts: tuple[str, ...] = BENCH_PARTS) -> int:
    """`sevenmaps bench` with no --only: each part in a fresh process of its own, one after another, as
    each would run alone (the prober as the scan's own step does): no part's figures carry the heap an
    earlier part left behind. Each starts after the files the one before wrote are on disk."""
    code = 0
    options = ["--servers", str(args.servers), "--days", str(args.days), "--seed", str(args.seed),
               "--endpoints", str(args.endpoints), "--probe-median-ms", str(args.probe_median_ms),
               "--probe-rounds", str(args.probe_rounds), "--registry-endpoints", str(args.registry_endpoints),
               "--registry-concurrency", str(args.registry_concurrency), "--cpu-hog", str(args.cpu_hog),
               "--serve-calls", str(args.serve_calls), "--lake-shape", args.lake_shape] + \
        (["--history", args.history] if args.history else [])
    for part in parts:
        os.sync()
        done = subprocess.run([sys.executable, "-m", "sevenmaps_pipeline.cli", "bench", "--only", part, *options],
                              check=False, env={**os.environ, _KEEP_TRASH: "1"})
        if done.returncode != 0:
            print(f"[bench] the {part} benchmark ended with exit code {done.returncode}", flush=True)
            code = code or done.returncode
        print(flush=True)
    return code


def cmd_bench(args: argparse.Namespace) -> int:
    """One part with --only; without it, every part, each in a process of its own; with --compare, none (the
    history read back). Each part appends its figures to the history (devtools/bench_history.py)."""
    from ..devtools import bench_history

    if args.compare:
        return bench_history.compare_command(Path(args.history) if args.history else None)
    if args.only is None:
        try:
            return _bench_each_part_apart(args)
        finally:
            _empty_trash()
    bench_history.begin(Path(args.history).resolve() if args.history else None)
    try:
        return _bench_one_part(args)
    finally:
        if not os.environ.get(_KEEP_TRASH):
            _empty_trash()


def _bench_one_part(args: argparse.Namespace) -> int:
    if args.only == "risk":
        from ..devtools import risk_corpus

        risk_corpus.run_bench()
    elif args.only == "risk-reach":
        from ..devtools import risk_reach

        risk_reach.run_bench()
    elif args.only == "categories":
        from ..devtools import category_corpus

        category_corpus.run_bench()
    elif args.only == "lake":
        from ..devtools.bench import run_bench

        return run_bench(args.servers, args.days, args.seed, args.lake_shape)
    elif args.only == "export":
        from ..devtools.bench_export import print_export_bench, run_export_bench

        print_export_bench(run_export_bench(args.servers, args.days, args.seed))
    elif args.only == "tools":
        from ..devtools.bench_tools import print_tools_bench, run_tools_bench

        print_tools_bench(run_tools_bench(args.servers, args.seed))
    elif args.only == "probe":
        from ..devtools.bench_probe import print_probe_bench, run_probe_bench

        print(f"[bench] prober: {args.endpoints:,} fleet endpoints with injected latency, quiet and beside a busy "
              "process, and the SDK's client at the same concurrency ...", flush=True)
        print_probe_bench(run_probe_bench(endpoints=args.endpoints, median_ms=args.probe_median_ms,
                                          rounds=args.probe_rounds))
    elif args.only == "registry":
        from ..devtools.bench_registry import print_registry_bench, run_registry_bench

        print(f"[bench] the whole registry, simulated: {args.registry_endpoints:,} endpoints on loopback virtual "
              "hosts (a few minutes) ...", flush=True)
        return print_registry_bench(run_registry_bench(args.registry_endpoints, args.registry_concurrency,
                                                       args.seed, cpu_hog=args.cpu_hog))
    elif args.only == "serve":
        from ..devtools.bench_serve import print_serve_bench, run_serve_bench

        print(f"[bench] `sevenmaps serve` over {args.registry_endpoints:,} endpoints under {args.serve_calls} route "
              "calls at once, the site beside it ...", flush=True)
        print_serve_bench(run_serve_bench(args.registry_endpoints, seed=args.seed, calls=args.serve_calls))
    return 0
