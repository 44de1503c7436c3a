"""`sevenmaps bench --only serve`: `sevenmaps serve` under a flood of concurrent `route` calls, and the site
beside it (docs/agents.md "Limits of the server").

The lake is registry-sized (25,000 synthetic endpoints, a few days built, signed and with their site), so a
route call costs what it costs on the real registry. `sevenmaps serve` runs as its own process, as an operator
runs it. A watcher in a process of its own fetches site pages one after another, first on a quiet server,
then while `calls` route calls arrive at once, each on its own connection; it reports the pages' latencies
(p50, p95, max) quiet and under the flood, and how the calls ended: answered, refused as busy (the queue's
limit), or anything else (which would be a fault). Nothing asserts a time: the figures are printed.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
import multiprocessing
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from ..integrity.roots import signed_days
from ..lake.paths import LakePaths
from ..publishing.mapday import MapDay
from ..publishing.site import build_site
from .bench import BENCH_DIR, _say, synthetic_lake
from .bench_export import built_and_signed
from .bench_history import record

TASKS = ("search the web for recent news", "send an email to a colleague", "read a file from my drive",
         "create a calendar event tomorrow", "get the weather forecast for Paris", "delete an old record",
         "translate a paragraph into German", "look up a stock price", "open a pull request on github",
         "query a postgres database", "list my notes", "book a meeting room", "summarise a web page",
         "find a restaurant nearby", "upload an image", "check the status of an order")
HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}


def serve_bench_lake(endpoints: int, days: int, seed: int) -> LakePaths:
    """A registry-sized lake with `days` built and signed days and the newest one's site (made once, reused)."""
    lake = LakePaths.at(BENCH_DIR / f"work-serve-{endpoints}x{days}")
    if (lake.root / "site" / "current").exists() and len(signed_days(lake)) >= days:
        _say(f"reusing {lake.root}")
        return lake
    source, meta = synthetic_lake(f"raw-{endpoints}x{days}-seed{seed}", endpoints, days, seed)
    end = dt.date.fromisoformat(meta["end"])
    lake = built_and_signed(source, lake.root, days, end, BENCH_DIR / "bench-signing-key.pem")
    build_site(lake, end)
    return lake


def _endpoints(lake: LakePaths) -> int:
    with MapDay.open(lake) as mapday:
        return int(mapday.rows("SELECT count(*) AS n FROM daily_status")[0]["n"])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _percentiles(seconds: list[float]) -> dict[str, float]:
    if not seconds:
        return {"n": 0}
    ordered = sorted(seconds)
    return {"n": len(ordered), "p50": statistics.median(ordered), "p95": ordered[int(0.95 * (len(ordered) - 1))],
            "max": ordered[-1]}


def _watch_pages(url: str, pages: list[str], phase: Any, out: Any, every: float = 0.05) -> None:
    """In a process of its own: start a page fetch every `every` seconds, each on a connection of its own (as
    many people would), tagging its latency with the phase it started in ('quiet', 'flood'), until the phase
    says 'stop'. Fetches start on schedule whatever the earlier ones do, so a stuck page cannot hide others."""
    asyncio.run(_watch(url, pages, phase, out, every))


async def _watch(url: str, pages: list[str], phase: Any, out: Any, every: float) -> None:
    latencies: dict[str, list[float]] = {"quiet": [], "flood": []}
    failures: list[str] = []
    rng = random.Random(7)
    limits = httpx.Limits(max_connections=1000, max_keepalive_connections=0)
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as client:
        phase.value = b"quiet"

        async def fetch(page: str, current: str) -> None:
            started = time.perf_counter()
            try:
                answer = await client.get(page)
                if answer.status_code != 200:
                    failures.append(f"{answer.status_code}")
            except httpx.HTTPError as exc:
                failures.append(type(exc).__name__)
            latencies.setdefault(current, []).append(time.perf_counter() - started)

        running = set()
        while (current := phase.value.decode()) != "stop":
            task = asyncio.create_task(fetch(rng.choice(pages), current))
            running.add(task)
            task.add_done_callback(running.discard)
            await asyncio.sleep(every)
        await asyncio.gather(*running)
    out.put({"latencies": latencies, "failures": failures})


async def _flood(url: str, calls: int) -> dict[str, Any]:
    """`calls` route calls at once, each on a connection of its own; how each ended and how long it took."""
    limits = httpx.Limits(max_connections=calls + 10, max_keepalive_connections=0)
    outcomes: dict[str, int] = {}
    seconds: dict[str, list[float]] = {}
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits, headers=HEADERS) as client:
        start = asyncio.Event()

        async def one(i: int) -> None:
            body = {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                    "params": {"name": "route", "arguments": {"task": TASKS[i % len(TASKS)]}}}
            await start.wait()
            began = time.perf_counter()
            try:
                answer = await client.post("/mcp", json=body)
                if answer.status_code == 503 and "busy:" in answer.text:
                    kind = "busy (503, before the SDK)"
                elif answer.status_code != 200:
                    kind = f"http {answer.status_code}"
                else:
                    result = answer.json().get("result") or {}
                    text = (result.get("content") or [{}])[0].get("text", "")
                    kind = ("answered" if not result.get("isError") else
                            "busy (tool error, the gate)" if "busy:" in text else "tool error: " + text[:60])
            except httpx.HTTPError as exc:
                kind = f"transport: {type(exc).__name__}"
            outcomes[kind] = outcomes.get(kind, 0) + 1
            seconds.setdefault(kind, []).append(time.perf_counter() - began)

        tasks = [asyncio.create_task(one(i)) for i in range(calls)]
        began = time.perf_counter()
        start.set()
        await asyncio.gather(*tasks)
        wall = time.perf_counter() - began
    return {"outcomes": outcomes, "seconds": {k: _percentiles(v) for k, v in seconds.items()}, "wall": wall}


@contextlib.contextmanager
def _sevenmaps_serve(lake: LakePaths) -> Iterator[str]:
    """`sevenmaps serve` over `lake` in a process of its own, as an operator runs it; yields its URL once the
    site answers, and stops it (Ctrl-C) after."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryFile() as log:  # its warnings: a pipe nobody reads could fill and stall it
        server = subprocess.Popen([sys.executable, "-m", "sevenmaps_pipeline.cli", "serve", "--lake",
                                   str(lake.root), "--port", str(port)], stdout=subprocess.DEVNULL, stderr=log)
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    if httpx.get(url + "/", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if server.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    raise RuntimeError(f"sevenmaps serve did not start: {log.read().decode()[-2000:]}")
                time.sleep(0.2)
            yield url
        finally:
            server.send_signal(signal.SIGINT)
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()


def _route_seconds(url: str, tasks: tuple[str, ...]) -> float:
    """Mean seconds of one route call, alone, over `tasks`."""
    began = time.perf_counter()
    for task in tasks:
        httpx.post(url + "/mcp", headers=HEADERS, timeout=300, json={
            "jsonrpc": "2.0", "id": 0, "method": "tools/call", "params": {"name": "route", "arguments": {
                "task": task}}}).raise_for_status()
    return (time.perf_counter() - began) / len(tasks)


def _flood_watched(url: str, pages: list[str], calls: int, quiet_seconds: float) -> tuple[dict, dict]:
    """The watcher started and quiet for `quiet_seconds`, then the flood; the flood's figures and the
    watcher's."""
    context = multiprocessing.get_context("spawn")
    phase: Any = context.Array("c", 16)
    out = context.Queue()
    phase.value = b"starting"
    watcher = context.Process(target=_watch_pages, args=(url, pages, phase, out))
    watcher.start()
    deadline = time.monotonic() + 120
    while phase.value != b"quiet" and watcher.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)  # the watcher says when it is ready: the quiet phase is its own, not its start's
    time.sleep(quiet_seconds)
    phase.value = b"flood"
    flood = asyncio.run(_flood(url, calls))
    phase.value = b"stop"
    watched = out.get(timeout=120)
    watcher.join(timeout=30)
    return flood, watched


def run_serve_bench(endpoints: int = 25_000, days: int = 3, seed: int = 1, calls: int = 600,
                    lake: LakePaths | None = None, quiet_seconds: float = 5.0,
                    results_file: Path | None = None) -> dict[str, Any]:
    """The figures of one flood; `lake` (built, signed, with its site) instead of the registry-sized one."""
    lake = lake or serve_bench_lake(endpoints, days, seed)
    results_file = results_file or BENCH_DIR / "serve-results.json"
    pages = ["/", "/down.html"] + [f"/servers/{p.name}" for p in
                                   sorted((lake.root / "site" / "current" / "servers").glob("*.html"))[:200]]
    with _sevenmaps_serve(lake) as url:
        first_call = _route_seconds(url, TASKS[:1])  # builds the day's index and facts: timed apart
        one_call = _route_seconds(url, TASKS)
        flood, watched = _flood_watched(url, pages, calls, quiet_seconds)
    results = {"endpoints": _endpoints(lake), "calls": calls, "cores": os.cpu_count(),
               "first_call_seconds": first_call, "one_call_seconds": one_call, "flood": flood,
               "pages": {k: _percentiles(v) for k, v in watched["latencies"].items()},
               "page_failures": watched["failures"]}
    results_file.parent.mkdir(parents=True, exist_ok=True)
    results_file.write_text(json.dumps(results, indent=2))
    results["results_file"] = str(results_file)
    return results


def print_serve_bench(r: dict[str, Any]) -> None:
    print(f"sevenmaps bench --only serve: `sevenmaps serve` over {r['endpoints']:,} endpoints, {r['calls']} route "
          f"calls at once, {r['cores']} cores")
    print(f"  route, first call (builds the index)    {r['first_call_seconds']:8.2f} s")
    print(f"  route, one call alone                   {r['one_call_seconds']:8.3f} s")
    f = r["flood"]
    print(f"  the flood: {f['wall']:.1f} s to the last answer; "
          + ", ".join(f"{n} {k}" for k, n in sorted(f["outcomes"].items())))
    for kind, p in sorted(f["seconds"].items()):
        print(f"    {kind:<36} p50 {p['p50']:6.2f} s  p95 {p['p95']:6.2f} s  max {p['max']:6.2f} s")
    for phase in ("quiet", "flood"):
        p = r["pages"].get(phase, {"n": 0})
        if p["n"]:
            print(f"  site pages, {phase:<5} ({p['n']:>4} fetched)     p50 {p['p50']:6.3f} s  p95 {p['p95']:6.3f} s  "
                  f"max {p['max']:6.3f} s")
    if r["page_failures"]:
        print(f"  pages that failed: {len(r['page_failures'])} ({', '.join(sorted(set(r['page_failures'])))})")
    print(f"figures written to {r['results_file']}")
    record("serve", {**r, "page_failure_count": len(r["page_failures"])})
