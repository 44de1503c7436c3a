"""The whole registry, simulated: 25,000 endpoints on loopback virtual hosts with a realistic mix.

One fleet process (its own, so servers and prober do not share a GIL) serves every `.test` name by Host,
with certificates chosen by SNI (devtools/fleet/tls.py). The mix, all drawn from one seed:

- per-host answer latency, log-normal with a median of 150 ms and a p95 of 1.5 s, before every answer;
- 10% of endpoints time out (robots.txt and the well-knowns answer; `initialize` never does in time);
- 5% refuse connections; 3% answer slowly page by page (10 tools, 2 a page, 1-2 s a page);
- gateways: a few hosts carry many endpoints each (`/u<i>/mcp`, one request at a time per host, so each
  is one long serial queue), and one gateway gives every server its own subdomain under one wildcard
  certificate.

The ideal lower bound is computed from the injected figures and the prober's own timeouts (the time
each request must wait, request by request), divided by the concurrency, and never less than the
busiest host's serial sum. Nothing here asserts a time.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from ..lake.paths import LakePaths
from ..probe.config import ProbeConfig, Timeouts
from ..probe.run import ReplayClock, scan_day
from .bench import BENCH_DIR
from .bench_history import record
from .bench_probe import _RemoteFleet, print_overlaps
from .fleet.run import load_timeline

MEDIAN_SECONDS, P95_SECONDS = 0.150, 1.5
SIGMA = math.log(P95_SECONDS / MEDIAN_SECONDS) / 1.6449  # the p95 of a standard normal
GATEWAY_SIZES = (1200, 600, 300, 150, 80, 40, 20, 10)  # endpoints behind each shared host
GATEWAY_LATENCY = 0.060  # a gateway answers from large infrastructure: fast, but every request waits its turn
WILDCARD_SERVERS = 1000  # one gateway's per-server subdomains under *.wild.test
TIMEOUT_SHARE, REFUSE_SHARE, PAGED_SHARE = 0.10, 0.05, 0.03
PAGED_TOOLS, PAGE_SIZE = 10, 2


@dataclass(frozen=True)
class SimHost:
    host: str
    endpoints: int
    latency: float
    state: str  # up | timeout | down | paged


def registry_mix(endpoints: int = 25_000, seed: int = 1) -> list[SimHost]:
    rng = random.Random(seed)
    hosts: list[SimHost] = []
    gateways = [size for size in GATEWAY_SIZES if size * 5 <= endpoints]
    for k, size in enumerate(gateways):
        hosts.append(SimHost(f"mcp.gw{k}.test", size, GATEWAY_LATENCY, "up"))
    wild = min(WILDCARD_SERVERS, endpoints // 25)
    singles = endpoints - sum(gateways) - wild
    states = (["timeout"] * round(endpoints * TIMEOUT_SHARE) + ["down"] * round(endpoints * REFUSE_SHARE)
              + ["paged"] * round(endpoints * PAGED_SHARE))
    states += ["up"] * (singles + wild - len(states))
    rng.shuffle(states)
    for i in range(wild + singles):
        state = states[i]
        latency = rng.uniform(1.0, 2.0) if state == "paged" else rng.lognormvariate(math.log(MEDIAN_SECONDS), SIGMA)
        name = f"s{i}.wild.test" if i < wild else f"mcp.r{i}.test"
        hosts.append(SimHost(name, 1, latency, state))
    return hosts


def registry_timeline(hosts: list[SimHost]) -> dict[str, Any]:
    base = load_timeline()
    toolsets = {**base["toolsets"], "bench_pages": {"generate": {"tools": PAGED_TOOLS, "words": 12}}}
    servers, extra = [], []
    for i, h in enumerate(hosts):
        day: dict[str, Any] = {"days": "all", "tools": "bench_pages" if h.state == "paged" else "weather_v2",
                               "version": "1.0.0"}
        if h.state in ("timeout", "down"):
            day["state"] = h.state
        servers.append({"name": f"h{i}", "host": h.host, "kind": "bench_paginated" if h.state == "paged" else "bench",
                        "registry_name": f"test.sim{i}/server", "timeline": [day]})
        extra += [{"server": {"name": f"test.sim{i}/u{j}", "version": "1.0.0",
                              "remotes": [{"type": "streamable-http", "url": f"https://{h.host}/u{j}/mcp"}]}}
                  for j in range(1, h.endpoints)]
    return {"days": 1, "toolsets": toolsets, "servers": servers, "extra_listings": extra, "opted_out_hosts": [],
            "wildcard_domains": ["wild.test"]}


def busy_seconds(h: SimHost, t: Timeouts) -> float:
    """How long the prober must wait on this host, request by request (its answers' latency, cut at each
    request's timeout): robots.txt, the three well-knowns (4 s together), then per endpoint initialize,
    initialized, the tool-list pages and the session's end."""
    if h.state == "down":
        return 0.0
    lat = h.latency
    if lat >= t.robots_txt:
        return t.robots_txt  # robots.txt times out: its endpoints not_checked (robots_unavailable), not contacted
    origin = lat + min(3 * lat, t.well_known_per_origin)
    if h.state == "timeout":
        per_endpoint = t.initialize
    else:
        pages = math.ceil(PAGED_TOOLS / PAGE_SIZE) if h.state == "paged" else 1
        per_endpoint = (min(lat, t.initialize) + min(lat, t.notifications_initialized)
                        + pages * min(lat, t.tools_list_per_page) + min(lat, t.session_end))
    return origin + h.endpoints * per_endpoint


def intended_outcome(h: SimHost, t: Timeouts) -> str:
    """What the simulation sets each endpoint up to do, as the map should record it: an answer (o), a
    timeout or a refused connection of its own (d), or a robots.txt slower than its timeout (n: we may not
    check, docs/methodology.md)."""
    if h.state == "down":
        return "refuses (d)"
    if h.latency >= t.robots_txt:
        return "robots.txt too slow (n)"
    if h.state == "timeout" or h.latency >= t.initialize:
        return "times out (d)"
    return "answers (o)"


def recorded_codes(lake: LakePaths, day: dt.date) -> dict[str, str]:
    """server_key -> the code its last daily check of the day gives: o/a/p, d:<outcome>, n:<reason>, skipped."""
    last: dict[str, tuple[dt.datetime, str, str | None]] = {}
    for path in lake.raw_files("probes", day):
        table = pq.read_table(path, columns=["server_key", "check_kind", "started_at", "outcome", "skip_reason"])
        for row in table.to_pylist():
            if row["check_kind"] == "daily" and (row["server_key"] not in last
                                                 or row["started_at"] >= last[row["server_key"]][0]):
                last[row["server_key"]] = (row["started_at"], row["outcome"], row["skip_reason"])
    answers = {"ok": "o", "needs_auth": "a", "http_402": "p", "skipped": "skipped"}
    return {key: answers.get(outcome) or (f"n:{reason or outcome}" if outcome in ("not_checked", "prober_error")
                                          else f"d:{outcome}")
            for key, (_, outcome, reason) in last.items()}


def confusion(hosts: list[SimHost], codes: dict[str, str], t: Timeouts) -> dict[str, dict[str, int]]:
    """intended -> recorded -> endpoints."""
    table: dict[str, dict[str, int]] = {}
    for h in hosts:
        keys = [f"{h.host}/mcp"] + [f"{h.host}/u{j}/mcp" for j in range(1, h.endpoints)]
        row = table.setdefault(intended_outcome(h, t), {})
        for key in keys:
            code = codes.get(key, "missing")
            row[code] = row.get(code, 0) + 1
    return {k: dict(sorted(v.items())) for k, v in sorted(table.items())}


class CpuHog:
    """Busy processes, one per core, for the whole scan: a machine someone else is using too."""

    def __init__(self, processes: int) -> None:
        self.procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(processes)]

    def stop(self) -> None:
        for proc in self.procs:
            proc.kill()
            proc.wait()


def run_registry_bench(endpoints: int = 25_000, concurrency: int = 256, seed: int = 1,
                       cpu_hog: int = 0) -> dict[str, Any]:
    hosts = registry_mix(endpoints, seed)
    timeline = registry_timeline(hosts)
    latency = {h.host: h.latency for h in hosts if h.state != "down"}
    timeouts = Timeouts()
    busy = {h.host: busy_seconds(h, timeouts) for h in hosts}
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        fleet = _RemoteFleet(timeline, latency, Path(tmp), slow_seconds=timeouts.initialize + 4)
        fleet_start = time.perf_counter() - started
        try:
            day = dt.datetime.now(dt.UTC).date()
            config = ProbeConfig(host_map=fleet.host_map, ca_file=fleet.ca_file, concurrency=concurrency,
                                 timeouts=timeouts)
            hog = CpuHog(cpu_hog) if cpu_hog else None
            try:
                started, cpu = time.perf_counter(), time.process_time()
                lake = LakePaths.at(Path(tmp) / "lake")
                report = scan_day(lake, day, fleet.registry_url, config, ReplayClock(day))
                wall, prober_cpu = time.perf_counter() - started, time.process_time() - cpu
            finally:
                if hog is not None:
                    hog.stop()
            counts = fleet.finish()
            matrix = confusion(hosts, recorded_codes(lake, day), timeouts)
        finally:
            if fleet.proc.poll() is None:
                fleet.proc.kill()
    requests = sum(counts["requests"].get(h.host, 0) for h in hosts)
    busiest = max(hosts, key=lambda h: busy[h.host])
    lost_to_timeouts = sum(h.endpoints * timeouts.initialize for h in hosts
                           if h.state == "timeout" and h.latency < timeouts.robots_txt)
    lost_to_timeouts += sum(timeouts.robots_txt for h in hosts
                            if h.state != "down" and h.latency >= timeouts.robots_txt)
    shared = [h for h in hosts if h.endpoints > 1]
    ideal = max(sum(busy.values()) / concurrency, busy[busiest.host])
    return {
        "endpoints": endpoints, "hosts": len(hosts), "concurrency": concurrency, "seed": seed, "cpu_hog": cpu_hog,
        "confusion": matrix,
        "answering_recorded_d": sum(n for code, n in matrix.get("answers (o)", {}).items() if code.startswith("d:")),
        "fleet_start_seconds": fleet_start, "wall_seconds": wall, "ideal_seconds": ideal, "ratio": wall / ideal,
        "sum_busy_seconds": sum(busy.values()), "requests": requests,
        "max_in_flight_per_host": max(counts["max_in_flight"].values(), default=0),
        "hosts_over_one_in_flight": sorted(h for h, n in counts["max_in_flight"].items() if n > 1)[:20],
        "overlaps": counts.get("overlaps", [])[:20],
        "prober_cpu_seconds": prober_cpu, "fleet_cpu_seconds": counts.get("cpu_seconds"),
        "outcomes": dict(sorted(report.outcomes.items())),
        "lost_to_timeouts_seconds": lost_to_timeouts,
        "shared_hosts": len(shared), "endpoints_on_shared_hosts": sum(h.endpoints for h in shared),
        "busiest_host": busiest.host, "busiest_host_endpoints": busiest.endpoints,
        "busiest_host_serial_seconds": busy[busiest.host],
        "latency_median_seconds": sorted(h.latency for h in hosts)[len(hosts) // 2],
    }


def print_registry_bench(f: dict[str, Any]) -> None:
    BENCH_DIR.mkdir(exist_ok=True)
    (BENCH_DIR / "registry.json").write_text(json.dumps(f, indent=2))
    print(f"sevenmaps registry bench: {f['endpoints']:,} endpoints on {f['hosts']:,} loopback hosts (simulated "
          f"registry, seed {f['seed']}), concurrency {f['concurrency']}")
    print(f"  scan wall time                          {f['wall_seconds']:8.1f} s   ({f['requests']:,} requests, "
          f"max {f['max_in_flight_per_host']} in flight per host; fleet start {f['fleet_start_seconds']:.1f} s)")
    print_overlaps(f.get("overlaps", []))
    print(f"  ideal lower bound                       {f['ideal_seconds']:8.1f} s   (sum of waits "
          f"{f['sum_busy_seconds']:,.0f} s / {f['concurrency']}, at least the busiest host)")
    print(f"  ratio wall / ideal                      {f['ratio']:8.2f} x")
    print(f"  CPU: prober / fleet (one process each)  {f['prober_cpu_seconds']:8.1f} s / "
          f"{f['fleet_cpu_seconds']:.1f} s")
    print(f"  time lost to timeouts (summed)          {f['lost_to_timeouts_seconds']:8.0f} s")
    print(f"  shared hosts                            {f['shared_hosts']:8d}     ({f['endpoints_on_shared_hosts']:,} "
          f"endpoints; busiest {f['busiest_host']}: {f['busiest_host_endpoints']:,} endpoints, "
          f"{f['busiest_host_serial_seconds']:.0f} s one request at a time)")
    print("  outcomes                                " + ", ".join(f"{k} {v:,}" for k, v in f["outcomes"].items()))
    hog = f" (with {f['cpu_hog']} busy processes beside it)" if f.get("cpu_hog") else ""
    print(f"  intended -> recorded{hog}: answering endpoints recorded d: {f['answering_recorded_d']:,}")
    for intended, recorded in f["confusion"].items():
        print(f"    {intended:<26}" + ", ".join(f"{code} {n:,}" for code, n in recorded.items()))
    print(f"figures written to {BENCH_DIR / 'registry.json'}")
    record("registry", f)
