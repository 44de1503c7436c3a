"""The command line teaches: global options before or after the subcommand, every error one line with
what to do and a documented exit code (a traceback only with --debug), a silent broken pipe, and
`sql --format table|csv|json|parquet --out FILE`."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import os
import subprocess
import sys
import time

import pyarrow.parquet as pq
import pytest
from conftest import DAY
from test_integrity import NOW, build_day

from sevenmaps_pipeline.cli import main
from sevenmaps_pipeline.cli.pipeline import backfill_runs
from sevenmaps_pipeline.integrity.roots import sign_through
from sevenmaps_pipeline.lake.paths import PROJECT_ROOT
from sevenmaps_pipeline.lake.warehouse import open_warehouse, publish_warehouse

CLI = [sys.executable, "-m", "sevenmaps_pipeline.cli"]


@pytest.fixture
def warehouse_lake(lake, signing_key):
    build_day(lake, DAY)
    sign_through(lake, DAY, signing_key, now=NOW)
    publish_warehouse(lake, force=True)
    return lake


def _one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    return lines[0]


def test_global_options_before_or_after_the_subcommand(warehouse_lake, tmp_path, capsys):
    root = str(warehouse_lake.root)
    assert main(["--lake", root, "verify"]) == 0
    assert main(["verify", "--lake", root]) == 0
    assert main(["--lake", str(tmp_path / "elsewhere"), "verify", "--lake", root]) == 0  # the later one wins
    capsys.readouterr()
    # A lake that is not there is an input error for every command that reads one, and none creates it.
    missing = str(tmp_path / "missing")
    for command in (["verify"], ["log", "check"], ["sql", "SELECT 1"], ["warehouse"], ["export", "--day", "2026-11-01"],
                    ["prove", "curated/daily_status/day=2026-11-01/part-0.parquet"]):
        assert main([*command, "--lake", missing]) == 2, command
        assert capsys.readouterr().err.startswith(f"error: no lake at {missing} ("), command
    assert not (tmp_path / "missing").exists()


# Every command that reads a lake (cli/common.py _existing_lake).
READING = (["status"], ["server", "mcp.example.com"], ["route", "weather forecast"], ["verify"], ["log", "check"],
           ["log", "sync"], ["prove", "curated/daily_status/day=2026-11-01/part-0.parquet"],
           ["export", "--day", "2026-11-01"], ["sql", "SELECT 1"], ["warehouse"], ["site"], ["serve", "--port", "0"],
           ["incident", "list"], ["opt-out", "list"], ["owner", "list"], ["submissions"],
           ["backfill", "--from", "2026-11-01", "--to", "2026-11-02"])


def test_a_folder_that_holds_no_lake_is_refused_by_every_reading_command(tmp_path, capsys):
    """`sevenmaps --lake /tmp status` exited 0 ("nothing has landed yet"), as if /tmp were a new lake, and
    `verify` said there was nothing to verify: an empty or foreign folder is one line naming it and what a lake
    holds, exit 2 (a usage error), and nothing is created in it. A command that makes a lake still makes one."""
    empty, foreign = tmp_path / "empty", tmp_path / "foreign"
    empty.mkdir()
    (foreign / "src").mkdir(parents=True)
    (foreign / "notes.txt").write_text("not a lake\n")
    for folder in (empty, foreign):
        before = sorted(folder.rglob("*"))
        for command in READING:
            assert main([*command, "--lake", str(folder)]) == 2, command
            assert _one_error_line(capsys.readouterr().err).startswith(
                f"error: no lake at {folder} (the folder holds none of a lake's raw/, curated/, roots/, control/, "
                "log/, .dagster/: pass --lake PATH"), command
        assert sorted(folder.rglob("*")) == before, folder
    assert main(["opt-out", "add", "mcp.example.com", "--lake", str(empty)]) == 0
    assert main(["status", "--lake", str(empty)]) == 0  # a new lake (its control/ made): nothing has landed yet
    assert "nothing has landed yet" in capsys.readouterr().out
    # A lake with no built day: the commands that read a map say how to build one (helper-85: they named none).
    for command in (["site"], ["server", "x"], ["route", "weather"]):
        assert main([*command, "--lake", str(empty)]) == 2, command
        line = _one_error_line(capsys.readouterr().err)
        assert line.startswith(f"error: no built day in {empty}: build one: `sevenmaps run` scans and maps today, "
                               "`sevenmaps backfill --from D --to D` maps a day already scanned"), command


def test_ordinary_mistakes_are_one_line_with_an_exit_code(warehouse_lake, capsys):
    root = str(warehouse_lake.root)
    assert main(["run", "--day", "2026-13-01", "--lake", root]) == 2
    assert _one_error_line(capsys.readouterr().err) == "error: not a UTC day in YYYY-MM-DD form: '2026-13-01'"
    # helper-85: a day that has not begun landed an all-n day and became the lake's first; one before the lake's
    # first day failed with Dagster's invariant, not in words
    tomorrow = dt.datetime.now(dt.UTC).date() + dt.timedelta(days=1)
    assert main(["run", "--day", tomorrow.isoformat(), "--lake", root]) == 2
    assert _one_error_line(capsys.readouterr().err).endswith("a day that has not begun is never scanned")
    assert main(["run", "--day", "2020-01-01", "--lake", root]) == 2
    assert _one_error_line(capsys.readouterr().err).startswith("error: --day 2020-01-01 is before the lake's first day")
    assert main(["sql", "SELEC 1", "--lake", root]) == 2
    assert _one_error_line(capsys.readouterr().err).startswith("error: SQL: Parser Error: syntax error")
    assert main(["sql", "SELECT * FROM no_such_table", "--lake", root]) == 2
    assert "no_such_table" in _one_error_line(capsys.readouterr().err)
    assert main(["sql", "  ", "--lake", root]) == 2
    assert "the query is empty" in _one_error_line(capsys.readouterr().err)
    assert main(["sql", "SELECT 1", "--format", "parquet", "--lake", root]) == 2
    assert "--out FILE.parquet" in _one_error_line(capsys.readouterr().err)
    assert main(["verify", "--public-key", "/nonexistent/key.pem", "--lake", root]) == 2
    assert "cannot read the public key" in _one_error_line(capsys.readouterr().err)
    assert main(["export", "--day", "1999-01-01", "--lake", root]) == 2
    assert "is not signed" in _one_error_line(capsys.readouterr().err)
    assert main(["verify", "--export", "/nonexistent/snapshot"]) == 2  # was 1, as if a snapshot had failed
    assert _one_error_line(capsys.readouterr().err).startswith("error: no snapshot folder at /nonexistent/snapshot")


def test_debug_shows_the_traceback(warehouse_lake):
    done = subprocess.run(CLI + ["--debug", "--lake", str(warehouse_lake.root), "sql", "SELEC 1"],
                          capture_output=True, text=True)
    assert "Traceback" in done.stderr and "ParserException" in done.stderr
    # the same exit code and last line as without --debug (helper-85: it was 1, the traceback's, where 2 is said)
    assert done.returncode == 2 and done.stderr.splitlines()[-1].startswith("error: SQL: Parser Error")


def test_sql_formats(warehouse_lake, tmp_path, capsys):
    root = str(warehouse_lake.root)
    query = "SELECT server_key, code FROM daily_status ORDER BY server_key"
    assert main(["sql", query, "--format", "csv", "--lake", root]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows == [["server_key", "code"], ["a.example.com/mcp", "o"]]
    assert main(["sql", "SELECT server_key, code, day FROM daily_status", "--format", "json", "--lake", root]) == 0
    (record,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert record == {"server_key": "a.example.com/mcp", "code": "o", "day": DAY.isoformat()}
    out = tmp_path / "status.parquet"
    assert main(["sql", query, "--format", "parquet", "--out", str(out), "--lake", root]) == 0
    assert pq.read_table(out).to_pylist() == [{"server_key": "a.example.com/mcp", "code": "o"}]
    csv_out = tmp_path / "status.csv"
    assert main(["sql", query, "--format", "csv", "--out", str(csv_out), "--lake", root]) == 0
    assert csv_out.read_text().splitlines() == ["server_key,code", "a.example.com/mcp,o"]
    assert main(["sql", query, "--lake", root]) == 0
    assert "a.example.com/mcp" in capsys.readouterr().out  # the table


def test_every_statement_of_a_query_shows_its_result(warehouse_lake, capsys):
    """helper-85: analyst.md's block of four queries, pasted, showed only the last one's result (DuckDB runs them
    all and gives the last), silently. Each statement's result is shown now; a file takes one at a time."""
    root = str(warehouse_lake.root)
    assert main(["sql", "SELECT 'first' AS one; SELECT code AS two FROM daily_status;", "--lake", root]) == 0
    out = capsys.readouterr().out
    assert "first" in out and out.index("one") < out.index("two")
    assert main(["sql", "SELECT 1; SELECT 2", "--format", "csv", "--lake", root]) == 2
    assert _one_error_line(capsys.readouterr().err) == (
        "error: the query holds 2 statements; --format csv and --out take one at a time")


def test_a_file_is_written_in_the_format_its_name_says_and_csv_lines_end_as_duckdbs_do(warehouse_lake, tmp_path,
                                                                                       capsys):
    """A newcomer's review found `--out f.txt` silently wrote CSV (True, not true) with no "wrote" line, and CSV
    lines ending in \r\n, which a shell's `$(... | tail -1)` keeps."""
    root = str(warehouse_lake.root)
    query = "SELECT server_key, code = 'o' AS answered FROM daily_status"
    assert main(["sql", query, "--format", "csv", "--lake", root]) == 0
    assert capsys.readouterr().out == "server_key,answered\na.example.com/mcp,true\n"
    for name, read in (("a.csv", lambda f: f.read_bytes()), ("a.jsonl", lambda f: json.loads(f.read_text())),
                       ("a.parquet", lambda f: pq.read_table(f).to_pylist())):
        assert main(["sql", query, "--out", str(tmp_path / name), "--lake", root]) == 0
        assert "wrote" in capsys.readouterr().err
        assert read(tmp_path / name) in (b"server_key,answered\na.example.com/mcp,true\n",
                                         {"server_key": "a.example.com/mcp", "answered": True},
                                         [{"server_key": "a.example.com/mcp", "answered": True}])
    for args in (["--out", str(tmp_path / "a.txt")], ["--format", "table", "--out", str(tmp_path / "b.csv")]):
        assert main(["sql", query, *args, "--lake", root]) == 2
        assert "--format" in capsys.readouterr().err
    assert not (tmp_path / "a.txt").exists() and not (tmp_path / "b.csv").exists()


def test_csv_writes_each_value_as_duckdb_writes_it(warehouse_lake, tmp_path, capsys):
    """`sql --format csv` printed booleans as Python's True/False (and lists as Python's ['a', 'b']) where DuckDB,
    and every other surface of the project, write true/false: each cell is now what DuckDB's own CSV writer writes,
    the header the query's names (a repeated name kept)."""
    root = str(warehouse_lake.root)
    query = ("SELECT server_key, code = 'o' AS answered, NULL::BOOLEAN AS unknown, [true, false] AS flags, "
             "['a', 'b'] AS names, TIMESTAMPTZ '2026-11-10 12:00:00+00' AS at, 1 AS n, 2 AS n FROM daily_status")
    assert main(["sql", query, "--format", "csv", "--lake", root]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows == [["server_key", "answered", "unknown", "flags", "names", "at", "n", "n"],
                    ["a.example.com/mcp", "true", "", "[true, false]", "[a, b]", "2026-11-10 12:00:00+00", "1", "2"]]
    duckdb_csv = tmp_path / "duckdb.csv"
    with open_warehouse(warehouse_lake) as con:
        con.sql(query).write_csv(str(duckdb_csv))
    written = list(csv.reader(duckdb_csv.open(newline="")))
    assert written[1:] == rows[1:] and written[0][-1] == "n_1"  # DuckDB's header renames the repeated name


def _json_line_of(lake, query: str, capsys) -> str:
    """The one line `sevenmaps sql --format json` prints for a query of one row."""
    assert main(["sql", query, "--format", "json", "--lake", str(lake.root)]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    return line


def test_json_lines_are_valid_json_in_the_forms_json_readers_expect(warehouse_lake, capsys):
    """`sql --format json` wrote Python's text of a value (`2026-11-10 12:00:00+00:00`, `0:05:00`, `b'...'`), a
    DECIMAL as a string and a NaN as a bare NaN that strict readers refuse; a MAP with DATE keys raised. Each
    line is now strict JSON (json.loads refusing NaN), in ISO 8601 and JSON numbers (docs/analyst.md)."""
    query = ("SELECT TIMESTAMPTZ '2026-11-10 12:00:00+00' AS at, DATE '2026-11-10' AS day, TIME '07:30:00' AS t, "
             "1.5 AS exact, 123456789012345678901234567.89::DECIMAL(38, 2) AS wide, 'nan'::DOUBLE AS nan, "
             "'-inf'::DOUBLE AS low, INTERVAL 5 MINUTE AS five, -INTERVAL 90 SECOND AS back, "
             "INTERVAL 1 DAY + INTERVAL 1500 MILLISECOND AS day_on, '\\x00\\xff'::BLOB AS raw, "
             "MAP([DATE '2026-11-10'], [{'up': 'inf'::DOUBLE, 'n': 2}]) AS by_day, [0.25, NULL]::DOUBLE[] AS xs, "
             "'00000000-0000-4000-8000-000000000001'::UUID AS id")
    line = _json_line_of(warehouse_lake, query, capsys)

    def strict(constant):
        raise ValueError(f"not JSON: {constant}")

    assert json.loads(line, parse_constant=strict) == {
        "at": "2026-11-10T12:00:00+00:00", "day": "2026-11-10", "t": "07:30:00", "exact": 1.5,
        "wide": "123456789012345678901234567.89", "nan": None, "low": None, "five": "PT300S", "back": "-PT90S",
        "day_on": "P1DT1.5S", "raw": "AP8=", "by_day": {"2026-11-10": {"up": None, "n": 2}}, "xs": [0.25, None],
        "id": "00000000-0000-4000-8000-000000000001"}
    assert dt.datetime.fromisoformat(json.loads(line)["at"]) == dt.datetime(2026, 11, 10, 12, tzinfo=dt.UTC)


def test_json_lines_keep_every_column_and_every_map_key(warehouse_lake, tmp_path, capsys):
    """A repeated column name kept one key, the last column's value (the first's lost), and a map's NaN and
    infinite keys all became the key "null", one value left of three: a repeated name is renamed as DuckDB's
    own JSON writer renames it (`n_1`), and such keys are written as JavaScript's String() writes them."""
    query = ("SELECT 1 AS n, 2 AS n, MAP(['nan'::DOUBLE, 'inf'::DOUBLE, '-inf'::DOUBLE, 1.5], [1, 2, 3, 4]) AS by_x "
             "FROM daily_status")
    line = _json_line_of(warehouse_lake, query, capsys)
    assert json.loads(line) == {"n": 1, "n_1": 2, "by_x": {"NaN": 1, "Infinity": 2, "-Infinity": 3, "1.5": 4}}
    duckdb_json = tmp_path / "duckdb.json"
    with open_warehouse(warehouse_lake) as con:
        con.sql(f"COPY ({query}) TO '{duckdb_json}' (FORMAT json)")
    assert list(json.loads(duckdb_json.read_text())) == ["n", "n_1", "by_x"]  # DuckDB's own names


def test_json_intervals_keep_their_months_days_and_microseconds(warehouse_lake, capsys):
    """DuckDB's Python client turns an INTERVAL into a timedelta, a month into 30 days: `INTERVAL 1 MONTH` was
    written `P30D`, age() over ten months and nine days `P309D` (313 days apart), a month minus a day `P29D`,
    and 1,000,000,000 days made the command fail. Each INTERVAL, nested too, is DuckDB's months, days and
    microseconds as an ISO 8601 duration, a part's own sign kept when the signs differ (docs/analyst.md)."""
    query = ("SELECT INTERVAL 1 MONTH AS month, age(TIMESTAMP '2026-11-10', TIMESTAMP '2026-01-01') AS age, "
             "INTERVAL '1 month -1 day' AS mixed, INTERVAL '-13 months' AS back, INTERVAL 1000000000 DAY AS far, "
             "INTERVAL '1 year 2 months 3 days 04:05:06.5' AS all_parts, INTERVAL 5 MINUTE AS five, "
             "[{'wait': INTERVAL 2 MONTH, 'n': 1}] AS nested, MAP([INTERVAL 1 DAY], [INTERVAL 1 HOUR]) AS by_span, "
             "NULL::INTERVAL AS unknown FROM daily_status")
    line = _json_line_of(warehouse_lake, query, capsys)
    assert json.loads(line) == {
        "month": "P1M", "age": "P10M9D", "mixed": "P1M-1D", "back": "-P1Y1M", "far": "P1000000000D",
        "all_parts": "P1Y2M3DT14706.5S", "five": "PT300S", "nested": [{"wait": "P2M", "n": 1}],
        "by_span": {"P1D": "PT3600S"}, "unknown": None}


def test_json_dates_and_timestamps_are_exact_outside_pythons_range(warehouse_lake, capsys):
    """DuckDB's Python client reads 'infinity' as 9999-12-31 (a TIMESTAMPTZ's without its offset), cuts a
    TIMESTAMP_NS to microseconds, and gives a year past 9999 or before 1 as DuckDB's text (`300000-01-01`,
    `0044-03-15 (BC)`, a space before the time): each is written in ISO 8601 from DuckDB's own text, a year
    outside 0000 to 9999 with a sign and six digits, 'infinity' as DuckDB writes it (docs/analyst.md)."""
    query = ("SELECT 'infinity'::DATE AS never, '-infinity'::TIMESTAMPTZ AS always, DATE '9999-12-31' AS last, "
             "'2026-11-10 12:00:00.123456789'::TIMESTAMP_NS AS ns, '07:30:00.123456789'::TIME_NS AS t_ns, "
             "'300000-01-01'::DATE AS far, '0044-03-15 (BC)'::DATE AS ides, "
             "'290000-01-01 10:00:00.5+00'::TIMESTAMPTZ AS far_at, TIMESTAMPTZ '2026-11-10 12:00:00+00' AS at, "
             "TIMESTAMP '2026-11-10 12:00:00' AS naive, [DATE '2026-11-10', 'infinity'] AS days FROM daily_status")
    line = _json_line_of(warehouse_lake, query, capsys)
    assert json.loads(line) == {
        "never": "infinity", "always": "-infinity", "last": "9999-12-31", "ns": "2026-11-10T12:00:00.123456789",
        "t_ns": "07:30:00.123456789", "far": "+300000-01-01", "ides": "-000043-03-15",
        "far_at": "+290000-01-01T10:00:00.5+00:00", "at": "2026-11-10T12:00:00+00:00", "naive": "2026-11-10T12:00:00",
        "days": ["2026-11-10", "infinity"]}


def test_json_maps_with_list_or_struct_keys_are_objects_like_every_map(warehouse_lake, capsys):
    """DuckDB's Python client gives a MAP whose keys are lists, arrays, structs or maps as {"key": [...],
    "value": [...]}: `MAP([[1], [2]], [1, 2])` was written {"key": [[1], [2]], "value": [1, 2]}, the same as
    a MAP with the two text keys "key" and "value". Every map is an object, such a key its JSON text."""
    query = ("SELECT MAP([[1], [2]], [1, 2]) AS by_list, MAP(['key', 'value'], [[[1], [2]], [[1, 2]]]) AS by_text, "
             "MAP([{'x': 1}], [INTERVAL 1 MONTH]) AS by_struct, [MAP([[1, 2]::INT[2]], ['a'])] AS nested "
             "FROM daily_status")
    line = _json_line_of(warehouse_lake, query, capsys)
    assert json.loads(line) == {"by_list": {"[1]": 1, "[2]": 2}, "by_text": {"key": [[1], [2]], "value": [[1, 2]]},
                                "by_struct": {'{"x": 1}': "P1M"}, "nested": [{"[1, 2]": "a"}]}


def test_a_broken_pipe_is_silent(warehouse_lake):
    done = subprocess.run(
        " ".join(CLI) + f" --lake {warehouse_lake.root} sql 'SELECT * FROM range(200000)' --format csv | head -n 2",
        shell=True, capture_output=True, text=True)
    assert done.stdout.splitlines() == ["range", "0"]
    assert done.stderr == ""


def test_a_lock_held_elsewhere_is_named(warehouse_lake, capsys):
    holder = subprocess.Popen([sys.executable, "-c", (
        "import duckdb, sys, time; con = duckdb.connect(sys.argv[1]); print('held', flush=True); time.sleep(60)"),
        str(warehouse_lake.warehouse)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        assert main(["sql", "SELECT 1", "--lake", str(warehouse_lake.root)]) == 2
        line = _one_error_line(capsys.readouterr().err)
        assert "another process holds this DuckDB file open read-write" in line
        assert time.monotonic() - started < 60  # it answers; it does not wait for the other process
    finally:
        holder.kill()
        holder.wait()


def test_probe_says_when_allow_private_would_apply(capsys):
    for url, reason in (("http://localhost:9/mcp", "non-https URL"), ("https://10.1.2.3/mcp", "IP address"),
                        ("https://printer.local/mcp", "localhost or private name")):
        assert main(["probe", url]) == 3  # skipped before any connection is made
        out = capsys.readouterr().out
        assert f"skipped  {reason}" in out and "--allow-private" in out
    assert main(["probe", "https://10.1.2.3/mcp", "--json"]) == 3
    assert "--allow-private" in json.loads(capsys.readouterr().out)["hint"]


def test_probe_and_readiness_refuse_what_names_no_endpoint_in_one_line(capsys):
    # not "skipped: non-https URL" with a hint about --allow-private, which cannot help (helper-85)
    for command in ("probe", "readiness"):
        for url in ("not-a-url", "ftp://x/y", "https:///mcp", "https://[::1/mcp", "https://example.com:99999/mcp",
                    "https://exa mple.com/mcp"):
            assert main([command, url]) == 2
            line = _one_error_line(capsys.readouterr().err)
            assert f"{url!r} is not an endpoint's URL" in line and "--allow-private" not in line


def test_run_says_what_failed_in_three_lines(lake, tmp_path, monkeypatch, capfd):
    import datetime as dt

    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    today = dt.datetime.now(dt.UTC).date().isoformat()
    # A registry on loopback is refused by the prober's network guard before any connection: the run fails.
    assert main(["run", "--day", today, "--registry", "http://127.0.0.1:9", "--lake", str(lake.root)]) == 1
    captured = capfd.readouterr()  # at the file descriptors: the code server and the run print there too
    lines = captured.err.strip().splitlines()
    assert len(lines) == 3 and "Traceback" not in captured.err and "dagster - ERROR" not in captured.err
    assert lines[0].startswith("run ") and lines[0].endswith(f"FAILED for {today}:")
    # The map's one step (daily_map), then the asset that failed in it.
    assert lines[1] == ("  daily_map: raw_probes: sevenmaps_pipeline.probe.netguard.RefusedAddress: 127.0.0.1 "
                        "resolves to a non-public address (127.0.0.1); not contacted")
    assert lines[2].startswith("  the whole log: `sevenmaps ui`, Runs, ")


def test_ui_refuses_a_port_in_use_in_one_line(lake, tmp_path, monkeypatch, capsys):
    import socket

    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    with socket.socket() as other_ui:
        other_ui.bind(("127.0.0.1", 0))
        other_ui.listen()
        port = other_ui.getsockname()[1]
        # `dagster dev` would be started (and would keep running with its webserver failed to bind): refused first.
        assert main(["ui", "--port", str(port), "--lake", str(lake.root)]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert line.startswith(f"error: 127.0.0.1:{port} is not free for the UI (") and "--port N" in line
    assert not (tmp_path / "home").exists()  # nothing was set up for a UI that did not start
    assert main(["ui", "--port", "70000", "--lake", str(lake.root)]) == 2
    assert "(not a port number)" in _one_error_line(capsys.readouterr().err)


def test_bench_runs_each_part_in_a_process_of_its_own_and_names_a_part_that_failed(capfd, tmp_path):
    """`sevenmaps bench` without --only: every part a fresh process (no part's figures carry an earlier
    part's heap), all of them run even when one fails, and the failure is named with its exit code; each
    appends to the history --history names."""
    import argparse

    from sevenmaps_pipeline.cli import _bench_each_part_apart

    args = argparse.Namespace(servers=10, days=2, seed=1, endpoints=10, probe_median_ms=150, probe_rounds=1,
                              registry_endpoints=10, registry_concurrency=4, cpu_hog=0, serve_calls=5, lake_shape="toy",
                              history=str(tmp_path / "h.jsonl"))
    code = _bench_each_part_apart(args, parts=("no-such-part", "risk"))
    out, err = capfd.readouterr()
    assert code == 2
    assert "[bench] the no-such-part benchmark ended with exit code 2" in out
    assert "invalid choice: 'no-such-part'" in err
    assert "green" in out and "red" in out  # the risk part still ran, after the failure, in its own process
    assert [json.loads(line)["part"] for line in (tmp_path / "h.jsonl").read_text().splitlines()] == ["risk"]


@pytest.mark.parametrize(("args", "env_port", "port"), [([], None, "8765"), (["PORT=9000"], None, "9000"),
                                                        ([], "9100", "9100")])
def test_make_serve_takes_its_port_as_make_ui_does(args, env_port, port):
    """`make serve PORT=N` serves on N, as `make ui PORT=N` does (it served on 8765 whatever PORT said): the
    command make would run, printed (-n), never run."""
    env = {k: v for k, v in os.environ.items() if k != "PORT"} | ({"PORT": env_port} if env_port else {})
    done = subprocess.run(["make", "-n", "--no-print-directory", "serve", *args], cwd=PROJECT_ROOT, env=env,
                          capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1].endswith(f"sevenmaps serve --port {port}")


def test_a_backfill_maps_and_signs_the_finished_days_then_maps_the_open_day_in_a_run_of_its_own():
    """A run reaching the open day records the finished days without their data versions (defs/day_map.py), so
    `sevenmaps backfill` never mixes them: the finished days' map, their signing, then the open day alone."""
    today = dt.date(2026, 12, 7)
    d = [today - dt.timedelta(days=i) for i in range(4)]  # today, yesterday, ...
    assert backfill_runs(d[3], today + dt.timedelta(days=2), today, sign=True) == [
        ("daily_map_job", d[3], d[1]), ("sign_day_job", d[3], d[1]), ("daily_map_job", today, today)]
    assert backfill_runs(d[3], d[2], today, sign=True) == [("daily_map_job", d[3], d[2]), ("sign_day_job", d[3], d[2])]
    assert backfill_runs(d[3], today, today, sign=False) == [("daily_map_job", d[3], d[1]),
                                                             ("daily_map_job", today, today)]
    assert backfill_runs(today, today, today, sign=True) == [("daily_map_job", today, today)]


def test_a_tools_name_never_reaches_the_terminal_as_an_escape(lake, capsys):
    """helpers 83 and 84: `sevenmaps server` printed a tool's name and a server's version as sent, so an escape
    sequence coloured or rewrote the operator's terminal (and an OSC 8 link, a bell), and a zero-width space made
    one name pass for another. Each such character is shown as its code."""
    from conftest import land_probes, probe

    from sevenmaps_pipeline.curated.day import rebuild_day

    tools = [{"name": "get\x1b[31m_alerts\x07", "description": "d", "inputSchema": {"type": "object"}},
             {"name": "get\u200b_forecast", "description": "d", "inputSchema": {"type": "object"}}]
    land_probes(lake, [probe("https://evil.example.com/mcp", "ok", tools=tools)])
    rebuild_day(lake, DAY)
    assert main(["server", "evil.example.com/mcp", "--day", DAY.isoformat(), "--lake", str(lake.root)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\u200b" not in out
    assert "get\\x1b[31m_alerts\\x07" in out and "get\\u200b_forecast" in out
