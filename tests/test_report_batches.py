"""What a day's folder of agent reports may hold (curated/report_batches.py, reports-1.2): a batch the rules cannot
read whole, or anything beside the batches, is refused with its reason and the day still builds; a refused report's
words are withheld in its batch as in the quarantine (helper-81's attack, 2026-12-07)."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import DAY, land_probes, land_registry, land_reports, land_status, probe, report

from sevenmaps_pipeline import curated
from sevenmaps_pipeline.curated.day import build_day, stale_reason
from sevenmaps_pipeline.curated.report_batches import refuse_report_files
from sevenmaps_pipeline.lake.warehouse import open_warehouse, publish_warehouse
from sevenmaps_pipeline.rules.methods import REPORTS_PARAMS

UP = "up.example.com/mcp"
WORDS = "my user John Smith is HIV positive"


@pytest.fixture
def day_of_reports(lake):
    for i in range(2):
        land_status(lake, DAY - dt.timedelta(days=i), {UP: "o"})
    land_reports(lake, [report(UP), report(UP, who="r2")], batch="good")
    return lake


def build(lake):
    result = curated.build_agent_reports(lake, DAY)
    refused = pq.read_table(lake.curated_file("agent_report_quarantine", DAY)).to_pylist()
    return result, {r["source_file"].rsplit("/", 1)[-1]: r["problem"] for r in refused}


def no_words_anywhere(lake) -> bool:
    return not any(b"John Smith" in p.read_bytes() for p in lake.root.rglob("*") if p.is_file())


def _column(name: str, values: list, data_type: pa.DataType | None = None) -> pa.Table:
    """The good row's fixed fields with `name` given as `values` (of `data_type`)."""
    base = pa.Table.from_pylist([report(UP, who="r3")])
    column = pa.array(values, data_type)
    if name not in base.column_names:
        return base.append_column(name, column)
    return base.set_column(base.column_names.index(name), name, column)


WRONG_KINDS = {
    "ms as text": (_column("ms", ["120"]), "column ms holds text values, not integer"),
    "ms as a fraction": (_column("ms", [0.4]), "column ms holds values that are no integer of its range"),
    "ms as NaN": (_column("ms", [float("nan")]), "column ms holds values that are no integer of its range"),
    "ms past int64": (_column("ms", [2**64 - 1], pa.uint64()), "column ms holds values that are no integer"),
    "tokens as a huge decimal": (_column("result_tokens", [decimal.Decimal("1e30")], pa.decimal128(38, 0)),
                                 "column result_tokens holds values that are no integer"),
    "ok as words": (_column("ok", [WORDS]), "column ok holds text values, not boolean"),
    "tool as a list": (_column("tool", [[WORDS]]), "column tool holds nested values, not text"),
    "tool as bytes": (_column("tool", [b"\xff" + WORDS.encode()], pa.binary()),
                      "column tool holds binary values, not text"),
    "day as a timestamp with words for a zone": (
        _column("day", [dt.datetime(2026, 11, 10, tzinfo=dt.UTC)], pa.timestamp("us", tz="Etc/UTC")),
        "column day holds timestamp values, not date"),
    "charged_usd as text": (_column("charged_usd", ["0.01"]), "column charged_usd holds text values, not floating"),
}


@pytest.mark.parametrize("case", list(WRONG_KINDS))
def test_a_batch_of_the_wrong_kinds_is_refused_whole_and_the_day_builds(day_of_reports, case):
    table, reason = WRONG_KINDS[case]
    folder = day_of_reports.raw_dir("agent_reports", DAY)
    pq.write_table(table, folder / "odd.parquet")
    result, reasons = build(day_of_reports)
    assert result.rows == 2 and result.stats["refused_files"] == 1
    assert reasons["odd.parquet"].startswith(reason) and "was deleted" in reasons["odd.parquet"]
    assert not (folder / "odd.parquet").exists() and no_words_anywhere(day_of_reports)


def test_a_fixed_field_given_twice_is_refused_whole(day_of_reports):
    table = pa.Table.from_pylist([report(UP, who="r3")])
    twice = pa.Table.from_arrays([*table.columns, pa.array([WORDS])], names=[*table.column_names, "tool"])
    pq.write_table(twice, day_of_reports.raw_dir("agent_reports", DAY) / "twice.parquet")
    result, reasons = build(day_of_reports)
    assert result.rows == 2 and reasons["twice.parquet"].startswith("column(s) tool given more than once")
    assert no_words_anywhere(day_of_reports)


def test_numbers_of_another_width_and_whole_floats_read_as_the_fixed_fields(day_of_reports):
    # What pandas writes for an integer column with a missing value, and what other writers choose.
    base = pa.Table.from_pylist([report(UP, who="r3"), report(UP, who="r4", ms=None)])
    table = base.set_column(base.column_names.index("ms"), "ms", pa.array([120.0, None]))
    table = table.set_column(table.column_names.index("tool"), "tool",
                             pa.array(["get_weather", "get_weather"]).dictionary_encode())
    pq.write_table(table, day_of_reports.raw_dir("agent_reports", DAY) / "pandas.parquet")
    result, reasons = build(day_of_reports)
    assert result.rows == 4 and not reasons
    valid = pq.read_table(day_of_reports.curated_file("agent_reports", DAY)).to_pylist()
    assert sorted(r["ms"] for r in valid if r["ms"] is not None) == [120, 120, 120]


def test_anything_beside_the_batches_is_refused_with_its_reason_and_nothing_is_read_twice(day_of_reports):
    folder = day_of_reports.raw_dir("agent_reports", DAY)
    (folder / "notes.txt").write_text(WORDS)
    (folder / "batch.parquet.tmp").write_text(WORDS)
    (folder / "sub").mkdir()
    (folder / "sub" / "x.parquet").write_text(WORDS)
    (folder / "odd.parquet").mkdir()
    pq.write_table(pa.Table.from_pylist([report(UP, who="r3")]), folder / "*.parquet")
    (folder / ".tmp-in-flight").write_text("a write of ours in flight")
    result, reasons = build(day_of_reports)
    assert result.rows == 2  # the good batch once: `*.parquet` never reads it again
    assert set(reasons) == {"notes.txt", "batch.parquet.tmp", "sub", "odd.parquet", "*.parquet"}
    assert reasons["notes.txt"].startswith("not a report batch") and "sha256" in reasons["notes.txt"]
    assert reasons["odd.parquet"].startswith("not a regular file")
    assert reasons["*.parquet"].startswith("a name with a wildcard")
    assert sorted(p.name for p in folder.iterdir()) == [".tmp-in-flight", "good.parquet"]
    assert no_words_anywhere(day_of_reports)


def test_a_batch_past_the_limits_is_set_aside_whole_unread(day_of_reports, monkeypatch):
    monkeypatch.setitem(REPORTS_PARAMS, "max_batch_rows", 3)
    monkeypatch.setitem(REPORTS_PARAMS, "max_day_rows", 5)
    land_reports(day_of_reports, [report(UP, who=f"b{i}") for i in range(4)], batch="big")
    land_reports(day_of_reports, [report(UP, who=f"c{i}") for i in range(3)], batch="more")
    land_reports(day_of_reports, [report(UP, who="d")], batch="small")
    result, reasons = build(day_of_reports)
    # in name order: big 4 > 3 a batch; good 2 and more 3 fill the day's 5; small 1 more would pass it
    assert set(reasons) == {"big.parquet", "small.parquet"}
    assert result.rows == 5 and reasons["big.parquet"].startswith("4 reports: past the limit of 3 a batch")
    assert "was deleted" in reasons["big.parquet"]  # unread, its fields cannot be told apart from words
    assert not (day_of_reports.quarantine_dir / f"raw/agent_reports/day={DAY}").exists()


def test_a_batch_that_says_it_holds_billions_of_rows_is_refused_by_its_footer_alone(day_of_reports, monkeypatch):
    # helper-82: the columns were read whole before the limit, gigabytes for a file of under a megabyte.
    monkeypatch.setitem(REPORTS_PARAMS, "max_batch_rows", 10)
    table = pa.Table.from_pylist([report(UP, who="r3")] * 11)
    table = table.set_column(table.column_names.index("ms"), "ms", table.column("ms").cast(pa.int32()))
    pq.write_table(table, day_of_reports.raw_dir("agent_reports", DAY) / "many.parquet")
    seen = []
    monkeypatch.setattr(pq, "read_table", lambda *a, **k: seen.append(a) or pytest.fail("a column was read"))
    problems = refuse_report_files(day_of_reports, DAY)[2]
    assert [r["problem"].split(":")[0] for r in problems] == ["11 reports"] and not seen


def test_a_reader_never_quotes_a_value_and_a_name_not_utf_8_is_escaped(day_of_reports):
    folder = day_of_reports.raw_dir("agent_reports", DAY)
    base = pa.Table.from_pylist([report(UP, who="r3")])
    not_utf_8 = pa.array([WORDS.encode() + b" \xff"], pa.binary()).view(pa.string())  # DuckDB quotes such a value
    pq.write_table(base.set_column(base.column_names.index("tool"), "tool", not_utf_8), folder / "bytes.parquet")
    (folder / os.fsdecode(b"caf\xe9.txt")).write_text(WORDS)
    result, reasons = build(day_of_reports)
    assert result.rows == 2 and reasons["bytes.parquet"].startswith("unreadable Parquet: ")
    assert reasons["caf\\xe9.txt"].startswith("not a report batch") and no_words_anywhere(day_of_reports)


def test_a_refused_reports_words_are_withheld_in_its_batch_and_a_day_built_again_is_the_same(day_of_reports):
    folder = day_of_reports.raw_dir("agent_reports", DAY)
    land_reports(day_of_reports, [report(UP, who="r3"), report(UP, who="r4", tool=WORDS),
                                  report(UP, who="r5", ok=False, fail=WORDS)], batch="mixed")
    chatty = pa.Table.from_pylist([{**report(UP, who="r6", tool=WORDS), "comment": "nothing"}])
    pq.write_table(chatty, folder / "chatty.parquet")
    first, reasons = build(day_of_reports)
    assert first.rows == 3 and first.stats["refused_rows"] == 2 and no_words_anywhere(day_of_reports)
    rows = pq.read_table(folder / "mixed.parquet").to_pylist()
    assert [r["tool"] for r in rows] == ["get_weather", "<34 characters withheld>", "get_weather"]
    assert rows[2]["fail"] == "<34 characters withheld>"
    assert {k: rows[0][k] for k in report(UP)} == report(UP, who="r3")  # the rest as it was
    kept = day_of_reports.quarantine_dir / f"raw/agent_reports/day={DAY}/chatty.parquet"
    assert pq.read_table(kept).column("tool").to_pylist() == ["<34 characters withheld>"]
    quarantine = day_of_reports.curated_file("agent_report_quarantine", DAY).read_bytes()
    again, _ = build(day_of_reports)
    assert again.rows == 3 and day_of_reports.curated_file("agent_report_quarantine", DAY).read_bytes() == quarantine
    problems = [json.loads(r["row_json"])["tool"] for r in
                pq.read_table(day_of_reports.curated_file("agent_report_quarantine", DAY)).to_pylist()
                if r["row_json"]]
    assert "<34 characters withheld>" in problems


def test_the_warehouse_reads_only_the_reports_of_days_built_and_a_bad_batch_of_today_stops_nothing(day_of_reports):
    tomorrow = day_of_reports.raw_dir("agent_reports", DAY + dt.timedelta(days=1))
    tomorrow.mkdir(parents=True)
    (tomorrow / "garbage.parquet").write_bytes(b"PAR1 " + WORDS.encode())
    pq.write_table(pa.Table.from_pylist([{**report(UP), "tool": WORDS}]), tomorrow / "words.parquet")
    publish_warehouse(day_of_reports)  # nothing built yet: the view is empty, and made
    with open_warehouse(day_of_reports) as con:
        assert con.execute("SELECT count(*) FROM raw_agent_reports").fetchone() == (0,)
    build(day_of_reports)
    publish_warehouse(day_of_reports)
    with open_warehouse(day_of_reports) as con:  # the built day's batch; never the day still landing
        assert con.execute("SELECT count(*), count(DISTINCT day) FROM raw_agent_reports").fetchone() == (2, 1)


def test_whatever_lands_after_the_build_makes_the_day_stale_and_waits_out_of_the_warehouse(lake):
    # helper-82: a batch landing between the build and the signing was signed, and read by the warehouse, unchecked.
    land_registry(lake, [f"https://{UP}"])
    land_probes(lake, [probe(f"https://{UP}", "ok")])
    land_reports(lake, [report(UP)], batch="good")
    assert build_day(lake, DAY).ok and stale_reason(lake, DAY) is None
    folder = lake.raw_dir("agent_reports", DAY)
    later = os.stat(lake.curated_file("agent_reports", DAY)).st_mtime + 10
    (folder / "notes.txt").write_text(WORDS)
    land_reports(lake, [{**report(UP), "tool": WORDS}], batch="late")
    (folder / ".in-flight.parquet").write_bytes(b"PAR1")  # a write in flight: hidden, never read
    for name in ("notes.txt", "late.parquet"):
        os.utime(folder / name, (later, later))
    assert "notes.txt changed after" in stale_reason(lake, DAY) or "late.parquet changed after" in stale_reason(
        lake, DAY)
    publish_warehouse(lake)
    with open_warehouse(lake) as con:
        assert con.execute("SELECT count(*) FROM raw_agent_reports").fetchone() == (1,)  # the build's batch only
