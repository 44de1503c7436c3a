"""docs/analyst.md's worked analyses run against a lake the demo made and answer what they say they
answer, checked against the tables they summarise; and the analyst views (`latest_*`, `servers`,
`map_days`) agree with the tables under them."""

from __future__ import annotations

import datetime as dt
import re

import duckdb
import pyarrow.parquet as pq
import pytest

from sevenmaps_pipeline.devtools.demo_operations import HOURLY_PLAN
from sevenmaps_pipeline.lake.paths import PROJECT_ROOT
from sevenmaps_pipeline.lake.warehouse import LATEST_TABLES

DOC = PROJECT_ROOT / "docs" / "analyst.md"


def _analyses() -> dict[str, list[str]]:
    """Each '### ' section's SQL blocks."""
    found: dict[str, list[str]] = {}
    for section in DOC.read_text().split("\n### ")[1:]:
        title = section.splitlines()[0].strip()
        found[title] = re.findall(r"```sql\n(.*?)```", section, re.S)
    return found


@pytest.fixture(scope="module")
def con(fleet_demo_lake):
    connection = duckdb.connect(str(fleet_demo_lake.warehouse), read_only=True)
    yield connection
    connection.close()


def test_the_doc_has_the_analyses_the_issue_names():
    assert set(_analyses()) >= {"What went down this week", "Red tools", "Yesterday's changes",
                                "The uptime distribution", "The token-heaviest servers"}
    assert all(_analyses().values())


def test_what_went_down_this_week(con):
    (query,) = _analyses()["What went down this week"]
    rows = con.execute(query).fetchall()
    expected = con.execute("SELECT server_key, count(*) FROM daily_status WHERE code = 'd' AND day > "
                           "(SELECT max(day) FROM daily_status) - INTERVAL 7 DAY GROUP BY ALL").fetchall()
    assert rows and len(rows) == len(expected)
    assert sorted(r[2] for r in rows) == sorted(n for _, n in expected)
    assert all(r[0] and r[1].startswith("https://") for r in rows)  # named, with the URL


def test_red_tools(con):
    (query,) = _analyses()["Red tools"]
    rows = con.execute(query).fetchall()
    (red,) = con.execute("SELECT count(*) FROM tools WHERE risk = 'red' AND day = (SELECT max(day) FROM "
                         "daily_status)").fetchone()
    assert rows and len(rows) == red and all(r[0] for r in rows)


def test_yesterdays_changes(con):
    latest, week = _analyses()["Yesterday's changes"]
    rows = con.execute(latest).fetchall()
    (day,) = con.execute("SELECT max(day) FROM daily_status").fetchone()
    (n,) = con.execute("SELECT count(*) FROM tool_changes WHERE day = $d", {"d": day}).fetchone()
    assert rows and len(rows) == n and all(r[0] for r in rows)
    kinds = con.execute(week).fetchall()
    assert sum(k[1] for k in kinds) >= n


def test_the_uptime_distribution(con):
    (query,) = _analyses()["The uptime distribution"]
    rows = con.execute(query).fetchall()
    (checked,) = con.execute("SELECT count(*) FROM latest_server_history WHERE checked_days > 0").fetchone()
    assert rows and sum(r[1] for r in rows) == checked
    assert [r[0] for r in rows] == sorted((r[0] for r in rows), key=["100%", "90-99%", "50-89%", "under 50%"].index)


def test_the_token_heaviest_servers(con):
    (query,) = _analyses()["The token-heaviest servers"]
    rows = con.execute(query).fetchall()
    assert rows and [r[2] for r in rows] == sorted((r[2] for r in rows), reverse=True)
    (top,) = con.execute("SELECT max(definition_tokens) FROM latest_token_cost").fetchone()
    assert rows[0][2] == top and all(0 <= r[3] <= 100 for r in rows)


def test_every_other_query_in_the_doc_runs(con):
    for title, queries in _analyses().items():
        for query in queries:
            con.execute(query).fetchall()  # raises, naming the SQL error, if a query is wrong
        assert queries, title


def test_the_analyst_views_agree_with_their_tables(con):
    (day,) = con.execute("SELECT max(day) FROM daily_status").fetchone()
    for table in LATEST_TABLES:
        (latest,) = con.execute(f"SELECT count(*) FROM latest_{table}").fetchone()
        (direct,) = con.execute(f"SELECT count(*) FROM {table} WHERE day = $d", {"d": day}).fetchone()
        assert latest == direct, table
        (unnamed,) = con.execute(f"SELECT count(*) FROM latest_{table} WHERE server_name IS NULL").fetchone()
        assert unnamed == 0, f"latest_{table} has rows without a registry name"
    servers = con.execute("SELECT count(*), count(DISTINCT server_key), min(first_day) <= max(last_day) "
                          "FROM servers").fetchone()
    (endpoints,) = con.execute("SELECT count(DISTINCT server_key) FROM daily_status").fetchone()
    assert servers == (endpoints, endpoints, True)
    days = con.execute("SELECT count(*), bool_and(signed), sum(o + a + p + d + n) = sum(endpoints) "
                       "FROM map_days").fetchone()
    (built,) = con.execute("SELECT count(DISTINCT day) FROM daily_status").fetchone()
    assert days == (built, True, True)


def test_the_lowest_readiness_scores_and_their_lines(con):
    (query,) = _analyses()["Readiness: the lowest scores, and the lines they lost"]
    rows = con.execute(query).fetchall()
    assert rows and all(points < max_points for _, _, _, points, max_points, _ in rows)
    lost = {(name, line) for name, _, line, *_ in rows}
    assert ("test.heavy/heavy", "annotation_coverage") in lost  # 89 of 100 tools annotated


def test_the_demo_shows_each_cadence_and_control(con, fleet_demo_lake):
    """`sevenmaps demo` shows the moving hour, an hourly flap then two failures, an owner's note and
    five-minute checks, a package advisory, a young domain and a form opt-out (docs/operations.md)."""
    from sevenmaps_pipeline.registry import submissions

    hours = [h for (h,) in con.execute("SELECT hour(started_at) FROM probes WHERE check_kind = 'daily' AND "
                                       "server_key = 'mcp.weather.test/mcp' ORDER BY day").fetchall()]
    assert len(hours) >= 3 and all((b - a) % 24 == 1 for a, b in zip(hours, hours[1:], strict=False))
    shown, by, outcomes = con.execute(
        "SELECT c.current_shown_status, c.decided_by, (SELECT list(outcome ORDER BY started_at) FROM hourly_checks "
        "h WHERE h.server_key = c.server_key) FROM current_status c WHERE server_key = 'mcp.weather.test/mcp'"
    ).fetchone()
    # Today's hourly runs are in the hours begun when the demo ran (devtools/demo_operations.py open_day): the
    # whole plan from 04:00 UTC, its last states on a younger day; from 01:00 it ends in two failures in a row.
    plan = ["ok" if state == "up" else state for state in HOURLY_PLAN]
    assert 1 <= len(outcomes) <= len(plan) and outcomes == plan[-len(outcomes):]
    if len(outcomes) >= 2:
        assert (shown, by) == ("down", "hourly")
    else:  # the day's first hour: one failed check, never shown
        assert by == "daily" and shown != "down"
    assert con.execute("SELECT daily_code FROM current_status WHERE server_key = 'mcp.weather.test/mcp'").fetchone() \
        == ("o",)  # the day code itself never moved
    assert con.execute("SELECT server_key FROM owner_notes").fetchall() == [("mcp.calendar.test/mcp",)]
    # Two five-minute runs, five minutes apart (one in the day's first five minutes), every check answered.
    stamps = [at for (at,) in con.execute("SELECT started_at FROM five_minute_checks ORDER BY started_at").fetchall()]
    marks = [at.replace(second=0, microsecond=0) for at in stamps]
    assert marks in ([marks[0], marks[0] + dt.timedelta(minutes=5)], [marks[0]]) and marks[0].minute % 5 == 0
    assert len(marks) == 2 or (marks[0].hour, marks[0].minute) == (0, 0)
    assert con.execute("SELECT checks_30d, uptime_30d_pct FROM five_minute_uptime").fetchall() == [(len(marks), 100.0)]
    last = con.execute("SELECT max(day) FROM daily_status").fetchone()[0]
    assert con.execute("SELECT advisory_ids, max_severity FROM package_advisories WHERE day = $d AND advisories > 0",
                       {"d": last}).fetchall() == [(["GHSA-flt1-wthr-0001"], "HIGH")]
    assert con.execute("SELECT domain FROM domain_ages WHERE day = $d AND young", {"d": last}).fetchall() == [
        ("deploy.test",)]
    assert con.execute("SELECT count(*) FROM daily_status WHERE day = $d AND server_key LIKE 'mcp.away.test/%'",
                       {"d": last}).fetchone() == (0,)
    queued = {e.server_key: e.status for e in submissions.read_submissions(fleet_demo_lake)}
    assert queued == {"mcp.zipjson.test/mcp": "queued", "mcp.huge.test/mcp": "queued"}  # a short demo: not yet 7 days


def test_no_check_the_demo_made_is_stamped_after_it_was_written(fleet_demo_lake):
    """A user ran the demo at 04:47 UTC and saw today's hourly checks "made" at 05:00 and five-minute checks at
    06:00: every check's start in the demo's raw files is at or before the moment its file was written."""
    checked = 0
    for kind in ("probes", "hourly", "five_minute", "submitted"):
        for path in sorted((fleet_demo_lake.root / "raw" / kind).glob("day=*/*.parquet")):
            written = dt.datetime.fromtimestamp(path.stat().st_mtime, dt.UTC)
            started = pq.read_table(path, columns=["started_at"]).column("started_at").to_pylist()
            assert started and max(started) <= written, (path, max(started), written)
            checked += 1
    assert checked and list((fleet_demo_lake.root / "raw" / "hourly").glob("day=*/*.parquet"))


def test_every_column_of_every_view_says_what_it_is(con):
    """A newcomer found six views with no column comments and no entry in the data dictionary, though the
    README's first query reads one of them (map_days)."""
    from sevenmaps_pipeline.lake.schemas import DERIVED_VIEWS

    bare = con.execute("SELECT table_name, column_name FROM duckdb_columns() WHERE NOT internal "
                       "AND database_name = current_database() AND coalesce(comment, '') = ''").fetchall()
    assert bare == []
    dictionary = (PROJECT_ROOT / "docs" / "data-dictionary.md").read_text()
    for view, (_, columns) in DERIVED_VIEWS.items():
        assert f"### `{view}`" in dictionary
        actual = [r[0] for r in con.execute("SELECT column_name FROM duckdb_columns() WHERE table_name = ? "
                                            "ORDER BY column_index", [view]).fetchall()]
        assert actual == list(columns), view
