"""The opt-out registry in the lake: what the operator records and what the form proves, read by every
check kind before anything is contacted (the daily scan, also when it resumes on a snapshot taken before
the opt-out, and the readiness run); an unreadable registry stops a run instead of reading as empty."""

from __future__ import annotations

import copy
import datetime as dt
import json

import pytest

from sevenmaps_pipeline.cli import main
from sevenmaps_pipeline.defs.map_assets import scan_config
from sevenmaps_pipeline.defs.resources import ProberResource
from sevenmaps_pipeline.devtools.fleet.run import Fleet, load_timeline
from sevenmaps_pipeline.devtools.fleet.scripted import Scripted, ScriptedApp
from sevenmaps_pipeline.lake.control import Refused
from sevenmaps_pipeline.probe.run import readiness_day, scan_day
from sevenmaps_pipeline.registry import opt_outs, owners

NOW = dt.datetime(2026, 11, 30, 9, tzinfo=dt.UTC)
PROOF = "mcp.proof.test"


@pytest.fixture(scope="module")
def fleet():
    timeline = copy.deepcopy(load_timeline())
    timeline["servers"] = [s for s in timeline["servers"] if s["name"] in ("weather", "notes")]
    timeline["extra_listings"], timeline["opted_out_hosts"] = [], []
    proof = ScriptedApp()
    with Fleet(timeline=timeline, extra_apps={PROOF: proof}) as running:
        running.proof = proof
        yield running


def test_the_registry_keeps_who_opted_out_how_and_when(lake):
    assert opt_outs.opted_out_hosts(lake) == frozenset()
    first = opt_outs.record_opt_out(lake, "HTTPS://Mcp.Example.com:443/mcp", "operator", NOW, note="email of 30 Nov")
    assert (first.host, first.status, first.how, first.opted_out_at) == ("mcp.example.com", "opted_out", "operator",
                                                                          NOW)
    again = opt_outs.record_opt_out(lake, "mcp.example.com", "operator", NOW + dt.timedelta(days=1))
    assert again.opted_out_at == NOW  # the first date stands
    assert opt_outs.opted_out_hosts(lake) == {"mcp.example.com"}
    with pytest.raises(opt_outs.OptOutRegistryError, match="not a host name") as refused:
        opt_outs.record_opt_out(lake, "localhost", "operator", NOW)
    assert refused.value.kind is Refused.NOT_A_HOST
    with pytest.raises(opt_outs.OptOutRegistryError, match="how must be") as refused:
        opt_outs.record_opt_out(lake, "a.example.com", "phone", NOW)
    assert refused.value.kind is Refused.UNKNOWN_HOW


def test_an_unreadable_registry_stops_the_run_instead_of_reading_as_empty(lake):
    import dagster as dg

    lake.opt_outs_file.parent.mkdir(parents=True)
    lake.opt_outs_file.write_bytes(b"PAR1 not a parquet file")
    with pytest.raises(opt_outs.OptOutRegistryError, match="no host is contacted") as refused:
        opt_outs.opted_out_hosts(lake)
    assert refused.value.kind is Refused.FILE_UNREADABLE
    with pytest.raises(dg.Failure, match="cannot be read"):
        scan_config(lake, ProberResource())


def test_the_form_proof_needs_the_token_on_the_host(fleet, lake, capsys):
    resolve = ["--resolve", f"{PROOF}:{fleet.port}", "--ca-file", str(fleet.ca_file)]
    assert main(["--lake", str(lake.root), "opt-out", "issue", PROOF]) == 0
    token = opt_outs.pending_token(lake, PROOF)
    assert token in capsys.readouterr().out
    assert main(["--lake", str(lake.root), "opt-out", "issue", PROOF]) == 0  # the same token until verified
    assert opt_outs.pending_token(lake, PROOF) == token
    fleet.proof.reset({"GET /.well-known/7maps-optout.txt": Scripted(200, body=b"someone else's token\n")})
    assert main(["--lake", str(lake.root), "opt-out", "verify", PROOF, *resolve]) == 1
    assert opt_outs.opted_out_hosts(lake) == frozenset()
    fleet.proof.reset({"GET /.well-known/7maps-optout.txt": Scripted(200, body=f"# 7Maps\n  {token}\n".encode())})
    assert main(["--lake", str(lake.root), "opt-out", "verify", PROOF, *resolve]) == 0
    assert opt_outs.opted_out_hosts(lake) == {PROOF}
    (entry,) = opt_outs.read_opt_outs(lake)
    assert (entry.how, entry.token) == ("form", token)
    capsys.readouterr()
    assert main(["--lake", str(lake.root), "opt-out", "list"]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert line.split()[:3] == [PROOF, "opted_out", "form"]


def test_every_check_kind_reads_the_registry_even_on_a_snapshot_taken_before(fleet, lake):
    prober = ProberResource(host_map_json=json.dumps(fleet.host_map), ca_file=str(fleet.ca_file))
    today = dt.datetime.now(dt.UTC).date()
    scan_day(lake, today, fleet.registry_url, scan_config(lake, prober))  # the snapshot: weather is listed
    # weather opts out later that day; the scan resumes on the day's snapshot, the readiness run follows
    opt_outs.record_opt_out(lake, "weather.test", "operator", dt.datetime.now(dt.UTC), note="covers mcp.weather.test")
    for path in lake.raw_files("probes", today):
        path.unlink()  # as if the first scan had been killed before it landed anything
    before = len(fleet.requests_to("mcp.weather.test"))
    config = scan_config(lake, prober)
    report = scan_day(lake, today, fleet.registry_url, config)
    assert report.registry_reused and report.outcomes.get("skipped") == 1
    import pyarrow.parquet as pq

    rows = [r for p in lake.raw_files("probes", today) for r in pq.read_table(p).to_pylist()]
    assert {r["server_key"]: r["skip_reason"] for r in rows}["mcp.weather.test/mcp"] == "host opted out"
    readiness_day(lake, today, config)
    assert len(fleet.requests_to("mcp.weather.test")) == before  # never contacted again
    assert fleet.requests_to("mcp.notes.test")  # the others are


def test_an_owners_claim_refuses_by_named_kind(lake):
    now = dt.datetime(2026, 11, 20, tzinfo=dt.UTC)
    with pytest.raises(owners.OwnerClaimError) as refused:
        owners.mark_verified(lake, "mcp.example.com", now)
    assert refused.value.kind is Refused.NO_TOKEN_ISSUED
    owners.issue_owner_token(lake, "mcp.example.com", now)
    owners.mark_verified(lake, "mcp.example.com", now)
    with pytest.raises(owners.OwnerClaimError) as refused:
        owners.set_note(lake, "mcp.example.com", "x" * (owners.MAX_NOTE_CHARS + 1), now)
    assert refused.value.kind is Refused.NOTE_TOO_LONG
    with pytest.raises(owners.OwnerClaimError) as refused:
        owners.set_note(lake, "mcp.example.com", "hello\x07", now)
    assert refused.value.kind is Refused.NOTE_CONTROL_CHARACTERS
    with pytest.raises(owners.OwnerClaimError) as refused:
        owners.choose_five_minute(lake, "mcp.example.com", ["https://elsewhere.example.org/mcp"])
    assert refused.value.kind is Refused.NOT_THEIR_HOST
    with pytest.raises(owners.OwnerClaimError) as refused:
        owners.set_note(lake, "other.example.com", "hello", now)
    assert refused.value.kind is Refused.NO_VERIFIED_OWNER
