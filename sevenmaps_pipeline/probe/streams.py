"""The prober's connections: the event loop's own TCP and TLS transports (asyncio's API; uvloop's loop,
probe/loop.py), as httpcore's network streams.

httpcore's default (anyio) streams cost the prober most of its CPU per request: a cancel scope around
every read and write, TLS records moved through Python one call at a time, and a dictionary of socket
attributes built each time the pool asks whether an idle connection is still open (docs/scaling.md, "The
prober"). At 100,000 endpoints the prober is CPU-bound, so these streams use asyncio's transports
directly: the event loop reads and decrypts as data arrives, and httpcore's timeout for a read or a write
is armed only when it has to wait. Errors are httpcore's, as its own backends raise them, so httpx reports
them unchanged.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
from collections.abc import Iterable, Iterator
from typing import Any, NoReturn

import httpcore
from httpcore._utils import is_socket_readable

# asyncio's default read limit; a response is read in pieces of at most what httpcore asks for (64 KiB).
_READ_LIMIT = 2**16


def _raise_mapped(exc: Exception, errors: dict[type[BaseException], type[Exception]]) -> NoReturn:
    # In order: TimeoutError is an OSError, so it is listed first wherever both are.
    for kind, mapped in errors.items():
        if isinstance(exc, kind):
            raise mapped(str(exc) or type(exc).__name__) from exc
    raise exc


@contextlib.contextmanager
def _mapped(errors: dict[type[BaseException], type[Exception]]) -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        _raise_mapped(exc, errors)


_READ_ERRORS: dict[type[BaseException], type[Exception]] = {TimeoutError: httpcore.ReadTimeout,
                                                             OSError: httpcore.ReadError}
_WRITE_ERRORS: dict[type[BaseException], type[Exception]] = {TimeoutError: httpcore.WriteTimeout,
                                                              OSError: httpcore.WriteError}
_CONNECT_ERRORS: dict[type[BaseException], type[Exception]] = {TimeoutError: httpcore.ConnectTimeout,
                                                                OSError: httpcore.ConnectError}


async def _within(timeout: float | None, awaitable: Any) -> Any:
    if timeout is None:
        return await awaitable
    async with asyncio.timeout(timeout):
        return await awaitable


class AsyncioStream(httpcore.AsyncNetworkStream):
    """One connection: a StreamReader fed by the loop, and the transport that writes."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader, self._writer = reader, writer

    def _buffered(self) -> int:
        # asyncio has no public way to ask a StreamReader whether it holds unread bytes.
        return len(getattr(self._reader, "_buffer", b""))

    # read and write map errors inline (not by _mapped): a context manager's generator per call is a
    # measurable share of the prober's CPU (docs/scaling.md, "uvloop, and a send of the client's own").
    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            # A timer is armed only when the read has to wait (most reads find the loop has read ahead).
            if self._buffered() or self._reader.at_eof():
                return await self._reader.read(max_bytes)
            return await _within(timeout, self._reader.read(max_bytes))
        except Exception as exc:
            _raise_mapped(exc, _READ_ERRORS)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        try:
            if self._writer.is_closing():
                raise httpcore.WriteError("the connection is closed")
            self._writer.write(buffer)
            if self._writer.transport.get_write_buffer_size():  # only a full send buffer makes a write wait
                await _within(timeout, self._writer.drain())
        except Exception as exc:
            _raise_mapped(exc, _WRITE_ERRORS)

    async def aclose(self) -> None:
        # Closed at once, without TLS's goodbye (as httpcore's own streams do): a connection given up on
        # (a timeout) is simply gone, and nothing waits on a server that never answers the goodbye.
        self._writer.transport.abort()

    async def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                        timeout: float | None = None) -> httpcore.AsyncNetworkStream:
        with _mapped(_CONNECT_ERRORS):  # SSLError too
            try:
                await _within(timeout, self._writer.start_tls(ssl_context, server_hostname=server_hostname))
            except BaseException:
                self._writer.transport.abort()
                raise
        return self

    def get_extra_info(self, info: str) -> Any:
        if info == "ssl_object":
            return self._writer.get_extra_info("ssl_object")
        if info == "client_addr":
            return self._writer.get_extra_info("sockname")
        if info == "server_addr":
            return self._writer.get_extra_info("peername")
        if info == "socket":
            return self._writer.get_extra_info("socket")
        if info == "is_readable":
            # An idle connection with anything to read (bytes or the end) is not fit for a new request:
            # either the loop has already read it, or it is still in the socket.
            if self._reader.at_eof() or self._writer.is_closing() or self._buffered():
                return True
            sock = self._writer.get_extra_info("socket")
            return sock is not None and is_socket_readable(sock)
        return None


async def _connect(sock: socket.socket, address: tuple[Any, ...]) -> None:
    """A non-blocking socket connected as asyncio's loop connects one (BaseSelectorEventLoop._sock_connect):
    an error at once as it is, a later one as "Connect call failed (address)". Not the loop's sock_connect:
    uvloop's resolves even a numeric address again, in libuv's thread pool, once per connection."""
    try:
        sock.connect(address)
        return
    except (BlockingIOError, InterruptedError):
        pass
    loop = asyncio.get_running_loop()
    writable: asyncio.Future[None] = loop.create_future()

    def ready() -> None:
        if not writable.done():
            writable.set_result(None)

    loop.add_writer(sock.fileno(), ready)
    try:
        await writable
    finally:
        loop.remove_writer(sock.fileno())
    error = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
    if error:
        raise OSError(error, f"Connect call failed {address}")


class AsyncioBackend(httpcore.AsyncNetworkBackend):
    """TCP connections to an address already resolved and checked (probe/netguard.py decides where)."""

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                          socket_options: Iterable[Any] | None = None) -> httpcore.AsyncNetworkStream:
        # Connected as asyncio's own create_connection connects (_connect): a refusal then reads the same on
        # either loop ("Connect call failed (address)"), where uvloop's create_connection would say only
        # libuv's words, and the address would be lost from outcome_detail (probe/loop.py).
        with _mapped(_CONNECT_ERRORS):
            # An address, never a name (probe/netguard.py resolves): read as one, no lookup.
            family, _, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                          flags=socket.AI_NUMERICHOST)[0]
            sock = socket.socket(family, socket.SOCK_STREAM)
            try:
                sock.setblocking(False)
                if local_address:
                    sock.bind((local_address, 0))
                await _within(timeout, _connect(sock, address))
                reader, writer = await asyncio.open_connection(sock=sock, limit=_READ_LIMIT)
            except BaseException:
                sock.close()
                raise
        sock = writer.get_extra_info("socket")
        for option in socket_options or ():
            sock.setsockopt(*option)
        return AsyncioStream(reader, writer)

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Iterable[Any] | None = None) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("unix sockets are never probed")

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
