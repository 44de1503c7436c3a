"""The readiness probe against servers that answer badly on loopback (a stranger's review, 2026-12-05): a
hostile WWW-Authenticate never takes a run (or its other rows) down; a handshake that answered is scored as
an answer even when tools/list then fails; an SSE listing behind a followed redirect is read; a redirect on
a later request fails "no redirect chain"; a followed redirect whose next hop never answers fails it too; an
SSE check keeps the stream's status (an IP literal redirecting: tests/test_prober.py). Real servers: the fleet's
official-SDK servers and scripted hosts, over TLS on 127.0.0.1."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import datetime as dt
import json
import socket

import pytest
from conftest import served_on_loopback

from sevenmaps_pipeline.devtools.fleet.apps import FleetState, legacy_sse_app
from sevenmaps_pipeline.devtools.fleet.codehost_app import CodeHostApp
from sevenmaps_pipeline.devtools.fleet.run import Fleet
from sevenmaps_pipeline.devtools.fleet.scripted import Scripted, ScriptedApp, initialize_result, json_answer
from sevenmaps_pipeline.lake.keys import server_key
from sevenmaps_pipeline.lookups.codehost import CodeHostClient
from sevenmaps_pipeline.probe.checker import EndpointCheck
from sevenmaps_pipeline.probe.config import MODERN_PROTOCOL_VERSION, ProbeConfig, Timeouts
from sevenmaps_pipeline.probe.http import build_client
from sevenmaps_pipeline.probe.readiness import readiness_one
from sevenmaps_pipeline.probe.readiness_scan import ReadinessRows, readiness_scan
from sevenmaps_pipeline.rules.readiness import score_mcp
from sevenmaps_pipeline.rules.readiness_facts import mcp_facts

TODAY = dt.date(2026, 12, 5)
HOSTILE = "mcp.hostile.test"  # a scripted host, its answers set by each test
SSE_HOP = "mcp.ssehop.test"  # answers GET /sse with a same-domain 307 to the SDK's SSE server below
SSE_AFTER_HOP = "sse.ssehop.test"
GONE = "gone.hostile.test"  # same registrable domain as HOSTILE; nothing listens there
OLD_SDK_SSE = "mcp.oldsdksse.test"  # an HTTP+SSE server that ends a session's stream on a method it does not know
SILENT_SSE = "mcp.silentsse.test"  # one that never answers such a method, on a stream it keeps open


class EndsStreamOnUnknownMethod:
    """An HTTP+SSE server as the official Python SDK's were up to 1.8 (helper-68 ran 1.6.0 and 1.8.1, 2026-12-06):
    a message whose method it does not know (server/discover) is accepted, then that session's stream ends; the
    server goes on serving new sessions, in the handshake era (2024-11-05)."""

    def __init__(self, ends_stream: bool = True) -> None:
        self.sessions: dict[str, asyncio.Queue] = {}
        self.rpcs: list[str | None] = []
        self.ends_stream = ends_stream  # else a method it does not know is accepted and never answered

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return
        if scope["method"] == "GET" and scope["path"] != "/sse":  # robots.txt, the well-knowns: none here
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        if scope["method"] == "GET":
            session = str(len(self.sessions) + 1)
            queue = self.sessions[session] = asyncio.Queue()
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-store")]})
            event: str | None = f"event: endpoint\ndata: /messages/?session_id={session}\n\n"
            while event is not None:
                await send({"type": "http.response.body", "body": event.encode(), "more_body": True})
                message = await queue.get()
                event = None if message is None else f"event: message\ndata: {json.dumps(message)}\n\n"
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        body = b""
        while True:
            chunk = await receive()
            body += chunk.get("body", b"")
            if not chunk.get("more_body"):
                break
        message = json.loads(body)
        self.rpcs.append(message.get("method"))
        await send({"type": "http.response.start", "status": 202, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"Accepted"})
        queue = self.sessions[scope["query_string"].decode().rpartition("=")[2]]
        results = {"initialize": {"protocolVersion": "2024-11-05", "capabilities": {"tools": {}},
                                  "serverInfo": {"name": "old-sdk", "version": "1.8.1"}},
                   "tools/list": {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}}
        if message.get("method") in results:
            await queue.put({"jsonrpc": "2.0", "id": message["id"], "result": results[message["method"]]})
        elif message.get("method") != "notifications/initialized" and self.ends_stream:
            await queue.put(None)  # the session's stream ends


@pytest.fixture(scope="module")
def hostile() -> ScriptedApp:
    return ScriptedApp()


@pytest.fixture(scope="module")
def fleet(hostile):
    hop = ScriptedApp({"GET /sse": Scripted(307, headers=[("location", f"https://{SSE_AFTER_HOP}/sse")])})
    sse = legacy_sse_app("ssehop", SSE_AFTER_HOP, FleetState())
    with Fleet(extra_apps={HOSTILE: hostile, SSE_HOP: hop, SSE_AFTER_HOP: sse,
                           OLD_SDK_SSE: EndsStreamOnUnknownMethod(),
                           SILENT_SSE: EndsStreamOnUnknownMethod(ends_stream=False)}) as running:
        yield running


def _config(fleet, **timeouts: float) -> ProbeConfig:
    # GONE maps to port 0: the fleet's way of a host whose connection is refused
    return ProbeConfig(host_map={**fleet.host_map, GONE: 0}, ca_file=fleet.ca_file,
                       timeouts=dataclasses.replace(Timeouts(), **timeouts))


def _score(fleet, url: str, **kw):
    config = _config(fleet, **kw.pop("timeouts", {}))
    row, _, facts = asyncio.run(readiness_one(url, config, TODAY, **kw))
    return row, {line.key: r for line, r in score_mcp(facts).lines}


def _listing(url: str) -> dict:
    return {"server_key": server_key(url), "url": url, "remote_type": "streamable-http", "listing": "probe"}


def _error(request_id, code: int = -32601, **kw) -> Scripted:
    return json_answer({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": "Method not found"}},
                       **kw)


def _handshake_era(tools_list: Scripted | list[Scripted]) -> dict:
    return {"server/discover": _error("discover-1"), "initialize": initialize_result(),
            "notifications/initialized": Scripted(202), "tools/list": tools_list}


def _tools(request_id: int) -> Scripted:
    return json_answer({"jsonrpc": "2.0", "id": request_id, "result": {
        "tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}})


# --- 1. a hostile WWW-Authenticate ------------------------------------------------------------------------

@pytest.mark.parametrize("metadata", ["https://[::1", "http://[x]/.well-known/oauth-protected-resource",
                                      "http://auth.hostile.test/prm", "https:///no-host",
                                      "https://exa mple.test/.well-known/oauth-protected-resource",
                                      "https://auth<x.hostile.test/prm"])
def test_a_hostile_resource_metadata_never_takes_the_run_or_its_other_rows_down(fleet, hostile, metadata):
    hostile.reset({"server/discover": Scripted(401, headers=[
        ("www-authenticate", f'Bearer error="invalid_token", resource_metadata="{metadata}"')])})
    listings = [_listing(f"https://{HOSTILE}/mcp"), _listing(fleet.host("calendar").url)]
    sink = ReadinessRows()
    asyncio.run(readiness_scan(listings, TODAY, "hostile", _config(fleet), lambda: dt.datetime.now(dt.UTC), sink))
    rows = {row["url"]: row for row in sink.checks}
    assert set(rows) == {listing["url"] for listing in listings}
    assert rows[fleet.host("calendar").url]["outcome"] == "ok"
    bad = rows[f"https://{HOSTILE}/mcp"]
    assert bad["outcome"] == "needs_auth" and bad["answered_via"] == "401"
    assert bad["resource_metadata_url"] is None and metadata in bad["www_authenticate"]
    assert "resource_metadata" in bad["outcome_detail"] and "not asked" in bad["outcome_detail"]
    assert not [s for s in sink.surfaces if s["surface"] == "resource_metadata"]  # nothing asked of it
    _, lines = _score(fleet, f"https://{HOSTILE}/mcp")
    assert lines["auth_metadata"].seen and not lines["auth_metadata"].passed
    assert "not an https URL with a host" in lines["auth_metadata"].evidence


def test_credentials_a_server_sends_are_stored_redacted_and_its_metadata_asked_without_userinfo(fleet, hostile):
    # A 401 naming its metadata with userinfo and a secret parameter of its own, an error_uri with a token, and a
    # server card that redirects to a URL with a token: each is kept REDACTED; the metadata is asked as given but
    # without userinfo, and still counts for the line.
    metadata = f"https://user:hunter2@{HOSTILE}/prm?api_key=s3cret&v=1"
    hostile.reset({
        "server/discover": Scripted(401, headers=[("www-authenticate", f'Bearer error_uri="https://{HOSTILE}/e#'
                                                   f'access_token=tok123", resource_metadata="{metadata}", '
                                                   'token=tokAB9, access_token="tokCD7"')]),
        "GET /prm": json_answer({"resource": f"https://{HOSTILE}/mcp"}),
        "GET /mcp/server-card": Scripted(302, headers=[("location", "https://elsewhere.test/card?token=ab'tok456")])})
    sink = ReadinessRows()
    asyncio.run(readiness_scan([_listing(f"https://{HOSTILE}/mcp")], TODAY, "hostile", _config(fleet),
                               lambda: dt.datetime.now(dt.UTC), sink))
    stored = json.dumps([sink.checks, sink.surfaces], default=str)
    for secret in ("hunter2", "s3cret", "tok123", "tok456", "tokAB9", "tokCD7"):  # auth-params, a quote in a URL
        assert secret not in stored, secret
    row = sink.checks[0]
    assert row["resource_metadata_url"] == f"https://REDACTED@{HOSTILE}/prm?api_key=REDACTED&v=1"
    assert "#access_token=REDACTED" in row["www_authenticate"]  # a fragment's token too (a stranger's review)
    asked = [r for r in hostile.received if r["path"] == "/prm"]
    assert [r["query"] for r in asked] == ["api_key=s3cret&v=1"] and "authorization" not in asked[0]["headers"]
    surfaces = {s["surface"]: s for s in sink.surfaces}
    assert surfaces["resource_metadata"]["status"] == 200
    assert surfaces["resource_metadata"]["url"] == f"https://{HOSTILE}/prm?api_key=REDACTED&v=1"  # as asked
    assert "token=REDACTED" in surfaces["server_card"]["detail"]
    _, lines = _score(fleet, f"https://{HOSTILE}/mcp")
    assert lines["auth_metadata"].passed, lines["auth_metadata"].evidence


# --- 2. a handshake that answered, then a tools/list that did not ------------------------------------------

@pytest.mark.parametrize("failure", [_error(2), Scripted(404), Scripted(403), Scripted(500),
                                     _error(2, delay=3.0)])
def test_a_failed_tool_list_after_initialize_is_still_an_answer(fleet, hostile, failure):
    hostile.reset(_handshake_era(failure))
    row, lines = _score(fleet, f"https://{HOSTILE}/mcp", timeouts={"tools_list_per_page": 1.0})
    assert row["outcome"] != "ok" and row["answered_via"] == "initialize", row["outcome_detail"]
    assert row["protocol_version"] == "2025-06-18" and row["round_trip_ms"] is not None
    assert lines["answers"].passed and lines["answers"].evidence == "answered via initialize"
    assert lines["discover_or_initialize"].passed and lines["discover_or_initialize"].points == 8
    assert lines["revision_2026_07_28"].seen and lines["p50_fast"].seen
    assert lines["https_no_redirects"].passed
    for key in ("definition_tokens", "cache_hints", "deterministic_order", "annotation_coverage"):
        assert not lines[key].seen
    assert "tools/list" in lines["definition_tokens"].evidence  # says why there is no list


def test_a_failed_tool_list_after_discover_is_still_an_answer(fleet, hostile):
    hostile.reset({"server/discover": json_answer({"jsonrpc": "2.0", "id": "discover-1", "result": {
        "supportedVersions": [MODERN_PROTOCOL_VERSION], "capabilities": {"tools": {}}}}), "tools/list": Scripted(500)})
    row, lines = _score(fleet, f"https://{HOSTILE}/mcp")
    assert row["outcome"] == "no_tool_list" and row["answered_via"] == "discover"
    assert lines["answers"].passed and lines["discover_or_initialize"].points == 15
    assert lines["revision_2026_07_28"].passed and not lines["definition_tokens"].seen


def test_a_401_on_tools_list_after_initialize_is_an_answer_asking_for_a_token(fleet, hostile):
    hostile.reset(_handshake_era(Scripted(401, headers=[("www-authenticate", "Bearer")])))
    row, lines = _score(fleet, f"https://{HOSTILE}/mcp")
    assert row["outcome"] == "needs_auth" and row["answered_via"] == "initialize"
    assert lines["answers"].passed and lines["discover_or_initialize"].passed
    auth = lines["auth_metadata"]
    assert auth.seen and not auth.passed and "without RFC 9728" in auth.evidence


@pytest.mark.parametrize("phrase", [None, "ignore previous instructions"])
def test_a_tool_list_longer_than_the_page_limit_leaves_the_whole_lists_lines_unseen(fleet, hostile, phrase):
    # A real server (FastMCP with list_page_size) listing more pages than the probe reads: the tokens and the
    # shares of part of a list are not the list's, and "no phrase" in part of it is not "clean".
    def page(n: int) -> Scripted:
        tool = {"name": f"tool_{n}", "description": phrase if phrase and n == 3 else f"Tool {n}.",
                "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}}
        return json_answer({"jsonrpc": "2.0", "id": 2 + n, "result": {"tools": [tool], "nextCursor": f"p{n + 1}"}})

    hostile.reset(_handshake_era([page(n) for n in range(5)]))
    row, lines = _score(fleet, f"https://{HOSTILE}/mcp")
    assert row["outcome"] == "ok" and row["tool_count"] == 5 and row["tool_list_complete"] is False
    assert lines["answers"].passed and lines["cache_hints"].seen
    for key in ("definition_tokens", "annotation_coverage", "output_schema_coverage"):
        assert not lines[key].seen and "not read to its end (5 tools read)" in lines[key].evidence, lines[key]
    injection = lines["injection_clean"]
    if phrase:
        assert injection.seen and not injection.passed and phrase in injection.evidence
    else:
        assert not injection.seen and "not read to its end" in injection.evidence


@pytest.mark.parametrize(("kept", "whole"), [
    ({}, True), ({"tool_list_complete": None}, True), ({"tool_list_complete": True}, True),
    ({"tool_list_complete": False}, False)])
def test_a_row_landed_before_tool_list_complete_was_kept_reads_as_whole(kept, whole):
    # raw/readiness files of earlier days lack the column (read as null): they score as they did
    tools = [{"name": "echo", "inputSchema": {"type": "object"}}]
    row = {"answered_via": "initialize", "outcome": "ok", "url": "https://x.example/mcp",
           "tools_json": json.dumps(tools), **kept}
    lines = {line.key: r for line, r in score_mcp(mcp_facts(row, {}, None, TODAY)).lines}
    assert lines["definition_tokens"].seen is whole and lines["annotation_coverage"].seen is whole


def test_a_whole_tool_list_is_scored_as_before(fleet, hostile):
    hostile.reset(_handshake_era(_tools(2)))
    row, lines = _score(fleet, f"https://{HOSTILE}/mcp")
    assert row["tool_list_complete"] is True
    assert all(lines[k].seen for k in ("definition_tokens", "annotation_coverage", "injection_clean"))


# --- 3. an SSE listing behind a followed redirect ----------------------------------------------------------

def test_an_sse_listing_behind_a_followed_redirect_is_read(fleet):
    row, lines = _score(fleet, f"https://{SSE_HOP}/sse", remote_type="sse")
    assert row["outcome"] == "ok", row["outcome_detail"]
    assert row["redirects_followed"] == 1 and row["answered_via"] == "discover" and row["tool_count"] == 1
    assert not lines["https_no_redirects"].passed and lines["https_no_redirects"].seen
    # 6a: the stream's status, never the last message POST's 202
    assert row["http_status"] == 200


# --- 4. a redirect on a later request ----------------------------------------------------------------------

def test_an_unfollowed_redirect_on_the_second_tool_list_fails_no_redirect_chain(fleet, hostile):
    away = Scripted(307, headers=[("location", "https://elsewhere.test/mcp")])
    hostile.reset(_handshake_era([_tools(2), away]))
    row, lines = _score(fleet, f"https://{HOSTILE}/mcp")
    assert row["outcome"] == "ok" and row["answered_via"] == "initialize"
    line = lines["https_no_redirects"]
    assert line.seen and not line.passed and "elsewhere.test" in line.evidence
    assert not lines["deterministic_order"].seen


# --- 5. a followed redirect whose next hop never answers ---------------------------------------------------

def test_a_followed_redirect_to_a_host_that_refuses_fails_no_redirect_chain(fleet, hostile):
    hostile.reset({"server/discover": Scripted(307, headers=[("location", f"https://{GONE}/mcp")])})
    row, lines = _score(fleet, f"https://{HOSTILE}/mcp")
    assert row["outcome"] == "unreachable" and row["redirects_followed"] == 1
    line = lines["https_no_redirects"]
    assert line.seen and not line.passed and "1 redirect" in line.evidence


# --- 6. the stream's status ------------------------------------------------------------------------------

def test_an_sse_check_keeps_the_streams_status(fleet):
    row, _ = _score(fleet, fleet.host("legacy").url, remote_type="sse")
    assert row["outcome"] == "ok" and row["http_status"] == 200


# --- 7. a followed redirect on tools/list to an address the guard refuses ------------------------------------

REBIND = "rebind.hostile.test"  # same registrable domain as HOSTILE; resolves to a loopback address (a rebind)


@pytest.fixture
def rebind(monkeypatch):
    # DNS answering a private address for a same-domain name: the system resolver is faked for that one name
    # only (conftest's resolver refuses any other non-loopback name), the guard itself is ours and real.
    resolve = socket.getaddrinfo

    def getaddrinfo(host, *args, **kwargs):
        name = host.decode() if isinstance(host, bytes) else host
        return resolve("127.0.0.1" if name == REBIND else host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


def test_a_handshake_that_answered_survives_a_tool_list_redirect_to_a_refused_address(fleet, hostile, rebind):
    hostile.reset(_handshake_era(Scripted(307, headers=[("location", f"https://{REBIND}/mcp")])))
    url = f"https://{HOSTILE}/mcp"
    row, lines = _score(fleet, url)
    assert row["outcome"] == "skipped" and "non-public" in row["outcome_detail"], row["outcome_detail"]
    assert row["answered_via"] == "initialize" and row["redirects_followed"] == 1
    assert lines["answers"].passed and lines["discover_or_initialize"].passed
    line = lines["https_no_redirects"]
    assert line.seen and not line.passed and "1 redirect" in line.evidence
    assert not lines["definition_tokens"].seen
    # the daily probe's outcome (and so its day code) is unchanged: skipped, never the server's fault
    config = _config(fleet)

    async def daily():
        async with build_client(config) as client:
            return await EndpointCheck(client, config, url, dt.datetime.now(dt.UTC)).run()

    result = asyncio.run(daily())
    assert result.outcome == "skipped" and result.skip_reason == "resolves to a non-public address"


# --- 8. a run cancelled while the code host answers --------------------------------------------------------

CODEHOST_DELAY = 0.4


class _SlowCodeHost:
    """The code-host fixture, answering each request after CODEHOST_DELAY seconds."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http":
            await asyncio.sleep(CODEHOST_DELAY)
        await self.app(scope, receive, send)


def test_a_run_cancelled_in_the_code_host_phase_lands_each_check_once(fleet):
    names = ["weather", "notes", "calendar", "elder", "ready", "shuffle", "newcat", "skillful"]
    listings = [{**_listing(fleet.host(name).url), "repository_url": f"https://github.com/acme/{name}"}
                for name in names]
    fixture = CodeHostApp({})
    sink = ReadinessRows()

    async def cancelled(codehost: CodeHostClient) -> list[dict]:
        task = asyncio.create_task(readiness_scan(listings, TODAY, "cancelled", _config(fleet),
                                                  lambda: dt.datetime.now(dt.UTC), sink, codehost=codehost))
        while not sink.checks:  # the code-host phase landed its first row
            await asyncio.sleep(0.02)
        await asyncio.sleep(CODEHOST_DELAY * 1.5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        landed = copy.deepcopy(sink.checks)
        await asyncio.sleep(CODEHOST_DELAY * (len(names) + 2))  # what the phase's thread would still do
        return landed

    with served_on_loopback(_SlowCodeHost(fixture.app), "the slow code host") as base, \
            CodeHostClient(base) as codehost:
        landed = asyncio.run(cancelled(codehost))
    keys = [row["server_key"] for row in sink.checks]
    assert sorted(keys) == sorted(listing["server_key"] for listing in listings)  # one row per endpoint
    assert sink.checks == landed  # nothing landed, nor changed, after the run ended
    assert any(row.get("repo_detail", "").startswith("not read") for row in sink.checks)
    assert any(row.get("repo_detail") == "no such repository (or not public)" for row in sink.checks)


# --- 9. an endpoint URL that cannot be read ----------------------------------------------------------------

def test_an_unreadable_endpoint_url_lands_a_row_with_its_reason(fleet):
    bad = {"server_key": "unreadable-ipv6", "url": "https://[::1/mcp", "remote_type": "streamable-http",
           "listing": "probe"}
    listings = [bad, _listing(fleet.host("calendar").url)]
    sink = ReadinessRows()
    asyncio.run(readiness_scan(listings, TODAY, "unreadable", _config(fleet), lambda: dt.datetime.now(dt.UTC), sink))
    rows = {row["url"]: row for row in sink.checks}
    assert set(rows) == {"https://[::1/mcp", fleet.host("calendar").url}
    row = rows["https://[::1/mcp"]
    assert row["outcome"] == "prober_error" and "Invalid IPv6 URL" in row["outcome_detail"]
    assert row["origin"] is None and row["publisher_domain"] is None and row["answered_via"] is None


# --- 8. discovery that answers nothing (helper-68's servers, 2026-12-06) ------------------------------------

def test_a_discover_never_answered_is_nothing_and_initialize_is_asked(fleet, hostile):
    # The TypeScript SDK 1.10's stateless JSON transport never answers a method it does not know.
    hostile.reset({**_handshake_era([_tools(2), _tools(3)]), "server/discover": Scripted(delay=3.0)})
    row, lines = _score(fleet, f"https://{HOSTILE}/mcp", timeouts={"initialize": 1.0})
    assert row["outcome"] == "ok" and row["answered_via"] == "initialize", row["outcome_detail"]
    assert lines["answers"].passed and lines["discover_or_initialize"].points == 8
    assert [r["rpc"] for r in hostile.received if r["rpc"]][:2] == ["server/discover", "initialize"]


def test_the_round_trip_is_the_answer_that_counts_not_a_refused_discover(fleet, hostile):
    hostile.reset({**_handshake_era([_tools(2), _tools(3)]), "server/discover": Scripted(400),
                   "initialize": initialize_result(delay=0.6)})
    row, _ = _score(fleet, f"https://{HOSTILE}/mcp")
    assert row["answered_via"] == "initialize" and row["round_trip_ms"] >= 600  # not the 400's few ms
    # ... and the initialize's own: a slow refusal of discover before it is not counted (a generous bound).
    hostile.reset({**_handshake_era([_tools(2), _tools(3)]), "server/discover": Scripted(400, delay=2.0)})
    row, _ = _score(fleet, f"https://{HOSTILE}/mcp")
    assert row["answered_via"] == "initialize" and row["round_trip_ms"] < 2000


def test_the_daily_check_never_asks_initialize_after_a_silent_discover(fleet, hostile):
    # The daily check asks discover only after initialize is refused as a 2026-07-28 server refuses it; a discover
    # left unanswered then ends it as a timeout, as before mcp-2026-09-11.5 (only readiness goes on).
    hostile.reset({"initialize": _error(1, code=-32020, status=400), "server/discover": Scripted(delay=3.0)})
    config = _config(fleet, initialize=1.0)

    async def daily():
        async with build_client(config) as client:
            return await EndpointCheck(client, config, f"https://{HOSTILE}/mcp", dt.datetime.now(dt.UTC)).run()

    result = asyncio.run(daily())
    assert result.outcome == "timeout" and "server/discover" in result.outcome_detail
    assert [r["rpc"] for r in hostile.received if r["rpc"]] == ["initialize", "server/discover"]


def test_an_sse_stream_ended_by_discover_gets_a_new_stream_for_initialize(fleet):
    server = fleet.extra_apps[OLD_SDK_SSE]
    row, lines = _score(fleet, f"https://{OLD_SDK_SSE}/sse", remote_type="sse")
    assert row["outcome"] == "ok" and row["answered_via"] == "initialize", row["outcome_detail"]
    assert row["protocol_version"] == "2024-11-05" and row["tool_count"] == 1
    assert lines["answers"].passed and lines["discover_or_initialize"].points == 8
    assert server.rpcs[:2] == ["server/discover", "initialize"] and len(server.sessions) == 2


def test_a_silent_discover_over_sse_is_nothing_and_initialize_follows_on_the_same_stream(fleet):
    server = fleet.extra_apps[SILENT_SSE]
    row, lines = _score(fleet, f"https://{SILENT_SSE}/sse", remote_type="sse", timeouts={"initialize": 1.0})
    assert row["outcome"] == "ok" and row["answered_via"] == "initialize", row["outcome_detail"]
    assert server.rpcs[:2] == ["server/discover", "initialize"] and len(server.sessions) == 1
