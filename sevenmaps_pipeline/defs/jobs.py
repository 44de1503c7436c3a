"""Jobs and schedules: scan each hour's slice, probe its endpoints' readiness after it, build the map of the
day that ended, sign it (docs/operations.md, "Schedules"). Each in its lane (defs/lanes.py); the tags the
schedules put on a day's runs let the day's map and signing wait for the runs that land its files."""


import datetime as dt

import dagster as dg

from ..curated.day import MAP_ASSET_NAMES as MAP_ASSET_NAMES  # the tests and docs name the day assets from here
from ..integrity.status import SIGN_SCHEDULE
from . import lanes
from .day_map import daily_map
from .freshness import FRESHNESS_CHECKS
from .integrity_assets import daily_root, day_snapshot
from .map_assets import probe_slice
from .open_day_assets import open_day
from .partitions import FIRST_DAY, SLICE_KEY_FORMAT, finished_days, hourly_slices
from .readiness_assets import readiness_job
from .resources import scan_shards
from .surface_assets import day_site

# The map's day assets: one multi-asset whose step builds them all (defs/day_map.py), in graph order as the
# library's day builds list them (curated/day.py); a day is signed only once all of them exist.
MAP_ASSETS = (daily_map,)
# What the sign job materialises once every map asset of the day exists: the root, the researchers'
# snapshot, and the site built from the signed files (with their proofs).
SIGN_ASSETS = (daily_root, day_snapshot, day_site)

map_job = dg.define_asset_job(
    "daily_map_job",
    # The freshness checks are the sensor's to evaluate, on their deadlines, not each run's.
    selection=dg.AssetSelection.assets(*MAP_ASSETS) - dg.AssetSelection.checks(*FRESHNESS_CHECKS),
    partitions_def=finished_days,
    description="The validation of the day's scan (its slices), then daily_status, the tool tables, "
    "tool_changes, server_history, the agent reports, ratings and incidents, the reliable rankings and the "
    "readiness tables for that UTC day once it has ended, in one step (daily_map: two builds at a time, each "
    "asset's checks right after it).",
)

sign_job = dg.define_asset_job(
    "sign_day_job",
    selection=dg.AssetSelection.assets(*SIGN_ASSETS) - dg.AssetSelection.checks(*FRESHNESS_CHECKS),
    partitions_def=finished_days,
    description="Sign the day (and any unsigned earlier day first, in chain order), log its lines, write its "
    "researchers' snapshot, and build its site (pages, badges, lists, feeds).",
)

SCAN_SHARDS = scan_shards()

scan_slice_job = dg.define_asset_job(
    "scan_slice_job",
    selection=dg.AssetSelection.assets(probe_slice, open_day) - dg.AssetSelection.checks(*FRESHNESS_CHECKS),
    partitions_def=hourly_slices,
    # Shards are steps side by side, each in its own process (docs/scaling.md, "The scan in shards by
    # host"); one shard needs no more than the code location's one process per run.
    executor_def=(dg.multiprocess_executor.configured({"max_concurrent": SCAN_SHARDS}) if SCAN_SHARDS > 1
                  else None),
    description="One hourly slice of the day's scan (the endpoints whose moving daily hour it is), in the slice "
    "lane: never queued behind another cadence's run; then the open day so far (open_day: its provisional "
    "tables, read by the map's server until the day is built). Each slice is followed by the readiness probe "
    "of its endpoints, a run of its own (readiness_job).",
)


@dg.schedule(job=scan_slice_job, cron_schedule="0 * * * *", execution_timezone="UTC",
             description="Scans the slice of the hour that begins (probe/slices.py: every endpoint once a UTC day, "
             "at an hour that moves by one each day). A slice runs only within its hour, never later.")
def scan_slice_schedule(context: dg.ScheduleEvaluationContext) -> dg.RunRequest | dg.SkipReason:
    hour = context.scheduled_execution_time.astimezone(dt.UTC).replace(minute=0, second=0, microsecond=0)
    if hour.date() < FIRST_DAY:
        return dg.SkipReason(f"{hour:%Y-%m-%d %H}:00 is before the lake's first day {FIRST_DAY}")
    key = hour.strftime(SLICE_KEY_FORMAT)
    return dg.RunRequest(run_key=f"slice-{key}", partition_key=key,
                         tags=lanes.lands_day(lanes.SLICE, hour.date().isoformat()))


@dg.run_status_sensor(
    run_status=dg.DagsterRunStatus.SUCCESS, monitored_jobs=[scan_slice_job], request_job=readiness_job,
    name="readiness_sensor",
    description="Starts the readiness probe of a slice's endpoints (readiness_job, in its own lane) once the slice "
    "has succeeded, with any endpoint of the day's earlier slices still without a readiness check: it follows "
    "the scan hour by hour, and no slice, hourly or five-minute check waits for it. The day's map and signing "
    "wait for it (its run carries the day it lands into).")
def readiness_sensor(context: dg.RunStatusSensorContext) -> dg.RunRequest | dg.SkipReason:
    key = context.dagster_run.tags.get("dagster/partition", "")
    try:
        start = dt.datetime.strptime(key, SLICE_KEY_FORMAT)
    except ValueError:
        return dg.SkipReason(f"run {context.dagster_run.run_id[:8]} is not one slice ({key or 'no partition'})")
    day = start.date().isoformat()
    return dg.RunRequest(run_key=f"readiness-{key}", tags=lanes.lands_day(lanes.READINESS, day),
                         run_config={"ops": {"slice_readiness": {"config": {"day": day,
                                                                            "through_hour": start.hour}}}})


@dg.schedule(job=map_job, cron_schedule="10 0 * * *", execution_timezone="UTC",
             description="Builds the map of the UTC day that just ended, once its last slice (23:00) has run.")
def daily_map_schedule(context: dg.ScheduleEvaluationContext) -> dg.RunRequest | dg.SkipReason:
    yesterday = context.scheduled_execution_time.astimezone(dt.UTC).date() - dt.timedelta(days=1)
    if yesterday < FIRST_DAY:
        return dg.SkipReason(f"{yesterday} is before the lake's first day {FIRST_DAY}: no map to build")
    # The map waits in the queue while a run landing that day's files (its 23:00 slice, its readiness runs, its
    # lookups) is still in flight (defs/lanes.py).
    return dg.RunRequest(run_key=f"map-{yesterday}", partition_key=yesterday.isoformat(),
                         tags=lanes.reads_day(yesterday.isoformat()))


@dg.schedule(job=sign_job, cron_schedule=f"{SIGN_SCHEDULE.minute} {SIGN_SCHEDULE.hour} * * *", execution_timezone="UTC",
             description="Signs the UTC day that just ended (catching up any unsigned earlier day first).")
def sign_schedule(context: dg.ScheduleEvaluationContext) -> dg.RunRequest | dg.SkipReason:
    yesterday = context.scheduled_execution_time.astimezone(dt.UTC).date() - dt.timedelta(days=1)
    if yesterday < FIRST_DAY:
        return dg.SkipReason(f"{yesterday} is before the lake's first day {FIRST_DAY}: nothing to sign")
    return dg.RunRequest(run_key=f"sign-{yesterday}", partition_key=yesterday.isoformat(),
                         tags=lanes.reads_day(yesterday.isoformat()))
