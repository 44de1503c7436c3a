"""The map of a UTC day in one step: every day asset (the specs of defs/*_assets.py) built a day at a time,
two builds side by side (curated.day.build_day), each asset's blocking checks run right after its table.

One step rather than one per asset: a day's builds are some fifty DuckDB queries and a few Python passes that
use 1.4 of the machine's 2 cores one after another, and a Dagster step costs about 35 ms of its own plus the
version lookups of its inputs; side by side in one step the day's map takes two thirds of the time
(docs/scaling.md, "The map in one step"). Each asset is still its own node in the asset graph, with its own
materialisations, numbers and checks, and can be selected alone (the step builds only what was selected and
reads the rest from the lake).
"""


import datetime as dt
import time
import traceback
from collections.abc import Iterator

import dagster as dg

from ..curated.day import MAP_ASSET_NAMES, BuildResult, DayBuild, build_day
from ..curated.profile import DayProfile, profile_day
from ..lake.parquet_io import SignedDayError
from ..lake.paths import LakePaths
from ..lake.warehouse import publish_warehouse
from . import lanes
from .checks import DAY_CHECKS, DayCheck
from .lookup_assets import domain_ages, package_advisories
from .map_assets import (
    ASSET_TABLE,
    SINGLE_RUN,
    daily_status,
    failure_reasons,
    frozen_day_failure,
    open_day_scan,
    open_day_without_scan,
    raw_probes,
    server_history,
)
from .metadata import day_metadata, range_summary
from .partitions import ended, finished_days
from .per_day import provenance_of_result
from .readiness_assets import readiness_discovery, readiness_lines, readiness_scores
from .report_assets import agent_reports, incidents, rating_aggregates, reliable_rankings
from .resources import LakeResource, ProberResource, partition_days
from .tool_assets import findings, server_categories, token_cost, tool_changes, tool_facts, tools

_SPECS = {spec.key.to_user_string(): spec for spec in (
    raw_probes, daily_status, tool_facts, tools, token_cost, readiness_discovery, findings, server_categories,
    tool_changes, server_history, agent_reports, rating_aggregates, incidents, reliable_rankings, readiness_lines,
    readiness_scores, package_advisories, domain_ages, failure_reasons)}


def _one_mapping_per_input(specs: tuple[dg.AssetSpec, ...]) -> tuple[dg.AssetSpec, ...]:
    """Dagster gives a multi-asset one input per upstream asset, so every spec that reads, say, daily_status
    must name the same partition mapping: the widest window any of them reads (61 days for daily_status).
    What each asset reads exactly, over which window, is declared in curated/day.py (DAY_GRAPH), which the
    specs' dependencies are generated from (docs/operations.md, "The day's graph")."""
    def reach(dep: dg.AssetDep) -> int:
        mapping = dep.partition_mapping
        return mapping.start_offset if isinstance(mapping, dg.TimeWindowPartitionMapping) else 0

    widest: dict[dg.AssetKey, dg.AssetDep] = {}
    for spec in specs:
        for dep in spec.deps:
            if dep.asset_key not in widest or reach(dep) < reach(widest[dep.asset_key]):
                widest[dep.asset_key] = dep
    return tuple(spec.replace_attributes(deps=[widest[dep.asset_key] for dep in spec.deps]) for spec in specs)


# Every day asset of the map, in graph order, as the library's day builds list them (curated/day.py).
DAY_SPECS = _one_mapping_per_input(tuple(_SPECS[name] for name in MAP_ASSET_NAMES))


def _profile(paths, asset: str, day: dt.date) -> DayProfile:
    return profile_day(paths, ASSET_TABLE.get(asset, asset), day)


def _log_day(context: dg.AssetExecutionContext, day: dt.date, built: dict[str, BuildResult], seconds: float) -> None:
    """One line per day (each line is an event Dagster stores): what was built, its rows and seconds."""
    probes = built.get("raw_probes")
    if probes is not None and probes.rows:
        context.log.warning(f"{day}: {probes.rows} raw rows/files quarantined (see the quarantine view)")
    parts = [f"raw_probes {probes.stats['landed_probe_rows']:,} probe rows landed"] if probes else []
    parts += [f"{asset} {r.rows:,} rows {r.seconds:.2f}s" + (f" {r.stats}" if r.stats else "")
              for asset, r in built.items() if asset != "raw_probes"]
    context.log.info(f"{day}: {len(built)} table(s) built in {seconds:.1f}s: " + "; ".join(parts))


def _qualified(exc: BaseException) -> str:
    kind = type(exc)
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def _failure(description: str, cause: BaseException | None) -> dg.Failure:
    """The step's failure in words that name the day and the asset (what `sevenmaps run` prints), with the
    error's traceback kept as its metadata (the run's page shows it)."""
    metadata = {}
    if cause is not None:
        metadata["traceback"] = dg.MetadataValue.text("".join(traceback.format_exception(cause)))
    return dg.Failure(description=description, metadata=metadata)


def _results(context: dg.AssetExecutionContext, asset: str, profiles: list[DayProfile],
             extra: dict) -> dg.MaterializeResult:
    """A one-day run carries that day's numbers. A range run (a single-run backfill) records its result under
    every day of the range, so it carries no number (Dagster plots numbers per partition from each one's latest
    materialisation, and over time): the range's totals as JSON and its days as a table; each day's own
    numbers are recorded after it (_MapRun.log_days), so they are every day's latest."""
    if len(profiles) == 1 and len(context.partition_keys) == 1:
        return dg.MaterializeResult(asset_key=asset, metadata={**extra, "days": 1, **day_metadata(profiles[0])})
    keys = context.partition_keys
    return dg.MaterializeResult(asset_key=asset, metadata={
        "range": f"{keys[0]} .. {keys[-1]} ({len(keys)} days, {len(profiles)} built)",
        "range totals": dg.MetadataValue.json({"rows": sum(p.rows for p in profiles), **extra}),
        "days built": dg.MetadataValue.md(range_summary(profiles))})


def _scan(context: dg.AssetExecutionContext, lake: LakeResource, prober: ProberResource,
          days: list[dt.date]) -> int:
    """The open day's scan, its failure named as raw_probes' (its root cause first, its traceback kept)."""
    try:
        return open_day_scan(context, lake, prober, days)
    except dg.Failure:
        raise
    except Exception as exc:  # noqa: BLE001 - named as raw_probes' failure, its traceback kept
        root: BaseException = exc
        while root.__cause__ is not None:
            root = root.__cause__
        raise _failure(f"raw_probes: {_qualified(root)}: {root}", exc) from None


def _report_problems(day: dt.date, days: list[dt.date], report: DayBuild) -> str:
    """A day that did not build, in one line: what failed, what was held by its check, what was not built,
    and the later days the run leaves unbuilt."""
    problems = [f"{a} failed ({_qualified(e)}: {e})" for a, e in report.failed.items()]
    problems += [f"{a} was built but {why}" for a, why in report.held.items()]
    problems += [f"{a} was not built ({why} did not succeed)" for a, why in report.not_built.items()]
    failure = f"{day}: " + "; ".join(problems)
    cause = next(iter(report.failed.values()), None)
    if isinstance(cause, SignedDayError):
        failure = f"{frozen_day_failure(cause).description} ({failure})"
    later = days[days.index(day) + 1:]
    if len(later) == 1:
        failure += f". Left as it was by this run: {later[0]} (its windows would read this day)"
    elif later:
        failure += f". Left as they were by this run: {later[0]} .. {later[-1]} (their windows would read this day)"
    return failure


class _MapRun:
    """One run of daily_map: the selected assets and checks, and what the days built so far added up to."""

    def __init__(self, context: dg.AssetExecutionContext, paths: LakePaths):
        self.context = context
        self.paths = paths
        self.selected = [a for a in MAP_ASSET_NAMES if dg.AssetKey(a) in context.selected_asset_keys]
        self.checks = [c for c in DAY_CHECKS if c.spec.key in context.selected_asset_check_keys]
        self.checks_of: dict[str, list[DayCheck]] = {}
        for check in self.checks:
            self.checks_of.setdefault(check.asset, []).append(check)
        self.profiles: dict[str, list[DayProfile]] = {a: [] for a in self.selected}
        self.found: dict[str, dict[dt.date, dict[str, int]]] = {c.name: {} for c in self.checks}
        self.probes = {"landed_rows": 0, "quarantined_rows": 0, "quarantined_files": 0}
        self.build_seconds: dict[str, float] = {}  # per asset, over the run's days (charted per day)
        self.range_run = len(context.partition_keys) > 1
        self.days: dict[str, list[tuple[str, dict]]] = {a: [] for a in self.selected}  # (partition, numbers)
        self.provenance: dict[str, dict[str, str]] = {}  # the tags of each asset's range result
        # The run's days that had not ended when its step began: the open day, no partition of the map yet
        # (defs/partitions.py), is built but recorded by no materialisation of its own.
        started = dt.datetime.now(dt.UTC)
        self.ahead = {key for key in context.partition_keys if not ended(dt.date.fromisoformat(key), started)}

    def build(self, day: dt.date, assets: list[str]) -> DayBuild:
        """Build one day's assets, each one's numbers and blocking checks taken right after its table."""
        day_profiles: dict[str, DayProfile] = {}

        def after(asset: str, result: BuildResult) -> str | None:
            # In the build's thread: its numbers and its checks, before anything that reads it starts.
            day_profiles[asset] = _profile(self.paths, asset, day)
            failed = []
            for check in self.checks_of.get(asset, []):
                self.found[check.name][day] = violations = check.violations(self.paths, day)
                if violations:
                    failed.append(f"{check.name} {violations}")
            return f"its blocking check failed: {'; '.join(failed)}" if failed else None

        started = time.perf_counter()
        report = build_day(self.paths, day, assets, after=after)
        _log_day(self.context, day, report.built, time.perf_counter() - started)
        for asset, result in report.built.items():
            self._tally(day, asset, result, day_profiles[asset])
        return report

    def _tally(self, day: dt.date, asset: str, result: BuildResult, profile: DayProfile) -> None:
        self.profiles[asset].append(profile)
        if asset == "raw_probes":
            self.probes["landed_rows"] += result.stats["landed_probe_rows"]
            self.probes["quarantined_rows"] += result.stats["refused_rows"]
            self.probes["quarantined_files"] += result.stats["refused_files"]
        self.build_seconds[asset] = self.build_seconds.get(asset, 0.0) + result.seconds
        if self.range_run:
            self.days[asset].append((day.isoformat(), {"build seconds": round(result.seconds, 2),
                                                        **day_metadata(profile)}))

    def log_days(self, asset: str | None = None) -> None:
        """A range run's days, each under its own partition with its own numbers (of one asset, or of all; the
        open day's never: `ahead`): after the range's result, so each day's latest materialisation has the day's
        figures, and with that result's data version and provenance (defs/per_day.py)."""
        for name in self.selected if asset is None else [asset]:
            for partition, numbers in self.days[name]:
                if partition in self.ahead:
                    continue
                self.context.log_event(dg.AssetMaterialization(asset_key=name, partition=partition, metadata=numbers,
                                                               tags=self.provenance.get(name)))
            self.days[name] = []

    def check_results(self, asset: str | None = None) -> Iterator[dg.AssetCheckResult]:
        """The checks that ran (of one asset, or of all), each with the violations of every day it saw."""
        for check in self.checks if asset is None else self.checks_of.get(asset, []):
            if self.found[check.name]:
                yield check.result(self.found[check.name])

    def results(self, scanned: int) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:
        for asset in self.selected:
            if not self.profiles[asset]:
                continue
            extra = {"build seconds": round(self.build_seconds[asset], 2)}
            if asset == "raw_probes":
                extra |= {"scanned_checks": scanned, **self.probes}
            yield _results(self.context, asset, self.profiles[asset], extra)
            if self.range_run:
                self.provenance[asset] = provenance_of_result(self.context, dg.AssetKey(asset))
            yield from self.check_results(asset)
        # Each day's own materialisations only after every asset's result: Dagster reads an asset's data version
        # from its latest materialisation when it records the provenance of an asset built from it in this step,
        # and a day's event logged between the two is not the result's ("Data version mismatch", one warning
        # an asset in every range run).
        self.log_days()


@dg.multi_asset(
    name="daily_map",
    specs=DAY_SPECS,
    check_specs=[check.spec for check in DAY_CHECKS],
    partitions_def=finished_days,
    backfill_policy=SINGLE_RUN,
    can_subset=True,
    pool=lanes.DAY,
    description="The map of each UTC day of the run, a day at a time: the selected day assets built two at a "
    "time in graph order (curated/day.py build_day), each asset's blocking checks right after its table; a "
    "build that fails, or whose check fails, keeps what reads it from being built and stops the run after "
    "that day. Assets not selected are read as the lake holds them.",
)
def daily_map(context: dg.AssetExecutionContext, lake: LakeResource,
              prober: ProberResource) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:
    run = _MapRun(context, lake.paths)
    days = partition_days(context)
    scanned = _scan(context, lake, prober, days) if "raw_probes" in run.selected else 0
    failure: str | None = None
    cause: BaseException | None = None  # the first build's error, its traceback kept with the failure
    for day in days:
        assets = run.selected
        if open_day_without_scan(lake, prober, day):
            assets = [a for a in run.selected if a == "raw_probes"]
            context.log.warning(f"{day}: the open day has no scan yet; not built (it is built once its scan "
                                "lands, or with SEVENMAPS_NO_SCAN=1)")
        if not assets:
            continue
        report = run.build(day, assets)
        if not report.ok:
            failure = _report_problems(day, days, report)
            cause = next(iter(report.failed.values()), None)
            break

    built_any = any(run.profiles.values())
    if built_any:
        publish_warehouse(run.paths)
    if run.ahead:
        context.log.info(f"{min(run.ahead)}: the open day is no partition of the map until it has ended: no "
                         "materialisation of it is recorded")
    if (failure is not None and run.range_run) or run.ahead:
        # The days built are recorded by their own materialisations: the range as a whole was not built; or it
        # reaches a day that is no partition yet, under which a result would be recorded (on a new lake, with no
        # partition at all, Dagster cannot store one). Those days carry no data version, so the UI calls them
        # Unsynced: `sevenmaps backfill` maps the open day in a run of its own (cli/pipeline.py).
        run.log_days()
        yield from run.check_results()
        if failure is not None:
            raise _failure(failure, cause) from None
        return
    yield from run.results(scanned)
    if not built_any:
        context.log.info("no day of this run was built: no materialisation is recorded")
    if failure is not None:
        raise _failure(failure, cause) from None
