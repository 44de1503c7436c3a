"""daily_status on hand-made raw probes: codes, the deciding check, voided runs, skips, quarantine."""

from __future__ import annotations

import asyncio
import datetime as dt
import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import DAY, land_probes, land_registry, probe
from mcp.server.mcpserver import MCPServer

from sevenmaps_pipeline import curated
from sevenmaps_pipeline.devtools.fleet.apps import security_for
from sevenmaps_pipeline.devtools.fleet.run import Fleet
from sevenmaps_pipeline.lake.keys import server_key
from sevenmaps_pipeline.probe.config import ProbeConfig
from sevenmaps_pipeline.probe.frequent import listings_for
from sevenmaps_pipeline.probe.report import probe_one
from sevenmaps_pipeline.probe.scan import endpoints_to_check, probe_row
from sevenmaps_pipeline.rules.methods import STATUS_PARAMS

EMPTY_HOST = "mcp.empty.test"


def status_rows(lake, day=DAY) -> dict[str, dict]:
    curated.build_quarantine(lake, day)
    curated.build_daily_status(lake, day)
    rows = pq.read_table(lake.curated_file("daily_status", day)).to_pylist()
    return {r["server_key"]: r for r in rows}


@pytest.mark.parametrize(
    ("outcome", "http", "code", "shown"),
    [
        ("ok", 200, "o", "answers with tools"),
        ("needs_auth", 401, "a", "answers, asks for sign-in"),
        ("needs_auth", 403, "a", "answers, asks for sign-in"),
        ("http_402", 402, "p", "answers, asks for payment"),
        ("timeout", None, "d", "down"),
        ("unreachable", None, "d", "down"),
        ("redirect", 302, "d", "down"),
        ("http_500", 500, "d", "down"),
        ("rpc_error", 200, "d", "down"),
        ("no_tool_list", 200, "d", "down"),
        ("http_400", 400, "d", "answers, but not as a standard MCP endpoint"),
        ("http_405", 405, "d", "answers, but not as a standard MCP endpoint"),
        ("not_mcp", 200, "d", "answers, but not as a standard MCP endpoint"),
    ],
)
def test_outcome_gives_day_code_and_shown_status(lake, outcome, http, code, shown):
    land_probes(lake, [probe("https://a.example.com/mcp", outcome, http_status=http)])
    row = status_rows(lake)["a.example.com/mcp"]
    assert (row["code"], row["shown_status"], row["outcome"]) == (code, shown, outcome)
    assert row["method_version"] == "status-1.7"


def test_an_empty_tool_list_is_an_answer_shown_as_one_not_as_tools(lake):
    # status-1.2: the day code stays o (it answered, and uptime counts it), the shown status says what it listed.
    land_probes(lake, [probe("https://a.example.com/mcp", "ok", tools=[]), probe("https://b.example.com/mcp", "ok")])
    rows = status_rows(lake)
    empty, listed = rows["a.example.com/mcp"], rows["b.example.com/mcp"]
    assert (empty["code"], empty["tool_count"], empty["shown_status"]) == ("o", 0, "answers, lists no tools")
    assert (listed["code"], listed["shown_status"]) == ("o", "answers with tools") and listed["tool_count"] > 0


def test_the_official_sdk_server_with_no_tools_is_an_answer_shown_as_one(lake):
    # A real server: the official SDK's MCPServer with no tool registered answers tools/list with an empty list.
    app = MCPServer("empty", version="1.0.0").streamable_http_app(host=EMPTY_HOST,
                                                                   transport_security=security_for(EMPTY_HOST))
    with Fleet(extra_apps={EMPTY_HOST: app}) as fleet:
        check, _origin, _refused = asyncio.run(probe_one(f"https://{EMPTY_HOST}/mcp", ProbeConfig(
            host_map=fleet.host_map, ca_file=fleet.ca_file)))
    assert (check.outcome, check.tools) == ("ok", []), check.outcome_detail
    day = check.started_at.date()
    land_probes(lake, [probe_row(check, {"server_name": "io.test/empty"}, day, "run-1")], day=day)
    row = status_rows(lake, day)[server_key(check.url)]
    assert (row["code"], row["tool_count"], row["shown_status"]) == ("o", 0, "answers, lists no tools")


def test_last_completed_daily_check_decides_and_hourly_checks_never_do(lake):
    url = "https://a.example.com/mcp"
    land_probes(lake, [probe(url, "timeout", hour=2, run_id="early")], run_id="early")
    land_probes(lake, [probe(url, "ok", hour=9, run_id="late"),
                       probe(url, "timeout", hour=10, run_id="late", check_kind="hourly"),
                       probe(url, "unreachable", hour=11, run_id="late", check_kind="five_minute")], run_id="late")
    row = status_rows(lake)["a.example.com/mcp"]
    assert row["code"] == "o"
    assert row["run_id"] == "late"


def test_failed_control_check_voids_the_run_so_the_day_is_n_never_d(lake):
    land_probes(lake, [probe("https://a.example.com/mcp", "timeout"),
                       probe("https://control.7maps.test/mcp", "unreachable", check_kind="control")])
    row = status_rows(lake)["a.example.com/mcp"]
    assert row["code"] == "n"
    assert row["outcome"] is None
    assert "control check failed" in row["reason"]


def test_mass_network_failure_in_one_minute_is_our_outage(lake):
    # 24 unrelated origins fail in the same minute of one run: voided (n). One real answer stays o, and a
    # failure in a calm minute stays d.
    rows = [probe(f"https://s{i}.example{i}.com/mcp", "unreachable", hour=4, minute=7, second=i) for i in range(24)]
    rows.append(probe("https://up.example.org/mcp", "ok", hour=4, minute=7, second=30))
    rows.append(probe("https://calm.example.net/mcp", "timeout", hour=5, minute=0))
    land_probes(lake, rows)
    status = status_rows(lake)
    assert {status[f"s{i}.example{i}.com/mcp"]["code"] for i in range(24)} == {"n"}
    assert "failed in the same minute" in status["s0.example0.com/mcp"]["reason"]
    assert status["up.example.org/mcp"]["code"] == "o"
    assert status["calm.example.net/mcp"]["code"] == "d"


def test_a_few_failures_in_one_minute_are_not_voided(lake):
    rows = [probe(f"https://s{i}.example{i}.com/mcp", "unreachable", minute=7, second=i) for i in range(5)]
    land_probes(lake, rows)
    assert {r["code"] for r in status_rows(lake).values()} == {"d"}


def test_listed_but_unchecked_is_n_and_skips_are_off_the_map(lake):
    land_registry(lake, ["https://checked.example.com/mcp", "https://unchecked.example.com/mcp",
                         "http://plain.example.com/mcp", "https://robots.example.com/mcp"],
                  skip={"http://plain.example.com/mcp": "non-https URL"})
    land_probes(lake, [probe("https://checked.example.com/mcp", "ok"),
                       probe("https://robots.example.com/mcp", "skipped", skip_reason="robots.txt disallows")])
    status = status_rows(lake)
    assert set(status) == {"checked.example.com/mcp", "unchecked.example.com/mcp"}
    assert status["unchecked.example.com/mcp"]["code"] == "n"
    assert status["unchecked.example.com/mcp"]["reason"] == "no daily check"


def test_an_endpoint_skipped_at_its_last_check_stays_off_the_map_on_a_day_without_a_run(lake):
    before = DAY - dt.timedelta(days=1)
    land_registry(lake, ["https://robots.example.com/mcp", "https://fine.example.com/mcp"], day=before)
    land_probes(lake, [probe("https://robots.example.com/mcp", "skipped", day=before),
                       probe("https://fine.example.com/mcp", "ok", day=before)], day=before)
    status = status_rows(lake, DAY)  # nothing landed on DAY at all
    assert set(status) == {"fine.example.com/mcp"}
    assert status["fine.example.com/mcp"]["code"] == "n"



def test_an_invalid_earlier_check_never_brings_a_skipped_endpoint_back_onto_the_map(lake):
    """The earlier checks looked up for listed endpoints left unchecked today obey the raw rows' rules too:
    a later row with a problem (here an ok without a tool list, then a made-up outcome) is not their last check."""
    two_before, before = DAY - dt.timedelta(days=2), DAY - dt.timedelta(days=1)
    land_registry(lake, ["https://robots.example.com/mcp"], day=two_before)
    land_probes(lake, [probe("https://robots.example.com/mcp", "skipped", day=two_before)], day=two_before)
    land_probes(lake, [probe("https://robots.example.com/mcp", "ok", day=before, tools_hash=None),
                       probe("https://robots.example.com/mcp", "exploded", day=before, hour=5)], day=before)
    assert status_rows(lake, DAY) == {}
    # The same later check, valid, puts it back on the map (n: not checked today).
    land_probes(lake, [probe("https://robots.example.com/mcp", "timeout", day=before, hour=6)], day=before,
                run_id="run-2")
    assert status_rows(lake, DAY)["robots.example.com/mcp"]["code"] == "n"

def test_an_endpoint_listed_under_several_names_carries_the_same_one_checked_or_not(lake):
    """status-1.4, the demo's weather endpoint: listed as test.weather/weather and, later in the registry's
    order, as test.snake/legacy-record (a URL written otherwise, the same endpoint). The prober checks it once,
    under the listing the day's row names it by (probe/scan.py endpoints_to_check), whatever the registry's
    order; so does the next day, a missed one. Neither namespace owns the host here (`mcp.weather.example`), so
    the first active listing by name names it, as under 1.3 (the demo's `mcp.weather.test` is owned by
    test.weather: tests/test_surfaces_demo.py)."""
    weather, legacy, renamed = ("https://mcp.weather.example/mcp", "https://MCP.Weather.example/mcp/",
                                "https://renamed.example.com/mcp")
    registry = land_registry(lake, [weather, legacy, renamed, renamed],
                             names=["test.weather/weather", "test.snake/legacy-record", "a.old/renamed",
                                    "z.new/renamed"],
                             statuses=["active", "active", "deprecated", "active"])
    listings = pq.read_table(registry).to_pylist()
    contacted, _skipped = endpoints_to_check(listings)
    assert [listing["server_name"] for listing in contacted.values()] == ["test.snake/legacy-record", "z.new/renamed"]
    assert endpoints_to_check(listings[::-1])[0] == contacted  # the registry's order does not choose
    hourly, _not_listed = listings_for(lake, DAY, set(contacted))  # the hourly checks take the same listings
    assert sorted(listing["server_name"] for listing in hourly) == ["test.snake/legacy-record", "z.new/renamed"]
    land_probes(lake, [probe(listing["url"], "ok", server_name=listing["server_name"])
                       for listing in contacted.values()])
    missed = DAY + dt.timedelta(days=1)  # nothing lands: the registry of DAY is in force, nothing is checked
    for day, code in ((DAY, "o"), (missed, "n")):
        rows = status_rows(lake, day)
        named = {key: (row["server_name"], row["url"], row["code"]) for key, row in rows.items()}
        assert named == {"mcp.weather.example/mcp": ("test.snake/legacy-record", legacy, code),
                         "renamed.example.com/mcp": ("z.new/renamed", renamed, code)}, day


def test_a_skipped_endpoint_listed_twice_is_skipped_under_its_naming_listing_whatever_the_order(lake):
    """A skip row names the listing the day's row names the endpoint by (probe/scan.py naming_order), not the
    first one in the registry file."""
    url = "http://plain.example.com/mcp"
    registry = land_registry(lake, [url, url], names=["z.late/plain", "a.early/plain"],
                             skip={url: "plain http"})
    listings = pq.read_table(registry).to_pylist()
    for order in (listings, listings[::-1]):
        contacted, skipped = endpoints_to_check(order)
        assert contacted == {} and [listing["server_name"] for listing in skipped] == ["a.early/plain"]


def test_the_hourly_checks_list_what_the_day_rows_list_when_the_registry_snapshot_is_old(lake):
    """The hourly checks read the registry snapshot in force as the day's rows do (lake/paths.py
    registry_in_force, status lookback_days): with the newest snapshot 10 days old the endpoint is still listed
    on its day row and still checked each hour (an 8-day lookback of its own called it "not listed")."""
    url = "https://steady.example.com/mcp"
    land_registry(lake, [url], day=DAY - dt.timedelta(days=10))
    hourly, not_listed = listings_for(lake, DAY, {"steady.example.com/mcp", "gone.example.com/mcp"})
    assert [listing["url"] for listing in hourly] == [url] and not_listed == ["gone.example.com/mcp"]
    assert status_rows(lake, DAY)["steady.example.com/mcp"]["code"] == "n"  # listed, not checked today
    # The lookback's last day still holds it (the day rows read 29 days back and the day itself, 30 days, as
    # curated/day.py reads for freshness): both list it there, and neither a day later.
    last = DAY + dt.timedelta(days=int(STATUS_PARAMS["lookback_days"]) - 10)
    assert listings_for(lake, last, {"steady.example.com/mcp"})[1] == []
    assert status_rows(lake, last)["steady.example.com/mcp"]["code"] == "n"
    far = last + dt.timedelta(days=1)  # the snapshot 30 days old, past the lookback: neither lists it
    assert listings_for(lake, far, {"steady.example.com/mcp"}) == ([], ["steady.example.com/mcp"])
    assert status_rows(lake, far) == {}


def test_tokens_estimate_rounds_size_over_four(lake):
    tools = [{"name": "x" * 9}]  # [{"name":"xxxxxxxxx"}] = 22 bytes -> 5.5 -> 6
    land_probes(lake, [probe("https://a.example.com/mcp", "ok", tools=tools)])
    row = status_rows(lake)["a.example.com/mcp"]
    assert row["tool_list_size"] == 22
    assert row["tokens_estimate"] == 6
    assert row["tool_count"] == 1


def test_invalid_rows_are_quarantined_with_a_reason_and_never_counted(lake):
    land_probes(lake, [probe("https://good.example.com/mcp", "ok"),
                       probe("https://bad.example.com/mcp", "exploded"),
                       probe("https://neg.example.com/mcp", "timeout", handshake_ms=-5),
                       probe("https://late.example.com/mcp", "ok",
                             started_at=dt.datetime(2026, 11, 11, 1, tzinfo=dt.UTC))])
    status = status_rows(lake)
    assert set(status) == {"good.example.com/mcp"}
    refused = {r["server_key"]: r for r in pq.read_table(lake.curated_file("quarantine", DAY)).to_pylist()}
    assert refused["bad.example.com/mcp"]["problem"] == "unknown outcome 'exploded'"
    assert refused["neg.example.com/mcp"]["problem"] == "negative handshake_ms"
    assert refused["late.example.com/mcp"]["problem"] == "started_at lies outside its day"
    assert refused["bad.example.com/mcp"]["source_file"] == "raw/probes/day=2026-11-10/run-1.parquet"
    assert [refused[k]["row_number"] for k in ("bad.example.com/mcp", "neg.example.com/mcp")] == [1, 2]


def test_a_corrupt_parquet_file_is_moved_out_and_quarantined(lake):
    land_probes(lake, [probe("https://good.example.com/mcp", "ok")])
    bad = lake.raw_dir("probes", DAY) / "broken.parquet"
    bad.write_bytes(b"PAR1 this is not parquet")
    status = status_rows(lake)
    assert set(status) == {"good.example.com/mcp"}
    assert not bad.exists()
    assert (lake.quarantine_dir / "raw/probes/day=2026-11-10/broken.parquet").exists()
    refused = pq.read_table(lake.curated_file("quarantine", DAY)).to_pylist()
    assert refused[0]["source_file"] == "raw/probes/day=2026-11-10/broken.parquet"
    assert refused[0]["problem"].startswith("unreadable Parquet")
    # A day built again keeps the reason, though the file is no longer there to refuse (a signed day's rebuild
    # is then the same, byte for byte).
    kept = lake.curated_file("quarantine", DAY).read_bytes()
    curated.build_quarantine(lake, DAY)
    assert lake.curated_file("quarantine", DAY).read_bytes() == kept


def _foreign_probe_file(change):
    """One probe row of `odd.example.com`, as a table whose columns `change` alters."""
    from sevenmaps_pipeline.lake.schemas import RAW_PROBES, conform

    table = conform(pa.Table.from_pylist([probe("https://odd.example.com/mcp", "ok")], RAW_PROBES.schema), RAW_PROBES)
    return change(table)


def _retyped(name, cast):
    return lambda t: t.set_column(t.schema.get_field_index(name), name, cast(t.column(name)))


_FOREIGN_FILES = {
    "day as a timestamp": (_retyped("day", lambda c: c.cast(pa.timestamp("us"))), "column day holds timestamp values"),
    "started_at in nanoseconds": (_retyped("started_at", lambda c: c.cast(pa.timestamp("ns", tz="UTC"))),
                                  "column started_at holds timestamps of another unit or zone, not us in UTC"),
    "handshake_ms as text": (_retyped("handshake_ms", lambda c: pa.array(["250"])), "column handshake_ms holds text"),
    "handshake_ms as a float": (_retyped("handshake_ms", lambda c: pa.array([250.0])),
                                "column handshake_ms holds floating"),
    "tool_count past int32": (_retyped("tool_count", lambda c: pa.array([3_000_000_000], pa.int64())),
                              "column tool_count holds values that are no integer of its range"),
    "outcome as a struct": (_retyped("outcome", lambda c: pa.array([{"a": "ok"}])), "column outcome holds nested"),
    "a column named filename": (lambda t: t.append_column("filename", pa.array(["x"])),
                                "column(s) filename named as a Parquet reader's own"),
    "a column named file_row_number": (lambda t: t.append_column("file_row_number", pa.array([7])),
                                       "column(s) file_row_number named as a Parquet reader's own"),
}


@pytest.mark.parametrize("case", list(_FOREIGN_FILES))
def test_a_probe_file_of_other_columns_is_refused_whole_and_the_day_builds(lake, case):
    """helper-83: nothing checked a raw probe file's column types, and a day's files are read as one view: a `day`
    given as a timestamp quarantined every row of the day (and of the days whose windows read it: all n, signed), text
    or another unit in a column stopped the day's build naming no file. Such a file is now refused whole."""
    change, reason = _FOREIGN_FILES[case]
    land_probes(lake, [probe("https://good.example.com/mcp", "ok"), probe("https://down.example.com/mcp", "timeout")])
    odd = lake.raw_dir("probes", DAY) / "run-2.parquet"
    pq.write_table(_foreign_probe_file(change), odd)
    status = status_rows(lake)
    assert {k: r["code"] for k, r in status.items()} == {"good.example.com/mcp": "o", "down.example.com/mcp": "d"}
    (refused,) = pq.read_table(lake.curated_file("quarantine", DAY)).to_pylist()
    assert refused["source_file"] == "raw/probes/day=2026-11-10/run-2.parquet" and refused["row_number"] is None
    assert refused["problem"].startswith(reason) and not odd.exists()


def test_a_probe_files_own_columns_never_stand_in_for_the_rules(lake):
    """helper-83: a raw file's own `problem` column (sql/probe_validation.sql reads p.*, then its own problem) made
    a check filed under the wrong day count, and an `ok` without a list count as answering. Columns the schema does
    not name never reach a query now; the rows are judged by the rules alone."""
    from sevenmaps_pipeline.lake.schemas import RAW_PROBES, conform

    land_probes(lake, [probe("https://good.example.com/mcp", "ok")])
    late = probe("https://late.example.com/mcp", "timeout", hour=2)
    late["started_at"] = dt.datetime(2026, 11, 11, 2, tzinfo=dt.UTC)  # the next day's check, filed under this day
    nolist = probe("https://nolist.example.com/mcp", "ok", hour=23)
    nolist["tools_hash"] = None
    table = conform(pa.Table.from_pylist([late, nolist], RAW_PROBES.schema), RAW_PROBES)
    table = table.append_column("problem", pa.array([None, None], pa.string()))
    table = table.append_column("source_file", pa.array(["elsewhere", "elsewhere"]))
    pq.write_table(table, lake.raw_dir("probes", DAY) / "run-2.parquet")
    status = status_rows(lake)
    assert set(status) == {"good.example.com/mcp"}
    refused = {r["server_key"]: r for r in pq.read_table(lake.curated_file("quarantine", DAY)).to_pylist()}
    assert set(refused) == {"late.example.com/mcp", "nolist.example.com/mcp"}
    assert {r["source_file"] for r in refused.values()} == {"raw/probes/day=2026-11-10/run-2.parquet"}


@pytest.mark.parametrize("kind", ["origins", "packages", "domains", "hourly", "five_minute", "submitted"])
def test_a_torn_file_of_any_raw_kind_of_the_day_is_moved_out_and_quarantined(lake, kind):
    """helper-83: the kinds the day's build did not check (the scan's origins, the lookups, the frequent checks) kept
    a torn file: signed, and the warehouse's views (and so the day's map), the lookup tables or the nightly retention
    (helper-87) stopped at it."""
    land_probes(lake, [probe("https://good.example.com/mcp", "ok")])
    torn = lake.raw_dir(kind, DAY) / "run-9.parquet"
    torn.parent.mkdir(parents=True, exist_ok=True)
    torn.write_bytes(b"PAR1 torn")
    assert set(status_rows(lake)) == {"good.example.com/mcp"}
    (refused,) = pq.read_table(lake.curated_file("quarantine", DAY)).to_pylist()
    assert refused["source_file"] == f"raw/{kind}/day=2026-11-10/run-9.parquet"
    assert refused["problem"].startswith("unreadable Parquet") and not torn.exists()
    assert (lake.quarantine_dir / f"raw/{kind}/day=2026-11-10/run-9.parquet").is_file()


def test_failure_reasons_count_the_days_failed_checks_by_the_agent_ready_classes(lake):
    outcomes = {"http_404": ("http_404", 404), "http_405": ("http_405", 405), "down": ("unreachable", None),
                "boom": ("http_503", 503), "slow": ("timeout", None), "html": ("not_mcp", 200),
                "busy": ("http_429", 429), "rpc": ("rpc_error", 200), "nolist": ("no_tool_list", 200),
                "away": ("redirect", 302), "fine": ("ok", 200), "login": ("needs_auth", 401)}
    rows = [probe(f"https://{name}.example.com/mcp", outcome, http_status=status)
            for name, (outcome, status) in outcomes.items()]
    land_probes(lake, rows)
    curated.build_quarantine(lake, DAY)
    curated.build_daily_status(lake, DAY)
    result = curated.build_failure_reasons(lake, DAY)
    table = pq.read_table(result.path).to_pylist()
    counts = {r["reason_class"]: r["failed_checks"] for r in table}
    assert [r["label"] for r in table][:7] == [
        "HTTP 4xx error", "could not connect", "HTTP 5xx error", "no answer in time",
        "answers, but not as a standard MCP endpoint", "rate limit reached (HTTP 429)", "refused the handshake"]
    # One label per outcome class: the 405 and the non-MCP answer are the shown status of that name, and the
    # class counts exactly the endpoints daily_status shows so.
    assert counts == {"http_4xx": 1, "unreachable": 1, "http_5xx": 1, "timeout": 1, "not_mcp": 2,
                      "rate_limited": 1, "refused": 2, "redirect": 1}
    shown = pq.read_table(lake.curated_file("daily_status", DAY)).column("shown_status").to_pylist()
    assert counts["not_mcp"] == shown.count("answers, but not as a standard MCP endpoint")
    assert result.stats["failed_checks"] == 10  # ok and needs_auth are not failures
    assert {r["method_version"] for r in table} == {"failure-reasons-1.1"}
    assert abs(sum(r["share"] for r in table) - 1.0) < 1e-9


def test_a_file_whose_footer_reads_but_a_page_is_corrupt_is_unreadable(tmp_path):
    # Validation decodes every page, not only the footer.
    from sevenmaps_pipeline.curated import common
    from sevenmaps_pipeline.lake.schemas import RAW_PROBES

    path = tmp_path / "part.parquet"
    rows = [probe(f"https://s{i}.example.com/mcp", "ok") for i in range(2000)]
    pq.write_table(pa.Table.from_pylist(rows), path, compression="zstd", row_group_size=500)
    assert common.unreadable(path, RAW_PROBES.schema) is None
    data = bytearray(path.read_bytes())
    third = len(data) // 3  # page headers and data, not the footer
    data[third:2 * third] = b"\xff" * third
    path.write_bytes(bytes(data))
    assert pq.ParquetFile(path).metadata.num_rows == 2000  # the footer still reads
    problem = common.unreadable(path, RAW_PROBES.schema)
    assert problem is not None and problem.startswith("unreadable Parquet")


def test_a_damaged_file_that_passes_validation_reads_whole_in_the_map(tmp_path):
    # Whatever damage a landed file has, it is either refused or every later query reads it: bytes flipped,
    # overwritten or zeroed anywhere in a file of several row groups (a seeded, repeatable sample).
    from sevenmaps_pipeline.curated import common
    from sevenmaps_pipeline.lake import duck
    from sevenmaps_pipeline.lake.schemas import RAW_PROBES

    rows = [probe(f"https://s{i}.example.com/mcp", "ok", tools_json=f'[{{"name": "t{i % 37}"}}]')
            for i in range(1500)]
    clean = tmp_path / "clean.parquet"
    pq.write_table(pa.Table.from_pylist(rows), clean, compression="zstd", row_group_size=400)
    original = clean.read_bytes()
    rng = random.Random(20261202)
    refused = passed = 0
    for attempt in range(150):
        data = bytearray(original)
        at = rng.randrange(4, len(data) - 8)
        length = rng.randrange(1, 120)
        kind = attempt % 3
        for i in range(at, min(at + length, len(data))):
            data[i] = data[i] ^ 0x5A if kind == 0 else (rng.randrange(256) if kind == 1 else 0)
        damaged = tmp_path / f"damaged-{attempt}.parquet"
        damaged.write_bytes(bytes(data))
        if common.unreadable(damaged, RAW_PROBES.schema) is not None:
            refused += 1
            continue
        passed += 1
        with duck.session() as con:
            duck.bind_input(con, "raw_probes", [damaged], RAW_PROBES.schema)
            con.execute("SELECT * FROM raw_probes").fetchall()
    assert refused and passed  # the sample holds both kinds of damage
