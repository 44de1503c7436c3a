"""Run a day's scan and land it: registry snapshot, probe checks and origin documents, as Parquet; and the
day's readiness runs (raw/readiness, raw/readiness_surfaces, raw/skills)."""

from __future__ import annotations

import contextlib
import datetime as dt
import gc
import logging
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.parquet as pq

from ..lake.keys import origin as origin_of
from ..lake.parquet_io import write_parquet
from ..lake.paths import LakePaths
from ..lake.schemas import (
    RAW_ORIGINS,
    RAW_PROBES,
    RAW_READINESS,
    RAW_READINESS_SURFACES,
    RAW_REGISTRY,
    RAW_SKILLS,
    conform,
)
from ..lookups.codehost import CodeHostClient, RepoFolder
from ..registry.client import fetch_snapshot
from ..registry.submissions import admitted_registry_rows
from ..rules.outcomes import OURS_TO_REDO
from .config import PROBER_VERSION, ProbeConfig
from .http import build_client
from .loop import run_prober
from .netguard import refused_address
from .origins import OriginBook
from .readiness_book import ReadinessBook
from .readiness_scan import readiness_scan
from .scan import Clock, scan
from .shards import Shard
from .slices import HOURS, check_slice_hour, in_slices, slot_hour
from .surfaces import CardBook


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class ReplayClock:
    """Demo and tests only: 'now' is `day` at noon (or at `hour`:`minute`) plus the real time elapsed, so a
    replayed scan is of that day (and a replayed slice of that hour; the demo's five-minute runs of that minute)."""

    def __init__(self, day: dt.date, hour: int = 12, minute: int = 0) -> None:
        self._start = dt.datetime.combine(day, dt.time(hour, minute), dt.UTC)
        self._t0 = time.monotonic()

    def __call__(self) -> dt.datetime:
        return self._start + dt.timedelta(seconds=time.monotonic() - self._t0)


class PastDayError(RuntimeError):
    """The past cannot be checked: a day that has passed is never probed."""


_LOG = logging.getLogger(__name__)
LAST_WRITE_SECONDS = 60.0  # how long a run's last part-file write waits for the disk before the run fails


class _DiskRefusals:
    """A sink's writes our disk refused (full, a quota, an I/O error): the rows wait in memory and the write is
    tried again `pause` seconds later; before, the first one ended the whole scan, raised again from the handler
    that landed the failing check's own row (helper-88). Only a run's last write, failing, ends it."""

    def __init__(self, day: dt.date, pause: float) -> None:
        self.day, self.pause = day, pause
        self.count = 0
        self._at: float | None = None  # time.monotonic() of the latest write refused

    def may_try(self) -> bool:
        return self._at is None or time.monotonic() - self._at >= self.pause

    def last(self, flush: Callable[[], None], waiting: Callable[[], int]) -> None:
        """A run's last write: tried again for up to `LAST_WRITE_SECONDS` before the run fails, naming the rows
        that did not land."""
        deadline = time.monotonic() + LAST_WRITE_SECONDS
        while True:
            try:
                flush()
                return
            except OSError as exc:
                if time.monotonic() >= deadline:
                    raise OSError(exc.errno, f"{waiting()} rows of {self.day} could not be written: "
                                             f"{exc.strerror or exc}") from exc
                self.count += 1
                time.sleep(min(self.pause, 5.0) or 0.5)

    def flushed(self, flush: Callable[[], None], waiting: int) -> None:
        """`flush`, or a refusal noted (`waiting` rows kept for the next try)."""
        try:
            flush()
        except OSError as exc:
            self.count += 1
            self._at = time.monotonic()
            _LOG.warning("a part file of %s could not be written (%s); its %d rows are kept and written again in "
                         "%g s", self.day, exc, waiting, self.pause)
            return
        self._at = None


class PartWriter:
    """The scan's sink: rows land as part files `<run_id>-<part>.parquet` every `flush_rows` rows or
    `flush_seconds` seconds (atomic writes), so a crash or kill mid-scan loses no finished check. A row
    that cannot be stored as it is (a value our schema cannot take) is stored as prober_error instead. A write
    our disk refuses is tried again `flush_seconds` later (_DiskRefusals)."""

    def __init__(self, lake: LakePaths, day: dt.date, run_id: str, flush_rows: int = 500,
                 flush_seconds: float = 20.0) -> None:
        self.lake, self.day, self.run_id = lake, day, run_id
        self.flush_rows, self.flush_seconds = flush_rows, flush_seconds
        self._probes: list[dict] = []
        self._origins: list[dict] = []
        self._part = 0
        self._last = time.monotonic()
        self.probe_rows = self.origin_rows = 0
        self.outcomes: dict[str, int] = {}
        self.refused = _DiskRefusals(day, flush_seconds)

    def add_probe(self, row: dict) -> None:
        self._probes.append(row)
        self.outcomes[row["outcome"]] = self.outcomes.get(row["outcome"], 0) + 1
        self._maybe_flush()

    def add_origin(self, row: dict) -> None:
        self._origins.append(row)
        self._maybe_flush()

    def waiting(self) -> int:
        """Rows not yet landed."""
        return len(self._probes) + len(self._origins)

    def _maybe_flush(self) -> None:
        due = len(self._probes) >= self.flush_rows or time.monotonic() - self._last >= self.flush_seconds
        if due and self.refused.may_try():
            self.refused.flushed(self.flush, self.waiting())

    def flush(self) -> None:
        self._last = time.monotonic()
        if not self._probes and not self._origins:
            return
        name = f"{self.run_id}-{self._part:05d}.parquet"
        # Origins first: a probe row that names a robots.txt decision never lands without it.
        # Both kept until both landed: a retry after a refused probe write writes the same name again, whole.
        if self._origins:
            write_parquet(self.lake, self.lake.raw_dir("origins", self.day) / name,
                          _table(self._origins, RAW_ORIGINS))
        if self._probes:
            write_parquet(self.lake, self.lake.raw_dir("probes", self.day) / name, _probe_table(self._probes))
        self.origin_rows += len(self._origins)
        self.probe_rows += len(self._probes)
        self._probes, self._origins = [], []
        self._part += 1


def _table(rows: list[dict], spec) -> pa.Table:
    return conform(pa.Table.from_pylist(rows, spec.schema), spec)


def _probe_table(rows: list[dict]) -> pa.Table:
    try:
        return _table(rows, RAW_PROBES)
    except (pa.ArrowException, ValueError, TypeError, OverflowError):
        kept = []
        for row in rows:
            try:
                _table([row], RAW_PROBES)
                kept.append(row)
            except (pa.ArrowException, ValueError, TypeError, OverflowError) as exc:
                safe = {k: row.get(k) for k in ("day", "check_kind", "run_id", "server_key", "server_id",
                                                 "server_name", "server_version", "remote_type", "url", "origin",
                                                 "started_at", "prober_version")}
                kept.append({**safe, "outcome": "prober_error", "handshake_ms": 0,
                             "outcome_detail": f"the check could not be stored: {type(exc).__name__}: "
                                               f"{str(exc)[:300]}"})
        return _table(kept, RAW_PROBES)


def _landed(lake: LakePaths, kind: str, day: dt.date, daily_only: bool) -> dict[str, bool]:
    """server_key -> whether a check of raw `kind` landed on `day` was not our own fault or trouble (False: only
    prober_error, not_checked, ours to redo); `daily_only`: of check_kind daily."""
    landed: dict[str, bool] = {}
    columns = ["server_key", "outcome"] + (["check_kind"] if daily_only else [])
    for path in lake.raw_files(kind, day):
        try:
            table = pq.read_table(path, columns=columns)
        except Exception:  # noqa: BLE001 - an unreadable part is quarantined later; its checks are redone
            continue
        kinds = table.column("check_kind").to_pylist() if daily_only else ["daily"] * table.num_rows
        for key, outcome, check_kind in zip(table.column("server_key").to_pylist(),
                                            table.column("outcome").to_pylist(), kinds, strict=True):
            if check_kind == "daily" and key:
                landed[key] = landed.get(key, False) or outcome not in OURS_TO_REDO
    return landed


def _daily_releases(lake: LakePaths, day: dt.date) -> dict[str, str]:
    """server_key -> the serverInfo.version its latest daily check of `day` read (probe/fragile_releases.py)."""
    latest: dict[str, tuple[dt.datetime, str]] = {}
    for path in lake.raw_files("probes", day):
        try:
            table = pq.read_table(path, columns=["server_key", "check_kind", "started_at", "server_info_version"])
        except Exception:  # noqa: BLE001 - an unreadable part is quarantined later: no release read from it
            continue
        for row in table.to_pylist():
            key, release, at = row["server_key"], row["server_info_version"], row["started_at"]
            if row["check_kind"] == "daily" and key and release and at and (key not in latest or at > latest[key][0]):
                latest[key] = (at, release)
    return {key: release for key, (_, release) in latest.items()}


def _completed(lake: LakePaths, kind: str, day: dt.date, daily_only: bool) -> set[str]:
    """server_keys with a check of raw `kind` landed on `day` that was not our own fault or trouble."""
    return {key for key, complete in _landed(lake, kind, day, daily_only).items() if complete}


def completed_checks(lake: LakePaths, day: dt.date) -> set[str]:
    """server_keys with a completed daily check landed on `day` (a prober_error or
    not_checked one is not: ours to redo)."""
    return _completed(lake, "probes", day, daily_only=True)


@dataclass
class DayScan:
    day: dt.date
    run_id: str
    registry_rows: int = 0
    probe_rows: int = 0
    origin_rows: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    resumed_from: int = 0  # endpoints that already had a completed check today (a resumed scan)
    registry_reused: bool = False
    hours: tuple[int, ...] = ()  # the slices scanned (probe/slices.py); empty: every endpoint at once


def scan_slice(lake: LakePaths, day: dt.date, hour: int, registry_url: str, config: ProbeConfig,
               clock: Clock = utc_now, control_url: str | None = None,
               progress: Callable[[int, int], None] | None = None, flush_rows: int = 500,
               shard: Shard | None = None) -> DayScan:
    """The slice of the day's scan for UTC `hour`: only within that hour (SliceMissedError otherwise), only
    the endpoints whose slot it is that day (probe/slices.py), and with `shard` only its hosts'. The day's
    first slice takes the day's registry snapshot; the others reuse it."""
    check_slice_hour(day, hour, clock())
    return scan_day(lake, day, registry_url, config, clock, control_url, progress, flush_rows, hours=(hour,),
                    shard=shard)


class SnapshotMissingError(RuntimeError):
    """A shard of a scan runs over the day's registry snapshot, which the day's first step takes."""


def _check_open_day(day: dt.date, clock: Clock) -> None:
    today = clock().date()
    if day != today:
        raise PastDayError(f"{day} is not today ({today} UTC): a day that has passed is never probed, "
                           "and a future one cannot be")


async def _snapshot_rows(lake: LakePaths, day: dt.date, registry_url: str, config: ProbeConfig,
                         clock: Clock) -> tuple[list[dict], bool]:
    """The day's registry snapshot (rows, reused): the landed one, or read from the registry and landed."""
    registry_path = lake.registry_file(day)
    if registry_path.is_file():

        return pq.read_table(registry_path).to_pylist(), True
    async with build_client(config) as client:
        snapshot = await fetch_snapshot(client, registry_url, day, clock(), opted_out=config.opted_out_hosts,
                                        host_map=config.host_map or None, final=refused_address)

    rows = snapshot.rows  # and the admitted submissions the registry does not list (registry/submissions.py)
    rows += admitted_registry_rows(lake, day, clock(), {r["server_key"] for r in rows if r.get("server_key")},
                                   opted_out=config.opted_out_hosts, host_map=config.host_map or None)
    write_parquet(lake, registry_path, _table(rows, RAW_REGISTRY))
    return rows, False


def take_snapshot(lake: LakePaths, day: dt.date, registry_url: str, config: ProbeConfig,
                  clock: Clock = utc_now) -> int:
    """Land the open day's registry snapshot, once (a snapshot already landed is kept): the step before a
    sharded scan's shards. Returns its rows."""
    _check_open_day(day, clock)
    rows, _ = run_prober(_snapshot_rows(lake, day, registry_url, config, clock))
    return len(rows)


@contextlib.contextmanager
def heap_kept_from_collections() -> Iterator[None]:
    """The objects the process already holds (its modules: Dagster's, in a step) are left out of the cyclic
    collector's full collections while the block runs, and given back after. A scan allocates enough to
    trigger several full collections, each of which would walk that whole heap again: about a twentieth of
    the prober's CPU at 600 endpoints (docs/scaling.md, "The prober"). Nothing is freed later than it would
    be otherwise but a cycle that was already garbage when the block began."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def scan_day(lake: LakePaths, day: dt.date, registry_url: str, config: ProbeConfig, clock: Clock = utc_now,
             control_url: str | None = None,
             progress: Callable[[int, int], None] | None = None, flush_rows: int = 500,
             hours: Sequence[int] | None = None, shard: Shard | None = None) -> DayScan:
    """Scan the open day: every endpoint, or with `hours` only those whose slot is one of those hours
    (scan_slice), or with `shard` only the endpoints of its hosts (probe/shards.py; the day's snapshot must
    have landed: take_snapshot). Run again on the same day, it reuses the day's registry snapshot and
    checks only the endpoints that have no completed check yet."""
    _check_open_day(day, clock)
    if shard is not None and not lake.registry_file(day).is_file():
        raise SnapshotMissingError(f"shard {shard.label} of {day}: the day's registry snapshot has not landed "
                                   f"({lake.registry_file(day)}); the scan's first step takes it (take_snapshot)")
    started = time.perf_counter()
    run_id = f"scan-{clock().strftime('%H%M%S')}-{uuid.uuid4().hex[:8]}" + (f"-{shard.label}" if shard else "")
    report = DayScan(day, run_id, hours=tuple(hours or ()))
    done = completed_checks(lake, day)
    report.resumed_from = len(done)
    writer = PartWriter(lake, day, run_id, flush_rows=flush_rows)

    async def go() -> None:
        rows, report.registry_reused = await _snapshot_rows(lake, day, registry_url, config, clock)
        report.registry_rows = len(rows)
        if hours is not None:
            rows = in_slices(rows, day, hours)
        if shard is not None:
            rows = [row for row in rows if shard.holds(row.get("url"))]
        try:
            await scan(rows, day, run_id, config, clock, control_url, progress, sink=writer, already_checked=done,
                       book=OriginBook.from_lake(lake, day))
        finally:
            writer.refused.last(writer.flush, writer.waiting)

    with heap_kept_from_collections():
        run_prober(go())
    report.probe_rows, report.origin_rows, report.outcomes = writer.probe_rows, writer.origin_rows, writer.outcomes
    report.seconds = time.perf_counter() - started
    return report


class ReadinessWriter:
    """The readiness run's sink: raw/readiness, raw/readiness_surfaces and raw/skills as part files,
    flushed every `flush_rows` rows (atomic writes). Documents and skills land as they are read; each check
    as soon as it is complete: at once, or, when it lists a repository, once the code host has answered for it
    (it carries that answer), so a run killed before that checks those endpoints again when run again that
    day (probe/readiness_scan.py)."""

    def __init__(self, lake: LakePaths, day: dt.date, run_id: str, flush_rows: int = 500,
                 retry_seconds: float = 20.0) -> None:
        self.lake, self.day, self.run_id, self.flush_rows = lake, day, run_id, flush_rows
        self._rows: dict[str, list[dict]] = {"readiness": [], "readiness_surfaces": [], "skills": [], "origins": []}
        self._part = 0
        self.counts = {kind: 0 for kind in self._rows}
        self.outcomes: dict[str, int] = {}
        self.refused = _DiskRefusals(day, retry_seconds)  # a write our disk refuses is tried again later

    def add_origin(self, row: dict) -> None:
        self._add("origins", row)

    def add_check(self, row: dict) -> None:
        self.outcomes[row["outcome"]] = self.outcomes.get(row["outcome"], 0) + 1
        self._add("readiness", row)

    def add_surface(self, row: dict) -> None:
        self._add("readiness_surfaces", {**row, "prober_version": PROBER_VERSION})

    def add_skill(self, row: dict) -> None:
        self._add("skills", row)

    def _add(self, kind: str, row: dict) -> None:
        self._rows[kind].append(row)
        if len(self._rows[kind]) >= self.flush_rows and self.refused.may_try():
            self.refused.flushed(self.flush, self.waiting())

    def waiting(self) -> int:
        """Rows not yet landed."""
        return sum(len(rows) for rows in self._rows.values())

    def flush(self) -> None:
        name = f"{self.run_id}-{self._part:05d}.parquet"
        # Origins first: a document row that names a robots.txt decision never lands without it.
        order = (("origins", RAW_ORIGINS), ("readiness_surfaces", RAW_READINESS_SURFACES), ("skills", RAW_SKILLS),
                 ("readiness", RAW_READINESS))
        kinds = [(kind, spec) for kind, spec in order if self._rows[kind]]
        for kind, spec in kinds:
            write_parquet(self.lake, self.lake.raw_dir(kind, self.day) / name, _table(self._rows[kind], spec))
        # All kept until all landed: a retry after a refused write writes the same names again, whole (helper-92:
        # emptied as each landed, the retry wrote later rows under a name that held earlier ones).
        for kind, _ in kinds:
            self.counts[kind] += len(self._rows[kind])
            self._rows[kind] = []
        if kinds:
            self._part += 1


@dataclass
class ReadinessDay:
    day: dt.date
    run_id: str
    checks: int = 0
    surfaces: int = 0
    skills: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    resumed_from: int = 0


def readiness_day(lake: LakePaths, day: dt.date, config: ProbeConfig, clock: Clock = utc_now,
                  codehost: CodeHostClient | None = None, skills: Sequence[RepoFolder] = (),
                  flush_rows: int = 500, through_hour: int | None = None) -> ReadinessDay:
    """A readiness run of the open day over the day's registry snapshot (landed by its scan) and the skills
    list: the endpoints whose slice (probe/slices.py) is at or before `through_hour` (None: every endpoint)
    and that have no readiness check yet that day, so the run after each slice checks that slice's endpoints
    and any an earlier run missed. A check that came to our own fault (prober_error, not_checked) is checked
    again only by a run of its own slice's hour (a resumed run), never by the runs after later slices, so a
    server that trips the prober is not asked up to 24 times a day. What the day's earlier runs read
    (origins' and domains' documents, repositories, skills: probe/readiness_book.py) is not asked again."""
    today = clock().date()
    if day != today:
        raise PastDayError(f"{day} is not today ({today} UTC): a day that has passed is never probed")
    if through_hour is not None and not 0 <= through_hour < HOURS:
        raise ValueError(f"through_hour {through_hour} is not a UTC hour (0-23)")
    registry = lake.registry_file(day)
    if not registry.is_file():
        raise FileNotFoundError(f"no registry snapshot for {day} ({registry}): the day's scan lands it first")
    started = time.perf_counter()
    run_id = f"readiness-{clock().strftime('%H%M%S')}-{uuid.uuid4().hex[:8]}"
    report = ReadinessDay(day, run_id)
    landed = _landed(lake, "readiness", day, daily_only=False)
    done = {key for key, complete in landed.items() if complete}
    report.resumed_from = len(done)
    writer = ReadinessWriter(lake, day, run_id, flush_rows)
    releases = _daily_releases(lake, day)
    rows = [{**row, "daily_release": releases.get(row.get("server_key") or "")}
            for row in pq.read_table(registry).to_pylist()]
    scan_origins = {origin_of(row["url"]) for row in rows if isinstance(row.get("url"), str)}
    if through_hour is not None:
        rows = in_slices(rows, day, range(through_hour + 1))
        done |= {key for key in landed if slot_hour(key, day) < through_hour}
    try:
        run_prober(readiness_scan(rows, day, run_id, config, clock, writer, codehost, skills, already_checked=done,
                                   book=OriginBook.from_lake(lake, day), cards=CardBook.from_lake(lake, day),
                                   earlier=ReadinessBook.from_lake(lake, day), scan_origins=scan_origins))
    finally:
        writer.refused.last(writer.flush, writer.waiting)
    report.checks, report.surfaces, report.skills = (writer.counts[k] for k in ("readiness", "readiness_surfaces",
                                                                               "skills"))
    report.outcomes, report.seconds = writer.outcomes, time.perf_counter() - started
    return report
