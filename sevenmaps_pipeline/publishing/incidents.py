"""A person's review of incidents (docs/operations.md, "Reviewing incidents"; `sevenmaps incident`), always on
the newest built day with every review applied (sql/incidents_now.sql):

- the live incidents, and apart from them the queue: failure reports nothing confirmed, kept for a person to
  review and never shown as an incident (seed 000 `incidents.rule`);
- one endpoint's evidence: its incident or queue entry, the failure reports, our own checks, the reviews;
- `close`: a person closes a live incident after review (seed 000 `incidents.closed_when`); it stops being
  live at once in every live answer, and the next builds read the closure (sql/incidents.sql);
- `confirm`: seed 000 lets only our own fresh check or trusted reports confirm a failure, never a person's
  word or anonymous reports; so a person confirms queued reports only on a check of ours that day (hourly or
  five-minute) that did not answer, newer than any that answered, and the review keeps that check.

Each refusal is a named kind (lake/control.py Refused) with its one line.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

from ..lake import duck
from ..lake.control import Refused
from ..lake.paths import LakePaths
from ..lake.schemas import AGENT_REPORTS
from ..registry.incident_reviews import IncidentReviewError, Review, append_review, read_reviews, reviews_file
from ..rules.methods import INCIDENTS_PARAMS
from ..rules.outcomes import NOT_A_RESULT
from .mapday import MapDay, UnknownServerError, latest_built_day

ANSWERED = ("ok", "needs_auth", "http_402")
_COLUMNS = ("i.day, i.server_key, i.server_id, d.server_name, d.url, i.status, i.shown, i.opened_day, "
            "i.last_confirmed_day, i.confirmed_by, i.confirmed_check_at, i.confirmed_reviewer, i.failure_reporters, "
            "i.trusted_failure_reporters, i.our_code, i.closed_reason, i.closed_by, i.closed_at, i.closed_note, "
            "d.day IS NOT NULL AS on_map")  # on the day's map: its endpoint has a daily_status row that day


def _iso(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v.isoformat() if isinstance(v, dt.date | dt.datetime) else v for k, v in row.items()}


def _rows(mapday: MapDay, where: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    return [_iso(r) for r in mapday.rows(
        f"SELECT {_COLUMNS} FROM incidents AS i LEFT JOIN daily_status AS d USING (server_key) WHERE {where} "
        "ORDER BY i.server_key", params)]


def overview(lake: LakePaths, day: dt.date | None = None) -> dict[str, Any]:
    """The live incidents, those closed that day, and the queue of failure reports awaiting review, of `day`
    (else the newest built day), reviews applied."""
    with MapDay.open(lake, day) as mapday:
        return {"map_day": mapday.day.isoformat(), "newest": mapday.day == latest_built_day(lake),
                "live": _rows(mapday, "i.status = 'live'"), "closed": _rows(mapday, "i.status = 'closed'"),
                "awaiting_review": _rows(mapday, "i.status = 'unconfirmed'"),
                "reviews_file": str(reviews_file(lake))}


def _resolve(mapday: MapDay, server: str) -> str:
    try:
        return mapday.resolve(server)["server_key"]
    except UnknownServerError as exc:
        raise IncidentReviewError(Refused.NOT_ON_THE_MAP, str(exc)) from None


def _checks_of(mapday: MapDay, key: str) -> list[dict[str, Any]]:
    """Our own checks of the endpoint on the served day, oldest first: its deciding daily check and every
    hourly and five-minute check that has a result (skips and our own faults are none)."""
    return mapday.rows(
        "SELECT 'daily' AS check_kind, checked_at AS started_at, outcome, reason AS detail FROM daily_status "
        "WHERE server_key = $k AND checked_at IS NOT NULL "
        "UNION ALL SELECT check_kind, started_at, outcome, outcome_detail FROM hourly_checks "
        "WHERE server_key = $k AND check_kind = 'hourly' AND started_at::DATE = $d "
        "UNION ALL SELECT check_kind, started_at, outcome, outcome_detail FROM five_minute_checks "
        "WHERE server_key = $k AND check_kind = 'five_minute' AND started_at::DATE = $d "
        "ORDER BY started_at", {"k": key, "d": mapday.day})


def detail(lake: LakePaths, server: str, day: dt.date | None = None) -> dict[str, Any]:
    """One endpoint's incident or queue entry with its evidence: the failure reports about each day of the
    incidents' look-back window, our own day codes over it and our checks of the day, and every review."""
    window = INCIDENTS_PARAMS["lookback_days"]
    with MapDay.open(lake, day) as mapday:
        key = _resolve(mapday, server)
        first = mapday.day - dt.timedelta(days=window - 1)
        files = [f for back in range(window)
                 if (f := lake.curated_file("agent_reports", mapday.day - dt.timedelta(days=back))).is_file()]
        duck.bind_input(mapday.con, "incident_evidence_reports", files, AGENT_REPORTS.schema)
        reports = mapday.rows(
            "SELECT about_day, count(*) FILTER (WHERE NOT ok) AS failure_reports, "
            "count(DISTINCT reporter_id) FILTER (WHERE NOT ok) AS failure_reporters, "
            "count(DISTINCT reporter_id) FILTER (WHERE NOT ok AND paid) AS paying_failure_reporters, "
            "list(DISTINCT fail ORDER BY fail) FILTER (WHERE NOT ok) AS fail_reasons, "
            "count(*) FILTER (WHERE ok AND paid) AS paid_calls_that_worked "
            "FROM incident_evidence_reports WHERE server_key = $k AND about_day BETWEEN $first AND $day "
            "GROUP BY about_day ORDER BY about_day", {"k": key, "first": first, "day": mapday.day})
        codes = mapday.rows("SELECT day, code, outcome, reason FROM status_window WHERE server_key = $k "
                            "AND day >= $first ORDER BY day", {"k": key, "first": first})
        found = _rows(mapday, "i.server_key = $k", {"k": key})
        checks = _checks_of(mapday, key)
        served = mapday.day
    return {"map_day": served.isoformat(), "server_key": key, "incident": found[0] if found else None,
            "failure_reports": [_iso(r) for r in reports], "our_day_codes": [_iso(r) for r in codes],
            "our_checks_that_day": [_iso(r) for r in checks],
            "reviews": [_iso(dataclasses.asdict(r)) for r in read_reviews(lake) if r.server_key == key]}


def _newest(lake: LakePaths) -> MapDay:
    """Reviews act on what the live answers show: the newest built day, every review applied."""
    return MapDay.open(lake)


def close(lake: LakePaths, server: str, by: str, reason: str, now: dt.datetime) -> Review:
    """Close the endpoint's live incident after review: closed from `now`, with who and why."""
    with _newest(lake) as mapday:
        key = _resolve(mapday, server)
        found = _rows(mapday, "i.server_key = $k", {"k": key})
        served = mapday.day
    row = found[0] if found else None
    if row is None or row["status"] != "live":
        if row is not None and row["status"] == "closed" and row["closed_by"]:
            raise IncidentReviewError(Refused.ALREADY_CLOSED, f"{key}: its incident was already closed by "
                                      f"{row['closed_by']} at {row['closed_at']} ({row['closed_note']})")
        if row is not None and row["status"] == "closed":
            raise IncidentReviewError(Refused.NOTHING_LIVE, f"{key}: nothing live to close: its incident closed "
                                      f"on {served} ({row['closed_reason']})")
        if row is not None:
            raise IncidentReviewError(Refused.NOTHING_LIVE, f"{key}: nothing live to close: its failure reports "
                                      f"of {served} await review and are never shown (`sevenmaps incident confirm` "
                                      "only on a check of ours that saw it fail)")
        raise IncidentReviewError(Refused.NOTHING_LIVE, f"{key}: nothing live to close on the map of {served}")
    return append_review(lake, Review(key, "close", dt.date.fromisoformat(row["opened_day"]), by, reason, now,
                                      served))


def confirm(lake: LakePaths, server: str, by: str, reason: str, now: dt.datetime) -> Review:
    """Confirm the endpoint's queued failure reports of the newest built day, on the newest check of ours that
    day, which must not have answered (seed 000: our own fresh check confirms, a person's word alone never)."""
    with _newest(lake) as mapday:
        key = _resolve(mapday, server)
        found = _rows(mapday, "i.server_key = $k", {"k": key})
        checks = [c for c in _checks_of(mapday, key) if c["outcome"] not in NOT_A_RESULT]
        served = mapday.day
    row = found[0] if found else None
    if row is None or row["status"] != "unconfirmed":
        what = "no failure reports" if row is None else f"its incident is {row['status']} (confirmed by " \
            f"{row['confirmed_by']})"
        raise IncidentReviewError(Refused.NOT_AWAITING_REVIEW, f"{key}: nothing awaits review on {served}: {what}")
    failed = [c for c in checks if c["outcome"] not in ANSWERED and c["check_kind"] != "daily"]
    if not failed:
        raise IncidentReviewError(Refused.NO_FAILED_CHECK, f"{key}: no hourly or five-minute check of ours on "
                                  f"{served} saw it fail ({len(checks)} with a result); a person's word alone never "
                                  "confirms a failure (seed 000): only our own fresh check or trusted reports do")
    newest = checks[-1]
    if newest["outcome"] in ANSWERED:
        raise IncidentReviewError(Refused.ANSWERED_SINCE, f"{key}: our newest check on {served} "
                                  f"({newest['check_kind']}, {newest['started_at']:%H:%M}Z) answered "
                                  f"({newest['outcome']}): nothing to confirm")
    evidence = failed[-1]
    return append_review(lake, Review(key, "confirm", served, by, reason, now, served, evidence["check_kind"],
                                      evidence["started_at"], evidence["outcome"]))
