"""Submitted servers (docs/operations.md, "Submitted servers"): queued by `sevenmaps submit` or the operator's
file, checked every 6 hours for 7 days, then admitted (into the next registry snapshot) or refused with the
reason, by the checks alone. Through Dagster: the submission job queues, checks and decides."""

from __future__ import annotations

import copy
import datetime as dt
import json

import dagster as dg
import pyarrow.parquet as pq
import pytest
from conftest import probe

from sevenmaps_pipeline.cli import main
from sevenmaps_pipeline.defs.runner import defs
from sevenmaps_pipeline.devtools.fleet.run import Fleet, load_timeline
from sevenmaps_pipeline.lake.control import Refused
from sevenmaps_pipeline.probe.config import ProbeConfig
from sevenmaps_pipeline.probe.frequent import frequent_checks
from sevenmaps_pipeline.probe.run import ReplayClock, scan_day
from sevenmaps_pipeline.registry import submissions
from sevenmaps_pipeline.registry.listing import SkipReason
from sevenmaps_pipeline.registry.submissions import Shortfall
from sevenmaps_pipeline.rules.methods import SUBMISSION_PARAMS

DAY = dt.date(2026, 11, 10)
TOOLS = [{"name": "get_forecast", "description": "Forecast for a city", "inputSchema": {"type": "object"}}]


def _checks(n: int, outcome: str = "ok", tools=TOOLS, **extra) -> list[dict]:
    return [probe("https://mcp.example.com/mcp", outcome, hour=i % 24, tools=tools, check_kind="submitted", **extra)
            for i in range(n)]


def test_the_decision_reads_the_checks_alone_with_the_same_thresholds_for_everyone():
    assert submissions.judge(_checks(28)).admitted is True
    judged = submissions.judge(_checks(26) + _checks(2, "timeout"))
    assert judged.admitted and judged.kinds == []
    assert judged.figures == {"checks": 28, "answered": 26, "tool_lists": 1, "server_name": None}
    judged = submissions.judge(_checks(20) + _checks(8, "timeout"))
    assert not judged.admitted and judged.kinds == [Shortfall.TOO_FEW_ANSWERS]
    assert judged.reason == "answered 20 of 28 checks with tools (71%; at least 90% are needed)"  # its one line
    judged = submissions.judge(_checks(10) + _checks(18, "skipped"))
    assert judged.kinds == [Shortfall.TOO_FEW_CHECKS]
    assert f"at least {SUBMISSION_PARAMS['min_checks']}" in judged.reason
    undescribed = TOOLS + [{"name": "set_alert", "inputSchema": {"type": "object"}}]
    judged = submissions.judge(_checks(14) + _checks(14, tools=undescribed))
    assert judged.kinds == [Shortfall.TOO_MANY_TOOL_LISTS]
    judged = submissions.judge(_checks(28, tools=undescribed))
    assert judged.kinds == [Shortfall.UNDESCRIBED_TOOLS] and "(set_alert)" in judged.reason
    assert submissions.judge(_checks(28, tools=[])).kinds == [Shortfall.NO_TOOLS]
    # Nothing else a check row might carry (a payment, an owner's claim, a rating) moves the decision.
    bought = _checks(20, paid=True, owner_verified=True, stars=5) + _checks(8, "timeout")
    plain = submissions.judge(_checks(20) + _checks(8, "timeout"))
    assert (submissions.judge(bought).kinds, submissions.judge(bought).reason) == (plain.kinds, plain.reason)


def test_a_submission_is_refused_when_its_url_is_never_checked(lake, capsys):
    assert main(["--lake", str(lake.root), "submit", "https://user:secret@mcp.example.com/mcp"]) == 2
    assert "secret" not in capsys.readouterr().err
    assert main(["--lake", str(lake.root), "submit", "http://mcp.example.com/mcp"]) == 2
    assert main(["--lake", str(lake.root), "submit", "https://mcp.example.com/mcp"]) == 0
    assert main(["--lake", str(lake.root), "submit", "https://mcp.example.com/mcp/"]) == 0  # the same endpoint
    (entry,) = submissions.read_submissions(lake)
    assert (entry.server_key, entry.status, entry.via) == ("mcp.example.com/mcp", "queued", "cli")
    now = dt.datetime(2026, 11, 20, tzinfo=dt.UTC)
    for url in ("https://user:secret@mcp.example.com/mcp", "https://mcp.example.com/mcp?api_key=secret"):
        with pytest.raises(submissions.SubmissionError) as refused:
            submissions.submit(lake, url, now)
        assert refused.value.kind is Refused.CREDENTIALS_IN_URL and "secret" not in str(refused.value)
    with pytest.raises(submissions.SubmissionError) as refused:
        submissions.submit(lake, "http://mcp.example.com/mcp", now)
    assert refused.value.kind is Refused.NOT_LISTABLE and refused.value.because is SkipReason.NOT_HTTPS


@pytest.fixture(scope="module")
def fleet():
    timeline = copy.deepcopy(load_timeline())
    timeline["servers"] = [s for s in timeline["servers"] if s["name"] in ("weather", "crash", "notes")]
    for server in timeline["servers"]:
        server["listed"] = server["name"] == "notes"  # weather and crash are not in the registry
    timeline["extra_listings"], timeline["opted_out_hosts"] = [], []
    with Fleet(timeline=timeline) as running:
        yield running


def test_submitted_servers_are_checked_for_seven_days_then_admitted_or_refused(fleet, lake, tmp_path):
    listing = tmp_path / "submissions.txt"
    listing.write_text("# submitted by the form\nhttps://mcp.weather.test/mcp\nhttps://mcp.crash.test/mcp\n"
                       "https://127.0.0.1/mcp\n")
    prober = {"registry_url": fleet.registry_url, "host_map_json": json.dumps(fleet.host_map),
              "ca_file": str(fleet.ca_file), "submissions_file": str(listing)}

    def run(at: str):
        return defs.resolve_job_def("submission_job").execute_in_process(
            instance=instance, run_config={"resources": {"lake": {"config": {"root": str(lake.root)}},
                                                         "prober": {"config": {**prober, "replay_day": at}}}})

    with dg.DagsterInstance.ephemeral() as instance:
        assert run(f"{DAY}T06").success  # queued from the file, and the first check of each
        queued = {e.server_key: e for e in submissions.read_submissions(lake)}
        assert set(queued) == {"mcp.weather.test/mcp", "mcp.crash.test/mcp"}  # the IP address is never checked
        assert {e.via for e in queued.values()} == {"file"}
        # Every 6 hours for 7 days (the checks themselves, without the job around them).
        config = ProbeConfig(host_map=fleet.host_map, ca_file=fleet.ca_file)
        for i in range(1, 28):
            at = dt.datetime.combine(DAY, dt.time(6), dt.UTC) + dt.timedelta(hours=6 * i)
            due = submissions.due(lake, at)
            frequent_checks(lake, "submitted", {e.server_key for e in due}, config, ReplayClock(at.date(), at.hour),
                            listings=[submissions.listing_of(e) for e in due])
        end = DAY + dt.timedelta(days=7)
        assert run(f"{end}T12").success
    decided = {e.server_key: e for e in submissions.read_submissions(lake)}
    weather, crash = decided["mcp.weather.test/mcp"], decided["mcp.crash.test/mcp"]
    assert weather.status == "admitted" and weather.checks == 28 and weather.tool_lists == 1
    assert weather.server_name.startswith("submitted/")
    assert crash.status == "refused" and "answered 0 of 28 checks" in crash.reason
    assert crash.method_version == "submissions-1.0"
    # The admitted server joins the next day's registry snapshot, and so the map; the refused one does not.
    nxt = end + dt.timedelta(days=1)
    scan_day(lake, nxt, fleet.registry_url, ProbeConfig(host_map=fleet.host_map, ca_file=fleet.ca_file),
             ReplayClock(nxt, 9))
    registry = {r["server_key"]: r for r in pq.read_table(lake.registry_file(nxt)).to_pylist()}
    assert registry["mcp.weather.test/mcp"]["status"] == "submitted" and "mcp.crash.test/mcp" not in registry
    assert "mcp.notes.test/mcp" in registry
    probes = {r["server_key"] for p in lake.raw_files("probes", nxt) for r in pq.read_table(p).to_pylist()}
    assert "mcp.weather.test/mcp" in probes


@pytest.mark.parametrize("url", ["https://127.1/mcp", "https://0x7f.0.0.1/mcp", "https://2130706433/mcp",
                                 "https://0177.0.0.1/mcp", "https://1.2.3.999/mcp"])
def test_a_host_a_browser_reads_as_an_address_is_refused_at_submit_storing_nothing(lake, url, capsys):
    assert main(["--lake", str(lake.root), "submit", url]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and ("IP address" in err or "unparseable URL" in err)
    assert submissions.read_submissions(lake) == []
    assert not submissions.submissions_file(lake).exists(), "a refused submission was stored"


def test_admitted_rows_meet_the_listing_rules_of_the_day(lake):
    """helper-83: an admitted row was put in the day's registry snapshot as `probe`, unchecked, so a submissions file
    edited or restored by hand put `https://alice:s3cret@...` and `?api_key=` into the signed registry, and a host that
    opted out after its admission was probed. Each row now meets the listing rules on the day, stored redacted."""
    import pyarrow as pa

    from sevenmaps_pipeline.registry import opt_outs

    now = dt.datetime.combine(DAY, dt.time(12), tzinfo=dt.UTC)
    opt_outs.record_opt_out(lake, "optedout.example.com", "operator", now, note="asked by email")
    urls = ["https://alice:s3cret@mcp.example.com/mcp", "https://mcp2.example.com/mcp?api_key=LIVEKEY1",
            "http://plain.example.com/mcp", "https://optedout.example.com/mcp", "https://localhost/mcp",
            "https://good.example.com/mcp"]
    rows = [dict(server_key=url, url=url, status="admitted", via="file", submitted_at=now - dt.timedelta(days=8),
                 decided_at=now - dt.timedelta(days=1), reason="ok", server_name="submitted/x")
            for url in urls]
    submissions.submissions_file(lake).parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, submissions.SCHEMA), submissions.submissions_file(lake))
    out = submissions.admitted_registry_rows(lake, DAY, now, set(), opted_out=opt_outs.opted_out_hosts(lake))
    decided = {row["server_key"]: (row["listing"], row["skip_reason"]) for row in out}
    assert decided == {
        "mcp.example.com/mcp": ("skip", str(SkipReason.CREDENTIALS)),
        "mcp2.example.com/mcp": ("skip", str(SkipReason.CREDENTIALS)),
        "plain.example.com/mcp": ("skip", str(SkipReason.NOT_HTTPS)),
        "optedout.example.com/mcp": ("skip", str(SkipReason.OPTED_OUT)),
        "localhost/mcp": ("skip", str(SkipReason.PRIVATE)),
        "good.example.com/mcp": ("probe", None)}, decided
    assert "s3cret" not in json.dumps(out, default=str) and "LIVEKEY1" not in json.dumps(out, default=str)
