"""tool_changes from hand-made probes of consecutive days: every kind, renames, baselines, method changes."""

from __future__ import annotations

import datetime as dt
import json

import pyarrow.parquet as pq
import pytest
from conftest import land_probes, make_creating_high_risk, probe

from sevenmaps_pipeline import curated
from sevenmaps_pipeline.lake.keys import server_key

DAY1 = dt.date(2026, 11, 10)
DAY2 = DAY1 + dt.timedelta(days=1)
SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}}


def tool(name: str, description: str | None, schema: dict | None = None, **annotations) -> dict:
    t = {"name": name, "inputSchema": schema or {"type": "object"}}
    if description is not None:
        t["description"] = description
    if annotations:
        t["annotations"] = annotations
    return t


BEFORE = [
    tool("get_forecast", "Get the forecast."),
    tool("create_note", "Create a note."),
    tool("list_files", "List the files in a folder.", SCHEMA),
    tool("get_old_report", "Get the old report."),
    tool("update_record", "Update a record.", readOnlyHint=False, destructiveHint=False),
]
AFTER = [
    tool("get_forecast", "Get the forecast."),  # unchanged
    tool("create_note", "Create a note in the notebook."),  # rewritten, yellow
    tool("list_folder", "List the files in a folder.", SCHEMA),  # renamed
    tool("update_record", "Update a record.", readOnlyHint=False, destructiveHint=True),  # yellow -> red
    tool("delete_everything", "Delete all records."),  # added as red
    tool("read_log", "Read the log."),  # added, green
]


def build(lake, day):
    """The tables tool_changes needs, then tool_changes; returns what tool_facts did."""
    curated.build_quarantine(lake, day)
    curated.build_daily_status(lake, day)
    facts = curated.build_tool_facts(lake, day)
    curated.build_tools(lake, day)
    curated.build_tool_changes(lake, day)
    return facts


def changes(lake, day=DAY2) -> dict[str, list[dict]]:
    by_endpoint: dict[str, list[dict]] = {}
    for row in pq.read_table(lake.curated_file("tool_changes", day)).to_pylist():
        by_endpoint.setdefault(row["server_key"], []).append(row)
    return by_endpoint


def kinds(rows: list[dict]) -> list[tuple]:
    return sorted((r["kind"], r["tool_name"]) for r in rows)


def two_days(lake, day1_rows, day2_rows):
    land_probes(lake, day1_rows, day=DAY1)
    build(lake, DAY1)
    land_probes(lake, day2_rows, day=DAY2)
    build(lake, DAY2)
    return changes(lake)


def test_every_tool_list_kind_between_two_days(lake):
    url, bumped, steady = "https://a.example.com/mcp", "https://b.example.com/mcp", "https://c.example.com/mcp"
    found = two_days(
        lake,
        [probe(url, "ok", day=DAY1, tools=BEFORE, server_info_version="1.0"),
         probe(bumped, "ok", day=DAY1, tools=BEFORE, server_info_version="1.0"),
         probe(steady, "ok", day=DAY1, tools=BEFORE, server_info_version="1.0")],
        [probe(url, "ok", day=DAY2, tools=AFTER, server_info_version="1.0"),
         probe(bumped, "ok", day=DAY2, tools=AFTER, server_info_version="1.1"),
         probe(steady, "ok", day=DAY2, tools=BEFORE, server_info_version="1.0")])
    rows = found[server_key(url)]
    assert kinds(rows) == [
        ("changing_tool_rewritten", "create_note"),
        ("changing_tool_rewritten", "update_record"),
        ("risk_rise", "delete_everything"),
        ("risk_rise", "update_record"),
        ("silent", None),
        ("tool_added", "delete_everything"),
        ("tool_added", "read_log"),
        ("tool_changed", "create_note"),
        ("tool_changed", "update_record"),
        ("tool_removed", "get_old_report"),
        ("tool_renamed", "list_folder"),
    ]
    by = {(r["kind"], r["tool_name"]): r for r in rows}
    assert by[("tool_changed", "create_note")]["changed_fields"] == ["description"]
    assert by[("tool_changed", "update_record")]["changed_fields"] == ["annotations"]
    assert (by[("risk_rise", "update_record")]["previous_risk"], by[("risk_rise", "update_record")]["risk"]) == (
        "yellow", "red")
    assert by[("tool_renamed", "list_folder")]["previous_tool_name"] == "list_files"
    assert by[("tool_added", "delete_everything")]["risk"] == "red"
    assert by[("tool_removed", "get_old_report")]["previous_risk"] == "green"
    assert {r["previous_day"] for r in rows} == {DAY1}
    assert {r["method_version"] for r in rows} == {"changes-1.1+risk-1.7+o200k_base-1.1"}
    # The same diff under a version bump is not silent; an unchanged list records nothing.
    assert kinds(found[server_key(bumped)]) == [k for k in kinds(rows) if k[0] != "silent"]
    assert server_key(steady) not in found


def test_a_rename_needs_the_same_description_and_schema(lake):
    url = "https://a.example.com/mcp"
    before = [tool("list_files", "List the files in a folder.", SCHEMA), tool("get_x", None), tool("get_e", "")]
    after = [tool("list_folder", "List every file in a folder.", SCHEMA), tool("get_y", None), tool("get_f", "")]
    rows = two_days(lake, [probe(url, "ok", day=DAY1, tools=before)],
                    [probe(url, "ok", day=DAY2, tools=after)])[server_key(url)]
    # Different descriptions, none at all, or an empty one: removed and added, never guessed as renames.
    assert kinds(rows) == [("tool_added", "get_f"), ("tool_added", "get_y"), ("tool_added", "list_folder"),
                           ("tool_removed", "get_e"), ("tool_removed", "get_x"), ("tool_removed", "list_files")]


def test_duplicate_names_pair_one_to_one(lake):
    url = "https://a.example.com/mcp"
    before = [tool("search", "Search the docs."), tool("search", "Search the blog.")]
    after = [tool("search", "Search the docs."), tool("search", "Search the blog posts.")]
    rows = two_days(lake, [probe(url, "ok", day=DAY1, tools=before)],
                    [probe(url, "ok", day=DAY2, tools=after)])[server_key(url)]
    assert kinds(rows) == [("tool_changed", "search")]
    assert rows[0]["changed_fields"] == ["description"]


def test_tools_of_one_name_pair_by_level_whatever_order_another_server_served_them(lake):
    # A tools_hash ignores order, so the stored copy of [search (green), search (red)] may be another server's
    # order; each tool reworded keeping its level is no rise, in whichever order the first server served it.
    reading, deleting = tool("search", "Search the docs."), tool("search", "Delete the docs index.")
    reading2, deleting2 = tool("search", "Search the docs quickly."), tool("search", "Delete the docs index now.")
    first, second = "https://a-first.example.com/mcp", "https://b-second.example.com/mcp"
    found = two_days(lake, [probe(first, "ok", day=DAY1, tools=[reading, deleting]),
                            probe(second, "ok", day=DAY1, tools=[deleting, reading])],
                     [probe(first, "ok", day=DAY2, tools=[reading, deleting]),
                      probe(second, "ok", day=DAY2, tools=[deleting2, reading2])])
    rows = found[server_key(second)]
    assert kinds(rows) == [("changing_tool_rewritten", "search"), ("tool_changed", "search"),
                           ("tool_changed", "search")]
    assert sorted((r["previous_risk"], r["risk"]) for r in rows if r["kind"] == "tool_changed") == [
        ("green", "green"), ("red", "red")]


def test_status_kinds(lake):
    pay1 = json.dumps({"x402Version": 1, "accepts": [{"payTo": "0x1", "network": "base"}]})
    pay12 = json.dumps({"x402Version": 1, "accepts": [{"payTo": "0x2"}, {"payTo": "0x1"}]})
    u = {name: f"https://{name}.example.com/mcp" for name in (
        "stops", "starts", "signin", "signin_again", "paywall", "new_address", "same_address", "garbled_402",
        "leaves", "still_away", "same_site", "newcomer")}
    found = two_days(
        lake,
        [probe(u["stops"], "ok", day=DAY1), probe(u["starts"], "timeout", day=DAY1),
         probe(u["signin"], "ok", day=DAY1), probe(u["signin_again"], "needs_auth", day=DAY1),
         probe(u["paywall"], "ok", day=DAY1),
         probe(u["new_address"], "http_402", day=DAY1, payment_json=pay1),
         probe(u["same_address"], "http_402", day=DAY1, payment_json=pay1),
         probe(u["garbled_402"], "http_402", day=DAY1, payment_json=pay1),
         probe(u["leaves"], "ok", day=DAY1),
         probe(u["still_away"], "redirect", day=DAY1, redirect_location="https://mcp.elsewhere.net/mcp"),
         probe(u["same_site"], "ok", day=DAY1)],
        [probe(u["stops"], "timeout", day=DAY2), probe(u["starts"], "ok", day=DAY2),
         probe(u["signin"], "needs_auth", day=DAY2, http_status=401),
         probe(u["signin_again"], "needs_auth", day=DAY2),
         probe(u["paywall"], "http_402", day=DAY2, payment_json=pay1),
         probe(u["new_address"], "http_402", day=DAY2, payment_json=pay12),
         probe(u["same_address"], "http_402", day=DAY2, payment_json=pay1),
         probe(u["garbled_402"], "http_402", day=DAY2, payment_json="<html>pay us</html>"),
         probe(u["leaves"], "redirect", day=DAY2, redirect_location="https://mcp.elsewhere.net/mcp"),
         probe(u["still_away"], "redirect", day=DAY2, redirect_location="https://api.elsewhere.net/v2"),
         probe(u["same_site"], "redirect", day=DAY2, redirect_location="https://next.same_site.example.com/mcp"),
         probe(u["newcomer"], "timeout", day=DAY2)])

    def got(name):
        return sorted((r["kind"], r["detail"]) for r in found.get(server_key(u[name]), []))

    assert [k for k, _ in got("stops")] == ["stopped_answering"]
    assert [k for k, _ in got("starts")] == ["started_answering"]  # no list before: no tool kinds
    assert [k for k, _ in got("signin")] == ["now_asks_sign_in"]  # o -> a: still answering
    assert got("signin_again") == []
    assert got("paywall") == [("new_payment_address", "new payment address 0x1")]
    assert got("new_address") == [("new_payment_address", "new payment address 0x2")]
    assert got("same_address") == []
    assert got("garbled_402") == []  # a 402 body that is not JSON names no address
    assert [k for k, _ in got("leaves")] == ["redirects_other_domain", "stopped_answering"]
    assert got("still_away") == []  # already redirected to that domain
    assert [k for k, _ in got("same_site")] == ["stopped_answering"]  # a second hop within the domain
    assert got("newcomer") == []  # a first sighting is not a change
    status = {r["server_key"]: r for r in pq.read_table(lake.curated_file("daily_status", DAY2)).to_pylist()}
    assert status[server_key(u["new_address"])]["payment_addresses"] == ["0x1", "0x2"]
    assert status[server_key(u["garbled_402"])]["payment_addresses"] == []
    assert status[server_key(u["stops"])]["payment_addresses"] is None


def test_the_baseline_is_the_previous_checked_day_with_a_list(lake):
    url = "https://a.example.com/mcp"
    day3, day4 = DAY2 + dt.timedelta(days=1), DAY2 + dt.timedelta(days=2)
    land_probes(lake, [probe(url, "ok", day=DAY1, tools=BEFORE)], day=DAY1)
    build(lake, DAY1)
    land_probes(lake, [probe("https://other.example.com/mcp", "ok", day=DAY2)], day=DAY2)  # a is n on day 2
    build(lake, DAY2)
    land_probes(lake, [probe(url, "needs_auth", day=day3)], day=day3)
    build(lake, day3)
    land_probes(lake, [probe(url, "ok", day=day4, tools=BEFORE[:-1])], day=day4)
    build(lake, day4)
    (signin,) = changes(lake, day3)[server_key(url)]
    assert (signin["kind"], signin["previous_day"]) == ("now_asks_sign_in", DAY1)  # day 2 (n) is skipped
    (removed,) = changes(lake, day4)[server_key(url)]
    assert (removed["kind"], removed["tool_name"], removed["previous_day"]) == ("tool_removed", "update_record",
                                                                                 DAY1)


def test_a_baseline_older_than_60_days_is_no_baseline(lake):
    url = "https://a.example.com/mcp"
    late = DAY1 + dt.timedelta(days=61)
    land_probes(lake, [probe(url, "ok", day=DAY1, tools=BEFORE)], day=DAY1)
    build(lake, DAY1)
    land_probes(lake, [probe(url, "ok", day=late, tools=AFTER)], day=late)
    build(lake, late)
    assert changes(lake, late) == {}


def test_a_risk_method_change_is_never_reported_as_a_change_by_the_server(lake, tmp_path, monkeypatch, request):
    url, steady = "https://a.example.com/mcp", "https://b.example.com/mcp"
    land_probes(lake, [probe(url, "ok", day=DAY1, tools=BEFORE), probe(steady, "ok", day=DAY1, tools=BEFORE)],
                day=DAY1)
    build(lake, DAY1)
    day1_tools = {r["name"]: r["risk"] for r in pq.read_table(lake.curated_file("tools", DAY1)).to_pylist()}
    assert day1_tools["create_note"] == "yellow"

    make_creating_high_risk(tmp_path, monkeypatch, request)  # 7Maps changes its vocabulary

    after = [tool("create_note", "Create a note in the notebook."), *BEFORE[2:]]
    land_probes(lake, [probe(url, "ok", day=DAY2, tools=[BEFORE[0], *after]),
                       probe(steady, "ok", day=DAY2, tools=BEFORE)], day=DAY2)
    facts = build(lake, DAY2)
    assert facts.stats["new_lists"] == 2  # the new list, and the old one again under the new method
    rows = changes(lake)[server_key(url)]
    assert kinds(rows) == [("changing_tool_rewritten", "create_note"), ("tool_changed", "create_note")]
    rewritten = next(r for r in rows if r["kind"] == "changing_tool_rewritten")
    assert (rewritten["previous_risk"], rewritten["risk"]) == ("red", "red")  # not yellow -> red
    assert {r["method_version"] for r in rows} == {"changes-1.1+risk-9.9-test+o200k_base-1.1"}
    assert server_key(steady) not in changes(lake)


def test_changes_refuse_to_run_without_the_facts_they_compare(lake):
    url = "https://a.example.com/mcp"
    land_probes(lake, [probe(url, "ok", day=DAY1, tools=BEFORE)], day=DAY1)
    build(lake, DAY1)
    land_probes(lake, [probe(url, "ok", day=DAY2, tools=AFTER)], day=DAY2)
    curated.build_quarantine(lake, DAY2)
    curated.build_daily_status(lake, DAY2)
    with pytest.raises(FileNotFoundError, match="materialise tool_facts"):
        curated.build_tool_changes(lake, DAY2)


def test_a_tool_without_a_name_renamed_is_recorded_not_a_failed_day(lake):
    # A server may serve a tool without a name (kept as null) and then name it: the rename is recorded with the
    # name it lacked said in words, and the day's build does not stop on a null detail.
    url = "https://a.example.com/mcp"
    unnamed = {"description": "Search the docs.", "inputSchema": {"type": "object"}}
    rows = two_days(lake, [probe(url, "ok", day=DAY1, tools=[unnamed])],
                    [probe(url, "ok", day=DAY2, tools=[dict(unnamed, name="a")])])[server_key(url)]
    assert [(r["kind"], r["tool_name"], r["previous_tool_name"], r["detail"]) for r in rows] == [
        ("tool_renamed", "a", None, "(unnamed) renamed to a")]
