"""The official `mcp` SDK's client as the prober benchmark's baseline: the same endpoints of the same kind of
fleet, at the same concurrency as the prober, asking what the prober asks of an MCP endpoint (initialize,
notifications/initialized, tools/list through every page), one session per endpoint.

A baseline at concurrency 1 against the prober at 64 (the "31 x" of earlier runs) measured the concurrency,
not the client; this one measures the client (docs/scaling.md, "The prober").
"""

from __future__ import annotations

import ssl
import time
from pathlib import Path
from typing import Any

import anyio
import httpcore2
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from ..probe.config import ProbeConfig

# As many pages of one list as the prober reads at most.
MAX_PAGES = ProbeConfig.max_pages


def sdk_client_factory(port: int, ca_file: Path):
    """The official SDK's HTTP client, reaching fleet names through a loopback map in its network backend;
    one TLS context for all (loading the CA once, as one process of a real user would)."""
    fleet_port = port
    context = ssl.create_default_context(cafile=str(ca_file))

    class MapBackend(httpcore2.AsyncNetworkBackend):
        def __init__(self) -> None:
            self.inner = httpcore2.AnyIOBackend()

        async def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
            return await self.inner.connect_tcp("127.0.0.1", fleet_port, timeout, local_address, socket_options)

        async def sleep(self, seconds):
            await self.inner.sleep(seconds)

    def make() -> httpx2.AsyncClient:
        client = httpx2.AsyncClient(verify=context, timeout=30)
        # The fleet's names map to loopback through the pool's network backend (httpx has no public hook).
        client._transport._pool = httpcore2.AsyncConnectionPool(  # type: ignore[attr-defined]
            ssl_context=context, network_backend=MapBackend())
        return client

    return make


async def _list_every_page(make, url: str) -> tuple[int, int]:
    """One endpoint's session: initialize (and initialized), then tools/list to the last page; (tools, pages)."""
    async with make() as http, Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
        tools, pages, cursor = 0, 0, None
        while pages < MAX_PAGES:
            result = await client.list_tools(cursor=cursor, cache_mode="refresh")
            tools, pages, cursor = tools + len(result.tools), pages + 1, result.next_cursor
            if cursor is None:
                break
        return tools, pages


async def _sdk_sessions(port: int, ca_file: Path, urls: list[str], concurrency: int) -> dict[str, Any]:
    make = sdk_client_factory(port, ca_file)
    slots = anyio.Semaphore(concurrency)
    tally: dict[str, Any] = {"answered": 0, "tools": 0, "pages": 0, "failed": {}, "most_at_once": 0}
    at_once = 0

    async def one(url: str) -> None:
        nonlocal at_once
        async with slots:
            at_once += 1
            tally["most_at_once"] = max(tally["most_at_once"], at_once)
            try:
                tools, pages = await _list_every_page(make, url)
                tally["answered"] += 1
                tally["tools"] += tools
                tally["pages"] += pages
            except Exception as exc:  # noqa: BLE001 - the baseline counts what failed, by kind
                tally["failed"][type(exc).__name__] = tally["failed"].get(type(exc).__name__, 0) + 1
            finally:
                at_once -= 1

    async with anyio.create_task_group() as group:
        for url in urls:
            group.start_soon(one, url)
    return tally


def run_sdk_sessions(port: int, ca_file: Path, urls: list[str], concurrency: int,
                     on_uvloop: bool = False) -> dict[str, Any]:
    """Every URL once through the SDK's client, `concurrency` sessions at a time, in this process: what
    answered, its tools and pages, the most sessions open at once, the wall time and this process's CPU.
    On asyncio's own loop (the SDK's default), or `on_uvloop` on the prober's (probe/loop.py)."""
    started, cpu = time.perf_counter(), time.process_time()
    tally = anyio.run(_sdk_sessions, port, ca_file, urls, concurrency, backend_options={"use_uvloop": on_uvloop})
    tally.update(wall=time.perf_counter() - started, cpu=time.process_time() - cpu, concurrency=concurrency)
    return tally
