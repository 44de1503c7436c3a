"""Every readiness line seen when it can be (issue 37, point 5), against real servers on loopback: the fleet's
official-SDK MCP servers of both revisions (the 2025-06-18 handshake and the 2026-07-28 discovery era) and its
misbehaving hosts. A redirect not followed fails "no redirect chain"; a 403 says it was a 403."""

from __future__ import annotations

import asyncio
import copy
import datetime as dt
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sevenmaps_pipeline.cli import main
from sevenmaps_pipeline.curated.readiness_tables import build_readiness_lines
from sevenmaps_pipeline.devtools.fleet.apps import FleetState, handshake_only, legacy_sse_app
from sevenmaps_pipeline.devtools.fleet.middleware import rpc_method
from sevenmaps_pipeline.devtools.fleet.registry_app import registry_entries
from sevenmaps_pipeline.devtools.fleet.run import Fleet, load_timeline
from sevenmaps_pipeline.devtools.fleet.scripted import Scripted, ScriptedApp, initialize_result, json_answer
from sevenmaps_pipeline.lake.parquet_io import write_parquet
from sevenmaps_pipeline.lake.paths import LakePaths
from sevenmaps_pipeline.lake.schemas import RAW_REGISTRY, conform
from sevenmaps_pipeline.probe.config import ProbeConfig
from sevenmaps_pipeline.probe.readiness import readiness_one
from sevenmaps_pipeline.probe.run import ReplayClock, readiness_day
from sevenmaps_pipeline.registry import owners
from sevenmaps_pipeline.registry.client import rows_for_entry
from sevenmaps_pipeline.rules.readiness import score_mcp

TODAY = dt.date(2026, 12, 4)
SCRIPTED = "mcp.eras.test"  # a scripted host for answers no SDK server gives on demand
OLD_SSE = "mcp.oldsse.test"  # the official SDK's SSE server, of the handshake era only


@pytest.fixture(scope="module")
def scripted() -> ScriptedApp:
    return ScriptedApp()


@pytest.fixture(scope="module")
def fleet(scripted):
    old_sse = handshake_only(legacy_sse_app("oldsse", OLD_SSE, FleetState()))
    with Fleet(extra_apps={SCRIPTED: scripted, OLD_SSE: old_sse}) as running:
        yield running


def _config(fleet) -> ProbeConfig:
    return ProbeConfig(host_map=fleet.host_map, ca_file=fleet.ca_file)


def _score(fleet, url: str, **kw):
    row, rows, facts = asyncio.run(readiness_one(url, _config(fleet), TODAY, **kw))
    return row, score_mcp(facts)


def _line(score, key):
    return next(r for line, r in score.lines if line.key == key)


def test_a_redirect_to_another_domain_fails_no_redirect_chain(fleet):
    row, score = _score(fleet, fleet.host("away").url)
    assert row["outcome"] == "redirect" and row["answered_via"] == "none"
    line = _line(score, "https_no_redirects")
    assert line.seen and not line.passed and "not followed" in line.evidence and "elsewhere.test" in line.evidence
    assert "redirect" in _line(score, "answers").evidence


def test_a_followed_redirect_fails_it_too_and_a_direct_answer_passes(fleet):
    row, score = _score(fleet, fleet.host("hop").url)  # one same-domain hop, followed, then the SDK answers
    assert row["outcome"] == "ok" and row["redirects_followed"] == 1
    assert not _line(score, "https_no_redirects").passed and _line(score, "https_no_redirects").seen
    _, direct = _score(fleet, fleet.host("calendar").url)
    assert _line(direct, "https_no_redirects").passed


def test_a_403_says_it_was_a_403(fleet):
    row, score = _score(fleet, fleet.host("scoped").url)
    assert row["http_status"] == 403 and row["answered_via"] == "none"
    answers = _line(score, "answers")
    assert answers.seen and not answers.passed and "HTTP 403" in answers.evidence
    assert "403" in _line(score, "discover_or_initialize").evidence
    auth = _line(score, "auth_metadata")
    assert not auth.seen and "403" in auth.evidence  # refused: whether a token would help is not told
    assert _line(score, "https_no_redirects").passed  # an HTTP answer, over https, no redirect


def test_no_http_answer_leaves_the_redirect_line_unseen(fleet):
    _, score = _score(fleet, "https://mcp.nowhere.test/mcp")  # not served by the fleet: no answer at all
    assert not _line(score, "https_no_redirects").seen


def _listing(request_id: int, cursor: str | None = None, hints: bool = True) -> Scripted:
    result: dict = {"tools": [{"name": f"t{request_id}", "inputSchema": {"type": "object"}}]}
    if hints:
        result.update(ttlMs=60_000, cacheScope="public")
    if cursor:
        result["nextCursor"] = cursor
    return json_answer({"jsonrpc": "2.0", "id": request_id, "result": result})


def _handshake_era(scripted: ScriptedApp, pages: list[Scripted]) -> None:
    scripted.reset({"initialize": initialize_result(), "notifications/initialized": Scripted(202),
                    "tools/list": pages})


def test_cache_hints_are_read_on_a_handshake_era_result(fleet, scripted):
    # A 2025-06-18 server whose tools/list results carry ttlMs and cacheScope: read, and the line passes.
    _handshake_era(scripted, [_listing(2), _listing(7)])
    row, score = _score(fleet, f"https://{SCRIPTED}/mcp")
    assert row["answered_via"] == "initialize" and (row["ttl_ms"], row["cache_scope"]) == (60_000, "public")
    assert _line(score, "cache_hints").passed
    # A list whose second page lacks them does not carry them.
    _handshake_era(scripted, [_listing(2, cursor="p2"), _listing(3, hints=False), _listing(7, cursor="p2"),
                              _listing(8, hints=False)])
    row, score = _score(fleet, f"https://{SCRIPTED}/mcp")
    assert row["tool_count"] == 2 and row["ttl_ms"] is None and not _line(score, "cache_hints").passed


def test_cache_hints_on_the_official_sdk_of_both_revisions(fleet):
    _, modern = _score(fleet, fleet.host("calendar").url)  # 2026-07-28: the SDK's CacheHint on tools/list
    assert _line(modern, "cache_hints").passed
    row, elder = _score(fleet, fleet.host("elder").url)  # handshake only: the SDK sends none on that wire
    assert row["answered_via"] == "initialize" and _line(elder, "cache_hints").seen
    assert not _line(elder, "cache_hints").passed and "ttlMs None" in _line(elder, "cache_hints").evidence


def test_a_verified_owner_claim_proves_the_namespace_live(fleet, lake, capsys):
    host = fleet.host("calendar")
    args = ["--lake", str(lake.root), "readiness", host.url, "--json", "--quiet", "--resolve",
            f"{host.host}:{fleet.port}", "--resolve", "calendar.test:9", "--ca-file", str(fleet.ca_file)]
    assert main(args) == 0  # no registry name, no claim: unseen
    before = {ln["line"]: ln for ln in json.loads(capsys.readouterr().out)["lines"]}
    assert not before["namespace_proven"]["seen"]
    now = dt.datetime.now(dt.UTC)
    owners.issue_owner_token(lake, host.host, now)
    owners.mark_verified(lake, host.host, now)
    assert main(args) == 0
    line = {ln["line"]: ln for ln in json.loads(capsys.readouterr().out)["lines"]}["namespace_proven"]
    assert line["passed"] and "verified owner claim" in line["evidence"] and host.host in line["evidence"]


@pytest.fixture(scope="module")
def unprovable(tmp_path_factory):
    """A fleet whose calendar is listed under a name the registry cannot prove ("acme/calendar")."""
    timeline = copy.deepcopy(load_timeline())
    timeline["servers"] = [{**s, "registry_name": "acme/calendar"} for s in timeline["servers"]
                           if s["name"] == "calendar"]
    timeline["extra_listings"], timeline["opted_out_hosts"] = [], []
    with Fleet(timeline=timeline) as running:
        yield running, LakePaths.at(tmp_path_factory.mktemp("claims") / "lake")


def _nightly_namespace_line(fleet, lake: LakePaths) -> dict:
    now = dt.datetime.combine(TODAY, dt.time(12), dt.UTC)
    rows = [r for e in registry_entries(fleet) for r in rows_for_entry(e, TODAY, now, opted_out=[],
                                                                        host_map=fleet.host_map)]
    write_parquet(lake, lake.registry_file(TODAY), conform(pa.Table.from_pylist(rows, RAW_REGISTRY.schema),
                                                           RAW_REGISTRY))
    readiness_day(lake, TODAY, _config(fleet), ReplayClock(TODAY))
    build_readiness_lines(lake, TODAY)
    lines = pq.read_table(lake.curated_file("readiness_lines", TODAY)).to_pylist()
    return next(r for r in lines if r["subject_key"] == "mcp.calendar.test/mcp" and r["line"] == "namespace_proven")


def test_a_verified_owner_claim_proves_the_namespace_in_the_nightly_tables(unprovable):
    fleet, lake = unprovable
    line = _nightly_namespace_line(fleet, lake)
    assert line["seen"] and not line["passed"]  # not a namespace the registry can prove
    later = dt.datetime.combine(TODAY + dt.timedelta(days=1), dt.time(1), dt.UTC)
    owners.issue_owner_token(lake, "calendar.test", later)  # covers the names under it
    owners.mark_verified(lake, "calendar.test", later)
    assert not _nightly_namespace_line(fleet, lake)["passed"]  # verified after the day: not on that day
    earlier = dt.datetime.combine(TODAY, dt.time(3), dt.UTC)
    owners.issue_owner_token(lake, "mcp.calendar.test", earlier)
    owners.mark_verified(lake, "mcp.calendar.test", earlier)
    line = _nightly_namespace_line(fleet, lake)
    assert line["passed"] and "verified owner claim" in line["evidence"]


def _over_sse(fleet, url: str):
    before = len(fleet.recorded)
    row, score = _score(fleet, url, remote_type="sse")
    assert row["outcome"] == "ok", row["outcome_detail"]
    rpcs = [rpc_method(r) for r in fleet.recorded[before:] if rpc_method(r)]
    assert "tools/call" not in rpcs  # never a tool call
    return row, {line.key: r for line, r in score.lines}, rpcs


def test_an_sse_only_listing_is_scored_over_sse_in_the_2026_era(fleet):
    # The fleet's legacy server: the official SDK's MCPServer over HTTP+SSE (sse_app), listed as "sse"; the
    # SDK answers server/discover over SSE too.
    row, seen, rpcs = _over_sse(fleet, fleet.host("legacy").url)
    assert row["answered_via"] == "discover" and rpcs[0] == "server/discover" and "initialize" not in rpcs
    assert row["tool_count"] == 1 and json.loads(row["second_tool_names_json"]) == ["echo"]
    assert seen["discover_or_initialize"].points == 15 and seen["revision_2026_07_28"].passed
    assert seen["deterministic_order"].passed and seen["definition_tokens"].passed and seen["answers"].passed
    assert seen["https_no_redirects"].passed and seen["injection_clean"].passed
    assert seen["cache_hints"].passed  # the SDK's own defaults on the 2026 wire: ttlMs 0, cacheScope private
    assert {k for k, r in seen.items() if not r.seen} == {"namespace_proven", "repository_fresh"}


def test_an_sse_only_listing_of_the_handshake_era_falls_back_to_initialize(fleet):
    # The same SDK server, answering server/discover "Method not found" as the handshake era's servers do.
    row, seen, rpcs = _over_sse(fleet, f"https://{OLD_SSE}/sse")
    assert row["answered_via"] == "initialize" and row["protocol_version"] == "2025-06-18"
    assert rpcs[:4] == ["server/discover", "initialize", "notifications/initialized", "tools/list"]
    assert seen["discover_or_initialize"].points == 8 and not seen["revision_2026_07_28"].passed
    assert seen["deterministic_order"].passed and seen["annotation_coverage"].seen


def test_the_nightly_run_scores_the_registry_sse_listing(fleet, tmp_path):
    lake = LakePaths.at(tmp_path / "lake")
    now = dt.datetime.combine(TODAY, dt.time(12), dt.UTC)
    rows = [r for e in registry_entries(fleet) for r in rows_for_entry(e, TODAY, now, opted_out=[],
                                                                        host_map=fleet.host_map)]
    legacy = [r for r in rows if r.get("server_name") == "test.legacy/legacy"]
    assert legacy and legacy[0]["remote_type"] == "sse"
    write_parquet(lake, lake.registry_file(TODAY), conform(pa.Table.from_pylist(legacy, RAW_REGISTRY.schema),
                                                           RAW_REGISTRY))
    readiness_day(lake, TODAY, _config(fleet), ReplayClock(TODAY))
    build_readiness_lines(lake, TODAY)
    lines = {r["line"]: r for r in pq.read_table(lake.curated_file("readiness_lines", TODAY)).to_pylist()}
    assert lines["answers"]["passed"] and lines["discover_or_initialize"]["points"] == 15
    assert lines["annotation_coverage"]["seen"] and lines["namespace_proven"]["passed"]
