"""The open day as it lands: after each slice, its provisional tables (curated/open_day.py), which the map's
server reads until the day is built (docs/operations.md, "The open day")."""

import datetime as dt
from collections.abc import Iterator

import dagster as dg

from ..curated.open_day import OPEN_DAY_TABLES, OpenDayError, build_open_day
from . import lanes
from .map_assets import probe_slice
from .metadata import table_metadata
from .partitions import HOURLY_GROUP, SLICE_KEY_FORMAT, hourly_slices
from .resources import LakeResource


@dg.asset(
    partitions_def=hourly_slices, group_name=HOURLY_GROUP, kinds={"parquet"}, deps=[probe_slice], output_required=False,
    pool=lanes.SLICE,  # in the slice's own run; it writes provisional/ only, never the warehouse (defs/lanes.py)
    metadata=table_metadata("daily_status"),  # its main table: the open day's daily_status (open_status)
    description="The open day so far, after its slice landed: daily_status, tool_lists, tool_facts, tools and "
    "tool_changes of the endpoints checked so far today, built by the day's own builders into "
    "provisional/builds/<id> and linked as provisional/current (never signed, exported or published as a day; "
    "the day is still built and signed once it ends). The map's server reads it while it is newer than the "
    "latest built day: route, server_status, verify_lock, changes_since and watch follow today's checks within "
    "the hour, and say so. A slice of a day already built builds nothing.",
)
def open_day(context: dg.AssetExecutionContext, lake: LakeResource) -> Iterator[dg.MaterializeResult]:
    for key in context.partition_keys:
        day = dt.datetime.strptime(key, SLICE_KEY_FORMAT).date()
        if lake.paths.curated_file("daily_status", day).is_file():
            context.log.info(f"{key}: {day} is built: the day itself is what answers read, nothing provisional")
            continue
        try:
            built = build_open_day(lake.paths, day, key)
        except OpenDayError as exc:
            raise dg.Failure(description=str(exc)) from exc
        context.log.info(f"{key}: the open day {day} through this slice: {built.endpoints_checked} endpoints "
                         f"checked so far, build {built.build_id}")
        yield dg.MaterializeResult(metadata={
            "endpoints_checked": built.endpoints_checked, "dagster/row_count": built.endpoints_checked,
            "build": built.build_id, "tables": dg.MetadataValue.json(list(OPEN_DAY_TABLES)),
            "last_check_at": built.last_check_at.isoformat() if built.last_check_at else None,
            "probe_files": built.probe_files})
