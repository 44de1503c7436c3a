"""The lines of a day: `<sha256 hex>  <path relative to the lake root>` for every covered file."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import stat
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from ..lake.digests import sha256_file
from ..lake.paths import COVERED_RAW, LakePaths, day_str


def sha256_files(paths: list[Path], workers: int | None = None) -> list[str]:
    """The sha256 of each file, in the order given; `workers` files at once (default: one per core).

    Threads are enough: reading a file and hashing a block of 1 MiB both release the GIL, and hashlib is
    OpenSSL's, so each core hashes at `openssl dgst`'s speed (docs/scaling.md, "verify"). The largest files
    start first, so no big file is left to finish alone. A file that cannot be read raises as it would
    hashed one by one: the first such file in the given order, whatever order they were hashed in."""
    workers = (os.cpu_count() or 1) if workers is None else workers
    if workers <= 1 or len(paths) <= 1:
        return [sha256_file(p) for p in paths]

    def size(path: Path) -> int:
        try:
            return path.stat().st_size
        except OSError:
            return 0  # sha256_file names the problem, in its place

    largest_first = sorted(range(len(paths)), key=lambda i: -size(paths[i]))
    with ThreadPoolExecutor(max_workers=min(workers, len(paths)), thread_name_prefix="sha256") as pool:
        futures: dict[int, Future[str]] = {i: pool.submit(sha256_file, paths[i]) for i in largest_first}
        return [futures[i].result() for i in range(len(paths))]


def day_folders(lake: LakePaths, day: dt.date | str) -> list[Path]:
    """Every covered partition folder of the day: raw inputs the roots cover, and all curated tables."""
    d = day_str(day)
    folders = [lake.root / "raw" / kind / f"day={d}" for kind in COVERED_RAW]
    curated = lake.root / "curated"
    if curated.is_dir():
        folders += [table / f"day={d}" for table in sorted(curated.iterdir()) if table.is_dir()]
    return [f for f in folders if f.is_dir()]


def _regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def day_files(lake: LakePaths, day: dt.date | str) -> list[Path]:
    """Covered files of the day (hidden files, i.e. in-flight temp files, are not part of a day), in the
    order of their paths relative to the lake. Walked with os.walk rather than Path.rglob: the same files
    (links to folders not followed; a link to a file is no file of the day, never hashed: signing refuses it and
    verify names it, integrity/stray.py) at some 40% less cost (docs/scaling.md, "verify")."""
    files = []
    for folder in day_folders(lake, day):
        for top, dirs, names in os.walk(folder):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            files += [path for name in names
                      if not name.startswith(".") and _regular(path := os.path.join(top, name))]
    root = len(str(lake.root)) + 1
    return [Path(p) for p in sorted(files, key=lambda p: p[root:])]


def day_lines(lake: LakePaths, day: dt.date | str, workers: int | None = None) -> list[str]:
    return days_lines(lake, [day], workers)[0]


def days_lines(lake: LakePaths, days: list, workers: int | None = None) -> list[list[str]]:
    """The lines of each day, in the order given: every day's files hashed together (`sha256_files`), so a
    verify of many small days keeps every core busy rather than waiting at the end of each day."""
    files = [day_files(lake, day) for day in days]
    digests = iter(sha256_files([p for day in files for p in day], workers))
    out = []
    for day in files:
        lines = [f"{next(digests)}  {p.relative_to(lake.root).as_posix()}" for p in day]
        out.append(sorted(lines, key=lambda line: line.split("  ", 1)[1]))
    return out


def compute_root(previous_root: str, lines: list[str]) -> str:
    """root = sha256_hex((previous_root or "") + "\\n" + "\\n".join(lines))."""
    return hashlib.sha256(((previous_root or "") + "\n" + "\n".join(lines)).encode()).hexdigest()
