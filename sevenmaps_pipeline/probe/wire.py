"""Reading JSON-RPC answers that arrive as JSON or as Server-Sent Events, within a byte cap.

Time caps are the caller's (asyncio.timeout around the whole request); here only sizes and shapes.
Whatever a server sends — huge, endless, malformed, deeply nested, not UTF-8 — this yields a
classified `Reply`, never an exception.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import httpx


@dataclass
class Reply:
    kind: str  # result | error | not_jsonrpc | too_large | empty
    message: dict | None = None
    detail: str = ""
    content_type: str = ""

    @property
    def result(self) -> Any:
        return (self.message or {}).get("result")

    @property
    def error(self) -> dict:
        error = (self.message or {}).get("error")
        return error if isinstance(error, dict) else {}


def loads(text: bytes | str) -> tuple[Any, str | None]:
    try:
        return json.loads(text), None
    except RecursionError:
        return None, "JSON nested too deeply"
    except UnicodeDecodeError:
        return None, "body is not valid UTF-8"
    except ValueError as exc:
        return None, f"malformed JSON ({str(exc)[:80]})"


def _match(obj: Any, request_id: Any) -> Reply | None:
    if not isinstance(obj, dict) or obj.get("jsonrpc") != "2.0":
        return None
    if "id" in obj and obj["id"] != request_id and obj["id"] is not None:
        return None
    if isinstance(obj.get("error"), dict):
        return Reply("error", obj)
    if "result" in obj:
        return Reply("result", obj)
    return None


async def read_body(response: httpx.Response, cap: int) -> tuple[bytes, bool]:
    """Up to `cap` bytes of the body; True when the body was longer (reading stops there)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_raw():
        chunks.append(chunk)
        size += len(chunk)
        if size > cap:
            return b"".join(chunks)[:cap], True
    return b"".join(chunks), False


async def read_reply(response: httpx.Response, request_id: Any, cap: int) -> Reply:
    ctype = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype == "text/event-stream":
        return await _read_sse(response, request_id, cap)
    body, too_large = await read_body(response, cap)
    if too_large:
        return Reply("too_large", detail=f"answer exceeds {cap:,} bytes", content_type=ctype)
    if not body.strip():
        return Reply("empty", detail=f"empty body ({ctype or 'no content type'})", content_type=ctype)
    obj, problem = loads(body)
    if problem:
        kind = "HTML" if ctype == "text/html" or body.lstrip()[:1] == b"<" else ctype or "no content type"
        return Reply("not_jsonrpc", detail=f"{kind}: {problem}" if kind != "HTML" else "HTML, not JSON-RPC",
                     content_type=ctype)
    matched = _match(obj, request_id)
    if matched is None:
        return Reply("not_jsonrpc", detail=f"JSON but not a JSON-RPC answer ({ctype})", content_type=ctype)
    matched.content_type = ctype
    return matched


async def _read_sse(response: httpx.Response, request_id: Any, cap: int) -> Reply:
    """Parse SSE events as they arrive; return the message answering `request_id`."""
    size = 0
    buffer = b""
    data: list[bytes] = []
    async for chunk in response.aiter_raw():
        size += len(chunk)
        if size > cap:
            return Reply("too_large", detail=f"event stream exceeds {cap:,} bytes without an answer",
                         content_type="text/event-stream")
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            line = line.rstrip(b"\r")  # CRLF line endings
            if line == b"":
                if data:
                    obj, _problem = loads(b"\n".join(data))
                    data = []
                    matched = _match(obj, request_id)
                    if matched is not None:
                        matched.content_type = "text/event-stream"
                        return matched
                continue
            if line.startswith(b":"):
                continue  # keep-alive comment
            field, _, value = line.partition(b":")
            if field == b"data":
                data.append(value[1:] if value.startswith(b" ") else value)
    if data:
        obj, _problem = loads(b"\n".join(data))
        matched = _match(obj, request_id)
        if matched is not None:
            return matched
    return Reply("empty", detail="event stream ended without an answer", content_type="text/event-stream")


async def read_endpoint_event(response: httpx.Response, cap: int) -> str | None:
    """Legacy HTTP+SSE: the data of the first `endpoint` event, or None when the stream ends first."""
    size = 0
    buffer = b""
    event = b"message"
    data: list[bytes] = []
    async for chunk in response.aiter_raw():
        size += len(chunk)
        if size > cap:
            return None
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            line = line.rstrip(b"\r")
            if line == b"":
                if event == b"endpoint" and data:
                    return b"\n".join(data).decode("utf-8", "replace")
                event, data = b"message", []
            elif not line.startswith(b":"):
                field, _, value = line.partition(b":")
                value = value[1:] if value.startswith(b" ") else value
                if field == b"event":
                    event = value
                elif field == b"data":
                    data.append(value)
    return None
