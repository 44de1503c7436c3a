"""The prober against what real deployments do: compressing proxies in front of real SDK servers, odd
JSON types, credentials in listed URLs, names resolving to non-public addresses, slow but valid servers,
and — asserted from the server's side — exactly what the prober sends."""

from __future__ import annotations

import asyncio
import datetime as dt
import gzip
import json
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import land_probes, land_registry, probe

from sevenmaps_pipeline.devtools.fleet.middleware import rpc_method
from sevenmaps_pipeline.devtools.fleet.run import Fleet
from sevenmaps_pipeline.devtools.fleet.scripted import (
    Scripted,
    ScriptedApp,
    initialize_result,
    json_answer,
    tools_result,
)
from sevenmaps_pipeline.lake.paths import LakePaths
from sevenmaps_pipeline.probe.checker import EndpointCheck
from sevenmaps_pipeline.probe.config import USER_AGENT, ProbeConfig, Timeouts
from sevenmaps_pipeline.probe.http import build_client
from sevenmaps_pipeline.probe.netguard import is_public_address
from sevenmaps_pipeline.probe.origins import check_origin
from sevenmaps_pipeline.probe.run import readiness_day
from sevenmaps_pipeline.probe.surfaces import fetch_document
from sevenmaps_pipeline.registry.client import rows_for_entry

FAST = Timeouts(robots_txt=4, initialize=4, notifications_initialized=4, tools_list_per_page=4,
                well_known_per_origin=4, check_overall=8, legacy_sse_endpoint_event=4)
SCRIPTED = "mcp.scripted.test"
STREAMS = "mcp.streams.test"
TOOLS = [{"name": "list_items", "description": "List the items", "inputSchema": {"type": "object"}}]


@pytest.fixture(scope="module")
def scripted() -> ScriptedApp:
    return ScriptedApp()


async def every_path_streams(scope: dict, receive, send) -> None:
    """A server that answers every path, robots.txt included, with its MCP event stream, which never ends (tmcp's
    HttpTransport with `path: null` does this)."""
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
    await send({"type": "http.response.body", "body": b": connected\n\n", "more_body": True})
    while (await receive())["type"] != "http.disconnect":
        pass


def robots_as_a_stream(pieces: list[tuple[float, bytes]], ends: bool):
    """robots.txt sent as a text/event-stream, each piece after its pause; ending, or held open."""
    async def app(scope: dict, receive, send) -> None:
        if scope["type"] != "http":
            return
        if scope.get("path") != "/robots.txt":
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream; charset=utf-8")]})
        for pause, piece in pieces:
            await asyncio.sleep(pause)
            await send({"type": "http.response.body", "body": piece, "more_body": True})
        if ends:
            await send({"type": "http.response.body", "body": b""})
            return
        while (await receive())["type"] != "http.disconnect":
            pass
    return app


# robots.txt as an event stream: read for robots.txt's whole time (FAST: 4 s), as a plain file is
SLOW_STREAMS = {
    "mcp.slowdisallow.test": robots_as_a_stream([(0, b"User-agent: *\n"), (1.5, b"Disallow: /\n")], ends=True),
    "mcp.opendisallow.test": robots_as_a_stream([(0, b"User-agent: *\n"), (0.2, b"Disallow: /\n")], ends=False),
    "mcp.silentstream.test": robots_as_a_stream([(1.5, b": ping\n\nevent: endpoint\ndata: /m?s=1\n\n")], ends=False),
}


@pytest.fixture(scope="module")
def fleet(scripted):
    with Fleet(slow_seconds=3, extra_apps={SCRIPTED: scripted, STREAMS: every_path_streams, **SLOW_STREAMS}) as running:
        yield running


def config_for(fleet: Fleet, timeouts: Timeouts = FAST) -> ProbeConfig:
    return ProbeConfig(host_map=fleet.host_map, ca_file=fleet.ca_file, timeouts=timeouts)


def run_check(fleet: Fleet, url: str, *, remote_type: str = "streamable-http", overall: float | None = None,
              timeouts: Timeouts = FAST, accept_encoding: str | None = None):
    config = config_for(fleet, timeouts)

    async def go():
        async with build_client(config) as client:
            if accept_encoding is not None:
                client.headers["Accept-Encoding"] = accept_encoding
            return await asyncio.wait_for(EndpointCheck(client, config, url, dt.datetime.now(dt.UTC), remote_type,
                                                        overall=overall).run(), 60)

    return asyncio.run(go())


# ------------------------------------------------------------------------------------------ compression
@pytest.mark.parametrize(("name", "toolset"), [
    ("zipjson", "notes_v1"),       # gzip JSON answers from the SDK's json_response server
    ("zipsse", "weather_v1"),      # gzip SSE streams, flushed event by event
    ("zippages", "catalog"),       # zlib deflate, tools/list over several pages
    ("rawdeflate", "single"),      # "deflate" sent as a raw DEFLATE stream
    ("zipalways", "single"),       # gzip although the client asked for no compression
])
def test_compressed_answers_are_read_like_plain_ones(fleet, name, toolset):
    host = fleet.host(name)
    result = run_check(fleet, host.url, accept_encoding="identity" if host.compress == "gzip-unasked" else None)
    assert result.outcome == "ok", result.outcome_detail
    assert [t["name"] for t in result.tools] == [t["name"] for t in fleet.toolsets[toolset]]
    assert result.tool_list_complete is True
    if name == "zippages":
        assert result.pages_read > 1
    encodings = {h[1] for r in fleet.requests_to(host.host) for h in r["headers"] if h[0] == "accept-encoding"}
    assert encodings == ({"identity"} if host.compress == "gzip-unasked" else {"gzip, deflate"})


def test_compressed_robots_txt_and_well_knowns_are_decoded(fleet):
    config = config_for(fleet)

    async def go(origin):
        async with build_client(config) as client:
            return await check_origin(client, config, origin, dt.datetime.now(dt.UTC))

    robots = asyncio.run(go("https://mcp.zipsse.test"))
    assert robots.robots_policy == "rules" and robots.robots_txt == "User-agent: *\nAllow: /\n"
    cards = asyncio.run(go("https://mcp.zipjson.test"))
    status, text = cards.documents["agent_card"]
    assert status == 200 and json.loads(text)["name"] == "zipjson"


def _origin(fleet: Fleet, host: str):
    config = config_for(fleet)

    async def go():
        async with build_client(config) as client:
            return await check_origin(client, config, f"https://{host}", dt.datetime.now(dt.UTC))

    return asyncio.run(go())


def test_a_robots_txt_answered_with_an_endless_event_stream_is_no_file_not_no_answer(fleet):
    found = _origin(fleet, STREAMS)
    assert (found.robots_status, found.robots_policy, found.unavailable, found.robots_txt) == (200, "allow_all", None,
                                                                                              None)
    assert found.robots_detail == ("HTTP 200: an event stream still open, with only the stream's own lines: not a "
                                   "file; no rules")
    assert found.allows(f"https://{STREAMS}/mcp")
    # each well-known document answered the same way, read briefly (not the origin's whole budget on one), and
    # nothing of the stream is kept as a document
    assert found.documents == {name: (200, None) for name in found.documents} and len(found.documents) == 3


@pytest.mark.parametrize(("host", "policy", "allowed"), [
    ("mcp.slowdisallow.test", "rules", False),          # ends within robots.txt's time: read whole, obeyed
    ("mcp.opendisallow.test", "disallow_all", False),   # lines of a file, still open: a file that did not arrive
    ("mcp.silentstream.test", "allow_all", True),       # only the stream's own lines, still open: no file
])
def test_robots_txt_as_an_event_stream_is_never_obeyed_less_than_a_slow_plain_file(fleet, host, policy, allowed):
    found = _origin(fleet, host)
    assert found.robots_policy == policy and found.allows(f"https://{host}/mcp") is allowed, found.robots_detail
    if policy == "disallow_all":
        assert found.unavailable and "still open" in found.robots_detail


def test_a_robots_txt_sent_as_an_event_stream_that_ends_is_obeyed(fleet, scripted):
    scripted.reset({"GET /robots.txt": Scripted(200, [("content-type", "Text/Event-Stream; charset=utf-8")],
                                                b"User-agent: *\nDisallow: /\n")})
    found = _origin(fleet, SCRIPTED)
    assert (found.robots_status, found.robots_policy, found.robots_detail) == (200, "rules", "parsed")
    assert not found.allows(f"https://{SCRIPTED}/mcp")


def test_a_discovery_document_answered_with_an_endless_event_stream_is_no_document(fleet):
    config = config_for(fleet)

    async def go():
        async with build_client(config) as client:
            return await fetch_document(client, f"https://{STREAMS}/.well-known/mcp/server-card.json",
                                        "application/json", 4, 65536)

    document = asyncio.run(go())
    assert (document.status, document.content_type, document.body) == (200, "text/event-stream", None)
    assert document.detail == "an event stream still open, with only the stream's own lines: not a file"


def test_a_decompression_bomb_ends_at_the_decoded_cap(fleet, scripted):
    bomb = gzip.compress(b'{"jsonrpc":"2.0","id":1,"result":{"pad":"' + b" " * (64 << 20) + b'"}}')
    assert len(bomb) < 200_000  # 64 MiB once decoded
    scripted.reset({"initialize": Scripted(headers=[("content-type", "application/json"),
                                                    ("content-encoding", "gzip")], body=bomb, chunks=8)})
    result = run_check(fleet, f"https://{SCRIPTED}/mcp")
    assert result.outcome == "not_mcp"
    assert "exceeds 1,048,576 bytes once decoded" in result.outcome_detail


@pytest.mark.parametrize(("encoding", "detail"), [
    ("br", "Content-Encoding br is not one we accept"),
    ("gzip", "gzip body cannot be decoded"),  # says gzip, is not
])
def test_an_encoding_we_cannot_decode_is_not_mcp(fleet, scripted, encoding, detail):
    scripted.reset({"initialize": Scripted(headers=[("content-type", "application/json"),
                                                    ("content-encoding", encoding)], body=b"\x00\x01garbage")})
    result = run_check(fleet, f"https://{SCRIPTED}/mcp")
    assert result.outcome == "not_mcp" and detail in result.outcome_detail


def test_gzip_without_content_encoding_is_still_read(fleet, scripted):
    init = initialize_result()
    scripted.reset({"initialize": Scripted(headers=init.headers, body=gzip.compress(init.body)),
                    "tools/list": tools_result(TOOLS)})
    result = run_check(fleet, f"https://{SCRIPTED}/mcp")
    assert result.outcome == "ok" and result.tools == TOOLS


@pytest.mark.parametrize("release, discovered", [("1.8.1", False), ("1.9.0", False), ("1.10.1", True), (None, True)])
def test_readiness_asks_no_discovery_of_a_server_whose_daily_check_read_a_release_it_takes_down(
        fleet, scripted, tmp_path, release, discovered):
    """The official Python SDK 1.8.0-1.9.x, stateless, answer 500 to everyone after a method they do not know (run on
    loopback: probe/fragile_releases.py). Readiness reads the release from the day's daily check and asks initialize
    without server/discover first, and reads it as a server whose discover gave no result."""
    url, today = f"https://{SCRIPTED}/mcp", dt.datetime.now(dt.UTC).date()
    lake = LakePaths.at(tmp_path / "lake")
    land_registry(lake, [url], day=today)
    land_probes(lake, [probe(url, "ok", day=today, hour=0, server_info_version=release)], day=today)
    scripted.reset({"initialize": initialize_result(), "tools/list": tools_result(TOOLS)})
    readiness_day(lake, today, config_for(fleet))
    asked = [r["rpc"] for r in scripted.received if r["method"] == "POST"]
    assert ("server/discover" in asked) is discovered and "initialize" in asked, asked
    (row,) = [r for path in lake.raw_files("readiness", today) for r in pq.read_table(path).to_pylist()]
    assert row["outcome"] == "ok" and row["answered_via"] == "initialize" and row["server_info_name"] == "scripted"


# ------------------------------------------------------------------------- what the prober sends
@pytest.mark.parametrize("release, ended", [("1.8.0", False), ("1.9.4", False), (" 1.9.0", False), ("1.10.0", True),
                                             ("1.19.0", True), ("2.3.0", True), ("weather-1.9.4", True), (None, True)])
def test_a_session_is_ended_unless_the_server_reports_a_release_a_delete_takes_down(fleet, scripted, release, ended):
    """The official Python SDK 1.8.0-1.9.x answer 500 to everyone after one session is ended with DELETE (run on
    loopback: probe/fragile_releases.py); a FastMCP server of those releases reports the SDK's release as its own."""
    info = {"name": "weather", **({"version": release} if release is not None else {})}
    init = json_answer({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-06-18",
                                                             "capabilities": {"tools": {}}, "serverInfo": info}},
                       headers=[("content-type", "application/json"), ("mcp-session-id", "s-1")])
    scripted.reset({"initialize": init, "tools/list": tools_result(TOOLS), "DELETE /mcp": Scripted(status=200)})
    result = run_check(fleet, f"https://{SCRIPTED}/mcp")
    assert result.outcome == "ok" and result.session_id == "s-1"
    sent = [(r["method"], r["rpc"]) for r in scripted.received]
    assert sent[:3] == [("POST", "initialize"), ("POST", "notifications/initialized"), ("POST", "tools/list")]
    assert (("DELETE", None) in sent) is ended, sent


def test_what_the_prober_sends_seen_from_the_server(fleet):
    host = fleet.host("weather")  # the SDK's stateful SSE server: it hands out a session id
    before = len(fleet.requests_to(host.host))
    result = run_check(fleet, host.url)
    assert result.outcome == "ok" and result.session_id
    sent = fleet.requests_to(host.host)[before:]
    assert [(r["method"], rpc_method(r)) for r in sent] == [
        ("POST", "initialize"), ("POST", "notifications/initialized"), ("POST", "tools/list"), ("DELETE", None)]
    for i, request in enumerate(sent):
        headers = dict(request["headers"])
        assert headers["user-agent"] == USER_AGENT
        assert "authorization" not in headers and "cookie" not in headers
        if i == 0:  # nothing of a session before initialize has answered
            assert "mcp-session-id" not in headers and "mcp-protocol-version" not in headers
            assert json.loads(request["body"])["params"]["protocolVersion"] == "2025-06-18"
        else:
            assert headers["mcp-session-id"] == result.session_id
            assert headers["mcp-protocol-version"] == result.protocol_version
    assert all(rpc_method(r) != "tools/call" for r in fleet.recorded)


def test_a_cookie_a_server_sets_is_never_sent_back(fleet):
    host = fleet.host("flaky")  # sets a cookie on initialize (and cuts the first connection)
    before = len(fleet.requests_to(host.host))
    result = run_check(fleet, host.url)
    assert result.outcome == "ok"
    assert all("cookie" not in dict(r["headers"]) for r in fleet.requests_to(host.host)[before:])


# --------------------------------------------------------------------------------------- credentials
def test_a_url_with_credentials_is_never_contacted_and_never_stored(fleet):
    host = fleet.host("weather")
    before = len(fleet.requests_to(host.host))
    for url in (f"https://probe-user:s3cret-token@{host.host}/mcp", f"https://{host.host}/mcp?api_key=s3cret-token"):
        result = run_check(fleet, url)
        assert result.outcome == "skipped" and result.skip_reason == "credentials in URL"
        assert len(fleet.requests_to(host.host)) == before
        assert "s3cret" not in json.dumps(result.__dict__, default=str)


def test_registry_rows_redact_credentials_everywhere():
    entry = {"server": {"name": "io.test/creds", "version": "1.0.0", "remotes": [
        {"type": "streamable-http", "url": "https://admin:hunter2@mcp.example.com/mcp"}]}}
    [row] = rows_for_entry(entry, dt.date(2026, 11, 10), dt.datetime.now(dt.UTC))
    assert row["listing"] == "skip" and row["skip_reason"] == "credentials in URL"
    assert row["url"] == "https://REDACTED@mcp.example.com/mcp" and row["server_key"] == "mcp.example.com/mcp"
    assert "hunter2" not in json.dumps(row, default=str)


def test_a_redirect_to_a_url_with_credentials_is_not_followed(fleet, scripted):
    scripted.reset({"initialize": Scripted(307, [("location", f"https://u:topsecret@{SCRIPTED}/other")])})
    result = run_check(fleet, f"https://{SCRIPTED}/mcp")
    assert result.outcome == "redirect" and "carrying credentials" in result.outcome_detail
    assert result.redirect_location == f"https://REDACTED@{SCRIPTED}/other"
    assert len(scripted.received) == 1 and "authorization" not in scripted.received[0]["headers"]


def test_sevenmaps_probe_refuses_a_url_with_credentials():
    proc = subprocess.run([sys.executable, "-m", "sevenmaps_pipeline.cli", "probe",
                           "https://me:pa55word@mcp.example.com/mcp"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "credentials" in proc.stderr and "pa55word" not in proc.stderr + proc.stdout
    assert "Traceback" not in proc.stderr


# ------------------------------------------------------------------------------- non-public addresses
@pytest.mark.parametrize(("address", "public"), [
    ("8.8.8.8", True), ("1.1.1.1", True), ("2606:4700:4700::1111", True),
    ("0.1.2.3", False), ("10.1.2.3", False), ("100.64.0.1", False), ("127.0.0.1", False),
    ("169.254.169.254", False), ("172.16.0.1", False), ("172.31.255.255", False), ("192.0.0.8", False),
    ("192.0.2.1", False), ("192.31.196.1", False), ("192.52.193.1", False), ("192.88.99.1", False),
    ("192.168.1.1", False), ("192.175.48.1", False), ("198.18.0.1", False), ("198.51.100.1", False),
    ("203.0.113.1", False), ("224.0.0.1", False), ("240.0.0.1", False), ("255.255.255.255", False),
    ("::", False), ("::1", False), ("::a00:1", False), ("::ffff:10.0.0.1", False), ("::ffff:8.8.8.8", True),
    ("64:ff9b::a00:1", False), ("64:ff9b::7f00:1", False), ("64:ff9b::808:808", True),
    ("64:ff9b:1::808:808", False), ("100::1", False), ("2001::1", False),
    ("2001:0:4136:e378:8000:63bf:3fff:fdd2", False), ("2001:db8::1", False), ("2002:a00:1::1", False),
    ("2002:7f00:1::1", False), ("2002:808:808::1", True), ("3fff::1", False), ("5f00::1", False),
    ("fc00::1", False), ("fd12:3456::1", False), ("fe80::1", False), ("fe80::1%eth0", False),
    ("fec0::1", False), ("ff02::1", False), ("not an address", False),
])
def test_every_special_purpose_range_is_non_public(address, public):
    assert is_public_address(address) is public


def test_a_name_resolving_to_a_non_public_address_is_skipped_never_down(fleet):
    config = ProbeConfig(timeouts=FAST, ca_file=fleet.ca_file)  # no host map: localhost really resolves

    async def go():
        async with build_client(config) as client:
            check = await EndpointCheck(client, config, f"https://localhost:{fleet.port}/mcp",
                                        dt.datetime.now(dt.UTC)).run()
            origin = await check_origin(client, config, f"https://localhost:{fleet.port}", dt.datetime.now(dt.UTC))
            return check, origin

    check, origin = asyncio.run(go())
    assert check.outcome == "skipped" and check.skip_reason == "resolves to a non-public address"
    assert origin.skip_reason == "resolves to a non-public address" and origin.unavailable is None


# ------------------------------------------------------------------------------------- timing rules
def _slow_but_valid(step: float) -> dict:
    return {"initialize": initialize_result(delay=step), "notifications/initialized": Scripted(202, delay=step),
            "tools/list": [json_answer({"jsonrpc": "2.0", "id": 2, "result": {"tools": TOOLS[:1], "nextCursor": "p2"}},
                                       delay=step),
                           json_answer({"jsonrpc": "2.0", "id": 3, "result": {"tools": TOOLS[:1]}}, delay=step)]}


def test_a_daily_check_is_bounded_by_its_steps_not_by_the_five_minute_cap(fleet, scripted):
    # Four steps of 0.6 s each (2.4 s) against per-step limits of 4 s: valid although 4 x 0.6 > the
    # five-minute check's whole-check cap of 1.5 s used below.
    scripted.reset(_slow_but_valid(0.6))
    daily = run_check(fleet, f"https://{SCRIPTED}/mcp")
    assert daily.outcome == "ok" and daily.pages_read == 2 and daily.handshake_ms >= 2400
    scripted.reset(_slow_but_valid(0.6))
    five_minute = run_check(fleet, f"https://{SCRIPTED}/mcp", overall=1.5)
    assert five_minute.outcome == "timeout" and "whole check exceeded 1.5 s" in five_minute.outcome_detail


def test_robots_txt_redirects_follow_the_seed_redirect_rule(fleet, scripted):
    config = config_for(fleet)

    def origin_with(location: str):
        scripted.reset({"GET /robots.txt": Scripted(301, [("location", location)]),
                        "GET /elsewhere.txt": Scripted(200, [("content-type", "text/plain")],
                                                       b"User-agent: *\nDisallow: /\n")})

        async def go():
            async with build_client(config) as client:
                return await check_origin(client, config, f"https://{SCRIPTED}", dt.datetime.now(dt.UTC))

        return asyncio.run(go())

    same = origin_with(f"https://{SCRIPTED}/elsewhere.txt")  # same host, https: followed, its rules apply
    assert same.robots_policy == "rules" and not same.allows(f"https://{SCRIPTED}/mcp")
    plain = origin_with(f"http://{SCRIPTED}/elsewhere.txt")  # never to plain http
    assert plain.robots_policy == "allow_all" and "plain http" in plain.robots_detail
    other = origin_with("https://robots.elsewhere.test/robots.txt")  # never to another domain
    assert other.robots_policy == "allow_all" and "another domain" in other.robots_detail
    assert [r["path"] for r in scripted.received if r["path"].endswith(".txt")] == ["/robots.txt"]


# --------------------------------------------------------------------------------- odd JSON types
@pytest.mark.parametrize(("script", "outcome", "detail"), [
    ({"initialize": json_answer({"jsonrpc": "2.0", "id": 1, "error": {"code": [1, 2], "message": {"x": 1}}})},
     "rpc_error", "(code not an integer)"),
    ({"initialize": json_answer({"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "x"}}),
      "server/discover": json_answer({"jsonrpc": "2.0", "id": "discover-1", "result": {
          "supportedVersions": 20260728, "_meta": ["x"]}})}, "rpc_error", "-32022"),
    ({"initialize": Scripted(302, [("location", "https://[::1/mcp")])}, "redirect", "invalid Location"),
    ({"initialize": Scripted(302, [("location", "https://x.scripted.test:99999/")])}, "redirect",
     "invalid Location"),
    ({"initialize": Scripted(200, [("content-type", "application/json")],
                             b'{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":NaN}}')}, "not_mcp", "NaN"),
    ({"initialize": Scripted(200, [("content-type", "application/json")],
                             b'{"jsonrpc":"2.0","id":1,"result":{"n":1e999}}')}, "not_mcp", "out of range"),
    ({"initialize": initialize_result(request_id=True)}, "not_mcp", "not a JSON-RPC answer"),
    ({"initialize": json_answer({"jsonrpc": "2.0", "id": 1, "result": {
        "protocolVersion": "2025-06-18\u00e9", "serverInfo": {}}})}, "not_mcp", "valid protocolVersion"),
    ({"initialize": initialize_result(headers=[("content-type", "application/json"),
                                               ("mcp-session-id", "caf\u00e9 id")]),
      "tools/list": tools_result(TOOLS)}, "ok", "1 tools"),
    ({"initialize": initialize_result(), "tools/list": json_answer({"jsonrpc": "2.0", "id": 2, "result": {
        "tools": TOOLS, "nextCursor": ["not", "a", "string"]}})}, "ok", "1 tools"),
    ({"initialize": Scripted(401, [("www-authenticate", 'Bearer resource_metadata="https://a:b@x.test/prm"')])},
     "needs_auth", "HTTP 401"),
    # What an error's body says is in its detail: a stateful server behind a balancer without affinity (the
    # SDKs' words for a session another instance holds), a host allow-list (the TypeScript SDK's and a Go
    # server's), a proxy's page.
    ({"initialize": initialize_result(), "tools/list": json_answer({"jsonrpc": "2.0", "id": "server-error", "error": {
        "code": -32600, "message": "Session not found"}}, status=404)},
     "no_tool_list", "tools/list: HTTP 404: -32600: Session not found"),
    ({"initialize": json_answer({"jsonrpc": "2.0", "id": None, "error": {
        "code": -32000, "message": "Invalid Host: mcp.scripted.test"}}, status=403)},
     "needs_auth", "HTTP 403: -32000: Invalid Host: mcp.scripted.test on initialize"),
    ({"initialize": Scripted(403, [("content-type", "text/plain")], b"forbidden:\n  host not allowed\n")},
     "needs_auth", "HTTP 403: forbidden: host not allowed on initialize"),
    ({"initialize": Scripted(502, [("content-type", "text/html")], b"<html><body>Bad gateway</body></html>")},
     "http_502", "HTTP 502: <html><body>Bad gateway</body></html> on initialize"),
])
def test_odd_json_types_get_an_outcome(fleet, scripted, script, outcome, detail):
    scripted.reset(script)
    result = run_check(fleet, f"https://{SCRIPTED}/mcp")
    assert result.outcome == outcome and detail in result.outcome_detail, result.outcome_detail
    if result.resource_metadata_url:
        assert result.resource_metadata_url == "https://REDACTED@x.test/prm"


def test_a_payment_answer_is_kept_as_json_with_its_credentials_redacted(fleet, scripted):
    body = {"accepts": [{"scheme": "exact", "maxAmountRequired": "5000",
                         "resource": f"https://{SCRIPTED}/mcp?session_id=abc123&plan=pro",
                         "extra": {"checkout": "https://u:hunter2@pay.test/c", "note": "Bearer abcdefghij0123456789",
                                   "memo": 'see https://pay.test/r?token=xyz789"quoted"'}}]}  # an escaped quote
    scripted.reset({"initialize": json_answer(body, status=402)})
    result = run_check(fleet, f"https://{SCRIPTED}/mcp")
    assert result.outcome == "http_402" and result.payment_json is not None
    for secret in ("abc123", "hunter2", "abcdefghij0123456789", "xyz789"):
        assert secret not in result.payment_json, secret
    kept = json.loads(result.payment_json)["accepts"][0]  # still JSON, its figures as sent
    assert kept["maxAmountRequired"] == "5000" and kept["resource"].endswith("?session_id=REDACTED&plan=pro")
    # A lone surrogate beside a credential: rewritten as the server escaped it, so the row can be stored (a
    # first version wrote it raw, Arrow refused it, and the check became our own fault, n, where it was p).
    scripted.reset({"initialize": Scripted(402, [("content-type", "application/json")],
                                           b'{"s": "\\ud800", "checkout": "https://u:hunter2@pay.test/c"}')})
    result = run_check(fleet, f"https://{SCRIPTED}/mcp")
    assert result.outcome == "http_402" and "hunter2" not in result.payment_json
    assert pa.array([result.payment_json], pa.string()).to_pylist() == [result.payment_json]
    # A long non-ASCII text beside a credential stays within the stored 64 KiB and valid JSON (a second review: an
    # ASCII escape made 20,070 characters 120,072, cut mid-escape, and the payment address was lost).
    long = json.dumps({"memo": "価" * 20000 + " https://x.test/pay?token=SECRET", "accepts": [{"payTo": "0xabc"}]},
                      ensure_ascii=False).encode()
    scripted.reset({"initialize": Scripted(402, [("content-type", "application/json")], long)})
    result = run_check(fleet, f"https://{SCRIPTED}/mcp")
    assert json.loads(result.payment_json)["accepts"] == [{"payTo": "0xabc"}] and "SECRET" not in result.payment_json


def _page(n: int, cursor: object) -> Scripted:
    return json_answer({"jsonrpc": "2.0", "id": 2 + n, "result": {
        "tools": [{"name": f"tool_{n}", "inputSchema": {"type": "object"}}], "nextCursor": cursor}})


@pytest.mark.parametrize(("pages", "read", "why"), [
    ([_page(n, f"page-{n + 1}") for n in range(6)], 5, "the 5-page limit"),
    ([_page(0, "a"), _page(1, "a")], 2, "its cursor repeats (a cursor cycle)"),
    ([_page(0, 123)], 1, "its cursor is not a string"),
    ([_page(0, "b"), Scripted(500, [("content-type", "text/plain")], b"boom")], 1, "page 2 answered HTTP 500: boom"),
])
def test_a_list_not_read_to_its_end_says_why_in_its_detail(fleet, scripted, pages, read, why):
    scripted.reset({"initialize": initialize_result(), "tools/list": pages})
    result = run_check(fleet, f"https://{SCRIPTED}/mcp")
    assert result.outcome == "ok" and result.pages_read == read and result.tool_list_complete is False
    assert result.outcome_detail.endswith(f"in {read} page(s); the list was not read to its end: {why}")


@pytest.mark.parametrize(("said", "kept"), [
    ("\x00" * 175 + "see https://admin:hunter2@x.example/login", "see https://REDACTED@x.example/login"),
    (" \n" * 87 + "db postgres://admin:hunter2@db:5432/x", "db postgres://REDACTED@db:5432/x"),
    ("cache at admin:hunter2@cache.internal:6379", "cache at REDACTED@cache.internal:6379"),
    ("Error: alice@example.com at 10:30 \u200c\u200d kept", "Error: alice@example.com at 10:30 \u200c\u200d kept"),
])
def test_credentials_are_redacted_before_what_a_server_said_is_cut(fleet, scripted, said, kept):
    scripted.reset({"initialize": initialize_result(), "tools/list": json_answer({"jsonrpc": "2.0", "id": 2, "error": {
        "code": -32000, "message": said}})})
    result = run_check(fleet, f"https://{SCRIPTED}/mcp")
    assert result.outcome == "no_tool_list"
    assert result.outcome_detail == f"tools/list: JSON-RPC error -32000: {kept}"


def test_what_a_server_said_is_quoted_on_one_line_without_credentials_or_control_characters(fleet, scripted):
    said = "Forbidden.\nSee https://admin:hunter2@internal.example/login \x1b[31mRED\x1b[0m\x00 " + "x" * 500
    scripted.reset({"initialize": json_answer({"jsonrpc": "2.0", "id": None, "error": {"code": -32000,
                                                                                      "message": said}}, status=403)})
    result = run_check(fleet, f"https://{SCRIPTED}/mcp")
    assert result.outcome == "needs_auth"
    quoted = result.outcome_detail.removeprefix("HTTP 403: ").split(" on initialize")[0]
    assert quoted.startswith("-32000: Forbidden. See https://REDACTED@internal.example/login RED x")
    assert "hunter2" not in result.outcome_detail and all(ch.isprintable() for ch in result.outcome_detail)
    assert len(quoted) == 160


@pytest.mark.parametrize(("ttl", "expected"), [
    (3600000, 3600000), (None, None), ("60", None), (-5, None), (1.5, None), (True, None), (10.0, 10)])
def test_ttl_ms_is_null_when_absent_or_malformed(fleet, scripted, ttl, expected):
    result_body: dict = {"tools": TOOLS, "cacheScope": ["public"]}
    if ttl is not None:
        result_body["ttlMs"] = ttl
    scripted.reset({
        "initialize": json_answer({"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "modern only"}}),
        "server/discover": json_answer({"jsonrpc": "2.0", "id": "discover-1", "result": {
            "supportedVersions": ["2026-07-28"], "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "m"}}}}),
        "tools/list": json_answer({"jsonrpc": "2.0", "id": 2, "result": result_body})})
    result = run_check(fleet, f"https://{SCRIPTED}/mcp")
    assert result.outcome == "ok" and result.discover_supported is True
    assert result.ttl_ms == expected and result.cache_scope is None
