"""The outside services' shared client: one request at a time, spaced by `min_interval` seconds so no
service is hammered, our user agent, no redirects followed, no proxy from the environment, a body cap;
every answer is parsed JSON or a short reason, never an exception."""

from __future__ import annotations

import time
from typing import Any

import httpx

USER_AGENT = "7Maps-bot/0.2 (+https://7it.co.il/7maps/bot/)"


class SpacedJsonClient:
    def __init__(self, min_interval: float, timeout: float, max_body: int, accept: str = "application/json") -> None:
        self.min_interval, self.max_body = min_interval, max_body
        self._last = 0.0
        self._client = httpx.Client(timeout=timeout, trust_env=False, follow_redirects=False,
                                    headers={"user-agent": USER_AGENT, "accept": accept})

    def close(self) -> None:
        self._client.close()

    def request_json(self, method: str, url: str, **kwargs: Any) -> Any:
        """The JSON answer, or a string saying why there is none."""
        wait = self._last + self.min_interval - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        self._last = time.monotonic()
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
