"""The prober's HTTP/1.1 transport (probe/transport.py) under httpx's client, against plain loopback servers
that count their connections: a connection kept per origin and reused, closed when a body was not read to
its end or the server closed it meanwhile, never more open than allowed, and errors in httpx's classes."""

from __future__ import annotations

import asyncio
import errno
import socket
import subprocess
import sys

import httpx
import pytest

from sevenmaps_pipeline.probe.config import ProbeConfig
from sevenmaps_pipeline.probe.http import CredentialsRefused, build_client
from sevenmaps_pipeline.probe.loop import run_prober
from sevenmaps_pipeline.probe.netguard import refused_address

HOST = "mcp.transport.test"


class CountingServer:
    """An HTTP/1.1 server on loopback that answers each request with `body` (keep-alive unless told to
    close), and counts the connections it accepted and the requests it read."""

    def __init__(self, body: bytes = b'{"ok":true}', close_after: int | None = None, pause: float = 0.0,
                 chunked: bool = False) -> None:
        self.body, self.close_after, self.pause, self.chunked = body, close_after, pause, chunked
        self.connections = 0
        self.requests: list[tuple[int, bytes]] = []  # (connection number, request line)
        self.open_now = self.most_open = 0
        self.port = 0
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> CountingServer:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        number = self.connections
        self.open_now += 1
        self.most_open = max(self.most_open, self.open_now)
        served = 0
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                if length:
                    await reader.readexactly(length)
                self.requests.append((number, head.split(b"\r\n", 1)[0]))
                await asyncio.sleep(self.pause)
                served += 1
                closing = self.close_after is not None and served >= self.close_after
                if self.chunked:
                    half = len(self.body) // 2
                    payload = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in (self.body[:half], self.body[half:]) if p)
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
                                 + (b"Connection: close\r\n" if closing else b"") + b"\r\n" + payload + b"0\r\n\r\n")
                else:
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n%s"
                                 % (len(self.body), b"Connection: close\r\n" if closing else b"", self.body))
                await writer.drain()
                if closing:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            self.open_now -= 1
            writer.close()


def _client(port: int, connections: int = 2) -> httpx.AsyncClient:
    return build_client(ProbeConfig(host_map={HOST: port}), max_connections=connections)


def test_sequential_requests_to_one_origin_share_one_connection():
    async def main() -> tuple[CountingServer, list[bytes]]:
        async with CountingServer() as server, _client(server.port) as client:
            bodies = []
            for i in range(5):
                response = await client.post(f"http://{HOST}/mcp", json={"n": i})
                bodies.append(response.content)
            chunked = CountingServer(body=b'{"tools":[1,2,3]}', chunked=True)
            async with chunked, _client(chunked.port) as other:
                for _ in range(3):
                    bodies.append((await other.get(f"http://{HOST}/x")).content)
            assert chunked.connections == 1 and len(chunked.requests) == 3
            return server, bodies

    server, bodies = asyncio.run(main())
    assert server.connections == 1
    assert [r[0] for r in server.requests] == [1] * 5
    assert bodies == [b'{"ok":true}'] * 5 + [b'{"tools":[1,2,3]}'] * 3


def test_a_body_not_read_to_its_end_closes_its_connection():
    async def main() -> CountingServer:
        async with CountingServer(body=b"x" * 300_000) as server, _client(server.port) as client:
            for _ in range(2):
                async with client.stream("GET", f"http://{HOST}/big") as response:
                    async for _chunk in response.aiter_raw():
                        break  # stop after the first piece, as a capped read does
            return server

    server = asyncio.run(main())
    assert server.connections == 2, "a half-read body leaves its connection unusable: a new one is opened"


def test_a_connection_the_server_closed_is_not_reused():
    async def main() -> tuple[CountingServer, list[int]]:
        async with CountingServer(close_after=1) as server, _client(server.port) as client:
            statuses = []
            for _ in range(3):
                statuses.append((await client.get(f"http://{HOST}/")).status_code)
                await asyncio.sleep(0.05)  # the server's close arrives while the connection is idle
            return server, statuses

    server, statuses = asyncio.run(main())
    assert statuses == [200, 200, 200]
    assert server.connections == 3


def test_never_more_connections_open_than_allowed():
    async def main() -> CountingServer:
        async with CountingServer(pause=0.1) as server, _client(server.port, connections=2) as client:
            answers = await asyncio.gather(*(client.get(f"http://{HOST}/{i}") for i in range(6)))
            assert [a.status_code for a in answers] == [200] * 6
            return server

    server = asyncio.run(main())
    assert server.most_open <= 2
    assert len(server.requests) == 6


def test_errors_are_httpx_errors_with_their_cause():
    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.close()  # no answer at all

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(5)

    async def against(handler, timeout: float = 5.0) -> None:
        server = await asyncio.start_server(handler, "127.0.0.1", 0)
        async with server, _client(server.sockets[0].getsockname()[1]) as client:
            await client.get(f"http://{HOST}/", timeout=timeout)

    with pytest.raises(httpx.RemoteProtocolError, match="without sending a response"):
        asyncio.run(against(hang_up))
    with pytest.raises(httpx.ReadTimeout):
        asyncio.run(against(silent, timeout=0.1))

    with socket.socket() as unused:  # bound, never listening: the connection is refused
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]

        async def refused() -> None:
            async with _client(port) as client:
                await client.get(f"http://{HOST}/")

        with pytest.raises(httpx.ConnectError):
            asyncio.run(refused())

    async def loopback_by_address() -> None:  # the guard's refusal, found through the cause chain
        async with build_client(ProbeConfig()) as client:
            await client.get("http://127.0.0.1:9/")

    with pytest.raises(httpx.ConnectError) as refusal:
        asyncio.run(loopback_by_address())
    assert refused_address(refusal.value)


def test_a_refused_connection_reads_the_same_on_either_loop():
    """outcome_detail carries a refusal's words: uvloop's own connect said only "[Errno 111] Connection
    refused", where asyncio's (before the prober ran on uvloop) names the address refused."""
    with socket.socket() as unused:  # bound, never listening: the connection is refused
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]

        async def refused() -> str:
            async with _client(port) as client:
                with pytest.raises(httpx.ConnectError) as failed:
                    await client.get(f"http://{HOST}/")
            return str(failed.value)

        expected = f"[Errno {errno.ECONNREFUSED}] Connect call failed ('127.0.0.1', {port})"
        assert asyncio.run(refused()) == expected
        assert run_prober(refused()) == expected


class RedirectingServer(CountingServer):
    """Answers every request with a 302 to `location`."""

    def __init__(self, location: bytes) -> None:
        super().__init__()
        self.location = location

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                self.requests.append((self.connections, head.split(b"\r\n", 1)[0]))
                writer.write(b"HTTP/1.1 302 Found\r\nLocation: %s\r\nContent-Length: 0\r\n\r\n" % self.location)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


def test_the_clients_own_send_keeps_what_httpx_send_does_for_the_prober():
    """probe/http.py's `send` skips httpx's authentication and redirect layers; what they did for the prober
    still holds: the credentials gate before anything is sent, a redirect offered (never followed) with its
    Location parsed, an invalid Location as httpx's RemoteProtocolError, errors tied to their request."""
    async def run() -> None:
        async with CountingServer() as server, _client(server.port) as client:
            for refused in ({"url": f"http://user:secret@{HOST}/"},
                            {"url": f"http://{HOST}/", "headers": {"Authorization": "Bearer x"}},
                            {"url": f"http://{HOST}/", "headers": {"Cookie": "a=b"}}):
                with pytest.raises(CredentialsRefused):
                    await client.get(**refused)
            with pytest.raises(CredentialsRefused):
                await client.get(f"http://{HOST}/", auth=("user", "secret"))
            with pytest.raises(ValueError, match="follows redirects itself"):
                await client.get(f"http://{HOST}/", follow_redirects=True)
            assert server.requests == []  # nothing refused reached the server
            answer = await client.get(f"http://{HOST}/")
            assert answer.json() == {"ok": True} and answer.request.url == f"http://{HOST}/"
            assert answer.next_request is None
        async with RedirectingServer(b"/elsewhere") as server, _client(server.port) as client:
            moved = await client.get(f"http://{HOST}/mcp")
            assert moved.status_code == 302 and moved.next_request is not None
            assert moved.next_request.url == f"http://{HOST}/elsewhere"
            assert len(server.requests) == 1  # offered, not followed
        async with RedirectingServer(b"https://[::1/mcp") as server, _client(server.port) as client:
            with pytest.raises(httpx.RemoteProtocolError, match="Invalid URL in location header"):
                await client.get(f"http://{HOST}/mcp")
        with socket.socket() as unused:
            unused.bind(("127.0.0.1", 0))
            async with _client(unused.getsockname()[1]) as client:
                with pytest.raises(httpx.ConnectError) as failed:
                    await client.get(f"http://{HOST}/mcp")
                assert failed.value.request.url == f"http://{HOST}/mcp"

    run_prober(run())


CONNECTS_WITHOUT_THREADS = """
import asyncio, os, socket
from sevenmaps_pipeline.probe.loop import run_prober
from sevenmaps_pipeline.probe.streams import AsyncioBackend

async def main():
    listening = socket.create_server(("127.0.0.1", 0))
    listening.setblocking(False)
    server = await asyncio.start_server(lambda r, w: w.close(), sock=listening)
    for _ in range(20):
        stream = await AsyncioBackend().connect_tcp("127.0.0.1", listening.getsockname()[1], timeout=5)
        await stream.aclose()
    server.close()
    print(len(os.listdir("/proc/self/task")))

run_prober(main())
"""


def test_a_connection_needs_no_thread_on_the_probers_loop():
    """uvloop's own sock_connect resolves even a numeric address again in libuv's thread pool, a thread hop
    per connection and four threads beside the loop's: the backend connects its socket itself (in a fresh
    process, since libuv's pool, once started, stays for the process)."""
    out = subprocess.run([sys.executable, "-c", CONNECTS_WITHOUT_THREADS], capture_output=True, text=True,
                         check=True, timeout=120)
    assert out.stdout.strip() == "1", out.stdout + out.stderr
