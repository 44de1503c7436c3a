"""The outside services' shared client: one request at a time to each service, spaced by `min_interval`
seconds so no service is hammered (different services may be asked side by side, each from its own thread:
lookups/daily.py), our user agent, no redirects followed, no proxy from the environment; an answer read as it
comes, at most `max_body` bytes once decoded and within `timeout` seconds as a whole (a service that sends a
byte at a time, or a small compressed answer that decodes to gigabytes, is cut off); a service that asks us to
wait (HTTP 429 or 503 with Retry-After) is not asked again before then. Every answer is parsed JSON or a short
reason, never an exception (docs/methodology.md, "Package advisories and domain age")."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from ..rules.http_values import RETRY_AFTER_MAX, retry_after_seconds

USER_AGENT = "7Maps-bot/0.2 (+https://7it.co.il/7maps/bot/)"


@dataclass(frozen=True)
class Answer:
    """An answer read whole: its status, headers and (decoded) body."""

    status: int
    headers: httpx.Headers
    body: bytes


class BoundedFetcher:
    """Requests made on an event loop of its own (a daemon thread), each answer read within its deadline as a
    whole, headers included: a blocking client bounds each read only, so a server sending its headers a byte at a
    time would hold a request for hours. Callable from any thread; one connection pool for all of them."""

    def __init__(self, timeout: float, headers: dict[str, str]) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="lookups-io", daemon=True)
        self._thread.start()
        # A client dropped without close() stops its loop (and thread) when collected.
        self._stop = weakref.finalize(self, self._loop.call_soon_threadsafe, self._loop.stop)
        self._closing = threading.Lock()  # close() and the submission of a fetch, one at a time
        self._closed = False
        self._client = self._run(self._open(timeout, headers))

    @staticmethod
    async def _open(timeout: float, headers: dict[str, str]) -> httpx.AsyncClient:
        return httpx.AsyncClient(timeout=timeout, trust_env=False, follow_redirects=False, headers=headers)

    def _run(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    def close(self) -> None:
        """Ends whatever is being fetched (its caller is answered "client closed"), then the loop and its thread."""
        with self._closing:
            if self._closed:
                return
            self._closed = True
        if self._loop.is_running():
            self._run(self._shut())
            self._stop()
            self._thread.join()
        self._loop.close()

    async def _shut(self) -> None:
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)
        await self._client.aclose()

    def fetch(self, method: str, url: str, max_body: int, timeout: float, **kwargs: Any) -> Answer | str:
        """The answer to one request: at most `max_body` bytes once decoded, the whole answer within `timeout`
        seconds; else a one-line reason. Nothing a URL or a service holds can raise here."""
        with self._closing:
            if self._closed:
                return "client closed"
            future = asyncio.run_coroutine_threadsafe(self._fetch(method, url, max_body, timeout, **kwargs),
                                                      self._loop)
        try:
            return future.result()
        except concurrent.futures.CancelledError:  # closed while it was fetched
            return "client closed"

    async def _fetch(self, method: str, url: str, max_body: int, timeout: float, **kwargs: Any) -> Answer | str:
        try:
            async with asyncio.timeout(timeout), self._client.stream(method, url, **kwargs) as response:
                body = bytearray()
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > max_body:
                        return "answer too large"
                return Answer(response.status_code, response.headers, bytes(body))
        except TimeoutError:
            return f"no whole answer within {timeout:g} s"
        except httpx.HTTPError as exc:
            return f"no answer ({type(exc).__name__})"
        except (httpx.InvalidURL, ValueError, UnicodeError) as exc:  # a URL no request can be made to
            return f"not a URL to ask ({type(exc).__name__})"


def parse_json(body: bytes) -> tuple[Any, str | None]:
    """The JSON document (an object or a list) of a body, or None and the reason there is none: every answer
    these services give is a document, and a bare string must never be read as a reason of ours."""
    try:
        value = json.loads(body)
    except RecursionError:
        return None, "JSON nested too deeply to read"
    except ValueError:
        return None, "not JSON"
    if not isinstance(value, (dict, list)):
        return None, f"JSON {type(value).__name__}, not a document"
    return value, None


class SpacedJsonClient:
    def __init__(self, min_interval: float, timeout: float, max_body: int, accept: str = "application/json") -> None:
        self.min_interval, self.max_body, self.timeout = min_interval, max_body, timeout
        self._last: dict[str, float] = {}
        # A service's waits asked by Retry-After are kept up to `wait_budget` seconds in all (RETRY_AFTER_MAX), per
        # run; past that, it is not asked again before the time it asked for (`_not_before`), and each lookup it
        # would answer says so.
        self._waited: dict[str, float] = {}
        self.wait_budget = RETRY_AFTER_MAX
        self._not_before: dict[str, float] = {}
        self._turns: dict[str, threading.Lock] = {}
        self._turns_guard = threading.Lock()
        self._fetcher = BoundedFetcher(timeout, {"user-agent": USER_AGENT, "accept": accept})

    def close(self) -> None:
        self._fetcher.close()

    def _turn(self, service: str) -> threading.Lock:
        with self._turns_guard:
            return self._turns.setdefault(service, threading.Lock())

    def request_json(self, method: str, url: str, service: str | None = None, **kwargs: Any) -> Any:
        """The JSON answer, or a string saying why there is none. `service` names whose turn it is (one request
        at a time each, `min_interval` apart, longer where the service asked us to wait); by default the URL's
        origin."""
        try:
            parts = urlsplit(url)
            key = service or f"{parts.scheme}://{parts.netloc}"
        except ValueError:
            return "not a URL to ask (ValueError)"
        with self._turn(key):
            not_before = self._not_before.get(key, 0.0)
            if time.monotonic() < not_before:
                return f"rate limited: the service asked us to wait {not_before - time.monotonic():.0f} s more"
            wait = self._last.get(key, 0.0) + self.min_interval - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            answer = self._fetcher.fetch(method, url, self.max_body, self.timeout, **kwargs)
            self._last[key] = time.monotonic()
            if isinstance(answer, Answer) and answer.status in (429, 503):
                self._wait_as_asked(key, retry_after_seconds(answer.headers.get("retry-after")))
        if isinstance(answer, str):
            return answer
        if answer.status == 404:
            return "not found (HTTP 404)"
        if answer.status == 429:
            return "rate limited (HTTP 429)"
        if answer.status != 200:
            return f"HTTP {answer.status}"
        parsed, why = parse_json(answer.body)
        return why if why is not None else parsed

    def _wait_as_asked(self, key: str, seconds: float | None) -> None:
        if seconds is None:
            return
        waited = self._waited.get(key, 0.0)
        if waited + seconds <= self.wait_budget:  # the service's next turn comes no sooner than it asked
            self._waited[key] = waited + seconds
            self._last[key] = time.monotonic() + seconds - self.min_interval
        else:
            self._not_before[key] = time.monotonic() + seconds
