"""`sevenmaps bench --only export`: one snapshot of the newest day of a signed 100,000-endpoint lake.

The snapshot's data files are reflinks or copies, never hard links (docs/verifying.md "Snapshots"); beside
the export's own time the bench times hard-linking and copying the same data files alone, so the share the
copies cost is seen. The signed lake is the lake part's (`.bench/work-backfill`, built through Dagster)
when it is there, else one built here with the library's builds and signing. Nothing asserts a time.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import time
from pathlib import Path

from ..curated.day import build_day
from ..integrity.keys import generate_key
from ..integrity.roots import read_root, sign_through, signed_days
from ..lake.paths import LakePaths
from ..publishing.export import copy_independent, export_snapshot
from .bench import BENCH_DIR, _clone, _say, synthetic_lake
from .bench_history import record


def signed_bench_lake(servers: int, days: int, seed: int, key: Path) -> tuple[LakePaths, dt.date]:
    """A lake of `days` signed days at `servers` endpoints, and its newest day."""
    done = LakePaths.at(BENCH_DIR / "work-backfill")
    if len(signed_days(done)) >= days:
        _say(f"reusing the lake part's signed lake {done.root}")
        return done, signed_days(done)[-1]

    source, meta = synthetic_lake(f"raw-{servers}x{days}-seed{seed}", servers, days, seed)
    end = dt.date.fromisoformat(meta["end"])
    lake = LakePaths.at(BENCH_DIR / "work-export")
    if len(signed_days(lake)) >= days:
        _say(f"reusing {lake.root}")
        return lake, signed_days(lake)[-1]
    return built_and_signed(source, lake.root, days, end, key), end


def built_and_signed(source: LakePaths, target: Path, days: int, end: dt.date, key: Path) -> LakePaths:
    """`source`'s raw files copied to `target`, its `days` days through `end` built and signed there with the
    library's builds and signing (no Dagster)."""
    if not key.exists():
        generate_key(key)
    lake = _clone(source, target, curated=False)
    started = time.perf_counter()
    for i in range(days):
        build_day(lake, end - dt.timedelta(days=days - 1 - i))
    sign_through(lake, end, key)
    _say(f"built and signed {days} days in {time.perf_counter() - started:.1f}s")
    return lake


def run_export_bench(servers: int, days: int, seed: int, repeats: int = 3) -> dict:
    lake, day = signed_bench_lake(servers, days, seed, BENCH_DIR / "bench-signing-key.pem")
    scratch = BENCH_DIR / "work-export-out"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    files = [lake.root / line[66:] for line in read_root(lake, day)["lines"]]
    how = copy_independent(files[0], scratch / "probe")
    exports: list[float] = []
    links: list[float] = []
    copies: list[float] = []
    for i in range(repeats):
        os.sync()
        t = time.perf_counter()
        result = export_snapshot(lake, day, out=scratch / f"snapshot-{i}")
        exports.append(time.perf_counter() - t)
        for kind, seconds in (("link", links), ("copy", copies)):
            target = scratch / f"{kind}-{i}"
            os.sync()
            t = time.perf_counter()
            for path in files:
                dst = target / path.relative_to(lake.root)
                dst.parent.mkdir(parents=True, exist_ok=True)
                if kind == "link":
                    os.link(path, dst)
                else:
                    copy_independent(path, dst)
            seconds.append(time.perf_counter() - t)
    shutil.rmtree(scratch, ignore_errors=True)
    return {"day": day.isoformat(), "lake": str(lake.root), "endpoints": servers, "signed_days": days,
            "files": result.files, "withheld": result.withheld, "bytes": result.bytes, "how": how,
            "export_seconds": exports, "link_seconds": links, "copy_seconds": copies, "day_files": len(files),
            "day_bytes": sum(p.stat().st_size for p in files)}


def print_export_bench(r: dict) -> None:
    print(f"sevenmaps bench export: day {r['day']} of {r['signed_days']} signed days ({r['lake']}), "
          f"{os.cpu_count()} cores")
    print(f"  one snapshot ({r['files']} data files, {r['bytes'] / 1e6:.1f} MB, {r['withheld']} withheld; "
          f"this filesystem: {r['how']})   " + " / ".join(f"{s:.2f}" for s in r["export_seconds"]) + " s")
    print(f"  the day's {r['day_files']} signed files ({r['day_bytes'] / 1e6:.1f} MB) alone: hard links "
          + " / ".join(f"{s:.3f}" for s in r["link_seconds"]) + f" s; {r['how']} "
          + " / ".join(f"{s:.3f}" for s in r["copy_seconds"]) + " s")
    record("export", r)
