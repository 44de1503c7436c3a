"""The outside services' shared client: one request at a time to each service, spaced by `min_interval`
seconds so no service is hammered (different services may be asked side by side, each from its own thread:
lookups/daily.py), our user agent, no redirects followed, no proxy from the environment, a body cap; every
answer is parsed JSON or a short reason, never an exception."""

from __future__ import annotations

import threading
import time
from typing import Any
from urllib.parse import urlsplit

import httpx

USER_AGENT = "7Maps-bot/0.2 (+https://7it.co.il/7maps/bot/)"


class SpacedJsonClient:
    def __init__(self, min_interval: float, timeout: float, max_body: int, accept: str = "application/json") -> None:
        self.min_interval, self.max_body = min_interval, max_body
        self._last: dict[str, float] = {}
        self._turns: dict[str, threading.Lock] = {}
        self._turns_guard = threading.Lock()
        self._client = httpx.Client(timeout=timeout, trust_env=False, follow_redirects=False,
                                    headers={"user-agent": USER_AGENT, "accept": accept})

    def close(self) -> None:
        self._client.close()

    def _turn(self, service: str) -> threading.Lock:
        with self._turns_guard:
            return self._turns.setdefault(service, threading.Lock())

    def request_json(self, method: str, url: str, service: str | None = None, **kwargs: Any) -> Any:
        """The JSON answer, or a string saying why there is none. `service` names whose turn it is (one request
        at a time each, `min_interval` apart); by default the URL's origin."""
        parts = urlsplit(url)
        key = service or f"{parts.scheme}://{parts.netloc}"
        with self._turn(key):
            wait = self._last.get(key, 0.0) + self.min_interval - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            self._last[key] = time.monotonic()
            try:
                response = self._client.request(method, url, **kwargs)
            except httpx.HTTPError as exc:
                return f"no answer ({type(exc).__name__})"
        if response.status_code == 404:
            return "not found (HTTP 404)"
        if response.status_code == 429:
            return "rate limited (HTTP 429)"
        if response.status_code != 200:
            return f"HTTP {response.status_code}"
        if len(response.content) > self.max_body:
            return "answer too large"
        try:
            return response.json()
        except ValueError:
            return "not JSON"
