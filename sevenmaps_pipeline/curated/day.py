"""A day's curated tables as one unit: the builders in graph order, whether a built day is still current,
and the rebuild that makes it so before it is signed (README, "The rules, exactly": signed roots).

A day may be signed only when every table it publishes was built after the day ended and after every
input it reads changed last: the raw files of the days its windows reach back to (an agent-report batch
landing at 23:59:59 included), the curated files of earlier days that it reads (EARLIER_READS), and,
within the day, the tables it reads. When an earlier day is built late
(a missed day backfilled), the later days whose windows include it read it only once rebuilt; signing
rebuilds them first, in chain order, and says why.
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

from ..lake.paths import COVERED_RAW, LakePaths
from ..rules.methods import CHANGES_PARAMS, HISTORY_PARAMS, INCIDENTS_PARAMS, RATINGS_PARAMS
from .common import BuildResult
from .lookup_tables import build_domain_ages, build_package_advisories
from .map_tables import build_daily_status, build_failure_reasons, build_quarantine, build_server_history
from .readiness_tables import build_readiness_discovery, build_readiness_lines, build_readiness_scores
from .report_tables import build_agent_reports, build_incidents, build_rating_aggregates, build_reliable_rankings
from .tool_tables import (
    build_findings,
    build_server_categories,
    build_token_cost,
    build_tool_changes,
    build_tool_facts,
    build_tools,
)

Builder = Callable[[LakePaths, dt.date], BuildResult]

# (asset, builder, the curated tables it writes in the order it writes them, the assets of the same day
# it reads), in an order that builds every asset after what it reads (the map job's graph).
DAY_BUILDS: tuple[tuple[str, Builder, tuple[str, ...], tuple[str, ...]], ...] = (
    ("raw_probes", build_quarantine, ("quarantine",), ()),
    ("daily_status", build_daily_status, ("daily_status",), ("raw_probes",)),
    ("tool_facts", build_tool_facts, ("tool_lists", "tool_facts"), ("daily_status",)),
    ("tools", build_tools, ("tools",), ("tool_facts", "daily_status")),
    ("token_cost", build_token_cost, ("token_cost",), ("tool_facts", "daily_status")),
    ("readiness_discovery", build_readiness_discovery, ("readiness_discovery",), ("raw_probes",)),
    ("findings", build_findings, ("internal_findings", "findings"),
     ("tool_facts", "daily_status", "readiness_discovery")),
    ("server_categories", build_server_categories, ("server_categories",),
     ("tool_facts", "daily_status", "raw_probes")),
    ("tool_changes", build_tool_changes, ("tool_changes",), ("tool_facts", "daily_status")),
    ("server_history", build_server_history, ("server_history",), ("daily_status", "tool_changes")),
    ("agent_reports", build_agent_reports, ("agent_report_quarantine", "agent_reports"), ("daily_status",)),
    ("rating_aggregates", build_rating_aggregates, ("rating_aggregates",), ("agent_reports",)),
    ("incidents", build_incidents, ("incidents",), ("agent_reports", "daily_status")),
    ("reliable_rankings", build_reliable_rankings, ("reliable_rankings",),
     ("daily_status", "server_history", "server_categories")),
    ("readiness_lines", build_readiness_lines, ("readiness_lines",), ("raw_probes",)),
    ("readiness_scores", build_readiness_scores, ("readiness_scores",), ("readiness_lines",)),
    ("package_advisories", build_package_advisories, ("package_advisories",), ("raw_probes",)),
    ("domain_ages", build_domain_ages, ("domain_ages",), ("daily_status",)),
    ("failure_reasons", build_failure_reasons, ("failure_reasons",), ("daily_status",)),
)
DAY_TABLES = tuple(t for _, _, tables, _ in DAY_BUILDS for t in tables)
# The map's day assets in graph order: the one list the jobs, the sign asset's inputs, the tests and the
# generated docs derive from.
MAP_ASSET_NAMES = tuple(name for name, *_ in DAY_BUILDS)
# What each table reads of earlier days: (table, within how many days back, None for all of them). The
# tool-list facts are computed once per distinct list, in the day it first appeared, and read from there.
EARLIER_READS: dict[str, tuple[tuple[str, int | None], ...]] = {
    "tool_lists": (("daily_status", CHANGES_PARAMS["lookback_days"]), ("tool_lists", None)),
    "tool_facts": (("daily_status", CHANGES_PARAMS["lookback_days"]), ("tool_lists", None)),
    "tools": (("tool_facts", None), ("tool_lists", None)),
    "token_cost": (("tool_facts", None), ("tool_lists", None)),
    # The facts of the day's lists (curated/tool_tables.py day_list_facts), as tools reads them.
    "findings": (("tool_facts", None), ("tool_lists", None)),
    "internal_findings": (("tool_facts", None), ("tool_lists", None)),
    "server_categories": (("tool_facts", None), ("tool_lists", None)),
    "tool_changes": (("daily_status", CHANGES_PARAMS["lookback_days"]), ("tool_facts", None),
                     ("tool_lists", None)),
    "server_history": (("daily_status", HISTORY_PARAMS["window_days"]),
                       ("tool_changes", CHANGES_PARAMS["lookback_days"])),
    "agent_report_quarantine": (("daily_status", RATINGS_PARAMS["window_days"]),),
    "agent_reports": (("daily_status", RATINGS_PARAMS["window_days"]),),
    "rating_aggregates": (("agent_reports", RATINGS_PARAMS["window_days"]),),
    "incidents": (("agent_reports", INCIDENTS_PARAMS["lookback_days"]),
                  ("daily_status", INCIDENTS_PARAMS["lookback_days"])),
}
_WRITES = {asset: tables for asset, _, tables, _ in DAY_BUILDS}
# The furthest back any table of a day reads (change baselines and histories' change days: 60 days).
WINDOW_DAYS = CHANGES_PARAMS["lookback_days"]


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
    for _, _, tables, reads in DAY_BUILDS:
        first_written = min(built[t] for t in tables)
        for upstream in reads:
            last_input = max(_WRITES[upstream], key=built.__getitem__)
            if built[last_input] > first_written:
                return f"{tables[0]} of {day} was built before {last_input} of the same day changed"
    raw = [p for back in range(WINDOW_DAYS) for kind in COVERED_RAW
           for p in lake.raw_files(kind, day - dt.timedelta(days=back))]
    for path in raw:
        when = _mtime(path)
        if when is not None and when > oldest:
            return f"{_name(lake, path)} changed after {oldest_table} of {day} was built"
    # Earlier days: what each table reads of them (EARLIER_READS), newer than the table itself.
    history: dict[str, list[tuple[dt.date, float]]] = {}
    for reader, earlier_reads in EARLIER_READS.items():
        for upstream, back in earlier_reads:
            if upstream not in history:
                history[upstream] = _earlier_mtimes(lake, upstream, day)
            for earlier, when in history[upstream]:
                if (back is None or (day - earlier).days < back) and when > built[reader]:
                    return f"curated/{upstream}/day={earlier} changed after {reader} of {day} was built"
    return None


def _earlier_mtimes(lake: LakePaths, table: str, day: dt.date) -> list[tuple[dt.date, float]]:
    folder = lake.root / "curated" / table
    out = []
    if folder.is_dir():
        for child in folder.iterdir():
            if child.name.startswith("day="):
                earlier = dt.date.fromisoformat(child.name[4:])
                when = _mtime(child / "part-0.parquet")
                if earlier < day and when is not None:
                    out.append((earlier, when))
    return out


@dataclass(frozen=True)
class Refresh:
    day: dt.date
    reason: str | None  # None: the day was current and nothing was rebuilt
    results: tuple[BuildResult, ...] = ()


# Builds of one day run two at a time: a day's builds use 1.4 of this machine's 2 cores one after another
# (DuckDB's operators use both, the Python parts one), and two side by side fill them; three are no faster
# (docs/scaling.md, "Two builds at a time").
BUILD_WORKERS = 2
_BUILDERS = {asset: build for asset, build, _, _ in DAY_BUILDS}
_READS = {asset: reads for asset, _, _, reads in DAY_BUILDS}


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
    from ..rules.tokens import encoding

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
    """Build the day's `assets` (all of DAY_BUILDS by default), `workers` at a time.

    A build starts once every asset of the same day it reads (DAY_BUILDS) has been built, when that asset is
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
    """Build every curated table of the day, in graph order; the first failure raises."""
    report = build_day(lake, day)
    for exc in report.failed.values():
        raise exc
    return tuple(report.built.values())


def refresh_day(lake: LakePaths, day: dt.date) -> Refresh:
    """Rebuild the day's tables if they are not current (see the module docstring); say why."""
    reason = stale_reason(lake, day)
    if reason is None:
        return Refresh(day, None)
    return Refresh(day, reason, rebuild_day(lake, day))
