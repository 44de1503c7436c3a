"""The map's day partitions: landed raw probes -> daily_status -> server_history, and the scan's slices.

Each day asset is a spec here (what it is, what it reads); the map's one step builds them all by calling
`sevenmaps_pipeline.curated` (defs/day_map.py); the SQL behind every figure is in `sql/<asset>.sql`.
"""


import dataclasses
import datetime as dt
from collections.abc import Iterator

import dagster as dg

from ..curated.day import asset_inputs
from ..lake.parquet_io import SignedDayError
from ..lake.paths import LakePaths
from ..probe.run import DayScan, ReadinessDay, readiness_day, scan_day, scan_slice, take_snapshot
from ..probe.shards import Shard
from ..probe.slices import SLICE_METHOD
from ..registry.opt_outs import OptOutRegistryError, opted_out_hosts
from ..registry.skills_list import SkillsList
from . import lanes
from .metadata import table_metadata
from .partitions import HOURLY_GROUP, SLICE_KEY_FORMAT, hourly_slices, open_hours
from .resources import LakeResource, ProberResource, scan_shards

SINGLE_RUN = dg.BackfillPolicy.single_run()
# An asset's body, or an op's inside a graph-backed asset (the sharded slice).
StepContext = dg.AssetExecutionContext | dg.OpExecutionContext


# The table an asset writes, where its name is not the table's.
ASSET_TABLE = {"raw_probes": "probes"}


# "Every day up to the day built" as a window Dagster can hold: a start that no lake reaches (Dagster clamps a
# window to the partitions that exist).
EVERY_DAY_OFFSET = 100_000


def _window(days: int | None) -> dg.PartitionMapping | None:
    if days == 1:
        return None  # the same day
    return dg.TimeWindowPartitionMapping(start_offset=-(days - 1) if days else -EVERY_DAY_OFFSET, end_offset=0)


def day_deps(name: str) -> list[dg.AssetDep]:
    """The asset's dependencies as the day's graph declares them (curated/day.py DAY_GRAPH): each day asset it
    reads, over its window. An asset's reads of its own earlier days are not declared to Dagster: a
    self-dependency would make every backfill run one day after another (docs/operations.md, "The day's
    graph"); signing's freshness rule still holds them."""
    return [dg.AssetDep(read.source, partition_mapping=_window(read.days)) for read in asset_inputs(name)]


def day_spec(name: str, group_name: str, kinds: tuple[str, ...] = ("parquet", "duckdb"),
             extra_deps: tuple[dg.AssetDep, ...] = (), **kwargs) -> dg.AssetSpec:
    """A curated asset partitioned by finished UTC day (defs/partitions.py), with its table's column schema
    attached and its dependencies generated from the day's graph (plus `extra_deps` from outside it: the scan's
    slices).
    Every one is built by the map's one step (defs/day_map.py), a day at a time, its builds two at a time.
    Its output is not required: a run that builds none of its days records no materialisation, so the UI never
    shows a table that does not exist; nor does the open day, built or not (defs/day_map.py)."""
    table = ASSET_TABLE.get(name, name)
    return dg.AssetSpec(name, group_name=group_name, kinds=set(kinds), metadata=table_metadata(table),
                        skippable=name != "raw_probes", deps=[*extra_deps, *day_deps(name)], **kwargs)


def frozen_day_failure(exc: SignedDayError) -> dg.Failure:
    """A signed day that would come out different stops the run with the day's name (an unchanged one
    passes silently: see lake.parquet_io.write_parquet)."""
    return dg.Failure(description=f"{exc}. Recomputing it would change it; signed history is never "
                      "rewritten (backfill unsigned days only, or investigate with `sevenmaps verify`).")


def open_day_without_scan(lake: LakeResource, prober: ProberResource, day: dt.date) -> bool:
    """The open UTC day before its scan has landed anything: building it would publish an all-n map (a run
    tagged with the open day, ahead of its partition: `sevenmaps backfill` through today). It is built once its
    scan lands, or when `no_scan`."""
    return (day == prober.clock()().date() and not prober.no_scan and not lake.paths.registry_file(day).exists()
            and not lake.paths.raw_files("probes", day))


def scan_config(paths: LakePaths, prober: ProberResource, shard: Shard | None = None):
    """The prober's configuration with the lake's opt-out registry added to its opted-out hosts: every check
    kind reads it (docs/operations.md, "Opt-outs"). An unreadable registry stops the run, naming it. A shard
    gets its share of the concurrency, so N shards side by side check as many endpoints at once as one; every
run of the lake takes its hosts' leases in one file (probe/leases.py)."""


    config = prober.probe_config()
    try:
        hosts = opted_out_hosts(paths)
    except OptOutRegistryError as exc:
        raise dg.Failure(description=str(exc)) from exc
    concurrency = -(-config.concurrency // shard.count) if shard else config.concurrency
    # The lake's lanes run side by side (docs/operations.md, "Schedules"): the host leases keep one request
    # at a time per host across their runs.
    return dataclasses.replace(config, opted_out_hosts=config.opted_out_hosts | hosts, concurrency=concurrency,
                               host_leases=paths.host_leases)


def run_readiness(context: StepContext, paths: LakePaths, day: dt.date, prober: ProberResource,
                  clock, fail: bool = False, through_hour: int | None = None) -> ReadinessDay | None:
    """A readiness run of the day's listings up to the slice `through_hour` (None: every listing) and of the
    skills not read yet that day, after that slice (or the whole-day scan): its own raw kinds, never a day code.
    Inside a run that builds the day's map its failure is logged as an error and leaves the map as it is (the
    readiness tables then show the endpoints it did check, or none); in a run of its own (`fail`) it fails
    that run, naming why."""
    skills = SkillsList((), ())
    try:
        skills = prober.skills()
    except ValueError as exc:
        context.log.error(f"{exc}: no skills are read today")
    for problem in skills.problems:
        context.log.warning(f"skills list: {problem}")
    which = "every listing" if through_hour is None else f"the listings of the slices through {through_hour:02d}:00"
    context.log.info(f"{day}: readiness probe of {which} and {len(skills.folders)} skill(s) ...")
    try:
        with prober.codehost() as codehost:
            report = readiness_day(paths, day, scan_config(paths, prober), clock, codehost, skills.folders,
                                   through_hour=through_hour)
    except Exception as exc:  # noqa: BLE001 - the readiness run never takes the day's map down
        why = f"{day}: the readiness run failed ({type(exc).__name__}: {exc}); what it landed is kept"
        if fail:
            raise dg.Failure(description=why) from exc
        context.log.error(why)
        return None
    context.log.info(f"{day}: readiness: {report.checks:,} checks {dict(sorted(report.outcomes.items()))}, "
                     f"{report.surfaces:,} documents, {report.skills} skill(s) in {report.seconds:.1f}s")
    return report


def run_slice(context: StepContext, paths: LakePaths, day: dt.date, hour: int, prober: ProberResource,
              clock) -> DayScan:
    """One hourly slice of the day's scan in one go (the replayed day)."""
    start = dt.datetime.combine(day, dt.time(hour), dt.UTC)
    return scan_slice_shard(context, paths, start, prober, clock, None)


def scan_slice_shard(context: StepContext, paths: LakePaths, start: dt.datetime, prober: ProberResource, clock,
                     shard: Shard | None) -> DayScan:
    """One shard of the slice that starts at `start` (all of it when `shard` is None): its hosts' endpoints,
    into its own part files."""
    label = f" shard {shard.label}" if shard else ""
    context.log.info(f"{start:%Y-%m-%d %H}:00{label}: scanning the slice's endpoints (registry "
                     f"{prober.registry_url}) ...")
    report = scan_slice(paths, start.date(), start.hour, prober.registry_url, scan_config(paths, prober, shard),
                        clock, control_url=prober.control_url or None, shard=shard)
    context.log.info(f"{start:%Y-%m-%d %H}:00{label}: {report.probe_rows:,} checks "
                     f"{dict(sorted(report.outcomes.items()))} in {report.seconds:.1f}s ({report.registry_rows:,} "
                     f"listings in the day's snapshot{', reused' if report.registry_reused else ''})")
    return report


def scan_open_day(context: dg.AssetExecutionContext, paths: LakePaths, day: dt.date, prober: ProberResource) -> int:
    """The open day's scan from raw_probes: every endpoint at once (whole_day_scan), the day's 24 slices
    replayed in order (demo and tests), or nothing: in production the hourly slices scan (probe_slice), and
    raw_probes validates what they landed. Returns the checks made."""
    if prober.whole_day_scan:
        clock = prober.clock()
        context.log.info(f"{day}: scanning every endpoint of the registry at {prober.registry_url} ...")
        report = scan_day(paths, day, prober.registry_url, scan_config(paths, prober), clock,
                          control_url=prober.control_url or None)
        context.log.info(f"{day}: {report.registry_rows:,} listings, {report.probe_rows:,} checks "
                         f"{dict(sorted(report.outcomes.items()))} in {report.seconds:.1f}s")
        if prober.readiness:
            run_readiness(context, paths, day, prober, clock)
        return report.probe_rows
    if prober.replay_day:
        checks = 0
        for hour in range(24):
            if hour in prober.replay_missed_hours:
                context.log.warning(f"{day} {hour:02d}:00: the slice did not run (replayed miss): its endpoints "
                                    "stay n today")
                continue
            report = run_slice(context, paths, day, hour, prober, prober.clock(hour))
            checks += report.probe_rows
            # The slice ran (in this run, in its own hour's clock), so its partition says so: the UI shows
            # the replayed day's slices done, as a day the schedule scanned (docs/operations.md, "Backfilling").
            context.log_event(dg.AssetMaterialization(
                asset_key="probe_slice", partition=dt.datetime.combine(day, dt.time(hour)).strftime(SLICE_KEY_FORMAT),
                description="replayed in the day's map run (raw_probes), in its own hour's clock",
                metadata={"checks": report.probe_rows, "dagster/row_count": report.probe_rows,
                          "outcomes": dg.MetadataValue.json(dict(sorted(report.outcomes.items()))),
                          "replayed": True}))
        # The replayed day probes readiness once, after its slices: one run over what the runs after each slice
        # would read, each document still asked once (production: readiness_sensor, defs/jobs.py).
        if prober.readiness:
            run_readiness(context, paths, day, prober, prober.clock(23))
        return checks
    context.log.info(f"{day}: the open day is scanned by its hourly slices (probe_slice, scan_slice_schedule); "
                     "this run validates what they have landed so far")
    return 0


@dg.op(out=dg.DynamicOut(str), pool=lanes.SLICE,
       description="The slice's hour, if it is now: the day's registry snapshot "
       "(taken once, by the day's first slice), then one shard per host group (SEVENMAPS_SCAN_SHARDS).")
def slice_shards(context: dg.OpExecutionContext, lake: LakeResource,
                 prober: ProberResource) -> Iterator[dg.DynamicOutput[str]]:
    clock = prober.clock()
    starts, others = open_hours(list(context.partition_keys), clock())
    missed = [f"{key}: the slice's hour is not now ({clock():%Y-%m-%d %H:%M} UTC): never scanned (a slice that "
              "did not run leaves its endpoints n that day)" for key in others]
    if missed and not starts:
        # A slice started after its hour (queued too long, launched by hand) is a miss, and says so: its run
        # fails with the reason, on the partition's page, beside the freshness check's failure.
        raise dg.Failure(description="; ".join(missed), metadata={"missed_slices": dg.MetadataValue.json(others)})
    for line in missed:
        context.log.warning(line)
    for start in starts:
        key = start.strftime(SLICE_KEY_FORMAT)
        if not prober.registry_url:
            raise dg.Failure(description=f"{key}: no registry URL is set (SEVENMAPS_REGISTRY_URL, the prober "
                             "resource's registry_url): the slice cannot be scanned")
        # A deployment setting, as the executor it goes with (defs/jobs.py): every step reads the same one.
        shards = scan_shards()
        if shards > 1:
            # Every shard reads the one snapshot: it lands before any of them starts.
            rows = take_snapshot(lake.paths, start.date(), prober.registry_url, scan_config(lake.paths, prober),
                                 clock)
            context.log.info(f"{key}: {rows:,} listings in the day's snapshot; {shards} shards by host")
        for index in range(shards):
            yield dg.DynamicOutput(f"{key}|{index}|{shards}", mapping_key=f"s{index + 1}of{shards}")


@dg.op(pool=lanes.SLICE,
       description="One shard of the slice: the endpoints of its hosts (a host is in exactly one shard, so "
       "each keeps one request at a time per host), into its own part files under its own run id, with its "
       "own control check (probe/shards.py).")
def scan_shard(context: dg.OpExecutionContext, lake: LakeResource, prober: ProberResource, task: str) -> dict:
    key, index, count = task.split("|")
    start = dt.datetime.strptime(key, SLICE_KEY_FORMAT).replace(tzinfo=dt.UTC)
    shard = Shard(int(index), int(count)) if int(count) > 1 else None
    report = scan_slice_shard(context, lake.paths, start, prober, prober.clock(), shard)
    return {"key": key, "hour": start.hour, "day": start.date().isoformat(), "run_id": report.run_id,
            "checks": report.probe_rows, "outcomes": report.outcomes, "seconds": report.seconds,
            "listings": report.registry_rows, "reused": report.registry_reused}


@dg.op(out=dg.Out(dg.Nothing, is_required=False), pool=lanes.SLICE,
       description="After the slice's shards: the "
       "slice's numbers. A run whose hour was not now scanned nothing and records no materialisation (its "
       "slice_shards step recorded the miss). The readiness probe of the slice's endpoints is a run of its own "
       "(readiness_job), which the slice's success starts.")
def slice_landed(context: dg.OpExecutionContext, shards: list[dict]) -> Iterator[dg.Output]:
    if not shards:
        return
    first = shards[0]
    outcomes: dict[str, int] = {}
    for shard in shards:
        for outcome, n in shard["outcomes"].items():
            outcomes[outcome] = outcomes.get(outcome, 0) + n
    checks = sum(shard["checks"] for shard in shards)
    context.add_output_metadata({
        "checks": checks, "dagster/row_count": checks,
        "outcomes": dg.MetadataValue.json(dict(sorted(outcomes.items()))),
        "listings_in_snapshot": first["listings"], "snapshot_reused": all(shard["reused"] for shard in shards),
        "seconds": round(max(shard["seconds"] for shard in shards), 2), "slice_method": SLICE_METHOD,
        "shards": len(shards), "run_id": first["run_id"] if len(shards) == 1 else [s["run_id"] for s in shards]})
    yield dg.Output(None)


@dg.graph_asset(
    partitions_def=hourly_slices, group_name=HOURLY_GROUP, kinds={"parquet"}, metadata=table_metadata("probes"),
    description="One hourly slice of the day's scan (the moving daily hour, probe/slices.py): within its own "
    "UTC hour only, the prober checks the endpoints whose slot that hour is today (initialize, "
    "notifications/initialized, tools/list; never a tool call) into raw/probes and raw/origins, the day's first "
    "slice taking the registry snapshot into raw/registry; each is followed by the readiness probe of its "
    "endpoints (readiness_job, a run of its own) into raw/readiness, raw/readiness_surfaces and raw/skills. An "
    "hour that has passed is never scanned (a run started after it fails, naming the miss): its endpoints "
    "stay n that day. With SEVENMAPS_SCAN_SHARDS=N the "
    "slice is N steps by host, side by side (docs/scaling.md, \"The scan in shards by host\").",
)
def probe_slice():
    return slice_landed(slice_shards().map(scan_shard).collect())


raw_probes = day_spec(
    "raw_probes", "map",
    extra_deps=(dg.AssetDep(probe_slice, partition_mapping=dg.TimeWindowPartitionMapping()),),
    description="The day's scan, landed: its 24 hourly slices (probe_slice) check every listed endpoint once "
    "into raw/registry, raw/probes and raw/origins, each slice followed by the readiness probe of its endpoints "
    "into raw/readiness, raw/readiness_surfaces and raw/skills (its own check kind: it never "
    "changes a day code). With whole_day_scan set, built on the open day it checks every endpoint at once "
    "instead. A day or an hour that has passed is never probed (its endpoints stay n). Then whatever landed "
    "is validated: unreadable files and invalid rows go to curated/quarantine with a reason "
    "(sql/quarantine.sql), never counted and never silently dropped.",
)


def open_day_scan(context: dg.AssetExecutionContext, lake: LakeResource, prober: ProberResource,
                  days: list[dt.date]) -> int:
    """raw_probes' part before its validation: the open day's scan when the run has it (whole_day_scan, or
    the replayed day), refused when no registry is set; a day that has passed is never probed. Returns the
    checks made."""
    clock = prober.clock()
    today = clock().date()
    if today in days and not prober.registry_url and not prober.no_scan:
        raise dg.Failure(description=f"{today} is the open UTC day and no registry URL is set: its scan "
                         "cannot run, and building it from nothing would put every endpoint at n. Set "
                         "SEVENMAPS_REGISTRY_URL (the prober resource's registry_url), leave the open day out "
                         "of the backfill, or set SEVENMAPS_NO_SCAN=1 to build it from what has landed.")
    scanned = 0
    for day in days:
        if prober.registry_url and day == clock().date():
            scanned += scan_open_day(context, lake.paths, day, prober)
        elif prober.registry_url:
            context.log.info(f"{day}: has passed ({clock().date()} UTC now): never probed, nothing lands")
    return scanned


daily_status = day_spec(
    "daily_status", "map",
    description="One row per endpoint on the map that UTC day: day code o/a/p/d/n, reason, shown status "
    "(incl. 'answers, but not as a standard MCP endpoint'), handshake, protocol, tool count and size, "
    "tokens estimate, tools_hash. A day without a valid daily check is n, never d. sql/daily_status.sql",
)


failure_reasons = day_spec(
    "failure_reasons", "map",
    description="Why the day's checks failed: the endpoints whose deciding daily check was d, counted by the "
    "classes the Agent-Ready directory publishes (HTTP 4xx, could not connect, HTTP 5xx, no answer in time, "
    "answered but not as MCP, rate-limited 429, refused the handshake) and a redirect to another domain; every "
    "class has a row. Shown on the site's index. sql/failure_reasons.sql",
)


server_history = day_spec(
    "server_history", "map",
    description="Per endpoint on the map: its 30 day codes oldest first, checked/answered days, the days it "
    "answered with tools (an empty tool list is an answer, not tools), uptime "
    "(floored, never 100% unless every checked day answered; '30-day uptime' from 14 checked days), "
    "success chance with a 90% credible interval, stability of the tool list from the change days of "
    "tool_changes, and the change days of the last 60 days. sql/server_history.sql",
)
