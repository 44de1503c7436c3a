"""The prober against the real loopback fleet: every outcome, both transports, both protocol eras,
pagination, redirects, robots.txt, hostile servers, and the connect-time address guard."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import re
import socket

import httpcore
import pytest
import uvloop
from conftest import REFUSED_NAMES

from sevenmaps_pipeline.devtools.fleet.run import Fleet
from sevenmaps_pipeline.probe.check_result import CheckResult
from sevenmaps_pipeline.probe.checker import EndpointCheck
from sevenmaps_pipeline.probe.config import ProbeConfig, Timeouts
from sevenmaps_pipeline.probe.http import build_client
from sevenmaps_pipeline.probe.loop import run_prober
from sevenmaps_pipeline.probe.netguard import GuardedBackend, RefusedAddress
from sevenmaps_pipeline.probe.origins import check_origin
from sevenmaps_pipeline.probe.redirects import redirect_target
from sevenmaps_pipeline.probe.report import owner_hint

# Short caps so hostile servers end quickly; the fleet's slow servers wait longer than these.
FAST = Timeouts(robots_txt=4, initialize=4, notifications_initialized=4, tools_list_per_page=4,
                well_known_per_origin=4, check_overall=8, legacy_sse_endpoint_event=4)
HANG_GUARD = 60  # a check that has not returned by then is a hang: the test fails


@pytest.fixture(scope="module")
def fleet():
    with Fleet(slow_seconds=8) as running:
        yield running


def config_for(fleet: Fleet, **kw) -> ProbeConfig:
    return ProbeConfig(host_map=fleet.host_map, ca_file=fleet.ca_file, timeouts=FAST, **kw)


def check(fleet: Fleet, name: str, **kw):
    host = fleet.host(name)
    config = config_for(fleet, **kw)

    async def go():
        async with build_client(config) as client:
            return await asyncio.wait_for(
                EndpointCheck(client, config, host.url, dt.datetime.now(dt.UTC), host.remote_type).run(), HANG_GUARD)

    return asyncio.run(go())


@pytest.mark.parametrize(("name", "outcome", "status"), [
    ("weather", "ok", 200),
    ("notes", "ok", 200),
    ("calendar", "ok", 200),
    ("brokenlist", "no_tool_list", 200),
    ("secure", "needs_auth", 401),
    ("plainauth", "needs_auth", 401),
    ("scoped", "needs_auth", 403),
    ("paywall", "http_402", 402),
    ("badreq", "http_400", 400),
    ("getonly", "http_405", 405),
    ("crash", "http_500", 500),
    ("htmlpage", "not_mcp", 200),
    ("rpcfail", "rpc_error", 200),
    ("away", "redirect", 307),
    ("sleepy", "timeout", None),
    ("legacy", "skipped", 200),
])
def test_every_outcome_from_a_real_server(fleet, name, outcome, status):
    result = check(fleet, name)
    assert (result.outcome, result.http_status) == (outcome, status), result.outcome_detail
    assert result.outcome_detail
    if outcome != "ok":
        assert result.tools is None


def test_unreachable_when_the_host_refuses_connections(fleet):
    fleet.set_day(4)  # the "outage" server is down on days 3-9
    try:
        result = check(fleet, "outage")
    finally:
        fleet.set_day(0)
    assert result.outcome == "unreachable"
    assert "refused" in result.outcome_detail


def test_a_broken_connection_is_retried_once_and_cookies_never_come_back():
    with Fleet() as own:  # a fresh fleet: the flaky server breaks only its first connection
        flaky = check(own, "flaky")
        severed = check(own, "severed")
    assert flaky.outcome == "ok", flaky.outcome_detail  # the server refuses any request carrying a cookie
    assert any("retrying once" in line for line in flaky.transcript)
    assert severed.outcome == "unreachable" and "connection broken twice" in severed.outcome_detail


def test_sse_and_json_answers_of_the_handshake_era(fleet):
    sse, js = check(fleet, "weather"), check(fleet, "notes")
    assert any("text/event-stream" in line for line in sse.transcript)
    assert any("application/json" in line and "initialize" in line for line in js.transcript)
    for result, tools in ((sse, {"get_forecast", "get_alerts"}), (js, {"list_notes", "create_note", "delete_note"})):
        assert result.protocol_version == "2025-06-18"
        assert {t["name"] for t in result.tools} == tools
        assert result.tool_list_complete is True and result.pages_read == 1
    assert sse.server_info_name == "weather" and sse.server_info_version == "1.0.0"


def test_2026_07_28_servers_are_read_through_discover_not_misread_as_down(fleet):
    result = check(fleet, "calendar")
    assert result.outcome == "ok"
    assert result.protocol_version == "2026-07-28"
    assert result.discover_supported is True
    assert (result.ttl_ms, result.cache_scope) == (3_600_000, "public")
    assert {t["name"] for t in result.tools} == {"list_events", "book_meeting"}


def test_pagination_follows_next_cursor_and_stops_on_a_cycle(fleet):
    paged = check(fleet, "catalog")
    assert (paged.outcome, len(paged.tools), paged.pages_read, paged.tool_list_complete) == ("ok", 7, 4, True)
    cycle = check(fleet, "loop")
    assert cycle.outcome == "ok"
    assert cycle.pages_read == 2 and cycle.tool_list_complete is False
    assert any("cursor cycle" in line for line in cycle.transcript)


def test_pages_are_capped(fleet):
    capped = check(fleet, "catalog", max_pages=2)
    assert (len(capped.tools), capped.pages_read, capped.tool_list_complete) == (4, 2, False)


def test_auth_answers_keep_www_authenticate_and_rfc9728_metadata(fleet):
    with_prm, plain = check(fleet, "secure"), check(fleet, "plainauth")
    assert with_prm.resource_metadata_url == "https://mcp.secure.test/.well-known/oauth-protected-resource/mcp"
    assert "invalid_token" in with_prm.www_authenticate
    assert plain.resource_metadata_url is None and plain.www_authenticate is None


def test_402_keeps_the_payment_body(fleet):
    result = check(fleet, "paywall")
    assert json.loads(result.payment_json)["accepts"][0]["payTo"] == "0x1111111111111111111111111111111111111111"


def test_redirects_within_the_registrable_domain_are_followed_once(fleet):
    hop = check(fleet, "hop")
    assert hop.outcome == "ok" and hop.redirect_location == "https://api.hop.test/mcp"
    away = check(fleet, "away")
    assert away.outcome == "redirect" and away.redirect_location == "https://mcp.elsewhere.test/mcp"
    assert "another domain" in away.outcome_detail
    twice = check(fleet, "twohop")
    assert twice.outcome == "redirect" and "only one is followed" in twice.outcome_detail


@pytest.mark.parametrize(("url", "location", "followed"), [
    ("https://1.1.0.1/mcp", "https://8.8.0.1/mcp", False),
    ("https://127.0.0.2/mcp", "https://10.0.0.2/mcp", False),
    ("https://1.1.0.1/mcp", "https://1.1.0.1:8443/mcp", True),
    ("https://127.0.0.1/mcp", "https://127.1/mcp", True),  # the same address, as a browser reads it
    ("https://[::1]/mcp", "https://[::2]/mcp", False),
    ("https://a.example.com/mcp", "https://b.example.com/mcp", True),
    # names with no registrable domain: only the very same host
    ("https://localhost/mcp", "https://intranet/mcp", False),
    ("https://ai/mcp", "https://io/mcp", False),
    ("https://h2single/mcp", "https://localhost/mcp", False),
    ("https://intranet/mcp", "https://intranet:8443/other", True),
    # a name and its ASCII (punycode) form are one domain, either way round
    ("https://bücher.example/mcp", "https://www.xn--bcher-kva.example/mcp", True),
    ("https://www.xn--bcher-kva.example/mcp", "https://bücher.example/mcp", True),
    ("https://bücher.example/mcp", "https://buecher.example/mcp", False),
    # as the client encodes them (IDNA 2008): faß is not fass
    ("https://fass.example/mcp", "https://faß.example/mcp", False),
    ("https://faß.example/mcp", "https://xn--fa-hia.example/mcp", True),
    # a "%" after an IPv4 literal makes a name under another domain, not that address
    ("https://192.0.2.5/mcp", "https://192.0.2.5%.attacker.example/mcp", False),
    # never a step down from https; a plain-http URL (an owner's, under --allow-private) may keep to plain http
    # on its own site (a framework's /mcp -> /mcp/), never leave it
    ("https://a.example.com/mcp", "http://a.example.com/mcp/", False),
    ("http://127.0.0.1:8000/mcp", "/mcp/", True),
    ("http://a.example.com/mcp", "http://b.example.com/mcp/", True),
    ("http://a.example.com/mcp", "http://other.example.org/mcp/", False),
    ("http://a.example.com/mcp", "ftp://a.example.com/mcp/", False),
])
def test_an_ip_literal_redirects_only_to_the_same_address(url, location, followed):
    _, why = redirect_target(url, location)
    assert (why is None) is followed, why


def test_legacy_sse_endpoints_are_opened_for_their_endpoint_event_only(fleet):
    result = check(fleet, "legacy")
    assert result.outcome == "skipped" and result.skip_reason == "sse-only remote"
    assert "endpoint event after" in result.outcome_detail and "/messages/" in result.outcome_detail


@pytest.mark.parametrize(("name", "outcome", "detail"), [
    ("stream", "timeout", "no complete answer to initialize"),
    ("huge", "not_mcp", "exceeds 1,048,576 bytes"),
    ("nested", "not_mcp", "nested too deeply"),
    ("mojibake", "not_mcp", "not valid UTF-8"),
    ("drip", "timeout", "no complete answer to initialize"),
])
def test_hostile_servers_end_within_their_caps_with_an_outcome(fleet, name, outcome, detail):
    result = check(fleet, name)
    assert result.outcome == outcome
    assert detail in result.outcome_detail


def test_the_five_minute_cap_applies_only_when_asked(fleet):
    # Steps of 12 s and a server that needs 8 s: a daily check waits (and gets its not-MCP answer); the
    # five-minute check's whole-check cap of 2 s ends it first.
    slow = Timeouts(initialize=12, notifications_initialized=12, tools_list_per_page=12, check_overall=2)
    host = fleet.host("sleepy")
    config = ProbeConfig(host_map=fleet.host_map, ca_file=fleet.ca_file, timeouts=slow)

    async def go(overall):
        async with build_client(config) as client:
            return await EndpointCheck(client, config, host.url, dt.datetime.now(dt.UTC), overall=overall).run()

    assert asyncio.run(go(None)).outcome == "not_mcp"
    result = asyncio.run(go(slow.check_overall))
    assert result.outcome == "timeout" and "whole check exceeded 2 s" in result.outcome_detail


def test_a_name_resolving_to_loopback_is_refused_at_connect_time(fleet):
    async def connect(backend: GuardedBackend):
        stream = await backend.connect_tcp("localhost", fleet.port, timeout=5)
        await stream.aclose()

    with pytest.raises(RefusedAddress, match="non-public address"):
        asyncio.run(connect(GuardedBackend()))
    asyncio.run(connect(GuardedBackend(allow_private=True)))  # `sevenmaps probe --allow-private`

    config = ProbeConfig(timeouts=FAST, ca_file=fleet.ca_file)

    async def go():
        async with build_client(config) as client:
            return await EndpointCheck(client, config, f"https://localhost:{fleet.port}/mcp",
                                       dt.datetime.now(dt.UTC)).run()

    result = asyncio.run(go())
    assert result.outcome == "skipped" and "non-public address" in result.outcome_detail


@pytest.mark.parametrize("run", [asyncio.run, run_prober], ids=["asyncio", "the prober's loop (uvloop)"])
def test_fleet_names_resolve_only_through_the_host_map(fleet, run):
    """Without the host map a fleet name goes to the system resolver, which in the tests resolves loopback
    names only (tests/conftest.py): the name is refused there, and no DNS query leaves the machine. On the
    prober's own loop too, whose resolver (libuv's) the guard never uses (probe/loop.py)."""
    async def connect():
        await GuardedBackend().connect_tcp("mcp.weather.test", 443, timeout=5)

    before = len(REFUSED_NAMES)
    with pytest.raises(httpcore.ConnectError, match="cannot resolve mcp.weather.test"):
        run(connect())
    assert REFUSED_NAMES[before:] == ["mcp.weather.test"]


def test_the_prober_runs_on_uvloop():
    async def loop_type():
        return type(asyncio.get_running_loop())

    assert run_prober(loop_type()) is uvloop.Loop


@pytest.mark.parametrize("name", ["mcp.weather.test", "example.invalid.", "localhost.example"])
def test_the_tests_never_resolve_a_name_that_is_not_loopback(name):
    with pytest.raises(socket.gaierror):
        socket.getaddrinfo(name, 443)
    assert socket.getaddrinfo("localhost", 443) and socket.getaddrinfo("127.0.0.1", 443)


@pytest.mark.parametrize(("name", "policy", "allowed"), [
    ("robots", "rules", False),       # User-agent: 7Maps-bot / Disallow: /
    ("robotsall", "rules", False),    # User-agent: * / Disallow: /mcp
    ("robotsother", "rules", True),   # * disallows, but the 7Maps-bot group allows: the specific group wins
    ("robotsdown", "disallow_all", False),  # 5xx: assume complete disallow (RFC 9309)
    ("weather", "allow_all", True),   # 404: no rules
])
def test_robots_txt_rules(fleet, name, policy, allowed):
    host = fleet.host(name)
    config = config_for(fleet)

    async def go():
        async with build_client(config) as client:
            return await check_origin(client, config, f"https://{host.host}", dt.datetime.now(dt.UTC))

    origin = asyncio.run(go())
    assert origin.robots_policy == policy
    assert origin.allows(host.url) is allowed


def test_well_known_documents_are_read_once_per_origin(fleet):
    host = fleet.host("agentcard")
    config = config_for(fleet)

    async def go():
        async with build_client(config) as client:
            return await check_origin(client, config, f"https://{host.host}", dt.datetime.now(dt.UTC))

    row = asyncio.run(go()).row()
    assert row["agent_card_status"] == 200 and json.loads(row["agent_card_json"])["name"] == "agentcard"
    assert row["oauth_protected_resource_status"] == 404 and row["agent_json_status"] == 404


def test_probe_cli_json_carries_what_an_owner_needs(fleet, capsys):
    from sevenmaps_pipeline.cli import main

    host = fleet.host("catalog")
    code = main(["probe", host.url, "--json", "--resolve", f"{host.host}:{fleet.port}", "--ca-file",
                 str(fleet.ca_file)])
    captured = capsys.readouterr()
    seen = json.loads(captured.out)
    assert code == 0
    # Each step shows as it goes, on stderr (stdout stays the JSON alone): robots.txt, then each request.
    steps = [line.strip() for line in captured.err.splitlines()]
    assert steps[0].startswith("... robots.txt: reading https://") and steps[1].startswith("... robots.txt: ")
    assert steps[2] == "... initialize: waiting up to 8 s ..."
    assert re.fullmatch(r"\.\.\. initialize: HTTP 200 in \d+ ms", steps[3])
    assert sum("tools/list" in s and "HTTP 200" in s for s in steps) == 4  # one line per page
    assert main(["probe", host.url, "--quiet", "--resolve", f"{host.host}:{fleet.port}", "--ca-file",
                 str(fleet.ca_file)]) == 0
    assert capsys.readouterr().err == ""
    for key in ("outcome", "outcome_detail", "http_status", "protocol_version", "server_info", "tool_count", "tools",
                "pages_read", "tool_list_complete", "handshake_ms"):
        assert key in seen
    assert (seen["outcome"], seen["tool_count"], seen["pages_read"]) == ("ok", 7, 4)
    assert seen["server_info"] == {"name": "catalog", "version": "1.0.0"}


def test_the_owner_hint_follows_our_skips_never_what_a_server_said():
    at = dt.datetime(2026, 12, 6, tzinfo=dt.UTC)
    quoted = CheckResult(url="https://x.example/mcp", started_at=at, outcome="needs_auth",
                         outcome_detail="HTTP 403: Forbidden: your IP address is not on the allow list on initialize")
    assert owner_hint(quoted) is None
    skipped = CheckResult(url="https://127.0.0.1/mcp", started_at=at, outcome="skipped", skip_reason="IP address",
                          outcome_detail="IP address: never contacted")
    assert owner_hint(skipped) is not None and "--allow-private" in owner_hint(skipped)


def test_probe_cli_applies_the_listing_rules_unless_allow_private(capsys):
    from sevenmaps_pipeline.cli import main

    assert main(["probe", "http://localhost:9/mcp", "--json"]) == 3
    seen = json.loads(capsys.readouterr().out)
    assert seen["outcome"] == "skipped" and seen["skip_reason"] == "non-https URL"
    assert main(["probe", "http://localhost:9/mcp", "--json", "--allow-private"]) == 3
    seen = json.loads(capsys.readouterr().out)
    assert seen["outcome"] == "unreachable"  # it was really tried, on loopback
