"""The prober against a server built on the official TypeScript MCP SDK (tests/ts_client/ts_server.mjs, the SDK
pinned in tests/ts_client/package-lock.json): what a Node deployment answers, not the fleet's Python SDK. It is
served over real TLS (a throwaway CA, devtools/fleet/tls.py) on 127.0.0.1, in the SDK's two usual shapes: a
stateful server answering as SSE streams, and a stateless one answering as JSON; its tools/list comes in pages.

Held from both sides: what the check reads (outcome, every page's tools, the revision and serverInfo) and, from
the server's own record of what it was sent, what the check does (the three methods and never a tool call,
the session id on every request after the handshake, the session ended, our User-Agent, no credentials).

Its packages are installed by `make test` (npm ci), never at test time: no test reaches beyond 127.0.0.1."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from test_ts_sdk_client import CLIENT, pinned_sdk

from sevenmaps_pipeline.devtools.fleet.tls import make_tls
from sevenmaps_pipeline.probe.checker import EndpointCheck
from sevenmaps_pipeline.probe.config import PROTOCOL_VERSION, USER_AGENT, ProbeConfig, Timeouts
from sevenmaps_pipeline.probe.http import build_client
from sevenmaps_pipeline.probe.readiness import readiness_one
from sevenmaps_pipeline.rules.readiness import score_mcp

HOST = "travel.ts-sdk.test"
TOOL_NAMES = ["search_flights", "get_booking", "book_flight", "cancel_booking", "list_airports"]  # ts_server.mjs
TIMEOUTS = Timeouts(robots_txt=10, initialize=10, notifications_initialized=10, tools_list_per_page=10,
                    well_known_per_origin=10, session_end=10)


@dataclass(frozen=True)
class TsServer:
    port: int
    config: ProbeConfig
    ca_file: Path

    def url(self, path: str) -> str:
        return f"https://{HOST}{path}"

    def seen(self) -> dict:
        """The server's record of what it was sent (ts_server.mjs /__seen), asked under its TLS name."""
        with httpx.Client(verify=str(self.ca_file), timeout=10) as client:
            answer = client.get(f"https://127.0.0.1:{self.port}/__seen", extensions={"sni_hostname": HOST})
        answer.raise_for_status()
        return answer.json()


@pytest.fixture(scope="module")
def ts_server(tmp_path_factory) -> Iterator[TsServer]:
    pinned_sdk()
    node = shutil.which("node")
    assert node, "the TypeScript SDK server test needs Node.js (node on PATH): install it, then run `make test`"
    tls = make_tls(tmp_path_factory.mktemp("ts-tls"), [HOST])
    process = subprocess.Popen([node, str(CLIENT / "ts_server.mjs"), str(tls.cert_file), str(tls.key_file)],
                               cwd=CLIENT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.strip(), f"ts_server.mjs did not start: {process.stderr.read() if process.stderr else ''}"
        port = json.loads(line)["port"]
        config = ProbeConfig(host_map={HOST: port}, ca_file=tls.ca_file, timeouts=TIMEOUTS)
        yield TsServer(port, config, tls.ca_file)
    finally:
        process.terminate()
        process.wait(timeout=10)


def daily_check(server: TsServer, url: str):
    async def go():
        async with build_client(server.config) as client:
            return await asyncio.wait_for(EndpointCheck(client, server.config, url, dt.datetime.now(dt.UTC)).run(), 60)

    return asyncio.run(go())


@pytest.mark.parametrize(("path", "stateful"), [("/mcp", True), ("/stateless/mcp", False)])
def test_the_daily_check_reads_a_typescript_sdk_server_and_sends_only_the_three_methods(ts_server, path, stateful):
    before = len(ts_server.seen()["requests"])
    result = daily_check(ts_server, ts_server.url(path))
    assert result.outcome == "ok", result.outcome_detail
    assert [tool["name"] for tool in result.tools] == TOOL_NAMES  # three pages of two, two and one
    assert result.pages_read == 3 and result.tool_list_complete is True
    assert result.protocol_version == PROTOCOL_VERSION  # the SDK supports the revision asked for, and agrees to it
    assert (result.server_info_name, result.server_info_version) == ("ts-sdk-travel", "3.1.4")
    assert result.tools[1]["outputSchema"]["properties"]["status"] == {"type": "string"}

    seen = ts_server.seen()
    sent = [r for r in seen["requests"][before:] if r["path"] == path]
    posted = [r["rpc"] for r in sent if r["http"] == "POST"]
    assert posted == ["initialize", "notifications/initialized", "tools/list", "tools/list", "tools/list"]
    assert all(r["user_agent"] == USER_AGENT and r["authorization"] is None for r in sent)
    if stateful:  # the SDK's session: carried on every request after the handshake, then ended by our DELETE
        session = {r["session"] for r in sent[1:]}
        assert len(session) == 1 and None not in session
        assert [r["http"] for r in sent if r["http"] != "POST"] == ["DELETE"]
        assert session <= set(seen["closed"])
    else:  # no session to end, so none is carried and nothing but the POSTs is sent
        assert {r["session"] for r in sent} == {None} and all(r["http"] == "POST" for r in sent)


@pytest.mark.parametrize("path", ["/mcp", "/stateless/mcp"])
def test_the_readiness_check_of_a_typescript_sdk_server_scores_what_it_answers(ts_server, path):
    before = len(ts_server.seen()["requests"])
    row, _rows, facts = asyncio.run(readiness_one(ts_server.url(path), ts_server.config, dt.date.today()))
    assert row["outcome"] == "ok", row["outcome_detail"]
    # The SDK knows no server/discover (2026-07-28; refused before any session, as the SDK's own stateful
    # example does, or "Method not found" without one): initialize answers, worth 8 of the handshake line's 15.
    assert row["answered_via"] == "initialize" and row["tool_count"] == len(TOOL_NAMES)
    assert json.loads(row["second_tool_names_json"]) == TOOL_NAMES  # the second tools/list, in the same order
    lines = {result.key: result for _line, result in score_mcp(facts).lines}
    assert lines["discover_or_initialize"].seen and lines["discover_or_initialize"].points == 8
    assert lines["revision_2026_07_28"].seen and lines["revision_2026_07_28"].evidence == "revision 2025-06-18"
    # Four of five tools annotated (under the rubric's 90%), one of five with an outputSchema (under 50%).
    assert lines["annotation_coverage"].evidence == "4/5 tools annotated" and not lines["annotation_coverage"].passed
    assert not lines["output_schema_coverage"].passed and lines["deterministic_order"].passed
    sent = [r for r in ts_server.seen()["requests"][before:] if r["path"] == path]
    assert [r["rpc"] for r in sent if r["http"] == "POST"] == (
        ["server/discover", "initialize", "notifications/initialized"] + ["tools/list"] * 6)  # two lists, 3 pages


def test_tools_made_with_the_sdks_zod_helpers_are_read_as_the_sdk_sends_them(ts_server):
    """Most Node servers declare tools through McpServer.registerTool with zod schemas: the SDK turns them into
    JSON Schema of its own shape ($schema, additionalProperties false, defaults, formats). The check keeps each
    definition as sent, and the same list reads the same twice (one tools_hash)."""
    first, second = (daily_check(ts_server, ts_server.url("/zod/mcp")) for _ in range(2))
    assert first.outcome == "ok", first.outcome_detail
    assert (first.server_info_name, first.pages_read) == ("ts-sdk-notes", 1)
    tools = {tool["name"]: tool for tool in first.tools}
    assert list(tools) == ["notes_search", "notes_delete"]
    search = tools["notes_search"]
    assert search["title"] == "Search notes" and search["annotations"] == {"readOnlyHint": True}
    assert search["execution"] == {"taskSupport": "forbidden"}  # a newer field than our revision: kept as sent
    assert search["inputSchema"]["required"] == ["query"]
    assert search["inputSchema"]["properties"]["limit"]["default"] == 10
    assert search["outputSchema"]["properties"]["ids"]["type"] == "array"
    assert tools["notes_delete"]["inputSchema"]["properties"]["id"]["format"] == "uuid"
    assert first.tools == second.tools
