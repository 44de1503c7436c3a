"""Incidents (confirmed only by our own check or trusted reports) and the reliable rankings."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import DAY, land_reports, land_status, report

from sevenmaps_pipeline import curated
from sevenmaps_pipeline.lake.keys import server_id
from sevenmaps_pipeline.lake.parquet_io import write_parquet
from sevenmaps_pipeline.lake.paths import LakePaths
from sevenmaps_pipeline.lake.schemas import SERVER_CATEGORIES, conform

KEY = "svc.example.com/mcp"


def day_n(i: int) -> dt.date:
    return DAY + dt.timedelta(days=i)


def incident_days(lake, codes: str, reports: dict[int, list[dict]]) -> list[dict | None]:
    """Day i has our code codes[i] and the given reports (about and arriving that day); the incident row of
    KEY on each day, or None."""
    rows = []
    for i, code in enumerate(codes):
        day = day_n(i)
        land_status(lake, day, {KEY: code})
        land_reports(lake, [{**r, "day": day, "about_day": day} for r in reports.get(i, [])], day=day)
        curated.build_agent_reports(lake, day)
        curated.build_incidents(lake, day)
        found = [r for r in pq.read_table(lake.curated_file("incidents", day)).to_pylist() if r["server_key"] == KEY]
        rows.append(found[0] if found else None)
    return rows


def failing(who: str, paid: bool = False, fail: str = "unreachable") -> dict:
    return report(KEY, ok=False, fail=fail, who=who, paid=paid)


def test_anonymous_failures_alone_never_open_an_incident(lake):
    crowd = [failing(f"anon{i}") for i in range(25)]
    rows = incident_days(lake, "ooo", {0: crowd, 1: crowd, 2: crowd})
    assert [r["status"] for r in rows] == ["unconfirmed"] * 3
    assert not any(r["shown"] for r in rows)
    assert rows[0]["failure_reporters"] == 25 and rows[0]["trusted_failure_reporters"] == 0
    assert rows[0]["opened_day"] is None and rows[0]["confirmed_by"] is None


def test_one_paying_reporter_is_not_enough_but_two_are(tmp_path):
    one = incident_days(LakePaths.at(tmp_path / "one"), "o", {0: [failing("p1", paid=True), failing("a1")]})
    assert one[0]["status"] == "unconfirmed"
    two = incident_days(LakePaths.at(tmp_path / "two"), "o", {0: [failing("p1", True), failing("p2", True)]})
    assert (two[0]["status"], two[0]["shown"], two[0]["confirmed_by"]) == ("live", True, "trusted_reports")


def test_our_own_check_confirms_and_a_working_check_closes(lake):
    rows = incident_days(lake, "oddoo", {1: [failing("anon")], 2: [failing("anon2", fail="timeout")]})
    assert rows[0] is None
    assert [r and r["status"] for r in rows] == [None, "live", "live", "closed", None]
    assert (rows[1]["confirmed_by"], rows[1]["opened_day"]) == ("our_check", day_n(1))
    assert (rows[2]["opened_day"], rows[2]["last_confirmed_day"]) == (day_n(1), day_n(2))
    assert (rows[3]["closed_reason"], rows[3]["shown"]) == ("a check works again", False)


def test_trusted_reports_age_out_without_a_new_confirmation(lake, tmp_path):
    pair = [failing("p1", True), failing("p2", True)]
    rows = incident_days(lake, "onnn", {0: pair})  # no check of ours after day 0
    assert [r and r["status"] for r in rows] == ["live", "live", "closed", None]
    assert rows[2]["closed_reason"] == "the reports aged out"
    # Our next check answering closes it at once.
    rows = incident_days(LakePaths.at(tmp_path / "checked"), "oo", {0: pair})
    assert [(r["status"], r["closed_reason"]) for r in rows] == [("live", None), ("closed", "a check works again")]


def test_a_check_that_works_between_confirmations_starts_a_new_incident(lake):
    # Day 0 and day 2 confirmed by our check, day 1 answered: two incidents, the second opened on day 2.
    rows = incident_days(lake, "dod", {0: [failing("a")], 2: [failing("b")]})
    assert [r["status"] for r in rows] == ["live", "closed", "live"]
    assert rows[2]["opened_day"] == day_n(2)


# ----------------------------------------------------------------------------------------- rankings

END = dt.date(2026, 11, 30)


def ranking_lake(lake, histories: dict[str, str], handshakes: dict[str, int], categories: dict[str, str],
                 empty: frozenset[str] = frozenset()):
    """30 days of codes (oldest first) per endpoint, its handshake on o days, its category on END; the `empty`
    endpoints answer with an empty tool list."""
    for i in range(30):
        day = END - dt.timedelta(days=29 - i)
        codes = {k: h[i] for k, h in histories.items() if h[i] != "-"}
        land_status(lake, day, codes, handshake={k: handshakes[k] for k, c in codes.items() if c == "o"},
                    tool_counts=dict.fromkeys(empty, 0))
    curated.build_server_history(lake, END)
    rows = [{"day": END, "server_key": k, "server_id": server_id(k), "category": c, "placed_by": "words",
             "decision": "tools_only", "score": 3, "tool_count": 4, "method_version": "test"}
            for k, c in categories.items()]
    write_parquet(lake, lake.curated_file("server_categories", END),
                  conform(pa.Table.from_pylist(rows, SERVER_CATEGORIES.schema), SERVER_CATEGORIES))
    curated.build_reliable_rankings(lake, END)
    return pq.read_table(lake.curated_file("reliable_rankings", END)).to_pylist()


def test_eligibility_edges(lake):
    histories = {
        "fourteen.example.com/mcp": "n" * 16 + "o" * 14,  # exactly 14 checked days: eligible
        "thirteen.example.com/mcp": "n" * 17 + "o" * 13,  # 13: not yet
        "down-now.example.com/mcp": "o" * 29 + "d",  # answered yesterday, not now
        "signin-now.example.com/mcp": "o" * 29 + "a",  # answering, but not with tools
        "other.example.com/mcp": "o" * 30,  # no category
        "empty.example.com/mcp": "o" * 30,  # answering with an empty tool list: an answer, not tools
    }
    rows = ranking_lake(lake, histories, dict.fromkeys(histories, 100),
                        {k: "other" if k.startswith("other") else "weather" for k in histories},
                        empty=frozenset({"empty.example.com/mcp"}))
    assert [r["server_key"] for r in rows] == ["fourteen.example.com/mcp"]
    assert (rows[0]["rank"], rows[0]["checked_days"], rows[0]["answered_share"]) == (1, 14, 1.0)
    # The category decides the list: a row names the categories method that placed it beside its own.
    assert rows[0]["method_version"] == "reliable-1.3+test"


def test_order_share_first_then_speed_and_ties_share_a_rank(lake):
    histories = {
        "steady-slow.example.com/mcp": "o" * 30,
        "steady-fast.example.com/mcp": "o" * 30,
        "twin-a.example.com/mcp": "o" * 14 + "d" + "o" * 15,
        "twin-b.example.com/mcp": "o" * 14 + "d" + "o" * 15,
        "flaky-fastest.example.com/mcp": "d" * 5 + "o" * 25,
    }
    handshakes = {"steady-slow.example.com/mcp": 900, "steady-fast.example.com/mcp": 80,
                  "twin-a.example.com/mcp": 300, "twin-b.example.com/mcp": 300, "flaky-fastest.example.com/mcp": 5}
    rows = ranking_lake(lake, histories, handshakes, dict.fromkeys(histories, "calendar"))
    assert [(r["rank"], r["server_key"].split(".")[0]) for r in rows] == [
        (1, "steady-fast"), (2, "steady-slow"), (3, "twin-a"), (3, "twin-b"), (5, "flaky-fastest")]
    assert rows[2]["answered_share"] == pytest.approx(29 / 30) and rows[2]["uptime_pct"] == 96.6


def test_a_history_of_an_earlier_method_is_not_ranked_on(lake):
    """reliable-1.3 ranks by days answering with tools, which history-1.1 did not count: a day whose
    server_history was built before (materialised alone after an upgrade) says what to build first."""
    ranking_lake(lake, {"steady.example.com/mcp": "o" * 30}, {"steady.example.com/mcp": 100},
                 {"steady.example.com/mcp": "weather"})
    path = lake.curated_file("server_history", END)
    older = pq.read_table(path).drop_columns(["tools_days"])
    older = older.set_column(older.schema.get_field_index("method_version"), "method_version",
                             pa.array(["history-1.1"] * older.num_rows))
    pq.write_table(older, path)
    with pytest.raises(ValueError, match=r"built by history-1\.1, which does not count the days answering with "
                                         r"tools; materialise server_history of 2026-11-30 first"):
        curated.build_reliable_rankings(lake, END)


def test_payment_and_ratings_never_move_the_order(lake, tmp_path):
    histories = {"free.example.com/mcp": "o" * 29 + "o", "paid.example.com/mcp": "p" * 10 + "o" * 20,
                 "third.example.com/mcp": "o" * 20 + "d" * 2 + "o" * 8}
    handshakes = {"free.example.com/mcp": 200, "paid.example.com/mcp": 200, "third.example.com/mcp": 100}
    categories = dict.fromkeys(histories, "search")
    before = ranking_lake(lake, histories, handshakes, categories)
    # Glowing paid reports for the third, damning ones for the first: ratings change, the order does not.
    land_reports(lake, [report("third.example.com/mcp", who=f"fan{i}", paid=True, day=END) for i in range(9)]
                 + [report("free.example.com/mcp", ok=False, who=f"foe{i}", paid=True, day=END) for i in range(9)],
                 day=END)
    curated.build_agent_reports(lake, END)
    curated.build_rating_aggregates(lake, END)
    stars = {r["server_key"]: r["stars"] for r in pq.read_table(lake.curated_file("rating_aggregates", END))
             .to_pylist()}
    assert stars == {"third.example.com/mcp": 5.0, "free.example.com/mcp": 1.0}
    curated.build_reliable_rankings(lake, END)
    assert pq.read_table(lake.curated_file("reliable_rankings", END)).to_pylist() == before
    # Days answering with tools rank first (reliable-1.1): ten days of asking for payment (p) count as answers
    # for uptime, never as days with tools, so the paid endpoint ranks below the one down on two days.
    assert [(r["rank"], r["server_key"]) for r in before] == [
        (1, "free.example.com/mcp"), (2, "third.example.com/mcp"), (3, "paid.example.com/mcp")]


def test_the_ranking_sql_reads_nothing_that_could_buy_a_place():
    from sevenmaps_pipeline.lake.duck import load_sql

    code = "\n".join(line.split("--")[0] for line in load_sql("reliable_rankings").splitlines()).lower()
    for word in ("payment", "paid", "plan", "verified", "owner", "rating", "stars", "agent_reports", "charged"):
        assert word not in code, word


def test_the_blocking_checks_catch_a_shown_unconfirmed_incident_and_an_ineligible_rank(lake):
    from sevenmaps_pipeline.defs.checks import incident_violations, ranking_violations
    from sevenmaps_pipeline.lake.schemas import INCIDENTS, RELIABLE_RANKINGS

    rows = incident_days(lake, "o", {0: [failing(f"anon{i}") for i in range(5)]})
    assert rows[0]["status"] == "unconfirmed" and incident_violations(lake, DAY) == {}
    forged = {**rows[0], "status": "live", "shown": True, "confirmed_by": "trusted_reports", "opened_day": DAY,
              "last_confirmed_day": DAY}
    write_parquet(lake, lake.curated_file("incidents", DAY), conform(pa.Table.from_pylist([forged]), INCIDENTS))
    assert incident_violations(lake, DAY) == {"confirmed_by_anonymous_reports_alone": 1}

    histories = {"a.example.com/mcp": "o" * 30, "b.example.com/mcp": "o" * 29 + "d"}
    ranked = ranking_lake(lake, histories, dict.fromkeys(histories, 100), dict.fromkeys(histories, "search"))
    assert ranking_violations(lake, END) == {}
    forged = [*ranked, {**ranked[0], "server_key": "b.example.com/mcp", "rank": 1, "checked_days": 13}]
    write_parquet(lake, lake.curated_file("reliable_rankings", END),
                  conform(pa.Table.from_pylist(forged), RELIABLE_RANKINGS))
    assert ranking_violations(lake, END) == {"not_answering_with_tools": 1, "too_few_checked_days": 1}
