"""One check of one endpoint, the 7Maps way, with every answer classified into an outcome.

POST initialize (protocol 2025-06-18), POST notifications/initialized, POST tools/list following
nextCursor for at most `max_pages` pages, then the session is ended. Never a tool call. Servers of the
2026-07-28 revision (no initialize) are recognised by their modern JSON-RPC error and read through
`server/discover` and a modern tools/list. Legacy SSE-only endpoints are only opened, and wait for the
`endpoint` event. Outcomes: ok, needs_auth, http_402, timeout, unreachable, redirect, http_NNN,
rpc_error, not_mcp, no_tool_list, skipped, and prober_error when our own code failed (a day code n,
never d). Every field read from a server is type-checked before use; nothing a server sends raises.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
import traceback
from collections.abc import Callable
from typing import Any

import httpx

from ..registry.listing import (
    SkipReason,
    carries_credentials,
    redact_auth_params,
    redact_json_text,
    redact_text,
    redact_userinfo,
    redact_value,
    redacted_url,
)
from ..rules.discovery import resource_metadata_of, without_userinfo
from ..rules.outcomes import NOT_CHECKED, PROBER_RESOURCES, not_checked_detail
from .check_result import CheckResult
from .claims import add_claims, error_claims, skills_declared
from .config import BAD_CALL_USER_AGENT, MODERN_PROTOCOL_VERSION, PROTOCOL_VERSION, ProbeConfig
from .fragile_releases import fragile
from .legibility import error_legibility
from .messages import CLIENT_INFO, error_text, modern_meta, rpc, status_text
from .ours import PendingLookup, silent_resolver, watch_lookups
from .outcomes import Answer, _Outcome, modern_error_code, transport_failure
from .redirects import invalid_location, redirect_target
from .values import header_token, scalar_text
from .wire import Reply, loads, read_body, read_endpoint_event, read_reply


class EndpointCheck:
    """A single check; `run()` never raises, whatever the server does (and whatever our code does).

    A daily check is bounded by the methodology's per-step timeouts only (initialize 8 s, initialized 5 s,
    tools/list 8 s a page); `overall` (the five-minute check's 30 s) caps the whole check when given."""

    def __init__(self, client: httpx.AsyncClient, config: ProbeConfig, url: str, started_at: dt.datetime,
                 remote_type: str = "streamable-http", overall: float | None = None,
                 progress: Callable[[str], None] | None = None, readiness: bool = False,
                 bad_call: bool = False, daily_release: str | None = None) -> None:
        self.client, self.config, self.url, self.remote_type = client, config, url, remote_type
        self.overall = overall
        # The readiness probe (docs/methodology.md, "Readiness"): server/discover first, initialize only
        # when discovery answers nothing, and tools/list twice to see whether the order is deterministic.
        self.readiness = readiness
        self.daily_release = daily_release  # the day's daily check's serverInfo.version (probe/fragile_releases.py)
        # Step 5 (one deliberately bad call to a read-only tool) is a tool call, which the map never makes:
        # only `sevenmaps readiness --bad-call` sets this; the daily runs have no way to.
        if bad_call and not readiness:
            raise ValueError("a bad call is a readiness step only")
        self.bad_call = bad_call
        self.progress = progress  # `sevenmaps probe` shows each step as it goes; the scan passes None
        self.result = CheckResult(url=redacted_url(url), started_at=started_at)
        self.redirects_followed = 0
        self._answered_ms: int | None = None  # the round trip of the latest request answered (its own, retry included)
        self._request_sent = False  # whether the latest request's headers went out (httpcore's trace)
        self._t0 = time.monotonic()
        self._lookups: list[PendingLookup] = []  # its lookups left unanswered (probe/ours.py), from `run`

    async def run(self) -> CheckResult:
        t0 = self._t0 = time.monotonic()
        self._lookups = watch_lookups()
        try:
            if carries_credentials(self.url):
                raise _Outcome("skipped",
                               f"{SkipReason.CREDENTIALS}: never contacted (7Maps-bot never sends credentials)")
            async with asyncio.timeout(self.overall):
                if self.remote_type == "sse":
                    await self._legacy_sse()
                else:
                    await self._check()
        except _Outcome as done:
            self._finish(done.outcome, done.detail, done.status)
        except TimeoutError:
            self._finish("timeout", f"the whole check exceeded {self.overall:g} s" if self.overall is not None
                         else "the check timed out")
        except Exception as exc:  # noqa: BLE001 - our own fault: classified, kept, and a day code n
            frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
            where = f" at {frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}" if frame else ""
            self._finish("prober_error", f"{type(exc).__name__}: {str(exc)[:300]}{where}")
        if self.result.handshake_ms is None:
            self.result.handshake_ms = round((time.monotonic() - t0) * 1000)
        if self.result.session_id and not fragile(self.result.server_info_version):
            await self._end_session()
        return self.result

    def _finish(self, outcome: str, detail: str, status: int | None = None) -> None:
        if self.result.resource_metadata_refused:  # the 401's own words on why its metadata was not asked
            detail = f"{detail}; {self.result.resource_metadata_refused}"
        self.result.outcome, self.result.outcome_detail = outcome, detail
        if outcome in ("skipped", "not_checked") and not self.result.skip_reason:
            self.result.skip_reason = detail.split(":", 1)[0]
        if status is not None:
            self.result.http_status = status

    # ------------------------------------------------------------------ requests
    async def _post(self, payload: dict, timeout: float, step: str, headers: dict[str, str] | None = None,
                    request_id: Any = None, cap: int | None = None) -> Answer:
        """POST one JSON-RPC message; follow one same-registrable-domain redirect; retry once after a
        broken connection. A 2xx answer to a request comes back parsed; any other body, raw and capped."""
        attempt = 0
        if self.progress:
            self.progress(f"{step}: waiting up to {timeout:g} s ...")
        started = time.monotonic()
        try:
            async with asyncio.timeout(timeout):  # the step's budget covers its one retry and redirect
                while True:
                    try:
                        answer = await self._post_once(payload, step, headers or {}, request_id, cap)
                        self._answered_ms = round((time.monotonic() - started) * 1000)
                        if self.progress:
                            self.progress(f"{step}: HTTP {answer.status_code} in "
                                          f"{round((time.monotonic() - started) * 1000)} ms")
                        return answer
                    except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
                        if invalid_location(exc):  # httpx parses Location itself, even when not following
                            self.result.redirect_location = None
                            raise _Outcome("redirect", f"{step}: a redirect to an invalid Location ({exc})") from exc
                        if attempt == 0:
                            attempt += 1
                            self.result.note(f"{step}: connection broken ({type(exc).__name__}), retrying once")
                            continue
                        raise _Outcome("unreachable", f"{step}: connection broken twice ({exc})") from exc
        except TimeoutError as exc:
            unanswered = [lookup for lookup in self._lookups if lookup.asked >= started]
            ours = silent_resolver(unanswered[0]) if unanswered else None
            if ours is not None:  # the whole step went on looking its name up, and our resolver answered no one
                raise _Outcome(NOT_CHECKED, not_checked_detail(PROBER_RESOURCES, f"{step}: {ours}")) from exc
            raise _Outcome("timeout", f"no complete answer to {step} within {timeout:g} s") from exc
        except httpx.HTTPError as exc:
            raise transport_failure(exc, step) from exc

    async def _post_once(self, payload: dict, step: str, headers: dict[str, str], request_id: Any,
                         cap: int | None) -> Answer:
        request_headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                           **headers}
        self._request_sent = False  # per request: a redirect's next hop is a request of its own
        # Readiness asks whether a silent request was taken by the host (`_modern`); the daily check never does.
        traced = {"trace": self._trace} if self.readiness else {}
        async with self.client.stream("POST", self.url, json=payload, headers=request_headers,
                                      extensions=traced) as response:
            self.result.note(f"POST {step} -> HTTP {response.status_code} "
                             f"{response.headers.get('content-type', '')}".rstrip())
            if response.is_redirect:
                await self._redirect(response, step)
                return await self._post_once(payload, step, headers, request_id, cap)
            if 200 <= response.status_code < 300 and request_id is not None:
                reply = await read_reply(response, request_id, cap or self.config.max_body_bytes)
                return Answer(response.status_code, response.headers, reply, b"")
            body, _ = await read_body(response, self.config.max_small_body_bytes)
            return Answer(response.status_code, response.headers, None, body)

    async def _trace(self, event: str, info: dict) -> None:
        # httpcore's account of the request: whether its headers went out (the host took the connection).
        if event.endswith("send_request_headers.started"):
            self._request_sent = True

    async def _redirect(self, response: httpx.Response, step: str) -> None:
        location = response.headers.get("location")
        if not location:
            raise _Outcome("redirect", f"{step}: HTTP {response.status_code} without a Location",
                           response.status_code)
        target, why = redirect_target(self.url, location)
        self.result.redirect_location = redact_value(target or location)[:2000]  # a URL, read as one
        if why is not None or target is None:
            raise _Outcome("redirect", f"{step}: HTTP {response.status_code} redirects to {why or location}; "
                           "not followed", response.status_code)
        if self.redirects_followed >= 1:
            raise _Outcome("redirect", f"{step}: a second redirect ({redact_text(target)}); only one is followed",
                           response.status_code)
        self.redirects_followed += 1
        self.result.note(f"following redirect within the registrable domain to {redact_text(target)}")
        self.url = target

    # ------------------------------------------------------------------ the check
    async def _check(self) -> None:
        t = self.config.timeouts
        started = time.monotonic()
        if self.readiness and fragile(self.daily_release):
            self.result.discover_supported = False
            self.result.note(f"server/discover not asked: the daily check read release {self.daily_release!r}, which "
                             "a method it does not know takes down (docs/methodology.md, \"Readiness\")")
        elif self.readiness and await self._modern(started):
            return
        init = rpc("initialize", 1, {"protocolVersion": PROTOCOL_VERSION, "capabilities": {},
                                      "clientInfo": CLIENT_INFO})
        response = await self._post(init, t.initialize, "initialize", request_id=1,
                                    cap=self.config.max_handshake_bytes)
        initialize_ms = self._answered_ms
        reply = response.reply
        self.result.http_status = status = response.status_code
        self._claims_of_error(response, reply)
        self._asks_for_sign_in_or_payment(response, initialize_ms)
        modern_error = modern_error_code(response, reply)
        if modern_error is not None and not self.readiness:
            self.result.note(f"initialize refused with JSON-RPC {modern_error}: trying server/discover (2026-07-28)")
            if await self._modern(started):
                return
        if not 200 <= status < 300:
            raise _Outcome(f"http_{status}", f"{status_text(status, response.body)} on initialize", status)
        if reply is None:
            raise _Outcome("not_mcp", "initialize: no JSON-RPC answer", status)
        if reply.kind == "error":
            raise _Outcome("rpc_error", f"initialize answered JSON-RPC error {error_text(reply.error)}", status)
        if reply.kind != "result" or not isinstance(reply.result, dict):
            raise _Outcome("not_mcp", f"initialize: {reply.detail or 'no JSON-RPC result'}", status)
        result = reply.result
        version = header_token(result.get("protocolVersion"))
        if version is None or len(version) > 40 or not isinstance(result.get("serverInfo"), dict):
            raise _Outcome("not_mcp", "initialize result lacks a valid protocolVersion or serverInfo", status)
        self.result.protocol_version, self.result.handshake_via = version, "initialize"  # the handshake worked
        self.result.round_trip_ms = initialize_ms
        self._server_info(result["serverInfo"], result.get("capabilities"))
        session = response.headers.get("mcp-session-id")
        self.result.session_id = header_token(session)
        if session is not None and self.result.session_id is None:
            self.result.note("Mcp-Session-Id is not visible ASCII (or too long): not sent back")
        headers = {"MCP-Protocol-Version": self.result.protocol_version}
        if self.result.session_id:
            headers["Mcp-Session-Id"] = self.result.session_id
        ack = await self._post(rpc("notifications/initialized", None), t.notifications_initialized,
                                  "notifications/initialized", headers=headers)
        if ack.status_code >= 400:
            self.result.note(f"notifications/initialized refused with {status_text(ack.status_code, ack.body)}; "
                             "listing tools anyway")
        await self._list_tools(headers, modern=False)
        await self._list_again(headers, modern=False)
        await self._call_badly(headers, modern=False)
        self.result.handshake_ms = round((time.monotonic() - started) * 1000)
        self.result.outcome = "ok"
        self.result.outcome_detail = (f"initialize and tools/list answered: {len(self.result.tools or [])} tools"
                                      f" in {self.result.pages_read} page(s){self.result.unfinished()}")

    def _asks_for_sign_in_or_payment(self, response: Answer, round_trip_ms: int | None) -> None:
        """Ends the check when initialize was answered with 401 or 403 (a 401's round trip is the readiness
        probe's), or 402."""
        status = response.status_code
        if status == 401:
            self.result.round_trip_ms = round_trip_ms
        if status in (401, 403):
            self._auth(response)
            raise _Outcome("needs_auth", f"{status_text(status, response.body)} on initialize, before any tool was "
                           "listed", status)
        if status == 402:
            self.result.payment_json = redact_json_text(response.body.decode("utf-8", "replace"))[:65536] or None
            raise _Outcome("http_402", "HTTP 402 on initialize (asks for payment)", status)

    async def _modern(self, started: float) -> bool:
        t = self.config.timeouts
        headers = {"MCP-Protocol-Version": MODERN_PROTOCOL_VERSION, "Mcp-Method": "server/discover"}
        self._request_sent = False
        try:
            response = await self._post(rpc("server/discover", "discover-1", {"_meta": modern_meta()}),
                                        t.initialize, "server/discover", headers=headers,
                                        request_id="discover-1", cap=self.config.max_handshake_bytes)
        except _Outcome as silent:
            # Only a request the host took and left unanswered: a connection never made (or never secured) is no
            # silence of the server's.
            if not self.readiness or silent.outcome != "timeout" or not self._request_sent:
                raise
            # Discovery that answers nothing at all is still "nothing": initialize is asked next (docs/methodology.md,
            # "Readiness"); some servers never answer a method they do not know.
            self.result.discover_supported = False
            self.result.note(f"{silent.detail}: trying initialize")
            return False
        discover_ms = self._answered_ms
        reply = response.reply
        if reply is not None and reply.kind == "result" and isinstance(reply.result, dict):
            self.result.claimed_versions = add_claims(self.result.claimed_versions,
                                                      reply.result.get("supportedVersions"))
        self._claims_of_error(response, reply)
        if self.readiness and response.status_code == 401:  # a server that asks for a token: stop here
            self.result.http_status, self.result.round_trip_ms = response.status_code, discover_ms
            self._auth(response)
            raise _Outcome("needs_auth", "HTTP 401 on server/discover, before any tool was listed", 401)
        if reply is None or reply.kind != "result" or not isinstance(reply.result, dict):
            self.result.discover_supported = False
            self.result.note("server/discover did not answer with a result")
            return False
        result = reply.result
        versions = result.get("supportedVersions")
        if not isinstance(versions, list) or MODERN_PROTOCOL_VERSION not in versions:
            self.result.discover_supported = False
            return False
        self.result.discover_supported = True
        self.result.handshake_via, self.result.round_trip_ms = "discover", discover_ms
        self.result.protocol_version = MODERN_PROTOCOL_VERSION
        self._capabilities(result.get("capabilities"))
        meta = result.get("_meta")
        info = meta.get("io.modelcontextprotocol/serverInfo") if isinstance(meta, dict) else None
        if isinstance(info, dict):
            self._server_info(info)
        self.result.http_status = response.status_code
        modern_headers = {"MCP-Protocol-Version": MODERN_PROTOCOL_VERSION, "Mcp-Method": "tools/list"}
        await self._list_tools(modern_headers, modern=True)
        await self._list_again(modern_headers, modern=True)
        await self._call_badly({**modern_headers, "Mcp-Method": "tools/call"}, modern=True)
        self.result.handshake_ms = round((time.monotonic() - started) * 1000)
        self.result.outcome = "ok"
        self.result.outcome_detail = (f"2026-07-28 server: server/discover and tools/list answered: "
                                      f"{len(self.result.tools or [])} tools in {self.result.pages_read} page(s)"
                                      f"{self.result.unfinished()}")
        return True

    async def _list_again(self, headers: dict[str, str], modern: bool) -> None:
        """The readiness probe's second tools/list: only the names in order are kept; its failure is noted
        and leaves the order unseen, never changes the check's outcome."""
        if not self.readiness:
            return
        first = (self.result.tools, self.result.pages_read, self.result.tool_list_complete, self.result.ttl_ms,
                 self.result.cache_scope, self.result.list_cut)
        try:
            await self._list_tools(headers, modern, id_base=2 + self.config.max_pages)
            again = self.result.tools or []
            self.result.second_tool_names = [str(t.get("name")) if isinstance(t, dict) else "" for t in again]
        except _Outcome as failed:
            self.result.note(f"second tools/list: {failed.detail}; the order is unseen")
            self._later_redirect(failed)
        finally:
            (self.result.tools, self.result.pages_read, self.result.tool_list_complete, self.result.ttl_ms,
             self.result.cache_scope, self.result.list_cut) = first

    def _later_redirect(self, failed: _Outcome) -> None:
        """A redirect not followed on a request after the first tools/list leaves the outcome as it was, and
        is kept: "https, with no redirect chain" fails on any redirect, followed or not (docs/methodology.md,
        "Readiness")."""
        if failed.outcome == "redirect" and self.result.later_redirect is None:
            self.result.later_redirect = failed.detail[:300]

    async def _call_badly(self, headers: dict[str, str], modern: bool) -> None:
        """Step 5, when asked: call the first tool that declares readOnlyHint with arguments no schema asks
        for (and none it requires), and judge the error. Its failure never changes the check's outcome."""
        if not self.bad_call:
            return
        tool = next((t for t in self.result.tools or [] if isinstance(t, dict) and isinstance(t.get("name"), str)
                     and isinstance(t.get("annotations"), dict) and t["annotations"].get("readOnlyHint") is True),
                    None)
        if tool is None:
            self.result.bad_call_evidence = "no tool declares readOnlyHint: nothing to call"
            return
        self.result.bad_call_tool = tool["name"][:200]
        params: dict[str, Any] = {"name": tool["name"], "arguments": {"__7maps_bad_argument__": [None]}}
        if modern:  # the 2026-07-28 revision names the tool in a header too (when a header can carry it)
            params["_meta"] = modern_meta()
            if tool["name"].isascii() and tool["name"].isprintable():
                headers = {**headers, "Mcp-Name": tool["name"]}
        headers = {**headers, "User-Agent": BAD_CALL_USER_AGENT}  # never as 7Maps-bot
        request_id = "bad-call-1"
        try:
            answer = await self._post(rpc("tools/call", request_id, params), self.config.timeouts.tools_list_per_page,
                                      "tools/call (bad arguments)", headers=headers, request_id=request_id)
        except _Outcome as failed:
            self.result.bad_call_legible, self.result.bad_call_evidence = False, failed.detail[:300]
            self._later_redirect(failed)
            return
        except Exception as exc:  # noqa: BLE001 - our own fault in an extra step never changes the check
            self.result.bad_call_evidence = f"not judged (our fault: {type(exc).__name__})"
            return
        reply = answer.reply
        kind, error, result = (reply.kind, reply.error, reply.result) if reply else (None, None, None)
        if reply is None and answer.body:  # a 4xx/5xx may still carry the JSON-RPC error that explains it
            body, _ = loads(answer.body)
            if isinstance(body, dict) and isinstance(body.get("error"), dict):
                kind, error = "error", body["error"]
        self.result.bad_call_legible, self.result.bad_call_evidence = error_legibility(
            answer.status_code, kind, error, result)

    async def _list_tools(self, headers: dict[str, str], modern: bool, id_base: int = 2) -> None:
        t = self.config.timeouts
        tools: list[Any] = []
        cursor: str | None = None
        seen: set[str] = set()
        complete = False
        for page in range(self.config.max_pages):
            params: dict[str, Any] = {"cursor": cursor} if cursor else {}
            if modern:
                params["_meta"] = modern_meta()
            request_id = id_base + page
            response = await self._post(rpc("tools/list", request_id, params or None),
                                        t.tools_list_per_page, f"tools/list page {page + 1}",
                                        headers=headers, request_id=request_id)
            reply = response.reply
            status = response.status_code
            if status in (401, 403) and not tools:
                self._auth(response)
                raise _Outcome("needs_auth", f"{status_text(status, response.body)} on tools/list, before any tool "
                               "was listed", status)
            problem = None
            if not 200 <= status < 300:
                problem = status_text(status, response.body)
            elif reply is None or reply.kind != "result":
                problem = (f"JSON-RPC error {error_text(reply.error)}"
                           if reply is not None and reply.kind == "error" else (reply.detail if reply else "no body"))
            elif not isinstance(reply.result, dict) or not isinstance(reply.result.get("tools"), list):
                problem = "result has no tools array"
            if problem or reply is None:
                problem = problem or "no body"
                if page == 0:
                    raise _Outcome("no_tool_list", f"tools/list: {problem}", status)
                self.result.cut(f"page {page + 1} answered {problem}", f"tools/list page {page + 1}: {problem}; "
                                "keeping the pages read")
                break
            result = reply.result
            tools += result["tools"]
            self.result.pages_read = page + 1
            if self.readiness or (modern and page == 0):
                self.result.read_cache_hints(result, page)
            nxt = result.get("nextCursor")
            if not nxt:
                complete = True
                break
            if not isinstance(nxt, str) or nxt in seen:
                odd = "repeats (a cursor cycle)" if isinstance(nxt, str) else "is not a string"
                self.result.cut(f"its cursor {odd}", f"tools/list cursor {str(nxt)[:40]!r} {odd}: stopping")
                break
            seen.add(nxt)
            cursor = nxt
        else:
            self.result.cut(f"the {self.config.max_pages}-page limit",
                            f"stopped after {self.config.max_pages} pages; the list may be longer")
        self.result.tools = tools
        self.result.tool_list_complete = complete

    async def _end_session(self) -> None:
        headers = {"Mcp-Session-Id": self.result.session_id or ""}
        if self.result.protocol_version:
            headers["MCP-Protocol-Version"] = self.result.protocol_version
        try:
            async with asyncio.timeout(self.config.timeouts.session_end):
                await self.client.delete(self.url, headers=headers)
        except Exception:  # noqa: BLE001 - ending the session is a courtesy; its failure changes nothing
            pass

    # ------------------------------------------------------------------ legacy SSE
    async def _legacy_sse(self) -> None:
        """Open a legacy HTTP+SSE endpoint and wait for its `endpoint` event; SSE-only remotes are skipped
        from the map, so this records what was seen without a handshake."""
        self.result.skip_reason = SkipReason.SSE_ONLY.value
        wait = self.config.timeouts.legacy_sse_endpoint_event
        t0 = time.monotonic()
        try:
            async with asyncio.timeout(wait):
                async with self.client.stream("GET", self.url, headers={"Accept": "text/event-stream"}) as response:
                    self.result.http_status = response.status_code
                    if response.status_code != 200:
                        raise _Outcome("skipped", f"legacy SSE endpoint answered HTTP {response.status_code}")
                    endpoint = await read_endpoint_event(response, self.config.max_small_body_bytes)
        except TimeoutError as exc:
            raise _Outcome("skipped", f"legacy SSE endpoint sent no endpoint event within {wait:g} s") from exc
        except httpx.HTTPError as exc:
            raise _Outcome("skipped", f"legacy SSE endpoint unreachable: {type(exc).__name__}") from exc
        ms = round((time.monotonic() - t0) * 1000)
        if endpoint is None:
            raise _Outcome("skipped", "legacy SSE stream ended without an endpoint event")
        raise _Outcome("skipped", f"legacy SSE endpoint event after {ms} ms: {redact_text(endpoint)[:200]}")

    # ------------------------------------------------------------------ helpers
    def _auth(self, response: Answer) -> None:
        header = response.headers.get("www-authenticate")
        # Stored as every server text is, a credential in it REDACTED (docs/methodology.md, "Readiness"); the
        # metadata URL is asked as the server gave it, but without userinfo.
        self.result.www_authenticate = redact_text(redact_auth_params(header))[:2000] if header else None
        url, refused = resource_metadata_of(redact_userinfo(header) if header else None)
        self.result.resource_metadata_target = without_userinfo(url) if url else None
        self.result.resource_metadata_url = redacted_url(url)[:2000] if url else None
        self.result.resource_metadata_refused = refused = redact_text(refused) if refused else None
        if refused:
            self.result.note(refused)

    def _claims_of_error(self, response: Answer, reply: Reply | None) -> None:
        self.result.claimed_versions = add_claims(self.result.claimed_versions, error_claims(response.body, reply))

    def _capabilities(self, capabilities: Any) -> None:
        declared = skills_declared(capabilities)
        if declared is not None:
            self.result.skills_extension, self.result.skills_count = declared

    def _server_info(self, info: dict, capabilities: Any = None) -> None:
        """What the server says of itself: its name and version, and (given the handshake's capabilities)
        whether it declares the skills extension."""
        self.result.server_info_name = scalar_text(info.get("name"), 200)
        self.result.server_info_version = scalar_text(info.get("version"), 100)
        self._capabilities(capabilities)
