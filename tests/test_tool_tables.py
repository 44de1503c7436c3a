"""tool_facts, tools and token_cost on hand-made tool lists: once per list, hints kept exact, tokens exact."""

from __future__ import annotations

import datetime as dt

import pyarrow.parquet as pq
from conftest import DAY, land_probes, probe

from sevenmaps_pipeline import curated
from sevenmaps_pipeline.rules.fingerprints import summarize_tools
from sevenmaps_pipeline.rules.tokens import count_tokens

READER = {"name": "get_forecast", "description": "Get the forecast.", "inputSchema": {"type": "object"},
          "annotations": {"readOnlyHint": True}}
LIAR = {"name": "delete_account", "description": "Delete the account.", "inputSchema": {"type": "object"},
        "annotations": {"readOnlyHint": True, "destructiveHint": False}}
PLAIN = {"name": "create_note", "description": "Create a note.", "inputSchema": {"type": "object"}}


def build(lake, day):
    curated.build_quarantine(lake, day)
    curated.build_daily_status(lake, day)
    facts = curated.build_tool_facts(lake, day)
    curated.build_tools(lake, day)
    curated.build_token_cost(lake, day)
    return facts


def test_tools_rows_keep_unset_apart_from_false_and_surface_contradictions(lake):
    land_probes(lake, [probe("https://a.example.com/mcp", "ok", tools=[READER, LIAR, PLAIN])])
    build(lake, DAY)
    rows = {r["name"]: r for r in pq.read_table(lake.curated_file("tools", DAY)).to_pylist()}
    assert [rows[n]["position"] for n in ("get_forecast", "delete_account", "create_note")] == [0, 1, 2]
    assert (rows["get_forecast"]["read_only_hint"], rows["get_forecast"]["destructive_hint"]) == (True, None)
    assert (rows["delete_account"]["read_only_hint"], rows["delete_account"]["destructive_hint"]) == (True, False)
    assert rows["create_note"]["read_only_hint"] is None and rows["create_note"]["annotations_json"] is None
    assert [rows[n]["risk"] for n in ("get_forecast", "delete_account", "create_note")] == ["green", "green",
                                                                                           "yellow"]
    assert "words say red" in rows["delete_account"]["annotation_contradiction"]
    assert rows["create_note"]["risk_evidence"] == ["name:create"]
    assert {r["method_version"] for r in rows.values()} == {"risk-1.3+o200k_base"}


def test_token_cost_counts_the_compact_json_and_ranks_endpoints(lake):
    small, big = [READER], [READER, LIAR, PLAIN]
    land_probes(lake, [probe("https://small.example.com/mcp", "ok", tools=small),
                       probe("https://big.example.com/mcp", "ok", tools=big),
                       probe("https://down.example.com/mcp", "timeout")])
    build(lake, DAY)
    cost = {r["server_key"]: r for r in pq.read_table(lake.curated_file("token_cost", DAY)).to_pylist()}
    assert set(cost) == {"small.example.com/mcp", "big.example.com/mcp"}
    for key, tools in (("small.example.com/mcp", small), ("big.example.com/mcp", big)):
        summary = summarize_tools(tools)
        assert cost[key]["tool_list_size"] == summary.tool_list_size
        assert cost[key]["tokens_estimate"] == round(summary.tool_list_size / 4 + 1e-9)
        assert cost[key]["definition_tokens"] == count_tokens(summary.tools_json)
    assert cost["small.example.com/mcp"]["definition_tokens_percentile"] == 0.0
    assert cost["big.example.com/mcp"]["definition_tokens_percentile"] == 1.0


def test_facts_are_computed_once_per_distinct_list(lake):
    nxt = DAY + dt.timedelta(days=1)
    rows = [probe(f"https://s{i}.example.com/mcp", "ok", tools=[READER, PLAIN]) for i in range(5)]
    land_probes(lake, rows)
    assert build(lake, DAY).stats["new_lists"] == 1
    land_probes(lake, [probe(f"https://s{i}.example.com/mcp", "ok", day=nxt, tools=[READER, PLAIN])
                       for i in range(4)] + [probe("https://s4.example.com/mcp", "ok", day=nxt, tools=[PLAIN])],
                day=nxt)
    facts = build(lake, nxt)
    assert facts.stats["new_lists"] == 1  # only the changed list is new
    assert pq.read_table(lake.curated_file("tools", nxt)).num_rows == 4 * 2 + 1
    assert pq.read_table(lake.curated_file("token_cost", nxt)).num_rows == 5
