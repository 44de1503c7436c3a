"""The readiness probe of an SSE-only listing, over the legacy HTTP+SSE transport (docs/methodology.md,
"Readiness": [R] covers "streamable-http and sse"). The daily map only opens such an endpoint and waits for
its `endpoint` event (probe/checker.py `_legacy_sse`); the readiness probe goes on, as a client of that
transport does: GET the stream, read the `endpoint` event (a URL on the same origin), POST the rubric's
steps there in its order (server/discover, initialize only when discovery answers nothing, tools/list
twice), and read each answer from the stream as a `message` event (or from the POST's own body, where a
server answers there). The steps, their timeouts and every reading of an answer are EndpointCheck's,
unchanged: only where a request goes and where its answer comes from differ. The official SDK serves both
revisions over SSE (its SSE server answers server/discover), so either may answer. Never a tool call.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any
from urllib.parse import urljoin

import httpx

from ..lake.keys import origin as origin_of
from ..registry.listing import redact_text
from .check_result import CheckResult
from .checker import EndpointCheck
from .outcomes import Answer, _Outcome, transport_failure
from .wire import BodyError, loads, read_body, reply_to, sse_events


class _StreamEndedAfterDiscover(Exception):
    """The stream ended once server/discover was asked, before any answer: initialize gets a stream of its own."""


class SseReadinessCheck(EndpointCheck):
    """One readiness check of a legacy HTTP+SSE endpoint; `run()` never raises, like EndpointCheck's."""

    def __init__(self, client: httpx.AsyncClient, config: Any, url: str, started_at: Any, **kw: Any) -> None:
        super().__init__(client, config, url, started_at, **{**kw, "readiness": True})
        self._pending: dict[Any, asyncio.Future] = {}
        self._ended: str | None = None  # why the stream ended, once it has
        self._stream_status: int | None = None  # the status of the GET that opened the stream
        self._stream_url: str | None = None  # the stream's URL, after any redirect followed
        self._discovered = False  # server/discover was asked (on this stream or one before)
        self._get_sent = 0.0  # when the GET that opened the latest stream was sent

    async def _check(self) -> None:
        try:
            try:
                await self._open()
            except _StreamEndedAfterDiscover:
                # Older SDKs end the session's stream when a method they do not know fails; the server still
                # serves. Discovery answered nothing, so initialize is asked, on a stream of its own.
                self.result.note("the SSE stream ended after server/discover: a new stream for initialize")
                self._ended, self.url = None, self._stream_url or self.url
                await self._open()
        except httpx.HTTPError as exc:
            raise transport_failure(exc, "the SSE stream") from exc

    async def _modern(self, started: float) -> bool:
        if self._discovered:  # the second stream: discovery already answered nothing
            return False
        self._discovered = True
        try:
            answered = await super()._modern(started)
        except _Outcome as failed:
            if self._ended is None or failed.outcome != "unreachable":
                raise
            answered = False
        if not answered and self._ended is not None:
            raise _StreamEndedAfterDiscover()
        return answered

    async def run(self) -> CheckResult:
        result = await super().run()
        # The stream's status is the check's, unless a message POST was refused (its status then decides):
        # the 202 every accepted POST gets says nothing of the server.
        if self._stream_status is not None and (result.http_status is None or 200 <= result.http_status < 300):
            result.http_status = self._stream_status
        return result

    async def _open(self) -> None:
        self._get_sent = time.monotonic()
        async with self.client.stream("GET", self.url, headers={"Accept": "text/event-stream"}) as response:
            if not response.is_redirect:
                await self._listen(response)
                return
            # The redirect rule: one to the same registrable domain over https. Its response is closed
            # before the stream at the new URL opens: held open, it and the stream would take both of the
            # host's two connections (probe/hosts.py), and no message POST would get one.
            self.result.note(f"GET (SSE) -> HTTP {response.status_code} (a redirect)")
            await self._redirect(response, "GET (SSE)")
        self._get_sent = time.monotonic()
        async with self.client.stream("GET", self.url, headers={"Accept": "text/event-stream"}) as again:
            await self._listen(again)

    async def _listen(self, response: httpx.Response) -> None:
        """The stream opened: its endpoint event, then the check's steps with the stream read alongside."""
        wait = self.config.timeouts.legacy_sse_endpoint_event
        await self._opened(response)
        events = sse_events(response, self.config.max_body_bytes * (2 * self.config.max_pages + 2))
        try:
            async with asyncio.timeout(wait):
                endpoint = await self._endpoint_event(events)
        except TimeoutError as exc:
            raise _Outcome("timeout", f"no endpoint event within {wait:g} s", response.status_code) from exc
        self._stream_url, self.url = self.url, self._message_url(endpoint)
        reader = asyncio.create_task(self._read(events))
        try:
            await super()._check()
        finally:
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)

    async def _opened(self, response: httpx.Response) -> None:
        """The stream, once it is one: a 401/403 stops as in any check, anything but 200 ends the check with
        its status."""
        self.result.note(f"GET (SSE) -> HTTP {response.status_code} {response.headers.get('content-type', '')}")
        self._stream_status = response.status_code
        if self.result.round_trip_ms is None and response.status_code != 200:  # the GET's own answer (a 401)
            self.result.round_trip_ms = round((time.monotonic() - self._get_sent) * 1000)
        if response.is_redirect:
            await self._redirect(response, "GET (SSE)")  # a second one: not followed (it raises)
        if response.status_code in (401, 403):
            body, _ = await read_body(response, self.config.max_small_body_bytes)
            self._auth(Answer(response.status_code, response.headers, None, body))
            raise _Outcome("needs_auth", f"HTTP {response.status_code} on the SSE stream, before any tool was "
                           "listed", response.status_code)
        if response.status_code != 200:
            raise _Outcome(f"http_{response.status_code}", f"HTTP {response.status_code} on the SSE stream",
                           response.status_code)

    async def _endpoint_event(self, events: Any) -> str:
        try:
            async for event, data in events:
                if event == b"endpoint":
                    return b"\n".join(data).decode("utf-8", "replace").strip()
        except BodyError as exc:
            raise _Outcome("not_mcp", f"SSE stream: {exc.detail}") from exc
        raise _Outcome("not_mcp", "the SSE stream ended without an endpoint event")

    def _message_url(self, endpoint: str) -> str:
        """Where the messages go: the endpoint event's URL, resolved against the stream's; only on the same
        origin, so with the same scheme (a client of this transport refuses any other, and 7Maps-bot goes nowhere
        it was not listed); a plain-http stream is contacted only when an owner allows it."""
        target = urljoin(self.url, endpoint)
        if origin_of(target) != origin_of(self.url):
            raise _Outcome("not_mcp",
                           f"the endpoint event names another origin ({redact_text(endpoint)[:200]}); not followed")
        self.result.note(f"endpoint event: {redact_text(endpoint)[:200]}")
        return target

    async def _read(self, events: Any) -> None:
        """Every `message` event, matched to the request waiting for it; when the stream ends, whatever is
        still waiting is told so."""
        try:
            async for event, data in events:
                if event != b"message":
                    continue
                obj, _ = loads(b"\n".join(data))
                for request_id, waiting in list(self._pending.items()):
                    reply = reply_to(obj, request_id)
                    if reply is not None and not waiting.done():
                        reply.content_type = "text/event-stream"
                        waiting.set_result(reply)
                        break
            self._ended = "the SSE stream ended before the answer"
        except BodyError as exc:
            self._ended = f"SSE stream: {exc.detail}"
        except httpx.HTTPError as exc:
            self._ended = f"SSE stream broken ({type(exc).__name__})"
        for waiting in self._pending.values():
            if not waiting.done():
                waiting.set_exception(_Outcome("unreachable", self._ended))

    async def _post_once(self, payload: dict, step: str, headers: dict[str, str], request_id: Any,
                         cap: int | None) -> Answer:
        """POST to the endpoint event's URL; a request's answer is the stream's message carrying its id."""
        if self._ended:
            raise _Outcome("unreachable", f"{step}: {self._ended}")
        waiting: asyncio.Future | None = None
        if request_id is not None:
            waiting = self._pending[request_id] = asyncio.get_running_loop().create_future()
        request_headers = {"Content-Type": "application/json", **headers}
        self._request_sent = False
        try:
            async with self.client.stream("POST", self.url, json=payload, headers=request_headers) as response:
                self._request_sent = True  # the host took the message; its answer comes on the stream
                self.result.note(f"POST {step} -> HTTP {response.status_code}")
                if response.is_redirect:  # the server's own message URL redirecting: not followed
                    raise _Outcome("redirect", f"{step}: the message URL answers HTTP {response.status_code} with "
                                   "a redirect; not followed", response.status_code)
                body, _ = await read_body(response, self.config.max_small_body_bytes)
            if waiting is None or not 200 <= response.status_code < 300:
                return Answer(response.status_code, response.headers, None, body)
            direct = reply_to(loads(body)[0], request_id) if body.strip() else None
            return Answer(response.status_code, response.headers, direct or await waiting, b"")
        finally:
            self._pending.pop(request_id, None)
