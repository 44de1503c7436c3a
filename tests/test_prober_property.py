"""Property: nothing a server sends can crash a check. Hypothesis generates malformed JSON-RPC answers,
headers, statuses, encodings and framings; a replaying fleet host serves them over real HTTPS; every check
must end in a known outcome (never prober_error, never an exception), within its time bound, in a row
that lands in the raw probe schema. The outcomes seen are printed (run with -s)."""

from __future__ import annotations

import asyncio
import datetime as dt
import gzip
import json
import re
import time
import zlib
from collections import Counter
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sevenmaps_pipeline.devtools.fleet.run import Fleet
from sevenmaps_pipeline.devtools.fleet.scripted import Scripted, ScriptedApp
from sevenmaps_pipeline.lake.schemas import RAW_ORIGINS, RAW_PROBES, conform
from sevenmaps_pipeline.probe.checker import EndpointCheck
from sevenmaps_pipeline.probe.config import ProbeConfig, Timeouts
from sevenmaps_pipeline.probe.http import build_client
from sevenmaps_pipeline.probe.origins import check_origin
from sevenmaps_pipeline.probe.scan import probe_row

HOST = "mcp.replay.test"
STEPS = Timeouts(robots_txt=2, initialize=2, notifications_initialized=2, tools_list_per_page=2,
                 well_known_per_origin=2, session_end=1)
# The most a check may take: each step's budget (initialize, discover, notification, five pages, the end).
BOUND = STEPS.initialize * 2 + STEPS.notifications_initialized + 5 * STEPS.tools_list_per_page + 1 + 5
KNOWN = re.compile(r"ok|needs_auth|http_402|timeout|unreachable|redirect|http_[1-5]\d\d|rpc_error|not_mcp|"
                   r"no_tool_list|skipped")
SEEN: Counter[str] = Counter()
ORIGINS_SEEN: Counter[str] = Counter()

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70),
                         st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=30))
json_values = st.recursive(json_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)), max_leaves=12)
ids = st.one_of(st.sampled_from([1, 2, 3, "1", 1.0, True, None, "discover-1"]), json_values)
header_text = st.text(st.characters(min_codepoint=0x20, max_codepoint=0xFF, exclude_characters="\x7f"),
                      max_size=60)
tool = st.one_of(st.fixed_dictionaries({"name": json_scalars}, optional={
    "description": json_values, "inputSchema": json_values, "annotations": json_values, "title": json_values}),
    json_values)


@st.composite
def rpc_bodies(draw, result_keys: dict) -> bytes:
    shape = draw(st.sampled_from(["result", "result", "error", "json", "bytes", "nonfinite"]))
    if shape == "bytes":
        return draw(st.binary(max_size=200))
    if shape == "nonfinite":
        return b'{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","x":' + \
            draw(st.sampled_from([b"NaN", b"Infinity", b"-Infinity", b"1e400", b"1" * 5000])) + b"}}"
    if shape == "json":
        return json.dumps(draw(json_values)).encode()
    message = {"jsonrpc": draw(st.sampled_from(["2.0", "2.0", "2.0", "1.0", 2])), "id": draw(ids)}
    if shape == "error":
        message["error"] = draw(st.one_of(st.fixed_dictionaries(
            {"code": st.one_of(st.sampled_from([-32022, -32601, -32603]), json_values), "message": json_values}),
            json_values))
    else:
        message["result"] = draw(st.one_of(st.fixed_dictionaries({}, optional={k: st.one_of(v, json_values)
                                                                              for k, v in result_keys.items()}),
                                           json_values))
    return json.dumps(message).encode()


@st.composite
def answers(draw, result_keys: dict) -> Scripted:
    body = draw(rpc_bodies(result_keys))
    if draw(st.booleans()):
        body = b"event: message\ndata: " + body.replace(b"\n", b"\ndata: ") + b"\n\n"
        ctype = "text/event-stream"
    else:
        ctype = draw(st.sampled_from(["application/json", "application/json; charset=utf-8", "text/html",
                                      "text/plain", "", "application/json-rpc"]))
    headers = [("content-type", ctype)] if ctype else []
    coding = draw(st.sampled_from([None, None, "gzip", "deflate", "raw-deflate", "lie-gzip", "br", "x-gzip",
                                   "gzip, gzip", "identity", "unasked-gzip"]))
    if coding == "gzip" or coding == "x-gzip":
        body, headers = gzip.compress(body), headers + [("content-encoding", coding)]
    elif coding == "deflate":
        body, headers = zlib.compress(body), headers + [("content-encoding", "deflate")]
    elif coding == "raw-deflate":
        c = zlib.compressobj(6, zlib.DEFLATED, -15)
        body, headers = c.compress(body) + c.flush(), headers + [("content-encoding", "deflate")]
    elif coding == "gzip, gzip":
        body, headers = gzip.compress(gzip.compress(body)), headers + [("content-encoding", "gzip, gzip")]
    elif coding == "unasked-gzip":
        body = gzip.compress(body)
    elif coding in ("lie-gzip", "br", "identity"):
        headers.append(("content-encoding", "gzip" if coding == "lie-gzip" else coding))
    for name in ("location", "www-authenticate", "mcp-session-id"):
        if draw(st.integers(0, 3)) == 0:
            headers.append((name, draw(st.one_of(header_text, st.sampled_from([
                f"https://{HOST}/next", "/relative", "https://[::1", "https://x.replay.test:99999/",
                "http://plain.replay.test/", "https://u:p@mcp.replay.test/x", "https://elsewhere.test/mcp"])))))
    status = draw(st.sampled_from([200, 200, 200, 200, 202, 204, 301, 302, 307, 308, 400, 401, 402, 403, 404,
                                   405, 406, 421, 429, 500, 502, 503]))
    return Scripted(status=status, headers=headers, body=body, chunks=draw(st.integers(1, 3)))


@st.composite
def valid_envelopes(draw, request_id, results: st.SearchStrategy) -> Scripted:
    """A well-formed answer (JSON or SSE, maybe compressed) around generated contents."""
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": draw(results)}).encode()
    headers = [("content-type", "application/json")]
    if draw(st.booleans()):
        body, headers = b"event: message\ndata: " + body + b"\n\n", [("content-type", "text/event-stream")]
    if draw(st.booleans()):
        body, headers = gzip.compress(body), headers + [("content-encoding", "gzip")]
    if draw(st.booleans()):
        headers.append(("mcp-session-id", draw(header_text)))
    return Scripted(200, headers, body, chunks=draw(st.integers(1, 3)))


INIT_KEYS = {"protocolVersion": st.sampled_from(["2025-06-18", "2025-03-26", "2024-11-05", "x" * 50]),
             "serverInfo": st.fixed_dictionaries({}, optional={"name": json_values, "version": json_values}),
             "capabilities": json_values, "supportedVersions": st.just(["2026-07-28"]), "_meta": json_values}
LIST_KEYS = {"tools": st.lists(tool, max_size=5), "nextCursor": st.one_of(st.just("c1"), json_values),
             "ttlMs": json_values, "cacheScope": json_values}
good_init = valid_envelopes(1, st.fixed_dictionaries(
    {"protocolVersion": st.sampled_from(["2025-06-18", "2025-03-26", "2024-11-05"]),
     "serverInfo": st.fixed_dictionaries({"name": json_values, "version": json_values})}))
good_pages = st.lists(st.integers(2, 7).flatmap(lambda rid: valid_envelopes(rid, st.fixed_dictionaries(
    {"tools": st.lists(tool, max_size=5)}, optional={k: v for k, v in LIST_KEYS.items() if k != "tools"}))),
    min_size=1, max_size=6)
behaviours = st.fixed_dictionaries({
    "initialize": st.one_of(good_init, answers(INIT_KEYS)),
    "server/discover": answers(INIT_KEYS),
    "notifications/initialized": st.one_of(st.just(Scripted(202)), answers({})),
    "tools/list": st.one_of(good_pages, st.lists(answers(LIST_KEYS), min_size=1, max_size=6)),
})
origin_behaviours = st.fixed_dictionaries({
    "GET /robots.txt": st.one_of(answers({}), st.builds(
        Scripted, status=st.sampled_from([200, 301, 404, 500]), body=st.binary(max_size=300),
        headers=st.just([("content-type", "text/plain")]))),
    "GET /.well-known/oauth-protected-resource": answers({}),
    "GET /.well-known/agent-card.json": answers({}),
    "GET /.well-known/agent.json": answers({}),
})


# Each example is a real HTTPS exchange with the fleet (no deadline); the fleet is one per module.
AGAINST_A_SERVER: dict[str, Any] = {
    "deadline": None, "suppress_health_check": [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]}


def _config(fleet: Fleet) -> ProbeConfig:
    return ProbeConfig(host_map=fleet.host_map, ca_file=fleet.ca_file, timeouts=STEPS)


@pytest.fixture(scope="module")
def replay():
    app = ScriptedApp()
    with Fleet(extra_apps={HOST: app}) as fleet:
        yield fleet, app
    print(f"\nproperty test outcomes ({sum(SEEN.values())} checks): {dict(SEEN.most_common())}")
    print(f"origin policies ({sum(ORIGINS_SEEN.values())} origins): {dict(ORIGINS_SEEN.most_common())}")


@settings(max_examples=400, **AGAINST_A_SERVER)
@given(behaviour=behaviours)
def test_no_server_answer_crashes_a_check(replay, behaviour):
    fleet, app = replay
    app.reset(behaviour)
    config = _config(fleet)
    started = time.monotonic()

    async def go():
        async with build_client(config) as client:
            return await EndpointCheck(client, config, f"https://{HOST}/mcp", dt.datetime.now(dt.UTC)).run()

    result = asyncio.run(asyncio.wait_for(go(), BOUND + 10))
    assert time.monotonic() - started <= BOUND
    SEEN[result.outcome if not result.outcome.startswith("http_") or result.outcome == "http_402" else "http_NNN"] += 1
    assert KNOWN.fullmatch(result.outcome), (result.outcome, result.outcome_detail)
    assert all(r["rpc"] != "tools/call" for r in app.received)
    listing = {"url": f"https://{HOST}/mcp", "server_name": "io.test/replay"}
    row = probe_row(result, listing, dt.datetime.now(dt.UTC).date(), "p")
    conform(pa.Table.from_pylist([row], RAW_PROBES.schema), RAW_PROBES)  # it lands


@settings(max_examples=150, **AGAINST_A_SERVER)
@given(behaviour=origin_behaviours)
def test_no_robots_or_well_known_answer_crashes_an_origin_check(replay, behaviour):
    fleet, app = replay
    app.reset(behaviour)
    config = _config(fleet)

    async def go():
        async with build_client(config) as client:
            return await check_origin(client, config, f"https://{HOST}", dt.datetime.now(dt.UTC))

    result = asyncio.run(asyncio.wait_for(go(), STEPS.robots_txt + STEPS.well_known_per_origin + 10))
    ORIGINS_SEEN[result.robots_policy] += 1
    assert result.robots_policy in ("rules", "allow_all", "disallow_all")
    result.allows(f"https://{HOST}/mcp")
    conform(pa.Table.from_pylist([{"day": dt.datetime.now(dt.UTC).date(), "run_id": "p", "prober_version": "t",
                                   **result.row()}],
                                 RAW_ORIGINS.schema), RAW_ORIGINS)
