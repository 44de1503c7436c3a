"""The opt-out registry in the lake: what the operator records and what the form proves, read by every
check kind before anything is contacted (the daily scan, also when it resumes on a snapshot taken before
the opt-out, and the readiness run); an unreadable registry stops a run instead of reading as empty."""

from __future__ import annotations

import copy
import datetime as dt

import pytest

from sevenmaps_pipeline.cli import main
from sevenmaps_pipeline.defs.map_assets import scan_config
from sevenmaps_pipeline.defs.resources import ProberResource
from sevenmaps_pipeline.devtools.fleet.run import Fleet, load_timeline
from sevenmaps_pipeline.devtools.fleet.scripted import Scripted, ScriptedApp
from sevenmaps_pipeline.lake.control import Refused
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


def test_the_form_proof_needs_the_token_alone_as_text_plain_and_fresh(fleet, lake, capsys):
    resolve = ["--resolve", f"{PROOF}:{fleet.port}", "--ca-file", str(fleet.ca_file)]
    now = dt.datetime.now(dt.UTC)
    assert main(["--lake", str(lake.root), "opt-out", "issue", PROOF]) == 0
    first = opt_outs.pending_token(lake, PROOF, now)
    assert first in capsys.readouterr().out
    assert main(["--lake", str(lake.root), "opt-out", "issue", PROOF]) == 0  # each request its own token
    token = opt_outs.pending_token(lake, PROOF, now)
    assert token != first
    plain = [("content-type", "text/plain; charset=utf-8")]
    refused = {  # each proves nothing: the token is not the answer alone, as text/plain, with a 2xx
        "someone else's": Scripted(200, plain, b"someone else's token\n"),
        "the old token": Scripted(200, plain, f"{first}\n".encode()),
        "on a line of a page": Scripted(200, plain, f"# 7Maps\n  {token}\n".encode()),
        "in an HTML page": Scripted(200, [("content-type", "text/html")], f"<p>\n{token}\n</p>".encode()),
        "HTML, the token alone": Scripted(200, [("content-type", "text/html")], token.encode()),
        "a 404 page": Scripted(404, plain, token.encode()),
    }
    for what, answer in refused.items():
        fleet.proof.reset({"GET /.well-known/7maps-optout.txt": answer})
        assert main(["--lake", str(lake.root), "opt-out", "verify", PROOF, *resolve]) == 1, what
        assert opt_outs.opted_out_hosts(lake) == frozenset(), what
    fleet.proof.reset({"GET /.well-known/7maps-optout.txt": Scripted(200, plain, f"{token}\n".encode())})
    assert main(["--lake", str(lake.root), "opt-out", "verify", PROOF, *resolve]) == 0
    assert opt_outs.opted_out_hosts(lake) == {PROOF}
    (entry,) = opt_outs.read_opt_outs(lake)
    assert (entry.how, entry.token) == ("form", token)
    capsys.readouterr()


def test_a_token_expires_after_its_days(lake):
    issued = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
    opt_outs.issue_token(lake, "mcp.example.com", issued)
    assert opt_outs.pending_token(lake, "mcp.example.com", issued + dt.timedelta(days=opt_outs.TOKEN_DAYS))
    with pytest.raises(opt_outs.OptOutRegistryError) as refused:
        opt_outs.pending_token(lake, "mcp.example.com", issued + dt.timedelta(days=opt_outs.TOKEN_DAYS, seconds=1))
    assert refused.value.kind is Refused.TOKEN_EXPIRED
    owners.issue_owner_token(lake, "owner.example.com", issued)
    with pytest.raises(owners.OwnerClaimError) as refused:
        owners.pending_claim(lake, "owner.example.com", issued + dt.timedelta(days=8))
    assert refused.value.kind is Refused.TOKEN_EXPIRED
    again = owners.issue_owner_token(lake, "owner.example.com", issued + dt.timedelta(days=8))
    assert owners.pending_claim(lake, "owner.example.com", issued + dt.timedelta(days=8)).token == again.token


@pytest.mark.parametrize(("host", "kind"), [
    ("co.uk", Refused.PUBLIC_SUFFIX), ("github.io", Refused.PUBLIC_SUFFIX), ("com", Refused.NOT_A_HOST),
    ("mcp.example.com?x=1", Refused.NOT_A_HOST), ("mcp.example.com#top", Refused.NOT_A_HOST),
    ("mcp%2eexample.com", Refused.NOT_A_HOST), ("mcp_x.example.com", Refused.NOT_A_HOST),
    ("-mcp.example.com", Refused.NOT_A_HOST), ("127.0.0.1", Refused.NOT_A_HOST), ("0x7f.1", Refused.NOT_A_HOST),
])
def test_a_claimed_or_opted_out_host_is_one_real_host(lake, host, kind):
    now = dt.datetime(2026, 11, 20, tzinfo=dt.UTC)
    with pytest.raises(opt_outs.OptOutRegistryError) as refused:
        opt_outs.issue_token(lake, host, now)
    assert refused.value.kind is kind
    with pytest.raises(owners.OwnerClaimError) as refused:
        owners.issue_owner_token(lake, host, now)
    assert refused.value.kind is kind
    assert opt_outs.read_opt_outs(lake) == [] and owners.read_claims(lake) == []


def test_unicode_and_ordinary_hosts_are_kept_in_one_form(lake):
    assert opt_outs.normal_host("https://MCP.Example.com.:443/mcp") == "mcp.example.com"
    assert opt_outs.normal_host("bücher.example") == "xn--bcher-kva.example"


@pytest.mark.parametrize(("opted", "url"), [
    ("bücher.example.com", "https://bücher.example.com/mcp"),
    ("bücher.example.com", "https://BÜCHER.example.com/mcp"),
    ("bücher.example.com", "https://mcp.bu\u0308cher.example.com/mcp"),  # decomposed (NFD), a name under it
    ("bücher.example.com", "https://xn--bcher-kva.example.com/mcp"),
    ("xn--bcher-kva.example.com", "https://bücher.example.com/mcp"),
    ("faß.example.com", "https://faß.example.com/mcp"),  # stored as xn--fa-hia (IDNA 2008), never IDNA 2003's fass
    ("faß.example.com", "https://xn--fa-hia.example.com/mcp"),  # the name httpx connects to
    ("xn--fa-hia.example.com", "https://faß.example.com/mcp"),
    ("fass.example.com", "https://faß.example.com/mcp"),  # an opt-out stored before status-1.7 (helper-87)
    # full stops a URL parser reads as "." (helper-86), a trailing one too
    ("mcp.example.com", "https://mcp.example.com\u3002/mcp"),
    ("bücher.example.com", "https://xn--bcher-kva\uff0eexample.com/mcp"),
    ("bücher.example.com", "https://xn--bcher-kva.example.com\uff61/mcp"),
])
def test_an_opt_out_covers_every_form_of_an_internationalised_name(lake, opted, url):
    """helper-83: the opt-out of bücher.example.com was stored as xn--bcher-kva.example.com and compared with the
    URL's host as the registry wrote it, so a URL listed in unicode was probed (httpx connects to the IDNA name)."""
    from sevenmaps_pipeline.registry.client import rows_for_entry
    from sevenmaps_pipeline.registry.listing import SkipReason

    opt_outs.record_opt_out(lake, opted, "operator", NOW, note="asked by email")
    hosts = opt_outs.opted_out_hosts(lake)
    (row,) = rows_for_entry({"server": {"name": "com.example/b", "remotes": [{"type": "streamable-http", "url": url}]}},
                            NOW.date(), NOW, opted_out=hosts)
    assert (row["listing"], row["skip_reason"]) == ("skip", str(SkipReason.OPTED_OUT))
    for elsewhere in ("https://bucher.example.com/mcp", "https://mcp.example.net/mcp"):
        other = rows_for_entry({"server": {"name": "com.example/o", "remotes": [
            {"type": "streamable-http", "url": elsewhere}]}}, NOW.date(), NOW, opted_out=hosts)
        assert other[0]["listing"] == "probe", elsewhere


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
    with pytest.raises(owners.OwnerClaimError) as refused:  # a secret in the query: refused, never echoed
        owners.choose_five_minute(lake, "mcp.example.com", ["https://mcp.example.com/mcp?api_key=sk-live-SECRET"])
    assert refused.value.kind is Refused.NOT_AN_HTTPS_URL and "sk-live" not in str(refused.value)
    with pytest.raises(owners.OwnerClaimError) as refused:
        owners.set_note(lake, "other.example.com", "hello", now)
    assert refused.value.kind is Refused.NO_VERIFIED_OWNER


def test_opt_outs_made_at_once_are_all_kept(lake):
    """helper-83: each change reads the file, changes its rows and writes it whole, with no lock: of 40 opt-outs
    made at once, 38 were lost, and those hosts were contacted. Each change now holds the file's lock."""
    from concurrent.futures import ThreadPoolExecutor

    hosts = [f"mcp{i}.example.com" for i in range(24)]
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda host: opt_outs.record_opt_out(lake, host, "operator", NOW, note="asked"), hosts))
    assert sorted(opt_outs.opted_out_hosts(lake)) == sorted(hosts)


@pytest.mark.parametrize("broken", ["a link to nothing", "a folder", "no status column"])
def test_an_opt_out_registry_in_no_readable_form_stops_the_run_instead_of_reading_as_empty(lake, broken):
    """helper-83: a dangling link or an empty folder in the file's place, or a file without its status column, read
    as "no host has opted out", and the hosts were probed."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = lake.opt_outs_file
    path.parent.mkdir(parents=True, exist_ok=True)
    if broken == "a link to nothing":
        path.symlink_to(path.parent / "gone.parquet")
    elif broken == "a folder":
        path.mkdir()
    else:
        pq.write_table(pa.table({"host": ["mcp.example.com"], "state": ["opted_out"]}), path)
    with pytest.raises(opt_outs.OptOutRegistryError, match="no host is contacted until it is repaired") as refused:
        opt_outs.opted_out_hosts(lake)
    assert refused.value.kind is Refused.FILE_UNREADABLE and str(path) in str(refused.value)


@pytest.mark.parametrize("note", ["asked by \x1b[31memail\x1b[0m", "line one\nline two", "x" * 1001])
def test_an_opt_outs_note_is_plain_text_on_one_line(lake, note):
    """helper-83: `opt-out add --note` took escape sequences and line breaks, which owner notes and reviews refuse;
    the note is shown to the operator in `opt-out list`."""
    with pytest.raises(opt_outs.OptOutRegistryError) as refused:
        opt_outs.record_opt_out(lake, "mcp.example.com", "operator", NOW, note=note)
    assert refused.value.kind in (Refused.NOTE_CONTROL_CHARACTERS, Refused.NOTE_TOO_LONG)
    assert opt_outs.read_opt_outs(lake) == []


@pytest.mark.parametrize("written", ["ü.evil.com#.victim.com", "faß.de?x", "faß .de", "bü%63her.de"])
def test_an_internationalised_name_with_a_urls_other_parts_is_no_host(lake, written):
    """helper-87: a non-ASCII name went through a URL parser, which cut away what followed `#` or `?`: the opt-out of
    `ü.evil.com#.victim.com` was recorded for xn--tda.evil.com. Such a name is refused, as its ASCII twin is."""
    with pytest.raises(opt_outs.OptOutRegistryError) as refused:
        opt_outs.record_opt_out(lake, written, "operator", NOW, note="asked")
    assert refused.value.kind is Refused.NOT_A_HOST and opt_outs.read_opt_outs(lake) == []
