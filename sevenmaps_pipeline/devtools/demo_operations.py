"""The demo's operations beyond the daily map (issue 13's cadences and controls), on the fleet's lake:

- a form opt-out (the token published by the host, verified through the guarded client) before the last day;
- the daily lookups (package advisories, domain age) on the last days;
- a submitted server admitted and one refused: submitted 7 days before the end, checked every 6 hours;
- an owner who proves control, adds a note and chooses an endpoint for five-minute checks;
- hourly checks of the most used endpoints "today", one of which flaps once and then fails twice.

"Today" (the day after the replayed days) is the real open day: what the demo does in it happens at moments the
clock has reached (`open_day`), so no check is stamped after it is written; a day too young for all of it gets
fewer checks, and the demo says so.

Each Dagster part runs as a run of the code location (the UI lists them); the checks between the
submission job's runs are the library's, so the week costs seconds.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from ..lake import duck
from ..lake.paths import LakePaths
from ..lake.warehouse import open_warehouse, publish_warehouse
from ..probe.config import ProbeConfig
from ..probe.frequent import frequent_checks
from ..probe.loop import run_prober
from ..probe.opt_out_check import token_proof
from ..probe.run import ReplayClock
from ..registry import opt_outs, owners, submissions

FORM_OPT_OUT = "mcp.away.test"
OWNER = "mcp.calendar.test"
SUBMITTED = ("https://mcp.zipjson.test/mcp", "https://mcp.huge.test/mcp")
FLAPPING = "weather"
SUBMISSION_DAYS = 7
# The flapping server's state in each of today's hourly runs: it answers, fails once, answers, then fails twice
# (one failure is never shown, two in a row are: docs/operations.md "Hourly checks").
HOURLY_PLAN = ("up", "http_500", "up", "http_500", "http_500")


@dataclass(frozen=True)
class OpenDay:
    """When the demo does each thing of the open day, each at a moment the clock had reached when it was planned
    (a run's checks are stamped from the moment given, plus the real time the run takes): the hourly runs in the
    hours begun so far (the last five), the five-minute runs at the last two five-minute marks (one in the day's
    first five minutes), the owner's claim just before the first of them, and the submissions' run at the top of
    the current hour. A day younger than five hours has the plan's last states only, so that from 01:00 the
    flapping server ends as the whole plan leaves it: down after two failures in a row."""

    day: dt.date
    now: dt.datetime  # when it was planned (the day's last moment, once the day has ended)
    hourly: tuple[tuple[int, str], ...]  # (hour, the flapping server's state)
    five_minute: tuple[dt.datetime, ...]
    submissions_at: dt.datetime

    @property
    def claim_at(self) -> dt.datetime:
        return self.five_minute[0]


def open_day(day: dt.date, now: dt.datetime) -> OpenDay:
    """The open day `day`'s plan at `now` (UTC, on or after the day's start)."""
    start = dt.datetime.combine(day, dt.time(0), dt.UTC)
    if now < start:
        raise ValueError(f"{now:%Y-%m-%d %H:%M} UTC is before the open day {day}")
    # A demo that ran past midnight: its open day has ended, every hour of it begun.
    now = min(now, start + dt.timedelta(days=1) - dt.timedelta(microseconds=1))
    hours = range(max(0, now.hour - len(HOURLY_PLAN) + 1), now.hour + 1)
    mark = now.replace(minute=now.minute - now.minute % 5, second=0, microsecond=0)
    marks = tuple(m for m in (mark - dt.timedelta(minutes=5), mark) if m >= start)
    states = HOURLY_PLAN[len(HOURLY_PLAN) - len(hours):]
    return OpenDay(day, now, tuple(zip(hours, states, strict=True)), marks,
                   now.replace(minute=0, second=0, microsecond=0))


def replayed_at(moment: dt.datetime) -> str:
    """A moment as the prober's replay_day takes it (defs/resources.py): YYYY-MM-DDTHH:MM."""
    return f"{moment:%Y-%m-%dT%H:%M}"


def _config(fleet: Any) -> ProbeConfig:
    return ProbeConfig(host_map=fleet.host_map, ca_file=fleet.ca_file)


def form_opt_out(lake: LakePaths, fleet: Any, now: dt.datetime) -> str:
    entry = opt_outs.issue_token(lake, FORM_OPT_OUT, now)
    fleet.host("away").well_known[opt_outs.OPT_OUT_PATH] = f"{entry.token}\n"
    ok, detail = run_prober(token_proof(FORM_OPT_OUT, opt_outs.OPT_OUT_PATH, entry.token or "", _config(fleet)))
    if ok:
        opt_outs.record_opt_out(lake, FORM_OPT_OUT, "form", now, note=detail, token=entry.token)
    return f"{FORM_OPT_OUT}: {'opted out by the form' if ok else 'NOT opted out'} ({detail})"


def submit_servers(lake: LakePaths, fleet: Any, day: dt.date) -> None:
    at = dt.datetime.combine(day, dt.time(0), dt.UTC)
    for url in SUBMITTED:
        submissions.submit(lake, url, at, host_map=fleet.host_map)


def submission_checks_of_day(lake: LakePaths, fleet: Any, day: dt.date) -> int:
    """The day's four checks (every 6 hours) of the submitted servers still in their week."""
    checks = 0
    for hour in (0, 6, 12, 18):
        at = dt.datetime.combine(day, dt.time(hour), dt.UTC)
        due = submissions.due(lake, at)
        if due:
            run = frequent_checks(lake, "submitted", {e.server_key for e in due}, _config(fleet),
                                  ReplayClock(day, hour), listings=[submissions.listing_of(e) for e in due])
            checks += run.checks
    return checks


def claim_owner(lake: LakePaths, fleet: Any, now: dt.datetime) -> str:
    claim = owners.issue_owner_token(lake, OWNER, now)
    fleet.host("calendar").well_known[owners.OWNER_PATH] = f"{claim.token}\n"
    ok, detail = run_prober(token_proof(OWNER, owners.OWNER_PATH, claim.token, _config(fleet)))
    if not ok:
        return f"{OWNER}: owner NOT verified ({detail})"
    owners.mark_verified(lake, OWNER, now)
    owners.set_note(lake, OWNER, "Calendar sync is paused on Sundays 02:00-03:00 UTC for maintenance.", now)
    owners.choose_five_minute(lake, OWNER, [f"https://{OWNER}/mcp"])
    return f"{OWNER}: owner verified ({detail}); a note and one endpoint for five-minute checks"


def hourly_today(location: Any, lake: LakePaths, fleet: Any, config_for: Any, plan: OpenDay) -> list[str]:
    """The open day's hourly runs (HOURLY_PLAN, in the hours begun so far): the flapping server answers, fails
    once, answers, then fails twice."""
    lines = []
    today = plan.day
    key = f"mcp.{FLAPPING}.test/mcp"
    for hour, state in plan.hourly:
        fleet.state.by_server[FLAPPING].state = state
        run = location.run("hourly_check_job", None, None, config_for(f"{today}T{hour:02d}"),
                           tags={"dagster/partition": f"{today}-{hour:02d}:00"})
        if not run.success:
            lines.append(f"  {hour:02d}:00 the hourly run FAILED")
            continue

        publish_warehouse(lake)
        with open_warehouse(lake) as con:
            row = con.execute("SELECT current_shown_status, decided_by, unconfirmed_failure, last_hourly_outcome "
                              "FROM current_status WHERE server_key = $k", {"k": key}).fetchone()
        if row:
            shown, by, unconfirmed, outcome = row
            flag = " (one failure: not shown yet)" if unconfirmed else ""
            lines.append(f"  {hour:02d}:00 hourly check {outcome:<9} -> shown: {shown} (by {by}){flag}")
    fleet.state.by_server[FLAPPING].state = "up"
    return lines


def five_minute_today(location: Any, config_for: Any, plan: OpenDay) -> bool:
    ok = True
    for at in plan.five_minute:
        run = location.run("five_minute_job", None, None, config_for(replayed_at(at)),
                           tags={"sevenmaps/at": f"{at:%H:%M}"})
        ok = ok and run.success
    return ok


def cadence_summary(lake: LakePaths, end: dt.date) -> list[str]:
    """What the demo's cadences and controls left in the lake, for the summary."""
    out = ["\nCadences and controls (docs/operations.md):"]
    with open_warehouse(lake) as con:
        hours = con.execute(
            "SELECT day, hour(started_at) FROM probes WHERE server_key = 'mcp.weather.test/mcp' AND "
            "check_kind = 'daily' AND day > $d::DATE - 7 ORDER BY day", {"d": end}).fetchall()
        out.append("  moving daily hour: mcp.weather.test checked at " + ", ".join(
            f"{d:%m-%d} {h:02d}h" for d, h in hours) + " UTC (one hour later each day; every hour in 24 days)")
        advisories = con.execute(
            "SELECT registry_type, package, version, advisory_ids, max_severity, fixed_versions FROM "
            "package_advisories WHERE day = $d AND advisories > 0", {"d": end}).fetchall()
        for kind, name, version, ids, severity, fixed in advisories:
            out.append(f"  package advisory: {kind} {name}@{version}: {', '.join(ids)} ({severity}; fixed in "
                       f"{', '.join(fixed)})")
        young = con.execute("SELECT domain, registered_at::DATE, age_days FROM domain_ages WHERE day = $d AND young",
                            {"d": end}).fetchall()
        for domain, registered, age in young:
            out.append(f"  young domain: {domain} registered {registered} ({age} days before {end})")
        notes = con.execute("SELECT server_key, note FROM owner_notes").fetchall()
        for key, note in notes:
            out.append(f"  owner's note beside {key}: \"{note}\"")
        uptime = con.execute("SELECT server_key, checks_30d, uptime_30d_pct FROM five_minute_uptime").fetchall()
        for key, checks, pct in uptime:
            out.append(f"  five-minute checks: {key}: {checks} check(s), {pct}% answered (30 days)")
        gone = duck.one(con, "SELECT count(*) FROM daily_status WHERE day = $d AND server_key LIKE $k",
                        {"d": end, "k": f"{FORM_OPT_OUT}/%"})[0]
        out.append(f"  form opt-out: {FORM_OPT_OUT} on the map of {end}: {'yes' if gone else 'no (dropped off)'}")
    for entry in submissions.read_submissions(lake):
        out.append(f"  submitted {entry.server_key}: {entry.status}" + (f" ({entry.reason})" if entry.reason else ""))
    return out

