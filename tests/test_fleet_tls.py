"""The fleet serves thousands of names the way large hosts do: by SNI, from certificates of at most 100
names each, or one wildcard certificate for a gateway's subdomains; the prober verifies each for real."""

from __future__ import annotations

import asyncio
import datetime as dt
import socket
import ssl
from typing import Any

import pytest

from sevenmaps_pipeline.devtools.bench_probe import bench_timeline
from sevenmaps_pipeline.devtools.fleet.run import Fleet
from sevenmaps_pipeline.devtools.fleet.tls import SANS_PER_CERTIFICATE
from sevenmaps_pipeline.probe.config import ProbeConfig
from sevenmaps_pipeline.probe.scan import scan

HOSTS = 450  # five certificates of 100 names


@pytest.fixture(scope="module")
def fleet():
    timeline = bench_timeline(HOSTS)
    for i in range(3):  # a gateway: one wildcard certificate for its per-server names
        timeline["servers"].append({"name": f"gw{i}", "host": f"u{i}.gateway.test", "kind": "bench",
                                    "registry_name": f"test.gateway/u{i}",
                                    "timeline": [{"days": "all", "tools": "weather_v2", "version": "1.0.0"}]})
    timeline["wildcard_domains"] = ["gateway.test"]
    with Fleet(timeline=timeline) as running:
        yield running


def _peer_names(fleet: Fleet, server_name: str) -> list[str]:
    context = ssl.create_default_context(cafile=str(fleet.ca_file))
    with socket.create_connection(("127.0.0.1", fleet.port), timeout=10) as raw, \
            context.wrap_socket(raw, server_hostname=server_name) as tls:
        cert: Any = tls.getpeercert()
    return [str(value) for kind, value in cert["subjectAltName"] if kind == "DNS"]


def test_each_name_gets_a_certificate_that_names_it_and_no_certificate_names_more_than_100(fleet):
    seen = set()
    for name in ("mcp.bench0.test", "mcp.bench150.test", "mcp.bench250.test", "registry.test"):
        names = _peer_names(fleet, name)
        assert name in names and len(names) <= SANS_PER_CERTIFICATE
        seen.add(tuple(names))
    assert len(seen) == 4  # four different bundles
    gateway = _peer_names(fleet, "u2.gateway.test")
    assert "*.gateway.test" in gateway and not any(n.endswith(".gateway.test") and n[0] != "*" for n in gateway)


def test_a_name_no_certificate_carries_fails_verification(fleet):
    with pytest.raises(ssl.SSLCertVerificationError):
        _peer_names(fleet, "mcp.unknown.test")


def test_the_prober_checks_hosts_across_every_certificate(fleet):
    hosts = ["mcp.bench0.test", "mcp.bench120.test", "mcp.bench333.test", "mcp.bench449.test", "u1.gateway.test"]
    listings = [{"server_key": h, "url": f"https://{h}/mcp", "listing": "probe", "server_name": f"test.{h}/b",
                 "remote_type": "streamable-http"} for h in hosts]
    day = dt.date(2026, 11, 20)
    config = ProbeConfig(host_map=fleet.host_map, ca_file=fleet.ca_file)
    result = asyncio.run(scan(listings, day, "run-1", config, lambda: dt.datetime(2026, 11, 20, 3, tzinfo=dt.UTC)))
    outcomes = {row["url"]: row["outcome"] for row in result.probe_rows}
    assert outcomes == {f"https://{h}/mcp": "ok" for h in hosts}


def test_the_longest_host_queue_starts_first_and_a_gateways_paths_all_answer(fleet):
    """A host with many endpoints is checked one request at a time, so it starts first (with one slot, its
    endpoints come before a host with one)."""
    urls = ["https://mcp.bench1.test/mcp", "https://mcp.bench2.test/mcp", "https://mcp.bench2.test/u1/mcp",
            "https://mcp.bench2.test/u2/mcp"]
    listings = [{"server_key": u[8:], "url": u, "listing": "probe", "server_name": "test.x/y",
                 "remote_type": "streamable-http"} for u in urls]
    config = ProbeConfig(host_map=fleet.host_map, ca_file=fleet.ca_file, concurrency=1)
    result = asyncio.run(scan(listings, dt.date(2026, 11, 20), "run-1", config,
                              lambda: dt.datetime(2026, 11, 20, 3, tzinfo=dt.UTC)))
    rows = result.probe_rows
    assert [r["url"] for r in rows] == urls[1:] + urls[:1]
    assert {r["outcome"] for r in rows} == {"ok"}


def test_the_host_map_is_normalised_once_and_shared_by_every_hosts_client():
    from sevenmaps_pipeline.probe.config import HostMap
    from sevenmaps_pipeline.probe.netguard import GuardedBackend

    config = ProbeConfig(host_map={"MCP.Bench0.Test.": 4443})
    assert config.host_map == {"mcp.bench0.test": 4443} and isinstance(config.host_map, HostMap)
    assert GuardedBackend(config.host_map)._host_map is config.host_map
