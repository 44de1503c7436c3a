"""`sevenmaps serve` against slow, half-sent, over-long, numerous and flooding callers (surfaces/http_bounds.py,
surfaces/call_gate.py; docs/agents.md "Limits of the server"): every bound holds on the real server over raw
sockets and real MCP calls, with small limits passed in so that nothing waits long."""

from __future__ import annotations

import asyncio
import datetime as dt
import select
import socket
import threading
import time

import anyio
import httpx
import pytest
from conftest import copy_for_serving, served_on_loopback

from sevenmaps_pipeline.lake.paths import LakePaths
from sevenmaps_pipeline.surfaces.call_gate import CallGate, MapBusy
from sevenmaps_pipeline.surfaces.http_bounds import BoundedRequests, ServeLimits
from sevenmaps_pipeline.surfaces.oplog import OpLog, oplog_folder
from sevenmaps_pipeline.surfaces.serve import make_app

HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}
# Generous against a loaded machine: a bound that holds ends a connection well before these.
PATIENCE = 30.0


def _serve(lake: LakePaths, limits: ServeLimits):
    return served_on_loopback(make_app(lake, limits=limits), "the map's server", limits=limits)


@pytest.fixture
def lake(fleet_demo_lake, tmp_path) -> LakePaths:
    return copy_for_serving(fleet_demo_lake, tmp_path / "lake", also_skip=("oplog",))


def _connect(url: str) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=PATIENCE)
    return sock


def _read_until_closed(sock: socket.socket) -> tuple[bytes, float]:
    """Everything the server sends until it closes the connection, and how long that took."""
    started, got = time.monotonic(), b""
    while chunk := sock.recv(65536):
        got += chunk
    return got, time.monotonic() - started


def test_a_request_that_does_not_arrive_whole_in_time_is_answered_408_and_the_connection_closed(lake):
    limits = ServeLimits(request_seconds=1.0)
    with _serve(lake, limits) as url:
        silent = _connect(url)  # sends nothing at all
        headers = _connect(url)  # its headers never end
        headers.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        body = _connect(url)  # its body stops short of what it declared
        body.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 100\r\n\r\n{\"jsonrpc\"")
        dribble = _connect(url)  # one header byte at a time, each well inside any idle timer
        stop = threading.Event()

        def drip() -> None:
            try:
                dribble.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                # Until the server answers: a byte it receives as it closes makes its kernel reset the connection,
                # and the reset can discard the 408 before it is read (a clean clone's run, 2026-12-07).
                while not stop.wait(0.2) and not select.select([dribble], [], [], 0)[0]:
                    dribble.sendall(b"X")
            except (OSError, ValueError):
                pass  # closed by the server (what is tested), or by the test once it read the answer (select: -1)

        dripping = threading.Thread(target=drip, daemon=True)
        dripping.start()
        second = _connect(url)  # a first request answered, the next one left half-sent on the same connection
        second.sendall(b"GET /index.html HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET / HTTP/1.1\r\nHo")
        for sock in (silent, headers, body, dribble, second):
            answer, seconds = _read_until_closed(sock)
            if sock is second:
                assert answer.startswith(b"HTTP/1.1 200 ")
                answer = answer[answer.index(b"HTTP/1.1 408 "):]
            assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
            assert b"did not arrive whole within 1 s" in answer
            assert seconds < PATIENCE
            sock.close()
        stop.set()
        # The server still answers everyone else.
        assert httpx.get(url + "/", timeout=PATIENCE).status_code == 200


def test_a_whole_request_is_answered_however_close_to_its_deadline_and_idle_connections_end(lake):
    limits = ServeLimits(request_seconds=2.0, keep_alive_seconds=1)
    with _serve(lake, limits) as url:
        sock = _connect(url)
        sock.sendall(b"GET /index.html HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        time.sleep(0.5)
        sock.sendall(b"\r\n")
        answer, seconds = _read_until_closed(sock)  # answered, then closed once idle for the keep-alive
        assert answer.startswith(b"HTTP/1.1 200 ") and seconds < PATIENCE
        assert answer.count(b"HTTP/1.1 ") == 1
        sock.close()


def test_headers_and_bodies_past_their_size_are_refused_and_nothing_is_read_into_memory(lake):
    limits = ServeLimits(max_header_bytes=4096, max_body_bytes=2048)
    with _serve(lake, limits) as url:
        whole = httpx.get(url + "/", headers={"X-Big": "a" * 8000}, timeout=PATIENCE)  # arrives in one read
        assert whole.status_code == 431 and "at most 4096 bytes" in whole.text
        sock = _connect(url)  # arrives in pieces, and never ends: h11 stops buffering it past the cap
        sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        for _ in range(8):  # until the server answers (sending after its close would reset the connection)
            if select.select([sock], [], [], 0.05)[0]:
                break
            sock.sendall(b"X-Pad: " + b"a" * 1000 + b"\r\n")
        answer, _ = _read_until_closed(sock)
        assert answer.startswith(b"HTTP/1.1 400 ")
        sock.close()

        call = b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"' + b"a" * 4000 + b'"}}'
        declared = httpx.post(url + "/mcp", content=call, headers={**HEADERS, "Content-Type": "application/json"},
                              timeout=PATIENCE)
        assert declared.status_code == 413 and "at most 2048 bytes" in declared.text

        def chunks():  # no length declared: counted as it comes
            for _ in range(10):
                yield b"a" * 1000

        streamed = httpx.post(url + "/mcp", content=chunks(), headers={**HEADERS, "Content-Type": "application/json"},
                              timeout=PATIENCE)
        assert streamed.status_code == 413

        sock = _connect(url)  # a body declared far past the limit is refused before a byte of it is sent
        sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 1000000000\r\n\r\n")
        answer, _ = _read_until_closed(sock)
        assert answer.startswith(b"HTTP/1.1 413 ")
        sock.close()

        small = httpx.post(url + "/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=HEADERS,
                           timeout=PATIENCE)
        assert small.status_code == 200 and "route" in small.text


def test_open_connections_are_capped_and_one_past_the_cap_is_told_busy(lake):
    limits = ServeLimits(max_connections=4, request_seconds=PATIENCE)
    with _serve(lake, limits) as url:
        held = [_connect(url) for _ in range(4)]
        for sock in held:  # each is open and half-way through a request
            sock.sendall(b"GET / HTTP/1.1\r\n")
        time.sleep(0.3)
        extra = _connect(url)
        answer, _ = _read_until_closed(extra)
        assert answer.startswith(b"HTTP/1.1 503 ") and b"busy: too many open connections" in answer
        assert b"retry-after: 5" in answer
        extra.close()
        held.pop().close()
        deadline = time.monotonic() + PATIENCE
        while True:  # the freed place is taken by the next caller
            page = httpx.get(url + "/", timeout=PATIENCE)
            if page.status_code == 200 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert page.status_code == 200
        for sock in held:
            sock.close()


def test_no_stream_stays_open_get_mcp_is_405_and_websockets_are_not_accepted(lake):
    with _serve(lake, ServeLimits()) as url:
        stream = httpx.get(url + "/mcp", headers={"Accept": "text/event-stream", "MCP-Protocol-Version": "2025-06-18"},
                           timeout=PATIENCE)
        assert stream.status_code == 405 and stream.headers["allow"] == "POST"
        upgrade = httpx.get(url + "/mcp", timeout=PATIENCE, headers={
            "Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
            "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="})
        assert upgrade.status_code != 101


def test_the_gate_refuses_at_once_past_its_queue_and_after_its_wait_and_runs_calls_one_at_a_time():
    release = threading.Event()
    running: list[int] = []
    most = [0]

    def slow(i: int):
        def fn() -> int:
            running.append(i)
            most[0] = max(most[0], len(running))
            release.wait(PATIENCE)
            running.remove(i)
            return i
        return fn

    async def main() -> None:
        gate = CallGate(queue_limit=2, wait_seconds=PATIENCE)
        outcomes: dict[int, object] = {}

        async def call(i: int) -> None:
            try:
                outcomes[i] = await gate.run(slow(i))
            except MapBusy as exc:
                outcomes[i] = exc

        async with anyio.create_task_group() as group:
            for i in range(3):  # one runs, two wait
                group.start_soon(call, i)
            while gate.admitted < 3:
                await anyio.sleep(0.01)
            started = time.monotonic()
            await call(3)  # the queue is full: refused at once, not after a wait
            assert isinstance(outcomes[3], MapBusy) and "2 calls are already waiting" in str(outcomes[3])
            assert time.monotonic() - started < PATIENCE / 2
            release.set()
        assert [outcomes[i] for i in range(3)] == [0, 1, 2]
        assert most[0] == 1 and gate.admitted == 0

        release.clear()
        impatient = CallGate(queue_limit=5, wait_seconds=0.3)
        async with anyio.create_task_group() as group:
            group.start_soon(call_into, impatient, slow(10), outcomes, 10)
            while impatient.admitted < 1:
                await anyio.sleep(0.01)
            await call_into(impatient, slow(11), outcomes, 11)  # waits 0.3 s for its turn, then told busy
            assert isinstance(outcomes[11], MapBusy) and "waited 0.3 s" in str(outcomes[11])
            release.set()
        assert outcomes[10] == 10

    anyio.run(main)


async def call_into(gate: CallGate, fn, outcomes: dict, i: int) -> None:
    try:
        outcomes[i] = await gate.run(fn)
    except MapBusy as exc:
        outcomes[i] = exc


def test_a_flood_of_tool_calls_is_answered_or_told_busy_and_the_site_keeps_answering(lake):
    limits = ServeLimits(queue_limit=2, mcp_in_flight=6)
    calls = 60

    async def flood(url: str) -> tuple[dict[str, int], list[int]]:
        outcomes: dict[str, int] = {}
        pages: list[int] = []
        limits_ = httpx.Limits(max_connections=calls + 10, max_keepalive_connections=0)
        async with httpx.AsyncClient(base_url=url, timeout=PATIENCE * 4, limits=limits_) as client:
            async def one(i: int) -> None:
                answer = await client.post("/mcp", headers=HEADERS, json={
                    "jsonrpc": "2.0", "id": i, "method": "tools/call",
                    "params": {"name": "route", "arguments": {"task": f"weather forecast in city {i}"}}})
                if answer.status_code == 503:
                    error = answer.json()["error"]
                    assert answer.json()["id"] == i and error["message"].startswith("busy:")
                    assert answer.headers["retry-after"] == "5"
                    kind = "busy before the SDK"
                else:
                    assert answer.status_code == 200, answer.text
                    result = answer.json()["result"]
                    text = result["content"][0]["text"]
                    kind = ("answered" if not result.get("isError") else
                            "busy at the gate" if "busy:" in text else f"other: {text[:80]}")
                outcomes[kind] = outcomes.get(kind, 0) + 1

            async def page() -> None:
                pages.append((await client.get("/index.html")).status_code)

            await asyncio.gather(*(one(i) for i in range(calls)), *(page() for _ in range(10)))
        return outcomes, pages

    with _serve(lake, limits) as url:
        outcomes, pages = asyncio.run(flood(url))
        assert set(outcomes) <= {"answered", "busy before the SDK", "busy at the gate"}, outcomes
        assert outcomes.get("answered", 0) >= 1
        assert outcomes.get("busy before the SDK", 0) + outcomes.get("busy at the gate", 0) >= 1
        assert sum(outcomes.values()) == calls
        assert pages == [200] * 10
        after = httpx.post(url + "/mcp", headers=HEADERS, timeout=PATIENCE, json={
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "route", "arguments": {"task": "weather forecast"}}}).json()["result"]
        assert not after.get("isError")  # the flood left nothing held
    log = OpLog.at(oplog_folder(lake))
    logged = [line["outcome"] for path in sorted(log.folder.glob("day=*.jsonl"))
              for line in log.lines(dt.date.fromisoformat(path.name[4:14]))]
    assert logged.count("busy") == outcomes.get("busy at the gate", 0)  # each told busy is in the log


def _drain(sock: socket.socket) -> bytes:
    """What the server sent until it closed or reset the connection."""
    got = b""
    try:
        while chunk := sock.recv(1 << 20):
            got += chunk
    except ConnectionResetError:
        pass
    return got


def test_a_body_sent_after_its_answer_leaves_no_connection_without_a_deadline(lake):
    # The answer comes before the body (a GET's body is never read); uvicorn then starts the next cycle when
    # the body arrives and arms no keep-alive timer of its own: the connection must still end.
    with _serve(lake, ServeLimits(keep_alive_seconds=1, request_seconds=2.0)) as url:
        for target in (b"/mcp", b"/index.html"):
            sock = _connect(url)
            sock.sendall(b"GET " + target + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1\r\n\r\n")
            first = sock.recv(65536)
            assert first.startswith(b"HTTP/1.1 ")
            sock.sendall(b"x")
            rest, seconds = _read_until_closed(sock)  # before: open until the caller left
            assert seconds < PATIENCE
            sock.close()


def test_a_caller_that_stops_reading_is_cut_off_and_the_server_answers_others_meanwhile(lake):
    big = lake.root / "site" / "current" / "big.txt"  # past every buffer between us (and past SMALL_FILE_BYTES)
    big.write_bytes(b"x" * (16 << 20))
    with _serve(lake, ServeLimits(answer_seconds=2.0)) as url:
        stuck = []
        for _ in range(3):
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.settimeout(PATIENCE)
            host, port = url.removeprefix("http://").split(":")
            sock.connect((host, int(port)))
            sock.sendall(b"GET /big.txt HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")  # and never reads
            stuck.append(sock)
        # a call that takes no thread's work (a route call, under a loaded machine, outlasted answer_seconds itself:
        # the server rightly cut it, and the test failed for it)
        answer = httpx.post(url + "/mcp", headers=HEADERS, timeout=PATIENCE, json={
            "jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
        assert answer.status_code == 200 and {t["name"] for t in answer.json()["result"]["tools"]} >= {"route"}
        time.sleep(4.0)  # past answer_seconds: each was cut off, its answer unfinished (before: held forever)
        for sock in stuck:
            got = _drain(sock)
            assert got.startswith(b"HTTP/1.1 200 ") and len(got) < 16 << 20
            sock.close()


def test_a_slow_but_steady_reader_gets_a_large_answer_whole_past_the_answer_deadline(lake):
    size = 16 << 20
    (lake.root / "site" / "current" / "big.txt").write_bytes(b"x" * size)
    with _serve(lake, ServeLimits(answer_seconds=1.0)) as url:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        sock.settimeout(PATIENCE)
        host, port = url.removeprefix("http://").split(":")
        sock.connect((host, int(port)))
        sock.sendall(b"GET /big.txt HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        started, got = time.monotonic(), b""
        while chunk := sock.recv(256 << 10):
            got += chunk
            time.sleep(0.02)  # well under the server's pace: the answer takes seconds, each pause far less
        sock.close()
    assert time.monotonic() - started > 1.0  # longer than answer_seconds in all
    assert got.startswith(b"HTTP/1.1 200 ") and got.endswith(b"x" * 1000)
    assert len(got) - got.index(b"\r\n\r\n") - 4 == size


def test_a_request_inside_the_sdk_gives_its_place_back_once_its_answer_begins():
    """A caller slow to read an MCP answer holds its own connection, never a place inside the SDK: the count
    drops when the answer's first message is handed over. (The SDK's answers are small, so which send a
    non-reading caller stalls cannot be chosen from outside; a stand-in app that stalls after its first
    message shows it.)"""
    handed_over = anyio.Event()
    release = anyio.Event()

    async def stalls_after_its_first_message(scope, receive, send) -> None:
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        handed_over.set()
        await release.wait()  # as uvicorn's send waits on a caller that does not read
        await send({"type": "http.response.body", "body": b"{}"})

    async def main() -> None:
        bounded = BoundedRequests(stalls_after_its_first_message, in_flight=1)
        sent: list[dict] = []

        async def send(message: dict) -> None:
            sent.append(message)

        async def receive() -> dict:
            return {"type": "http.request", "body": b"{}", "more_body": False}

        scope = {"type": "http", "method": "POST", "path": "/mcp", "raw_path": b"/mcp", "query_string": b"",
                 "headers": [(b"content-length", b"2")]}
        async with anyio.create_task_group() as group:
            group.start_soon(bounded, scope, receive, send)
            await handed_over.wait()
            assert bounded.inside == 0  # its place is free while its answer is still being written
            second: list[dict] = []

            async def send_second(message: dict) -> None:
                second.append(message)

            group.start_soon(bounded, scope, receive, send_second)
            await anyio.sleep(0.1)
            assert second and second[0]["status"] == 200  # let in, not told busy
            release.set()
        assert bounded.inside == 0

    anyio.run(main)


def test_a_body_nested_past_the_parser_while_the_map_is_busy_is_told_busy_not_a_500(lake):
    with _serve(lake, ServeLimits(mcp_in_flight=0)) as url:  # every request to /mcp is told busy
        for body in (b"[" * 30000 + b"]" * 30000, b'{"a":' * 10000 + b"1" + b"}" * 10000, b"not json"):
            answer = httpx.post(url + "/mcp", content=body, timeout=PATIENCE,
                                headers={**HEADERS, "Content-Type": "application/json"})
            assert answer.status_code == 503 and answer.json()["id"] is None
            assert answer.json()["error"]["message"].startswith("busy:")

