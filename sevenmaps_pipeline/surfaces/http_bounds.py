"""The bounds `sevenmaps serve` puts on every connection and request (docs/agents.md "Limits of the server"),
so that a slow, half-sent, over-long or too numerous caller costs the server a bounded share and then ends:

- open connections: at most MAX_CONNECTIONS; one more is answered 503 and closed before anything is read;
- a request's line and headers at most MAX_HEADER_BYTES, its body at most MAX_BODY_BYTES (413 past it);
- a request must arrive whole (headers and body) within REQUEST_SECONDS of its first byte, or of the
  connection's opening for the first one; else it is answered 408 and the connection closed;
- its answer must be made within ANSWER_SECONDS of its last byte and keep moving: a caller that reads
  nothing of it for ANSWER_SECONDS is cut off (aborted: closing would wait for it to read); one that reads
  slowly but steadily gets it whole, however long it takes;
- a connection idle between requests closes after KEEP_ALIVE_SECONDS;
- no stream stays open: the MCP endpoint is stateless with JSON answers and offers no server-sent stream
  (GET /mcp is 405, as is every method but POST there), and no WebSocket is accepted;
- at most MCP_IN_FLIGHT requests to /mcp are inside the MCP SDK at once; one more is answered busy (503,
  Retry-After, a JSON-RPC error naming it) without the SDK's work, so a flood of calls costs the site little.

uvicorn alone bounds none of these in time: it has no deadline for a request's headers, body or answer,
and its keep-alive timer is not armed in every idle moment.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from .call_gate import QUEUE_LIMIT, WAIT_SECONDS

MAX_CONNECTIONS = 1024
MAX_HEADER_BYTES = 16 * 1024
# A tool call's arguments are a few hundred bytes (route's task is at most 500 characters).
MAX_BODY_BYTES = 64 * 1024
REQUEST_SECONDS = 10.0
# From a request's last byte to its answer's first (the gate's wait and the work), and then the longest the
# answer may stand still because the caller reads nothing (each time writing resumes, it starts again: the
# site's index is 7 MB over a registry-sized day, and a slow reader must still get it).
ANSWER_SECONDS = 60.0
KEEP_ALIVE_SECONDS = 5
# Requests to /mcp inside the SDK at once: the gate's queue and its running call, and room for calls that
# never reach it (initialize, tools/list).
MCP_IN_FLIGHT = QUEUE_LIMIT + 1 + 32
RETRY_AFTER_SECONDS = 5
MCP_PATH = "/mcp"
# Why a method other than POST is refused on /mcp, said of that method: a client that kept a session id ends
# it with DELETE (the official TypeScript SDK client's terminateSession), and is told there is none to end.
_POST_HERE = b": POST your JSON-RPC requests to /mcp\n"
REFUSED_ON_MCP = {"GET": b"the map's MCP server offers no server-sent stream" + _POST_HERE,
                  "DELETE": b"the map's MCP server is stateless and keeps no session to end" + _POST_HERE,
                  "": b"the map's MCP server answers POST alone" + _POST_HERE}


@dataclass(frozen=True)
class ServeLimits:
    """Every bound of `sevenmaps serve` in one place (the defaults above; tests pass small ones)."""

    max_connections: int = MAX_CONNECTIONS
    max_header_bytes: int = MAX_HEADER_BYTES
    max_body_bytes: int = MAX_BODY_BYTES
    request_seconds: float = REQUEST_SECONDS
    answer_seconds: float = ANSWER_SECONDS
    keep_alive_seconds: int = KEEP_ALIVE_SECONDS
    mcp_in_flight: int = MCP_IN_FLIGHT
    queue_limit: int = QUEUE_LIMIT
    wait_seconds: float = WAIT_SECONDS


DEFAULT_LIMITS = ServeLimits()


def _plain(status: bytes, text: str, *extra: bytes) -> bytes:
    body = text.encode()
    head = [b"HTTP/1.1 " + status, b"content-type: text/plain; charset=utf-8",
            b"content-length: " + str(len(body)).encode(), b"connection: close", *extra]
    return b"\r\n".join(head) + b"\r\n\r\n" + body


TOO_MANY_CONNECTIONS = _plain(b"503 Service Unavailable", "busy: too many open connections; try again shortly\n",
                              b"retry-after: " + str(RETRY_AFTER_SECONDS).encode())


def bounded_protocol(limits: ServeLimits) -> type[H11Protocol]:
    """uvicorn's h11 protocol bounded by `limits`: open connections, and a deadline for every phase."""
    return type("BoundedH11Protocol", (BoundedH11Protocol,), {
        "max_connections": limits.max_connections, "request_seconds": limits.request_seconds,
        "answer_seconds": limits.answer_seconds, "idle_seconds": limits.keep_alive_seconds,
        "too_slow": _plain(b"408 Request Timeout",
                           f"the request did not arrive whole within {limits.request_seconds:g} s\n")})


class BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a cap on open connections and, at every moment of a connection's life, one
    deadline of its own: a request arriving (REQUEST_SECONDS from its first byte, or from the connection's
    opening), its answer being made and written (ANSWER_SECONDS without progress: a caller that stops
    reading is cut off), or
    the connection idle between requests (KEEP_ALIVE_SECONDS; uvicorn's own keep-alive timer is not always
    armed, e.g. after a body that arrived once its answer was sent)."""

    max_connections = MAX_CONNECTIONS
    request_seconds = REQUEST_SECONDS
    answer_seconds = ANSWER_SECONDS
    idle_seconds: float = KEEP_ALIVE_SECONDS
    too_slow = _plain(b"408 Request Timeout", f"the request did not arrive whole within {REQUEST_SECONDS:g} s\n")
    _deadline: asyncio.TimerHandle | None = None
    _phase: str | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.max_connections:
            transport.write(TOO_MANY_CONNECTIONS)
            transport.close()
            return
        self._watch()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._watch()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch()

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._phase == "answering":  # the caller read: the answer moves, its deadline starts again
            self._disarm()
            self._watch()

    def _phase_now(self) -> str | None:
        if self.transport.is_closing():
            return None
        state = self.conn.their_state
        if state is h11.SEND_BODY:
            return "arriving"
        if state is h11.IDLE:
            # Bytes of a request are here, or no request has come yet on a new connection.
            return "arriving" if self.conn.trailing_data[0] or self.cycle is None else "idle"
        return "answering"  # the request is whole (or the connection is ending): its answer is under way

    def _watch(self) -> None:
        """The deadline of the phase the connection is in, started when the phase begins."""
        phase = self._phase_now()
        if phase == self._phase:
            return
        self._disarm()
        self._phase = phase
        if phase is not None:
            seconds = {"arriving": self.request_seconds, "answering": self.answer_seconds,
                       "idle": self.idle_seconds}[phase]
            self._deadline = self.loop.call_later(seconds, self._expire)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline, self._phase = None, None

    def _expire(self) -> None:
        phase = self._phase
        self._deadline, self._phase = None, None
        if self.transport.is_closing():
            return
        if phase == "arriving" and not self.transport.get_write_buffer_size():
            self.transport.write(self.too_slow)
        if self.transport.get_write_buffer_size():  # a caller that does not read: closing would wait on it
            self.transport.abort()
        else:
            self.transport.close()


async def _answer(send: Any, status: int, body: bytes, kind: bytes, *extra: tuple[bytes, bytes]) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", kind), (b"content-length", str(len(body)).encode()), *extra]})
    await send({"type": "http.response.body", "body": body})


def _request_id(body: bytes) -> Any:
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth: answered without an id
        return None
    found = message.get("id") if isinstance(message, dict) else None
    return found if isinstance(found, (str, int)) and not isinstance(found, bool) else None


def replaying(body: bytes, receive: Callable[[], Awaitable[dict]]) -> Callable[[], Awaitable[dict]]:
    """A `receive` that hands the app the body already read (once), then whatever comes after it."""
    replayed = False

    async def replay() -> dict:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


class BoundedRequests:
    """ASGI middleware: bodies read whole under MAX_BODY_BYTES before the app sees them; GET /mcp refused (no
    stream is offered), and every other method there but POST; at most `in_flight` requests to /mcp inside the
    MCP SDK, the rest answered busy."""

    def __init__(self, app: Any, in_flight: int = MCP_IN_FLIGHT, max_body: int = MAX_BODY_BYTES,
                 max_header: int = MAX_HEADER_BYTES) -> None:
        self.app, self.in_flight, self.max_body, self.max_header = app, in_flight, max_body, max_header
        self.inside = 0

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        # h11 caps a head still arriving; one that came whole in a single read is measured here.
        head = len(scope.get("raw_path") or b"") + len(scope.get("query_string") or b"") + sum(
            len(name) + len(value) + 4 for name, value in scope["headers"])
        if head > self.max_header:
            return await _answer(send, 431, f"a request's headers are at most {self.max_header} bytes\n".encode(),
                                 b"text/plain; charset=utf-8", (b"connection", b"close"))
        method = scope["method"]
        to_mcp = scope["path"].rstrip("/") == MCP_PATH
        if to_mcp and method != "POST":
            # The streamable HTTP transport lets a server without a server-sent stream answer GET with 405, and
            # a stateless one DELETE likewise (modelcontextprotocol.io, "Transports"); RFC 9110 wants Allow
            # on a 405. Every other method gets the same answer at once, never the SDK's own (which names
            # GET and DELETE as allowed, or a path-dependent 404 for HEAD), in words true of the method asked.
            refusal = b"" if method == "HEAD" else REFUSED_ON_MCP.get(method, REFUSED_ON_MCP[""])
            return await _answer(send, 405, refusal, b"text/plain; charset=utf-8", (b"allow", b"POST"))
        if method in ("GET", "HEAD", "OPTIONS"):
            return await self.app(scope, receive, send)
        body = await self._body(scope, receive, send)
        if body is None:  # too large (answered 413) or the caller left
            return None

        replay = replaying(body, receive)
        if not to_mcp:
            return await self.app(scope, replay, send)
        if self.inside >= self.in_flight:
            error = {"jsonrpc": "2.0", "id": _request_id(body), "error": {
                "code": -32000, "message": f"busy: the map is answering {self.in_flight} requests; try again in "
                                           f"{RETRY_AFTER_SECONDS} s"}}
            return await _answer(send, 503, json.dumps(error).encode(), b"application/json",
                                 (b"retry-after", str(RETRY_AFTER_SECONDS).encode()))
        return await self._inside_the_sdk(scope, replay, send)

    async def _body(self, scope: dict, receive: Any, send: Any) -> bytes | None:
        """The whole body, or None once a body past the limit is answered 413 (or the caller left)."""
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_body):
            await self._too_large(send)
            return None
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            body += message.get("body", b"")
            if len(body) > self.max_body:
                await self._too_large(send)
                return None
            if not message.get("more_body", False):
                return bytes(body)

    async def _inside_the_sdk(self, scope: dict, receive: Any, send: Any) -> None:
        """The request handed to the MCP SDK, counted among those inside until it begins to answer (its answers
        are JSON, made whole before the first byte is sent): a caller slow to read them holds its own
        connection (until ANSWER_SECONDS), never a place inside the SDK (uvicorn's every send waits while the
        caller does not read)."""
        self.inside += 1
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                self.inside -= 1

        async def sending(message: dict) -> None:
            if message["type"] == "http.response.start":
                release()
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            release()

    async def _too_large(self, send: Any) -> None:
        await _answer(send, 413, f"a request body is at most {self.max_body} bytes\n".encode(),
                      b"text/plain; charset=utf-8", (b"connection", b"close"))
