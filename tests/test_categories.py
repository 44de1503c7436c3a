"""Server categories: the Agent-Ready directory's tool-name rule at its edges, the 20-identical-toolsets exclusion,
generic words, the 7Maps words rule, and 'other'."""

from __future__ import annotations

import datetime as dt
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import DAY, land_probes, probe

from sevenmaps_pipeline import curated
from sevenmaps_pipeline.curated.categories import other_senses_pattern, word_forms
from sevenmaps_pipeline.curated.tool_tables import CATEGORIES, listing_text_table
from sevenmaps_pipeline.lake.keys import server_id, server_key
from sevenmaps_pipeline.lake.parquet_io import write_parquet
from sevenmaps_pipeline.lake.schemas import RAW_REGISTRY, conform
from sevenmaps_pipeline.registry.client import rows_for_entry


def t(name, description=""):
    return {"name": name, "description": description, "inputSchema": {"type": "object"}}


def land_listings(lake, listings: dict[str, tuple[str, str]]):
    """Registry entries (name, description) for `<key>.example.com/mcp`."""
    rows = []
    for key, (name, description) in listings.items():
        url = f"https://{key}.example.com/mcp"
        entry = {"server": {"name": name, "description": description, "version": "1.0.0",
                            "remotes": [{"type": "streamable-http", "url": url}]}}
        rows.append({"day": DAY, "server_name": name, "server_version": "1.0.0", "status": "active",
                     "remote_type": "streamable-http", "url": url, "server_key": server_key(url),
                     "server_id": server_id(server_key(url)), "listing": "probe", "entry_json": json.dumps(entry)})
    write_parquet(lake, lake.registry_file(DAY), conform(pa.Table.from_pylist(rows, RAW_REGISTRY.schema), RAW_REGISTRY))


def categories(lake, lists: dict[str, list[dict]], listings: dict[str, tuple[str, str]] | None = None):
    if listings:
        land_listings(lake, listings)
    land_probes(lake, [probe(f"https://{key}.example.com/mcp", "ok", tools=tools) for key, tools in lists.items()])
    curated.build_quarantine(lake, DAY)
    curated.build_daily_status(lake, DAY)
    curated.build_tool_facts(lake, DAY)
    curated.build_tools(lake, DAY)
    curated.build_server_categories(lake, DAY)
    rows = pq.read_table(lake.curated_file("server_categories", DAY)).to_pylist()
    return {r["server_key"].split(".")[0]: r for r in rows}


TRAVEL3 = [t("book_flight"), t("find_hotel"), t("cancel_trip")]


def test_tool_name_rule_at_its_edges(lake):
    cats = categories(lake, {
        "three": TRAVEL3 + [t("ping")] * 0,
        "two": [t("book_flight"), t("find_hotel"), t("ping")],
        "not_twice": TRAVEL3 + [t("pay_invoice"), t("get_bank_balance")],      # 3 travel vs 2 finance
        "twice": TRAVEL3 + [t("pay_invoice")],                                 # 3 vs 1
        "under_quarter": TRAVEL3 + [t(f"misc_{i}") for i in range(10)],       # 3 of 13 < 1/4
        "quarter": TRAVEL3 + [t(f"misc_{i}") for i in range(9)],              # 3 of 12 = 1/4
    })
    assert (cats["three"]["category"], cats["three"]["placed_by"]) == ("travel", "tool_names")
    assert cats["three"]["evidence"] == ["flight", "hotel", "trip"]
    assert cats["two"]["placed_by"] != "tool_names"
    assert cats["not_twice"]["placed_by"] != "tool_names"
    assert (cats["twice"]["category"], cats["twice"]["placed_by"]) == ("travel", "tool_names")
    assert cats["under_quarter"]["placed_by"] != "tool_names"
    assert cats["quarter"]["placed_by"] == "tool_names"


def test_toolsets_that_20_endpoints_list_identically_are_dropped_first(lake):
    shared = TRAVEL3
    lists = {f"gateway{i}": shared for i in range(20)}
    lists["own"] = [t("book_flight_ticket"), t("search_hotel_rooms"), t("plan_trip_route")]
    cats = categories(lake, lists)
    assert all(cats[f"gateway{i}"]["placed_by"] != "tool_names" for i in range(20))
    assert cats["own"]["placed_by"] == "tool_names"


def test_19_identical_lists_still_count(lake):
    cats = categories(lake, {f"same{i}": TRAVEL3 for i in range(19)})
    assert {c["placed_by"] for c in cats.values()} == {"tool_names"}


def test_generic_words_never_name_a_topic(lake):
    # "search", "get", "list" are generic; "order" names shopping only through a real word
    cats = categories(lake, {"generic": [t("search"), t("get_list"), t("list_all")]})
    assert (cats["generic"]["category"], cats["generic"]["placed_by"]) == ("other", "none")


def test_words_rule_reads_descriptions_and_other_when_nothing_matches(lake):
    cats = categories(lake, {
        "weather": [t("lookup", "Weather forecast and rain alerts for a city.")],
        "tie": [t("lookup", "Video about an invoice."), t("other_thing", "Music and a bank.")],
        "blank": [t("frobnicate", "Does a thing.")],
    })
    assert (cats["weather"]["category"], cats["weather"]["placed_by"]) == ("weather", "words")
    assert cats["tie"]["category"] == "other"  # two topics with two words each: no winner
    assert (cats["blank"]["category"], cats["blank"]["placed_by"]) == ("other", "none")
    assert {c["method_version"] for c in cats.values()} == {"categories-1.7"}


def test_the_tools_verdict_wins_over_one_registry_word(lake):
    # Issue 37 point 4: one topic word in the registry text ("Recipes") no longer files travel tools under food.
    cats = categories(lake, {"flights": TRAVEL3, "repeat": TRAVEL3, "plain": TRAVEL3, "ns": [t("lookup")]},
                      listings={
        "flights": ("io.github.acme/thing", "Recipes for the week."),
        "repeat": ("io.github.acme/recipes", "Recipes, recipes and more recipes."),  # one word, said four times
        "plain": ("io.github.acme/thing", "A server."),
        "ns": ("io.github.weather/x", "A server."),  # the namespace is not the server's name
    })
    flights = cats["flights"]
    assert (flights["category"], flights["placed_by"], flights["decision"]) == ("travel", "tool_names", "tools_win")
    assert flights["evidence"] == ["flight", "hotel", "trip"]
    # both verdicts are kept, each with its words
    assert (flights["registry_category"], flights["registry_entries"], flights["registry_evidence"]) == (
        "food_and_delivery", 1, ["recipes"])
    assert (flights["tools_category"], flights["tools_rule"], flights["tools_evidence"]) == (
        "travel", "tool_names", ["flight", "hotel", "trip"])
    assert (cats["repeat"]["category"], cats["repeat"]["decision"]) == ("travel", "tools_win")
    assert cats["repeat"]["registry_score"] == 4 and cats["repeat"]["registry_entries"] == 1
    assert (cats["plain"]["category"], cats["plain"]["decision"]) == ("travel", "tools_only")
    assert cats["plain"]["registry_category"] is None
    assert (cats["ns"]["category"], cats["ns"]["decision"]) == ("other", "none")


def test_the_registry_text_keeps_its_verdict_with_two_words_of_its_topic(lake):
    cats = categories(lake, {"food": TRAVEL3, "agree": TRAVEL3, "summary": [t("lookup")]}, listings={
        "food": ("io.github.acme/recipe-box", "Recipes and meal plans for the week."),
        "agree": ("io.github.acme/trip-planner", "Plan a trip."),
        "summary": ("io.github.acme/thing", "Weather for your city."),
    })
    food = cats["food"]
    assert (food["category"], food["placed_by"], food["decision"]) == (
        "food_and_delivery", "name_and_summary", "registry_two_words")
    assert food["evidence"] == food["registry_evidence"] == ["meal", "recipe", "recipes"]
    assert food["registry_entries"] == 2
    assert (food["tools_category"], food["tools_evidence"]) == ("travel", ["flight", "hotel", "trip"])
    assert (cats["agree"]["category"], cats["agree"]["placed_by"], cats["agree"]["decision"]) == (
        "travel", "name_and_summary", "agree")
    assert (cats["summary"]["category"], cats["summary"]["decision"]) == ("weather", "registry_only")


def test_plural_topic_words_and_words_ending_in_s_match_as_written(lake):
    cats = categories(lake, {
        "news": [t("headlines", "Latest news from newsrooms"), t("top_news", "Breaking news")],
        "teams": [t("post", "Post to Microsoft Teams channels"), t("teams_chat", "Chat in Teams")],
        "flights": [t("book_flights"), t("find_hotels"), t("cancel_trips")],
    })
    assert cats["news"]["category"] == "search_and_web" and "news" in cats["news"]["evidence"]
    assert cats["teams"]["category"] == "communication" and "teams" in cats["teams"]["evidence"]
    assert (cats["flights"]["category"], cats["flights"]["placed_by"]) == ("travel", "tool_names")


def test_two_word_entries_match_and_word_forms_are_exact():
    assert "new" not in word_forms("news") and "team" not in word_forms("teams")  # never stripped
    assert word_forms("real estate") == {"real_estate", "real_estates"}
    assert word_forms("property") == {"property", "properties"}


def test_a_two_word_topic_entry_places_a_server(lake, tmp_path, monkeypatch):
    from sevenmaps_pipeline.curated import tool_tables

    doc = json.loads(tool_tables.CATEGORIES.read_text())
    doc["topics"]["finance"].append("credit score")
    path = tmp_path / "categories.json"
    path.write_text(json.dumps(doc))
    monkeypatch.setattr(tool_tables, "CATEGORIES", path)
    cats = categories(lake, {"credit": [t("credit_score_check", "Your credit score"), t("credit_score_history")]})
    assert cats["credit"]["category"] == "finance" and cats["credit"]["evidence"] == ["credit_score"]


def test_a_topic_word_in_another_sense_counts_for_no_topic(lake):
    """categories-1.4: a LINE rich menu or an app's context menu is not a restaurant's menu (assets/categories.json
    other_senses); a restaurant's menu still is."""
    cats = categories(lake, {
        "line": [t("create_rich_menu", "Create a rich menu for the official account"), t("delete_rich_menu"),
                 t("set_rich_menu_image"), t("richMenuList", "Rich menus rich menus of the account"),
                 t("push_text_message", "Push a text message to a user"), t("broadcast_message", "Send a message")],
        "desktop": [t("open_context_menu", "Open the context menu"), t("click_menu_bar", "Click the menu-bar"),
                    t("list_windows"), t("menus_context", "Context menus")],
        "diner": [t("get_menu", "Today's menu at the restaurant"), t("list_menus"), t("order_meal", "A meal")],
    })
    assert (cats["line"]["category"], cats["line"]["placed_by"]) == ("communication", "words")
    assert "menu" not in cats["line"]["tools_evidence"]
    assert cats["desktop"]["category"] != "food_and_delivery"
    assert cats["diner"]["category"] == "food_and_delivery" and "menu" in cats["diner"]["evidence"]


def test_other_senses_are_plain_words_and_none_matches_nothing():
    assert other_senses_pattern({"other_senses": []}) == "(^)(a^)($)"
    assert "context[^a-z0-9]+(?:menu|menus)" in other_senses_pattern({"other_senses": ["context menu"]})
    with pytest.raises(ValueError, match="other_senses: 'menu.*' is not plain words"):
        other_senses_pattern({"other_senses": ["menu.*"]})


def test_shared_tools_inside_differing_toolsets_still_count(lake):
    # The Agent-Ready rule drops whole toolsets listed identically by >= 20 servers, not single tools they share.
    lists = {f"gw{i}": TRAVEL3 + [t(f"own_tool_{i}")] for i in range(20)}
    cats = categories(lake, lists)
    assert {c["placed_by"] for c in cats.values()} == {"tool_names"}


def test_a_brand_name_is_one_word_however_it_is_capitalised(lake):
    """categories-1.5: a camelCase word that is a topic word as written ("GitLab", "YouTube") counts once, as
    itself, not as its parts ("git" + "lab"); any other camelCase word still counts as its parts."""
    listings = {"gl_lower": ("io.x/foo", "gitlab pipelines"), "gl_camel": ("io.x/foo", "GitLab pipelines"),
                "yt_lower": ("io.x/foo", "youtube videos"), "yt_camel": ("io.x/foo", "YouTube videos"),
                "gh": ("io.x/foo", "GitHub issues and pull requests"), "split": ("io.x/foo", "MealPlanner recipes")}
    cats = categories(lake, {k: TRAVEL3 for k in listings} | {"camel_tools": [
        t("bookFlight"), t("findHotel"), t("cancelTrip")]}, listings)
    for lower, camel in (("gl_lower", "gl_camel"), ("yt_lower", "yt_camel")):
        assert cats[lower]["decision"] == cats[camel]["decision"] == "registry_two_words"
        assert cats[camel]["registry_score"] == cats[lower]["registry_score"] == 2
        assert cats[camel]["registry_evidence"] == cats[lower]["registry_evidence"]
    assert cats["gl_camel"]["registry_evidence"] == ["gitlab", "pipelines"]
    assert cats["gh"]["registry_evidence"] == ["github", "issues", "pull"] and cats["gh"]["registry_entries"] == 3
    assert (cats["split"]["decision"], cats["split"]["registry_evidence"]) == (
        "registry_two_words", ["meal", "recipes"])
    assert (cats["camel_tools"]["category"], cats["camel_tools"]["placed_by"]) == ("travel", "tool_names")


def test_an_endpoint_with_an_empty_tool_list_keeps_its_registry_verdict(lake):
    """categories-1.5: an empty tool list (code o, no tools) is a tool list with no tools' verdict: the endpoint
    has its row, placed by the registry text alone."""
    cats = categories(lake, {"empty": [], "blank": [], "flights": TRAVEL3}, listings={
        "empty": ("io.x/recipes", "Recipes and meal plans"), "blank": ("io.x/thing", "A server."),
        "flights": ("io.x/recipes", "Recipes and meal plans")})
    empty = cats["empty"]
    assert (empty["category"], empty["placed_by"], empty["decision"]) == (
        "food_and_delivery", "name_and_summary", "registry_only")
    assert (empty["registry_evidence"], empty["registry_entries"]) == (["meal", "recipes"], 2)
    assert (empty["tools_category"], empty["tools_rule"], empty["tools_evidence"], empty["tool_count"]) == (
        None, None, None, 0)
    assert (cats["blank"]["category"], cats["blank"]["decision"], cats["blank"]["tool_count"]) == ("other", "none", 0)
    assert cats["flights"]["decision"] == "registry_two_words" and cats["flights"]["tool_count"] == 3



def test_a_word_and_its_plural_count_alike_generic_or_not(lake):
    """categories-1.5: `api` and `query` are generic, plurals too (assets/categories.json): no topic word is a
    generic word in any of its forms, so the singular never counts less than the plural."""
    doc = json.loads(CATEGORIES.read_text())
    generic = set(doc["generic_words"])
    both = sorted((w, f) for ws in doc["topics"].values() for w in ws for f in word_forms(w) if f in generic)
    assert not both, f"topic words that are also generic words: {both}"
    cats = categories(lake, {k: TRAVEL3 for k in ("api", "apis", "query", "queries")}, listings={
        "api": ("io.x/foo", "API code"), "apis": ("io.x/foo", "APIs code"),
        "query": ("io.x/foo", "SQL query"), "queries": ("io.x/foo", "SQL queries")})
    for one, many in (("api", "apis"), ("query", "queries")):
        assert (cats[one]["decision"], cats[one]["registry_evidence"]) == (
            cats[many]["decision"], cats[many]["registry_evidence"])
    assert (cats["apis"]["decision"], cats["apis"]["registry_evidence"]) == ("tools_win", ["code"])


def test_an_endpoint_listed_under_several_names_is_placed_by_the_words_of_one_listing(lake):
    """categories-1.6: the registry text of an endpoint several listings name is that of the listing its day row
    names it by (status-1.4: here, the first active by name), name, title and description together, whatever the
    registry's order; under 1.5 each was any listing's."""
    url = "https://multi.example.com/mcp"
    listings = [("z.vendor/weather", "active", "Weather forecasts and weather alerts for any city."),
                ("a.vendor/recipes", "deprecated", "Recipes, cooking and meal plans."),
                ("m.vendor/travel", "active", "Travel: book a flight, a hotel and a trip.")]
    for order in (listings, listings[::-1]):
        rows = [{"day": DAY, "server_name": name, "server_version": "1.0.0", "status": status,
                 "remote_type": "streamable-http", "url": url, "server_key": server_key(url),
                 "server_id": server_id(server_key(url)), "listing": "probe",
                 "entry_json": json.dumps({"server": {"name": name, "description": description, "version": "1.0.0",
                                                      "remotes": [{"type": "streamable-http", "url": url}]}})}
                for name, status, description in order]
        write_parquet(lake, lake.registry_file(DAY),
                      conform(pa.Table.from_pylist(rows, RAW_REGISTRY.schema), RAW_REGISTRY))
        (text,) = listing_text_table(lake, DAY).column("text").to_pylist()
        assert text == "travel Travel: book a flight, a hotel and a trip.", order


def test_the_listing_an_endpoint_is_named_by_gives_its_text_even_when_its_entry_was_cut(lake):
    """categories-1.7: the registry client keeps at most 100,000 characters of an entry (registry/client.py), so a
    long entry is stored as JSON that no longer parses. Under 1.6 such a listing was dropped before the listing
    was chosen, so an endpoint named by it on its day row (sql/daily_status.sql) took another listing's text;
    now it keeps its own listing's name, with no title or description, and so does an endpoint no listing of which
    parses (1.6: no registry text at all)."""
    url, alone = "https://multi.example.com/mcp", "https://alone.example.com/mcp"
    now = dt.datetime.combine(DAY, dt.time(), dt.UTC)
    entries = [("a.vendor/travel", url, "Long." + " x" * 50_000), ("z.vendor/weather", url, "Weather forecasts."),
               ("b.vendor/recipes", alone, "Recipes." + " x" * 50_000)]
    rows = [row for name, address, description in entries
            for row in rows_for_entry({"server": {"name": name, "description": description, "version": "1.0.0",
                                                  "remotes": [{"type": "streamable-http", "url": address}]}},
                                      DAY, now, host_map={"multi.example.com": 1, "alone.example.com": 2})]
    assert [(r["listing"], len(r["entry_json"])) for r in rows][::2] == [("probe", 100_000), ("probe", 100_000)]
    write_parquet(lake, lake.registry_file(DAY), conform(pa.Table.from_pylist(rows, RAW_REGISTRY.schema), RAW_REGISTRY))
    curated.build_quarantine(lake, DAY)
    curated.build_daily_status(lake, DAY)
    day_rows = pq.read_table(lake.curated_file("daily_status", DAY)).to_pylist()
    named = {r["server_key"]: r["server_name"] for r in day_rows}
    assert named == {"multi.example.com/mcp": "a.vendor/travel", "alone.example.com/mcp": "b.vendor/recipes"}
    texts = dict(zip(*listing_text_table(lake, DAY).to_pydict().values(), strict=True))
    assert texts == {"multi.example.com/mcp": "travel", "alone.example.com/mcp": "recipes"}


@pytest.fixture
def duckdb_memory_of_1gb():
    """The process's DuckDB database held to 1 GB and nothing spilled to disk, for one test."""
    from sevenmaps_pipeline.lake import duck

    shared = duck._shared_database()
    shared.execute("SET memory_limit = '1GB'")
    shared.execute("SET max_temp_directory_size = '0B'")
    try:
        yield
    finally:
        shared.execute("RESET memory_limit")
        shared.execute("RESET max_temp_directory_size")


def test_a_tool_name_of_a_hundred_kilobytes_is_placed_within_a_gigabyte(lake, duckdb_memory_of_1gb):
    """helper-84: each word row of the category rule carried the tool's whole name, so memory grew as the name's
    length times its words: a name of 8,000 characters took 2.7 GB, one of 7 MB (a real server may list it: a page
    may be 8 MiB) stopped the day's map. The rows carry the name's digest now."""
    name = "book_flight_find_hotel_" * 5_000  # 115,000 characters, 20,000 words
    got = categories(lake, {"hog": [t(name, "book a flight and a hotel for the trip " * 2_000)], "plain": TRAVEL3})
    assert got["hog"]["category"] == got["plain"]["category"] == "travel", got
