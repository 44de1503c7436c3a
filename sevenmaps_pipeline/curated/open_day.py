"""The open day, as it lands: after each slice, the day's daily_status, tool facts, tools and tool changes of
the endpoints checked so far, built by the day's own builders into a provisional build (docs/operations.md,
"The open day"). Never signed, exported or published as a day: the day is built and signed as always once
it ends, and the map's server reads a provisional build only while it is newer than the latest built day.

A build is written whole in `provisional/builds/<id>/` and then `provisional/current` is pointed at it
(a link swapped by rename), so a reader sees one build or the next, never half of one; the build before the
current one is kept, so a reader that opened it can finish.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import shutil
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..lake.parquet_io import write_parquet
from ..lake.paths import LakePaths, OpenDayLake
from .day import build_day

# The day assets a provisional build runs, in graph order (curated/day.py DAY_GRAPH): what the map's answers
# read of the day as it lands; the rest (history, categories, rankings, incidents) wait for the whole day.
OPEN_DAY_ASSETS = ("daily_status", "tool_facts", "tools", "tool_changes")
# The curated tables those assets write, each bound by the map's server from the current build.
OPEN_DAY_TABLES = ("daily_status", "tool_lists", "tool_facts", "tools", "tool_changes")
MANIFEST = "open_day.json"
# Codes a check of the day decides; an endpoint without one yet (n: not checked so far, or not fairly) keeps
# the latest built day's status.
DECIDED_CODES = ("o", "a", "p", "d")
# Builds kept: the current one and the one before it (a reader may still be answering from it).
KEEP_BUILDS = 2


class OpenDayError(RuntimeError):
    """A provisional build that could not be made (its line says which table and why)."""


@dataclass(frozen=True)
class OpenDay:
    """One provisional build of an open day."""

    day: dt.date
    folder: Path
    build_id: str
    built_at: dt.datetime
    slices_through: str | None  # the slice (YYYY-MM-DD-HH:00) whose landing started the build
    endpoints_checked: int
    last_check_at: dt.datetime | None
    probe_files: int

    def file(self, table: str) -> Path:
        return self.folder / "curated" / table / f"day={self.day.isoformat()}" / "part-0.parquet"

    def files(self, table: str) -> list[Path]:
        path = self.file(table)
        return [path] if path.is_file() else []

    def served(self) -> dict[str, Any]:
        """What an answer that used this build says of it."""
        return {"day": self.day.isoformat(), "slices_through": self.slices_through,
                "last_check_at": self.last_check_at.isoformat() if self.last_check_at else None,
                "built_at": self.built_at.isoformat(timespec="seconds"),
                "endpoints_checked": self.endpoints_checked, "build": self.build_id,
                "note": "provisional: the open day's checks so far, never signed; the day is built and signed "
                        "once it ends"}


def _manifest(open_day: OpenDay) -> dict[str, Any]:
    return {"day": open_day.day.isoformat(), "build": open_day.build_id,
            "built_at": open_day.built_at.isoformat(), "slices_through": open_day.slices_through,
            "endpoints_checked": open_day.endpoints_checked,
            "last_check_at": open_day.last_check_at.isoformat() if open_day.last_check_at else None,
            "probe_files": open_day.probe_files, "tables": list(OPEN_DAY_TABLES)}


def read_open_day(folder: Path) -> OpenDay | None:
    """The build in `folder` (None when it has no readable manifest: a build that never finished)."""
    try:
        doc = json.loads((folder / MANIFEST).read_text())
        return OpenDay(day=dt.date.fromisoformat(doc["day"]), folder=folder, build_id=doc["build"],
                       built_at=dt.datetime.fromisoformat(doc["built_at"]), slices_through=doc.get("slices_through"),
                       endpoints_checked=int(doc["endpoints_checked"]),
                       last_check_at=(dt.datetime.fromisoformat(doc["last_check_at"]) if doc.get("last_check_at")
                                      else None),
                       probe_files=int(doc.get("probe_files") or 0))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def current_open_day(lake: LakePaths) -> OpenDay | None:
    """The newest provisional build (whatever its day), resolved to its own folder so a reader keeps reading
    that build even after `current` moves on."""
    link = lake.provisional_dir / "current"
    try:
        target = (lake.provisional_dir / os.readlink(link)).resolve()
    except OSError:
        return None
    return read_open_day(target)


def _checked_so_far(lake: OpenDayLake, day: dt.date) -> tuple[int, dt.datetime | None]:
    """Keep in the build's daily_status only the endpoints a check of the day decided so far; the others
    keep the latest built day's status wherever the build is read."""
    path = lake.curated_file("daily_status", day)
    table = pq.read_table(path)
    start = dt.datetime.combine(day, dt.time(), dt.UTC)
    checked = table.column("checked_at")
    decided = pc.and_(pc.is_in(table.column("code"), value_set=pa.array(DECIDED_CODES)),
                      pc.fill_null(pc.greater_equal(checked, pa.scalar(start, checked.type)), False))
    kept = table.filter(decided)
    write_parquet(lake, path, kept)
    last = pc.max(kept.column("checked_at")).as_py() if kept.num_rows else None
    return kept.num_rows, last


def build_open_day(lake: LakePaths, day: dt.date, slice_key: str | None = None,
                   now: dt.datetime | None = None) -> OpenDay:
    """Build the open day `day` from the slices landed so far, and make it the current provisional build.
    Refused (OpenDayError) for a day the lake has already built: the day itself is then what answers read."""
    if lake.curated_file("daily_status", day).is_file():
        raise OpenDayError(f"{day} is built (curated/daily_status/day={day}): nothing provisional to build")
    started = time.perf_counter()
    built_at = now or dt.datetime.now(dt.UTC)
    build_id = f"{day.isoformat()}T{built_at:%H%M%S}-{uuid.uuid4().hex[:6]}"
    builds = lake.provisional_dir / "builds"
    folder = builds / build_id
    folder.mkdir(parents=True)
    try:
        overlay = OpenDayLake(lake.root, day, folder)
        _build(overlay, day, OPEN_DAY_ASSETS[:1])
        checked, last_check = _checked_so_far(overlay, day)
        _build(overlay, day, OPEN_DAY_ASSETS[1:])
        probe_files = len(lake.raw_files("probes", day))
        open_day = OpenDay(day, folder, build_id, built_at, slice_key, checked, last_check, probe_files)
        (folder / MANIFEST).write_text(json.dumps({**_manifest(open_day),
                                                   "seconds": round(time.perf_counter() - started, 3)},
                                                  indent=1) + "\n")
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    _point_current(lake, build_id)
    _prune(lake, build_id)
    return open_day


def _build(overlay: OpenDayLake, day: dt.date, assets: tuple[str, ...]) -> None:
    report = build_day(overlay, day, assets)
    for asset, exc in report.failed.items():
        raise OpenDayError(f"the open day {day}: {asset} failed ({type(exc).__name__}: {exc})") from exc


def _point_current(lake: LakePaths, build_id: str) -> None:
    tmp = lake.provisional_dir / f".current-{uuid.uuid4().hex[:8]}"
    os.symlink(f"builds/{build_id}", tmp)
    os.replace(tmp, lake.provisional_dir / "current")


def _prune(lake: LakePaths, current: str) -> None:
    """Keep the current build and the one before it; a build without a manifest (one that failed, or is
    being written by another run) is left unless it is older than a day."""
    builds = lake.provisional_dir / "builds"
    finished = sorted((p for p in builds.iterdir() if (p / MANIFEST).is_file()), key=lambda p: p.stat().st_mtime)
    keep = {current} | {p.name for p in finished[-KEEP_BUILDS:]}
    stale_unfinished = time.time() - 86_400
    for folder in builds.iterdir():
        if folder.name in keep:
            continue
        if (folder / MANIFEST).is_file() or folder.stat().st_mtime < stale_unfinished:
            with contextlib.suppress(FileNotFoundError):
                shutil.rmtree(folder)


__all__ = ["OPEN_DAY_ASSETS", "OPEN_DAY_TABLES", "OpenDay", "OpenDayError", "build_open_day", "current_open_day",
           "read_open_day"]
