"""The lake contracts: schemas and README in step, warehouse views, endpoint keys; the synthetic generator."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from sevenmaps_pipeline.devtools.synth import synthesize
from sevenmaps_pipeline.lake.keys import server_id, server_key
from sevenmaps_pipeline.lake.paths import PROJECT_ROOT, LakePaths
from sevenmaps_pipeline.lake.schemas import RAW_PROBES, data_dictionary_markdown
from sevenmaps_pipeline.lake.warehouse import LATEST_TABLES, publish_warehouse
from sevenmaps_pipeline.rules.fingerprints import summarize_tools, tool_fingerprint

END = dt.date(2026, 11, 20)


def test_the_data_dictionary_is_generated_from_the_schemas_and_the_definitions():
    from sevenmaps_pipeline.cli import DATA_DICTIONARY_MARKERS, data_dictionary_text
    from sevenmaps_pipeline.curated.day import MAP_ASSET_NAMES

    doc = (PROJECT_ROOT / "docs" / "data-dictionary.md").read_text()
    start, end = DATA_DICTIONARY_MARKERS
    assert start in doc and end in doc
    generated = doc.split(start)[1].split(end)[0]
    assert generated == data_dictionary_text(), \
        "docs/data-dictionary.md is stale: regenerate it with `sevenmaps data-dictionary --write`"
    assert data_dictionary_markdown() in generated
    assert all(f"| `{name}` |" in generated for name in MAP_ASSET_NAMES + ("daily_root", "day_snapshot"))


@pytest.mark.parametrize(("url", "key"), [
    ("https://WWW.Example.com:443/mcp/", "example.com/mcp"),
    ("https://api.example.com/v1/mcp?token=x#frag", "api.example.com/v1/mcp"),
    ("https://example.com", "example.com"),
    ("https://example.com./mcp", "example.com/mcp"),
])
def test_server_key_normalises_urls(url, key):
    assert server_key(url) == key
    assert server_id(key) == hashlib.sha256(key.encode()).hexdigest()[:12]


def test_tools_hash_is_order_free_and_fingerprint_keeps_absent_apart_from_null():
    a = {"name": "a", "description": "x", "inputSchema": {"type": "object", "properties": {}}}
    b = {"name": "b", "annotations": {"readOnlyHint": True}}
    assert summarize_tools([a, b]).tools_hash == summarize_tools([b, a]).tools_hash
    assert summarize_tools([a]).tools_hash != summarize_tools([b]).tools_hash
    assert tool_fingerprint({"name": "a"}) != tool_fingerprint({"name": "a", "description": None})
    # Key order inside a schema does not change the fingerprint; fields outside the four do not either.
    assert tool_fingerprint({"inputSchema": {"b": 1, "a": 2}, "name": "n"}) == \
        tool_fingerprint({"name": "n", "inputSchema": {"a": 2, "b": 1}, "title": "ignored"})
    expected = hashlib.sha256(b'{"name":"n"}').hexdigest()
    assert tool_fingerprint({"name": "n"}) == expected


def _file_digests(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*.parquet"))}


def test_synth_is_deterministic_per_seed(tmp_path):
    a, b, c = (LakePaths.at(tmp_path / n) for n in "abc")
    synthesize(a, 200, 6, seed=11, end_day=END)
    synthesize(b, 200, 6, seed=11, end_day=END)
    synthesize(c, 200, 6, seed=12, end_day=END)
    assert _file_digests(a.root) == _file_digests(b.root)
    assert _file_digests(a.root) != _file_digests(c.root)


def test_synth_lands_a_realistic_mix_the_way_the_prober_will(tmp_path):
    lake = LakePaths.at(tmp_path / "lake")
    result = synthesize(lake, 3000, 30, seed=4, end_day=END)
    assert len(result.missing_days) == 2
    for missed in result.missing_days:
        assert lake.raw_files("probes", missed) == [] and not lake.registry_file(missed).exists()
    table = pq.read_table(lake.raw_files("probes", END)[0])
    assert table.schema.equals(RAW_PROBES.schema, check_metadata=False)
    daily = [r for r in table.to_pylist() if r["check_kind"] == "daily"]
    share = {k: v / len(daily) for k, v in Counter(r["outcome"] for r in daily).items()}
    assert 0.40 < share["ok"] < 0.60
    assert 0.15 < share["needs_auth"] < 0.25
    assert 0.005 < share["http_402"] < 0.04
    downs = {o for o in share if o not in ("ok", "needs_auth", "http_402", "skipped")}
    assert len(downs) >= 8
    ok = [r for r in daily if r["outcome"] == "ok"]
    assert all(summarize_tools(json.loads(r["tools_json"])).tools_hash == r["tools_hash"] for r in ok[:200])
    # Tool lists change for some endpoints between the first and the last day; endpoints come and go.
    con = duckdb.connect()
    changed, appeared = con.execute(
        f"""WITH p AS (SELECT * FROM read_parquet('{lake.root}/raw/probes/*/*.parquet') WHERE check_kind = 'daily')
            SELECT (SELECT count(*) FROM (SELECT server_key FROM p WHERE tools_hash IS NOT NULL
                                          GROUP BY server_key HAVING count(DISTINCT tools_hash) > 1)),
                   (SELECT count(*) FROM (SELECT server_key FROM p GROUP BY server_key
                                          HAVING min(day) > DATE '{result.days[0]}'))""").fetchone()
    assert changed > 20 and appeared > 50


def test_warehouse_views_resolve_from_any_directory_and_readers_never_block_publishing(tmp_path):
    lake = LakePaths.at(tmp_path / "lake")
    synthesize(lake, 50, 2, seed=1, end_day=END)
    publish_warehouse(lake)
    reader = textwrap.dedent(f"""
        import duckdb, sys, time
        con = duckdb.connect({str(lake.warehouse)!r}, read_only=True)
        print(con.execute("SELECT count(*) FROM probes").fetchone()[0], flush=True)
        sys.stdin.readline()  # hold the read-only connection open until told
        print(con.execute("SELECT count(*) FROM probes").fetchone()[0], flush=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", reader], cwd="/", stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        first = int(proc.stdout.readline())
        assert first > 50
        publish_warehouse(lake, force=True)  # an analyst's open session must not stall the pipeline
        con = duckdb.connect(str(lake.warehouse), read_only=True)
        assert con.execute("SELECT count(*) FROM probes").fetchone()[0] == first
        assert con.execute("SELECT count(*) FROM daily_status").fetchone()[0] == 0  # typed, empty
        con.close()
        proc.stdin.write("\n")
        proc.stdin.flush()
        assert int(proc.stdout.readline()) == first
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("folder", ["lake[1]", "lake*"])
def test_a_lakes_path_with_a_patterns_characters_is_read_as_written(tmp_path, folder):
    """The views read the lake by patterns under its path: `lake[1]` read as a pattern matched `lake1`, so every
    view was empty (and the reports' view failed to build). The path is now read as written; a sibling folder the
    pattern would have matched is never read. DuckDB cannot write a database under a path with "?": that is refused
    in words."""
    lake = LakePaths.at(tmp_path / folder)
    result = synthesize(lake, 30, 2, seed=3, end_day=END, missing_days=0)
    from sevenmaps_pipeline import curated

    curated.build_quarantine(lake, result.days[0])
    curated.build_daily_status(lake, result.days[0])
    decoy = LakePaths.at(tmp_path / "lake1")  # what `lake[1]` matches as a pattern; `lake*` and `lake?` too
    synthesize(decoy, 5, 1, seed=4, end_day=END, missing_days=0)
    publish_warehouse(lake)
    with duckdb.connect(str(lake.warehouse), read_only=True) as con:
        probes = con.execute("SELECT count(*) FROM probes").fetchone()[0]
        status = con.execute("SELECT count(*) FROM daily_status").fetchone()[0]
    landed = sum(pq.ParquetFile(p).metadata.num_rows for p in (lake.root / "raw" / "probes").rglob("*.parquet"))
    assert probes == landed and probes > 30 and status > 20
    if folder == "lake*":
        with pytest.raises(ValueError, match=r"no warehouse can be written in a lake whose path holds a '\?'"):
            publish_warehouse(LakePaths.at(tmp_path / "lake?"))


def test_a_copy_kept_beside_a_days_folder_is_no_more_rows_of_it(tmp_path):
    """helper-86: the views' `day=*` read `curated/daily_status/day=D.bak` as more rows of the day (daily_status and
    map_days doubled), where every other reader takes such a folder for no day."""
    import shutil

    from sevenmaps_pipeline import curated

    lake = LakePaths.at(tmp_path / "lake")
    result = synthesize(lake, 20, 1, seed=5, end_day=END, missing_days=0)
    curated.build_quarantine(lake, result.days[0])
    curated.build_daily_status(lake, result.days[0])
    folder = lake.curated_file("daily_status", result.days[0]).parent
    rows = pq.read_metadata(folder / "part-0.parquet").num_rows
    shutil.copytree(folder, folder.parent / f"{folder.name}.bak")
    shutil.copytree(lake.raw_dir("probes", result.days[0]), lake.raw_dir("probes", result.days[0]).parent / "day=x")
    publish_warehouse(lake)
    with duckdb.connect(str(lake.warehouse), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM daily_status").fetchone() == (rows,)
        landed = sum(pq.read_metadata(p).num_rows for p in lake.raw_files("probes", result.days[0]))
        assert con.execute("SELECT count(*) FROM probes").fetchone() == (landed,)


def test_every_column_of_a_latest_view_has_its_tables_comment(tmp_path):
    """The `latest_*` views had no column comments, their tables' views had (docs/analyst.md "The views"): each
    column now has its table's, and the registry name and URL joined from daily_status have daily_status's."""
    lake = LakePaths.at(tmp_path / "lake")
    publish_warehouse(lake)  # no file yet: every view typed and empty, its comments all the same
    with duckdb.connect(str(lake.warehouse), read_only=True) as con:
        rows = con.execute("SELECT table_name, column_name, comment FROM duckdb_columns()").fetchall()
    comment = {(view, column): text for view, column, text in rows}
    for name in LATEST_TABLES:
        columns = [column for view, column, _ in rows if view == f"latest_{name}"]
        assert len(columns) >= 3, name
        for column in columns:
            source = name if (name, column) in comment else "daily_status"
            assert comment[(f"latest_{name}", column)] == comment[(source, column)], (name, column)
            assert comment[(source, column)], (name, column)


def test_the_warehouse_is_rebuilt_only_when_a_view_changes(tmp_path):
    from sevenmaps_pipeline import curated

    lake = LakePaths.at(tmp_path / "lake")
    result = synthesize(lake, 40, 3, seed=2, end_day=END, missing_days=0)
    first, second, third = result.days
    publish_warehouse(lake)
    built = lake.warehouse.stat().st_ino
    curated.build_quarantine(lake, first)
    curated.build_daily_status(lake, first)
    publish_warehouse(lake)  # daily_status's first file: its view changes from empty to the files
    assert lake.warehouse.stat().st_ino != built
    built = lake.warehouse.stat().st_ino
    curated.build_quarantine(lake, second)
    curated.build_daily_status(lake, second)
    publish_warehouse(lake)  # another day of the same tables: the glob already covers it
    assert lake.warehouse.stat().st_ino == built
    with duckdb.connect(str(lake.warehouse), read_only=True) as con:
        assert con.execute("SELECT count(DISTINCT day) FROM daily_status").fetchone()[0] == 2
    (lake.root / ".warehouse.sha256").write_text("stale")
    publish_warehouse(lake)
    assert lake.warehouse.stat().st_ino != built


def test_a_copied_lake_answers_from_itself(tmp_path, monkeypatch, capsys):
    """Copy a lake, delete a day's daily_status in the copy: `sevenmaps sql` on the copy, from another working
    directory, no longer shows the day, and the original still does (the copy's views once read the original)."""
    import shutil

    from sevenmaps_pipeline import curated
    from sevenmaps_pipeline.cli import main

    lake = LakePaths.at(tmp_path / "lake")
    first, second = synthesize(lake, 30, 2, seed=3, end_day=END, missing_days=0).days
    for day in (first, second):
        curated.build_quarantine(lake, day)
        curated.build_daily_status(lake, day)
    publish_warehouse(lake)
    copy = LakePaths.at(tmp_path / "copy")
    shutil.copytree(lake.root, copy.root)
    shutil.rmtree(copy.curated_dir("daily_status", first))
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")

    def days(root: Path) -> list[str]:
        capsys.readouterr()
        assert main(["--lake", str(root), "sql", "SELECT DISTINCT day FROM daily_status ORDER BY day",
                     "--format", "csv"]) == 0
        return capsys.readouterr().out.split()[1:]

    assert days(copy.root) == [second.isoformat()]
    assert days(lake.root) == [first.isoformat(), second.isoformat()]
    with duckdb.connect(str(copy.warehouse), read_only=True) as con:  # rebuilt for the copy, and says so
        assert con.execute("SELECT lake_root FROM warehouse_lake").fetchone()[0] == str(copy.root)


def test_synth_agent_reports_carry_every_kind_of_reporter_and_some_invalid_rows(tmp_path):
    from sevenmaps_pipeline import curated
    from sevenmaps_pipeline.lake.schemas import RAW_AGENT_REPORTS

    lake = LakePaths.at(tmp_path / "lake")
    result = synthesize(lake, 1500, 8, seed=5, end_day=END, missing_days=0)
    assert result.report_rows > 1000
    day = END - dt.timedelta(days=3)
    days = {d: pq.read_table(lake.raw_files("agent_reports", d)[0]) for d in result.days}
    for table in days.values():
        assert table.schema.equals(RAW_AGENT_REPORTS.schema, check_metadata=False)
    rows = [r for t in days.values() for r in t.to_pylist()]
    by_reporter = Counter(r["reporter_id"] for r in rows)
    assert by_reporter.most_common(1)[0][1] >= 2000  # the flooder
    assert any(r["paid"] for r in rows) and any(not r["paid"] for r in rows)
    assert any(r["about_day"] < r["day"] for r in rows)  # late reports about the day before
    assert {"unreachable", "timeout", "auth", "args", "wrong_result", "server_error"} <= {r["fail"] for r in rows}
    # Through validation: the invalid rows of every day are refused with reasons, the rest all count.
    for d in result.days:
        curated.build_quarantine(lake, d)
        curated.build_daily_status(lake, d)
        built = curated.build_agent_reports(lake, d)
        assert built.stats["refused_rows"] == 5
        assert built.rows + 5 == days[d].num_rows
    refused = pq.read_table(lake.curated_file("agent_report_quarantine", day)).column("problem").to_pylist()
    assert sorted(p.split(" ")[0] for p in refused) == ["negative", "reporter_id", "tool", "unknown", "unknown"]
    # The anonymous complainers never confirm anything; the disputing paying reporters do.
    curated.build_incidents(lake, END)
    statuses = Counter(r["status"] for r in pq.read_table(lake.curated_file("incidents", END)).to_pylist())
    assert statuses["unconfirmed"] >= 1 and statuses["live"] >= 1


def test_a_column_no_file_has_yet_reads_as_null_and_the_warehouse_still_publishes(tmp_path):
    """A lake upgraded to a method that adds a column (history-1.2's server_history.tools_days) holds only files
    written before it until its next day is built, and signed days are never rebuilt: the view has every column
    of its schema, null in the older files (docs/data-dictionary.md), where COMMENT ON the column failed and
    `sevenmaps warehouse` stopped with a Binder Error."""
    from sevenmaps_pipeline import curated

    lake = LakePaths.at(tmp_path / "lake")
    first, second, third = synthesize(lake, 30, 3, seed=4, end_day=END, missing_days=0).days
    for day in (first, second, third):
        curated.build_quarantine(lake, day)
        curated.build_daily_status(lake, day)
    for day in (first, second):  # as history-1.1 wrote them: no tools_days
        curated.build_server_history(lake, day)
        path = lake.curated_file("server_history", day)
        pq.write_table(pq.read_table(path).drop_columns(["tools_days"]), path)
    publish_warehouse(lake)
    with duckdb.connect(str(lake.warehouse), read_only=True) as con:
        rows, counted = con.execute("SELECT count(*), count(tools_days) FROM server_history").fetchone()
        assert rows > 0 and counted == 0
        assert con.execute("SELECT count(tools_days) FROM latest_server_history").fetchone() == (0,)
    curated.build_server_history(lake, third)  # the first day of the new method: the old days stay as they are
    publish_warehouse(lake)
    with duckdb.connect(str(lake.warehouse), read_only=True) as con:
        by_day = dict(con.execute("SELECT day, count(tools_days) FROM server_history GROUP BY day").fetchall())
    assert by_day[first] == by_day[second] == 0 and by_day[third] > 0
