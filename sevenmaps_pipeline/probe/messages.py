"""The JSON-RPC messages the prober sends, and how it quotes an error it was sent."""

from __future__ import annotations

import re
from typing import Any

from ..registry.listing import REDACTED, redact_text
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
            f"{quoted(message, 200) if isinstance(message, str) else '(no message)'}")


def status_text(status: int, body: bytes) -> str:
    """An HTTP answer that is no success, as a detail quotes it: its status, and what its body says (a JSON-RPC
    error's code and message, else its text), so that a lost session ("Session not found"), a host allow-list
    ("Invalid Host") or a proxy's page is named, not only numbered."""
    obj, _ = loads(body) if body else (None, None)
    error = obj.get("error") if isinstance(obj, dict) else None
    said = error_text(error) if isinstance(error, dict) else quoted(body.decode("utf-8", "replace"), QUOTED_CHARS)
    return f"HTTP {status}: {said[:QUOTED_CHARS]}" if said else f"HTTP {status}"


# Terminal escape sequences, and (besides what registry/listing.py redact_text redacts in any text) a bare
# `user:password@host`, which a server's error may quote and a registry's prose need not be read as.
_TERMINAL_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]")
_BARE_USERINFO = re.compile(r"(?<![\w.%+-])[\w.%+-]+:[^\s/@:]+@(?=[\w.-])")
_JOINERS = "\u200c\u200d"  # zero-width (non-)joiners: not printable, yet part of words and emoji


def quoted(text: str, limit: int) -> str:
    """What a server said, as a published detail quotes it: on one line, printable characters only (no terminal
    escapes), credentials redacted, at most `limit` characters; cleaned whole before it is cut, so no cut can
    hide a credential from the redaction."""
    text = _TERMINAL_ESCAPE.sub("", text)
    text = " ".join("".join(ch for ch in text if ch.isprintable() or ch in _JOINERS or ch.isspace()).split())
    return _BARE_USERINFO.sub(REDACTED + "@", redact_text(text))[:limit]
