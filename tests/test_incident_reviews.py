"""A person reviews incidents (issue 35, point 4): closes a live incident, which stops being live at once in the
live answers and from then on in the builds, saying who closed it and why; confirms queued failure reports only
on a check of ours that saw the endpoint fail (seed 000); sees the queue of unconfirmed failures apart from the
incidents. Real DuckDB over real lake files; the command line through its real entry."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import DAY, land_reports, land_status, probe, report

from sevenmaps_pipeline import curated
from sevenmaps_pipeline.cli import main
from sevenmaps_pipeline.defs.checks import incident_violations
from sevenmaps_pipeline.lake.control import Refused
from sevenmaps_pipeline.lake.parquet_io import write_parquet
from sevenmaps_pipeline.lake.schemas import DAILY_STATUS, INCIDENTS, RAW_HOURLY, conform
from sevenmaps_pipeline.publishing import incidents
from sevenmaps_pipeline.publishing.mapday import MapDay
from sevenmaps_pipeline.publishing.status import server_status
from sevenmaps_pipeline.registry.incident_reviews import IncidentReviewError, read_reviews, reviews_file

KEY = "svc.example.com/mcp"
URL = f"https://{KEY}"


def day_n(i: int) -> dt.date:
    return DAY + dt.timedelta(days=i)


def at(i: int, hour: int, minute: int = 0) -> dt.datetime:
    return dt.datetime.combine(day_n(i), dt.time(hour, minute), dt.UTC)


def failing(who: str, i: int, paid: bool = False) -> dict:
    return report(KEY, ok=False, fail="unreachable", who=who, paid=paid, day=day_n(i))


def build(lake, i: int, code: str, reports: list[dict] | None = None) -> dict | None:
    """Day i: our code for KEY, failure reports about that day (arriving that day), its incidents built; KEY's
    row as built, or None."""
    land_status(lake, day_n(i), {KEY: code, "other.example.com/mcp": "o"})
    land_reports(lake, reports or [], day=day_n(i))
    curated.build_agent_reports(lake, day_n(i))
    return rebuild(lake, i)


def rebuild(lake, i: int) -> dict | None:
    curated.build_incidents(lake, day_n(i))
    rows = pq.read_table(lake.curated_file("incidents", day_n(i))).to_pylist()
    return next((r for r in rows if r["server_key"] == KEY), None)


def land_hourly(lake, i: int, checks: list[tuple[int, str]]) -> None:
    """Hourly checks of KEY on day i: (hour, outcome) each."""
    rows = [probe(URL, outcome, day=day_n(i), hour=hour, check_kind="hourly", run_id=f"h{hour}")
            for hour, outcome in checks]
    write_parquet(lake, lake.raw_dir("hourly", day_n(i)) / "hourly-1.parquet",
                  conform(pa.Table.from_pylist(rows, RAW_HOURLY.schema), RAW_HOURLY))


def status_now(lake) -> dict:
    with MapDay.open(lake) as mapday:
        return server_status(mapday, KEY)


def live_incident(lake) -> dict:
    """Days 0 and 1 confirmed by our own d check: live on day 1, opened day 0."""
    build(lake, 0, "d", [failing("a", 0)])
    row = build(lake, 1, "d", [failing("b", 1)])
    assert row is not None and (row["status"], row["opened_day"]) == ("live", day_n(0))
    return row


# ------------------------------------------------------------------------------------------------ closing

def test_a_closed_incident_stops_being_live_at_once_and_says_who_closed_it_and_why(lake, capsys):
    live_incident(lake)
    before = status_now(lake)
    assert before["live_incident"] and before["incidents"][0]["status"] == "live"

    review = incidents.close(lake, KEY, "Ada Lovelace", "the owner moved it; confirmed by mail", at(1, 15))
    assert (review.action, review.incident_day, review.map_day) == ("close", day_n(0), day_n(1))

    # No rebuild: the live answer (server_status through MapDay) and `incident list` apply the review now.
    after = status_now(lake)
    assert not after["live_incident"]
    (shown,) = after["incidents"]
    assert (shown["status"], shown["closed_reason"], shown["closed_by"], shown["closed_note"]) == (
        "closed", "a person closed it after review", "Ada Lovelace", "the owner moved it; confirmed by mail")
    assert shown["closed_at"] == at(1, 15).isoformat()
    listed = incidents.overview(lake)
    assert listed["live"] == [] and [r["server_key"] for r in listed["closed"]] == [KEY]
    with MapDay.open(lake) as mapday:  # route's reading: no live incident sets it aside
        assert mapday.rows("SELECT server_key FROM incidents WHERE status = 'live' AND shown") == []
    # The site is the day's record: it reads the day as built, until the day is built again.
    with MapDay.open(lake, reviews=False) as mapday:
        assert mapday.rows("SELECT status FROM incidents WHERE server_key = $k", {"k": KEY}) == [{"status": "live"}]
    # ... and so do `sevenmaps server` and `route` asked for that day (helper-94: they applied the review).
    assert main(["server", KEY, "--day", str(day_n(1)), "--json", "--lake", str(lake.root)]) == 0
    assert json.loads(capsys.readouterr().out)["live_incident"] is True
    assert main(["server", KEY, "--json", "--lake", str(lake.root)]) == 0
    assert json.loads(capsys.readouterr().out)["live_incident"] is False

    # The day rebuilt after it ended reads the closure (made before it ended): the same answer, now built.
    built = rebuild(lake, 1)
    assert (built["status"], built["shown"], built["closed_reason"], built["closed_by"], built["closed_note"]) == (
        "closed", False, "a person closed it after review", "Ada Lovelace", "the owner moved it; confirmed by mail")
    assert built["closed_at"] == at(1, 15) and built["method_version"] == "incidents-1.1"
    assert incident_violations(lake, day_n(1)) == {}

    # A failure confirmed about a later day opens a new incident (the day after: without the closure it would
    # have carried on the one opened on day 0).
    new = build(lake, 2, "d", [failing("c", 2)])
    assert (new["status"], new["opened_day"], new["closed_by"]) == ("live", day_n(2), None)
    assert status_now(lake)["live_incident"]


def test_a_closure_counts_from_its_moment_not_for_days_that_ended_before_it(lake):
    live_incident(lake)
    assert build(lake, 2, "n")["status"] == "live"  # day 1's confirmation has not aged out on day 2
    incidents.close(lake, KEY, "Grace", "duplicate of a provider outage", at(2, 9, 30))
    assert rebuild(lake, 1)["status"] == "live"  # day 1 ended before the closure: built as it was
    closed = rebuild(lake, 2)
    assert (closed["status"], closed["closed_by"], closed["opened_day"]) == ("closed", "Grace", day_n(0))
    # The day after, nothing: closed on day 2, it does not age out again on day 3.
    assert build(lake, 3, "n") is None
    # Day 1 opened alone is an older day: it shows the reviews made before it ended, none.
    with MapDay.open(lake, day_n(1)) as mapday:
        assert mapday.rows("SELECT status FROM incidents WHERE server_key = $k", {"k": KEY}) == [{"status": "live"}]


def test_refusals_are_named_kinds_with_one_line(lake):
    live_incident(lake)
    cases = [
        (dict(server="nowhere.example.com/mcp"), Refused.NOT_ON_THE_MAP, "names no endpoint"),
        (dict(server="other.example.com/mcp"), Refused.NOTHING_LIVE, "nothing live to close"),
        (dict(by="  "), Refused.NO_REVIEWER, "needs the reviewer's name"),
        (dict(reason=""), Refused.NO_REASON, "needs the reason"),
        (dict(reason="x" * 501), Refused.NOTE_TOO_LONG, "at most 500"),
        (dict(by="Ada\x1b[31m"), Refused.NOTE_CONTROL_CHARACTERS, "control characters"),
    ]
    for change, kind, words in cases:
        asked = {"server": KEY, "by": "Ada", "reason": "checked by hand", **change}
        with pytest.raises(IncidentReviewError) as caught:
            incidents.close(lake, asked["server"], asked["by"], asked["reason"], at(1, 12))
        assert caught.value.kind is kind and words in str(caught.value) and "\n" not in str(caught.value), change
    assert read_reviews(lake) == []  # nothing refused was recorded
    incidents.close(lake, KEY, "Ada", "checked by hand", at(1, 12))
    with pytest.raises(IncidentReviewError) as caught:
        incidents.close(lake, KEY, "Bob", "again", at(1, 13))
    assert caught.value.kind is Refused.ALREADY_CLOSED and "already closed by Ada" in str(caught.value)
    assert len(read_reviews(lake)) == 1


def test_an_unreadable_reviews_file_is_an_error_naming_it_never_read_as_empty(lake):
    live_incident(lake)
    reviews_file(lake).parent.mkdir(parents=True, exist_ok=True)
    reviews_file(lake).write_bytes(b"PAR1 this is not a parquet file")
    for attempt in (lambda: curated.build_incidents(lake, day_n(1)), lambda: MapDay.open(lake),
                    lambda: incidents.close(lake, KEY, "Ada", "x", at(1, 12))):
        with pytest.raises(IncidentReviewError) as caught:
            attempt()
        assert caught.value.kind is Refused.FILE_UNREADABLE and str(reviews_file(lake)) in str(caught.value)


# ------------------------------------------------------------------------------------------------ the queue

def test_the_queue_of_unconfirmed_failures_is_visible_and_never_an_incident(lake):
    row = build(lake, 0, "o", [failing(f"anon{i}", 0) for i in range(4)] + [failing("p1", 0, paid=True)])
    assert row["status"] == "unconfirmed"
    listed = incidents.overview(lake)
    assert listed["live"] == [] and listed["closed"] == []
    (queued,) = listed["awaiting_review"]
    assert (queued["server_key"], queued["failure_reporters"], queued["trusted_failure_reporters"]) == (KEY, 5, 1)
    status = status_now(lake)
    assert status["incidents"] == [] and not status["live_incident"]
    assert status["failure_reports_awaiting_review"]["failure_reporters"] == 5
    assert "never an incident" in status["failure_reports_awaiting_review"]["what_it_is"]
    shown = incidents.detail(lake, KEY)
    assert shown["incident"]["status"] == "unconfirmed"
    assert shown["failure_reports"][0]["failure_reporters"] == 5
    assert shown["failure_reports"][0]["paying_failure_reporters"] == 1
    assert [c["code"] for c in shown["our_day_codes"]] == ["o"]


# ------------------------------------------------------------------------------------------------ confirming

def test_a_person_confirms_only_on_a_check_of_ours_that_saw_it_fail(lake):
    build(lake, 0, "o", [failing("anon1", 0), failing("anon2", 0)])
    with pytest.raises(IncidentReviewError) as caught:  # a person's word alone confirms nothing
        incidents.confirm(lake, KEY, "Ada", "many agents say so", at(0, 20))
    assert caught.value.kind is Refused.NO_FAILED_CHECK

    land_hourly(lake, 0, [(14, "timeout"), (16, "ok")])
    with pytest.raises(IncidentReviewError) as caught:  # it answered since it failed
        incidents.confirm(lake, KEY, "Ada", "timeouts", at(0, 20))
    assert caught.value.kind is Refused.ANSWERED_SINCE and "answered (ok)" in str(caught.value)

    land_hourly(lake, 0, [(14, "ok"), (16, "timeout"), (17, "unreachable"), (18, "prober_error")])
    review = incidents.confirm(lake, KEY, "Ada", "our hourly checks fail too", at(0, 20))
    assert (review.check_kind, review.check_started_at, review.check_outcome) == ("hourly", at(0, 17), "unreachable")
    now = status_now(lake)
    assert now["live_incident"] and now["failure_reports_awaiting_review"] is None
    assert (now["incidents"][0]["confirmed_by"], now["incidents"][0]["confirmed_reviewer"]) == (
        "our_fresh_check", "Ada")

    built = rebuild(lake, 0)  # the build reads it the same way, and the blocking check accepts it
    assert (built["status"], built["confirmed_by"], built["confirmed_check_at"], built["confirmed_reviewer"]) == (
        "live", "our_fresh_check", at(0, 17), "Ada")
    assert incident_violations(lake, day_n(0)) == {}
    with pytest.raises(IncidentReviewError) as caught:
        incidents.confirm(lake, KEY, "Bob", "again", at(0, 21))
    assert caught.value.kind is Refused.NOT_AWAITING_REVIEW

    # Without its check the same row is what the blocking check refuses: anonymous reports alone.
    forged = {**built, "confirmed_check_at": None}
    write_parquet(lake, lake.curated_file("incidents", day_n(0)), conform(pa.Table.from_pylist([forged]), INCIDENTS))
    assert incident_violations(lake, day_n(0)) == {"confirmed_by_anonymous_reports_alone": 1}


# ------------------------------------------------------------------------------------------------ the command line

def test_the_command_line_closes_and_lists(lake, capsys):
    live_incident(lake)
    root = str(lake.root)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-m", "sevenmaps_pipeline.cli", "incident", "close", KEY, "--by", "Ada",
                           "--reason", "fixed upstream", "--lake", root], capture_output=True, text=True, env=env,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert "closed by Ada" in done.stdout and "fixed upstream" in done.stdout

    assert main(["incident", "list", "--lake", root]) == 0
    out = capsys.readouterr().out
    assert "live incidents (shown): 0" in out and "closed on that day: 1" in out
    assert "by Ada at" in out and "fixed upstream" in out

    assert main(["incident", "close", KEY, "--by", "Bob", "--reason", "again", "--lake", root]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "already closed by Ada" in err and "\n" not in err

    build(lake, 2, "o")  # the incident closes itself: our check works again
    build(lake, 3, "o", [failing("anon", 3)])
    assert main(["incident", "list", "--queue", "--json", "--lake", root]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert "live" not in listed and [r["server_key"] for r in listed["awaiting_review"]] == [KEY]


def test_the_list_shows_a_registry_name_without_its_escapes(lake, capsys):
    """A server's name is the registry's words: `incident list` prints it as `sevenmaps server` does (cli/common.py
    terminal_safe), so a name can neither colour nor rewrite the operator's screen (helper-100)."""
    live_incident(lake)
    status = lake.curated_file("daily_status", day_n(1))
    table = pq.read_table(status)
    names = ["io.test/\x1b[2J\x1b[31msvc\x07\u200b" if k == KEY else "io.test/other"
             for k in table.column("server_key").to_pylist()]
    table = table.set_column(table.schema.get_field_index("server_name"), "server_name", pa.array(names, pa.string()))
    write_parquet(lake, status, conform(table, DAILY_STATUS))
    assert main(["incident", "list", "--lake", str(lake.root)]) == 0
    out = capsys.readouterr().out
    assert "live incidents (shown): 1" in out
    assert "\x1b" not in out and "\x07" not in out and "\u200b" not in out
    assert "io.test/\\x1b[2J\\x1b[31msvc\\x07\\u200b" in out


def test_the_list_says_which_live_incidents_are_of_endpoints_off_the_map(lake, capsys):
    """An incident stays live the day after its endpoint left the map, where no page, answer or `incident show`
    can reach it: the list says so apart, with the day's count of what is shown as the down list's (helper-100:
    298 "live incidents (shown)" beside the down list's 293 at 22,512 endpoints)."""
    live_incident(lake)
    land_status(lake, day_n(2), {"other.example.com/mcp": "o"})  # KEY's listing is gone
    land_reports(lake, [], day=day_n(2))
    curated.build_agent_reports(lake, day_n(2))
    row = rebuild(lake, 2)
    assert row is not None and row["status"] == "live"
    assert main(["incident", "list", "--lake", str(lake.root)]) == 0
    out = capsys.readouterr().out
    assert "live incidents (shown): 0" in out
    assert (f"live incidents of endpoints not on the map of {day_n(2)} (shown nowhere; `incident show` and "
            f"`incident close` refuse them): 1\n  {KEY}") in out


def test_the_map_server_answers_the_closure_without_a_new_build_and_the_site_stays_as_built(lake):
    from sevenmaps_pipeline.publishing.site import build_site
    from sevenmaps_pipeline.surfaces.mcp_server import MapService

    live_incident(lake)
    service = MapService(lake)
    assert service.call(lambda mapday: server_status(mapday, KEY))["live_incident"]
    first = build_site(lake, day_n(1)).folder
    pages = {p.relative_to(first): p.read_bytes() for p in sorted(first.rglob("*")) if p.is_file()}
    assert b"since 2026-11-10" in pages[next(p for p in pages if p.parts[0] == "servers")]

    incidents.close(lake, KEY, "Ada", "fixed upstream", at(1, 15))
    answer = service.call(lambda mapday: server_status(mapday, KEY))  # the same service, reopened by the review
    assert not answer["live_incident"] and answer["incidents"][0]["closed_by"] == "Ada"

    again = build_site(lake, day_n(1)).folder
    assert {p.relative_to(again): p.read_bytes() for p in sorted(again.rglob("*")) if p.is_file()} == pages
