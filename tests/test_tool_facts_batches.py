"""tool_facts a batch at a time: the same rows, in the same order, whatever the buckets, batches, row groups
and worker processes (the writer's promises: tests/test_parquet_parts.py); token counts taken over across a
method change of the rules."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import DAY, land_probes, make_creating_high_risk, probe

from sevenmaps_pipeline import curated
from sevenmaps_pipeline.curated.tool_facts import FactsPlan
from sevenmaps_pipeline.lake.parquet_io import write_parquet
from sevenmaps_pipeline.lake.paths import LakePaths
from sevenmaps_pipeline.lake.schemas import TOOL_FACTS
from sevenmaps_pipeline.rules.tokens import count_tokens


def _tool(i: int, j: int) -> dict:
    verbs = ("get", "delete", "create", "list", "send")
    tool = {"name": f"{verbs[(i + j) % 5]}_item_{j}", "description": f"Server {i}, tool {j}: " + "words " * (i % 7),
            "inputSchema": {"type": "object", "properties": {f"p{j}": {"type": "string"}}}}
    if (i + j) % 3 == 0:
        tool["annotations"] = {"readOnlyHint": (i + j) % 2 == 0}
    return tool


def _land(lake: LakePaths) -> None:
    """Two probe files of 20 endpoints each: 20 distinct lists of 1-6 tools, each in both files."""
    for run in (1, 2):
        rows = [probe(f"https://s{run}x{n}.example.com/mcp", "ok", run_id=f"run-{run}",
                      tools=[_tool(n % 15, j) for j in range(1 + n % 6)]) for n in range(20)]
        rows.append(probe(f"https://down{run}.example.com/mcp", "timeout", run_id=f"run-{run}"))
        land_probes(lake, rows, run_id=f"run-{run}")
    curated.build_quarantine(lake, DAY)
    curated.build_daily_status(lake, DAY)


def test_batches_buckets_and_workers_give_the_rows_of_one_batch(tmp_path):
    one, many = LakePaths.at(tmp_path / "one"), LakePaths.at(tmp_path / "many")
    _land(one)
    shutil.copytree(one.root, many.root)
    whole = curated.build_tool_facts(one, DAY)
    split = curated.build_tool_facts(many, DAY, FactsPlan(bucket_lists=4, batch_lists=2, batch_bytes=400,
                                                          row_group_rows=7, workers=2))
    assert whole.stats["workers"] == 1 and whole.stats["new_lists"] == 20
    assert split.stats["workers"] == 2 and "workers_note" not in split.stats, split.stats
    for table in ("tool_facts", "tool_lists"):
        a, b = pq.read_table(one.curated_file(table, DAY)), pq.read_table(many.curated_file(table, DAY))
        assert a.num_rows > 0 and a.equals(b), table
    facts = pq.read_table(many.curated_file("tool_facts", DAY))
    assert facts.column_names == TOOL_FACTS.schema.names
    keys = list(zip(facts.column("tools_hash").to_pylist(), facts.column("position").to_pylist(), strict=True))
    assert keys == sorted(keys)
    assert pq.ParquetFile(many.curated_file("tool_facts", DAY)).metadata.num_row_groups > 1
    assert not list(many.curated_file("tool_facts", DAY).parent.glob(".*"))  # the spill and the temp are gone


def test_a_list_whose_raw_probes_are_gone_names_itself(lake):
    _land(lake)
    for path in lake.raw_files("probes", DAY):
        table = pq.read_table(path)
        pq.write_table(table.set_column(table.column_names.index("tools_json"), "tools_json",
                                        pa.nulls(table.num_rows, pa.string())), path)
    with pytest.raises(FileNotFoundError, match=r"the raw probes behind 20 tool list\(s\) are gone"):
        curated.build_tool_facts(lake, DAY)
    assert not lake.curated_file("tool_facts", DAY).exists()


def test_a_method_change_of_the_rules_takes_the_counts_of_the_same_tokenizer(lake, tmp_path, monkeypatch, request):
    _land(lake)
    first = curated.build_tool_facts(lake, DAY)
    assert first.stats["counted_before"] == 0
    # Mark the stored counts, so a count taken over shows apart from one counted again.
    lists_path, facts_path = lake.curated_file("tool_lists", DAY), lake.curated_file("tool_facts", DAY)
    lists, facts = pq.read_table(lists_path), pq.read_table(facts_path)
    marked_lists = lists.set_column(lists.column_names.index("definition_tokens"), "definition_tokens",
                                    pa.array([n + 1000 for n in lists.column("definition_tokens").to_pylist()],
                                             lists.schema.field("definition_tokens").type))
    marked_facts = facts.set_column(facts.column_names.index("description_tokens"), "description_tokens",
                                    pa.array([n + 7 for n in facts.column("description_tokens").to_pylist()],
                                             facts.schema.field("description_tokens").type))
    write_parquet(lake, lists_path, marked_lists)
    write_parquet(lake, facts_path, marked_facts)

    make_creating_high_risk(tmp_path, monkeypatch, request)  # the rules change, the tokenizer does not
    day2 = DAY + dt.timedelta(days=1)
    rows = [probe(f"https://s1x{n}.example.com/mcp", "ok", day=day2, tools=[_tool(n % 15, j) for j in range(1 + n % 6)])
            for n in range(20)]
    rows.append(probe("https://new.example.com/mcp", "ok", day=day2, tools=[_tool(99, 0), _tool(99, 1)]))
    land_probes(lake, rows, day=day2)
    curated.build_quarantine(lake, day2)
    curated.build_daily_status(lake, day2)
    second = curated.build_tool_facts(lake, day2)
    assert second.stats["new_lists"] == 21 and second.stats["counted_before"] == 20
    again = pq.read_table(lake.curated_file("tool_lists", day2)).to_pylist()
    assert {r["method_version"] for r in again} == {"risk-9.9-test+o200k_base-1.1"}
    before = {r["tools_hash"]: r["definition_tokens"] for r in marked_lists.to_pylist()}
    taken = {r["tools_hash"]: r["definition_tokens"] for r in again if r["tools_hash"] in before}
    assert taken == before
    (new,) = [r for r in again if r["tools_hash"] not in before]
    assert new["definition_tokens"] < 1000  # counted, being new
    stored = {r["fingerprint"]: r["description_tokens"] for r in marked_facts.to_pylist()}
    tools = pq.read_table(lake.curated_file("tool_facts", day2)).to_pylist()
    assert all(t["description_tokens"] == stored[t["fingerprint"]] for t in tools if t["fingerprint"] in stored)
    fresh = [t for t in tools if t["fingerprint"] not in stored]
    assert len(fresh) == 2 and all(t["description_tokens"] == count_tokens(t["description"]) for t in fresh)
    assert {t["risk"] for t in tools if t["name"].startswith("create") and not t["annotations_json"]} == {"red"}

    assert second.stats["carried"] == 20  # the earlier rows taken, their risk read again under risk-9.9-test


# Tools whose row cannot say what the rules read (a description that is no string, a name of 0 or false, no
# description, an item that is no object) and tools whose row can (sql/tool_facts_carried.sql).
_ODD = [{"name": 0, "description": "Delete everything."}, {"name": "thing", "description": ["Delete", "all"]},
        {"name": False, "description": "Remove it."}, {"name": "list_y"}, "not a tool"]
_PLAIN = [{"name": "get_report", "description": "Get a report.", "inputSchema": {"properties": {"output_path": {}}}},
          {"name": "delete_user", "description": "", "annotations": {"readOnlyHint": True}},
          {"name": "1", "description": "Reads.", "annotations": "odd", "inputSchema": ["odd"]},
          {"name": "create_z", "description": "Creates a z.", "annotations": {"readOnlyHint": False}},
          {"description": "Send mail."}]


def test_carried_rows_are_the_rows_parsing_gives(tmp_path):
    """After a method change of the rules, the lists an earlier method computed are carried (their risk read again,
    here over rows whose stored risk is wrong) and give the rows parsing every list gives, in the same order,
    whatever the buckets, batches and workers; the lists whose rows cannot say what the rules read are parsed."""
    carry, parse = LakePaths.at(tmp_path / "carry"), LakePaths.at(tmp_path / "parse")
    _land(carry)
    for n, tool in enumerate(_ODD + _PLAIN):
        land_probes(carry, [probe(f"https://odd{n}.example.com/mcp", "ok", run_id=f"odd-{n}",
                                  tools=[tool, _tool(n, 1)])], run_id=f"odd-{n}")
    curated.build_quarantine(carry, DAY)
    curated.build_daily_status(carry, DAY)
    curated.build_tool_facts(carry, DAY, FactsPlan(batch_lists=3, row_group_rows=7))
    assert pq.ParquetFile(carry.curated_file("tool_facts", DAY)).metadata.num_row_groups > 1  # carried from groups
    day2 = DAY + dt.timedelta(days=1)
    for path in carry.raw_files("probes", DAY):
        moved = pq.read_table(path).to_pylist()
        land_probes(carry, [{**row, "day": day2, "started_at": row["started_at"] + dt.timedelta(days=1)}
                            for row in moved], day=day2, run_id=path.stem)
    for table in ("tool_lists", "tool_facts"):  # an earlier method of the rules, with stored levels it got wrong
        path = carry.curated_file(table, DAY)
        data = pq.read_table(path)
        data = data.set_column(data.column_names.index("method_version"), "method_version",
                               pa.array(["risk-0.1+" + m.split("+")[1] for m in data["method_version"].to_pylist()]))
        if table == "tool_facts":
            data = data.set_column(data.column_names.index("risk"), "risk", pa.array(["bogus"] * data.num_rows))
        write_parquet(carry, path, data)
    curated.build_quarantine(carry, day2)
    curated.build_daily_status(carry, day2)
    shutil.copytree(carry.root, parse.root)
    plan = FactsPlan(bucket_lists=4, batch_lists=3, batch_bytes=300, row_group_rows=7, workers=2)
    carried = curated.build_tool_facts(carry, day2, plan)
    parsed = curated.build_tool_facts(parse, day2, FactsPlan(carry=False))
    assert carried.stats["new_lists"] == parsed.stats["new_lists"] == 30 and parsed.stats["carried"] == 0
    assert carried.stats["carried"] == 20 + len(_PLAIN) and "workers_note" not in carried.stats, carried.stats
    for table in ("tool_facts", "tool_lists"):
        a, b = pq.read_table(carry.curated_file(table, day2)), pq.read_table(parse.curated_file(table, day2))
        assert a.num_rows > 0 and a.equals(b), table
    facts = pq.read_table(carry.curated_file("tool_facts", day2))
    assert "bogus" not in facts.column("risk").to_pylist()
    assert not list(carry.curated_file("tool_facts", day2).parent.glob(".*"))


_LEAN_WORKER = """
import datetime as dt, json, multiprocessing
from concurrent.futures import ProcessPoolExecutor
from sevenmaps_pipeline import curated  # the day's process holds the builders and DuckDB
from sevenmaps_pipeline.curated.tool_facts import TOOL_FACTS
from sevenmaps_pipeline.lake.memory import collector_off_in_worker
from sevenmaps_pipeline.rules.tool_facts import facts_batch_in_worker
batch = [("0" * 64, json.dumps([{"name": "get_item", "description": "Get an item.", "inputSchema": {}}]))]
with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"),
                         initializer=collector_off_in_worker) as pool:
    lists, tools = pool.submit(facts_batch_in_worker, dt.date(2026, 12, 1), batch, {}, TOOL_FACTS.schema).result()
    modules = pool.submit(eval, "sorted(__import__('sys').modules)").result()
    print(json.dumps({"tools": tools.num_rows, "modules": modules}))
"""


def test_a_facts_worker_imports_the_rules_not_the_builders():
    """A spawned worker imports the module of the function it runs: tool_facts' lives in rules/tool_facts.py, so a
    worker holds neither the lake's builders nor DuckDB beside the day's process (docs/scaling.md, "The day's peak
    memory")."""
    out = subprocess.run([sys.executable, "-c", _LEAN_WORKER], capture_output=True, text=True, check=True).stdout
    seen = json.loads(out.strip().splitlines()[-1])
    assert seen["tools"] == 1
    assert "sevenmaps_pipeline.rules.tool_facts" in seen["modules"]
    assert not {"duckdb", "sevenmaps_pipeline.curated", "dagster"} & set(seen["modules"]), seen["modules"]
