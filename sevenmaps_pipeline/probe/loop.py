"""The prober's event loop: uvloop's (libuv), for every run of the prober alike.

The prober is CPU-bound at registry scale, and asyncio's own loop, its callbacks and its TLS transport are
about a quarter of its CPU a request; uvloop runs the same asyncio programs with that part in C, for about
a sixth less CPU a request in the same scans (docs/scaling.md, "uvloop, and a send of the client's own"). It comes
with uvicorn's standard set, which Dagster's webserver already installs. Every prober entry point (the day's
scan and its slices, the hourly checks, readiness, a one-off check, an owner's proof) runs on it, so a check
behaves the same whichever way it was started. Names are resolved by probe/netguard.py through
`socket.getaddrinfo` itself, never by the loop's resolver, so where a connection may go is decided the same
way on either loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

import uvloop

T = TypeVar("T")


def run_prober(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)` on uvloop's event loop."""
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(main)
