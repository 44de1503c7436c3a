"""The gate every tool call of the map's server passes (docs/agents.md "Limits of the server"): calls run one
at a time in a worker thread (the served day is one DuckDB connection), so they hold at most one of the thread
pool's places and the site's file reads always find one; at most QUEUE_LIMIT calls wait behind the running one,
each at most WAIT_SECONDS.
Past either bound a call is answered at once that the map is busy, never left to wait without end, and a flood
of calls cannot take the site down with it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import anyio
import anyio.to_thread

# Calls waiting behind the running one. A route call over a registry-sized day (25,000 endpoints) takes
# about 0.1-0.2 s (`sevenmaps bench --only serve`), so a full queue clears in a few seconds.
QUEUE_LIMIT = 32
# The longest a call waits for its turn before it is answered busy.
WAIT_SECONDS = 10.0

T = TypeVar("T")


class MapBusy(Exception):
    """The map is answering as many calls as it can: the caller should try again shortly."""


class CallGate:
    def __init__(self, queue_limit: int = QUEUE_LIMIT, wait_seconds: float = WAIT_SECONDS) -> None:
        self.queue_limit = queue_limit
        self.wait_seconds = wait_seconds
        self._admitted = 0  # running or waiting; only touched on the event loop's thread
        self._turn: anyio.Lock | None = None

    @property
    def admitted(self) -> int:
        return self._admitted

    async def run(self, fn: Callable[[], T]) -> T:
        """`fn` run in a worker thread once its turn comes; MapBusy at once when QUEUE_LIMIT calls already
        wait, or when its turn has not come in WAIT_SECONDS."""
        if self._turn is None:  # made on the server's own event loop
            self._turn = anyio.Lock()
        if self._admitted > self.queue_limit:  # one running and queue_limit waiting
            raise MapBusy(f"busy: {self.queue_limit} calls are already waiting for the map; try again in a few "
                          "seconds")
        self._admitted += 1
        try:
            try:
                with anyio.fail_after(self.wait_seconds):
                    await self._turn.acquire()
            except TimeoutError:
                raise MapBusy(f"busy: this call waited {self.wait_seconds:g} s for its turn; try again in a few "
                              "seconds") from None
            try:
                return await anyio.to_thread.run_sync(fn)
            finally:
                self._turn.release()
        finally:
            self._admitted -= 1
