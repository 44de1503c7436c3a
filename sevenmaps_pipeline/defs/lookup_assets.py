"""The outside lookups: the day's lookup run (an op, on the open day) and the two day tables built from
what it landed (docs/methodology.md, "Package advisories", "Domain age"). Thin wiring over
`lookups/daily.py` and `curated/lookup_tables.py`."""

import datetime as dt

import dagster as dg

from ..lake.paths import registry_in_force
from ..lookups.daily import lookup_day
from ..rules.methods import STATUS_PARAMS
from . import lanes
from .map_assets import day_spec
from .resources import LakeResource, ProberResource

package_advisories = day_spec(
    "package_advisories", "lookups",
           description="Per npm or PyPI package and version the day's registry entries ship: that version's OSV "
           "advisories (ids, severities, fixed versions), the package's latest version, or why unseen. "
           "sql/package_advisories.sql",
)


domain_ages = day_spec(
    "domain_ages", "lookups",
           description="Per registrable domain of the endpoints on the map: its RDAP registration date (the "
           "latest record within the 30-day refresh window), age in days, and whether it is young (under 90 "
           "days: the route's caution rule), or why unseen. sql/domain_ages.sql",
)


@dg.op(pool=lanes.LOOKUPS,
       description="The day's outside lookups (never the servers themselves): the public metadata of each npm "
       "and PyPI package the registry entries ship and its version against OSV (raw/packages), and the RDAP "
       "registration date of each registrable domain not looked up in the last 30 days (raw/domains).")
def run_lookups(context: dg.OpExecutionContext, lake: LakeResource, prober: ProberResource) -> dict:
    now = prober.clock()()
    day = now.date()
    # The snapshot the day's map reads too (docs/methodology.md, "Day codes, history and signed roots"): the
    # lookups and the map name the same endpoints whatever day the scan last ran.
    if registry_in_force(lake.paths, day) is None:
        lookback = STATUS_PARAMS["lookback_days"]
        raise dg.Failure(description=f"{day}: no registry snapshot on the day or in the {lookback} days before (a "
                         "scan slice takes the day's); the lookups read the packages and domains it lists")
    with prober.package_lookups() as packages, prober.rdap() as rdap:
        report = lookup_day(lake.paths, day, now, packages, rdap)
    context.log.info(f"{day}: {report.packages} package versions ({report.with_advisories} with advisories, "
                     f"{report.packages_not_asked} not asked; {report.entries_unreadable} listings whose entry "
                     f"could not be read for packages); {report.domains_asked} domains asked, "
                     f"{report.domains_cached} still fresh, {report.domains_waiting} waiting for a later day; "
                     f"{report.seconds:.1f}s")
    context.add_output_metadata({"packages": report.packages, "with_advisories": report.with_advisories,
                                 "packages_not_asked": report.packages_not_asked,
                                 "entries_unreadable": report.entries_unreadable,
                                 "domains_asked": report.domains_asked, "domains_cached": report.domains_cached,
                                 "domains_waiting": report.domains_waiting})
    return {"packages": report.packages}


@dg.job(description="Once a day: package metadata and OSV advisories, and RDAP domain ages (outside lookups).")
def lookups_job() -> None:
    run_lookups()


@dg.schedule(job=lookups_job, cron_schedule="0 12 * * *", execution_timezone="UTC",
             description="Daily at 12:00 UTC: the day's package advisories and domain-age lookups (their tables "
             "are built with the day's map).")
def lookups_schedule(context: dg.ScheduleEvaluationContext) -> dg.RunRequest:
    at = context.scheduled_execution_time.astimezone(dt.UTC)
    # The day's map waits for the day's lookups (defs/lanes.py).
    return dg.RunRequest(run_key=f"lookups-{at:%Y-%m-%d}", tags=lanes.lands_day(lanes.LOOKUPS, f"{at:%Y-%m-%d}"))
