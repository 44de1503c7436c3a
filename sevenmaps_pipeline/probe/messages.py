"""The JSON-RPC messages the prober sends, and how it quotes an error it was sent."""

from __future__ import annotations

from typing import Any

from ..registry.listing import redact_userinfo
from .config import MODERN_PROTOCOL_VERSION
from .values import json_int
from .wire import loads

CLIENT_INFO = {"name": "7maps-prober", "version": "0.2"}
QUOTED_CHARS = 160  # of what a server's error said, in an outcome's detail


def rpc(method: str, request_id: int | str | None, params: dict | None = None) -> dict:
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if request_id is not None:
        body["id"] = request_id
    if params is not None:
        body["params"] = params
    return body


def modern_meta() -> dict:
    return {"io.modelcontextprotocol/protocolVersion": MODERN_PROTOCOL_VERSION,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": CLIENT_INFO}


def error_text(error: dict) -> str:
    code = json_int(error.get("code"))
    message = error.get("message")
    return (f"{code if code is not None else '(code not an integer)'}: "
            f"{message[:200] if isinstance(message, str) else '(no message)'}")


def status_text(status: int, body: bytes) -> str:
    """An HTTP answer that is no success, as a detail quotes it: its status, and what its body says (a JSON-RPC
    error's code and message, else its text), so that a lost session ("Session not found"), a host allow-list
    ("Invalid Host") or a proxy's page is named, not only numbered. The detail is published: what the server
    said is put on one line, without control characters or a URL's credentials, and cut at QUOTED_CHARS."""
    obj, _ = loads(body) if body else (None, None)
    error = obj.get("error") if isinstance(obj, dict) else None
    said = error_text(error) if isinstance(error, dict) else body.decode("utf-8", "replace")
    said = redact_userinfo("".join(ch for ch in " ".join(said.split()) if ch.isprintable()))[:QUOTED_CHARS]
    return f"HTTP {status}: {said}" if said else f"HTTP {status}"
