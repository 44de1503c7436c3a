"""The prober benchmark: 2,000 fleet endpoints with injected per-server latency.

Prints the scan's wall time, the ideal lower bound for the requests it had to make (the sum of every
request's injected latency divided by the concurrency, and never less than the busiest host's own
serial sum, since a host gets one request at a time), their ratio; and, as the baseline a user would
otherwise write, the official SDK's `Client` used naively one endpoint at a time (on a sample,
extrapolated to all endpoints).
"""

from __future__ import annotations

import datetime as dt
import json
import multiprocessing
import random
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import httpcore2
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from ..lake.paths import LakePaths
from ..probe.config import ProbeConfig
from ..probe.run import ReplayClock, scan_day, take_snapshot
from ..probe.shards import Shard
from .bench_history import record
from .fleet.run import load_timeline


def bench_timeline(endpoints: int) -> dict:
    base = load_timeline()
    servers = [{"name": f"b{i}", "host": f"mcp.bench{i}.test", "kind": "bench", "registry_name": f"test.bench{i}/b",
                "timeline": [{"days": "all", "tools": "weather_v2", "version": "1.0.0"}]} for i in range(endpoints)]
    return {"days": 1, "toolsets": base["toolsets"], "servers": servers, "extra_listings": [], "opted_out_hosts": []}


class _RemoteFleet:
    """A fleet serving from a child process: its port, CA and, at the end, its request counts."""

    def __init__(self, timeline: dict, latency: dict[str, float], workdir: Path, slow_seconds: float = 12.0) -> None:
        self.spec, self.info_path = workdir / "spec.json", workdir / "info.json"
        self.spec.write_text(json.dumps({"timeline": timeline, "latency": latency, "slow_seconds": slow_seconds}))
        self.proc = subprocess.Popen([sys.executable, "-m", "sevenmaps_pipeline.devtools.fleet.serve", str(self.spec),
                                      str(self.info_path)], stdin=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while not self.info_path.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the benchmark fleet did not start")
            time.sleep(0.1)
        info = json.loads(self.info_path.read_text())
        self.port, self.ca_file = info["port"], Path(info["ca_file"])
        self.host_map, self.registry_url = info["host_map"], info["registry_url"]

    def finish(self) -> dict:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)
        return json.loads(self.info_path.read_text())


def _sdk_client_factory(port: int, ca_file: Path):
    """The official SDK client, reaching fleet names through the same kind of loopback map."""
    fleet_port = port

    class MapBackend(httpcore2.AsyncNetworkBackend):
        def __init__(self) -> None:
            self.inner = httpcore2.AnyIOBackend()

        async def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
            return await self.inner.connect_tcp("127.0.0.1", fleet_port, timeout, local_address, socket_options)

        async def sleep(self, seconds):
            await self.inner.sleep(seconds)

    def make() -> httpx2.AsyncClient:
        context = ssl.create_default_context(cafile=str(ca_file))
        client = httpx2.AsyncClient(verify=context, timeout=30)
        # The fleet's names map to loopback through the pool's network backend (httpx has no public hook).
        client._transport._pool = httpcore2.AsyncConnectionPool(  # type: ignore[attr-defined]
            ssl_context=context, network_backend=MapBackend())
        return client

    return make


async def _naive_sdk(port: int, ca_file: Path, urls: list[str]) -> int:
    make = _sdk_client_factory(port, ca_file)
    answered = 0
    for url in urls:  # one endpoint at a time, as a straightforward script would
        try:
            async with make() as http, Client(streamable_http_client(url, http_client=http), mode="legacy") as c:
                result = await c.list_tools()
                answered += bool(result.tools)
        except Exception:  # noqa: BLE001 - the baseline only counts answers
            pass
    return answered


def _shard_scan(lake_root: str, day: str, registry_url: str, host_map: dict, ca_file: str, concurrency: int,
                index: int, count: int) -> dict:
    """One shard's scan, in its own process (as a Dagster step of the multiprocess executor runs it)."""
    config = ProbeConfig(host_map=host_map, ca_file=Path(ca_file), concurrency=concurrency)
    started = time.process_time()
    report = scan_day(LakePaths.at(Path(lake_root)), dt.date.fromisoformat(day), registry_url, config,
                      ReplayClock(dt.date.fromisoformat(day)), shard=Shard(index, count))
    return {"outcomes": report.outcomes, "cpu": time.process_time() - started, "seconds": report.seconds}


def _measured_scan(timeline: dict, latency: dict[str, float], workdir: Path, concurrency: int,
                   shards: int) -> dict:
    """A fresh fleet and one scan of it: in this process (shards=1), or the registry snapshot here and then
    `shards` processes side by side, each with its share of the concurrency."""
    workdir.mkdir()
    fleet = _RemoteFleet(timeline, latency, workdir)
    lake = LakePaths.at(workdir / "lake")
    try:
        day = dt.datetime.now(dt.UTC).date()
        config = ProbeConfig(host_map=fleet.host_map, ca_file=fleet.ca_file, concurrency=concurrency)
        started, cpu = time.perf_counter(), time.process_time()
        if shards == 1:
            outcomes = scan_day(lake, day, fleet.registry_url, config, ReplayClock(day)).outcomes
        else:

            take_snapshot(lake, day, fleet.registry_url, config, ReplayClock(day))
            args = [(str(lake.root), day.isoformat(), fleet.registry_url, dict(config.host_map), str(fleet.ca_file),
                     -(-concurrency // shards), k, shards) for k in range(shards)]
            with multiprocessing.get_context("spawn").Pool(shards) as pool:
                parts = pool.starmap(_shard_scan, args)
            outcomes = {}
            for part in parts:
                for k, v in part["outcomes"].items():
                    outcomes[k] = outcomes.get(k, 0) + v
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        if shards > 1:
            cpu += sum(part["cpu"] for part in parts)
        counts = fleet.finish()
    finally:
        if fleet.proc.poll() is None:
            fleet.proc.kill()
    return {"wall": wall, "prober_cpu": cpu, "counts": counts, "outcomes": outcomes}


def run_probe_bench(endpoints: int = 2000, concurrency: int = 64, sample: int = 100, seed: int = 1,
                    shards: int = 2) -> dict:
    rng = random.Random(seed)
    sample = min(sample, endpoints)  # the SDK's sample is of the endpoints there are
    timeline = bench_timeline(endpoints)
    hosts = [s["host"] for s in timeline["servers"]]
    latency = {h: rng.uniform(0.010, 0.090) for h in hosts}
    with tempfile.TemporaryDirectory() as tmp:
        one = _measured_scan(timeline, latency, Path(tmp) / "one", concurrency, 1)
        counts = one["counts"]
        per_host = {h: counts["requests"].get(h, 0) * latency[h] for h in hosts}
        bound = max(sum(per_host.values()) / concurrency, max(per_host.values()))
        requests = sum(counts["requests"].get(h, 0) for h in hosts)
        max_in_flight = max(counts["max_in_flight"].get(h, 0) for h in hosts)
        sharded = _measured_scan(timeline, latency, Path(tmp) / "sharded", concurrency, shards) if shards > 1 else None
        naive_dir = Path(tmp) / "naive"
        naive_dir.mkdir()
        fleet = _RemoteFleet(timeline, latency, naive_dir)
        try:
            urls = [f"https://{h}/mcp" for h in hosts[:sample]]
            started = time.perf_counter()
            answered = anyio.run(_naive_sdk, fleet.port, fleet.ca_file, urls)
            naive = time.perf_counter() - started
            fleet.finish()
        finally:
            if fleet.proc.poll() is None:
                fleet.proc.kill()
    figures = {
        "endpoints": endpoints, "concurrency": concurrency, "ok": one["outcomes"].get("ok", 0),
        "requests": requests, "max_in_flight_per_host": max_in_flight, "wall_seconds": one["wall"],
        "ideal_seconds": bound, "ratio": one["wall"] / bound, "prober_cpu_seconds": one["prober_cpu"],
        "fleet_cpu_seconds": counts.get("cpu_seconds"), "naive_sample": sample, "naive_answered": answered,
        "naive_sample_seconds": naive, "naive_extrapolated_seconds": naive * endpoints / sample, "shards": shards,
        "overlaps": counts.get("overlaps", [])[:20],
    }
    if sharded is not None:
        sharded_counts = sharded["counts"]
        figures.update(
            sharded_wall_seconds=sharded["wall"], sharded_ratio=sharded["wall"] / bound,
            sharded_ok=sharded["outcomes"].get("ok", 0), sharded_prober_cpu_seconds=sharded["prober_cpu"],
            sharded_requests=sum(sharded_counts["requests"].get(h, 0) for h in hosts),
            sharded_max_in_flight_per_host=max(sharded_counts["max_in_flight"].get(h, 0) for h in hosts))
        figures["overlaps"] += sharded_counts.get("overlaps", [])[:20]
    return figures


def print_overlaps(overlaps: list[dict]) -> None:
    """Each time a host had more than one request in flight, what was open (the fleet's record)."""
    for o in overlaps[:5]:
        still = "; ".join(f"{e['request']} open {e['open_seconds']:.3f} s, {e['ended']}" for e in o["open"])
        print(f"    over one in flight on {o['host']}: {o['request']} arrived while {still}")


def print_probe_bench(figures: dict) -> None:
    f = figures
    print(f"sevenmaps prober bench: {f['endpoints']:,} fleet endpoints (HTTPS on loopback, 10-90 ms injected per "
          f"request), concurrency {f['concurrency']}")
    print(f"  scan wall time                          {f['wall_seconds']:8.1f} s   ({f['ok']:,} ok, "
          f"{f['requests']:,} requests, max {f['max_in_flight_per_host']} in flight per host)")
    print(f"  ideal lower bound                       {f['ideal_seconds']:8.1f} s   (sum of latencies / concurrency)")
    print(f"  ratio wall / ideal                      {f['ratio']:8.2f} x")
    print(f"  CPU: prober / fleet (one process each)  {f['prober_cpu_seconds']:8.1f} s / "
          f"{f['fleet_cpu_seconds']:.1f} s (the fleet's includes its start)")
    if "sharded_wall_seconds" in f:
        print(f"  {f['shards']} shards by host, side by side        {f['sharded_wall_seconds']:8.1f} s   "
              f"({f['sharded_ok']:,} ok, {f['sharded_requests']:,} requests, max {f['sharded_max_in_flight_per_host']} "
              f"in flight per host; prober CPU {f['sharded_prober_cpu_seconds']:.1f} s in all)")
        print(f"  ratio {f['shards']} shards / ideal                   {f['sharded_ratio']:8.2f} x")
    print_overlaps(f.get("overlaps", []))
    print(f"  SDK Client, one endpoint at a time      {f['naive_extrapolated_seconds']:8.1f} s   "
          f"(measured {f['naive_sample_seconds']:.1f} s on {f['naive_sample']} endpoints, "
          f"{f['naive_answered']} answered; extrapolated)")
    print(f"  speed-up over the naive baseline        {f['naive_extrapolated_seconds'] / f['wall_seconds']:8.1f} x")
    record("probe", f)


if __name__ == "__main__":
    print_probe_bench(run_probe_bench())
