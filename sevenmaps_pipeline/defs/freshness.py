"""Freshness: a missed scan or an unsigned finished day is a visible failure (docs/operations.md,
"When a day fails").

Dagster's time-partition freshness checks, evaluated by a sensor every 15 minutes once an operator turns
it on with the schedules: each hour's slice of the scan must have landed (probe_slice materialised) by
55 minutes past the hour, since an hour that has passed can never be scanned; and the day that ended must
be signed (daily_root) by 02:00 UTC, 90 minutes after the sign schedule's 00:30 run (and 110 after the map
run of 00:10). Both fail naming the slice or the day they expected.

Dagster marks these checks superseded by FreshnessPolicy, but a FreshnessPolicy judges an asset by its
latest materialisation of any partition: a backfill of an old day would make a missed scan look fresh.
The partition checks ask for the expected day itself, which is what the map needs.
"""

import warnings

import dagster as dg

from .integrity_assets import daily_root
from .map_assets import probe_slice

SLICE_DEADLINE_CRON = "55 * * * *"
SIGN_DEADLINE_CRON = "0 2 * * *"

with warnings.catch_warnings():
    warnings.simplefilter("ignore", dg.SupersessionWarning)
    FRESHNESS_CHECKS = [
        *dg.build_time_partition_freshness_checks(assets=[probe_slice], deadline_cron=SLICE_DEADLINE_CRON,
                                                  timezone="UTC"),
        *dg.build_time_partition_freshness_checks(assets=[daily_root], deadline_cron=SIGN_DEADLINE_CRON,
                                                  timezone="UTC"),
    ]
    freshness_sensor = dg.build_sensor_for_freshness_checks(
        freshness_checks=FRESHNESS_CHECKS, minimum_interval_seconds=15 * 60, name="freshness_checks_sensor")
