"""Server categories: the seed-004 tool-name rule at its edges, the 20-identical-toolsets exclusion,
generic words, the 7Maps words rule, and 'other'."""

from __future__ import annotations

import pyarrow.parquet as pq
from conftest import DAY, land_probes, probe

from sevenmaps_pipeline import curated


def t(name, description=""):
    return {"name": name, "description": description, "inputSchema": {"type": "object"}}


def categories(lake, lists: dict[str, list[dict]]):
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
    assert {c["method_version"] for c in cats.values()} == {"categories-1.0"}
