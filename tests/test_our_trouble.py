"""Our machine's trouble is never a server's (probe/ours.py, docs/methodology.md "Our machine's trouble"):
out of file descriptors, our resolver failing or silent, lookups queued behind each other: n, never d."""

from __future__ import annotations

import asyncio
import datetime as dt
import errno
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpcore
import httpx
import pytest

from sevenmaps_pipeline.devtools.fleet.run import Fleet
from sevenmaps_pipeline.probe import netguard
from sevenmaps_pipeline.probe import ours as ours_module
from sevenmaps_pipeline.probe.checker import EndpointCheck
from sevenmaps_pipeline.probe.config import ProbeConfig, Timeouts
from sevenmaps_pipeline.probe.http import build_client
from sevenmaps_pipeline.probe.ours import PendingLookup, our_trouble, silent_resolver
from sevenmaps_pipeline.rules.methods import OVERLOAD_PARAMS

FAST = Timeouts(robots_txt=4, initialize=8, notifications_initialized=4, tools_list_per_page=4,
                well_known_per_origin=4, check_overall=30, legacy_sse_endpoint_event=4)


@pytest.fixture(scope="module")
def fleet():
    with Fleet() as running:
        yield running


@pytest.fixture
def resolver(monkeypatch, fleet):
    """The system's resolver as a test sets it: name -> an address (loopback), an errno or error to raise, or a
    callable run before answering. Numeric addresses (the connection's own) are read as the system reads them."""
    real = socket.getaddrinfo
    answers: dict[str, object] = {}

    def lookup(host, port, *args, **kwargs):
        if kwargs.get("flags", 0) & socket.AI_NUMERICHOST:
            return real(host, port, *args, **kwargs)
        answer = answers.get(host, socket.EAI_NONAME)
        if callable(answer):
            answer = answer()
        if isinstance(answer, OSError):
            raise answer
        if answer is not True:
            raise socket.gaierror(answer, f"lookup failed ({answer})")
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]

    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    return answers


def _check(fleet: Fleet, *names: str, timeouts: Timeouts = FAST) -> list:
    """The fleet's endpoints of `names`, checked at once, as the system's resolver resolves their names."""
    config = ProbeConfig(ca_file=fleet.ca_file, timeouts=timeouts, allow_private=True)

    async def one(name: str):
        host = fleet.host(name).host
        url = fleet.host(name).url.replace(f"//{host}/", f"//{host}:{fleet.host_map[host]}/")
        async with build_client(config) as client:
            return await EndpointCheck(client, config, url, dt.datetime.now(dt.UTC)).run()

    async def every():
        return await asyncio.gather(*(one(name) for name in names))

    return asyncio.run(every())


def test_our_resolver_silent_for_every_name_is_n_never_d(fleet, resolver):
    resolver[fleet.host("weather").host] = socket.EAI_AGAIN
    [check] = _check(fleet, "weather")
    assert (check.outcome, check.skip_reason) == ("not_checked", "prober_resources"), check.outcome_detail
    assert "our resolver" in check.outcome_detail and "asked twice" in check.outcome_detail


def test_a_name_our_resolver_cannot_answer_while_it_answers_others_is_the_servers(fleet, resolver):
    def answers_later():
        time.sleep(0.3)  # after the failing name was first asked
        return True

    resolver[fleet.host("weather").host] = socket.EAI_AGAIN
    resolver[fleet.host("notes").host] = answers_later
    broken, fine = _check(fleet, "weather", "notes")
    assert fine.outcome == "ok"
    assert broken.outcome == "unreachable", broken.outcome_detail
    assert "our resolver answered other names meanwhile" in broken.outcome_detail


@pytest.mark.parametrize(("failure", "outcome"), [
    (socket.EAI_NONAME, "unreachable"),  # the name does not exist: theirs
    (OSError(errno.EMFILE, "Too many open files"), "not_checked"),  # the lookup could not even start: ours
    (socket.EAI_SYSTEM, "not_checked"),
    (socket.EAI_MEMORY, "not_checked"),
])
def test_a_failed_lookup_is_told_as_theirs_or_ours(fleet, resolver, failure, outcome):
    resolver[fleet.host("weather").host] = failure
    [check] = _check(fleet, "weather")
    assert check.outcome == outcome, check.outcome_detail


def test_lookups_never_wait_in_our_queue_behind_each_other(fleet, resolver):
    """Every lookup in a thread of its own: 24 names held until all 24 are being looked up at once (asyncio's
    default pool, min(32, cores + 4) threads, would have queued them inside their checks' steps)."""
    names = ["weather", "notes", "calendar"]
    together, asked = threading.Barrier(24), iter(range(24))

    def held():
        if next(asked, None) is not None:  # the first 24 lookups (a later connection's answers at once)
            together.wait(timeout=60)
        return True

    for name in names:
        resolver[fleet.host(name).host] = held
    assert OVERLOAD_PARAMS["lookup_threads"] >= 24
    checks = _check(fleet, *(names * 8))
    assert [c.outcome for c in checks] == ["ok"] * 24, [c.outcome_detail for c in checks if c.outcome != "ok"]


@pytest.mark.parametrize(("error", "ours"), [
    (OSError(errno.EMFILE, "Too many open files"), True),
    (OSError(errno.EADDRNOTAVAIL, "Cannot assign requested address"), True),
    (OSError(errno.ENETUNREACH, "Network is unreachable"), False),  # ours only if no route here (below)
    (OSError(errno.ECONNREFUSED, "Connection refused"), False),
    (OSError(errno.EHOSTUNREACH, "No route to host"), False),
    (socket.gaierror(socket.EAI_NONAME, "Name or service not known"), False),
])
def test_the_kernels_words_tell_whose_trouble_a_failed_connection_is(error, ours):
    try:
        try:
            raise error
        except OSError as exc:
            raise httpx.ConnectError(str(exc)) from exc
    except httpx.ConnectError as wrapped:
        assert (our_trouble(wrapped) is not None) is ours


SCAN_OUT_OF_FILES = """
import datetime as dt, json, os, resource, sys
from pathlib import Path
import pyarrow.parquet as pq
from sevenmaps_pipeline import curated
from sevenmaps_pipeline.devtools.bench_probe import _RemoteFleet, bench_timeline
from sevenmaps_pipeline.lake.paths import LakePaths
from sevenmaps_pipeline.probe.config import ProbeConfig
from sevenmaps_pipeline.probe.run import ReplayClock, scan_day

work = Path(sys.argv[1])
timeline = bench_timeline(60)
fleet = _RemoteFleet(timeline, {s["host"]: 0.05 for s in timeline["servers"]}, work)
try:
    lake, day = LakePaths.at(work / "lake"), dt.date(2026, 11, 10)
    config = ProbeConfig(host_map=fleet.host_map, ca_file=fleet.ca_file, concurrency=32)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    # The prober's own limit only (the fleet is a process of its own): a few more than it has open now.
    resource.setrlimit(resource.RLIMIT_NOFILE, (len(os.listdir("/proc/self/fd")) + 24, hard))
    try:
        scan_day(lake, day, fleet.registry_url, config, ReplayClock(day))
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    rows = [r for p in lake.raw_files("probes", day) for r in pq.read_table(p).to_pylist()]
    codes = [r["code"] for r in pq.read_table(curated.build_daily_status(lake, day).path).to_pylist()]
    print(json.dumps({"rows": [[r["outcome"], r["skip_reason"], r["outcome_detail"]] for r in rows], "codes": codes}))
finally:
    fleet.stop()
"""


def test_a_prober_out_of_file_descriptors_blames_no_server_and_checks_again(tmp_path):
    """At 32 checks at once with 24 descriptors to spare, most connections fail in our own socket() with
    EMFILE: under overload-1.0 each was `unreachable`, d. Now each is not_checked (prober_resources), asked
    again at the end of the scan at an eighth of the concurrency, and answers: every endpoint o."""
    done = subprocess.run([sys.executable, "-c", SCAN_OUT_OF_FILES, str(tmp_path)], capture_output=True, text=True,
                          timeout=600, cwd=Path(__file__).parent.parent)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    short = [r for r in seen["rows"] if r[0] == "not_checked"]
    assert short and {r[1] for r in short} == {"prober_resources"}, seen["rows"][:5]
    assert all("Too many open files" in r[2] for r in short)
    assert not [r for r in seen["rows"] if r[0] not in ("ok", "not_checked")]
    assert seen["codes"] == ["o"] * 60


def test_a_resolver_silent_past_the_steps_time_is_ours_unless_it_answered_others(fleet, resolver, monkeypatch):
    """helper-90: glibc gives up on a silent nameserver after about 10 s, the initialize step's 8 s first: the
    check was a timeout, d, whether the silence was our resolver's or the name's own nameservers'. (A step of
    2 s here, and a lookup silent for 1 s counts, in place of 8 s and 5 s.)"""
    monkeypatch.setitem(OVERLOAD_PARAMS, "silent_lookup_s", 1.0)
    release = threading.Event()

    def silent():
        release.wait(30)
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    def later():
        time.sleep(0.5)  # after the silent name was asked
        return True

    quick = Timeouts(robots_txt=4, initialize=2, notifications_initialized=4, tools_list_per_page=4,
                     well_known_per_origin=4, check_overall=30, legacy_sse_endpoint_event=4)
    resolver[fleet.host("weather").host] = silent
    try:
        [alone] = _check(fleet, "weather", timeouts=quick)
        resolver[fleet.host("notes").host] = later
        silent_one, answered = _check(fleet, "weather", "notes", timeouts=quick)
    finally:
        release.set()
    assert (alone.outcome, alone.skip_reason) == ("not_checked", "prober_resources"), alone.outcome_detail
    assert "our resolver: no answer for mcp.weather.test" in alone.outcome_detail
    assert answered.outcome == "ok"
    assert silent_one.outcome == "timeout", silent_one.outcome_detail  # the name's own nameservers: theirs


def test_a_lookup_begun_late_in_its_step_is_no_sign_of_our_resolver(monkeypatch):
    """helper-91: a server that stalls most of its step and then breaks the connection made the retry's lookup
    pending when the step ended: it was judged our resolver's silence (n) after a fraction of a second."""
    monkeypatch.setattr(ours_module.RESOLVER, "last_answer", float("-inf"))  # no other lookup answered lately
    assert silent_resolver(PendingLookup("slow.test", time.monotonic() - 0.4)) is None
    long_ago = PendingLookup("slow.test", time.monotonic() - OVERLOAD_PARAMS["silent_lookup_s"] - 1)
    assert "our resolver: no answer for slow.test" in (silent_resolver(long_ago) or "")


@pytest.mark.parametrize(("errors", "here", "ours"), [
    ([errno.ENETUNREACH], True, True),  # no route from this machine (no IPv6 here)
    ([errno.ENETUNREACH], False, False),  # a router on the way said so (a firewall's reject): theirs
    ([errno.ENETUNREACH, errno.ECONNREFUSED], True, False),  # no IPv6 here, and the IPv4 address refused
    ([errno.EMFILE, errno.ECONNREFUSED], True, False),
    ([errno.EMFILE, errno.EMFILE], True, True),
])
def test_a_connection_is_ours_only_if_every_address_failed_for_our_reasons(monkeypatch, errors, here, ours):
    """helper-90: ENETUNREACH was always ours, so a server behind a firewall that rejects with ICMP
    net-prohibited was n for good, and a dual-stack server that was down was n on a machine without IPv6."""
    addresses = [f"2001:db8::{i + 1}" for i in range(len(errors))]
    failing = dict(zip(addresses, errors, strict=True))

    async def connect(self, address, port, *args, **kwargs):
        code = failing[address]
        try:
            raise OSError(code, os.strerror(code))
        except OSError as exc:
            raise httpcore.ConnectError(str(exc)) from exc

    def lookup(host, port, *args, **kwargs):
        return [(socket.AF_INET6, socket.SOCK_STREAM, 6, "", (a, port, 0, 0)) for a in addresses]

    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    monkeypatch.setattr(netguard.AsyncioBackend, "connect_tcp", connect)
    monkeypatch.setattr(ours_module, "no_route_from_here", lambda address, port: here)
    monkeypatch.setattr(netguard, "is_public_address", lambda address: True)
    with pytest.raises(httpcore.ConnectError) as raised:
        asyncio.run(netguard.GuardedBackend().connect_tcp("dual.test", 443, timeout=5))
    assert (our_trouble(raised.value) is not None) is ours
