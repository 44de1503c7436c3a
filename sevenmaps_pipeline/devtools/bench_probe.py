"""The prober benchmark: 2,000 fleet endpoints with injected per-server latency, the prober's CPU per
request, and the official SDK's client at the same concurrency.

Every endpoint is its own HTTPS host on loopback, the fleet in a process of its own; each answer waits its
host's injected latency (uniform between a fifth and nine fifths of the median: 30-270 ms at the default
150 ms). The fleet counts every request it serves, so the prober's CPU (this process's, the fleet's apart)
is divided by the requests it really made.

Two bounds, and the scan against the larger: the latency bound (every request's injected latency summed,
divided by the concurrency, and never less than the busiest host's own serial sum, since a host gets one
request at a time) and the CPU bound (the prober's CPU over the cores it can use: one, for one event
loop). Each round measures the scan quiet, the scan beside one busy process (a machine someone else is
using), and the SDK's client over the same endpoints at the same concurrency (devtools/bench_probe_sdk.py);
figures are the median over the rounds. Nothing here asserts a time.
"""

from __future__ import annotations

import datetime as dt
import json
import multiprocessing
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ..lake.paths import LakePaths
from ..probe.config import ProbeConfig
from ..probe.run import ReplayClock, scan_day, take_snapshot
from ..probe.shards import Shard
from .bench_history import BENCH_DIR, record
from .bench_probe_sdk import run_sdk_sessions
from .fleet.run import load_timeline

# What the prober asks of each endpoint, by the fleet's count of method and path; the SDK asks only the last
# three kinds, and opens a stream (GET /mcp) beside them.
KIND_WORDS = {
    "GET /robots.txt": "robots.txt (the crawl rule, once a day per origin)",
    "GET /.well-known/": "well-known documents of the origin (once a day per origin)",
    "POST /mcp": "initialize, notifications/initialized, tools/list (one per page)",
    "GET /mcp": "the SDK's standalone server-to-client stream, held open beside its requests",
    "DELETE /mcp": "session end",
}


def bench_timeline(endpoints: int) -> dict:
    base = load_timeline()
    servers = [{"name": f"b{i}", "host": f"mcp.bench{i}.test", "kind": "bench", "registry_name": f"test.bench{i}/b",
                "timeline": [{"days": "all", "tools": "weather_v2", "version": "1.0.0"}]} for i in range(endpoints)]
    return {"days": 1, "toolsets": base["toolsets"], "servers": servers, "extra_listings": [], "opted_out_hosts": []}


class CpuHog:
    """Busy processes beside a scan: a machine someone else is using too."""

    def __init__(self, processes: int) -> None:
        self.procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(processes)]

    def stop(self) -> None:
        for proc in self.procs:
            proc.kill()
            proc.wait()


class _RemoteFleet:
    """A fleet serving from a child process: its port, CA and its request counts, asked for between runs
    (`counts`) and at the end (`finish`)."""

    def __init__(self, timeline: dict, latency: dict[str, float], workdir: Path, slow_seconds: float = 12.0) -> None:
        self.spec, self.info_path = workdir / "spec.json", workdir / "info.json"
        # The fleet's files (its CA's key) in `workdir`, which the caller removes: `stop` kills the fleet.
        self.spec.write_text(json.dumps({"timeline": timeline, "latency": latency, "slow_seconds": slow_seconds,
                                         "workdir": str(workdir / "fleet")}))
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
        self._reports, self._cpu = 0, 0.0

    def counts(self) -> dict:
        """The counts since the last call (or the start), the fleet's CPU over that time among them; the
        fleet keeps serving. Ask between runs, when no request is in flight."""
        assert self.proc.stdin is not None
        self._reports += 1
        self.proc.stdin.write(b"\n")
        self.proc.stdin.flush()
        deadline = time.monotonic() + 60
        while (info := json.loads(self.info_path.read_text())).get("report") != self._reports:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the benchmark fleet did not report its counts")
            time.sleep(0.05)
        return self._since_last(info)

    def finish(self, wait_seconds: float = 60.0) -> dict[str, Any]:
        """The fleet's last counts, then the fleet stopped: once it has written them it is killed rather than
        left to wait out the requests of `timeout` servers still held open (up to their slow_seconds)."""
        if self.proc.stdin is not None and self.proc.poll() is None:
            self.proc.stdin.close()
            deadline = time.monotonic() + wait_seconds
            while self.proc.poll() is None and time.monotonic() < deadline:
                if "requests" in self._info():
                    break
                time.sleep(0.05)
        self.stop()
        info = self._info()
        return info if "requests" in info else {}

    def _info(self) -> dict[str, Any]:
        try:
            return json.loads(self.info_path.read_text())
        except ValueError:  # caught while the fleet writes it
            return {}

    def _since_last(self, info: dict) -> dict:
        info["cpu_seconds"], self._cpu = info["cpu_seconds"] - self._cpu, info["cpu_seconds"]
        return info

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def _shard_scan(lake_root: str, day: str, registry_url: str, host_map: dict, ca_file: str, concurrency: int,
                index: int, count: int) -> dict:
    """One shard's scan, in its own process (as a Dagster step of the multiprocess executor runs it)."""
    config = ProbeConfig(host_map=host_map, ca_file=Path(ca_file), concurrency=concurrency)
    started = time.process_time()
    report = scan_day(LakePaths.at(Path(lake_root)), dt.date.fromisoformat(day), registry_url, config,
                      ReplayClock(dt.date.fromisoformat(day)), shard=Shard(index, count))
    return {"outcomes": report.outcomes, "cpu": time.process_time() - started, "seconds": report.seconds}



def _measured_scan(fleet: _RemoteFleet, workdir: Path, concurrency: int, shards: int = 1,
                   busy: int = 0) -> dict[str, Any]:
    """One scan of the fleet into a fresh lake: in this process (shards=1), or the registry snapshot here and
    then `shards` processes side by side, each with its share of the concurrency; `busy` busy processes
    beside it from before the scan to its end. The prober's CPU is this process's and its shards' (the
    fleet's and the busy processes' are their own)."""
    lake = LakePaths.at(workdir)
    day = dt.datetime.now(dt.UTC).date()
    config = ProbeConfig(host_map=fleet.host_map, ca_file=fleet.ca_file, concurrency=concurrency)
    hog = CpuHog(busy) if busy else None
    try:
        started, cpu = time.perf_counter(), time.process_time()
        if shards == 1:
            outcomes = scan_day(lake, day, fleet.registry_url, config, ReplayClock(day)).outcomes
            shard_cpu = 0.0
        else:
            take_snapshot(lake, day, fleet.registry_url, config, ReplayClock(day))
            args = [(str(lake.root), day.isoformat(), fleet.registry_url, dict(config.host_map),
                     str(fleet.ca_file), -(-concurrency // shards), k, shards) for k in range(shards)]
            with multiprocessing.get_context("spawn").Pool(shards) as pool:
                parts = pool.starmap(_shard_scan, args)
            outcomes = {}
            for part in parts:
                for k, v in part["outcomes"].items():
                    outcomes[k] = outcomes.get(k, 0) + v
            shard_cpu = sum(part["cpu"] for part in parts)
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu + shard_cpu
    finally:
        if hog is not None:
            hog.stop()
    return {"wall": wall, "prober_cpu": cpu, "counts": fleet.counts(), "outcomes": outcomes}


def scan_figures(scan: dict[str, Any], latency: dict[str, float], concurrency: int, cores: int) -> dict[str, Any]:
    """One scan's figures: the requests the fleet served (every one the prober made: the registry's pages
    and every endpoint's), CPU per request and per endpoint, the two bounds, and wall over the larger."""
    counts, hosts = scan["counts"], list(latency)
    served = sum(counts["requests"].values())
    per_host = {h: counts["requests"].get(h, 0) * latency[h] for h in hosts}
    latency_bound = max(sum(per_host.values()) / concurrency, max(per_host.values()))
    cpu_bound = scan["prober_cpu"] / cores
    bound = max(latency_bound, cpu_bound)
    return {
        "wall_seconds": scan["wall"], "ok": scan["outcomes"].get("ok", 0), "requests": served,
        "endpoint_requests": sum(counts["requests"].get(h, 0) for h in hosts),
        "max_in_flight_per_host": max(counts["max_in_flight"].get(h, 0) for h in hosts),
        "prober_cpu_seconds": scan["prober_cpu"], "cpu_ms_per_request": 1000 * scan["prober_cpu"] / served,
        "cpu_ms_per_endpoint": 1000 * scan["prober_cpu"] / len(hosts),
        "fleet_cpu_seconds": counts.get("cpu_seconds") or 0.0,
        # The fleet serves the same requests every run, so its CPU is the machine's speed of the moment:
        # this ratio holds still where a VM's CPU a request moves by a fifth between runs.
        "cpu_vs_fleet": scan["prober_cpu"] / (counts.get("cpu_seconds") or float("nan")),
        "latency_bound_seconds": latency_bound, "cpu_bound_seconds": cpu_bound, "bound_seconds": bound,
        "bound_is_cpu": int(cpu_bound > latency_bound), "ratio": scan["wall"] / bound,
        "ratio_to_latency_bound": scan["wall"] / latency_bound,
    }


def sdk_figures(tally: dict[str, Any], counts: dict[str, Any], latency: dict[str, float]) -> dict[str, Any]:
    """The SDK's run: its requests as the fleet served them, CPU per request and per endpoint, and its own
    latency bound (the requests it waits on, each endpoint in turn: its stream is held open beside them)."""
    hosts, kinds = list(latency), counts.get("request_kinds", {})
    served = sum(counts["requests"].get(h, 0) for h in hosts)
    waited_on = served - kinds.get("GET /mcp", 0)
    per_endpoint = waited_on / len(hosts)
    latency_bound = max(sum(latency.values()) * per_endpoint / tally["concurrency"],
                        max(latency.values()) * per_endpoint)
    return {
        "sdk_wall_seconds": tally["wall"], "sdk_cpu_seconds": tally["cpu"], "sdk_requests": served,
        "sdk_answered": tally["answered"], "sdk_failed": sum(tally["failed"].values()), "sdk_tools": tally["tools"],
        "sdk_pages": tally["pages"], "sdk_concurrency": tally["concurrency"], "sdk_most_at_once": tally["most_at_once"],
        "sdk_max_in_flight_per_host": max(counts["max_in_flight"].get(h, 0) for h in hosts),
        "sdk_cpu_ms_per_request": 1000 * tally["cpu"] / max(served, 1),
        "sdk_cpu_ms_per_endpoint": 1000 * tally["cpu"] / len(hosts),
        "sdk_latency_bound_seconds": latency_bound,
        "sdk_ratio": tally["wall"] / max(latency_bound, tally["cpu"]),
        "sdk_fleet_cpu_seconds": counts.get("cpu_seconds") or 0.0,
    }


def _sdk_run(fleet: _RemoteFleet, latency: dict[str, float], concurrency: int) -> dict[str, Any]:
    """The SDK's client on its default loop (asyncio's), then on the prober's (uvloop), so that ours over
    it is read both as a user runs the SDK and client against client on one loop."""
    urls = [f"https://{h}/mcp" for h in latency]
    tally = run_sdk_sessions(fleet.port, fleet.ca_file, urls, concurrency)
    counts = fleet.counts()
    on_uvloop = sdk_figures(run_sdk_sessions(fleet.port, fleet.ca_file, urls, concurrency, on_uvloop=True),
                            fleet.counts(), latency)
    return {**sdk_figures(tally, counts, latency), "sdk_failures": tally["failed"],
            "sdk_kinds": counts.get("request_kinds", {}),
            **{f"sdk_uvloop_{k.removeprefix('sdk_')}": v for k, v in on_uvloop.items()}}


def per_endpoint_kinds(kinds: dict[str, int], endpoints: int) -> dict[str, float]:
    """Requests per endpoint by kind (the well-knowns together)."""
    grouped: dict[str, float] = {}
    for kind, n in kinds.items():
        key = "GET /.well-known/" if kind.startswith("GET /.well-known/") else kind
        grouped[key] = grouped.get(key, 0) + n / endpoints
    return dict(sorted(grouped.items()))


def _median(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """Each number's median over the rounds (each figure's own: the medians may come from different rounds)."""
    return {k: statistics.median(r[k] for r in rounds) for k, v in rounds[0].items()
            if isinstance(v, int | float) and not isinstance(v, bool)}


def probe_latency(hosts: list[str], median_ms: float, seed: int) -> dict[str, float]:
    """Each host's injected latency, uniform between a fifth and nine fifths of the median (10-90 ms at 50)."""
    rng = random.Random(seed)
    return {h: rng.uniform(median_ms / 5, 9 * median_ms / 5) / 1000 for h in hosts}


def _prefixed(prefix: str, figures: dict[str, Any]) -> dict[str, Any]:
    return {f"{prefix}_{k}": v for k, v in figures.items()}


def _rounds(fleet: _RemoteFleet, latency: dict[str, float], tmp: Path, concurrency: int, rounds: int, shards: int,
            busy: int) -> tuple[list[dict], list[dict], list[dict], list[dict], dict | None]:
    """Each round the scan quiet, the scan beside `busy` busy processes and the SDK's client, in turn (so a
    slower hour of the machine touches all three), each into a fresh lake; then the shards, once."""
    quiet, loaded, sdk, scans = [], [], [], []
    for r in range(rounds):
        scans.append(_measured_scan(fleet, tmp / f"quiet{r}", concurrency))
        quiet.append(scan_figures(scans[-1], latency, concurrency, cores=1))
        loaded.append(scan_figures(_measured_scan(fleet, tmp / f"loaded{r}", concurrency, busy=busy), latency,
                                   concurrency, cores=1))
        sdk.append(_sdk_run(fleet, latency, concurrency))
        sdk[-1].update(wall_vs_sdk=quiet[-1]["wall_seconds"] / sdk[-1]["sdk_wall_seconds"],
                       cpu_vs_sdk=quiet[-1]["prober_cpu_seconds"] / sdk[-1]["sdk_cpu_seconds"],
                       cpu_per_request_vs_sdk=quiet[-1]["cpu_ms_per_request"] / sdk[-1]["sdk_cpu_ms_per_request"],
                       cpu_per_request_vs_sdk_uvloop=quiet[-1]["cpu_ms_per_request"]
                       / sdk[-1]["sdk_uvloop_cpu_ms_per_request"])
    sharded = None
    if shards > 1:
        sharded = scan_figures(_measured_scan(fleet, tmp / "sharded", concurrency, shards), latency, concurrency,
                               cores=min(shards, os.cpu_count() or 1))
    return quiet, loaded, sdk, scans, sharded


def run_probe_bench(endpoints: int = 2000, concurrency: int = 64, median_ms: float = 150.0, rounds: int = 3,
                    seed: int = 1, shards: int = 2, busy: int = 1) -> dict[str, Any]:
    """`rounds` rounds against one fleet (in a process of its own, its counts taken between runs); numbers
    are medians over the rounds, and `history_figures` keeps only the numbers."""
    timeline = bench_timeline(endpoints)
    latency = probe_latency([s["host"] for s in timeline["servers"]], median_ms, seed)
    with tempfile.TemporaryDirectory() as tmp:
        fleet = _RemoteFleet(timeline, latency, Path(tmp))
        try:
            fleet.counts()  # the fleet's start (its certificates) apart from the runs' CPU
            quiet, loaded, sdk, scans, sharded = _rounds(fleet, latency, Path(tmp), concurrency, rounds, shards, busy)
        finally:
            fleet.stop()
    first = scans[0]["counts"]
    figures: dict[str, Any] = {
        "endpoints": endpoints, "concurrency": concurrency, "median_latency_ms": median_ms, "rounds": rounds,
        "busy_processes": busy, "machine_cores": os.cpu_count() or 1, "shards": shards,
        **_prefixed("quiet", _median(quiet)), **_prefixed("loaded", _median(loaded)), **_median(sdk),
        "requests_per_endpoint": quiet[0]["endpoint_requests"] / endpoints,
        "registry_requests": quiet[0]["requests"] - quiet[0]["endpoint_requests"],
        "sdk_requests_per_endpoint": sdk[0]["sdk_requests"] / endpoints,
        "kinds": per_endpoint_kinds(first.get("request_kinds", {}), endpoints),
        "sdk_kinds": per_endpoint_kinds(sdk[0]["sdk_kinds"], endpoints),
        "sdk_failures": sdk[0]["sdk_failures"], "overlaps": first.get("overlaps", [])[:20],
        "round_ratios": [[q["ratio"], lo["ratio"]] for q, lo in zip(quiet, loaded, strict=True)],
        "round_cpu_ms_per_request": [[q["cpu_ms_per_request"], lo["cpu_ms_per_request"]]
                                     for q, lo in zip(quiet, loaded, strict=True)],
        "round_cpu_vs_fleet": [[q["cpu_vs_fleet"], lo["cpu_vs_fleet"]] for q, lo in zip(quiet, loaded, strict=True)],
    }
    if sharded is not None:
        figures.update(_prefixed("sharded", {k: v for k, v in sharded.items() if isinstance(v, int | float)}))
    return figures


def history_figures(figures: dict[str, Any]) -> dict[str, float]:
    """The bench's numbers alone, flat and named (what a history of runs records)."""
    return {k: v for k, v in figures.items() if isinstance(v, int | float) and not isinstance(v, bool)}


def print_overlaps(overlaps: list[dict]) -> None:
    """Each time a host had more than one request in flight, what was open (the fleet's record)."""
    for o in overlaps[:5]:
        still = "; ".join(f"{e['request']} open {e['open_seconds']:.3f} s, {e['ended']}" for e in o["open"])
        print(f"    over one in flight on {o['host']}: {o['request']} arrived while {still}")


def _print_scan(f: dict[str, Any], p: str, title: str) -> None:
    print(f"  {title}")
    print(f"    wall                                {f[p + '_wall_seconds']:8.1f} s   ({f[p + '_ok']:,.0f} ok, "
          f"{f[p + '_requests']:,.0f} requests, max {f[p + '_max_in_flight_per_host']:.0f} in flight per host)")
    print(f"    prober CPU                          {f[p + '_prober_cpu_seconds']:8.1f} s   "
          f"({f[p + '_cpu_ms_per_request']:.3f} ms a request, {f[p + '_cpu_ms_per_endpoint']:.2f} ms an endpoint; "
          f"the fleet's {f[p + '_fleet_cpu_seconds']:.1f} s for the same requests: "
          f"{f[p + '_cpu_vs_fleet']:.2f} x)")
    larger = "CPU" if f[p + "_cpu_bound_seconds"] > f[p + "_latency_bound_seconds"] else "latency"
    print(f"    bounds: latency / CPU               {f[p + '_latency_bound_seconds']:8.1f} s / "
          f"{f[p + '_cpu_bound_seconds']:.1f} s (the larger: {larger})")
    print(f"    ratio wall / larger bound           {f[p + '_ratio']:8.2f} x   (wall / latency bound "
          f"{f[p + '_ratio_to_latency_bound']:.2f} x)")


def print_probe_bench(figures: dict[str, Any]) -> None:
    f = figures
    BENCH_DIR.mkdir(exist_ok=True)
    (BENCH_DIR / "probe.json").write_text(json.dumps(f, indent=2))
    print(f"sevenmaps prober bench: {f['endpoints']:,} fleet endpoints (HTTPS on loopback, median "
          f"{f['median_latency_ms']:.0f} ms injected per request, {f['median_latency_ms'] / 5:.0f}-"
          f"{9 * f['median_latency_ms'] / 5:.0f} ms), concurrency {f['concurrency']}; medians of {f['rounds']} "
          f"rounds on {f['machine_cores']} cores")
    _print_scan(f, "quiet", "the scan, quiet")
    _print_scan(f, "loaded", f"the scan beside {f['busy_processes']} busy process(es)")
    if "sharded_wall_seconds" in f:
        _print_scan(f, "sharded", f"{f['shards']} shards by host, side by side, quiet (once; CPU bound over "
                                  f"{min(f['shards'], f['machine_cores'])} cores)")
    print_overlaps(f.get("overlaps", []))
    print("  ratios by round (quiet, loaded)       "
          + "; ".join(f"{q:.2f} x, {lo:.2f} x" for q, lo in f["round_ratios"]))
    print("  CPU a request by round (quiet, loaded) "
          + "; ".join(f"{q:.3f}, {lo:.3f} ms" for q, lo in f["round_cpu_ms_per_request"]))
    print("  over the fleet's CPU by round          "
          + "; ".join(f"{q:.2f}, {lo:.2f} x" for q, lo in f["round_cpu_vs_fleet"]))
    print(f"  the SDK's client at the same concurrency ({f['sdk_concurrency']}, at most {f['sdk_most_at_once']} "
          f"sessions at once), one session per endpoint")
    print(f"    wall                                {f['sdk_wall_seconds']:8.1f} s   ({f['sdk_answered']:,.0f} "
          f"answered, {f['sdk_failed']:,.0f} failed {f['sdk_failures']}; {f['sdk_requests']:,.0f} requests, max "
          f"{f['sdk_max_in_flight_per_host']:.0f} in flight per host)")
    print(f"    bounds: latency / CPU               {f['sdk_latency_bound_seconds']:8.1f} s / "
          f"{f['sdk_cpu_seconds']:.1f} s; wall over the larger {f['sdk_ratio']:.2f} x")
    print(f"    client CPU                          {f['sdk_cpu_seconds']:8.1f} s   "
          f"({f['sdk_cpu_ms_per_request']:.3f} ms a request, {f['sdk_cpu_ms_per_endpoint']:.2f} ms an endpoint)")
    print(f"    on uvloop, the prober's loop        {f['sdk_uvloop_cpu_seconds']:8.1f} s   "
          f"({f['sdk_uvloop_cpu_ms_per_request']:.3f} ms a request; wall {f['sdk_uvloop_wall_seconds']:.1f} s, "
          f"{f['sdk_uvloop_answered']:,.0f} answered)")
    print(f"  requests per endpoint: ours {f['requests_per_endpoint']:.2f} (and {f['registry_requests']:,.0f} "
          f"registry pages in all), the SDK's {f['sdk_requests_per_endpoint']:.2f}")
    for kind in sorted(set(f["kinds"]) | set(f["sdk_kinds"])):
        print(f"    {kind:<20} ours {f['kinds'].get(kind, 0):4.2f}  SDK {f['sdk_kinds'].get(kind, 0):4.2f}  "
              f"{KIND_WORDS.get(kind, '')}")
    print(f"  ours / the SDK's at equal concurrency: wall {f['wall_vs_sdk']:.2f} x, CPU {f['cpu_vs_sdk']:.2f} x, "
          f"CPU a request {f['cpu_per_request_vs_sdk']:.2f} x (over the SDK on uvloop: "
          f"{f['cpu_per_request_vs_sdk_uvloop']:.2f} x)")
    print(f"figures written to {BENCH_DIR / 'probe.json'}")
    record("probe", history_figures(f))


if __name__ == "__main__":
    print_probe_bench(run_probe_bench())
