"""A day's curated tables as one unit: the day's graph (DAY_GRAPH: each asset, its builder, its tables and
what it reads over which window), the builds in graph order, and whether a built day is still current
(README, "The rules, exactly": signed roots).

A day may be signed only when every table it publishes was built after the day ended and after every
input it reads changed last: the raw files of the days its windows reach back to (an agent-report batch
landing at 23:59:59 included), the curated files of earlier days in its windows, and, within the day, the
tables it reads. When an earlier day is built late (a missed day backfilled), the later days whose windows
include it are current only once rebuilt. Signing never rebuilds: it refuses such days and names them, and
the map job rebuilds them with their blocking checks (docs/operations.md, "When a day is stale").
Freshness is judged by file modification times: atomic writes (lake.parquet_io) give every rewrite a new
one, and frozen (signed) files are never rewritten.
"""
from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable, Collection
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from ..lake.paths import LakePaths, folder_day
from ..rules.methods import (
    CHANGES_PARAMS,
    DOMAIN_AGE_PARAMS,
    HISTORY_PARAMS,
    INCIDENTS_PARAMS,
    RATINGS_PARAMS,
    READINESS_P50_DAYS,
    REPORTS_PARAMS,
    STATUS_PARAMS,
)
from ..rules.tokens import encoding
from .common import BuildResult
from .lookup_tables import build_domain_ages, build_package_advisories
from .map_tables import build_daily_status, build_failure_reasons, build_quarantine, build_server_history
from .readiness_tables import build_readiness_discovery, build_readiness_lines, build_readiness_scores
from .refusal_journal import REFUSAL_TABLES, journal_file
from .report_tables import build_agent_reports, build_incidents, build_rating_aggregates, build_reliable_rankings
from .tool_facts import build_tool_facts
from .tool_tables import (
    build_findings,
    build_server_categories,
    build_token_cost,
    build_tool_changes,
    build_tools,
)

Builder = Callable[[LakePaths, dt.date], BuildResult]


@dataclass(frozen=True)
class Read:
    """One input of a day asset: `source` over the `days` days ending at the day built (1: that day only;
    None: every day up to it). `source` is a day asset of DAY_GRAPH, or `raw/<kind>` for raw data that no day
    asset lands (RAW_KINDS_OF_SCAN are raw_probes': the scan lands them and raw_probes validates them). An
    asset that reads its own earlier days names itself. A read that only checks what landed (`checks_only`: the
    frequent checks' files, which a run may land after the day's build) never makes the day stale."""
    source: str
    days: int | None = 1
    checks_only: bool = False

    def reaches(self, back: int) -> bool:
        """Whether the day `back` days before the day built is in the window."""
        return self.days is None or 0 <= back < self.days


class DayAsset(NamedTuple):
    name: str
    build: Builder
    tables: tuple[str, ...]  # the curated tables it writes, in the order it writes them
    reads: tuple[Read, ...]  # what its builder reads (tests/test_day_graph.py observes it)


# The raw kinds the day's scan lands (its slices, the readiness probes after them): read as raw_probes, which
# validates them; every other raw kind an asset reads is landed outside the map's graph (agent reports by
# the reporting service, packages and domains by lookups_job) and read as `raw/<kind>`.
RAW_KINDS_OF_SCAN = ("registry", "probes", "origins", "readiness", "readiness_surfaces", "skills")
# The raw kinds landed outside the scan that raw_probes checks too (curated/common.py quarantine_unreadable_files):
# one torn file of them stopped a lookup table, the warehouse or the nightly retention. The map job waits for the
# day's lookups (defs/lanes.py), not for the frequent checks: an hourly run of 23:30 may land after the map's build,
# so their reads only check (helper-86, helper-87).
_CHECKED_TOO = (*(Read(f"raw/{kind}") for kind in ("packages", "domains")),
                *(Read(f"raw/{kind}", checks_only=True) for kind in ("hourly", "five_minute", "submitted")))
EVERY_DAY = None
_STATUS_DAYS = STATUS_PARAMS["lookback_days"] + 1  # the day's probes and the registry in force
# A tool list's change baseline: the endpoint's previous checked day, at most lookback_days before the day.
_BASELINE_DAYS = CHANGES_PARAMS["lookback_days"] + 1
# The facts of a list are computed once, in the day it first appeared, and read from there (every day up to
# the day built: tool_facts' tables tool_lists and tool_facts).
_FACTS = Read("tool_facts", EVERY_DAY)

# The day's graph, declared once (docs/operations.md, "The day's graph"): each asset, its builder, the tables
# it writes and what it reads, in an order that builds every asset after what it reads of the same day. The
# Dagster specs (defs/*_assets.py, defs/day_map.py), the build order, the freshness rule below and the
# signing asset's inputs all derive from it.
DAY_GRAPH: tuple[DayAsset, ...] = (
    DayAsset("raw_probes", build_quarantine, ("quarantine",), (Read("raw_probes"), *_CHECKED_TOO)),  # what it checks
    DayAsset("daily_status", build_daily_status, ("daily_status",), (Read("raw_probes", _STATUS_DAYS),)),
    DayAsset("tool_facts", build_tool_facts, ("tool_lists", "tool_facts"),
             (Read("daily_status", _BASELINE_DAYS), Read("raw_probes", _BASELINE_DAYS), _FACTS)),
    DayAsset("tools", build_tools, ("tools",), (_FACTS, Read("daily_status"))),
    DayAsset("token_cost", build_token_cost, ("token_cost",), (_FACTS, Read("daily_status"))),
    DayAsset("readiness_discovery", build_readiness_discovery, ("readiness_discovery",), (Read("raw_probes"),)),
    DayAsset("findings", build_findings, ("internal_findings", "findings"),
             (_FACTS, Read("daily_status"), Read("readiness_discovery"))),
    # The registry in force names and describes each listing: its own words place it first.
    DayAsset("server_categories", build_server_categories, ("server_categories",),
             (_FACTS, Read("daily_status"), Read("raw_probes", _STATUS_DAYS))),
    DayAsset("tool_changes", build_tool_changes, ("tool_changes",),
             (_FACTS, Read("daily_status", _BASELINE_DAYS))),
    DayAsset("server_history", build_server_history, ("server_history",),
             (Read("daily_status", HISTORY_PARAMS["window_days"]),
              Read("tool_changes", CHANGES_PARAMS["lookback_days"]))),
    DayAsset("agent_reports", build_agent_reports, ("agent_report_quarantine", "agent_reports"),
             (Read("daily_status", REPORTS_PARAMS["max_age_days"] + 1), Read("raw/agent_reports"))),
    DayAsset("rating_aggregates", build_rating_aggregates, ("rating_aggregates",),
             (Read("agent_reports", RATINGS_PARAMS["window_days"]),)),
    DayAsset("incidents", build_incidents, ("incidents",),
             (Read("agent_reports", INCIDENTS_PARAMS["lookback_days"]),
              Read("daily_status", INCIDENTS_PARAMS["lookback_days"]))),
    DayAsset("reliable_rankings", build_reliable_rankings, ("reliable_rankings",),
             (Read("daily_status"), Read("server_history"), Read("server_categories"))),
    # The p50 of a line is the median round trip of the last days' readiness checks.
    DayAsset("readiness_lines", build_readiness_lines, ("readiness_lines",), (Read("raw_probes", READINESS_P50_DAYS),)),
    DayAsset("readiness_scores", build_readiness_scores, ("readiness_scores",), (Read("readiness_lines"),)),
    DayAsset("package_advisories", build_package_advisories, ("package_advisories",), (Read("raw/packages"),)),
    DayAsset("domain_ages", build_domain_ages, ("domain_ages",),
             (Read("daily_status"), Read("raw/domains", DOMAIN_AGE_PARAMS["refresh_days"]))),
    DayAsset("failure_reasons", build_failure_reasons, ("failure_reasons",), (Read("daily_status"),)),
)
DAY_TABLES = tuple(t for asset in DAY_GRAPH for t in asset.tables)
# The map's day assets in graph order: the one list the jobs, the sign asset's inputs, the tests and the
# generated docs derive from.
MAP_ASSET_NAMES = tuple(asset.name for asset in DAY_GRAPH)
_WRITES = {asset.name: asset.tables for asset in DAY_GRAPH}
_GRAPH = {asset.name: asset for asset in DAY_GRAPH}


def asset_inputs(name: str) -> tuple[Read, ...]:
    """The day assets `name` reads (its own earlier days and raw data landed outside the graph left out): what
    its Dagster dependencies are generated from (defs/map_assets.py day_spec)."""
    return tuple(r for r in _GRAPH[name].reads if r.source in _GRAPH and r.source != name)


def raw_kinds(read: Read) -> tuple[str, ...]:
    """The raw kinds a read of raw data stands for (none for a curated one)."""
    if read.source == "raw_probes":
        return RAW_KINDS_OF_SCAN
    return (read.source.removeprefix("raw/"),) if read.source.startswith("raw/") else ()


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except FileNotFoundError:
        return None


def _name(lake: LakePaths, path: Path) -> str:
    return path.relative_to(lake.root).as_posix()


def stale_reason(lake: LakePaths, day: dt.date) -> str | None:
    """Why the day's curated tables are not what its closed inputs say (None when they are)."""
    built: dict[str, float] = {}
    for table in DAY_TABLES:
        when = _mtime(lake.curated_file(table, day))
        if when is None:
            return f"{table} of {day} was never built"
        built[table] = when
    oldest_table = min(built, key=built.__getitem__)
    oldest = built[oldest_table]
    ended = dt.datetime.combine(day + dt.timedelta(days=1), dt.time(), dt.UTC).timestamp()
    if oldest < ended:
        at = dt.datetime.fromtimestamp(oldest, dt.UTC).isoformat(timespec="seconds")
        return f"{oldest_table} of {day} was built at {at}, before the day ended"
    for table in REFUSAL_TABLES:  # a build that refused a file and died before its table (curated/refusal_journal.py)
        journaled = _mtime(journal_file(lake, table, day))
        if journaled is not None and journaled > built.get(table, journaled):
            return f"a file of {day} was refused after {table} of {day} was built (its build did not end)"
    history: dict[str, list[tuple[dt.date, float]]] = {}
    for asset in DAY_GRAPH:
        first_written = min(built[t] for t in asset.tables)
        for read in asset.reads:
            reason = _raw_newer(lake, day, asset, read, first_written) or \
                _curated_newer(lake, day, asset, read, first_written, built, history)
            if reason:
                return reason
    return None


def _raw_newer(lake: LakePaths, day: dt.date, asset: DayAsset, read: Read, first_written: float) -> str | None:
    """A raw file the asset reads (within its window) written after the asset's tables; anything else that landed
    in its folders since too (its root would sign it unread: `notes.txt` beside report batches)."""
    if read.checks_only:
        return None
    for kind in raw_kinds(read):
        for back in range(read.days or 1):
            for path in lake.raw_entries(kind, day - dt.timedelta(days=back)):
                when = _mtime(path)
                if when is not None and when > first_written:
                    return f"{_name(lake, path)} changed after {asset.tables[0]} of {day} was built"
    return None


def _curated_newer(lake: LakePaths, day: dt.date, asset: DayAsset, read: Read, first_written: float,
                   built: dict[str, float], history: dict[str, list[tuple[dt.date, float]]]) -> str | None:
    """A curated table the asset reads, of the same day or an earlier one within its window, written after
    the asset's tables (`history` caches each table's earlier days)."""
    if read.source not in _GRAPH or (read.source == "raw_probes" and asset.name == "raw_probes"):
        return None
    if read.source != asset.name:  # the same day's tables it reads
        last_input = max(_WRITES[read.source], key=built.__getitem__)
        if built[last_input] > first_written:
            return f"{asset.tables[0]} of {day} was built before {last_input} of the same day changed"
    # Earlier days within the window, newer than the asset's tables.
    for upstream in _WRITES[read.source]:
        if upstream not in history:
            history[upstream] = _earlier_mtimes(lake, upstream, day)
        for earlier, when in history[upstream]:
            if read.reaches((day - earlier).days) and when > first_written:
                return f"curated/{upstream}/day={earlier} changed after {asset.tables[0]} of {day} was built"
    return None


def _earlier_mtimes(lake: LakePaths, table: str, day: dt.date) -> list[tuple[dt.date, float]]:
    folder = lake.root / "curated" / table
    out = []
    if folder.is_dir():
        for child in folder.iterdir():
            if (earlier := folder_day(child.name)) is not None:  # a stray folder (`day=D.bak`) is no day
                when = _mtime(child / "part-0.parquet")
                if earlier < day and when is not None:
                    out.append((earlier, when))
    return out


# Builds of one day run two at a time: a day's builds use 1.4 of this machine's 2 cores one after another
# (DuckDB's operators use both, the Python parts one), and two side by side fill them; three are no faster
# (docs/scaling.md, "Two builds at a time").
BUILD_WORKERS = 2
_BUILDERS = {asset.name: asset.build for asset in DAY_GRAPH}
# What each asset waits for within a day: the day assets it reads.
_READS = {asset.name: tuple(r.source for r in asset_inputs(asset.name)) for asset in DAY_GRAPH}


def _readers(asset: str) -> set[str]:
    """The day assets that read `asset`, directly or not."""
    found: set[str] = set()
    for other in MAP_ASSET_NAMES:
        if asset in _READS[other] or found & set(_READS[other]):
            found.add(other)
    return found


# Of the builds ready to start, the one more builds wait for goes first (then graph order): tool_changes
# before tools, so server_history and the rankings after it are not left to run alone at the day's end.
_PRIORITY = {asset: (-len(_readers(asset)), i) for i, asset in enumerate(MAP_ASSET_NAMES)}


def _load_tokenizer() -> None:
    encoding()


# What a build needs loaded in the process, loaded by a worker with nothing to build meanwhile: the
# tokenizer (0.2 s of Python) while raw_probes and daily_status run, ahead of tool_facts.
_PREPARE: dict[str, Callable[[], None]] = {"tool_facts": _load_tokenizer}
# After a build: None to let the builds that read it go on, else why they must not (a blocking check
# failed). Runs in the build's own thread.
AfterBuild = Callable[[str, BuildResult], str | None]


@dataclass
class DayBuild:
    """What `build_day` did, each in graph order."""
    day: dt.date
    built: dict[str, BuildResult] = field(default_factory=dict)
    failed: dict[str, BaseException] = field(default_factory=dict)  # the build (or `after`) raised
    held: dict[str, str] = field(default_factory=dict)  # asset -> why its dependents did not run
    not_built: dict[str, str] = field(default_factory=dict)  # asset -> the failed or held input it waited for

    @property
    def ok(self) -> bool:
        return not (self.failed or self.held or self.not_built)


def build_day(lake: LakePaths, day: dt.date, assets: Collection[str] | None = None, *,
              workers: int = BUILD_WORKERS, after: AfterBuild | None = None) -> DayBuild:
    """Build the day's `assets` (all of DAY_GRAPH by default), `workers` at a time.

    A build starts once every asset of the same day it reads (DAY_GRAPH) has been built, when that asset is
    among `assets`; the others are read as the lake holds them. Of the builds ready to start, the one with
    the most builds waiting on it goes first. A build that raises, or whose `after` says
    to hold, leaves whatever reads it (directly or not) unbuilt; the rest of the day goes on. The same files
    come out as built one after another: each build reads only finished inputs."""
    wanted = [a for a in MAP_ASSET_NAMES if assets is None or a in assets]
    unknown = set(assets or ()) - set(MAP_ASSET_NAMES)
    if unknown:
        raise ValueError(f"not a day asset: {', '.join(sorted(unknown))}")
    waits = {a: {r for r in _READS[a] if r in wanted} for a in wanted}
    report = DayBuild(day)
    outcome: dict[str, str] = {}  # asset -> "built" | "failed" | "held" | "not_built"
    lock = threading.Lock()

    def run(asset: str) -> tuple[str, BuildResult]:
        result = _BUILDERS[asset](lake, day)
        hold = after(asset, result) if after else None
        with lock:
            if hold is not None:
                report.held[asset] = hold
        return asset, result

    pending = sorted(wanted, key=_PRIORITY.__getitem__)
    preparations = [_PREPARE[a] for a in wanted if a in _PREPARE]
    running: dict[Future, str] = {}
    slots = max(1, workers)
    with ThreadPoolExecutor(max_workers=slots, thread_name_prefix=f"build-{day}") as pool:
        while pending or running:
            for asset in list(pending):
                blocked = [r for r in sorted(waits[asset]) if outcome.get(r) in ("failed", "held", "not_built")]
                if blocked:
                    pending.remove(asset)
                    outcome[asset] = "not_built"
                    report.not_built[asset] = blocked[0]
                elif all(outcome.get(r) == "built" for r in waits[asset]) and len(running) < slots:
                    pending.remove(asset)
                    running[pool.submit(run, asset)] = asset
            while preparations and len(running) < slots:  # a worker with nothing to build
                running[pool.submit(preparations.pop())] = ""
            if not running:
                continue
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                asset = running.pop(future)
                if not asset:
                    # A preparation's failure is the build's that needed it, which does it again and says why.
                    future.exception()
                    continue
                try:
                    _, result = future.result()
                except BaseException as exc:  # noqa: BLE001 - reported with its asset, the day goes on
                    outcome[asset] = "failed"
                    report.failed[asset] = exc
                    continue
                report.built[asset] = result
                outcome[asset] = "held" if asset in report.held else "built"
    order = {a: i for i, a in enumerate(MAP_ASSET_NAMES)}
    report.built = dict(sorted(report.built.items(), key=lambda kv: order[kv[0]]))
    report.failed = dict(sorted(report.failed.items(), key=lambda kv: order[kv[0]]))
    return report


def rebuild_day(lake: LakePaths, day: dt.date) -> tuple[BuildResult, ...]:
    """Build every curated table of the day, in graph order; the first failure raises. Without the blocking
    checks: for tests and benches. A day to be signed is rebuilt by the map job (defs/day_map.py)."""
    report = build_day(lake, day)
    for exc in report.failed.values():
        raise exc
    return tuple(report.built.values())


class StaleDaysError(ValueError):
    """Days signing refuses as they are: stale (stale_reason), or not what the map job built and checked. Only
    the map job rebuilds them, with its blocking checks and materialisations (docs/operations.md, "When a day
    is stale")."""

    def __init__(self, days: list[tuple[dt.date, str]]):
        self.days = days
        first = days[0][0]
        super().__init__(
            f"not signed: {len(days)} day(s) need the map job first ({'; '.join(f'{d}: {why}' for d, why in days)}); "
            f"rebuild them with their checks: daily_map_job from {first} through the day to sign "
            f"(`sevenmaps backfill --from {first} --to <day>`), then sign again")


def stale_days(lake: LakePaths, days: Collection[dt.date]) -> list[tuple[dt.date, str]]:
    """Each of `days` whose tables are not current, with why, in chain order."""
    return [(day, why) for day in sorted(days) if (why := stale_reason(lake, day)) is not None]
