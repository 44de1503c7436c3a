"""The prober's asyncio network streams (probe/streams.py) against plain loopback servers: what httpcore's
pool relies on (reads, writes, the end of a stream, an idle connection the server closed) and the errors
it expects, in httpcore's own classes."""

from __future__ import annotations

import asyncio
import socket
import ssl

import httpcore
import pytest

from sevenmaps_pipeline.probe.streams import AsyncioBackend


async def _serve(handler) -> tuple[asyncio.Server, int]:
    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


def test_reads_writes_and_the_end_of_a_stream():
    async def echo_once(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        data = await reader.readexactly(5)
        writer.write(data.upper())
        await writer.drain()
        writer.close()

    async def main() -> tuple[bytes, bytes, bool]:
        server, port = await _serve(echo_once)
        async with server:
            stream = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)
            await stream.write(b"hello", timeout=5)
            got = b""
            while len(got) < 5:
                got += await stream.read(64, timeout=5)
            end = await stream.read(64, timeout=5)
            # A connection whose server has gone is not fit for another request.
            readable = stream.get_extra_info("is_readable")
            await stream.aclose()
            return got, end, readable

    got, end, readable = asyncio.run(main())
    assert (got, end, readable) == (b"HELLO", b"", True)


def test_an_idle_connection_the_server_closed_is_seen_before_it_is_reused():
    async def close_soon(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(0.2)
        writer.close()

    async def main() -> tuple[bool, bool, object]:
        server, port = await _serve(close_soon)
        async with server:
            stream = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)
            fresh = stream.get_extra_info("is_readable")
            for _ in range(100):  # until the close arrives (at most 5 s)
                if stream.get_extra_info("is_readable"):
                    break
                await asyncio.sleep(0.05)
            closed = stream.get_extra_info("is_readable")
            peer = stream.get_extra_info("server_addr")
            await stream.aclose()
            return fresh, closed, peer

    fresh, closed, peer = asyncio.run(main())
    assert fresh is False and closed is True
    assert peer[0] == "127.0.0.1"


def test_errors_are_httpcore_errors():
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(5)

    async def read_timeout() -> None:
        server, port = await _serve(silent)
        async with server:
            stream = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)
            try:
                await stream.read(64, timeout=0.05)
            finally:
                await stream.aclose()

    with pytest.raises(httpcore.ReadTimeout):
        asyncio.run(read_timeout())

    with socket.socket() as unused:  # a port nothing listens on: bound, never listening
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
        with pytest.raises(httpcore.ConnectError):
            asyncio.run(AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5))

    async def tls_to_plain() -> None:
        async def plain(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await reader.read(1024)
            writer.write(b"HTTP/1.1 400 Bad Request\r\n\r\n")
            await writer.drain()
            writer.close()

        server, port = await _serve(plain)
        async with server:
            stream = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)
            await stream.start_tls(ssl.create_default_context(), server_hostname="mcp.example.test", timeout=5)

    with pytest.raises(httpcore.ConnectError):
        asyncio.run(tls_to_plain())
