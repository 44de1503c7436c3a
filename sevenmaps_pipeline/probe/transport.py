"""The prober's HTTP/1.1 transport: h11 over probe/streams.py's connections, kept per origin.

The prober asks one thing at a time of a host (the politeness rule), so a connection kept per origin is
the whole pool it needs. httpcore's pool, which this replaces under the same httpx client, guards every
request with anyio locks, cancel shields and events, built for many tasks sharing a pool: about a fifth of
the prober's CPU per request, where the prober is CPU-bound (docs/scaling.md, "The prober"). Here a
request's head and body go out in one write (one TLS record, where httpcore wrote three), and a
response's body is read as the caller reads it.

Where a connection may go is still decided in one place, probe/netguard.py's backend; TLS verifies the
name asked for. Errors are httpx's, with the network stream's or h11's error as their cause (so
`refused_address` still finds the guard's refusal), as httpx's own transport raises them.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

import h11
import httpcore
import httpx

# As httpcore reads and bounds a response's head.
READ_BYTES = 64 * 1024
MAX_HEAD_BYTES = 100 * 1024

_ERRORS: dict[type[BaseException], type[httpx.HTTPError]] = {
    httpcore.ConnectTimeout: httpx.ConnectTimeout, httpcore.ReadTimeout: httpx.ReadTimeout,
    httpcore.WriteTimeout: httpx.WriteTimeout, httpcore.ConnectError: httpx.ConnectError,
    httpcore.ReadError: httpx.ReadError, httpcore.WriteError: httpx.WriteError,
    httpcore.RemoteProtocolError: httpx.RemoteProtocolError, httpcore.LocalProtocolError: httpx.LocalProtocolError,
    h11.RemoteProtocolError: httpx.RemoteProtocolError, h11.LocalProtocolError: httpx.LocalProtocolError,
}


def _raise_as_httpx(exc: Exception) -> None:
    """Raises httpx's error for a stream's or h11's (the most specific class that maps), caused by it; any
    other error as it is."""
    for kind in type(exc).__mro__:
        mapped = _ERRORS.get(kind)
        if mapped is not None:
            raise mapped(str(exc) or type(exc).__name__) from exc
    raise exc


Origin = tuple[str, str, int]


class _Connection:
    """One HTTP/1.1 connection and its h11 state."""

    __slots__ = ("origin", "stream", "state", "idle_since")

    def __init__(self, origin: Origin, stream: httpcore.AsyncNetworkStream) -> None:
        self.origin, self.stream = origin, stream
        self.state = h11.Connection(our_role=h11.CLIENT, max_incomplete_event_size=MAX_HEAD_BYTES)
        self.idle_since = 0.0

    async def next_event(self, timeout: float | None) -> Any:
        while True:
            event = self.state.next_event()
            if event is not h11.NEED_DATA:
                return event
            data = await self.stream.read(READ_BYTES, timeout=timeout)
            if not data and self.state.their_state is h11.SEND_RESPONSE:
                raise httpx.RemoteProtocolError("Server disconnected without sending a response.")
            self.state.receive_data(data)

    def reusable(self) -> bool:
        return self.state.our_state is h11.DONE and self.state.their_state is h11.DONE

    async def close(self) -> None:
        await self.stream.aclose()


class _Body(httpx.AsyncByteStream):
    """A response's body, read as the caller reads it; its connection goes back to the transport when the
    body was read to its end, and is closed when the caller stopped before. An iterator of its own rather
    than an async generator, which the event loop would track (a weak set's entry and a finalizer) for
    every response."""

    def __init__(self, transport: ProberTransport, connection: _Connection, timeout: float | None) -> None:
        self._transport, self._connection, self._timeout = transport, connection, timeout
        self._released = self._ended = False

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self

    async def __anext__(self) -> bytes:
        if self._ended:
            raise StopAsyncIteration
        try:
            while True:
                event = await self._connection.next_event(self._timeout)
                if isinstance(event, h11.Data):
                    return bytes(event.data)
                if isinstance(event, h11.EndOfMessage | h11.ConnectionClosed) or event is h11.PAUSED:
                    self._ended = True
                    break
        except Exception as exc:
            self._ended = True
            await self._release(keep=False)
            _raise_as_httpx(exc)
        raise StopAsyncIteration

    async def aclose(self) -> None:
        await self._release(keep=True)

    async def _release(self, keep: bool) -> None:
        if not self._released:
            self._released = True
            await self._transport.release(self._connection, keep)


class ProberTransport(httpx.AsyncBaseTransport):
    """httpx's transport for the prober: connections from `backend` (the guard), TLS with `ssl_context`,
    at most `max_connections` open at once and that many kept idle, each idle one for `keepalive_expiry`
    seconds."""

    def __init__(self, ssl_context: Any, backend: httpcore.AsyncNetworkBackend, max_connections: int = 2,
                 keepalive_expiry: float = 5.0) -> None:
        self._ssl_context, self._backend = ssl_context, backend
        self._max_connections, self._keepalive_expiry = max_connections, keepalive_expiry
        self._idle: list[_Connection] = []
        self._open = 0
        self._slot_freed: asyncio.Condition | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if url.scheme not in ("http", "https"):
            raise httpx.UnsupportedProtocol(f"the prober speaks http and https, not {url.scheme!r}")
        timeouts: dict[str, float | None] = request.extensions.get("timeout", {})
        origin = (url.scheme, url.raw_host.decode("ascii"), url.port or (443 if url.scheme == "https" else 80))
        connection = await self._connection(origin, timeouts.get("connect"))
        try:
            try:
                body = request.content  # built in memory (json= or content=), so already read
            except httpx.RequestNotRead:
                body = b"".join([chunk async for chunk in request.stream])  # type: ignore[union-attr]
            state = connection.state
            out = state.send(h11.Request(method=request.method.encode("ascii"), target=url.raw_path,
                                         headers=request.headers.raw)) or b""
            if body:
                out += state.send(h11.Data(data=body)) or b""
            out += state.send(h11.EndOfMessage()) or b""
            trace = request.extensions.get("trace")
            if trace is not None:  # httpcore's event for it: the connection is made and secured, the request goes
                await trace("http11.send_request_headers.started", {"request": request})
            # A server may answer (an error, say) and close before reading all we sent: its answer is read.
            with contextlib.suppress(httpcore.WriteError):
                await connection.stream.write(out, timeout=timeouts.get("write"))
            while True:
                event = await connection.next_event(timeouts.get("read"))
                if isinstance(event, h11.Response) or (isinstance(event, h11.InformationalResponse)
                                                        and event.status_code == 101):
                    break
        except BaseException as exc:
            await self.release(connection, keep=False)
            if isinstance(exc, Exception):
                _raise_as_httpx(exc)
            raise
        return httpx.Response(event.status_code, headers=event.headers.raw_items(),
                              stream=_Body(self, connection, timeouts.get("read")),
                              extensions={"http_version": b"HTTP/" + event.http_version,
                                          "reason_phrase": event.reason, "network_stream": connection.stream})

    async def _connection(self, origin: Origin, timeout: float | None) -> _Connection:
        """An idle connection to `origin` still fit for a request, else a new one once fewer than
        max_connections are open (an idle connection to another origin is closed to make room)."""
        while True:
            reused = await self._idle_to(origin)
            if reused is not None:
                return reused
            if self._open < self._max_connections:
                break
            if self._idle:
                await self._drop(self._idle.pop(0))
                continue
            if self._slot_freed is None:
                self._slot_freed = asyncio.Condition()
            async with self._slot_freed:
                await self._slot_freed.wait()
        self._open += 1
        scheme, host, port = origin
        try:
            stream = await self._backend.connect_tcp(host, port, timeout=timeout)
            try:
                if scheme == "https":
                    stream = await stream.start_tls(self._ssl_context, server_hostname=host, timeout=timeout)
            except BaseException:
                await stream.aclose()
                raise
        except BaseException as exc:
            await self._closed_one()
            if isinstance(exc, Exception):
                _raise_as_httpx(exc)
            raise
        return _Connection(origin, stream)

    async def _idle_to(self, origin: Origin) -> _Connection | None:
        now = time.monotonic()
        for connection in [c for c in self._idle if c.origin == origin]:
            self._idle.remove(connection)
            # An idle connection the server has closed (or sent anything on) is not fit for a request.
            if now - connection.idle_since <= self._keepalive_expiry \
                    and not connection.stream.get_extra_info("is_readable"):
                return connection
            await self._drop(connection)
        return None

    async def release(self, connection: _Connection, keep: bool) -> None:
        """A response is done with its connection: kept idle when it can serve another request, else closed."""
        if keep and connection.reusable():
            connection.state.start_next_cycle()
            connection.idle_since = time.monotonic()
            self._idle.append(connection)
            await self._notify()
            return
        await self._drop(connection)

    async def _drop(self, connection: _Connection) -> None:
        await connection.close()
        await self._closed_one()

    async def _closed_one(self) -> None:
        self._open -= 1
        await self._notify()

    async def _notify(self) -> None:
        if self._slot_freed is not None:
            async with self._slot_freed:
                self._slot_freed.notify()

    async def aclose(self) -> None:
        idle, self._idle = self._idle, []
        for connection in idle:
            await self._drop(connection)
