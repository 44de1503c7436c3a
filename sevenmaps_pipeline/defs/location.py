"""The one Definitions object of the code location (`sevenmaps_pipeline.definitions` names it)."""

import os

import dagster as dg

from .frequent_assets import (
    five_minute_job,
    five_minute_schedule,
    hourly_check_job,
    hourly_check_schedule,
    hourly_checks,
    retention_job,
    retention_schedule,
    submission_job,
    submission_schedule,
)
from .freshness import FRESHNESS_CHECKS, freshness_sensor
from .integrity_assets import daily_root_chain_intact, day_snapshot_verifies
from .jobs import (
    MAP_ASSETS,
    SIGN_ASSETS,
    daily_map_schedule,
    map_job,
    readiness_sensor,
    scan_slice_job,
    scan_slice_schedule,
    sign_job,
    sign_schedule,
)
from .lookup_assets import lookups_job, lookups_schedule
from .map_assets import probe_slice
from .open_day_assets import open_day
from .readiness_assets import readiness_job
from .resources import LakeResource, ProberResource, scan_concurrency

defs = dg.Definitions(
    assets=[probe_slice, open_day, hourly_checks, *MAP_ASSETS, *SIGN_ASSETS],
    # The map's own checks are its step's (defs/day_map.py, defs/checks.py DAY_CHECKS).
    asset_checks=[daily_root_chain_intact, day_snapshot_verifies, *FRESHNESS_CHECKS],
    jobs=[scan_slice_job, hourly_check_job, five_minute_job, map_job, sign_job, retention_job,
          submission_job, lookups_job, readiness_job],
    schedules=[scan_slice_schedule, hourly_check_schedule, five_minute_schedule, daily_map_schedule,
               sign_schedule, retention_schedule, submission_schedule,
               lookups_schedule],
    sensors=[freshness_sensor, readiness_sensor],
    resources={
        "lake": LakeResource(),
        "prober": ProberResource(registry_url=os.environ.get("SEVENMAPS_REGISTRY_URL", ""),
                                 control_url=os.environ.get("SEVENMAPS_CONTROL_URL", ""),
                                 no_scan=os.environ.get("SEVENMAPS_NO_SCAN", "") in ("1", "true", "yes"),
                                 readiness=os.environ.get("SEVENMAPS_READINESS", "1") not in ("0", "false", "no"),
                                 concurrency=scan_concurrency()),
    },
    # One process per run: on 2 cores it is faster than a process per step, and a run's DuckDB work is
    # serialised (reference: 1.8 s vs 5.0 s for three trivial assets).
    executor=dg.in_process_executor,
)
