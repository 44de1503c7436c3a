"""The readiness probe against real servers on loopback (the fleet: official-SDK MCP servers and scripted
hosts): server/discover first and initialize only when discovery answers nothing, a 401 read for its
RFC 9728 metadata, tools/list twice; and the daily check, unchanged, never does any of that."""

from __future__ import annotations

import asyncio
import datetime as dt
import json

import pytest

from sevenmaps_pipeline.cli import main
from sevenmaps_pipeline.devtools.fleet.middleware import rpc_method
from sevenmaps_pipeline.devtools.fleet.run import Fleet
from sevenmaps_pipeline.devtools.fleet.scripted import (
    Scripted,
    ScriptedApp,
    initialize_result,
    json_answer,
    tools_result,
)
from sevenmaps_pipeline.probe.checker import EndpointCheck
from sevenmaps_pipeline.probe.config import BAD_CALL_USER_AGENT, USER_AGENT, ProbeConfig
from sevenmaps_pipeline.probe.http import build_client
from sevenmaps_pipeline.probe.readiness import readiness_one
from sevenmaps_pipeline.registry import owners
from sevenmaps_pipeline.rules.readiness import score_mcp

TODAY = dt.date(2026, 11, 30)
OLD = "mcp.older.test"  # a scripted server of the 2025 revisions: no server/discover
TOOLS = [{"name": n, "description": f"{n} the items", "inputSchema": {"type": "object"}} for n in ("list", "get")]


@pytest.fixture(scope="module")
def older() -> ScriptedApp:
    return ScriptedApp()


@pytest.fixture(scope="module")
def fleet(older):
    with Fleet(extra_apps={OLD: older}) as running:
        yield running


def _older_server(second_order: list[dict]) -> dict:
    """initialize, the notification, and two listings (the second pass asks with ids from 7)."""
    return {"initialize": initialize_result(), "notifications/initialized": Scripted(202),
            "tools/list": [tools_result(TOOLS, request_id=2), tools_result(second_order, request_id=7)]}


def _names(row, which: str) -> list[str]:
    if which == "first":
        return [t["name"] for t in json.loads(row["tools_json"])]
    return json.loads(row["second_tool_names_json"])


def _score(fleet, name):
    host = fleet.host(name)
    config = ProbeConfig(host_map=fleet.host_map, ca_file=fleet.ca_file)
    row, _, facts = asyncio.run(readiness_one(host.url, config, TODAY))
    return row, score_mcp(facts)


def _line(score, key):
    return next(r for line, r in score.lines if line.key == key)


def test_a_2026_07_28_server_is_read_through_discover_first(fleet):
    row, score = _score(fleet, "calendar")
    assert row["outcome"] == "ok" and row["answered_via"] == "discover"
    rpcs = [m for r in fleet.requests_to("mcp.calendar.test") if (m := rpc_method(r))]
    assert rpcs[0] == "server/discover" and "initialize" not in rpcs
    assert _line(score, "discover_or_initialize").points == 15
    assert _line(score, "revision_2026_07_28").passed and _line(score, "cache_hints").passed
    assert _line(score, "deterministic_order").passed  # listed twice, same order
    assert _names(row, "second") == _names(row, "first")


def test_the_official_sdk_answers_discover_and_is_listed_twice_over_its_pages(fleet):
    row, score = _score(fleet, "catalog")  # mcp 2.3.0: seven tools over four pages
    assert row["outcome"] == "ok" and row["answered_via"] == "discover"
    assert _line(score, "deterministic_order").passed and len(_names(row, "second")) == 7
    tokens = _line(score, "definition_tokens")
    assert tokens.seen and tokens.points == 12 and "o200k_base tokens" in tokens.evidence
    # What the code host and the registry would say is not looked up here: unseen, on neither side.
    unseen = {line.key for line, r in score.lines if not r.seen}
    assert unseen == {"namespace_proven", "repository_fresh"}
    assert score.possible == 90


def _score_older(fleet) -> tuple:
    config = ProbeConfig(host_map=fleet.host_map, ca_file=fleet.ca_file)
    row, _, facts = asyncio.run(readiness_one(f"https://{OLD}/mcp", config, TODAY))
    return row, score_mcp(facts)


def test_an_older_server_falls_back_to_initialize(fleet, older):
    older.reset(_older_server(TOOLS))
    row, score = _score_older(fleet)
    assert row["outcome"] == "ok" and row["protocol_version"] == "2025-06-18" and row["answered_via"] == "initialize"
    assert [r["rpc"] for r in older.received if r["rpc"]][:2] == ["server/discover", "initialize"]
    assert _line(score, "discover_or_initialize").points == 8
    assert not _line(score, "revision_2026_07_28").passed and not _line(score, "cache_hints").passed
    assert _line(score, "deterministic_order").passed
    assert all(r["rpc"] != "tools/call" for r in older.received)  # never a tool call


def test_a_tool_order_that_changes_between_two_calls_fails_its_line(fleet, older):
    older.reset(_older_server(list(reversed(TOOLS))))
    row, score = _score_older(fleet)
    assert _names(row, "second") == ["get", "list"] and _names(row, "first") == ["list", "get"]
    assert _line(score, "deterministic_order").seen and not _line(score, "deterministic_order").passed
    # The second listing failing leaves the order unseen and the check's outcome as it was.
    older.reset({**_older_server(TOOLS), "tools/list": [tools_result(TOOLS, request_id=2), Scripted(500)]})
    row, score = _score_older(fleet)
    assert row["outcome"] == "ok" and not _line(score, "deterministic_order").seen


def test_a_401_is_read_for_its_rfc_9728_metadata(fleet):
    _, with_metadata = _score(fleet, "secure")
    _, without = _score(fleet, "plainauth")
    assert _line(with_metadata, "answers").passed and _line(with_metadata, "auth_metadata").passed
    assert "answers and names the resource" in _line(with_metadata, "auth_metadata").evidence
    assert not _line(without, "auth_metadata").passed
    assert not _line(with_metadata, "discover_or_initialize").seen  # behind the token


def test_the_daily_check_never_asks_discover_first_nor_lists_twice(fleet):
    host = fleet.host("catalog")
    config = ProbeConfig(host_map=fleet.host_map, ca_file=fleet.ca_file)

    async def go():
        async with build_client(config) as client:
            return await EndpointCheck(client, config, host.url, dt.datetime.now(dt.UTC)).run()

    result = asyncio.run(go())
    assert result.outcome == "ok" and result.second_tool_names is None
    assert not any("discover" in step for step in result.transcript)


def test_the_readiness_command(fleet, capsys):
    host = fleet.host("calendar")
    # The publisher domain (calendar.test) is pointed at a closed port: nothing is ever resolved.
    assert main(["readiness", host.url, "--json", "--quiet", "--resolve", f"{host.host}:{fleet.port}",
                 "--resolve", "calendar.test:9", "--ca-file", str(fleet.ca_file)]) == 0
    seen = json.loads(capsys.readouterr().out)
    assert seen["version"] == "mcp-2026-09-11.5" and seen["possible"] == 90
    assert {ln["line"]: ln["seen"] for ln in seen["lines"]}["namespace_proven"] is False
    # A URL the map would never check is refused before any connection, and nothing is seen.
    assert main(["readiness", "http://localhost:9/mcp", "--json", "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out)["possible"] == 0


def test_a_registry_name_makes_the_namespace_line_seen(fleet):
    host = fleet.host("calendar")
    config = ProbeConfig(host_map=fleet.host_map, ca_file=fleet.ca_file)
    _, _, facts = asyncio.run(readiness_one(host.url, config, TODAY, server_name="io.github.acme/calendar"))
    assert facts.namespace_proof == "github" and _line(score_mcp(facts), "namespace_proven").passed
    # A reverse-domain name: the registry's HTTP file is asked for on the namespace's domain (here a fleet
    # host without one), so the proof is the DNS record the registry must have accepted.
    _, _, facts = asyncio.run(readiness_one(host.url, config, TODAY, server_name="test.calendar.mcp/calendar"))
    assert facts.namespace_proof == "dns"
    # The ready publisher serves the file: an HTTP proof.
    ready = fleet.host("ready")
    _, _, facts = asyncio.run(readiness_one(ready.url, config, TODAY, server_name="test.ready/ready"))
    assert facts.namespace_proof == "http"


READ_ONLY = [{"name": "get", "description": "Get an item", "inputSchema": {"type": "object", "required": ["id"]},
              "annotations": {"readOnlyHint": True}}]


def _bad_call(fleet, older, answer, bad_call=True):
    older.reset({"initialize": initialize_result(), "notifications/initialized": Scripted(202),
                 "tools/list": [tools_result(READ_ONLY, request_id=2), tools_result(READ_ONLY, request_id=7)],
                 "tools/call": answer})
    config = ProbeConfig(host_map=fleet.host_map, ca_file=fleet.ca_file)
    row, _, _ = asyncio.run(readiness_one(f"https://{OLD}/mcp", config, TODAY, bad_call=bad_call))
    return row, [r for r in older.received if r["rpc"] == "tools/call"]


def test_step_5_is_made_only_when_an_operator_asks(fleet, older):
    legible = json_answer({"jsonrpc": "2.0", "id": "bad-call-1", "error": {"code": -32602,
                                                                 "message": "Invalid params: 'id' is required"}})
    row, calls = _bad_call(fleet, older, legible, bad_call=False)
    assert calls == [] and "bad_call_legible" not in row  # off by default: never a tool call
    row, calls = _bad_call(fleet, older, legible)
    assert len(calls) == 1 and row["bad_call_tool"] == "get" and row["bad_call_legible"] is True
    assert "'id' is required" in row["bad_call_evidence"]
    generic = json_answer({"jsonrpc": "2.0", "id": "bad-call-1",
                           "error": {"code": -32603, "message": "Internal error"}})
    row, _ = _bad_call(fleet, older, generic)
    assert row["bad_call_legible"] is False
    tool_error = json_answer({"jsonrpc": "2.0", "id": "bad-call-1", "result": {"isError": True, "content": [
        {"type": "text", "text": "missing argument id (a string)"}]}})
    assert _bad_call(fleet, older, tool_error)[0]["bad_call_legible"] is True
    accepted = json_answer({"jsonrpc": "2.0", "id": "bad-call-1",
                            "result": {"content": [{"type": "text", "text": "ok"}]}})
    row, _ = _bad_call(fleet, older, accepted)
    assert row["bad_call_legible"] is False and "succeeded" in row["bad_call_evidence"]
    # What the server said is shown as every quoted server text is: no credentials, no terminal escapes.
    leaky = json_answer({"jsonrpc": "2.0", "id": "bad-call-1", "error": {"code": -32602, "message": (
        "\x1b[31mbad id\x1b[0m; retry at https://bob:hunter2@db.internal.test/x\nwith Bearer " + "a1b2" * 10)}})
    row, _ = _bad_call(fleet, older, leaky)
    evidence = row["bad_call_evidence"]
    assert row["bad_call_legible"] is True and "bad id" in evidence
    assert "hunter2" not in evidence and "a1b2" * 10 not in evidence and "x1b" not in evidence and "31m" not in evidence
    # Escapes and invisible characters around a stock word are no message.
    escaped = json_answer({"jsonrpc": "2.0", "id": "bad-call-1", "error": {"code": -32603,
                                                                       "message": "\x1b[31mError\x1b[0m\u200b\u200b"}})
    assert _bad_call(fleet, older, escaped)[0]["bad_call_legible"] is False


def test_the_nightly_run_has_no_way_to_call_a_tool():
    import inspect

    from sevenmaps_pipeline.probe.run import readiness_day

    assert "bad_call" not in inspect.signature(readiness_day).parameters
    from sevenmaps_pipeline.defs.resources import ProberResource

    assert not [f for f in ProberResource.model_fields if "call" in f]


def test_step_5_on_a_2026_07_28_sdk_server_names_the_tool_in_its_header(fleet):
    ready = fleet.host("ready")
    config = ProbeConfig(host_map=fleet.host_map, ca_file=fleet.ca_file)
    before = len(fleet.recorded)
    row, _, _ = asyncio.run(readiness_one(ready.url, config, TODAY, bad_call=True))
    calls = [r for r in fleet.recorded[before:] if rpc_method(r) == "tools/call"]
    assert len(calls) == 1 and dict(calls[0]["headers"]).get("mcp-name") == "search_docs"
    # The fleet's servers have no tool handler: JSON-RPC's stock "Method not found" says nothing about the call.
    assert row["bad_call_tool"] == "search_docs" and row["bad_call_legible"] is False
    assert "Method not found" in row["bad_call_evidence"]


def test_the_bad_call_runs_only_where_a_verified_owner_asked_and_never_as_7maps_bot(fleet, older, lake, capsys):
    legible = json_answer({"jsonrpc": "2.0", "id": "bad-call-1", "error": {"code": -32602,
                                                                 "message": "Invalid params: 'id' is required"}})
    older.reset({"initialize": initialize_result(), "notifications/initialized": Scripted(202),
                 "tools/list": [tools_result(READ_ONLY, request_id=2), tools_result(READ_ONLY, request_id=7)],
                 "tools/call": legible})
    args = ["--lake", str(lake.root), "readiness", f"https://{OLD}/mcp", "--bad-call", "--json", "--quiet",
            "--resolve", f"{OLD}:{fleet.port}", "--ca-file", str(fleet.ca_file)]
    before = len(older.received)
    assert main(args) == 2  # no owner asked: refused before anything is contacted
    assert "verified owner asked" in capsys.readouterr().err and len(older.received) == before
    now = dt.datetime.now(dt.UTC)
    owners.issue_owner_token(lake, OLD, now)
    owners.mark_verified(lake, OLD, now)
    assert main(args) == 2  # verified, but the owner has not asked for it
    capsys.readouterr()
    assert main(["--lake", str(lake.root), "owner", "bad-call", OLD]) == 0
    assert main(args) == 0
    answer = json.loads(capsys.readouterr().out.split("\n", 1)[1])  # after the owner command's line
    assert answer["bad_call"]["asked_by_owner_of"] == OLD and answer["bad_call"]["legible"] is True
    seen = older.received[before:]
    calls = [r for r in seen if r["rpc"] == "tools/call"]
    assert len(calls) == 1 and calls[0]["headers"]["user-agent"] == BAD_CALL_USER_AGENT
    assert all(r["headers"]["user-agent"] == USER_AGENT for r in seen if r["rpc"] != "tools/call")
    assert "7Maps-bot" not in BAD_CALL_USER_AGENT
    assert main(["--lake", str(lake.root), "owner", "bad-call", OLD, "--off"]) == 0
    assert main(args) == 2  # withdrawn: never again
