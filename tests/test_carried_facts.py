"""The rows carried into tool_facts after a method change of the rules alone (curated/carried_facts.py): which copy
of a list they keep, which row groups they are read from, and what happens when they cannot be read."""

from __future__ import annotations

import datetime as dt
import json

import pyarrow as pa
import pyarrow.parquet as pq
from conftest import DAY, land_probes, probe

from sevenmaps_pipeline import curated
from sevenmaps_pipeline.curated.carried_facts import CARRIED_COLUMNS, _groups_holding, carriable, spill_carried
from sevenmaps_pipeline.curated.tool_facts import FactsPlan
from sevenmaps_pipeline.lake.parquet_io import write_parquet
from sevenmaps_pipeline.lake.paths import LakePaths

DAY2 = DAY + dt.timedelta(days=1)


def _earlier_rules(lake: LakePaths, day: dt.date) -> None:
    """The day's lists as an earlier method of the rules left them (the same tokenizer)."""
    for table in ("tool_lists", "tool_facts"):
        path = lake.curated_file(table, day)
        data = pq.read_table(path)
        methods = pa.array(["risk-0.1+" + m.split("+")[1] for m in data["method_version"].to_pylist()])
        write_parquet(lake, path, data.set_column(data.column_names.index("method_version"), "method_version",
                                                  methods))


def _day(lake: LakePaths, day: dt.date, lists: list[list]) -> None:
    land_probes(lake, [probe(f"https://s{n}.example.com/mcp", "ok", day=day, tools=tools)
                       for n, tools in enumerate(lists)], day=day)
    curated.build_quarantine(lake, day)
    curated.build_daily_status(lake, day)


def test_a_carried_list_keeps_the_copy_first_parsed_and_reads_its_risk_again(lake):
    """A tools_hash holds its tools' name, description, inputSchema and annotations in any order: served on the next
    day in another order and with another title and outputSchema, it is the same list, whose rows (positions, title,
    schemas) are those first computed under the tokenizer, as on any day after a list's first; its risk is read
    again."""
    first = [{"name": "get_a", "description": "Gets a."},
             {"name": "get_b", "description": "Gets b.", "title": "Old B"}]
    again = [{"name": "get_b", "description": "Gets b.", "title": "New B", "outputSchema": {"type": "object"}},
             {"name": "get_a", "description": "Gets a."}]
    _day(lake, DAY, [first])
    curated.build_tool_facts(lake, DAY)
    _earlier_rules(lake, DAY)
    facts = pq.read_table(lake.curated_file("tool_facts", DAY))
    write_parquet(lake, lake.curated_file("tool_facts", DAY),
                  facts.set_column(facts.column_names.index("risk"), "risk", pa.array(["red"] * facts.num_rows)))
    _day(lake, DAY2, [again])
    built = curated.build_tool_facts(lake, DAY2)
    assert built.stats["carried"] == 1 and built.stats["new_lists"] == 1
    rows = pq.read_table(lake.curated_file("tool_facts", DAY2)).to_pylist()
    assert [(r["position"], r["name"], r["title"], r["output_schema_json"]) for r in rows] == [
        (0, "get_a", None, None), (1, "get_b", "Old B", None)]
    assert {r["risk"] for r in rows} == {"green"} and {r["method_version"].split("+")[0] for r in rows} != {"risk-0.1"}


def test_rows_are_read_from_the_groups_that_hold_them_and_a_file_that_fails_leaves_its_lists_to_parsing(lake, tmp_path):
    lists = [[{"name": f"get_{n}_{j}", "description": f"Gets {n}."} for j in range(1 + n % 3)] for n in range(12)]
    _day(lake, DAY, lists)
    curated.build_tool_facts(lake, DAY, FactsPlan(batch_lists=2, row_group_rows=3))
    path = lake.curated_file("tool_facts", DAY)
    facts = pq.read_table(path)
    assert pq.ParquetFile(path).metadata.num_row_groups > 2
    hashes = sorted(set(facts.column("tools_hash").to_pylist()))
    one = hashes[len(hashes) // 2]
    assert len(_groups_holding(pq.ParquetFile(path).metadata, [one])) == 1
    folder = tmp_path / "spill"
    folder.mkdir()
    missing = str(tmp_path / "gone.parquet")
    wanted = [one, hashes[0], "e" * 64, "f" * 64]
    carried = carriable([(one, str(path)), (hashes[0], str(path)), ("e" * 64, str(path)), ("f" * 64, missing)])
    assert set(carried) == {one, hashes[0], "e" * 64}  # a file that cannot be read is no source
    rows = spill_carried(folder, sorted(wanted), {**carried, "f" * 64: missing}, bucket_lists=1)
    # A list its file does not hold (replaced since it was asked for) and one whose file is gone are not found.
    assert dict(zip(sorted(wanted), rows.found.tolist(), strict=True)) == {
        one: True, hashes[0]: True, "e" * 64: False, "f" * 64: False}
    taken = pa.concat_tables([t for b in range(4) if (t := rows.read(b)) is not None]).sort_by("rank")
    expected = facts.filter(pa.compute.is_in(facts.column("tools_hash"), pa.array([one, hashes[0]])))
    assert taken.drop_columns(["rank"]).to_pylist() == expected.select(CARRIED_COLUMNS).to_pylist()
    assert json.dumps(sorted(set(taken.column("tools_hash").to_pylist()))) == json.dumps(sorted([one, hashes[0]]))
