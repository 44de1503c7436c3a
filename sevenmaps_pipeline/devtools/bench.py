"""`make bench`: 100,000 endpoints x 30 days (synthetic) through the real Dagster assets.

Figures: wall time and peak memory of materialising one day (every map asset, then the root) and of a 30-day
backfill, each in a fresh process as an operator would run them; and the ratio of that day's compute
(the run itself, without Python's and Dagster's process start) to a bare DuckDB scan of every file the
day's run reads. Nothing here asserts a time: it prints figures and writes .bench/results.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import dagster as dg
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..defs.runner import run_map_and_sign
from ..integrity.keys import generate_key, load_private_key
from ..integrity.report import Trust
from ..integrity.roots import sync_log
from ..integrity.verify import check_log_only, verify_lake
from ..lake.parquet_io import write_parquet
from ..lake.paths import LakePaths
from ..lake.warehouse import publish_warehouse
from .bench_floor import cold_morning, flat_figures, print_floor, rules_changed_morning, run_floor, shape_figures
from .bench_history import BENCH_DIR, record
from .synth import synthesize


def _say(msg: str) -> None:
    print(f"[bench] {msg}", flush=True)


def peak_rss_mb() -> float:
    """This process's own peak resident set size. Linux keeps ru_maxrss across fork and exec, so a child of a
    big parent would report the parent's peak; VmHWM belongs to the process's own address space."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def tree_rss_mb(pid: int) -> float:
    """The resident set size of process `pid` and all its descendants now, from /proc (0 where there is
    no /proc)."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    page = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else []:
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        parents[int(entry.name)] = int(fields[1])
        rss[int(entry.name)] = int(fields[21]) * page
    tree, frontier = set(), [pid]
    while frontier:
        current = frontier.pop()
        tree.add(current)
        frontier += [child for child, parent in parents.items() if parent == current and child not in tree]
    return sum(rss.get(p, 0) for p in tree) / 2**20


def synthetic_lake(name: str, servers: int, days: int, seed: int, **options) -> tuple[LakePaths, dict]:
    """The synthetic lake `.bench/<name>`, made once (ending yesterday) and reused while it is complete."""
    BENCH_DIR.mkdir(exist_ok=True)
    source = LakePaths.at(BENCH_DIR / name)
    marker = source.root / ".complete.json"
    if marker.exists():
        meta = json.loads(marker.read_text())
        _say(f"reusing synthetic lake {source.root} ({meta['probe_rows']:,} probe rows, ends {meta['end']})")
        return source, meta
    shutil.rmtree(source.root, ignore_errors=True)
    end = dt.datetime.now(dt.UTC).date() - dt.timedelta(days=1)
    _say(f"synthesising {servers:,} endpoints x {days} days into {source.root} ...")
    started = time.perf_counter()
    result = synthesize(source, servers, days, seed, end, **options)
    meta = {"end": end.isoformat(), "probe_rows": result.probe_rows, "report_rows": result.report_rows,
            "synth_seconds": time.perf_counter() - started}
    marker.write_text(json.dumps(meta))
    _say(f"synth: {result.probe_rows:,} probe rows, {result.report_rows:,} agent reports in "
         f"{meta['synth_seconds']:.1f}s")
    return source, meta


def set_aside(folder: Path) -> None:
    """Move an earlier run's folder into `.trash` beside it, a rename: removing a quarter of a million files
    makes every file this VM's disk creates for some minutes after cost ten times as much (docs/scaling.md,
    "What bounds it now"), which the day measured next would pay in its site. `empty_trash` removes them once
    the whole bench has its figures (cli/dev.py)."""
    trash = folder.parent / ".trash"
    trash.mkdir(exist_ok=True)
    folder.rename(trash / f"{folder.name}-{time.time_ns()}")


def empty_trash(bench_dir: Path) -> tuple[float, bool]:
    """Remove what was set aside (also by a run that was killed): its seconds, and whether all of it went."""
    started = time.perf_counter()
    shutil.rmtree(bench_dir / ".trash", ignore_errors=True)
    return time.perf_counter() - started, not (bench_dir / ".trash").exists()


def _clone(src: LakePaths, dst: Path, *, morning_of: dt.date | None = None, curated: bool = True,
           key: Path | None = None) -> LakePaths:
    """Copy a lake with hard links (writes replace files by rename, so the source's bytes are never touched;
    signing the copy makes the files it signs 0444, in the source too: the same inodes, only ever read there).

    With `morning_of`, the lake as it stood on the morning that day was built: the day's raw files and
    those of the days before, the earlier days' tables, roots, snapshots, cached change baselines, history
    states and category verdicts, the
    log re-derived from those roots (with `key`) and the warehouse's views; nothing of that day or later. A
    run of that day then builds, signs and exports it alone, as a daily run does, and catches nothing up.
    (Before, the day's lake had no log, snapshots or warehouse, so its run re-logged and re-exported every
    earlier day and rebuilt the views, and a day looked slower the more days came before it.)"""
    if dst.exists():
        set_aside(dst)
    dst.mkdir(parents=True)
    parts = ("raw", "curated", "roots", ".well-known", "exports", "cache") if curated else ("raw",)
    for part in parts:
        if (src.root / part).exists():
            subprocess.run(["cp", "-al", str(src.root / part), str(dst / part)], check=True)
    lake = LakePaths.at(dst)
    if morning_of:
        def day_of(name: str) -> dt.date | None:
            text = name.removeprefix("day=").removeprefix("change_baseline-").removeprefix("history_state-")[:10]
            try:
                return dt.date.fromisoformat(text)
            except ValueError:
                return None

        def drop(paths, later_than: dt.date) -> None:
            for path in paths:
                if (d := day_of(path.name)) is not None and d > later_than:
                    shutil.rmtree(path) if path.is_dir() else path.unlink()

        yesterday = morning_of - dt.timedelta(days=1)
        drop((dst / "raw").glob("*/day=*"), morning_of)
        drop((dst / "curated").glob("*/day=*"), yesterday)
        drop(lake.roots_dir.glob("day=*.json"), yesterday)
        drop(lake.exports_dir.glob("*"), yesterday)
        drop((dst / "cache").glob("*"), yesterday)
        _categories_as_of(lake, morning_of)
        if key is not None and lake.roots_dir.is_dir():

            sync_log(lake, load_private_key(key, lake))
        # Its warehouse too: views are rebuilt only when one changes (here, because the lake moved), and
        # that costs more the more files the lake holds (0.6 s at 30 days, 0.8 s at 90, 100,000 endpoints).

        publish_warehouse(lake)
    return lake


def _categories_as_of(lake: LakePaths, day: dt.date) -> None:
    """The category verdicts kept per list (curated/categories.py) as they stood the morning of `day`:
    without the lists scored that day or later."""


    for path in (lake.root / "cache").glob("list_categories-*.parquet"):
        table = pq.read_table(path)
        if "scored_day" in table.column_names:
            earlier = pc.less(table.column("scored_day"), pa.scalar(day, pa.date32()))
            write_parquet(lake, path, table.filter(earlier))


def _child_run(job: str, first: dt.date, last: dt.date, lake: Path, key: Path) -> dict:
    """Runs inside the measured process."""
    warnings.filterwarnings("ignore")


    assert job == "map_and_sign"
    home = tempfile.mkdtemp(prefix="sevenmaps-bench-home-")
    with dg.instance_for_test(temp_dir=home) as instance:
        started = time.perf_counter()
        runs = run_map_and_sign(first, last, instance, lake, key, log_level="WARNING", raise_on_error=False)
        in_run = time.perf_counter() - started
        # The site (a page per endpoint) is not part of the map and its root: timed apart, from the run's
        # own step statistics.
        steps: dict[str, float] = {}
        spans: list[tuple[str, float, float]] = []  # each step's start and end (Unix time): where the peak fell
        for run in runs:
            for stat in instance.get_run_step_stats(run.run_id):
                steps[stat.step_key] = steps.get(stat.step_key, 0.0) + (stat.end_time or 0) - (stat.start_time or 0)
                spans.append((stat.step_key, stat.start_time or 0.0, stat.end_time or 0.0))
        # Inside the map's one step (daily_map), each table's build time, from its materialisation (one day).
        builds: dict[str, float] = {}
        if first == last:
            for event in runs[0].get_asset_materialization_events():
                value = event.materialization.metadata.get("build seconds")
                if value is not None and event.asset_key is not None:
                    builds[event.asset_key.to_user_string()] = float(value.value)  # type: ignore[arg-type]
    shutil.rmtree(home, ignore_errors=True)
    failures = [f"{e.step_key}: {e.step_failure_data.error.message.strip()}" for r in runs for e in r.all_events
                if e.is_step_failure and e.step_failure_data.error is not None]
    return {"success": all(r.success for r in runs) and len(runs) == 2, "failures": failures, "in_run_seconds": in_run,
            "site_seconds": steps.get("day_site", 0.0), "peak_rss_mb": peak_rss_mb(), "step_spans": spans,
            "step_seconds": dict(sorted(steps.items(), key=lambda kv: -kv[1])),
            "build_seconds": dict(sorted(builds.items(), key=lambda kv: -kv[1]))}


def _peak_during(figures: dict, tree_peak: float, peak_at: float) -> str:
    """Where a run's peak resident size fell: the step whose span holds the sampled peak of the process tree,
    or the run process's own high-water mark (its time unknown) when that is the larger."""
    if figures["peak_rss_mb"] > tree_peak:
        return "the run process alone"
    during = [key for key, start, end in figures.get("step_spans", []) if start <= peak_at <= end]
    return ", ".join(during) or "between steps"


CHILD_MAIN = "import sys; from sevenmaps_pipeline.devtools.bench import child_main; child_main(sys.argv[1:])"


def _measure(job: str, first: dt.date, last: dt.date, lake: LakePaths, key: Path) -> dict:
    started = time.perf_counter()
    # The code location's partitions begin at the lake's first day: the bench lake's, not whatever lake
    # (or none, on a fresh clone) the checkout holds (docs/operations.md, "The first day").
    env = {**os.environ, "SEVENMAPS_LAKE": str(lake.root), "SEVENMAPS_FIRST_DAY": lake_first_day(lake).isoformat()}
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        # The child's main is `-c`, as a Dagster run worker's is `-m dagster`: a process the run spawns (tool_facts'
        # and the site's workers) then imports what its function needs and not the main module again, which
        # multiprocessing does for `-m this.module` (about 90 MB a worker: docs/scaling.md, "The day's peak memory").
        proc = subprocess.Popen(
            [sys.executable, "-c", CHILD_MAIN, "--child", job, first.isoformat(), last.isoformat(), str(lake.root),
             str(key)], stdout=out, stderr=err, text=True, env=env)
        # The run's peak is its own and its site workers' together (publishing/site.py writes server pages
        # in worker processes), sampled as it runs.
        tree_peak, peak_at = 0.0, 0.0
        while proc.poll() is None:
            sampled = tree_rss_mb(proc.pid)
            if sampled > tree_peak:
                tree_peak, peak_at = sampled, time.time()
            time.sleep(0.25)
        wall = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if proc.returncode != 0:
        # The command line renders an error to one line: the child's own words go to the console first.
        _say(f"the {job} run of {first} .. {last} in {lake.root} failed; the end of its stderr:\n{stderr[-4000:]}")
        killed = proc.returncode in (-signal.SIGKILL, 128 + signal.SIGKILL)
        raise RuntimeError(f"bench run of {first} .. {last} failed (exit code {proc.returncode}"
                           + (", killed: out of memory?" if killed else "") + ")")
    figures = json.loads(stdout.strip().splitlines()[-1])
    figures["wall_seconds"] = wall
    figures["peak_during"] = _peak_during(figures, tree_peak, peak_at)
    figures["peak_rss_mb"] = max(figures["peak_rss_mb"], tree_peak)
    if not figures["success"]:
        failures = figures.get("failures") or ["no step failed: a run was not made"]
        _say(f"the {job} run of {first} .. {last} in {lake.root} did not succeed:\n" + "\n".join(failures))
        raise RuntimeError(f"the Dagster run of {first} .. {last} did not succeed: {failures[0].splitlines()[0]}")
    return figures


def _same_day_shorter_history(source: LakePaths, lake: LakePaths, end: dt.date, key: Path,
                              first_run: dict) -> tuple[dict, dict]:
    """`end` built after all of `lake`'s days, and after only 29 (a lake made of the same raw files from
    end - 29 on, its first 29 days backfilled): each twice, alternately, the faster kept (runs of one day
    differ by some 10%). Returns (the long history's run, the short one's)."""
    first = end - dt.timedelta(days=29)
    _say(f"{end} again, after 29 days ({first} ..): backfilling those 29 days from the same raw files ...")
    short = _clone(source, BENCH_DIR / "work-short", curated=False)
    for folder in (short.root / "raw").glob("*/day=*"):
        if dt.date.fromisoformat(folder.name[4:]) < first:
            shutil.rmtree(folder)
    _measure("map_and_sign", first, end - dt.timedelta(days=1), short, key)
    long_runs, short_runs = [first_run], []
    for _ in range(2):
        _say(f"{end} after 29 days, then after all of them ...")
        short_runs.append(_measure("map_and_sign", end, end,
                                   _clone(short, BENCH_DIR / "work-short-day", morning_of=end, key=key), key))
        if len(long_runs) < 2:
            long_runs.append(_measure("map_and_sign", end, end,
                                      _clone(lake, BENCH_DIR / "work-day", morning_of=end, key=key), key))
    return min(long_runs, key=_map_seconds), min(short_runs, key=_map_seconds)


def _map_seconds(run: dict) -> float:
    """A one-day run's map, checks, root, log and snapshot: the run without the day's site."""
    return run["in_run_seconds"] - run["site_seconds"]


def lake_first_day(lake: LakePaths) -> dt.date:
    days = lake.days_with_data()
    if not days:
        raise RuntimeError(f"the bench lake {lake.root} holds no day")
    return days[0]


def _keep_so_far(figures: dict, first: bool = False) -> None:
    """Each stage's figures as soon as it has them, in `results-so-far.json`: a stage that fails later (a cold
    day killed for lack of memory) loses none of the stages before it."""
    path = BENCH_DIR / "results-so-far.json"
    known = {} if first or not path.exists() else json.loads(path.read_text())
    path.write_text(json.dumps({**known, **figures}, indent=2))


def run_bench(servers: int, days: int, seed: int, shape: str = "real") -> int:
    # The real-shaped lake (devtools/synth_lists.py) under a name of its own: the toy one stays reusable.
    name = f"raw-{servers}x{days}-seed{seed}" + ("-real" if shape == "real" else "")
    source, meta = synthetic_lake(name, servers, days, seed, shape=shape)
    end = dt.date.fromisoformat(meta["end"])
    key = BENCH_DIR / "bench-signing-key.pem"
    if not key.exists():
        generate_key(key)
    first = end - dt.timedelta(days=days - 1)

    _say(f"{days}-day backfill {first} .. {end} (map + sign, one single-run backfill, fresh process) ...")
    backfill_lake = _clone(source, BENCH_DIR / "work-backfill", curated=False)
    backfill = _measure("map_and_sign", first, end, backfill_lake, key)
    _keep_so_far({"endpoints": servers, "days": days, "shape": shape, "backfill_30_days": backfill}, first=True)

    _say(f"one day {end} (every map asset + root; the days before already built, signed and exported) ...")
    day_lake = _clone(backfill_lake, BENCH_DIR / "work-day", morning_of=end, key=key)
    one_day = _measure("map_and_sign", end, end, day_lake, key)
    _keep_so_far({"one_day": one_day})
    _say(f"the floor of {end}: what the day reads and writes, in plain DuckDB and pyarrow ...")
    floor_dir = BENCH_DIR / "work-floor"
    if floor_dir.exists():  # the day's site in it: a quarter of a million files, set aside, not removed
        set_aside(floor_dir)
    os.sync()  # the day's own pages written back before the floor is timed, not while it runs
    floor = run_floor(day_lake, end, floor_dir)
    os.sync()  # the floor's pages out of the page cache before the cold day is measured, not while it runs
    _keep_so_far({"floor": floor})
    _say(f"{end} again, cold: after a method change, no list known ...")
    cold_lake = cold_morning(_clone(backfill_lake, BENCH_DIR / "work-cold", morning_of=end, key=key), end, key)
    cold = _measure("map_and_sign", end, end, cold_lake, key)
    _keep_so_far({"cold_day": cold})
    _say(f"{end} again, after a change of the risk rules alone: every list new, its token counts taken over ...")
    rules_lake = rules_changed_morning(_clone(backfill_lake, BENCH_DIR / "work-rules", morning_of=end, key=key), end,
                                       key)
    rules = _measure("map_and_sign", end, end, rules_lake, key)
    lake_figures = {**flat_figures(one_day, floor, cold, rules), **shape_figures(day_lake, end)}

    # Past the 60-day lookback: does a day cost more the more days came before it? The same last day, over
    # the same raw files and endpoints, in this lake and in one that began 30 days before it.
    short: dict | None = None
    if days >= 60:
        one_day, short = _same_day_shorter_history(source, backfill_lake, end, key, one_day)

    _say(f"verify and log check on the signed {days}-day lake, against openssl dgst -sha256 over the same files ...")
    verifying = _verify_figures(backfill_lake, key)

    results = {
        "verify": verifying,
        "endpoints": servers, "days": days, "probe_rows": meta["probe_rows"],
        "synth_seconds": meta.get("synth_seconds"),
        "one_day": one_day, "backfill_30_days": backfill,
        "floor": floor, "cold_day": cold, "rules_day": rules, "lake_figures": lake_figures, "shape": shape,
        "one_day_after_29_days": short,  # the same day in the lake that began 30 days before it
        "cores": os.cpu_count(),
    }
    (BENCH_DIR / "results.json").write_text(json.dumps(results, indent=2))
    _print_results(results, meta, end)
    record("lake", results)
    return 0


def _print_results(results: dict, meta: dict, end: dt.date) -> None:
    servers, days = results["endpoints"], results["days"]
    one_day, backfill, short = results["one_day"], results["backfill_30_days"], results["one_day_after_29_days"]
    lake_figures, floor, verifying = results["lake_figures"], results["floor"], results["verify"]
    print()
    reports = f", {meta['report_rows']:,} agent reports" if meta.get("report_rows") else ""
    print(f"sevenmaps bench: {servers:,} endpoints x {days} days ({meta['probe_rows']:,} probe rows{reports}), "
          f"{os.cpu_count()} cores")
    if meta.get("synth_seconds"):
        print(f"  synth (probes, registry, reports)      {meta['synth_seconds']:8.1f} s")
    print(f"  one day through Dagster: wall          {one_day['wall_seconds']:8.1f} s   "
          f"(in-run {one_day['in_run_seconds']:.1f} s, of which the site {one_day['site_seconds']:.1f} s)   "
          f"peak RSS {one_day['peak_rss_mb']:,.0f} MB ({one_day.get('peak_during', 'not recorded')})")
    print(f"  {days:>2}-day backfill through Dagster: wall  {backfill['wall_seconds']:8.1f} s   "
          f"(in-run {backfill['in_run_seconds']:.1f} s, of which the newest day's site "
          f"{backfill['site_seconds']:.1f} s)   peak RSS {backfill['peak_rss_mb']:,.0f} MB "
          f"({backfill.get('peak_during', 'not recorded')})")
    slowest = ", ".join(f"{k} {v:.2f}" for k, v in list(one_day["step_seconds"].items())[:6])
    print(f"  one day's slowest steps (s)            {slowest}")
    builds = ", ".join(f"{k} {v:.2f}" for k, v in list(one_day.get("build_seconds", {}).items())[:8])
    print(f"  ... its slowest builds (s, 2 at a time) {builds}")
    print_floor(lake_figures, floor)
    peaks = [(what, r) for what, r in (("the cold day", results.get("cold_day")),
                                       ("the rules day", results.get("rules_day"))) if r and "peak_during" in r]
    if peaks:
        print("  where the peaks fell                   " + "; ".join(
            f"{what} {r['peak_rss_mb']:,.0f} MB ({r['peak_during']})" for what, r in peaks))
    print(f"  backfill per day (in-run)              {backfill['in_run_seconds'] / days:8.2f} s")
    if short:
        late, early = _map_seconds(one_day), _map_seconds(short)
        print(f"  day {end}: {days - 1} days before / 29   {late:8.2f} s / {early:.2f} s = {late / early:.2f} x   "
              f"(map, checks, root; same raw files; peak RSS {one_day['peak_rss_mb']:,.0f} / "
              f"{short['peak_rss_mb']:,.0f} MB)")
        short_builds = short.get("build_seconds", {})
        grew = sorted(((one_day.get("build_seconds", {}).get(k, 0) - v, k) for k, v in short_builds.items()),
                      reverse=True)[:5]
        print("  builds that cost more with more days  " + ", ".join(f"{k} {d:+.2f}" for d, k in grew))
    v = verifying
    print(f"  sevenmaps verify (pinned key, in-run)  {v['verify_seconds']:8.2f} s   ({v['files']:,} files, "
          f"{v['bytes'] / 1e9:.2f} GB, {v['days']} days; ok={v['verify_ok']})")
    print(f"  sevenmaps log check (in-run)           {v['log_check_seconds']:8.2f} s   "
          f"(log size {v['log_size']:,}, {v['tiles']} tile files; ok={v['log_check_ok']})")
    print(f"  openssl dgst -sha256, the same files   {v['openssl_seconds']:8.2f} s   "
          f"(verify / openssl {v['verify_to_openssl']:.2f} x; verify hashes "
          f"{v['hash_workers']} files at once; medians of {v['rounds']} interleaved runs)")
    print(f"  sha256sum (coreutils), the same files  {v['sha256sum_seconds']:8.2f} s   "
          f"(verify / sha256sum {v['verify_seconds'] / v['sha256sum_seconds']:.2f} x; no SHA extensions: "
          "the floor before issue 38)")
    print(f"figures written to {BENCH_DIR / 'results.json'}")


def _verify_figures(lake, key: Path, rounds: int = 3) -> dict:
    """`sevenmaps verify` and `log check` side by side with `openssl dgst -sha256` over the same covered files
    (OpenSSL's SHA-256, with the CPU's SHA extensions: the floor; verify's hashlib is the same code), the
    median of `rounds` interleaved runs of each; and `sha256sum` once (coreutils has no SHA extensions: the
    floor before issue 38, some 3x slower, kept to compare with the figures measured against it)."""
    lake = lake if isinstance(lake, LakePaths) else LakePaths.at(lake)
    trust = Trust(load_private_key(key, lake).public_key(), "the bench key", pinned=True)
    paths = [str(lake.root / line[66:]) for doc in sorted(lake.roots_dir.glob("day=*.json"))
             for line in json.loads(doc.read_text())["lines"]]

    def hash_with(command: list[str]) -> float:
        t = time.perf_counter()
        for i in range(0, len(paths), 2000):
            subprocess.run([*command, *paths[i:i + 2000]], check=True, stdout=subprocess.DEVNULL)
        return time.perf_counter() - t

    verify_runs, openssl_runs = [], []
    for n in range(rounds):  # alternately first, so neither always meets the files cold
        if n % 2:
            openssl_runs.append(hash_with(["openssl", "dgst", "-sha256"]))
        t = time.perf_counter()
        report = verify_lake(lake, trust)
        verify_runs.append(time.perf_counter() - t)
        if not n % 2:
            openssl_runs.append(hash_with(["openssl", "dgst", "-sha256"]))
    t = time.perf_counter()
    log_report, tiles = check_log_only(lake, trust)
    log_seconds = time.perf_counter() - t
    verify_seconds, openssl_seconds = statistics.median(verify_runs), statistics.median(openssl_runs)
    return {"verify_seconds": verify_seconds, "log_check_seconds": log_seconds, "openssl_seconds": openssl_seconds,
            "verify_to_openssl": verify_seconds / openssl_seconds, "sha256sum_seconds": hash_with(["sha256sum"]),
            "rounds": rounds, "hash_workers": os.cpu_count() or 1,
            "files": len(paths), "bytes": sum(os.path.getsize(p) for p in paths), "days": len(report.days_verified),
            "verify_ok": report.ok, "log_check_ok": log_report.ok, "tiles": tiles,
            "log_size": log_report.checkpoint.size if log_report.checkpoint else 0}


def child_main(argv: list[str]) -> None:
    """One measured run (`_measure`'s child): its figures as the last line of standard output."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--child", nargs=5, metavar=("JOB", "FIRST", "LAST", "LAKE", "KEY"), required=True)
    job, first, last, lake, key = parser.parse_args(argv).child
    print(json.dumps(_child_run(job, dt.date.fromisoformat(first), dt.date.fromisoformat(last), Path(lake),
                                Path(key))))


if __name__ == "__main__":
    child_main(sys.argv[1:])
