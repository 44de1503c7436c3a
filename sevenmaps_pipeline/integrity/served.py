"""Whether what a surface reads of signed days is still what their roots signed: what the map's server, its site
and `sevenmaps server` check before they call a day signed (docs/agents.md: every answer's `signed`). `sevenmaps
verify` checks the lake, the chain, the signatures and the log; this checks what one opened day reads: the served
day whole (every file of it, and nothing beside them), and each file of an earlier signed day it reads (its
30-day windows, the tool facts of every day), each against its day's root, whose lines must give its root and
whose signature the lake's published key must verify. So a file changed after signing, or a root edited to match
it, is never shown beside "signed" and the root's hashes.

A file's digest and a root's check are kept while the file's inode, size and change times stay the same (a write,
a rename over it or a `touch` changes the inode's ctime, which no user can set), so a server that opens the day
again after each hourly slice hashes only what changed; `stat_signature` is what it compares between requests.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..lake.paths import LakePaths, folder_day
from .keys import SigningKeyError, read_published_key, signature_valid
from .manifest import compute_root, day_files, sha256_file
from .root_docs import RootDoc, parse_root_doc
from .roots import signed_days
from .stray import uncovered_in_day

_KEPT_MAX = 100_000
_digests: dict[tuple[str, int, int, int, int], str] = {}
_roots: dict[tuple[str, int, int, int, int, str], tuple[RootDoc | None, str | None]] = {}


@dataclass(frozen=True)
class ServedRoot:
    """The root of a served day: its document when what is read of signed days holds, else why not."""

    doc: dict[str, Any] | None
    problem: str | None = None


def served_root(lake: LakePaths, day: dt.date, check_files: bool = True) -> ServedRoot:
    """The day's root document if it holds (its lines give its root, the published key verifies its signature)
    and its lines are the day's files now, nothing beside them (`check_files`; else the document only);
    ServedRoot(None, None) when the day is not signed; ServedRoot(None, why) else."""
    path = lake.root_file(day)
    if not path.is_file():
        return ServedRoot(None)
    doc, problem = _root(lake, day)
    if doc is None:
        return ServedRoot(None, problem)
    if not check_files:
        return ServedRoot(doc.raw)
    actual = _lines(lake, day)
    if actual is None:
        return ServedRoot(None, f"a file of {day} cannot be read")
    if actual != doc.lines:
        changed = sorted(set(actual) ^ set(doc.lines))
        what = changed[0].split("  ", 1)[-1] if changed else "the order of its lines"
        return ServedRoot(None, f"the files of {day} are not those its root signed ({what}; `sevenmaps verify` names "
                          "every one)")
    stray = uncovered_in_day(lake, day)
    if stray:
        return ServedRoot(None, f"{stray[0][1]}: {stray[0][0]}")
    return ServedRoot(doc.raw)


def read_files_problem(lake: LakePaths, served: dt.date, files: Iterable[Path], expected: Iterable[Path] = (),
                       every_day: Iterable[str] = ()) -> str | None:
    """Why what a signed day's answers read is not what the roots signed, or None: each file read of a day up to
    `served` has a root (the chain leaves no day before the served one unsigned) and is the file its line names;
    each of `expected` (the days of a window) that a root lists is there; and so is each file of the `every_day`
    tables that a root up to `served` lists (a file deleted is read as a day without it)."""
    for path in files:
        day = folder_day(path.parent.name)
        if day is None or day > served:
            continue
        rel = path.relative_to(lake.root).as_posix()
        if not lake.root_file(day).is_file():
            return f"{rel} is read, and no root covers its day {day}"
        doc, problem = _root(lake, day)
        if doc is None:
            return problem
        signed = next((line[:64] for line in doc.lines if line[66:] == rel), None)
        if signed is None or signed != _digest(path):
            return f"{rel} is not the file its root signed (`sevenmaps verify` names every one)"
    wanted = [path.relative_to(lake.root).as_posix() for path in expected if not path.exists()]
    tables = [f"curated/{table}/day=" for table in every_day]
    for day in (d for d in signed_days(lake) if d <= served):
        doc, problem = _root(lake, day)
        if doc is None:
            return problem
        for line in doc.lines:
            rel = line[66:]
            if (rel in wanted or rel.startswith(tuple(tables))) and not (lake.root / rel).is_file():
                return f"{rel}, which its root signed, is gone (`sevenmaps verify` names every one)"
    return None


def stat_signature(lake: LakePaths, files: Iterable[Path], days: Iterable[dt.date]) -> tuple:
    """What changes when any of these files, or the root of any of these days, is written again: compared between
    requests by a server that keeps a day open."""
    paths = [*files, *(lake.root_file(day) for day in days)]
    return tuple(_stat_key(path) for path in paths)


def _root(lake: LakePaths, day: dt.date) -> tuple[RootDoc | None, str | None]:
    """The day's root document, checked: it parses, its lines give its root, and the lake's published key verifies
    its signature (kept while the root file and the key file stay the same)."""
    path = lake.root_file(day)
    rel = path.relative_to(lake.root).as_posix()
    key = (*_stat_key(path), str(_stat_key(lake.well_known)))
    if key in _roots:
        return _roots[key]
    try:
        data = path.read_bytes()
    except OSError as exc:
        return None, f"its root {rel} cannot be read ({type(exc).__name__})"  # not kept: it may be read later
    doc, problem = parse_root_doc(data, day, rel)
    if doc is None:
        result: tuple[RootDoc | None, str | None] = (None, f"its root {rel} is not a root document ({problem})")
    elif compute_root(doc.previous_root, doc.lines) != doc.root:
        result = (None, f"its root {rel} was edited: its lines do not give its root")
    else:
        try:
            public = read_published_key(lake)
        except SigningKeyError as exc:
            result = (None, f"the lake's published key cannot be read ({exc})")
        else:
            result = (doc, None) if signature_valid(public, doc.root, doc.signature) else (
                None, f"its root {rel} is not signed by the lake's published key")
    if len(_roots) >= _KEPT_MAX:
        _roots.clear()
    _roots[key] = result
    return result


def _lines(lake: LakePaths, day: dt.date) -> list[str] | None:
    lines = []
    for path in day_files(lake, day):
        digest = _digest(path)
        if digest is None:
            return None
        lines.append(f"{digest}  {path.relative_to(lake.root).as_posix()}")
    return sorted(lines, key=lambda line: line.split("  ", 1)[1])


def _stat_key(path: Path) -> tuple[str, int, int, int, int]:
    try:
        seen = os.stat(path)
    except OSError:
        return (str(path), -1, -1, -1, -1)
    return (str(path), seen.st_ino, seen.st_size, seen.st_mtime_ns, seen.st_ctime_ns)


def _digest(path: Path) -> str | None:
    key = _stat_key(path)
    if key[1] < 0:
        return None
    if key not in _digests:
        if len(_digests) >= _KEPT_MAX:
            _digests.clear()
        try:
            _digests[key] = sha256_file(path)
        except OSError:
            return None
    return _digests[key]
