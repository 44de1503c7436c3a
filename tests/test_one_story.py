"""One story everywhere (issue 36, points 1 and 2): every published fact about a server is computed once and
read alike by the site, server_status, route, verify_lock and the warehouse's views, walked over every
endpoint of the demo; and the figures say what they count: an outage's "since" runs over missed days and
starts at the check that saw it, a server that only asked for payment says so beside its uptime, and the
reliable lists rank days answered with tools first."""

from __future__ import annotations

import datetime as dt
import html
import re
import xml.etree.ElementTree as ET

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import land_probes, land_registry, land_status, probe

from sevenmaps_pipeline.cli.common import terminal_safe
from sevenmaps_pipeline.cli.one_server import server_text
from sevenmaps_pipeline.curated.day import rebuild_day
from sevenmaps_pipeline.curated.open_day import build_open_day
from sevenmaps_pipeline.lake import keys as lake_keys
from sevenmaps_pipeline.lake.keys import server_key
from sevenmaps_pipeline.lake.parquet_io import write_parquet
from sevenmaps_pipeline.lake.paths import LakePaths
from sevenmaps_pipeline.lake.schemas import TOOL_CHANGES, conform
from sevenmaps_pipeline.publishing.live import render
from sevenmaps_pipeline.publishing.locks import changes_since, verify_lock, watch
from sevenmaps_pipeline.publishing.mapday import MapDay
from sevenmaps_pipeline.publishing.site import build_site, slug, uptime_text
from sevenmaps_pipeline.publishing.status import server_status, statuses, uptime_counts
from sevenmaps_pipeline.rules.methods import TOKENIZER_METHOD
from sevenmaps_pipeline.rules.tokens import definition_tokens
from sevenmaps_pipeline.surfaces.route import route


@pytest.fixture(scope="module")
def demo(fleet_demo_lake):
    """Every endpoint's server_status on the demo's newest day, read for the record as its site was built."""
    with MapDay.open(fleet_demo_lake, reviews=False) as mapday:
        yield fleet_demo_lake, mapday, statuses(mapday)


def page_text(lake: LakePaths, server_id: str) -> str:
    raw = (lake.root / "site" / "current" / "servers" / f"{server_id}.html").read_text()
    return html.unescape(re.sub(r"<[^>]+>", " ", raw))


def test_the_site_server_status_and_the_views_tell_one_story_for_every_demo_endpoint(demo):
    lake, mapday, by_key = demo
    assert len(by_key) >= 20
    with duckdb.connect(str(lake.warehouse), read_only=True) as con:
        views = {r[0]: r[1:] for r in con.execute(
            "SELECT d.server_key, d.shown_status, h.uptime_pct, h.success_chance, t.definition_tokens, "
            "(SELECT count(*) FROM latest_tools x WHERE x.server_key = d.server_key) "
            "FROM latest_daily_status d LEFT JOIN latest_server_history h USING (server_key) "
            "LEFT JOIN latest_token_cost t USING (server_key)").fetchall()}
        shown_now = dict(con.execute("SELECT server_key, current_shown_status FROM current_status").fetchall())
        ranks = {(r[0], r[1]): r[2] for r in con.execute(
            "SELECT category, server_id, rank FROM latest_reliable_rankings").fetchall()}
    down_list = (lake.root / "site" / "current" / "down.html").read_text()
    for key, s in by_key.items():
        history, tokens = s["history"] or {}, s["token_cost"] or {}
        shown, uptime, chance, definition_tokens, tool_rows = views[key]
        assert s["daily"]["shown_status"] == shown, key
        assert s["shown_status"] == shown_now[key], key
        assert history.get("uptime_pct") == uptime and history.get("success_chance") == chance, key
        assert tokens.get("definition_tokens") == definition_tokens and len(s["tools"]) == tool_rows, key
        page = page_text(lake, s["server_id"])
        assert f"Shown now: {s['shown_status']}" in page, key
        label, value = uptime_text(s["history"])
        assert f"{label}: {value}" in page, key
        if definition_tokens is not None:
            assert f"{definition_tokens} tokens" in page, key
        assert all(t["name"] in page for t in s["tools"]), key
        if s["uptime_counts"]:
            assert s["uptime_counts"] in page, key
        if s["shown_status"] == "down":
            assert s["down_since"] and html.escape(s["down_since"]) in down_list, key
        if s["daily"]["tools_hash"]:
            lock = verify_lock(mapday, key, s["daily"]["tools_hash"])
            assert lock["unchanged"] is True and lock["shown_status"] == s["shown_status"], key
    # (The demo's few days are too few for a reliable list: the rankings are held to the site in
    # test_since_runs_over_missed_days_... and tests/test_live_pages.py.)
    for (category, server_id), rank in ranks.items():
        listed = (lake.root / "site" / "current" / "categories" / f"{slug(category)}.html").read_text()
        assert f'<td>{rank}</td><td><a href="../servers/{server_id}.html"' in listed, (category, server_id)


def test_a_tool_list_is_one_token_figure_on_every_surface_and_the_estimate_says_it_is_one(demo):
    """Issue 36: on the demo's mcp.heavy.test the site, server_status and latest_token_cost said 14,449
    tokens, its readiness line 14,349 (the readiness probe counted its own answer, whose inputSchema keys came
    in another order than the daily check's) and the token_heavy finding 18,585 (size / 4). One list is one
    count wherever it is shown; the size / 4 estimate is always labelled as one."""
    lake, _, by_key = demo
    with duckdb.connect(str(lake.warehouse), read_only=True) as con:
        lines = dict(con.execute(
            "SELECT subject_key, evidence FROM latest_readiness_lines WHERE subject_kind = 'mcp' "
            "AND line = 'definition_tokens'").fetchall())
        # The list the readiness probe scored: its check of the map day (sql/readiness_checks.sql).
        scored = dict(con.execute(
            "SELECT server_key, arg_max(tools_hash, started_at) FROM readiness_checks "
            "WHERE day = (SELECT max(day) FROM latest_daily_status) GROUP BY server_key").fetchall())
    same_list, cut = 0, []
    for key, s in by_key.items():
        cost = s["token_cost"]
        if cost is None:
            continue
        assert cost["provisional"] is False and cost["tools_hash"] == s["daily"]["tools_hash"], key
        if scored.get(key) == cost["tools_hash"] and lines[key].startswith("the tool list was not read to its end"):
            cut.append(key)  # readiness shows no figure for part of a list (mcp-2026-09-11.4)
        elif scored.get(key) == cost["tools_hash"]:
            assert lines[key] == f"{cost['definition_tokens']:,} o200k_base tokens ({TOKENIZER_METHOD})", key
            same_list += 1
        page = page_text(lake, s["server_id"])
        assert f"{cost['definition_tokens']} tokens (o200k_base) for the tool list; " in page, key
        assert f"estimate {cost['tokens_estimate']} (size / 4)" in page, key
        for f in s["findings"]:
            if f["finding"] == "token_heavy":
                assert f["detail"] == f"tool list of about {cost['tokens_estimate']} tokens (size / 4)", key
                assert f["detail"] in page, key
    assert same_list >= 10 and cut == ["mcp.loop.test/mcp"]  # the demo's one list whose cursor repeats
    heavy = by_key["mcp.heavy.test/mcp"]["token_cost"]
    assert heavy["tool_count"] == 100 and heavy["definition_tokens"] < heavy["tokens_estimate"]


def test_route_gives_each_endpoints_figures_as_server_status_does_and_never_a_tool_twice(demo):
    _, mapday, by_key = demo
    for task in ("weather forecast", "search notes", "calendar events", "send email", "delete records"):
        answer = route(mapday, task, limit=20)
        seen = [(t["server_key"], t["tool"]) for t in answer["tools"]]
        assert len(seen) == len(set(seen)), (task, seen)
        for t in answer["tools"]:
            history = by_key[t["server_key"]]["history"] or {}
            assert (t["uptime_pct"], t["success_chance"], t["stability"]) == (
                history.get("uptime_pct"), history.get("success_chance"), history.get("stability"))
            assert t["tools_hash"] == by_key[t["server_key"]]["daily"]["tools_hash"]


DAY = dt.date(2026, 11, 20)


def tool(name: str, description: str) -> dict:
    return {"name": name, "description": description, "inputSchema": {"type": "object"}}


def test_since_runs_over_missed_days_and_a_payment_only_server_says_so_and_sign_in_days_rank_lower(tmp_path):
    lake = LakePaths.at(tmp_path / "lake")
    urls = {"down": "https://down.example.com/mcp", "pay": "https://pay.example.org/mcp",
            "always": "https://always.example.net/mcp", "signin": "https://signin.example.io/mcp"}
    keys = {name: server_key(url) for name, url in urls.items()}
    weather = [tool("get_weather", "Current weather for a city."), tool("get_forecast", "Weather forecast.")]
    for back in range(16, 0, -1):
        day = DAY - dt.timedelta(days=back)
        codes = {keys["down"]: "o" if back > 4 else ("n" if back == 2 else "d"), keys["pay"]: "p",
                 keys["always"]: "o", keys["signin"]: "a" if back <= 10 else "o"}
        land_status(lake, day, codes, handshake=dict.fromkeys(keys.values(), 200))
    land_probes(lake, [probe(urls["down"], "timeout", day=DAY),
                       probe(urls["pay"], "http_402", day=DAY, http_status=402),
                       probe(urls["always"], "ok", day=DAY, tools=weather),
                       probe(urls["signin"], "ok", day=DAY, tools=weather)], day=DAY)
    rebuild_day(lake, DAY)
    with MapDay.open(lake) as mapday:
        by_key = statuses(mapday)
        ranked = mapday.rows("SELECT server_key, rank, tools_days, answered_days FROM reliable_rankings "
                             "WHERE category = 'weather' ORDER BY rank")
    # Down since its first failed check four days back: the missed day (n) two days back does not end the run.
    since = by_key[keys["down"]]["down_since"]
    assert since is not None and since.startswith((DAY - dt.timedelta(days=4)).isoformat())
    build_site(lake, DAY)  # the server's page says it as the down list does (helper-100)
    assert f"Down since {since}" in page_text(lake, by_key[keys["down"]]["server_id"])
    assert "Down since" not in page_text(lake, by_key[keys["always"]]["server_id"])
    down_list = html.unescape((lake.root / "site" / "current" / "down.html").read_text())
    assert "1 server down now, ordered by name; 0 confirmed live incidents." in down_list  # its counts (helper-100)
    assert "never listed a tool" in by_key[keys["pay"]]["uptime_counts"]
    assert "payment" in by_key[keys["pay"]]["uptime_counts"]
    assert by_key[keys["always"]]["uptime_counts"] is None
    # Both answered every day, but one asked for sign-in on ten of them: it ranks below the one with tools.
    assert [(r["server_key"], r["rank"]) for r in ranked] == [(keys["always"], 1), (keys["signin"], 2)]


def test_days_of_an_empty_list_are_not_days_with_tools_in_the_reliable_order_or_beside_uptime(tmp_path):
    """reliable-1.3, history-1.2: an endpoint that answered every day but listed no tools on ten of them ranks
    below one that listed its tools every day, and its uptime says what it counted. The reliable list, on the
    site and live (site-1.4, live-pages-1.4), says and shows the key that parts them: their uptime, the key its
    words named before, is the same."""
    lake = LakePaths.at(tmp_path / "lake")
    urls = {"always": "https://always.example.net/mcp", "empty": "https://empty.example.io/mcp"}
    keys = {name: server_key(url) for name, url in urls.items()}
    weather = [tool("get_weather", "Current weather for a city."), tool("get_forecast", "Weather forecast.")]
    for back in range(16, 0, -1):
        land_status(lake, DAY - dt.timedelta(days=back), dict.fromkeys(keys.values(), "o"),
                    handshake=dict.fromkeys(keys.values(), 200),
                    tool_counts={keys["always"]: 2, keys["empty"]: 0 if back <= 10 else 2})
    land_probes(lake, [probe(urls["always"], "ok", day=DAY, tools=weather),
                       probe(urls["empty"], "ok", day=DAY, tools=weather)], day=DAY)
    rebuild_day(lake, DAY)
    with MapDay.open(lake) as mapday:
        by_key = statuses(mapday)
        ranked = mapday.rows("SELECT server_key, rank, tools_days, answered_days, method_version "
                             "FROM reliable_rankings WHERE category = 'weather' ORDER BY rank")
        caveat = route(mapday, "weather forecast", limit=5)
        live_list = render(mapday, "category", "weather").body.decode()
        printed = server_text(server_status(mapday, keys["empty"]))
    build_site(lake, DAY)
    site_list = (lake.root / "site" / "days" / DAY.isoformat() / "categories" / "weather.html").read_text()
    for page in (site_list, live_list):
        text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())
        assert f"ordered by the share of checked days answering with tools over the 30 days ending {DAY}" in text
        assert re.search(r"1 io\.test/always 17 of 17 checked days 100\.0% of 17 checked days 200 ms "
                         r"2 io\.test/empty 7 of 17 checked days 100\.0% of 17 checked days 200 ms", text), text
    assert [(r["server_key"], r["rank"], r["tools_days"], r["answered_days"]) for r in ranked] == [
        (keys["always"], 1, 17, 17), (keys["empty"], 2, 7, 17)]
    assert ranked[0]["method_version"].startswith("reliable-1.3+")
    said = ("listed tools on 7 of its 17 answered days; on the others its tool list was empty, which uptime "
            "and success chance count as answers")
    assert by_key[keys["empty"]]["uptime_counts"] == said
    assert by_key[keys["always"]]["uptime_counts"] is None
    assert said in str(caveat) and caveat["method_version"].startswith("route-1.7+")
    assert f"uptime and success chance count answers: this server {said}" in printed  # `sevenmaps server`


@pytest.mark.parametrize(("history", "said"), [
    ({"answered_days": 20, "ok_days": 20, "tools_days": 20, "history": "o" * 20}, None),
    ({"answered_days": 20, "ok_days": 20, "tools_days": 0, "history": "o" * 20},
     "never listed a tool in the window: it answered on 20 days only with an empty tool list; uptime and success "
     "chance count those answers"),
    ({"answered_days": 20, "ok_days": 12, "tools_days": 0, "history": "o" * 12 + "a" * 8},
     "never listed a tool in the window: it answered on 20 days: 12 with an empty tool list and 8 by asking for "
     "sign-in; uptime and success chance count those answers"),
    ({"answered_days": 20, "ok_days": 12, "tools_days": 9, "history": "o" * 12 + "ap" * 4},
     "listed tools on 9 of its 20 answered days; on the others its tool list was empty on 3 and it asked for "
     "sign-in or payment on 8, which uptime and success chance count as answers"),
    ({"answered_days": 20, "ok_days": 12, "tools_days": 12, "history": "o" * 12 + "p" * 8},
     "listed tools on 12 of its 20 answered days; on the others it asked for payment, which uptime and success "
     "chance count as answers"),
    # One day is a day, and one other day is the other (the words once said "on 1 days" and "on the others").
    ({"answered_days": 1, "ok_days": 0, "tools_days": 0, "history": "n" * 29 + "p"},
     "never listed a tool in the window: it answered on 1 day only by asking for payment; uptime and success "
     "chance count that answer"),
    ({"answered_days": 1, "ok_days": 1, "tools_days": 0, "history": "d" * 29 + "o"},
     "never listed a tool in the window: it answered on 1 day only with an empty tool list; uptime and success "
     "chance count that answer"),
    ({"answered_days": 2, "ok_days": 2, "tools_days": 1, "history": "oo"},
     "listed tools on 1 of its 2 answered days; on the other its tool list was empty, which uptime and success "
     "chance count as an answer"),
    # A row of history-1.1 kept no days with tools: its o days are taken as they were then counted.
    ({"answered_days": 20, "ok_days": 12, "history": "o" * 12 + "a" * 8},
     "listed tools on 12 of its 20 answered days; on the others it asked for sign-in, which uptime and success "
     "chance count as answers"),
])
def test_uptime_counts_names_each_kind_of_answer_that_listed_no_tools(history, said):
    assert uptime_counts(history) == said


def test_a_list_shown_from_todays_check_has_its_own_token_cost_on_server_status_and_the_live_page(tmp_path):
    """A live answer shows an endpoint's tools from its check since the map day when it listed tools: the
    token cost beside them is that list's (the map's count of it, provisional), never the map day's list's."""
    lake = LakePaths.at(tmp_path / "lake")
    url = "https://forecast.example.com/mcp"
    before = [tool("get_forecast", "Weather forecast.")]
    today = before + [tool("delete_forecast", "Delete a saved forecast and every alert set on it for good.")]
    days = [DAY - dt.timedelta(days=2), DAY - dt.timedelta(days=1)]
    for day in days:
        land_probes(lake, [probe(url, "ok", day=day, tools=before)], day=day)
        rebuild_day(lake, day)
    land_probes(lake, [probe(url, "ok", day=DAY, hour=3, tools=today)], day=DAY, run_id="slice-03")
    build_open_day(lake, DAY, f"{DAY.isoformat()}-03:00")
    key = server_key(url)
    with MapDay.open(lake, reviews=False) as record:
        signed = statuses(record)[key]
    with MapDay.open(lake, reviews=False, live=True) as live:
        shown = statuses(live)[key]
        rendered = render(live, "server", shown["server_id"])
        assert rendered is not None
        page = html.unescape(re.sub(r"<[^>]+>", " ", rendered.body.decode()))
    assert signed["token_cost"]["provisional"] is False and signed["token_cost"]["day"] == days[-1].isoformat()
    assert signed["token_cost"]["definition_tokens"] == definition_tokens(before)
    assert shown["tools_from"].startswith("the open day's check") and len(shown["tools"]) == 2
    # Its findings, category and stability are the map day's list's, and say so (helper-94).
    assert shown["list_facts_from"] == (f"the map day's list ({days[-1]}), not the list shown: today's check listed "
                                        "another, whose findings, category and stability come with its day's map")
    assert signed["list_facts_from"] == "the list shown"
    assert f"Findings, category and tool-list stability describe {shown['list_facts_from']}." in page  # live
    cost = shown["token_cost"]
    assert (cost["provisional"], cost["day"], cost["tools_hash"]) == (True, DAY.isoformat(),
                                                                      shown["open_day_check"]["tools_hash"])
    assert cost["definition_tokens"] == definition_tokens(today) > definition_tokens(before)
    assert (cost["tool_count"], cost["tokens_estimate"]) == (2, shown["open_day_check"]["tokens_estimate"])
    assert cost["definition_tokens_percentile"] == 1.0  # dearer than the map day's one endpoint
    assert f"{cost['definition_tokens']} tokens (o200k_base) for the tool list of the open day's check" in page


def test_down_since_reaches_past_the_window_to_its_change_record_and_starts_at_the_first_day_shown_down(tmp_path):
    """helper-94: a run of d days filling the 30 days read said "since" their first, beside the record of the day it
    stopped answering five days earlier; days shown "answers, but not as a standard MCP endpoint" (a 405) started a
    run, though no down list had shown them; and the warehouse's failing_since was set for an endpoint not shown
    down."""
    lake = LakePaths.at(tmp_path / "lake")
    urls = {"long": "https://long.example.com/mcp", "shifty": "https://shifty.example.org/mcp",
            "odd": "https://odd.example.net/mcp", "again": "https://again.example.io/mcp"}
    keys = {name: server_key(url) for name, url in urls.items()}
    stopped, first_read = DAY - dt.timedelta(days=35), DAY - dt.timedelta(days=29)
    for back in range(30, 0, -1):  # the 30 days read: long down all of them; shifty a 405, then down two days back
        day = DAY - dt.timedelta(days=back)
        land_status(lake, day, {keys["long"]: "d", keys["shifty"]: "o" if back > 6 else "d", keys["odd"]: "d",
                                keys["again"]: "o" if back > 29 else "d"},
                    not_mcp=frozenset({keys["odd"]} | ({keys["shifty"]} if back > 2 else set())))
    # again: stopped 50 days back, answered again 45 back, stopped on the first day read (helper-98: an older stop)
    for key, kind, back in ((keys["long"], "stopped_answering", 35), (keys["again"], "stopped_answering", 50),
                            (keys["again"], "started_answering", 45), (keys["again"], "stopped_answering", 29)):
        day = DAY - dt.timedelta(days=back)
        row = {"day": day, "server_key": key, "server_id": lake_keys.server_id(key), "kind": kind, "detail": kind,
               "method_version": "test", "previous_day": day - dt.timedelta(days=1)}
        path = lake.curated_file("tool_changes", day)
        rows = [*(pq.read_table(path).to_pylist() if path.is_file() else []), row]
        path.unlink(missing_ok=True)
        write_parquet(lake, path, conform(pa.Table.from_pylist(rows, TOOL_CHANGES.schema), TOOL_CHANGES))
    land_probes(lake, [probe(urls["long"], "timeout", day=DAY), probe(urls["shifty"], "timeout", day=DAY),
                       probe(urls["odd"], "http_405", day=DAY, http_status=405),
                       probe(urls["again"], "timeout", day=DAY)], day=DAY)
    rebuild_day(lake, DAY)
    with MapDay.open(lake) as mapday:
        by_key = statuses(mapday)
        failing = {r["server_key"]: r["failing_since"] for r in mapday.rows(
            "SELECT server_key, failing_since FROM current_status")}
    assert by_key[keys["long"]]["down_since"] == stopped.isoformat()  # its change record's day, not the window's
    assert by_key[keys["shifty"]]["down_since"].startswith((DAY - dt.timedelta(days=2)).isoformat())  # not the 405
    assert by_key[keys["odd"]]["down_since"] is None  # never shown down: on no down list
    assert by_key[keys["again"]]["down_since"] == first_read.isoformat()  # its latest stop, on the first day read
    assert failing[keys["odd"]] is None and failing[keys["long"]] is not None


def test_a_hostile_name_reads_the_same_on_the_site_the_live_pages_the_feed_and_the_command_line(tmp_path):
    """helper-94 F6: a registry name holding U+202E rendered reversed on the site's pages and in the feed ("...exe.png")
    while `sevenmaps server` showed its code, and a tool's vertical tab was U+FFFD in the feed but a raw control on
    the pages. One rule now (publishing/shown.py, docs/agents.md "Pages"): each character that is not printable is
    shown as its code on every surface people read, and each name on a page stands in its own <bdi>. The MCP
    server's answers keep the raw strings: agents read data."""
    lake = LakePaths.at(tmp_path / "lake")
    url = "https://evil.example.com/mcp"
    name, joined, tabbed = "io.github.acme/\u202egnp.exe", "get_\u200bweather", "delete\x0bfiles"
    for back, tools in ((1, [tool(joined, "Current weather.")]),
                        (0, [tool(joined, "Current weather.\nFor a city."), tool(tabbed, "Delete every file.")])):
        day = DAY - dt.timedelta(days=back)
        land_registry(lake, [url], day=day, names=[name])
        land_probes(lake, [probe(url, "ok", day=day, tools=tools, server_name=name)], day=day)
        rebuild_day(lake, day)
    build_site(lake, DAY)
    with MapDay.open(lake, live=True) as mapday:
        s = server_status(mapday, server_key(url))
        live_page = render(mapday, "server", s["server_id"]).body.decode()
        live_feed = render(mapday, "watch", None).body.decode()
    assert s["server_name"] == name and [t["name"] for t in s["tools"]] == [joined, tabbed]  # raw for agents
    site = lake.root / "site" / "current"
    page, index, down = ((site / p).read_text() for p in (f"servers/{s['server_id']}.html", "index.html", "down.html"))
    feed = (site / "feeds" / "watch.xml").read_text()
    cli = "\n".join(terminal_safe(line) for line in server_text(s))
    seen_name, seen_joined, seen_tabbed = "io.github.acme/\\u202egnp.exe", "get_\\u200bweather", "delete\\x0bfiles"
    for text in (page, live_page, index, down, feed, live_feed, cli):
        assert not {"\u202e", "\u200b", "\x0b", "\ufffd"} & set(text)
    for text in (page, live_page):
        assert f"<title>{seen_name} · 7Maps" in text and f"<h1><bdi>{seen_name}</bdi></h1>" in text
        assert all(f"<strong><bdi>{seen}</bdi></strong>" in text for seen in (seen_joined, seen_tabbed))
        assert "<bdi>Current weather.\nFor a city.</bdi>" in text  # a description's line break is white space
        assert f"<td><bdi>{seen_tabbed} added as red</bdi></td>" in text  # a change's detail quoting the name
    assert f"<bdi>{seen_name}</bdi></a>" in index and f'alt="status badge of {seen_name}"' in index
    atom = {"a": "http://www.w3.org/2005/Atom"}
    for text in (feed, live_feed):
        titles = [t.text for t in ET.fromstring(text.encode()).findall("a:entry/a:title", atom)]
        assert f"{seen_name}: risk_rise {seen_tabbed}" in titles
    assert f"{seen_name}  (server_id {s['server_id']})" in cli and f"  {seen_joined}  green" in cli
    assert f"  {seen_tabbed}  red" in cli


def test_a_cut_list_of_changes_says_of_how_many_on_every_surface(tmp_path):
    """helper-94 F7: a list of 120 tools renamed in one day is 120 change records; server_status and the server's
    page listed 100 and said nothing, `sevenmaps server` said "20 of 100". Each now says the true total."""
    lake = LakePaths.at(tmp_path / "lake")
    url, few = "https://many.example.com/mcp", "https://few.example.com/mcp"
    for back, verb in ((1, "get"), (0, "read")):
        day = DAY - dt.timedelta(days=back)
        listed = [tool(f"{verb}_{i:03}", f"Read record {i}.") for i in range(120)]
        land_probes(lake, [probe(url, "ok", day=day, tools=listed),
                           probe(few, "ok", day=day, tools=[tool(f"{verb}_note", "Read a note.")])], day=day)
        rebuild_day(lake, day)
    build_site(lake, DAY)
    with MapDay.open(lake, live=True) as mapday:
        s, other = server_status(mapday, server_key(url)), server_status(mapday, server_key(few))
        live_page = render(mapday, "server", s["server_id"]).body.decode()
        every = changes_since(mapday, url, DAY - dt.timedelta(days=1))
    assert every["total"] == 120 and not every["truncated"]  # the MCP server's changes_since has them all
    assert (len(s["changes"]), s["changes_total"]) == (100, 120)
    assert [c["tool_name"] for c in s["changes"]] == [c["tool_name"] for c in every["changes"][:100]]  # the newest
    assert (len(other["changes"]), other["changes_total"]) == (1, 1)
    site = lake.root / "site" / "current" / "servers"
    for page in ((site / f"{s['server_id']}.html").read_text(), live_page):
        assert "Showing the newest 100 of 120 changes" in page
        assert page.split("Changes (last 60 days)")[1].split("<h2>")[0].count("<tr><td>") == 100
    assert "Showing the newest" not in (site / f"{other['server_id']}.html").read_text()
    assert "changes, newest first (20 of 120):" in server_text(s)
    assert "changes, newest first (1 of 1):" in server_text(other)


def test_the_live_feed_is_updated_when_its_newest_entry_is_and_a_provisional_entry_says_so(tmp_path):
    """helper-94 F16: the live watch feed said <updated> the map day's start while its entries were of the open day,
    and its entries did not say they were provisional where the MCP server's `watch` says `provisional: true`."""
    lake = LakePaths.at(tmp_path / "lake")
    url = "https://files.example.com/mcp"
    before = [tool("get_file", "Read a file.")]
    for back in (2, 1):
        land_probes(lake, [probe(url, "ok", day=DAY - dt.timedelta(days=back), tools=before)],
                    day=DAY - dt.timedelta(days=back))
        rebuild_day(lake, DAY - dt.timedelta(days=back))
    build_site(lake, DAY - dt.timedelta(days=1))
    today = before + [tool("delete_file", "Delete a file for good.")]
    land_probes(lake, [probe(url, "ok", day=DAY, hour=3, minute=20, tools=today)], day=DAY, run_id="slice-03")
    build_open_day(lake, DAY, f"{DAY.isoformat()}-03:00")
    with MapDay.open(lake, live=True) as mapday:
        watched = watch(mapday, days=7)
        last_check = dt.datetime.fromisoformat(mapday.served()["open_day"]["last_check_at"])
        live = ET.fromstring(render(mapday, "watch", None).body)
    assert [(e["day"], e["kind"], e["provisional"]) for e in watched["entries"]] == [(DAY.isoformat(), "risk_rise",
                                                                                       True)]
    atom = {"a": "http://www.w3.org/2005/Atom"}
    entry = live.find("a:entry", atom)
    entry_updated = dt.datetime.fromisoformat(entry.find("a:updated", atom).text)
    assert entry_updated == last_check.replace(microsecond=0) and entry_updated.date() == DAY
    assert dt.datetime.fromisoformat(live.find("a:updated", atom).text) == entry_updated  # the newest entry's time
    assert entry.find("a:title", atom).text == "io.test/files: risk_rise delete_file (provisional)"
    assert entry.find("a:summary", atom).text.startswith(f"delete_file added as red (provisional: the checks of {DAY}")
    # The signed day's feed (its site) has no provisional entry and is updated at its day's start.
    site = ET.fromstring((lake.root / "site" / "current" / "feeds" / "watch.xml").read_bytes())
    assert site.find("a:updated", atom).text == f"{DAY - dt.timedelta(days=1)}T00:00:00+00:00"
    assert "provisional" not in ET.tostring(site, encoding="unicode")
