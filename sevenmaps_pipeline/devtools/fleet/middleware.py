"""What real deployments put in front of MCP servers, as ASGI wrappers around the fleet's servers.

- `compressing`: a proxy or CDN that compresses every answer (JSON, SSE streams flushed event by event,
  robots.txt, well-knowns), when the client's Accept-Encoding allows it or — as some do — regardless.
- `recording`: every request a host receives (method, path, headers, body), so tests assert from the
  server's side what the prober sends.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Awaitable, Callable
from typing import Any

ASGIApp = Callable[[dict, Callable, Callable], Awaitable[None]]

# mode -> (Content-Encoding sent, zlib wbits, compress even when not asked)
COMPRESSION_MODES: dict[str, tuple[str, int, bool]] = {
    "gzip": ("gzip", 16 + zlib.MAX_WBITS, False),
    "deflate": ("deflate", zlib.MAX_WBITS, False),          # RFC 9110's deflate: zlib-wrapped
    "deflate-raw": ("deflate", -zlib.MAX_WBITS, False),     # what some servers send as "deflate"
    "gzip-unasked": ("gzip", 16 + zlib.MAX_WBITS, True),    # compresses whatever the client asked for
}


def compressing(app: ASGIApp, mode: str) -> ASGIApp:
    encoding, wbits, always = COMPRESSION_MODES[mode]

    async def wrapped(scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        accepted = dict(scope.get("headers", [])).get(b"accept-encoding", b"").decode().lower()
        if not always and encoding not in accepted:
            await app(scope, receive, send)
            return
        compressor = zlib.compressobj(6, zlib.DEFLATED, wbits)

        async def compressed_send(message: dict) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"content-length"]
                headers.append((b"content-encoding", encoding.encode()))
                await send({**message, "headers": headers})
            elif message["type"] == "http.response.body":
                more = message.get("more_body", False)
                data = compressor.compress(message.get("body", b""))
                # A sync flush after each chunk: an SSE event is decodable as soon as it is sent.
                data += compressor.flush(zlib.Z_SYNC_FLUSH if more else zlib.Z_FINISH)
                await send({**message, "body": data})
            else:
                await send(message)

        await app(scope, receive, compressed_send)

    return wrapped


def recording(app: ASGIApp, log: list[dict[str, Any]], host: str) -> ASGIApp:
    async def wrapped(scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        entry: dict[str, Any] = {
            "host": host, "method": scope["method"], "path": scope.get("path", ""),
            "headers": [(k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in scope.get("headers", [])],
            "body": b"",
        }
        log.append(entry)

        async def recorded_receive() -> dict:
            message = await receive()
            if message["type"] == "http.request":
                entry["body"] += message.get("body", b"")
            return message

        await app(scope, recorded_receive, send)

    return wrapped


def rpc_method(entry: dict[str, Any]) -> str | None:
    """The JSON-RPC method of a recorded request, if its body is one."""
    try:
        body = json.loads(entry["body"] or b"null")
    except ValueError:
        return None
    return body.get("method") if isinstance(body, dict) else None
