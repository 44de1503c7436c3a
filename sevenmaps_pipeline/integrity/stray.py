"""What sits beside a lake's signed files without being one of them (docs/verifying.md, "4. `sevenmaps verify`").

A reader of the lake (the warehouse's views, DuckDB's `day=*` globs, pandas) reads every folder of a table, so
a folder or file no root covers can pass data off as signed while each root still matches its own files: a
`day=2026-11-30.bak` folder, a folder for a day before signing began, a hidden `.part-1.parquet` or a link to a
folder inside a signed day's folder. Each is named here, so that verify fails on it. Writers leave nothing such
in a signed day: temp files are hidden only while they are written, and a day is signed after its last write.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Iterator
from pathlib import Path

from ..lake.paths import COVERED_RAW, LakePaths, folder_day


def table_folders(lake: LakePaths) -> list[Path]:
    """The folders whose `day=` folders the roots cover: each covered raw input and every curated table."""
    folders = [lake.root / "raw" / kind for kind in COVERED_RAW]
    curated = lake.root / "curated"
    if curated.is_dir():
        folders += [entry for entry in sorted(curated.iterdir()) if entry.is_dir()]
    return [folder for folder in folders if folder.is_dir()]


def stray_paths(lake: LakePaths, signed: set[dt.date]) -> Iterator[tuple[dt.date | None, str, str]]:
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
                for inner, why in _uncovered_in(Path(entry.path)):
                    yield day, inner.relative_to(lake.root).as_posix(), why


def uncovered_in_day(lake: LakePaths, day: dt.date) -> list[tuple[str, str]]:
    """(path relative to the lake, why) of what one day's folders hold that its root's lines cannot cover."""
    return [(path.relative_to(lake.root).as_posix(), why) for folder in table_folders(lake)
            if (folder / f"day={day.isoformat()}").is_dir()
            for path, why in _uncovered_in(folder / f"day={day.isoformat()}")]


# A write in flight (lake/parquet_io.py): `.<file>.<uuid hex>.tmp`, or a build's `.<file>.<uuid hex>.spill` folder.
# A reader's glob of the folder's files (`*.parquet`) never takes them, and a write still running when its day is
# signed is refused when it ends (a signed day is frozen), so they are no part of the day and no stray either.
_IN_FLIGHT = re.compile(r"\..+\.[0-9a-f]{32}\.(?:tmp|spill)")


def _uncovered_in(folder: Path) -> Iterator[tuple[Path, str]]:
    """What a signed day's folder holds that no line of its root can: the lines cover the regular files (links to
    files taken) outside hidden names, walked without following links to folders (integrity/manifest.py)."""
    for top, dirs, names in os.walk(folder):
        for name in sorted(dirs):
            path = Path(top) / name
            if name.startswith(".") and not _IN_FLIGHT.fullmatch(name):
                yield path, "a hidden folder in a signed day's folder"
            elif path.is_symlink():
                yield path, "a link to a folder in a signed day's folder"
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in sorted(names):
            path = Path(top) / name
            if name.startswith(".") and not _IN_FLIGHT.fullmatch(name):
                yield path, "a hidden file in a signed day's folder"
            elif not name.startswith(".") and not path.is_file():
                yield path, "neither a file nor a folder (a broken link, a socket, a device)"
