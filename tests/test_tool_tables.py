"""tool_facts, tools and token_cost on hand-made tool lists: once per list, hints kept exact, tokens exact."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import DAY, land_probes, probe

from sevenmaps_pipeline import curated
from sevenmaps_pipeline.lake import duck
from sevenmaps_pipeline.lake.keys import server_id
from sevenmaps_pipeline.lake.parquet_io import SignedDayError, write_parquet
from sevenmaps_pipeline.lake.schemas import TOOLS
from sevenmaps_pipeline.rules.fingerprints import definition_text, summarize_tools
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
    assert {r["method_version"] for r in rows.values()} == {"risk-1.7+o200k_base-1.1"}


def test_token_cost_counts_the_definition_text_and_ranks_endpoints(lake):
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
        assert cost[key]["definition_tokens"] == count_tokens(definition_text(tools))
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


def test_tools_is_each_endpoints_list_facts_in_key_and_position_order_read_as_plain_columns(lake):
    """build_tools repeats each list's facts per endpoint, written a part at a time; readers (pyarrow, DuckDB) see
    the table's own types, and a signed day rebuilt unchanged passes as a no-op while a changed one is refused."""
    land_probes(lake, [probe("https://b.example.com/mcp", "ok", tools=[READER, LIAR, PLAIN]),
                       probe("https://a.example.com/mcp", "ok", tools=[PLAIN]),
                       probe("https://c.example.com/mcp", "ok", tools=[READER, LIAR, PLAIN]),
                       probe("https://d.example.com/mcp", "timeout")])
    build(lake, DAY)
    path = lake.curated_file("tools", DAY)
    table = pq.read_table(path)
    assert table.schema.names == TOOLS.schema.names
    assert [f.type for f in table.schema] == [f.type for f in TOOLS.schema]
    with duck.session() as con:
        kinds = dict(con.execute(f"SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM '{path}')").fetchall())
    assert kinds["name"] == "VARCHAR" and kinds["risk_evidence"] == "VARCHAR[]"
    rows = table.to_pylist()
    assert [(r["server_key"], r["position"]) for r in rows] == [
        ("a.example.com/mcp", 0), ("b.example.com/mcp", 0), ("b.example.com/mcp", 1), ("b.example.com/mcp", 2),
        ("c.example.com/mcp", 0), ("c.example.com/mcp", 1), ("c.example.com/mcp", 2)]
    facts = {(f["tools_hash"], f["position"]): f
             for f in pq.read_table(lake.curated_file("tool_facts", DAY)).to_pylist()}
    for row in rows:
        fact = facts[(row["tools_hash"], row["position"])]
        assert {k: v for k, v in row.items() if k in fact and k != "day"} == {
            k: v for k, v in fact.items() if k in row and k != "day"}
        assert row["server_id"] == server_id(row["server_key"]) and row["day"] == DAY
    assert rows[1]["tools_hash"] == rows[4]["tools_hash"] != rows[0]["tools_hash"]

    lake.roots_dir.mkdir(parents=True, exist_ok=True)
    lake.root_file(DAY).write_text("{}")  # the day is signed from here on: its files are frozen
    assert curated.build_tools(lake, DAY).path == path and pq.read_table(path).equals(table)
    changed = table.slice(1)
    changed = pa.table([c.dictionary_encode() if pa.types.is_string(c.type) else c for c in changed.columns],
                       names=changed.schema.names)
    with pytest.raises(SignedDayError, match=f"day {DAY} is signed"):
        write_parquet(lake, path, changed)
    assert pq.read_table(path).equals(table)
