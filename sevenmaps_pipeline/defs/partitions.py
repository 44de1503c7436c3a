"""The partitioning of the map: UTC days from the lake's first day (docs/operations.md, "The first day").

The map's day assets and signing have finished days only: a day's map is built once it has ended (the
00:10 run), and a backfill through yesterday, which Dagster carries on to every later day its windows reach,
stops at yesterday. The open day is the hourly group's: the scan's slices and its provisional builds
(open_day). `sevenmaps run` and a lake built without a scan (SEVENMAPS_NO_SCAN) may still build the open day's
tables ahead of its partition, in a run tagged with its key, which records no materialisation of it (a new
lake's map has no partition at all until its first day ends); signing would take such a build as stale (built
before the day ended), and the day's 00:10 run builds it again (docs/operations.md, "The open day").

The first day is $SEVENMAPS_FIRST_DAY when set; else the earliest day anything landed in the code
location's lake ($SEVENMAPS_LAKE); else, for a lake with nothing yet, today (UTC). So a partition the UI
calls "missing" is a day the map really missed, never a day before the lake began.
"""

import datetime as dt
import os

import dagster as dg

from ..lake.paths import LakePaths, parse_day

FIRST_DAY_ENV = "SEVENMAPS_FIRST_DAY"


def first_day(lake: LakePaths | None = None) -> dt.date:
    configured = os.environ.get(FIRST_DAY_ENV, "").strip()
    if configured:
        try:
            return parse_day(configured)
        except ValueError as exc:
            raise ValueError(f"${FIRST_DAY_ENV}: {exc}") from None
    landed = (lake or LakePaths.at()).days_with_data()
    return landed[0] if landed else dt.datetime.now(dt.UTC).date()


FIRST_DAY = first_day()

finished_days = dg.DailyPartitionsDefinition(start_date=FIRST_DAY.isoformat(), timezone="UTC", end_offset=0)


def ended(day: dt.date, now: dt.datetime) -> bool:
    """Whether the UTC day has ended at `now` (the wall clock, as Dagster's): only then is it a partition of the
    map and of signing (finished_days)."""
    return day < now.astimezone(dt.UTC).date()


# The day's scan in 24 hourly slices (probe/slices.py), the open hour included: only that hour can run.
hourly_slices = dg.HourlyPartitionsDefinition(start_date=f"{FIRST_DAY.isoformat()}-00:00", timezone="UTC",
                                              end_offset=1)
SLICE_KEY_FORMAT = "%Y-%m-%d-%H:%M"
# The hourly assets (the scan's slices, the open day, the hourly checks) are a group of their own: a backfill
# picks days, and Dagster's launch dialog offers one partition picker for what is selected, so the README's
# backfill selects every asset but this group (`not group:hourly` in the Catalog); a past hour never runs anyway.
HOURLY_GROUP = "hourly"

# History and lookback windows: the day and the 29 before it.
last_30_days = dg.TimeWindowPartitionMapping(start_offset=-29, end_offset=0)
# Change records look back 60 days for a baseline, and histories keep 60 days of change days.
last_60_days = dg.TimeWindowPartitionMapping(start_offset=-59, end_offset=0)
# Incidents read two weeks of reports and checks.
last_14_days = dg.TimeWindowPartitionMapping(start_offset=-13, end_offset=0)


def open_hours(keys: list[str], now: dt.datetime) -> tuple[list[dt.datetime], list[str]]:
    """(the starts of the keys' hours that are the current UTC hour, the other keys): an hourly partition
    runs only within its own hour; one that has passed is never made up."""
    starts, others = [], []
    for key in keys:
        start = dt.datetime.strptime(key, SLICE_KEY_FORMAT).replace(tzinfo=dt.UTC)
        if (now.date(), now.hour) == (start.date(), start.hour):
            starts.append(start)
        else:
            others.append(key)
    return starts, others
