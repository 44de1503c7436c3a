"""The fleet's servers: real MCP servers from the official SDK, and Starlette apps that misbehave.

Every server reads its behaviour for the current fleet day from a shared `FleetState`, so one process can
replay a 30-day timeline: outages, sign-in appearing, tool lists gaining, losing and rewriting tools.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import mcp.types as types
from mcp.server import CacheHint
from mcp.server.caching import CacheableMethod
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from ...surfaces.http_bounds import replaying

ASGIApp = Callable[[dict, Callable, Callable], Awaitable[None]]

# Base behaviours: a real SDK server (by transport), or a fixed misbehaviour.
MCP_KINDS = ("mcp_sse", "mcp_json", "mcp_modern", "mcp_paginated", "mcp_cursor_cycle", "mcp_no_tool_list",
             "mcp_shuffled", "mcp_handshake")
# Everything else (legacy_sse, and the misbehaviours of `static_app`) is served by plain Starlette apps.


@dataclass
class ServerDay:
    """What one server does on the current fleet day."""

    state: str = "up"  # up | down | timeout | http_500 | auth | pay | html
    tools: list[dict] = field(default_factory=list)
    version: str = "1.0.0"


@dataclass
class FleetState:
    day: int = 0
    by_server: dict[str, ServerDay] = field(default_factory=dict)
    slow_seconds: float = 12.0

    def today(self, name: str) -> ServerDay:
        return self.by_server.get(name, ServerDay())


def security_for(host: str) -> TransportSecuritySettings:
    # Keep the SDK's DNS-rebinding guard on, and allow exactly this fleet hostname ("*": the benchmark's
    # one server behind thousands of names).
    if host == "*":
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    return TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                     allowed_hosts=[host, f"{host}:*"], allowed_origins=[])


def _tool(t: dict) -> types.Tool:
    return types.Tool.model_validate(t)


def mcp_app(name: str, host: str, kind: str, state: FleetState, path: str = "/mcp",
            extensions: dict[str, dict[str, Any]] | None = None) -> Starlette:
    """A real MCP server (low-level SDK `Server`) whose tool list and version follow the timeline, declaring
    `extensions` (SEP-2133: identifier -> settings) in the capabilities of initialize and server/discover."""
    page_size = 2
    calls = [0]

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        today = state.today(name)
        server.version = today.version
        tools = [_tool(t) for t in today.tools]
        if kind == "mcp_no_tool_list":
            raise ValueError("tool listing is broken today")
        if kind == "mcp_cursor_cycle":
            return types.ListToolsResult(tools=tools[:1], next_cursor="again")
        if kind == "mcp_shuffled":  # a different order on every call (the readiness order line fails)
            calls[0] += 1
            shift = calls[0] % max(len(tools), 1)
            return types.ListToolsResult(tools=tools[shift:] + tools[:shift])
        if kind == "mcp_paginated":
            start = int(params.cursor) if params and params.cursor else 0
            nxt = start + page_size
            return types.ListToolsResult(tools=tools[start:nxt], next_cursor=str(nxt) if nxt < len(tools) else None)
        return types.ListToolsResult(tools=tools)

    hints: dict[CacheableMethod, CacheHint] | None = (
        {"tools/list": CacheHint(ttl_ms=3_600_000, scope="public")} if kind == "mcp_modern" else None)
    server = Server(name, version=state.today(name).version, on_list_tools=list_tools, cache_hints=hints)
    server.extensions = dict(extensions or {})
    return server.streamable_http_app(
        streamable_http_path=path,
        json_response=kind in ("mcp_json", "mcp_shuffled", "mcp_handshake"),
        stateless_http=kind == "mcp_modern",
        transport_security=security_for(host),
        host=host,
    )


async def read_body_and_method(receive: Callable) -> tuple[bytes, str | None]:
    """The whole request body and its JSON-RPC method, if it has one (a string)."""
    body = b""
    more = True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    try:
        method = json.loads(body).get("method")
    except (ValueError, AttributeError):
        method = None
    return body, method if isinstance(method, str) else None


def modern_only(app: ASGIApp) -> ASGIApp:
    """A 2026-07-28-only server: refuses the handshake era's `initialize` like a modern-only server does."""
    async def wrapped(scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await app(scope, receive, send)
            return
        body, method = await read_body_and_method(receive)
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        if method == "initialize" or headers.get("mcp-protocol-version") not in (None, "2026-07-28"):
            error = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "Unsupported protocol version",
                                                          "data": {"supported": ["2026-07-28"],
                                                                   "requested": "2025-06-18"}}}
            await JSONResponse(error, status_code=400)(scope, receive, send)
            return
        await app(scope, replaying(body, receive), send)

    return wrapped


def handshake_only(app: ASGIApp) -> ASGIApp:
    """A server of the handshake era only, as the npm TypeScript SDK's are: `server/discover` is "Method
    not found", so a client falls back to initialize (and the tools/list result has no cache hints)."""
    async def wrapped(scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await app(scope, receive, send)
            return
        body, method = await read_body_and_method(receive)
        if method == "server/discover":
            try:
                request_id = json.loads(body).get("id")
            except (ValueError, AttributeError):
                request_id = None
            await JSONResponse({"jsonrpc": "2.0", "id": request_id,
                                "error": {"code": -32601, "message": "Method not found"}})(scope, receive, send)
            return
        await app(scope, replaying(body, receive), send)

    return wrapped


def legacy_sse_app(name: str, host: str, state: FleetState) -> Starlette:
    server = MCPServer(name, version=state.today(name).version, log_level="CRITICAL")

    @server.tool(description="Echo a message back (legacy SSE transport).")
    def echo(message: str) -> str:
        return message

    return server.sse_app(transport_security=security_for(host), host=host)


def _rpc(result: Any = None, error: dict | None = None) -> dict:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": 1}
    body["error" if error else "result"] = error or result
    return body


async def _drain(request: Request) -> None:
    await request.body()


def _broken_connection_app(always: bool) -> ASGIApp:
    """Cuts the first initialize's connection mid-answer (or every request's, when `always`); otherwise a
    minimal MCP server that also sets a cookie and refuses any request that sends one back."""
    calls = {"initialize": 0}

    async def app(scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            return
        body, method = await read_body_and_method(receive)
        if method == "initialize":
            calls["initialize"] += 1
        if always or (method == "initialize" and calls["initialize"] == 1):
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"application/json"), (b"content-length", b"500")]})
            await send({"type": "http.response.body", "body": b'{"jsonrpc":"2.0"', "more_body": False})
            return
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        if "cookie" in headers:
            response: Response = JSONResponse(_rpc(error={"code": -32000, "message": "a cookie came back"}))
        elif method == "initialize":
            response = JSONResponse(_rpc({"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                                          "serverInfo": {"name": "flaky", "version": "1.0.0"}}),
                                    headers={"set-cookie": "session=tracking; Path=/; Secure"})
        elif method == "tools/list":
            response = JSONResponse({"jsonrpc": "2.0", "id": json.loads(body).get("id"), "result": {
                "tools": [{"name": "ping", "inputSchema": {"type": "object"}}]}})
        else:
            response = Response(status_code=202)
        await response(scope, receive, send)

    return app


def static_app(kind: str, host: str, redirect_to: str | None = None, slow_seconds: float = 12.0) -> ASGIApp:
    """Plain Starlette apps for behaviour the SDK would never produce."""
    if kind in ("broken_once", "broken_always"):
        return _broken_connection_app(always=kind == "broken_always")

    async def handler(request: Request) -> Response:
        await _drain(request)
        response = _refusal(kind, host, redirect_to)
        if response is None:
            response = await _broken_answer(kind, slow_seconds)
        return response if response is not None else Response("unknown fleet behaviour", status_code=500)

    return Starlette(routes=[Route("/mcp", handler, methods=["GET", "POST", "DELETE"])])


def _refusal(kind: str, host: str, redirect_to: str | None) -> Response | None:
    """A `static_app` kind that answers in place of an MCP server (sign-in, payment, an HTTP error, a web
    page, a redirect); None for any other kind."""
    if kind == "auth401_prm":
        return JSONResponse({"error": "invalid_token"}, status_code=401, headers={
            "WWW-Authenticate": f'Bearer error="invalid_token", resource_metadata='
                                f'"https://{host}/.well-known/oauth-protected-resource/mcp"'})
    if kind == "auth401_plain":
        return Response("Unauthorized", status_code=401)
    if kind == "auth403":
        return JSONResponse({"error": "insufficient_scope"}, status_code=403,
                            headers={"WWW-Authenticate": 'Bearer error="insufficient_scope"'})
    if kind == "pay402":
        return JSONResponse({"x402Version": 1, "accepts": [
            {"scheme": "exact", "network": "base", "payTo": "0x1111111111111111111111111111111111111111",
             "maxAmountRequired": "10000", "asset": "USDC"}]}, status_code=402)
    if kind in ("http400", "http405", "http500"):
        status = int(kind[4:])
        return Response("Method Not Allowed" if status == 405 else "error", status_code=status,
                        headers={"Allow": "GET"} if status == 405 else None)
    if kind == "html200":
        return Response("<!doctype html><html><body>Log in to continue</body></html>", media_type="text/html")
    if kind in ("redirect_same", "redirect_cross"):
        return Response(status_code=307, headers={"Location": redirect_to or "/"})
    return None


async def _broken_answer(kind: str, slow_seconds: float) -> Response | None:
    """A `static_app` kind that answers like a JSON-RPC server gone wrong (an error, too slow, never ending,
    too big, too deep, not UTF-8, a byte a second); None for any other kind."""
    if kind == "rpc_error":
        return JSONResponse(_rpc(error={"code": -32603, "message": "Internal error"}))
    if kind == "slow":
        await asyncio.sleep(slow_seconds)
        return JSONResponse(_rpc({"protocolVersion": "2025-06-18"}))
    if kind == "endless_sse":
        return StreamingResponse(_keepalives(), media_type="text/event-stream")
    if kind == "oversized":
        return StreamingResponse(_oversized_body(), media_type="application/json")
    if kind == "nested_json":
        depth = 100_000
        return Response(b'{"jsonrpc":"2.0","id":1,"result":' + b"[" * depth + b"]" * depth + b"}",
                        media_type="application/json")
    if kind == "bad_utf8":
        return Response(b'{"jsonrpc":"2.0","id":1,"result":{"serverInfo":{"name":"\xff\xfe\xfa"}}}',
                        media_type="application/json")
    if kind == "slow_drip":
        return StreamingResponse(_drip(), media_type="application/json")
    return None


async def _keepalives() -> AsyncIterator[bytes]:
    """An event stream that never ends: a keep-alive comment every 50 ms."""
    while True:
        yield b": keep-alive\n\n"
        await asyncio.sleep(0.05)


async def _oversized_body() -> AsyncIterator[bytes]:
    """A JSON-RPC answer padded to 50 MiB."""
    chunk = b" " * (1 << 20)
    yield b'{"jsonrpc":"2.0","id":1,"result":{"padding":"'
    for _ in range(50):
        yield chunk
    yield b'"}}'


async def _drip() -> AsyncIterator[bytes]:
    """An initialize answer, one byte a second."""
    for ch in json.dumps(_rpc({"protocolVersion": "2025-06-18"})).encode():
        yield bytes([ch])
        await asyncio.sleep(1.0)


async def _hung_until_gone(seconds: float, receive: Callable) -> bool:
    """Hold a request unanswered for `seconds`, watching the connection: True as soon as the client hangs up.
    A hang that only slept would count a request the client had given up on as still in flight (the fleet's
    politeness count, run.py), and the next request to the host as a second one."""
    async def gone() -> bool:
        while (await receive())["type"] != "http.disconnect":
            pass  # the request's body, read to its end: after it, only the hang-up comes
        return True

    try:
        return await asyncio.wait_for(gone(), seconds)
    except TimeoutError:
        return False


async def respond_for_state(state: str, host: str, scope: dict, receive: Callable, send: Callable,
                            slow_seconds: float) -> bool:
    """Answer for a day-level state that overrides the server's normal behaviour; False if none applies."""
    if state in ("up", "down"):
        return False
    if state == "timeout":
        if await _hung_until_gone(slow_seconds, receive):
            return True  # the client hung up first: nobody is left to answer, and the request is no longer open
        response: Response = Response(status_code=504)
    elif state == "http_500":
        response = Response("internal error", status_code=500)
    elif state == "auth":
        response = JSONResponse({"error": "invalid_token"}, status_code=401, headers={
            "WWW-Authenticate": f'Bearer resource_metadata="https://{host}/.well-known/oauth-protected-resource"'})
    elif state == "pay":
        response = JSONResponse({"accepts": [{"payTo": "0x2222222222222222222222222222222222222222",
                                              "network": "base"}]}, status_code=402)
    elif state == "html":
        response = Response("<html>maintenance</html>", media_type="text/html")
    elif state == "moved":
        response = Response(status_code=308, headers={"Location": "https://mcp.newhome.test/mcp"})
    else:
        return False
    await response(scope, receive, send)
    return True
