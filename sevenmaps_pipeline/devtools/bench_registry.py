"""The whole registry, simulated: 25,000 endpoints on loopback virtual hosts with a realistic mix.

One fleet process (its own, so servers and prober do not share a GIL) serves every `.test` name by Host,
with certificates chosen by SNI (devtools/fleet/tls.py). The mix, all drawn from one seed:

- per-host answer latency, log-normal with a median of 150 ms and a p95 of 1.5 s, before every answer;
- 10% of endpoints time out (robots.txt and the well-knowns answer; `initialize` never does in time);
- 5% refuse connections; 3% answer slowly page by page (10 tools, 2 a page, 1-2 s a page);
- gateways: a few hosts carry many endpoints each (`/u<i>/mcp`, one request at a time per host, so each
  is one long serial queue), and one gateway gives every server its own subdomain under one wildcard
  certificate.

No host's latency is within GUARD_SECONDS of robots.txt's timeout, so every endpoint has one intended
record (intents), and every endpoint's last daily check is held against it (devtools/bench_truth.py, the
overload rule allowed for): "misclassified: N of M", and the bench exits 1 when N > 0. One hourly slice
with readiness and the lookups is timed beside it (devtools/bench_slice.py).

The ideal lower bound is computed from the injected figures and the prober's own timeouts (the time
each request must wait, request by request), divided by the concurrency, and never less than the
busiest host's serial sum. Nothing here asserts a time.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import random
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..lake.paths import LakePaths
from ..probe.config import ProbeConfig, Timeouts
from ..probe.run import ReplayClock, scan_day
from .bench import BENCH_DIR
from .bench_history import record
from .bench_probe import CpuHog, _RemoteFleet, print_overlaps
from .bench_slice import hour_lines, run_hour
from .bench_truth import (
    ANSWERS,
    REFUSES,
    ROBOTS_SLOW,
    TIMES_OUT,
    Intent,
    recorded,
    truth,
    truth_lines,
    wrong_examples,
)
from .fleet.run import load_timeline

MEDIAN_SECONDS, P95_SECONDS = 0.150, 1.5
SIGMA = math.log(P95_SECONDS / MEDIAN_SECONDS) / 1.6449  # the p95 of a standard normal
GATEWAY_SIZES = (1200, 600, 300, 150, 80, 40, 20, 10)  # endpoints behind each shared host
GATEWAY_LATENCY = 0.060  # a gateway answers from large infrastructure: fast, but every request waits its turn
WILDCARD_SERVERS = 1000  # one gateway's per-server subdomains under *.wild.test
TIMEOUT_SHARE, REFUSE_SHARE, PAGED_SHARE = 0.10, 0.05, 0.03
PAGED_TOOLS, PAGE_SIZE = 10, 2
GUARD_SECONDS = 0.5  # no host's latency within this of robots.txt's timeout (clear_of)
# What registry entries carry for the readiness probe's code-host phase and the daily lookups: a
# repository on most single hosts' entries, an npm or PyPI package on a quarter of them (assumed shares).
REPOSITORY_EVERY, PACKAGE_EVERY = 5, 4  # every host but each 5th has a repository; each 4th ships a package


@dataclass(frozen=True)
class SimHost:
    host: str
    endpoints: int
    latency: float
    state: str  # up | timeout | down | paged


def clear_of(latency: float, limit: float) -> float:
    """A latency moved out of the guard band around a prober timeout: one within GUARD_SECONDS of it has no
    intended outcome (a few milliseconds of our own or the fleet's would decide), so the simulation never
    injects one."""
    if limit - GUARD_SECONDS <= latency < limit:
        return limit - GUARD_SECONDS
    if limit <= latency < limit + GUARD_SECONDS:
        return limit + GUARD_SECONDS
    return latency


def registry_mix(endpoints: int = 25_000, seed: int = 1, timeouts: Timeouts | None = None) -> list[SimHost]:
    rng = random.Random(seed)
    t = timeouts or Timeouts()
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
        hosts.append(SimHost(name, 1, clear_of(latency, t.robots_txt), state))
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
        server: dict[str, Any] = {"name": f"h{i}", "host": h.host, "registry_name": f"test.sim{i}/server",
                                  "kind": "bench_paginated" if h.state == "paged" else "bench", "timeline": [day]}
        if i % REPOSITORY_EVERY:
            server["repository"] = {"full_name": f"sim/server{i}"}
        if i % PACKAGE_EVERY == 0:
            server["packages"] = [{"registryType": "npm" if i % 8 == 0 else "pypi", "identifier": f"sim-server-{i}",
                                   "version": "1.0.0"}]
        servers.append(server)
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


def endpoint_keys(h: SimHost) -> list[str]:
    return [f"{h.host}/mcp"] + [f"{h.host}/u{j}/mcp" for j in range(1, h.endpoints)]


def intents(hosts: list[SimHost], t: Timeouts, answer_tools: int) -> dict[str, Intent]:
    """server_key -> what the simulation set it up to do, as the day must record it (devtools/bench_truth.py):
    a refused connection d; a robots.txt slower than its timeout n (we may not check, docs/methodology.md);
    an initialize that never answers in time d; otherwise an answer listing its toolset's tools."""
    out: dict[str, Intent] = {}
    for h in hosts:
        if h.state == "down":
            intent = Intent(REFUSES)
        elif h.latency >= t.robots_txt:
            intent = Intent(ROBOTS_SLOW)
        elif h.state == "timeout" or h.latency >= t.initialize:
            intent = Intent(TIMES_OUT)
        else:
            intent = Intent(ANSWERS, PAGED_TOOLS if h.state == "paged" else answer_tools)
        out.update(dict.fromkeys(endpoint_keys(h), intent))
    return out


def run_registry_bench(endpoints: int = 25_000, concurrency: int = 256, seed: int = 1, cpu_hog: int = 0,
                       timeouts: Timeouts | None = None, hour: bool = True,
                       mix: list[SimHost] | None = None) -> dict[str, Any]:
    """The whole registry's scan, every endpoint checked against its intended outcome, and (with `hour`) one
    hourly slice with readiness and the lookups (devtools/bench_slice.py); `cpu_hog` busy processes beside
    it all. `timeouts` other than the prober's own and a `mix` of hosts given are for tests (a quick scan)."""
    timeouts = timeouts or Timeouts()
    hosts = mix or registry_mix(endpoints, seed, timeouts)
    endpoints = sum(h.endpoints for h in hosts)
    timeline = registry_timeline(hosts)
    wanted = intents(hosts, timeouts, answer_tools=len(timeline["toolsets"]["weather_v2"]))
    latency = {h.host: h.latency for h in hosts if h.state != "down"}
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        fleet = _RemoteFleet(timeline, latency, Path(tmp), slow_seconds=timeouts.initialize + 4)
        f: dict[str, Any] = {"fleet_start_seconds": time.perf_counter() - started}
        hog = CpuHog(cpu_hog) if cpu_hog else None
        try:
            day = dt.datetime.now(dt.UTC).date()
            config = ProbeConfig(host_map=fleet.host_map, ca_file=fleet.ca_file, concurrency=concurrency,
                                 timeouts=timeouts)
            started, cpu = time.perf_counter(), time.process_time()
            lake = LakePaths.at(Path(tmp) / "lake")
            report = scan_day(lake, day, fleet.registry_url, config, ReplayClock(day))
            f.update(wall_seconds=time.perf_counter() - started, prober_cpu_seconds=time.process_time() - cpu,
                     outcomes=dict(sorted(report.outcomes.items())), truth=truth(wanted, recorded(lake, day)))
            f["truth"]["wrong_examples"] = wrong_examples(lake, day, f["truth"]["wrong_keys"])
            if hour:
                info = json.loads(fleet.info_path.read_text())
                f["hour"] = run_hour(info, lake, day, config, wanted, Path(tmp))
        finally:
            if hog is not None:
                hog.stop()
            counts = fleet.finish()
    return {"endpoints": endpoints, "hosts": len(hosts), "concurrency": concurrency, "seed": seed,
            "cpu_hog": cpu_hog, **f, **bound_figures(hosts, timeouts, concurrency, f["wall_seconds"], counts)}


def bound_figures(hosts: list[SimHost], timeouts: Timeouts, concurrency: int, wall: float,
                  counts: dict[str, Any]) -> dict[str, Any]:
    """The scan's ideal bound from the injected figures, and what the fleet counted."""
    busy = {h.host: busy_seconds(h, timeouts) for h in hosts}
    busiest = max(hosts, key=lambda h: busy[h.host])
    lost_to_timeouts = sum(h.endpoints * timeouts.initialize for h in hosts
                           if h.state == "timeout" and h.latency < timeouts.robots_txt)
    lost_to_timeouts += sum(timeouts.robots_txt for h in hosts
                            if h.state != "down" and h.latency >= timeouts.robots_txt)
    shared = [h for h in hosts if h.endpoints > 1]
    ideal = max(sum(busy.values()) / concurrency, busy[busiest.host])
    in_flight = counts.get("max_in_flight", {})
    return {
        "ideal_seconds": ideal, "ratio": wall / ideal, "sum_busy_seconds": sum(busy.values()),
        "requests": sum(counts.get("requests", {}).get(h.host, 0) for h in hosts),
        "max_in_flight_per_host": max(in_flight.values(), default=0),
        "hosts_over_one_in_flight": sorted(h for h, n in in_flight.items() if n > 1)[:20],
        "overlaps": counts.get("overlaps", [])[:20], "fleet_cpu_seconds": counts.get("cpu_seconds"),
        "lost_to_timeouts_seconds": lost_to_timeouts,
        "shared_hosts": len(shared), "endpoints_on_shared_hosts": sum(h.endpoints for h in shared),
        "busiest_host": busiest.host, "busiest_host_endpoints": busiest.endpoints,
        "busiest_host_serial_seconds": busy[busiest.host],
        "latency_median_seconds": sorted(h.latency for h in hosts)[len(hosts) // 2],
    }


def flat_figures(f: dict[str, Any]) -> dict[str, float | int]:
    """The part's figures as one flat dict of named numbers and outcome counts (for a history of runs)."""
    keys = ("endpoints", "concurrency", "cpu_hog", "wall_seconds", "ideal_seconds", "ratio", "requests",
            "max_in_flight_per_host", "prober_cpu_seconds", "fleet_cpu_seconds")
    flat: dict[str, float | int] = {k: f[k] for k in keys if isinstance(f.get(k), int | float)}
    flat.update({"misclassified": f["truth"]["misclassified"], "overload_rule_n": f["truth"]["overload_rule_n"]})
    flat.update({f"outcome.{k}": v for k, v in f["outcomes"].items()})
    hour = f.get("hour")
    if hour:
        flat.update({f"hour.{k}": hour[k] for k in ("endpoints", "scan_seconds", "readiness_seconds",
                                                     "lookups_seconds", "total_seconds", "readiness_checks",
                                                     "packages", "domains_asked")})
        flat["hour.misclassified"] = hour["truth"]["misclassified"]
    return flat


def print_registry_bench(f: dict[str, Any]) -> int:
    """Print and keep the figures; 1 when any endpoint was misclassified (the scan's or the slice's), else 0."""
    BENCH_DIR.mkdir(exist_ok=True)
    (BENCH_DIR / "registry.json").write_text(json.dumps({**f, "flat": flat_figures(f)}, indent=2, default=str))
    print(f"sevenmaps registry bench: {f['endpoints']:,} endpoints on {f['hosts']:,} loopback hosts (simulated "
          f"registry, seed {f['seed']}), concurrency {f['concurrency']}")
    print(f"  scan wall time                          {f['wall_seconds']:8.1f} s   ({f['requests']:,} requests, "
          f"max {f['max_in_flight_per_host']} in flight per host; fleet start {f['fleet_start_seconds']:.1f} s)")
    print_overlaps(f.get("overlaps", []))
    print(f"  ideal lower bound                       {f['ideal_seconds']:8.1f} s   (sum of waits "
          f"{f['sum_busy_seconds']:,.0f} s / {f['concurrency']}, at least the busiest host)")
    print(f"  ratio wall / ideal                      {f['ratio']:8.2f} x")
    print(f"  CPU: prober / fleet (one process each)  {f['prober_cpu_seconds']:8.1f} s / "
          f"{f['fleet_cpu_seconds'] or 0:.1f} s")
    print(f"  time lost to timeouts (summed)          {f['lost_to_timeouts_seconds']:8.0f} s")
    print(f"  shared hosts                            {f['shared_hosts']:8d}     ({f['endpoints_on_shared_hosts']:,} "
          f"endpoints; busiest {f['busiest_host']}: {f['busiest_host_endpoints']:,} endpoints, "
          f"{f['busiest_host_serial_seconds']:.0f} s one request at a time; requests and in-flight counts include the "
          "hour's below)")
    print("  outcomes                                " + ", ".join(f"{k} {v:,}" for k, v in f["outcomes"].items()))
    hog = f" (with {f['cpu_hog']} busy processes beside it)" if f.get("cpu_hog") else ""
    print("\n".join(truth_lines(f["truth"], f"intended -> recorded{hog}")))
    if f.get("hour"):
        print("\n".join(hour_lines(f["hour"], f["endpoints"])))
        print("\n".join(truth_lines(f["hour"]["truth"], "the slice, intended -> recorded")))
    print(f"figures written to {BENCH_DIR / 'registry.json'}")
    record("registry", f)
    wrong = f["truth"]["misclassified"] + (f["hour"]["truth"]["misclassified"] if f.get("hour") else 0)
    return 1 if wrong else 0
