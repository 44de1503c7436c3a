"""Hourly checks of the most used endpoints and five-minute checks of owner-chosen ones (docs/operations.md):
their own raw kinds, never a day code; `current_status` (one failed hourly check changes nothing shown, two
in a row do); owner claims and `five_minute_uptime`. Through Dagster where a schedule decides."""

from __future__ import annotations

import copy
import datetime as dt
import json

import dagster as dg
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import land_registry, land_reports, probe, report

from sevenmaps_pipeline import curated
from sevenmaps_pipeline.cli import main
from sevenmaps_pipeline.defs.frequent_assets import five_minute_schedule
from sevenmaps_pipeline.defs.runner import run_partition
from sevenmaps_pipeline.devtools.fleet.run import Fleet, load_timeline
from sevenmaps_pipeline.devtools.fleet.scripted import Scripted, ScriptedApp
from sevenmaps_pipeline.lake import duck
from sevenmaps_pipeline.lake.keys import server_id
from sevenmaps_pipeline.lake.parquet_io import write_parquet
from sevenmaps_pipeline.lake.schemas import DAILY_STATUS, RAW_FIVE_MINUTE, RAW_HOURLY, conform
from sevenmaps_pipeline.lake.warehouse import publish_warehouse
from sevenmaps_pipeline.probe.config import ProbeConfig
from sevenmaps_pipeline.probe.frequent import NOT_REACHED, frequent_checks
from sevenmaps_pipeline.probe.run import ReplayClock, scan_day
from sevenmaps_pipeline.registry import opt_outs, owners

DAY = dt.date(2026, 11, 20)
PROOF = "mcp.proof.test"


def _daily(lake, day, codes: dict[str, str], at: dt.datetime) -> None:
    rows = [{"day": day, "server_key": k, "server_id": server_id(k), "code": c, "url": f"https://{k}",
             "outcome": {"o": "ok", "d": "timeout"}[c], "checked_at": at, "method_version": "test",
             "tool_count": 1 if c == "o" else None,  # an ok check lists its tools (the prober's rows always say)
             "shown_status": {"o": "answers with tools", "d": "down"}[c]} for k, c in codes.items()]
    write_parquet(lake, lake.curated_file("daily_status", day),
                  conform(pa.Table.from_pylist(rows, DAILY_STATUS.schema), DAILY_STATUS))


def _hourly(lake, day, rows: list[dict]) -> None:
    write_parquet(lake, lake.root / f"raw/hourly/day={day}/hourly-test.parquet",
                  conform(pa.Table.from_pylist(rows, RAW_HOURLY.schema), RAW_HOURLY))


def _current(lake) -> dict[str, tuple]:
    publish_warehouse(lake, force=True)
    with duck.connect(str(lake.warehouse), read_only=True) as con:
        return {r[0]: r[1:] for r in con.execute(
            "SELECT server_key, current_code, current_shown_status, decided_by, unconfirmed_failure "
            "FROM current_status").fetchall()}


def test_one_failed_hourly_check_changes_nothing_shown_and_two_in_a_row_do(lake):
    at = dt.datetime.combine(DAY, dt.time(3), dt.UTC)
    _daily(lake, DAY, {"flap.example.com/mcp": "o", "fails.example.com/mcp": "o", "back.example.com/mcp": "d",
                       "once.example.com/mcp": "o", "old.example.com/mcp": "o"}, at)

    def h(host: str, outcome: str, hour: int, **extra) -> dict:
        return probe(f"https://{host}/mcp", outcome, day=DAY, hour=hour, check_kind="hourly", **extra)

    _hourly(lake, DAY, [
        h("flap.example.com", "timeout", 5), h("flap.example.com", "ok", 6),   # a flap, then an answer
        h("fails.example.com", "timeout", 5), h("fails.example.com", "unreachable", 6),  # two in a row
        h("back.example.com", "ok", 5),  # an answer replaces a down day at once
        h("once.example.com", "ok", 5), h("once.example.com", "http_500", 6),  # one failure: not shown yet
        h("old.example.com", "timeout", 1), h("old.example.com", "timeout", 2),  # older than the daily check
        h("once.example.com", "skipped", 7, skip_reason="host opted out"),  # not a result
    ])
    current = _current(lake)
    assert current["flap.example.com/mcp"] == ("o", "answers with tools", "hourly", False)
    assert current["fails.example.com/mcp"] == ("d", "down", "hourly", False)
    assert current["back.example.com/mcp"] == ("o", "answers with tools", "hourly", False)
    assert current["once.example.com/mcp"] == ("o", "answers with tools", "hourly", True)
    assert current["old.example.com/mcp"] == ("o", "answers with tools", "daily", False)
    # Hourly checks never reach a day code: daily_status reads daily checks only.
    land_registry(lake, ["https://fails.example.com/mcp"], day=DAY)
    curated.build_daily_status(lake, DAY)
    (row,) = pq.read_table(lake.curated_file("daily_status", DAY)).to_pylist()
    assert row["code"] == "n"  # no daily check landed: the two hourly failures are not a day code


def test_a_torn_hourly_batch_of_a_day_not_built_stops_neither_the_warehouse_nor_the_map(lake, caplog):
    """helper-83: a torn file of today's hourly checks stopped every view of the warehouse (DuckDB reads each file's
    footer to make a view), so the map job of yesterday failed, and the map's server and `sevenmaps server` failed
    at it. The readers now leave a file whose footer does not read out, and say so; its day's build moves it out."""
    from sevenmaps_pipeline.publishing.mapday import MapDay

    at = dt.datetime.combine(DAY, dt.time(3), dt.UTC)
    _daily(lake, DAY, {"flap.example.com/mcp": "o"}, at)
    _hourly(lake, DAY, [probe("https://flap.example.com/mcp", "timeout", day=DAY, hour=h, check_kind="hourly")
                        for h in (5, 6)])
    torn = lake.root / f"raw/hourly/day={DAY + dt.timedelta(days=1)}/hourly-torn.parquet"
    torn.parent.mkdir(parents=True)
    torn.write_bytes(b"PAR1 torn in the write")
    current = _current(lake)  # publish_warehouse(force=True), then the views read
    assert current["flap.example.com/mcp"][:3] == ("d", "down", "hourly")
    assert "leave out 1 unreadable file(s)" in caplog.text and str(torn) in caplog.text
    with duck.connect(str(lake.warehouse), read_only=True) as con:
        (comment,) = con.execute("SELECT comment FROM duckdb_views() WHERE view_name = 'hourly_checks'").fetchone()
    assert comment.endswith(f"Left out, unreadable: {torn}")
    assert not (lake.root / ".warehouse.sha256").exists()  # the next publish tries the globs again
    with MapDay.open(lake, DAY, live=True) as mapday:
        assert torn not in mapday.hourly_files() and len(mapday.hourly_files()) == 1
    # helper-86: the views then read a fixed list of files, so a day folder gone since (retention) stopped them; a
    # reader opening the warehouse rebuilds it first, and sees a batch that landed since
    import shutil

    shutil.rmtree(lake.root / f"raw/hourly/day={DAY}")
    _hourly(lake, DAY + dt.timedelta(days=1), [probe("https://flap.example.com/mcp", "ok", day=DAY + dt.timedelta(
        days=1), hour=1, check_kind="hourly")])
    from sevenmaps_pipeline.lake.warehouse import open_warehouse

    with open_warehouse(lake) as con:
        assert con.execute("SELECT count(*) FROM hourly_checks").fetchone() == (1,)


@pytest.fixture(scope="module")
def fleet():
    timeline = copy.deepcopy(load_timeline())
    keep = ("weather", "notes", "robots", "optout", "sleepy", "calendar")
    timeline["servers"] = [s for s in timeline["servers"] if s["name"] in keep]
    for server in timeline["servers"]:
        server["listed"] = True
    timeline["extra_listings"], timeline["opted_out_hosts"] = [], []
    proof = ScriptedApp()
    with Fleet(timeline=timeline, slow_seconds=3, extra_apps={PROOF: proof}) as running:
        running.proof = proof
        yield running


def _prober(fleet, at: str, **extra) -> dict:
    return {"registry_url": fleet.registry_url, "host_map_json": json.dumps(fleet.host_map),
            "ca_file": str(fleet.ca_file), "replay_day": at, "readiness": False, **extra}


def _config(fleet) -> ProbeConfig:
    return ProbeConfig(host_map=fleet.host_map, ca_file=fleet.ca_file)


def test_hourly_checks_of_the_most_used_endpoints_through_dagster(fleet, lake, tmp_path):
    scan_day(lake, DAY, fleet.registry_url, _config(fleet), ReplayClock(DAY, 3))  # the day's snapshot and checks
    curated.build_quarantine(lake, DAY)
    curated.build_daily_status(lake, DAY)
    before = pq.read_table(lake.curated_file("daily_status", DAY)).to_pylist()
    # Agents reported on weather the day before; the operator's directory list names notes, robots, optout.
    yesterday = DAY - dt.timedelta(days=1)
    land_registry(lake, ["https://mcp.weather.test/mcp"], day=yesterday)
    curated.build_daily_status(lake, yesterday)  # reports name endpoints on the map
    land_reports(lake, [report("mcp.weather.test/mcp", day=yesterday, who=f"r{i}") for i in range(3)], day=yesterday)
    curated.build_agent_reports(lake, yesterday)
    lists = tmp_path / "directories.txt"
    lists.write_text("# the operator's copy of the directories\nclaude https://mcp.notes.test/mcp\n"
                     "chatgpt https://mcp.robots.test/mcp\nhttps://mcp.optout.test/mcp\nnot a url\n")
    opt_outs.record_opt_out(lake, "mcp.optout.test", "operator", dt.datetime.combine(DAY, dt.time(1), dt.UTC))
    requests_before = len(fleet.requests_to("mcp.optout.test"))
    prober = _prober(fleet, f"{DAY}T14", directory_lists=str(lists))
    with dg.DagsterInstance.ephemeral() as instance:
        run = run_partition("hourly_check_job", f"{DAY}-14:00", instance, lake.root, prober=prober)
        assert run.success
        (event,) = run.get_asset_materialization_events()
        assert event.materialization.metadata["endpoints_chosen"].value == 4
        rows = {r["server_key"]: r for path in sorted((lake.root / f"raw/hourly/day={DAY}").glob("*.parquet"))
                for r in pq.read_table(path).to_pylist()}
        assert set(rows) == {"mcp.weather.test/mcp", "mcp.notes.test/mcp", "mcp.robots.test/mcp",
                             "mcp.optout.test/mcp"}
        assert {r["check_kind"] for r in rows.values()} == {"hourly"}
        assert rows["mcp.weather.test/mcp"]["outcome"] == "ok" and rows["mcp.notes.test/mcp"]["outcome"] == "ok"
        assert rows["mcp.robots.test/mcp"]["skip_reason"].startswith("robots.txt disallows")
        assert rows["mcp.optout.test/mcp"]["skip_reason"] == "host opted out"
        assert len(fleet.requests_to("mcp.optout.test")) == requests_before  # never contacted
        assert [r["path"] for r in fleet.requests_to("mcp.robots.test")][-1] == "/robots.txt"
        # Weather goes down: one failed hourly check changes nothing shown; the second in a row does.
        fleet.state.by_server["weather"].state = "http_500"
        try:
            for hour in (15, 16):
                assert run_partition("hourly_check_job", f"{DAY}-{hour}:00", instance, lake.root,
                                     prober={**prober, "replay_day": f"{DAY}T{hour}"}).success
                code, shown, by, unconfirmed = _current(lake)["mcp.weather.test/mcp"]
                assert (code, by, unconfirmed) == (("o", "hourly", True) if hour == 15 else ("d", "hourly", False))
        finally:
            fleet.state.by_server["weather"].state = "up"
        # An hour that has passed is never checked.
        late = run_partition("hourly_check_job", f"{DAY}-10:00", instance, lake.root, prober=prober)
        assert late.success and not late.get_asset_materialization_events()
    curated.build_daily_status(lake, DAY)
    assert pq.read_table(lake.curated_file("daily_status", DAY)).to_pylist() == before  # no day code moved


def test_an_owner_proves_control_adds_a_note_and_chooses_five_minute_endpoints(fleet, lake, capsys):
    resolve = ["--resolve", f"{PROOF}:{fleet.port}", "--ca-file", str(fleet.ca_file)]
    assert main(["--lake", str(lake.root), "owner", "issue", PROOF]) == 0
    token = owners.claim_of(lake, PROOF).token
    assert token in capsys.readouterr().out
    assert main(["--lake", str(lake.root), "owner", "note", PROOF, "--text", "hi"]) == 2  # not verified yet
    fleet.proof.reset({"GET /.well-known/7maps-owner.txt": Scripted(200, body=b"7maps-owner-someone-else\n")})
    assert main(["--lake", str(lake.root), "owner", "verify", PROOF, *resolve]) == 1
    fleet.proof.reset({"GET /.well-known/7maps-owner.txt": Scripted(200, body=f"{token}\n".encode())})
    assert main(["--lake", str(lake.root), "owner", "verify", PROOF, *resolve]) == 1  # no text/plain: not proof
    fleet.proof.reset({"GET /.well-known/7maps-owner.txt": Scripted(200, [("content-type", "text/plain")],
                                                                     f"{token}\n".encode())})
    assert main(["--lake", str(lake.root), "owner", "verify", PROOF, *resolve]) == 0
    assert owners.claim_of(lake, PROOF).status == "verified"
    note = "We deploy on Tuesdays,\n 09:00 UTC."
    assert main(["--lake", str(lake.root), "owner", "note", PROOF, "--text", note]) == 0
    assert owners.claim_of(lake, PROOF).note == "We deploy on Tuesdays, 09:00 UTC."
    # At most three endpoints, all on the owner's own host.
    urls = [f"https://{PROOF}/mcp{i}" for i in range(4)]
    args = [a for u in urls for a in ("--url", u)]
    assert main(["--lake", str(lake.root), "owner", "five-minute", PROOF, *args]) == 2
    assert main(["--lake", str(lake.root), "owner", "five-minute", PROOF, "--url", "https://mcp.weather.test/mcp"]) == 2
    assert main(["--lake", str(lake.root), "owner", "five-minute", PROOF, *args[:6]]) == 0
    assert owners.five_minute_keys(lake) == {f"{PROOF}/mcp{i}": PROOF for i in range(3)}
    # The note is shown beside the host's endpoints (a view over the control file), never in a figure.
    land_registry(lake, [f"https://{PROOF}/mcp0"], day=DAY)
    _daily(lake, DAY, {f"{PROOF}/mcp0": "o"}, dt.datetime.combine(DAY, dt.time(3), dt.UTC))
    # A claim kept from before hosts were checked, its host a LIKE pattern: it matches no endpoint (matches are
    # exact: the host itself or a name under it).
    at = dt.datetime.combine(DAY, dt.time(3), dt.UTC)
    forged = owners.OwnerClaim("%.test", "verified", "t", at, at, (), "not theirs", at)
    owners._write(lake, [*owners.read_claims(lake), forged])
    publish_warehouse(lake, force=True)
    with duck.connect(str(lake.warehouse), read_only=True) as con:
        assert con.execute("SELECT server_key, owner_host, note FROM owner_notes").fetchall() == [
            (f"{PROOF}/mcp0", PROOF, "We deploy on Tuesdays, 09:00 UTC.")]


def _claim(lake, host: str, urls: list[str], now: dt.datetime) -> None:
    """An owner whose proof was seen (the CLI's `owner verify` is tested above against a real host)."""
    owners.issue_owner_token(lake, host, now)
    owners.mark_verified(lake, host, now)
    owners.choose_five_minute(lake, host, urls)


def test_five_minute_checks_skip_what_they_cannot_reach_and_never_overlap(fleet, lake, tmp_path):
    now = dt.datetime.combine(DAY, dt.time(9), dt.UTC)
    scan_day(lake, DAY, fleet.registry_url, _config(fleet), ReplayClock(DAY, 3))
    _claim(lake, "mcp.calendar.test", ["https://mcp.calendar.test/mcp"], now)
    _claim(lake, "sleepy.test", ["https://mcp.sleepy.test/mcp"], now)
    # robots.txt is not read again for an owner's own endpoints.
    robots_before = [r for r in fleet.requests_to("mcp.calendar.test") if r["path"] == "/robots.txt"]
    (tmp_path / "home").mkdir()
    # A schedule's context needs an instance with a reference to open again: one on disk.
    with dg.instance_for_test(temp_dir=str(tmp_path / "home")) as instance:
        at = dt.datetime.combine(DAY, dt.time(9, 5), dt.UTC)
        context = dg.build_schedule_context(instance=instance, scheduled_execution_time=at)
        request = five_minute_schedule(context)
        assert isinstance(request, dg.RunRequest)
        from sevenmaps_pipeline.definitions import defs

        result = defs.resolve_job_def("five_minute_job").execute_in_process(
            instance=instance, run_config={"resources": {"lake": {"config": {"root": str(lake.root)}},
                                                         "prober": {"config": _prober(fleet, f"{DAY}T09")}}})
        assert result.success
        # A run still in flight: the next tick is skipped, so runs never overlap.
        instance.add_run(dg.DagsterRun(job_name="five_minute_job", run_id="in-flight-run",
                                       status=dg.DagsterRunStatus.STARTED))
        skipped = five_minute_schedule(dg.build_schedule_context(instance=instance,
                                                                 scheduled_execution_time=at + dt.timedelta(minutes=5)))
        assert isinstance(skipped, dg.SkipReason) and "still in flight" in skipped.skip_message
    rows = {r["server_key"]: r for p in (lake.root / f"raw/five_minute/day={DAY}").glob("*.parquet")
            for r in pq.read_table(p).to_pylist()}
    calendar = rows["mcp.calendar.test/mcp"]
    assert (calendar["outcome"], calendar["check_kind"]) == ("ok", "five_minute")
    assert [r for r in fleet.requests_to("mcp.calendar.test") if r["path"] == "/robots.txt"] == robots_before
    # The run's window: a check it cannot start before the window closes is skipped, never down; a check
    # longer than its 30 s (here: the slow server beyond a 1 s cap) is a timeout.
    config = ProbeConfig(host_map=fleet.host_map, ca_file=fleet.ca_file)
    import dataclasses

    from sevenmaps_pipeline.probe.config import Timeouts
    capped = dataclasses.replace(config, timeouts=dataclasses.replace(Timeouts(), check_overall=1.0))
    both = {"mcp.sleepy.test/mcp": "sleepy.test", "mcp.calendar.test/mcp": "mcp.calendar.test"}
    run = frequent_checks(lake, "five_minute", both, capped, ReplayClock(DAY, 9), window_seconds=0.0001)
    assert run.outcomes == {"skipped": 2}
    table = pq.read_table(run.path).to_pylist()
    assert {r["skip_reason"] for r in table} == {NOT_REACHED}
    run = frequent_checks(lake, "five_minute", both, capped, ReplayClock(DAY, 9))
    by_key = {r["server_key"]: r for r in pq.read_table(run.path).to_pylist()}
    assert by_key["mcp.sleepy.test/mcp"]["outcome"] == "timeout" and "1 s overall" in \
        by_key["mcp.sleepy.test/mcp"]["outcome_detail"]
    # Uptime over 30 days: skipped checks are counted apart, never as down.
    publish_warehouse(lake, force=True)
    with duck.connect(str(lake.warehouse), read_only=True) as con:
        uptime = {r[0]: r[1:] for r in con.execute(
            "SELECT server_key, checks_30d, answered_30d, not_counted_30d, uptime_30d_pct, uptime_90d_pct "
            "FROM five_minute_uptime").fetchall()}
    assert uptime["mcp.calendar.test/mcp"] == (2, 2, 1, 100.0, None)
    checks, answered, not_counted, pct, _ = uptime["mcp.sleepy.test/mcp"]
    assert not_counted == 1 and answered < checks and pct < 100.0


def test_five_minute_uptime_shows_90_days_only_once_older_checks_exist(lake):
    def rows(day: dt.date, ok: bool) -> list[dict]:
        return [probe("https://mcp.a.example.com/mcp", "ok" if ok else "timeout", day=day, hour=12,
                      check_kind="five_minute")]

    recent, old = DAY, DAY - dt.timedelta(days=45)
    for day, ok in ((recent, True), (recent - dt.timedelta(days=1), True)):
        write_parquet(lake, lake.root / f"raw/five_minute/day={day}/r.parquet",
                      conform(pa.Table.from_pylist(rows(day, ok), RAW_FIVE_MINUTE.schema), RAW_FIVE_MINUTE))
    publish_warehouse(lake, force=True)
    with duck.connect(str(lake.warehouse), read_only=True) as con:
        assert con.execute("SELECT uptime_30d_pct, uptime_90d_pct FROM five_minute_uptime").fetchone() == (100.0, None)
    write_parquet(lake, lake.root / f"raw/five_minute/day={old}/r.parquet",
                  conform(pa.Table.from_pylist(rows(old, False), RAW_FIVE_MINUTE.schema), RAW_FIVE_MINUTE))
    publish_warehouse(lake, force=True)
    with duck.connect(str(lake.warehouse), read_only=True) as con:
        assert con.execute("SELECT uptime_30d_pct, checks_90d, uptime_90d_pct FROM five_minute_uptime").fetchone() \
            == (100.0, 3, 66.6)


def test_one_bad_line_of_a_directory_list_is_named_and_the_rest_are_read(tmp_path):
    """helper-83: a line whose URL names no endpoint (`https://[::1/mcp`) dropped the whole list with "Invalid IPv6
    URL", naming no line; a URL with a secret in its query was read as an endpoint to check."""
    from sevenmaps_pipeline.registry.most_used import read_directory_lists

    listed = tmp_path / "lists.txt"
    listed.write_text("claude https://a.example.com/mcp\nclaude https://[::1/mcp\n"
                      "https://b.example.com/mcp?api_key=LIVEKEY1\ncursor https://c.example.com/mcp\n")
    lists = read_directory_lists(listed)
    assert lists.keys == {"a.example.com/mcp": "claude", "c.example.com/mcp": "cursor"}
    assert [p.split(":")[0] for p in lists.problems] == ["line 2", "line 3"]
    assert "not a URL that names an endpoint" in lists.problems[0] and "carries credentials" in lists.problems[1]
