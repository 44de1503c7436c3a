"""Agent reports: validation with reasons, agreement with our checks, rating aggregates and their weights."""

from __future__ import annotations

import datetime as dt
import json
import math

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import DAY, land_reports, land_status, report, reporter

from sevenmaps_pipeline import curated
from sevenmaps_pipeline.lake.keys import server_id
from sevenmaps_pipeline.rules.methods import RATINGS_PARAMS

UP, DOWN, LOCKED = "up.example.com/mcp", "down.example.com/mcp", "locked.example.com/mcp"


def status_days(lake, days: int = 31, codes: dict[str, str] | None = None) -> None:
    for i in range(days):
        land_status(lake, DAY - dt.timedelta(days=i), codes or {UP: "o", DOWN: "d", LOCKED: "a"})


def validate(lake, day: dt.date = DAY):
    result = curated.build_agent_reports(lake, day)
    valid = pq.read_table(lake.curated_file("agent_reports", day)).to_pylist()
    refused = pq.read_table(lake.curated_file("agent_report_quarantine", day)).to_pylist()
    return result, valid, refused


def test_each_invalid_report_is_quarantined_with_its_reason(lake):
    status_days(lake, 1)
    bad = {
        "unknown fail reason '<7 characters withheld>'": report(UP, ok=False, fail="crashed"),
        "unknown surprise '<11 characters withheld>'": report(UP, surprise="it was rude"),
        "negative ms": report(UP, ms=-5),
        "tool is not a tool name (free text is never accepted): '<36 characters withheld>'":
            report(UP, tool="it broke when I asked about my taxes"),
        "unknown server nowhere.example.com/mcp": report("nowhere.example.com/mcp"),
        "reporter_id is not a keyed hash (64 lower-case hex): reports never carry an IP address or a name":
            report(UP, reporter_id="203.0.113.7"),
        f"about a day ({DAY + dt.timedelta(days=1)}) after the day it arrived":
            report(UP, about_day=DAY + dt.timedelta(days=1)),
        f"about a day ({DAY - dt.timedelta(days=30)}) more than 29 days before it arrived":
            report(UP, about_day=DAY - dt.timedelta(days=30)),
        "a fail reason for a call that worked": report(UP, ok=True, fail="timeout"),
        "no fail reason for a call that failed": report(UP, ok=False, fail=None),
        "missing ok": report(UP, ok=None),
        "missing paid": report(UP, paid=None),
        "tools_hash is not a SHA-256 hex digest": report(UP, tools_hash="not-a-hash"),
        "negative or non-finite charged_usd": report(UP, charged_usd=-0.01),
        "negative result_tokens": report(UP, result_tokens=-1),
    }
    good = [report(UP), report(server_id(DOWN), ok=False, fail="unreachable", who="r2", paid=True,
                               charged_usd=0.002, surprise="unexpected_cost", tools_hash="ab" * 32)]
    land_reports(lake, good + list(bad.values()))
    result, valid, refused = validate(lake)
    assert result.rows == 2 and result.stats["refused_rows"] == len(bad)
    assert [r["problem"] for r in refused] == list(bad)  # each with its own reason, in landing order
    assert [r["row_number"] for r in refused] == list(range(2, 2 + len(bad)))
    # Never the text of an agent's own words: a field that is not what it may be is only its length.
    assert json.loads(refused[3]["row_json"])["tool"] == "<36 characters withheld>"
    assert not any(word in json.dumps(r, default=str) for word in ("taxes", "rude", "crashed")
                   for r in refused)
    assert json.loads(refused[4]["row_json"])["server"] == "nowhere.example.com/mcp"  # an endpoint key is kept
    assert refused[5]["reporter_id"] == "<11 characters withheld>"  # an IP address is never stored
    assert {r["method_version"] for r in refused} == {"reports-1.2"}
    by_key = {r["server_key"]: r for r in valid}
    assert by_key[DOWN]["server_id"] == server_id(DOWN)  # resolved from the published id
    assert (by_key[UP]["agreement"], by_key[DOWN]["agreement"]) == ("agrees", "agrees")


def test_a_batch_with_extra_columns_or_unreadable_bytes_is_refused_whole(lake):
    status_days(lake, 1)
    land_reports(lake, [report(UP)], batch="fine")
    chatty = pa.Table.from_pylist([{**report(UP), "comment": "the server was slow and I hated it"}])
    folder = lake.raw_dir("agent_reports", DAY)
    pq.write_table(chatty, folder / "chatty.parquet")
    (folder / "garbage.parquet").write_bytes(b"PAR1 this is not parquet")
    result, valid, refused = validate(lake)
    assert len(valid) == 1 and result.stats["refused_files"] == 2
    reasons = {r["source_file"]: r["problem"] for r in refused}
    assert reasons[f"raw/agent_reports/day={DAY}/chatty.parquet"].startswith(
        "unexpected column(s) comment: reports carry the fixed fields only")
    assert reasons[f"raw/agent_reports/day={DAY}/garbage.parquet"].startswith("unreadable Parquet")
    assert "was deleted" in reasons[f"raw/agent_reports/day={DAY}/garbage.parquet"]
    assert not (folder / "chatty.parquet").exists()  # out of the raw area: no view ever shows the text
    kept = lake.quarantine_dir / f"raw/agent_reports/day={DAY}/chatty.parquet"
    assert pq.read_table(kept).column_names == [c for c in chatty.column_names if c != "comment"]
    assert b"hated" not in kept.read_bytes()  # the reason and the column name stay; the words never
    assert not any(b"hated" in p.read_bytes() for p in lake.root.rglob("*") if p.is_file())
    assert not (lake.quarantine_dir / f"raw/agent_reports/day={DAY}/garbage.parquet").exists()


def test_agreement_with_our_own_check_of_the_day_the_report_is_about(lake):
    status_days(lake, 2)
    yesterday = DAY - dt.timedelta(days=1)
    land_status(lake, yesterday, {UP: "d", DOWN: "d", LOCKED: "a"})  # UP was down yesterday
    land_reports(lake, [
        report(UP, who="a"),  # worked, our o -> agrees
        report(UP, who="b", about_day=yesterday),  # worked, our d that day -> disagrees
        report(UP, who="c", ok=False, fail="timeout"),  # we reached it -> disagrees
        report(UP, who="d", ok=False, fail="wrong_result"),  # nothing we can see -> unchecked
        report(LOCKED, who="e", ok=False, fail="auth"),  # our a -> agrees
        report(LOCKED, who="f"),  # worked behind sign-in: unchecked
    ])
    _, valid, _ = validate(lake)
    assert len(valid) == 6
    assert [(r["reporter_id"] == reporter(w), r["our_code"], r["agreement"])
            for r, w in zip(valid, "abcdef", strict=True)] == [
        (True, "o", "agrees"), (True, "d", "disagrees"), (True, "o", "disagrees"), (True, "o", "unchecked"),
        (True, "a", "agrees"), (True, "a", "unchecked")]


def rate(lake, day: dt.date = DAY) -> dict[tuple[str, str | None], dict]:
    curated.build_rating_aggregates(lake, day)
    return {(r["server_key"], r["tool"]): r for r in pq.read_table(lake.curated_file("rating_aggregates", day))
            .to_pylist()}


def test_stars_need_enough_independent_reporters_including_paying_ones(lake):
    status_days(lake, 1)
    four = [report(UP, who=f"h{i}", paid=i < 2) for i in range(4)]
    land_reports(lake, four)
    validate(lake)
    row = rate(lake)[(UP, None)]
    assert (row["reporters"], row["stars"], row["rating_label"]) == (4, None, "not enough reports")
    # Five reporters, one paying: still not enough. The same reporter twice is one reporter.
    land_reports(lake, [report(UP, who=f"h{i}", paid=i == 0) for i in range(5)] + [report(UP, who="h4")])
    validate(lake)
    row = rate(lake)[(UP, None)]
    assert (row["reporters"], row["paid_reporters"], row["stars"]) == (5, 1, None)
    land_reports(lake, [report(UP, who=f"h{i}", paid=i < 2) for i in range(5)])
    validate(lake)
    row = rate(lake)[(UP, None)]
    assert (row["reporters"], row["paid_reporters"], row["stars"], row["rating_label"]) == (5, 2, 5.0, "5.0 stars")


def expected_weight(age: int, paid: bool, agreement: str, share_of_cap: float = 1.0) -> float:
    p = RATINGS_PARAMS
    return (0.5 ** (age / p["recency_half_life_days"]) * (p["paid_weight"] if paid else p["anonymous_weight"])
            * {"agrees": p["agrees_weight"], "disagrees": p["disagrees_weight"],
               "unchecked": p["unchecked_weight"]}[agreement] * share_of_cap)


def test_weights_recency_paid_and_agreement_as_documented(lake):
    status_days(lake)
    old = DAY - dt.timedelta(days=10)
    land_reports(lake, [report(UP, who="p", paid=True, about_day=old, day=old)], day=old)
    curated.build_agent_reports(lake, old)
    land_reports(lake, [report(UP, who="a"), report(UP, who="b", ok=False, fail="timeout"),
                        report(UP, who="c", ok=False, fail="args")])
    validate(lake)
    row = rate(lake)[(UP, None)]
    ok_weight = expected_weight(10, True, "agrees") + expected_weight(0, False, "agrees")
    all_weight = ok_weight + expected_weight(0, False, "disagrees") + expected_weight(0, False, "unchecked")
    assert row["weight"] == pytest.approx(all_weight)
    assert row["success_share"] == pytest.approx(ok_weight / all_weight)
    assert row["fail_reasons"] == [{"value": "args", "reports": 1}, {"value": "timeout", "reports": 1}]
    assert rate(lake)[(UP, "get_weather")]["reports"] == 4  # and the same, per tool


def test_a_flooding_reporter_weighs_no_more_than_the_cap(lake, tmp_path):
    from sevenmaps_pipeline.lake.paths import LakePaths

    status_days(lake, 1)
    honest = [report(UP, who=f"h{i}", paid=i < 2) for i in range(6)]
    cap = RATINGS_PARAMS["reporter_cap_reports_per_endpoint_day"]
    flood = [report(UP, who="flooder", ok=False, fail="server_error", ms=i) for i in range(1000)]
    land_reports(lake, honest + flood)
    validate(lake)
    flooded = rate(lake)[(UP, None)]

    other = LakePaths.at(tmp_path / "capped")
    status_days(other, 1)
    land_reports(other, honest + flood[:cap])
    validate(other)
    just_cap = rate(other)[(UP, None)]

    assert flooded["reports"] == 1006 and just_cap["reports"] == 6 + cap
    assert flooded["weight"] == pytest.approx(just_cap["weight"])  # 1,000 reports weigh what 3 would
    assert flooded["success_share"] == pytest.approx(just_cap["success_share"])
    assert flooded["stars"] == just_cap["stars"]
    honest_weight = 2 * expected_weight(0, True, "agrees") + 4 * expected_weight(0, False, "agrees")
    bound = honest_weight / (honest_weight + cap * expected_weight(0, False, "disagrees"))
    assert flooded["success_share"] == pytest.approx(bound)
    assert flooded["stars"] == math.floor((1 + 4 * bound) * 2 + 0.5) / 2


def test_the_window_is_the_30_days_ending_on_the_day(lake):
    status_days(lake, 31)
    edge, outside = DAY - dt.timedelta(days=29), DAY - dt.timedelta(days=30)
    for d in (edge, outside):
        land_reports(lake, [report(UP, who=str(d), day=d, about_day=d)], day=d)
        curated.build_agent_reports(lake, d)
    # a late batch: arrived today, about a day inside the window
    land_reports(lake, [report(UP, who="late", about_day=DAY - dt.timedelta(days=5))])
    validate(lake)
    row = rate(lake)[(UP, None)]
    assert row["reports"] == 2 and row["reporters"] == 2  # the edge day and the late one; not day -30
