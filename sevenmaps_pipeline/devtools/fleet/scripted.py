"""A fleet host that answers from a script: for tests that need answers no real server gives on demand
(a property test's generated answers, a decompression bomb, a slow but valid server, odd JSON types).

The script maps a JSON-RPC method (or `GET <path>`, `DELETE`) to a `Scripted` answer, or to a list of
them served in turn (tools/list pages). Unscripted notifications get 202; anything else 404.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .apps import read_body_and_method


@dataclass
class Scripted:
    status: int = 200
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""
    delay: float = 0.0           # seconds before the answer starts
    chunks: int = 1              # the body is sent in this many pieces


def json_answer(message: Any, **kw: Any) -> Scripted:
    kw.setdefault("headers", [("content-type", "application/json")])
    return Scripted(body=json.dumps(message).encode(), **kw)


def initialize_result(request_id: Any = 1, version: str = "2025-06-18", **kw: Any) -> Scripted:
    return json_answer({"jsonrpc": "2.0", "id": request_id, "result": {
        "protocolVersion": version, "capabilities": {"tools": {}},
        "serverInfo": {"name": "scripted", "version": "1.0.0"}}}, **kw)


def tools_result(tools: list[dict], request_id: Any = 2, **kw: Any) -> Scripted:
    return json_answer({"jsonrpc": "2.0", "id": request_id, "result": {"tools": tools}}, **kw)


class ScriptedApp:
    """An ASGI app; set `script` between checks. It keeps every request it received in `received`."""

    def __init__(self, script: dict[str, Scripted | list[Scripted]] | None = None) -> None:
        self.script: dict[str, Scripted | list[Scripted]] = script or {}
        self.received: list[dict[str, Any]] = []
        self._served: dict[str, int] = {}

    def reset(self, script: dict[str, Scripted | list[Scripted]]) -> None:
        self.script, self.received, self._served = script, [], {}

    def _answer_for(self, key: str) -> Scripted | None:
        entry = self.script.get(key)
        if isinstance(entry, list):
            n = self._served.get(key, 0)
            self._served[key] = n + 1
            return entry[min(n, len(entry) - 1)] if entry else None
        return entry

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            return
        _body, method = await read_body_and_method(receive)
        self.received.append({"method": scope["method"], "path": scope.get("path"), "rpc": method,
                              "query": scope.get("query_string", b"").decode("latin-1"),
                              "headers": {k.decode("latin-1").lower(): v.decode("latin-1")
                                          for k, v in scope.get("headers", [])}})
        key = method if scope["method"] == "POST" and method else f"{scope['method']} {scope.get('path')}"
        answer = self._answer_for(key)
        if answer is None:
            answer = Scripted(status=202) if method and method.startswith("notifications/") else Scripted(404)
        if answer.delay:
            await asyncio.sleep(answer.delay)
        data = answer.body  # sent as scripted: a compressed body carries its own Content-Encoding header
        headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in answer.headers]
        await send({"type": "http.response.start", "status": answer.status, "headers": headers})
        size = max(1, -(-len(data) // max(answer.chunks, 1)))
        pieces = [data[i:i + size] for i in range(0, len(data), size)] or [b""]
        for i, piece in enumerate(pieces):
            await send({"type": "http.response.body", "body": piece, "more_body": i < len(pieces) - 1})
