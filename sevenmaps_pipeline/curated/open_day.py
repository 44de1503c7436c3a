"""The open day, as it lands: after each slice, the day's daily_status, tool facts, tools and tool changes of
the endpoints checked so far, built by the day's own builders into a provisional build (docs/operations.md,
"The open day"). Never signed, exported or published as a day: the day is built and signed as always once
it ends, and the map's server reads a provisional build only while it is newer than the latest built day.

A build is written whole in `provisional/builds/<id>/` and then its day's link `provisional/day=D` (and
`provisional/current`, while D is the newest day with a build) is pointed at it, swapped by rename and only
ever forward (a build that began later is never replaced by one that began earlier), so a reader sees one
build or the next, never half of one; a day's builds before are kept a while, so a reader that opened one
can finish. Once a day is built, its builds go.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import shutil
import time
import uuid
from collections.abc import Iterator
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
    # The order builds began in (`_begin`), which orders them, never `built_at`: the wall clock can be stepped
    # back (docs/operations.md, "The open day"). -1 in a manifest written before it was kept.
    sequence: int = -1

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
            "probe_files": open_day.probe_files, "sequence": open_day.sequence, "tables": list(OPEN_DAY_TABLES)}


def read_open_day(folder: Path) -> OpenDay | None:
    """The build in `folder` (None when it has no readable manifest: a build that never finished)."""
    try:
        doc = json.loads((folder / MANIFEST).read_text())
        return OpenDay(day=dt.date.fromisoformat(doc["day"]), folder=folder, build_id=doc["build"],
                       built_at=dt.datetime.fromisoformat(doc["built_at"]), slices_through=doc.get("slices_through"),
                       endpoints_checked=int(doc["endpoints_checked"]),
                       last_check_at=(dt.datetime.fromisoformat(doc["last_check_at"]) if doc.get("last_check_at")
                                      else None),
                       probe_files=int(doc.get("probe_files") or 0), sequence=int(doc.get("sequence", -1)))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _linked(lake: LakePaths, link: Path) -> OpenDay | None:
    """The build a link points to, resolved to its own folder, so a reader keeps reading that build even
    after the link moves on (None: no link, a dangling one, or a build without a manifest)."""
    try:
        target = (lake.provisional_dir / os.readlink(link)).resolve()
    except OSError:
        return None
    return read_open_day(target)


def day_link(lake: LakePaths, day: dt.date) -> Path:
    return lake.provisional_dir / f"day={day.isoformat()}"


def current_open_day(lake: LakePaths) -> OpenDay | None:
    """The newest provisional build of the newest day that has one."""
    return _linked(lake, lake.provisional_dir / "current")


def open_days(lake: LakePaths, after: dt.date) -> list[OpenDay]:
    """The latest build of every day after `after` that has one, oldest day first: the day that just ended
    (until its map is built, at 00:10) and the open day, whose checks answers read."""
    folder = lake.provisional_dir
    found = []
    if folder.is_dir():
        for link in sorted(folder.glob("day=*")):
            try:
                day = dt.date.fromisoformat(link.name[4:])
            except ValueError:
                continue
            if day > after and (build := _linked(lake, link)) is not None and build.day == day:
                found.append(build)
    return found


def links_now(lake: LakePaths) -> tuple[tuple[str, str], ...]:
    """Where every link of provisional/ points now: what a reader compares to know a new build landed."""
    folder = lake.provisional_dir
    out = []
    if folder.is_dir():
        for link in sorted([*folder.glob("day=*"), folder / "current"]):
            with contextlib.suppress(OSError):
                out.append((link.name, os.readlink(link)))
    return tuple(out)


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
    """Build the open day `day` from the slices landed so far, and make it the day's provisional build (and
    the current one, unless a later day has one). Refused (OpenDayError) for a day the lake has already
    built: the day itself is then what answers read.

    A day before it that has ended but is not built yet (the map of a day runs at 00:10) is read from its own
    latest provisional build, so the open day's changes compare with that day's checks, never with the day
    before it (which would report that day's changes a second time)."""
    if lake.curated_file("daily_status", day).is_file():
        raise OpenDayError(f"{day} is built (curated/daily_status/day={day}): nothing provisional to build")
    started = time.perf_counter()
    built_at = now or dt.datetime.now(dt.UTC)
    build_id = f"{day.isoformat()}T{built_at:%H%M%S}-{uuid.uuid4().hex[:6]}"
    folder = lake.provisional_dir / "builds" / build_id
    folder.mkdir(parents=True)
    try:
        sequence = _begin(lake)
        built = lake.latest_built_day()
        earlier = tuple((b.day, b.folder) for b in open_days(lake, after=built or dt.date.min) if b.day < day
                        and not lake.curated_file("daily_status", b.day).is_file())
        overlay = OpenDayLake(lake.root, day, folder, earlier)
        _build(overlay, day, OPEN_DAY_ASSETS[:1])
        checked, last_check = _checked_so_far(overlay, day)
        _build(overlay, day, OPEN_DAY_ASSETS[1:])
        probe_files = len(lake.raw_files("probes", day))
        open_day = OpenDay(day, folder, build_id, built_at, slice_key, checked, last_check, probe_files, sequence)
        (folder / MANIFEST).write_text(json.dumps({**_manifest(open_day),
                                                   "earlier_days_read": [d.isoformat() for d, _ in earlier],
                                                   "seconds": round(time.perf_counter() - started, 3)},
                                                  indent=1) + "\n")
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    with _locked(lake):
        _point(lake, open_day)
        _prune(lake)
    return open_day


def _build(overlay: OpenDayLake, day: dt.date, assets: tuple[str, ...]) -> None:
    report = build_day(overlay, day, assets)
    for asset, exc in report.failed.items():
        raise OpenDayError(f"the open day {day}: {asset} failed ({type(exc).__name__}: {exc})") from exc


@contextlib.contextmanager
def _locked(lake: LakePaths) -> Iterator[None]:
    """One run at a time moves the links and prunes (runs of two lanes may finish builds together)."""
    with open(lake.provisional_dir / ".lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


SEQUENCE = ".sequence"


def _begin(lake: LakePaths) -> int:
    """The build's place in the order builds began in, taken before it reads anything: one more than any
    taken before (the counter file, or a linked build's, should the file be lost). Not the wall clock, which
    NTP or an operator may step back between two builds, so a later one read an earlier time and lost."""
    counter = lake.provisional_dir / SEQUENCE
    with _locked(lake):
        try:
            taken = int(counter.read_text().strip() or 0)
        except (OSError, ValueError):
            taken = 0
        links = [*lake.provisional_dir.glob("day=*"), lake.provisional_dir / "current"]
        sequence = max([taken, *(b.sequence for link in links if (b := _linked(lake, link)))]) + 1
        tmp = counter.with_name(f"{SEQUENCE}-{uuid.uuid4().hex[:8]}")
        tmp.write_text(f"{sequence}\n")
        os.replace(tmp, counter)
    return sequence


def _order(build: OpenDay) -> tuple[dt.date, int, dt.datetime]:
    return build.day, build.sequence, build.built_at


def _newer(build: OpenDay, than: OpenDay | None) -> bool:
    """Whether `build` began after `than` (a build reads everything landed when it began, so the later
    start holds at least as much): a build that finishes last never replaces a later-begun one. Began as
    `_begin` counts, whatever the wall clock said (built_at orders only builds from before it was kept)."""
    return than is None or _order(build) >= _order(than)


def _swap(lake: LakePaths, link: Path, build: OpenDay) -> None:
    tmp = lake.provisional_dir / f".link-{uuid.uuid4().hex[:8]}"
    os.symlink(f"builds/{build.build_id}", tmp)
    os.replace(tmp, link)


def _point(lake: LakePaths, build: OpenDay) -> None:
    link = day_link(lake, build.day)
    if _newer(build, _linked(lake, link)):
        _swap(lake, link, build)
    current = lake.provisional_dir / "current"
    if _newer(build, _linked(lake, current)):
        _swap(lake, current, build)


# A build younger than this is never deleted: a reader that opened it a moment ago is still answering.
KEEP_SECONDS = 600


def _prune(lake: LakePaths) -> None:
    """Delete the links of days built before the day built last, and every build that no link points to, is
    older than KEEP_SECONDS and is either of such a day or not among its day's latest KEEP_BUILDS. A build
    without a manifest (one failing, or being written by another run) is left unless older than a day."""
    folder = lake.provisional_dir
    built = lake.latest_built_day()
    cutoff = built - dt.timedelta(days=1) if built else dt.date.min
    for link in folder.glob("day=*"):
        with contextlib.suppress(ValueError):
            if dt.date.fromisoformat(link.name[4:]) <= cutoff:
                link.unlink(missing_ok=True)
    linked = {b.build_id for link in [*folder.glob("day=*"), folder / "current"] if (b := _linked(lake, link))}
    now = time.time()
    by_day: dict[dt.date, list[tuple[OpenDay, float]]] = {}
    for build_folder in (folder / "builds").iterdir():
        with contextlib.suppress(FileNotFoundError):
            age = now - build_folder.stat().st_mtime
            build = read_open_day(build_folder)
            if build is None:
                if age > 86_400:
                    shutil.rmtree(build_folder, ignore_errors=True)
                continue
            by_day.setdefault(build.day, []).append((build, age))
    for day, builds in by_day.items():
        builds.sort(key=lambda pair: _order(pair[0]))
        kept = {b.build_id for b, _ in builds[-KEEP_BUILDS:]} if day > cutoff else set()
        for build, age in builds:
            if build.build_id not in linked | kept and age > KEEP_SECONDS:
                shutil.rmtree(build.folder, ignore_errors=True)


__all__ = ["OPEN_DAY_ASSETS", "OPEN_DAY_TABLES", "OpenDay", "OpenDayError", "build_open_day", "current_open_day",
           "day_link", "links_now", "open_days", "read_open_day"]
