"""Whether a day's files are still those its root signed: what the map's server, its site and `sevenmaps server`
check before they call a day signed (docs/agents.md: every answer's `signed`). `sevenmaps verify` checks the lake, the
chain, the signatures and the log; this checks the one day a surface serves, its files against its root's lines,
so that a file changed after signing is never shown beside "signed" and the root's hashes.

A file's digest is kept while its inode, size and change times stay the same (a write, a rename over it or a
`touch` changes the inode's ctime, which no user can set), so a server that opens the day again after each hourly
slice hashes only what changed.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..lake.paths import LakePaths
from .manifest import day_files, sha256_file
from .root_docs import parse_root_doc
from .stray import uncovered_in_day

_KEPT_MAX = 100_000
_kept: dict[tuple[str, int, int, int, int], str] = {}


@dataclass(frozen=True)
class ServedRoot:
    """The root of a served day: its document when the day's files are those it signed, else why not."""

    doc: dict[str, Any] | None
    problem: str | None = None


def served_root(lake: LakePaths, day: dt.date, check_files: bool = True) -> ServedRoot:
    """The day's root document if it parses and its lines are the day's files now (nothing added, missing,
    changed or beside them; not checked without `check_files`); ServedRoot(None, None) when the day is not
    signed; ServedRoot(None, why) else."""
    path = lake.root_file(day)
    if not path.is_file():
        return ServedRoot(None)
    rel = path.relative_to(lake.root).as_posix()
    try:
        parsed, problem = parse_root_doc(path.read_bytes(), day, rel)
    except OSError as exc:
        return ServedRoot(None, f"its root {rel} cannot be read ({type(exc).__name__})")
    if parsed is None:
        return ServedRoot(None, f"its root {rel} is not a root document ({problem})")
    if not check_files:
        return ServedRoot(parsed.raw)
    actual = _lines(lake, day)
    if actual is None:
        return ServedRoot(None, f"a file of {day} cannot be read")
    if actual != parsed.lines:
        changed = sorted(set(actual) ^ set(parsed.lines))
        what = changed[0].split("  ", 1)[-1] if changed else "the order of its lines"
        return ServedRoot(None, f"the files of {day} are not those its root signed ({what}; `sevenmaps verify` names "
                          "every one)")
    stray = uncovered_in_day(lake, day)
    if stray:
        return ServedRoot(None, f"{stray[0][1]}: {stray[0][0]}")
    return ServedRoot(parsed.raw)


def _lines(lake: LakePaths, day: dt.date) -> list[str] | None:
    lines = []
    for path in day_files(lake, day):
        digest = _digest(path)
        if digest is None:
            return None
        lines.append(f"{digest}  {path.relative_to(lake.root).as_posix()}")
    return sorted(lines, key=lambda line: line.split("  ", 1)[1])


def _digest(path: Path) -> str | None:
    try:
        seen = os.stat(path)
        key = (str(path), seen.st_ino, seen.st_size, seen.st_mtime_ns, seen.st_ctime_ns)
        if key not in _kept:
            if len(_kept) >= _KEPT_MAX:
                _kept.clear()
            _kept[key] = sha256_file(path)
        return _kept[key]
    except OSError:
        return None
