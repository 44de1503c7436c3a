"""The frequent checks (docs/operations.md, "Hourly checks", "Five-minute checks"): thin wiring over
`probe/frequent.py`. Hourly: an asset partitioned by UTC hour (only the open hour runs). Five-minute: a
job of one op, run by a schedule every five minutes that never starts a run while one is in flight."""


import datetime as dt
import os
from collections.abc import Iterator

import dagster as dg
import pyarrow.parquet as pq

from ..lake.retention import apply_retention
from ..probe.frequent import frequent_checks
from ..registry import submissions
from ..registry.most_used import most_used
from ..registry.owners import OwnerClaimError, five_minute_keys
from ..surfaces.oplog import OPLOG_DAYS, prune_oplog
from . import lanes
from .map_assets import scan_config
from .metadata import table_metadata
from .partitions import HOURLY_GROUP, SLICE_KEY_FORMAT, hourly_slices, open_hours
from .resources import LakeResource, ProberResource


def _result_metadata(run, chosen: dict[str, str]) -> dict:
    return {"checks": run.checks, "dagster/row_count": run.checks,
            "outcomes": dg.MetadataValue.json(dict(sorted(run.outcomes.items()))),
            "endpoints_chosen": len(chosen), "not_listed": dg.MetadataValue.json(run.not_listed[:50]),
            "seconds": round(run.seconds, 2), "run_id": run.run_id}


@dg.asset(
    partitions_def=hourly_slices, group_name=HOURLY_GROUP, kinds={"parquet"}, output_required=False, pool=lanes.HOURLY,
    metadata=table_metadata("hourly"),
    description="The hourly checks of the most used endpoints (those agents reported on in the last 7 built "
    "days and those in the operator's directory lists), the open hour only, into raw/hourly (not covered by "
    "roots). They never change a day code or uptime; they feed the current_status view, where two failed "
    "checks in a row (never one) change what is shown.",
)
def hourly_checks(context: dg.AssetExecutionContext, lake: LakeResource,
                  prober: ProberResource) -> Iterator[dg.MaterializeResult]:
    clock = prober.clock()
    starts, others = open_hours(context.partition_keys, clock())
    for key in others:
        context.log.warning(f"{key}: not the current hour ({clock():%Y-%m-%d %H:%M} UTC): an hour that has passed "
                            "is never checked")
    for start in starts:
        key = start.strftime(SLICE_KEY_FORMAT)
        lists = None
        try:
            lists = prober.read_directory_lists()
        except ValueError as exc:
            context.log.error(f"{exc}: only the endpoints agents reported on are checked this hour")
        for problem in (lists.problems if lists else ()):
            context.log.warning(f"directory lists: {problem}")
        chosen = most_used(lake.paths, start.date(), lists)
        run = frequent_checks(lake.paths, "hourly", chosen, scan_config(lake.paths, prober), clock)
        context.log.info(f"{key}: {run.checks} hourly checks of {len(chosen)} most used endpoints "
                         f"{dict(sorted(run.outcomes.items()))} in {run.seconds:.1f}s"
                         + (f"; not in the registry: {len(run.not_listed)}" if run.not_listed else ""))
        yield dg.MaterializeResult(metadata=_result_metadata(run, chosen))


hourly_check_job = dg.define_asset_job(
    "hourly_check_job", selection=dg.AssetSelection.assets(hourly_checks), partitions_def=hourly_slices,
    description="The hour's checks of the most used endpoints (raw/hourly, for current_status).")


@dg.schedule(job=hourly_check_job, cron_schedule="30 * * * *", execution_timezone="UTC",
             description="Checks the most used endpoints every hour, at half past (the hour's slice of the daily "
             "scan starts at :00).")
def hourly_check_schedule(context: dg.ScheduleEvaluationContext) -> dg.RunRequest:
    hour = context.scheduled_execution_time.astimezone(dt.UTC).replace(minute=0, second=0, microsecond=0)
    key = hour.strftime(SLICE_KEY_FORMAT)
    return dg.RunRequest(run_key=f"hourly-{key}", partition_key=key)


@dg.op(pool=lanes.FIVE_MINUTE,
       description="Checks the endpoints verified owners chose (raw/five_minute, not covered by roots): 30 s per "
       "check, robots.txt not read again (the owner asked), opted-out hosts never contacted; what the run could "
       "not reach before its window closed is skipped, never down.")
def five_minute_checks(context: dg.OpExecutionContext, lake: LakeResource, prober: ProberResource) -> dict:
    try:
        chosen = five_minute_keys(lake.paths)
    except OwnerClaimError as exc:
        raise dg.Failure(description=str(exc)) from exc
    if not chosen:
        context.log.info("no verified owner has chosen endpoints for five-minute checks")
        return {"checks": 0}
    run = frequent_checks(lake.paths, "five_minute", chosen, scan_config(lake.paths, prober), prober.clock())
    context.log.info(f"{run.checks} five-minute checks {dict(sorted(run.outcomes.items()))} in {run.seconds:.1f}s")
    context.add_output_metadata(_result_metadata(run, chosen))
    return {"checks": run.checks, "outcomes": run.outcomes}


@dg.job(description="The five-minute checks of owner-verified endpoints (one op; runs never overlap).")
def five_minute_job() -> None:
    five_minute_checks()


IN_FLIGHT = [dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.NOT_STARTED, dg.DagsterRunStatus.STARTING,
             dg.DagsterRunStatus.STARTED]


@dg.schedule(job=five_minute_job, cron_schedule="*/5 * * * *", execution_timezone="UTC",
             description="Every five minutes, the owner-verified endpoints; skipped while the previous run is still "
             "in flight, so runs never overlap (each run ends within 4 minutes: what it could not reach is skipped).")
def five_minute_schedule(context: dg.ScheduleEvaluationContext) -> dg.RunRequest | dg.SkipReason:
    running = context.instance.get_runs(dg.RunsFilter(job_name="five_minute_job", statuses=IN_FLIGHT), limit=1)
    if running:
        return dg.SkipReason(f"the previous five-minute run {running[0].run_id[:8]} is still in flight")
    at = context.scheduled_execution_time.astimezone(dt.UTC)
    return dg.RunRequest(run_key=f"five-minute-{at:%Y-%m-%dT%H:%M}")


@dg.op(pool=lanes.DAY,
       description="Sums each finished day of raw/hourly, raw/five_minute and raw/sensors into its aggregate, "
       "then deletes the raw batches of days older than their window (30, 90 and 30 days) whose aggregate "
       "exists; never a file a signed root names; every deletion logged in control/retention_log.jsonl. Also "
       "deletes the MCP server's operational log (oplog/) past 30 days.")
def apply_retention_windows(context: dg.OpExecutionContext, lake: LakeResource, prober: ProberResource) -> dict:
    now = prober.clock()()
    report = apply_retention(lake.paths, now.date(), now)
    pruned = prune_oplog(lake.paths, now.date())
    if pruned:
        context.log.info(f"deleted {len(pruned)} day(s) of the MCP server's operational log older than "
                         f"{OPLOG_DAYS} days: {', '.join(pruned[:5])}{' ...' if len(pruned) > 5 else ''}")
    for kind, day, files, size in report.deleted:
        context.log.info(f"deleted raw/{kind}/day={day}: {files} file(s), {size:,} bytes (aggregate kept; logged)")
    for kind, day, why in report.kept_without_aggregate:
        context.log.warning(f"kept raw/{kind}/day={day}: {why}")
    context.log.info(report.summary())
    context.add_output_metadata({"aggregated_days": len(report.aggregated), "deleted_days": len(report.deleted),
                                 "deleted_files": sum(d[2] for d in report.deleted),
                                 "deleted_bytes": sum(d[3] for d in report.deleted),
                                 "kept_without_aggregate": len(report.kept_without_aggregate),
                                 "oplog_days_deleted": len(pruned)})
    return {"deleted_days": len(report.deleted)}


@dg.job(description="Retention of the frequent raw batches (hourly, five-minute, sensors): aggregate, then delete "
        "past their window; signed files are never touched.")
def retention_job() -> None:
    apply_retention_windows()


@dg.schedule(job=retention_job, cron_schedule="30 1 * * *", execution_timezone="UTC",
             description="Daily at 01:30 UTC: aggregates the day that ended and deletes raw frequent batches past "
             "their window.")
def retention_schedule(context: dg.ScheduleEvaluationContext) -> dg.RunRequest:
    at = context.scheduled_execution_time.astimezone(dt.UTC)
    return dg.RunRequest(run_key=f"retention-{at:%Y-%m-%d}")


def submission_checks_so_far(lake: LakeResource, keys: set[str]) -> dict[str, list[dict]]:
    """Every landed check of raw/submitted for `keys` (their whole 7 days)."""
    found: dict[str, list[dict]] = {k: [] for k in keys}
    folder = lake.paths.root / "raw" / "submitted"
    for path in sorted(folder.glob("day=*/*.parquet")) if folder.is_dir() else ():
        try:
            rows = pq.read_table(path).to_pylist()
        except Exception:  # noqa: BLE001 - an unreadable batch holds no check we can count
            continue
        for row in rows:
            if row.get("server_key") in found:
                found[row["server_key"]].append(row)
    return found


@dg.op(pool=lanes.SUBMISSIONS,
       description="Queues the operator's submissions file, checks every submitted server inside its 7 days "
       "(raw/submitted, robots.txt obeyed, opted-out hosts never contacted), and decides those whose 7 days have "
       "ended by the same thresholds for everyone: admitted (it joins the next day's registry snapshot) or refused "
       "with the reason; both recorded in control/submissions.parquet.")
def check_submissions(context: dg.OpExecutionContext, lake: LakeResource, prober: ProberResource) -> dict:


    now = prober.clock()()
    config = scan_config(lake.paths, prober)
    path = prober.submissions_file or os.environ.get(submissions.SUBMISSIONS_ENV, "")
    try:
        if path:
            queued, problems = submissions.queue_file(lake.paths, path, now, host_map=config.host_map or None)
            for problem in problems:
                context.log.warning(f"submissions file: {problem}")
            if queued:
                context.log.info(f"queued {len(queued)} new submission(s) from {path}")
        due = submissions.due(lake.paths, now)
    except submissions.SubmissionError as exc:
        raise dg.Failure(description=str(exc)) from exc
    checks = 0
    if due:
        run = frequent_checks(lake.paths, "submitted", {e.server_key for e in due}, config, prober.clock(),
                              listings=[submissions.listing_of(e) for e in due])
        checks = run.checks
        context.log.info(f"{run.checks} check(s) of submitted servers {dict(sorted(run.outcomes.items()))}")
    ended = {e.server_key for e in submissions.read_submissions(lake.paths)
             if e.status == "queued" and now >= e.window_ends()}
    decided = submissions.decide(lake.paths, now, submission_checks_so_far(lake, ended)) if ended else []
    for entry in decided:
        context.log.info(f"{entry.url}: {entry.status} ({entry.reason})")
    context.add_output_metadata({"checked": checks, "admitted": sum(e.status == "admitted" for e in decided),
                                 "refused": sum(e.status == "refused" for e in decided)})
    return {"checked": checks, "decided": len(decided)}


@dg.job(description="The checks of submitted servers (every 6 hours for 7 days) and their decisions.")
def submission_job() -> None:
    check_submissions()


@dg.schedule(job=submission_job, cron_schedule="15 */6 * * *", execution_timezone="UTC",
             description="Every 6 hours (at :15): checks the servers submitted in the last 7 days, and admits or "
             "refuses those whose 7 days have ended.")
def submission_schedule(context: dg.ScheduleEvaluationContext) -> dg.RunRequest:
    at = context.scheduled_execution_time.astimezone(dt.UTC)
    return dg.RunRequest(run_key=f"submissions-{at:%Y-%m-%dT%H}")
