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

from ..curated.day import MAP_ASSET_NAMES, BuildResult, build_day
from ..curated.profile import DayProfile, profile_day
from ..lake.parquet_io import SignedDayError
from ..lake.warehouse import publish_warehouse
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
from .partitions import daily_partitions
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
    """A one-day run carries that day's numbers; a range run (a single-run backfill) has logged each day's
    materialisation with its own numbers as the day was built, and ends with the range's summary."""
    if len(profiles) == 1 and len(context.partition_keys) == 1:
        return dg.MaterializeResult(asset_key=asset, metadata={**extra, "days": 1, **day_metadata(profiles[0])})
    rows = sum(p.rows for p in profiles)
    return dg.MaterializeResult(asset_key=asset, metadata={
        **extra, "days": len(context.partition_keys), "rows": rows, "dagster/row_count": rows,
        "days built": dg.MetadataValue.md(range_summary(profiles))})


@dg.multi_asset(
    name="daily_map",
    specs=DAY_SPECS,
    check_specs=[check.spec for check in DAY_CHECKS],
    partitions_def=daily_partitions,
    backfill_policy=SINGLE_RUN,
    can_subset=True,
    description="The map of each UTC day of the run, a day at a time: the selected day assets built two at a "
    "time in graph order (curated/day.py build_day), each asset's blocking checks right after its table; a "
    "build that fails, or whose check fails, keeps what reads it from being built and stops the run after "
    "that day. Assets not selected are read as the lake holds them.",
)
def daily_map(context: dg.AssetExecutionContext, lake: LakeResource,
              prober: ProberResource) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:
    paths = lake.paths
    days = partition_days(context)
    selected = [a for a in MAP_ASSET_NAMES if dg.AssetKey(a) in context.selected_asset_keys]
    checks = [c for c in DAY_CHECKS if c.spec.key in context.selected_asset_check_keys]
    checks_of: dict[str, list[DayCheck]] = {}
    for check in checks:
        checks_of.setdefault(check.asset, []).append(check)
    scanned = 0
    if "raw_probes" in selected:
        try:
            scanned = open_day_scan(context, lake, prober, days)
        except dg.Failure:
            raise
        except Exception as exc:  # noqa: BLE001 - named as raw_probes' failure, its traceback kept
            root: BaseException = exc
            while root.__cause__ is not None:
                root = root.__cause__
            raise _failure(f"raw_probes: {_qualified(root)}: {root}", exc) from None
    profiles: dict[str, list[DayProfile]] = {a: [] for a in selected}
    found: dict[str, dict[dt.date, dict[str, int]]] = {c.name: {} for c in checks}
    probes = {"landed_rows": 0, "quarantined_rows": 0, "quarantined_files": 0}
    build_seconds: dict[str, float] = {}  # per asset, over the run's days: the Plots tab charts it per day
    range_run = len(context.partition_keys) > 1
    failure: str | None = None
    cause: BaseException | None = None  # the first build's error, its traceback kept with the failure

    for day in days:
        assets = selected
        if open_day_without_scan(lake, prober, day):
            assets = [a for a in selected if a == "raw_probes"]
            context.log.warning(f"{day}: the open day has no scan yet; not built (it is built once its scan "
                                "lands, or with SEVENMAPS_NO_SCAN=1)")
        if not assets:
            continue
        day_profiles: dict[str, DayProfile] = {}

        def after(asset: str, result: BuildResult, day: dt.date = day,
                  day_profiles: dict[str, DayProfile] = day_profiles) -> str | None:
            # In the build's thread: its numbers and its checks, before anything that reads it starts.
            day_profiles[asset] = _profile(paths, asset, day)
            failed = []
            for check in checks_of.get(asset, []):
                found[check.name][day] = violations = check.violations(paths, day)
                if violations:
                    failed.append(f"{check.name} {violations}")
            return f"its blocking check failed: {'; '.join(failed)}" if failed else None

        started = time.perf_counter()
        report = build_day(paths, day, assets, after=after)
        _log_day(context, day, report.built, time.perf_counter() - started)
        for asset, result in report.built.items():
            profiles[asset].append(day_profiles[asset])
            if asset == "raw_probes":
                probes["landed_rows"] += result.stats["landed_probe_rows"]
                probes["quarantined_rows"] += result.stats["refused_rows"]
                probes["quarantined_files"] += result.stats["refused_files"]
            build_seconds[asset] = build_seconds.get(asset, 0.0) + result.seconds
            if range_run:
                context.log_event(dg.AssetMaterialization(asset_key=asset, partition=day.isoformat(), metadata={
                    "build seconds": round(result.seconds, 2), **day_metadata(day_profiles[asset])}))
        if not report.ok:
            problems = [f"{a} failed ({_qualified(e)}: {e})" for a, e in report.failed.items()]
            problems += [f"{a} was built but {why}" for a, why in report.held.items()]
            problems += [f"{a} was not built ({why} did not succeed)" for a, why in report.not_built.items()]
            failure = f"{day}: " + "; ".join(problems)
            cause = next(iter(report.failed.values()), None)
            if isinstance(cause, SignedDayError):
                failure = f"{frozen_day_failure(cause).description} ({failure})"
            later = days[days.index(day) + 1:]
            if later:
                failure += f". Not built: {later[0]} .. {later[-1]} (their windows would read this day)"
            break

    if any(profiles.values()):
        publish_warehouse(paths)
    if failure is not None and range_run:
        # The days built have their materialisations; the range as a whole was not built.
        for check in checks:
            if found[check.name]:
                yield check.result(found[check.name])
        raise _failure(failure, cause) from None
    for asset in selected:
        if not profiles[asset]:
            continue
        extra = {"build seconds": round(build_seconds[asset], 2)}
        if asset == "raw_probes":
            extra |= {"scanned_checks": scanned, **probes}
        yield _results(context, asset, profiles[asset], extra)
        for check in checks_of.get(asset, []):
            if found[check.name]:
                yield check.result(found[check.name])
    if not any(profiles.values()):
        context.log.info("no day of this run was built: no materialisation is recorded")
    if failure is not None:
        raise _failure(failure, cause) from None
