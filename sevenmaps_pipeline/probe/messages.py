"""The JSON-RPC messages the prober sends, and how it quotes an error it was sent."""

from __future__ import annotations

from typing import Any

from .config import MODERN_PROTOCOL_VERSION
from .values import json_int

CLIENT_INFO = {"name": "7maps-prober", "version": "0.2"}


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
