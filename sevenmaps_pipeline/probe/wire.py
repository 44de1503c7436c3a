"""Reading JSON-RPC answers that arrive as JSON or as Server-Sent Events, within a byte cap.

Time caps are the caller's (asyncio.timeout around the whole request); here only sizes, encodings and
shapes. Bodies are read raw and decoded here (gzip, deflate — zlib-wrapped or raw, as servers send both —
in any chain the server names, and gzip sent without saying so), a bounded piece at a time, so every cap
applies to the *decoded* size and a decompression bomb ends as "too large" after at most the cap.
Whatever a server sends — huge, endless, malformed, deeply nested, not UTF-8, non-finite numbers, lone
surrogates, an unknown encoding — this yields a classified `Reply` (or a flagged body), never an exception.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import zlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import httpx

# What the prober asks for; every response is decoded by what it says it is, asked for or not.
ACCEPT_ENCODING = "gzip, deflate"
_PIECE = 64 << 10  # the most one decompression step may produce
_GZIP_MAGIC = b"\x1f\x8b"
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


class BodyError(Exception):
    """A body that cannot be read as sent: too large once decoded, or an encoding we cannot decode."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(detail)
        self.kind, self.detail = kind, detail


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


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:20]} is out of range")
    return value


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def loads(text: bytes | str) -> tuple[Any, str | None]:
    """Strict JSON (RFC 8259): NaN, Infinity and numbers that overflow to infinity are malformed (Python's
    json would accept them and write them back out as invalid JSON), and so are lone UTF-16 surrogates
    (they cannot be stored as UTF-8)."""
    try:
        obj = json.loads(text, parse_float=_finite_float, parse_constant=_no_constants)
    except RecursionError:
        return None, "JSON nested too deeply"
    except UnicodeDecodeError:
        return None, "body is not valid UTF-8"
    except ValueError as exc:
        return None, f"malformed JSON ({str(exc)[:80]})"
    raw = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    if _SURROGATE_ESCAPE.search(raw):
        try:
            json.dumps(obj, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            return None, "JSON holds a lone UTF-16 surrogate"
        except RecursionError:
            return None, "JSON nested too deeply"
    return obj, None


def same_id(received: Any, sent: Any) -> bool:
    """JSON-RPC ids match by type and value (Python would take `true` or `1.0` for `1`)."""
    return type(received) is type(sent) and received == sent


def _match(obj: Any, request_id: Any) -> Reply | None:
    if not isinstance(obj, dict) or obj.get("jsonrpc") != "2.0":
        return None
    if "id" in obj and obj["id"] is not None and not same_id(obj["id"], request_id):
        return None
    if isinstance(obj.get("error"), dict):
        return Reply("error", obj)
    if "result" in obj:
        return Reply("result", obj)
    return None


# ---------------------------------------------------------------------------------------------- decoding
class _Stage:
    """One content coding, decoded incrementally with bounded output per step."""

    def __init__(self, coding: str) -> None:
        self.coding = coding
        self._raw_deflate = False
        self._started = False
        self._new()

    def _new(self) -> None:
        if self.coding == "gzip":
            self._d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif self._raw_deflate:
            self._d = zlib.decompressobj(-zlib.MAX_WBITS)
        else:
            self._d = zlib.decompressobj(zlib.MAX_WBITS)

    def feed(self, data: bytes) -> Iterator[bytes]:
        while data:
            if self._d.eof:  # a further gzip member (concatenated members are one body); else trailing bytes
                if self.coding != "gzip" or not data.lstrip(b"\0"):
                    return
                self._new()
            try:
                out = self._d.decompress(data, _PIECE)
            except zlib.error as exc:
                if self.coding == "deflate" and not self._started and not self._raw_deflate:
                    self._raw_deflate = True  # "deflate" sent as a raw DEFLATE stream (no zlib header)
                    self._new()
                    continue
                raise BodyError("bad_encoding", f"{self.coding} body cannot be decoded ({exc})") from exc
            self._started = True
            if out:
                yield out
            data = self._d.unconsumed_tail or (self._d.unused_data if self._d.eof else b"")
            if self._d.eof and self.coding != "gzip":
                return

    def finish(self) -> Iterator[bytes]:
        out = self._d.flush()
        if out:
            yield out


def _codings(response: httpx.Response) -> list[str]:
    header = response.headers.get("content-encoding", "")
    codings = [c.strip().lower() for c in header.split(",") if c.strip()]
    codings = ["gzip" if c == "x-gzip" else c for c in codings if c != "identity"]
    unknown = [c for c in codings if c not in ("gzip", "deflate")]
    if unknown:
        raise BodyError("bad_encoding", f"Content-Encoding {', '.join(unknown)} is not one we accept "
                                        f"(we ask for {ACCEPT_ENCODING})")
    return codings


async def decoded_chunks(response: httpx.Response, cap: int) -> AsyncIterator[bytes]:
    """The body as sent, decoded, never more than `cap` decoded bytes: past that, BodyError('too_large')."""
    codings = _codings(response)
    stages: list[_Stage] | None = [_Stage(c) for c in reversed(codings)] if codings else None
    size = 0

    def through(data: bytes, index: int = 0) -> Iterator[bytes]:
        if stages is None or index == len(stages):
            yield data
            return
        for piece in stages[index].feed(data):
            yield from through(piece, index + 1)

    async for raw in response.aiter_raw():
        if not raw:
            continue
        if stages is None and not codings:
            # Compressed without saying so: gzip's magic cannot begin JSON, SSE or HTML.
            stages = [_Stage("gzip")] if raw[:2] == _GZIP_MAGIC else []
        for piece in through(raw):
            size += len(piece)
            if size > cap:
                raise BodyError("too_large", f"answer exceeds {cap:,} bytes" + (" once decoded" if stages else ""))
            yield piece
    for index, stage in enumerate(stages or []):
        for tail in stage.finish():
            for piece in through(tail, index + 1):
                size += len(piece)
                if size > cap:
                    raise BodyError("too_large", f"answer exceeds {cap:,} bytes once decoded")
                yield piece


async def _collect(response: httpx.Response, cap: int, chunks: list[bytes]) -> str | None:
    """The decoded body into `chunks`, and what cut it short: None, 'truncated' (longer than the cap; reading
    stops there) or why it could not be decoded (`chunks` then emptied)."""
    try:
        async for chunk in decoded_chunks(response, cap):
            chunks.append(chunk)
    except BodyError as exc:
        if exc.kind == "too_large":
            return "truncated"
        chunks.clear()
        return exc.detail
    return None


async def read_body(response: httpx.Response, cap: int) -> tuple[bytes, str | None]:
    """Up to `cap` decoded bytes of the body, and what cut it short (`_collect`)."""
    chunks: list[bytes] = []
    problem = await _collect(response, cap, chunks)
    return b"".join(chunks)[:cap], problem


def _content_type(response: httpx.Response) -> str:
    return response.headers.get("content-type", "").split(";")[0].strip().lower()


# A document asked for (robots.txt, a well-known, a discovery surface) answered as an event stream may never end: a
# server answering every path with its MCP stream does this. Read for its time like any file (at most
# STREAM_READ_SECONDS where no politeness hangs on it), a stream that ended is a file; one still open that sent
# nothing but the stream's own lines (comments, event:, data:, id:, retry:) is an event stream, not a file; one
# still open after other lines is a file that did not arrive whole (docs/methodology.md, "Per origin, once a day").
STREAM_READ_SECONDS = 1.0
STREAM_NOT_A_FILE = "an event stream still open, with only the stream's own lines: not a file"
_SSE_FIELDS = (b"event", b"data", b"id", b"retry")


def is_event_stream(response: httpx.Response) -> bool:
    return _content_type(response) == "text/event-stream"


def only_stream_lines(body: bytes) -> bool:
    """Whether every line is an event stream's own (blank, a comment, or an SSE field): nothing of a file."""
    for line in body.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n"):
        line = line.strip()
        if line and not line.startswith(b":") and line.split(b":", 1)[0].strip() not in _SSE_FIELDS:
            return False
    return True


async def read_stream(response: httpx.Response, cap: int, seconds: float) -> tuple[bytes, bool, str | None]:
    """An event stream asked for as a document: up to `cap` decoded bytes of what arrives within `seconds`,
    whether it ended, and what cut it short as read_body says it."""
    chunks: list[bytes] = []
    try:
        async with asyncio.timeout(max(seconds, 0.0)):
            problem = await _collect(response, cap, chunks)
    except TimeoutError:
        return b"".join(chunks), False, None
    return b"".join(chunks)[:cap], True, problem


async def read_document_stream(response: httpx.Response, cap: int, seconds: float) -> tuple[str, bytes, str]:
    """A document answered as an event stream, read for `seconds` (the rule above): ('file', its body, what cut
    it short) when it ended; ('stream', nothing, STREAM_NOT_A_FILE) when it is still open with only the stream's
    own lines; ('cut', nothing, why) when it is still open after lines of a file, which did not arrive whole."""
    body, ended, problem = await read_stream(response, cap, seconds)
    if ended:
        return "file", body, problem or ""
    if only_stream_lines(body):
        return "stream", b"", STREAM_NOT_A_FILE
    return "cut", b"", f"a text/event-stream with lines of a file, still open after {seconds:.1f} s"


async def read_reply(response: httpx.Response, request_id: Any, cap: int) -> Reply:
    ctype = _content_type(response)
    try:
        if ctype == "text/event-stream":
            return await _read_sse(response, request_id, cap)
        body = b"".join([chunk async for chunk in decoded_chunks(response, cap)])
    except BodyError as exc:
        if exc.kind == "too_large":
            return Reply("too_large", detail=exc.detail, content_type=ctype)
        return Reply("not_jsonrpc", detail=exc.detail, content_type=ctype)
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


async def _sse_events(response: httpx.Response, cap: int) -> AsyncIterator[tuple[bytes, list[bytes]]]:
    """(event name, data lines) of each complete event, as it arrives; a last unterminated event too."""
    buffer = b""
    event = b"message"
    data: list[bytes] = []
    async for chunk in decoded_chunks(response, cap):
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            line = line.rstrip(b"\r")  # CRLF line endings
            if line == b"":
                if data:
                    yield event, data
                event, data = b"message", []
                continue
            if line.startswith(b":"):
                continue  # keep-alive comment
            name, _, value = line.partition(b":")
            value = value[1:] if value.startswith(b" ") else value
            if name == b"data":
                data.append(value)
            elif name == b"event":
                event = value
    if data:
        yield event, data


async def _read_sse(response: httpx.Response, request_id: Any, cap: int) -> Reply:
    """Parse SSE events as they arrive; return the message answering `request_id`."""
    try:
        async for _event, data in _sse_events(response, cap):
            obj, _problem = loads(b"\n".join(data))
            matched = _match(obj, request_id)
            if matched is not None:
                matched.content_type = "text/event-stream"
                return matched
    except BodyError as exc:
        if exc.kind == "too_large":
            return Reply("too_large", detail=f"event stream exceeds {cap:,} bytes without an answer",
                         content_type="text/event-stream")
        return Reply("not_jsonrpc", detail=exc.detail, content_type="text/event-stream")
    return Reply("empty", detail="event stream ended without an answer", content_type="text/event-stream")


async def read_endpoint_event(response: httpx.Response, cap: int) -> str | None:
    """Legacy HTTP+SSE: the data of the first `endpoint` event, or None when the stream ends first (or
    grows past `cap`, or cannot be decoded)."""
    try:
        async for event, data in _sse_events(response, cap):
            if event == b"endpoint":
                return b"\n".join(data).decode("utf-8", "replace")
    except BodyError:
        return None
    return None


def sse_events(response: httpx.Response, cap: int) -> AsyncIterator[tuple[bytes, list[bytes]]]:
    """(event name, data lines) of each event of a stream, as it arrives (legacy HTTP+SSE: probe/sse_readiness.py);
    BodyError when it grows past `cap` or cannot be decoded."""
    return _sse_events(response, cap)


def reply_to(obj: Any, request_id: Any) -> Reply | None:
    """`obj` as the JSON-RPC answer to `request_id` (an answer carrying that id), else None."""
    if not isinstance(obj, dict) or obj.get("id") is None:
        return None
    return _match(obj, request_id)
