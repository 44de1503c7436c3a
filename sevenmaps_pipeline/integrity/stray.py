"""What sits beside a lake's signed files without being one of them (docs/verifying.md, "4. `sevenmaps verify`").

A reader of the lake (the warehouse's views, DuckDB's `day=*` globs, pandas) reads every folder of a table, so
a folder or file no root covers can pass data off as signed while each root still matches its own files: a
`day=2026-11-30.bak` folder, a folder for a day before signing began, a hidden `.part-1.parquet` or a link to a
folder inside a signed day's folder. Each is named here, so that verify fails on it. Writers leave nothing such
in a signed day: temp files are hidden only while they are written, and a day is signed after its last write.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

from ..lake.parquet_io import STALE_SECONDS
from ..lake.paths import COVERED_RAW, LakePaths, folder_day


def within_lake(lake: LakePaths, path: Path) -> bool:
    """Whether `path` under the lake's root is what it names, through no link below the root (the root itself may be
    one): signing covers only what lies in the lake, and makes only that read-only."""
    return os.path.realpath(path) == os.path.join(os.path.realpath(lake.root), path.relative_to(lake.root))


def table_folders(lake: LakePaths) -> list[Path]:
    """The folders whose `day=` folders the roots cover: each covered raw input and every curated table."""
    folders = [lake.root / "raw" / kind for kind in COVERED_RAW]
    curated = lake.root / "curated"
    if curated.is_dir():
        folders += [entry for entry in sorted(curated.iterdir()) if entry.is_dir()]
    return [folder for folder in folders if folder.is_dir()]


def stray_paths(lake: LakePaths, signed: set[dt.date],
                now: float | None = None) -> Iterator[tuple[dt.date | None, str, str]]:
    """(day or None, path relative to the lake, why) for each entry beside the signed files: in a table's folder,
    anything but a `day=YYYY-MM-DD` folder; a day's folder before the first signed day (a day within the signed
    days with no root is the chain's gap, named by verify as such); in a signed day's folder, a hidden entry, a
    link to a folder or anything that is no regular file (which the roots' lines leave out and readers may still
    read)."""
    if not signed:
        return
    first = min(signed)
    for folder in table_folders(lake):
        for entry in sorted(os.scandir(folder), key=lambda e: e.name):
            rel = Path(entry.path).relative_to(lake.root).as_posix()
            day = folder_day(entry.name)
            if day is None or entry.is_symlink() or not entry.is_dir():
                yield None, rel, "not a day's folder (day=YYYY-MM-DD)"
            elif day < first:
                yield day, rel, f"a folder for a day before the first signed day {first}, which no root covers"
            elif day in signed:
                for inner, why in _uncovered_in(Path(entry.path), now):
                    yield day, inner.relative_to(lake.root).as_posix(), why


def uncovered_in_day(lake: LakePaths, day: dt.date, now: float | None = None) -> list[tuple[str, str]]:
    """(path relative to the lake, why) of what one day's folders hold that its root's lines cannot cover."""
    found = []
    for folder in table_folders(lake):
        day_folder = folder / f"day={day.isoformat()}"
        if not within_lake(lake, folder):  # `raw/origins` or `curated/x` a link: its days lie elsewhere (helper-86)
            found.append((folder.relative_to(lake.root).as_posix(), "a link in place of a table's folder"))
        elif day_folder.is_symlink():  # what it holds lies elsewhere (verify names it as no day's folder)
            found.append((day_folder.relative_to(lake.root).as_posix(), "a link in place of a day's folder"))
        elif day_folder.is_dir():
            found += [(path.relative_to(lake.root).as_posix(), why) for path, why in _uncovered_in(day_folder, now)]
    return found


# A write in flight (lake/parquet_io.py): `.<file>.<uuid hex>.tmp`, or a build's `.<file>.<uuid hex>.spill` folder
# (a rebuild of a signed day writes one beside the file it compares). A reader's glob of the day's files
# (`part-0.parquet`, `*.parquet`) never takes them, so for as long as a write may run they are no part of the day.
# One older than that is a crashed write's (the writers sweep such) or no write's at all, and a glob of every name
# (`day=*/*`, `**`) would read it: a stray. Writers and signing sweep their own (lake/parquet_io.py STALE_SECONDS).
_IN_FLIGHT = re.compile(r"\..+\.[0-9a-f]{32}\.(?:tmp|spill)")


def sweep_crashed_writes(lake: LakePaths, now: float | None = None) -> list[str]:
    """Remove what verify names a crashed write's leftover (below: a writer's temp file or spill folder, nothing
    in it changed for an hour) from every `day=` folder of every covered table, links never followed; the paths
    removed, relative to the lake. Any other hidden entry is left for verify to name (integrity/roots.py
    remove_leftover_temps runs this at every signing and `sevenmaps log sync`)."""
    removed = []
    for folder in table_folders(lake):
        if not within_lake(lake, folder):
            continue
        for day in (Path(e.path) for e in os.scandir(folder) if e.is_dir(follow_symlinks=False)):
            for entry in sorted(os.scandir(day), key=lambda e: e.name):
                path = Path(entry.path)
                if not _IN_FLIGHT.fullmatch(entry.name) or _in_flight(path, now):
                    continue
                with contextlib.suppress(OSError):
                    if entry.is_dir(follow_symlinks=False):
                        shutil.rmtree(path)
                    else:
                        path.unlink()
                    removed.append(path.relative_to(lake.root).as_posix())
    return removed


def _in_flight(path: Path, now: float | None) -> bool:
    if not _IN_FLIGHT.fullmatch(path.name):
        return False
    try:
        changed = path.lstat().st_ctime
        if path.is_dir() and not path.is_symlink():  # a spill folder's files are read long after it last changed
            changed = max([changed, *(e.stat(follow_symlinks=False).st_ctime for e in os.scandir(path))])
        return changed > (time.time() if now is None else now) - STALE_SECONDS
    except OSError:
        return True  # gone meanwhile: its write ended


def stray_roots(roots_dir: Path, base: Path) -> Iterator[tuple[str, str]]:
    """(path relative to `base`, the lake's or a snapshot's folder, and why) of each entry of `roots_dir` that is no
    root document (`day=YYYY-MM-DD.json` of a date): a reader's `day=*.json` would take `day=2026-12-05.v2.json` for
    a root. Hidden names (the signer's lock, a write's temp) are no reader's."""
    if not roots_dir.is_dir():
        return
    for entry in sorted(os.scandir(roots_dir), key=lambda e: e.name):
        if entry.name.startswith("."):
            continue
        is_root = entry.name.endswith(".json") and folder_day(entry.name[:-5]) is not None
        if not is_root or entry.is_symlink() or not entry.is_file():
            yield Path(entry.path).relative_to(base).as_posix(), "not a root document in roots/"


def _uncovered_in(folder: Path, now: float | None = None) -> Iterator[tuple[Path, str]]:
    """What a signed day's folder holds that no line of its root can: the lines cover the regular files outside
    hidden names, walked without following links to folders (integrity/manifest.py); a link to a file is refused
    too (the key file linked from a raw folder was made world-readable by signing)."""
    for top, dirs, names in os.walk(folder):
        for name in sorted(dirs):
            path = Path(top) / name
            if _IN_FLIGHT.fullmatch(name) and not _in_flight(path, now):
                yield path, ("a crashed build's spill folder in a signed day's folder, older than an hour (no signed "
                             "file changed): the next signing run or `sevenmaps log sync` removes it")
            elif name.startswith(".") and not _in_flight(path, now):
                yield path, "a hidden folder in a signed day's folder (a write's older than an hour, or none)"
            elif path.is_symlink():
                yield path, "a link to a folder in a signed day's folder"
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in sorted(names):
            path = Path(top) / name
            if _IN_FLIGHT.fullmatch(name) and not _in_flight(path, now):
                yield path, ("a crashed write's temp file in a signed day's folder, older than an hour (no signed file "
                             "changed; a glob of every name would read it): the next signing run or `sevenmaps log "
                             "sync` removes it")
            elif name.startswith(".") and not _in_flight(path, now):
                yield path, "a hidden file in a signed day's folder (a write's older than an hour, or none)"
            elif not name.startswith(".") and path.is_symlink():  # signing made its file, wherever, read-only
                yield path, "a link to a file in a signed day's folder (the file lies outside the day)"
            elif not name.startswith(".") and not path.is_file():
                yield path, "neither a file nor a folder (a broken link, a socket, a device)"
