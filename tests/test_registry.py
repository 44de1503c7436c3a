"""Registry client and listing rules: pagination, fallbacks, malformed entries, every skip reason."""

from __future__ import annotations

import asyncio
import datetime as dt
import gzip
import json
import socket
import threading
import time

import pytest
from conftest import served_on_loopback
from hypothesis import given, settings
from hypothesis import strategies as st

from sevenmaps_pipeline.devtools.fleet.run import Fleet
from sevenmaps_pipeline.lake.keys import server_key
from sevenmaps_pipeline.lake.parquet_io import write_parquet
from sevenmaps_pipeline.lake.schemas import RAW_REGISTRY
from sevenmaps_pipeline.probe.config import ProbeConfig
from sevenmaps_pipeline.probe.http import build_client
from sevenmaps_pipeline.probe.run import _snapshot_rows, _table, take_snapshot
from sevenmaps_pipeline.registry.client import (
    PAGE_MAX_BYTES,
    RegistryError,
    _Versions,
    fetch_snapshot,
    rows_for_entry,
)
from sevenmaps_pipeline.registry.listing import (
    ListingDecision,
    Malformed,
    SkipReason,
    carries_credentials,
    listing_decision,
    redact_auth_params,
    redact_json_text,
    redact_text,
    redact_value,
    redacted_url,
)
from sevenmaps_pipeline.rules import psl
from sevenmaps_pipeline.rules.http_values import retry_after_seconds
from sevenmaps_pipeline.rules.psl import registrable_domain

DAY = dt.date(2026, 11, 20)
NOW = dt.datetime(2026, 11, 20, 3, tzinfo=dt.UTC)


@pytest.mark.parametrize(("url", "remote_type", "decision"), [
    ("https://mcp.example.com/mcp", "streamable-http", ("probe", None)),
    ("https://mcp.example.com/sse", "sse", ("skip", "sse-only remote")),
    ("https://{tenant}.example.com/mcp", "streamable-http", ("skip", "templated URL")),
    ("{baseUrl}/mcp", "streamable-http", ("skip", "templated URL")),
    ("http://mcp.example.com/mcp", "streamable-http", ("skip", "non-https URL")),
    ("http://localhost/sse", "sse", ("skip", "non-https URL")),
    ("https://203.0.113.9/mcp", "streamable-http", ("skip", "IP address")),
    ("https://[2001:db8::1]:8443/mcp", "streamable-http", ("skip", "IP address")),
    ("https://[::1]/mcp", "streamable-http", ("skip", "IP address")),
    ("https://[fe80::1%25eth0]/mcp", "streamable-http", ("skip", "IP address")),
    # Hosts a browser's URL parser (WHATWG) reads as IPv4, as the guard does at connect time: all 127.0.0.1.
    ("https://127.1/mcp", "streamable-http", ("skip", "IP address")),
    ("https://0x7f.0.0.1/mcp", "streamable-http", ("skip", "IP address")),
    ("https://2130706433/mcp", "streamable-http", ("skip", "IP address")),
    ("https://0177.0.0.1/mcp", "streamable-http", ("skip", "IP address")),
    ("https://0x7f000001./mcp", "streamable-http", ("skip", "IP address")),
    ("https://1.2.3.999/mcp", "streamable-http", ("malformed", None)),  # ends in a number, no IPv4 address
    ("https://mcp.v2.example1/mcp", "streamable-http", ("probe", None)),  # a name that only looks numeric
    ("https://localhost/mcp", "streamable-http", ("skip", "localhost or private name")),
    ("https://localhost./mcp", "streamable-http", ("skip", "localhost or private name")),
    ("https://api.localhost/mcp", "streamable-http", ("skip", "localhost or private name")),
    ("https://intranet/mcp", "streamable-http", ("skip", "localhost or private name")),
    ("https://mcp.corp.internal/mcp", "streamable-http", ("skip", "localhost or private name")),
    ("https://printer.local/mcp", "streamable-http", ("skip", "localhost or private name")),
    ("https://router.home.arpa/mcp", "streamable-http", ("skip", "localhost or private name")),
    ("https://mcp.weather.test/mcp", "streamable-http", ("skip", "localhost or private name")),
    ("https://mcp.optout.example.com/mcp", "streamable-http", ("skip", "host opted out")),
    ("https://optout.example.com/mcp", "sse", ("skip", "host opted out")),
    ("https://mcp.example.com:99999/mcp", "streamable-http", ("malformed", None)),
    (None, "streamable-http", ("malformed", "remote has no URL")),
    ("https://mcp.example.com/mcp", "stdio", ("malformed", "unknown remote type 'stdio'")),
])
def test_listing_rules(url, remote_type, decision):
    got = listing_decision(url, remote_type, opted_out={"optout.example.com"})
    assert got.verdict == decision[0]
    if decision[1] is not None:
        assert got.text == decision[1]
    # the kind is named, and the stored text begins with it
    assert (got.kind is None) == (got.verdict == "probe")
    assert got.kind is None or got.text.startswith(str(got.kind))
    assert got.verdict != "skip" or isinstance(got.kind, SkipReason)
    assert got.verdict != "malformed" or isinstance(got.kind, Malformed)


def test_fleet_names_are_public_only_through_the_host_map():
    assert listing_decision("https://mcp.weather.test/mcp", "streamable-http",
                            host_map={"mcp.weather.test": 1}) == ListingDecision("probe")
    assert listing_decision("https://mcp.weather.test/mcp", "streamable-http").kind is SkipReason.PRIVATE


def test_registrable_domains_come_from_the_shipped_public_suffix_list():
    assert registrable_domain("api.example.co.uk") == "example.co.uk"
    assert registrable_domain("a.b.github.io") == "b.github.io"  # a private-section suffix
    assert registrable_domain("mcp.hop.test") == registrable_domain("api.hop.test") == "hop.test"
    assert registrable_domain("co.uk") is None


def _library(host: str) -> str | None:
    """The publicsuffixlist package's own answer, which registrable_domain walks its rules faster to give."""
    return psl._psl().privatesuffix(host.lower().rstrip("."))


def test_registrable_domains_agree_with_the_library_on_every_rule_of_the_list():
    rules = psl._rules().rules
    assert len(rules) > 9_000  # the whole shipped list, its IDNA-encoded forms included
    hosts = []
    for rule in sorted(rules):
        name = rule.removeprefix("!").removeprefix("*.")
        wild = rule.startswith("*.")
        hosts += [name, f"a.{name}", f"b.a.{name}", f"MCP.B.a.{name}.", f"x.{name}" if wild else f"api.{name}"]
    disagree = [h for h in hosts if registrable_domain(h) != _library(h)]
    assert not disagree, disagree[:10]
    # The rule kinds on known hosts: exception (!www.ck under *.ck), wildcard, private section, unknown TLD.
    assert registrable_domain("www.ck") == "www.ck" and registrable_domain("a.b.ck") == "a.b.ck"
    assert registrable_domain("b.ck") is None and registrable_domain("x.y.unknowntld") == "y.unknowntld"


LIST_LABELS = sorted({label for rule in psl._rules().names for label in rule.split(".")})[:4000]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(LIST_LABELS), st.sampled_from(["www", "mcp", "api", "*", "!", "", "Ck"]),
                          st.text(alphabet="abcXYZ09-_.é", max_size=6)), min_size=1, max_size=7),
       st.sampled_from(["", ".", ".."]))
def test_registrable_domains_agree_with_the_library_on_generated_hosts(labels, trailing):
    host = ".".join(labels) + trailing
    assert registrable_domain(host) == _library(host)


def snapshot(fleet: Fleet):
    config = ProbeConfig(host_map=fleet.host_map, ca_file=fleet.ca_file)

    async def go():
        async with build_client(config) as client:
            return await fetch_snapshot(client, fleet.registry_url, DAY, NOW,
                                        opted_out=fleet.timeline["opted_out_hosts"], host_map=fleet.host_map)

    return asyncio.run(go())


def test_paginated_snapshot_keeps_latest_drops_deleted_and_records_malformed():
    with Fleet(registry_page_size=4) as fleet:
        snap = snapshot(fleet)
    listed = [h for h in fleet.hosts if h.listed]
    extra = fleet.timeline["extra_listings"]
    assert snap.pages == -(-(len(listed) + len(extra)) // 4)  # every page, nextCursor and next_cursor alike
    assert snap.api == "/v0.1/servers"
    by_name = {}
    for row in snap.rows:
        by_name.setdefault(row.get("server_name"), []).append(row)
    assert "test.deleted/gone" not in by_name
    (weather,) = by_name["test.weather/weather"]
    assert weather["url"] == "https://mcp.weather.test/mcp" and weather["server_version"] == "1.0.0"
    assert by_name["test.snake/legacy-record"][0]["server_version"] == "0.1.0"  # snake_case record read
    assert by_name["test.snake/legacy-record"][0]["listing"] == "probe"
    malformed = sorted(r["skip_reason"] for r in snap.rows if r["listing"] == "malformed")
    assert malformed == [Malformed.NO_VALID_NAME, f"{Malformed.NOT_AN_OBJECT} (str)", Malformed.NO_URL]
    skips = {r.get("server_name"): r["skip_reason"] for r in snap.rows if r["listing"] == "skip"}
    assert skips["test.optout/optout"] == "host opted out"
    assert skips["test.legacy/legacy"] == "sse-only remote"
    assert skips["test.ipv6/ip"] == "IP address"
    assert all(r["server_key"] for r in snap.rows if r["listing"] == "probe")


def test_falls_back_to_v0_and_refuses_endless_pagination():
    with Fleet(registry_mode="legacy_only") as fleet:
        snap = snapshot(fleet)
    assert snap.api == "/v0/servers" and snap.rows
    with Fleet(registry_mode="cursor_loop", registry_page_size=5) as fleet, \
            pytest.raises(RegistryError, match="pagination does not end"):
        snapshot(fleet)


def test_a_malformed_entry_never_aborts_and_is_kept_with_its_reason():
    rows = rows_for_entry({"server": {"name": "x/y", "remotes": "nope"}}, DAY, NOW)
    assert rows[0]["listing"] == "malformed" and rows[0]["skip_reason"] == Malformed.REMOTES_NOT_A_LIST
    rows = rows_for_entry({"server": {"name": "x/y", "remotes": [{"type": "streamable-http",
                                                                   "url": "https://a.example.com/mcp"}, 7]}}, DAY, NOW)
    assert [r["listing"] for r in rows] == ["probe", "malformed"]
    assert rows[1]["skip_reason"] == Malformed.REMOTE_NOT_AN_OBJECT
    assert rows_for_entry({"server": 7}, DAY, NOW)[0]["skip_reason"] == Malformed.SERVER_NOT_AN_OBJECT


@pytest.mark.parametrize("url", [
    "https://us\\er:SECRET@a.example.com/mcp", "https://user:SEC RET@a.example.com/mcp",
    "https://user:SEC\tRET@a.example.com/mcp", 'https://user:SEC"RET@a.example.com/mcp',
    "https://user:SEC'RET@a.example.com/mcp", "https:user:SECRET@a.example.com/mcp",
    "https:/user:SECRET@a.example.com/mcp", "https:\\\\user:SECRET@a.example.com/mcp",
    " https://user:SECRET@a.example.com/mcp", "HTTPS://user:SECRET@a.example.com/mcp",
    "ht\ttps://user:SECRET@a.example.com/mcp", "https\t://user:SECRET@a.example.com/mcp",
    "h\nttps://user:SECRET@a.example.com/mcp",
])
def test_a_listed_credential_is_never_stored_in_any_form_a_browser_may_read(url):
    (row,) = rows_for_entry({"server": {"name": "x/y", "remotes": [{"type": "streamable-http", "url": url}]}}, DAY,
                            NOW)
    assert row["listing"] in ("skip", "malformed") and "REDACTED@" in row["url"]
    assert not [k for k, v in row.items() if isinstance(v, str) and "SEC" in v], row


def test_a_secret_header_value_is_never_stored():
    headers = [{"name": "Authorization", "value": "Bearer sk-LIVEKEY1", "isSecret": True},
               {"name": "X-Api-Key", "value": "LIVEKEY2"}, {"name": "X-Mode", "value": "fast"},
               {"name": "X-Goog-Api-Key", "value": "AIzaLIVEKEY3"}, {"name": "X-API-Token", "value": "tok_LIVEKEY4"},
               {"name": "X-Db-Pass", "value": "LIVEKEY8"}, {"name": "pw", "value": "LIVEKEY9"},
               {"name": "X-Compass", "value": "north"}, {"name": "DBPASS", "value": "LIVEKEY10"},
               {"name": "X-SSLPass", "value": "LIVEKEY11"}, {"name": "MYSQL_ROOTPW", "value": "LIVEKEY12"},
               {"name": "X-PWA-MODE", "value": "standalone"}]
    env = [{"name": "OPENAI_API_KEY", "value": "sk-LIVEKEY5", "isSecret": False}]
    description = ("Slack: mention @users. Contact bob@example.com. Returns token counts; uses Bearer authentication."
                   " Cache at redis://:LIVEKEY6@cache:6379, header Bearer abcdef0123456789LIVEKEY7")
    (row,) = rows_for_entry({"server": {"name": "x/y", "description": description, "remotes": [
        {"type": "streamable-http", "url": "https://a.example.com/mcp", "headers": headers}],
        "packages": [{"environmentVariables": env}]}}, DAY, NOW)
    assert "LIVEKEY" not in row["entry_json"] and '"value": "fast"' in row["entry_json"]
    assert '"value": "north"' in row["entry_json"] and '"value": "standalone"' in row["entry_json"]
    # prose is left as written: no scheme, no long token
    assert "Slack: mention @users. Contact bob@example.com. Returns token counts; uses Bearer authentication." in (
        row["entry_json"])
    assert row["listing"] == "probe"


_SECRET_QUERIES = ["?api_key=LIVEKEY1", "?x=1&access_token=LIVEKEY1", "?apiKey=LIVEKEY1&profile=p", "?TOKEN=LIVEKEY1",
                   "?X-Amz-Signature=LIVEKEY1", "?client-secret=LIVEKEY1", "?password=LIVEKEY1#frag",
                   "?sessionId=LIVEKEY1", "?session_id=LIVEKEY1", "?sig=LIVEKEY1", "?jwt=LIVEKEY1",
                   # a name percent-encoded, `;` as a separator, a parameter in the path
                   "?api%5Fkey=LIVEKEY1", "?api_k%65y=LIVEKEY1", "?a=1;api_key=LIVEKEY1", ";api_key=LIVEKEY1",
                   "&api_key=LIVEKEY1",
                   # a tab or a line break in the name, which a URL parser drops
                   "?api_k\tey=LIVEKEY1", "?api_key\n=LIVEKEY1", "?\tapi_key=LIVEKEY1",
                   # numbered, versioned, an array (status-1.6); `pass` and `pw` as words of their own
                   "?key1=LIVEKEY1", "?token_v2=LIVEKEY1", "?api_key-2=LIVEKEY1", "?apikey[]=LIVEKEY1",
                   "?apikey%5B%5D=LIVEKEY1", "?token[0]=LIVEKEY1", "?pw=LIVEKEY1", "?PASS=LIVEKEY1",
                   "?db_pass=LIVEKEY1", "?userPass=LIVEKEY1", "?passphrase=LIVEKEY1", "?creds=LIVEKEY1",
                   # a secret's name as a bracketed key (helper-82)
                   "?config[api_key]=LIVEKEY1", "?auth[token][0]=LIVEKEY1", "?api_key[0][1]=LIVEKEY1",
                   # an all-caps name ending in PASS or PW, a capitalised Pass after an acronym (status-1.7)
                   "?DBPASS=LIVEKEY1", "?MYSQLPW=LIVEKEY1", "?DBPASS2=LIVEKEY1", "?DBPASS[x]=LIVEKEY1",
                   "?SSLPass=LIVEKEY1", "?DB%50ASS=LIVEKEY1", "?CONFIG[DBPASS]=LIVEKEY1",
                   # a path segment that is itself name=value (helper-84, status-1.7)
                   "/api_key=LIVEKEY1", "/x/token=LIVEKEY1/sse"]
# Names that only contain a secret's name, an empty value, a fragment: no credential.
_PLAIN_QUERIES = ["?keyword=weather", "?author=me", "?api_key=", "?tokens_max=5", "?bypass=1", "?compass=n",
                  "?passage=2", "?pass_through=1", "?pwn=1", "?tokens_2=5", "?page[size]=5", "?PASSAGE=2", "?PWN=1",
                  "?SSLPassage=1", "?PASS_THROUGH=1", "/keyword=weather"]


@pytest.mark.parametrize(("url", "listing"), [(f"https://a.example.com/mcp{q}", "skip") for q in _SECRET_QUERIES]
                         + [(f"https://a.example.com/mcp{q}", "probe") for q in _PLAIN_QUERIES])
def test_a_secret_in_a_urls_query_is_a_credential_never_sent_nor_stored(url, listing):
    (row,) = rows_for_entry({"server": {"name": "x/y", "remotes": [{"type": "streamable-http", "url": url}]}}, DAY,
                            NOW)
    assert row["listing"] == listing
    if listing == "skip":
        assert row["skip_reason"] == "credentials in URL" and "REDACTED" in row["url"]
        assert not [k for k, v in row.items() if isinstance(v, str) and "LIVEKEY" in v], row
        assert row["server_key"].startswith("a.example.com/mcp")
    else:
        assert row["url"] == url


@pytest.mark.parametrize("url", [
    "https://h.example.com/mcp?a=1?token=LIVEKEY1", "https://h.example.com/p;x/token=LIVEKEY1",
    "https://h.example.com;token=LIVEKEY1/mcp", "https://h.example.com/mcp?token=;LIVEKEY1",
    'https://h.example.com/mcp?token="LIVEKEY1"', "https://h.example.com/mcp?token=<LIVEKEY1>",
    "https://h.example.com/mcp?token=?LIVEKEY1", "https://h.example.com/mcp?token= LIVEKEY1",
    "https://h.example.com/mcp?token=REDACTED;LIVEKEY1", 'https://h.example.com/mcp?x"token=LIVEKEY1',
    "https://h.example.com/mcp?api key=LIVEKEY1", "https://h.example.com/mcp?token=LIVE KEY1",
])
def test_a_secret_a_parser_reads_in_any_way_is_never_stored(url):
    # helper-73's fuzz (2026-12-06): where the text's reading and a URL parser's differ, both are redacted.
    assert carries_credentials(url)
    (row,) = rows_for_entry({"server": {"name": "x/y", "remotes": [{"type": "streamable-http", "url": url}]}}, DAY,
                            NOW)
    assert row["listing"] == "skip" and "LIVE" not in json.dumps(row, default=str), row


@pytest.mark.parametrize("url", [
    "https://h.example.com/mcp?next=ssh://git@github.com/x", "https://h.example.com/mcp?u=https://bob@x.com",
    "https://h.example.com/p?q=bearer abcdefghij1234567890", "https://h.example.com/mcp?\u017fig=1",
    "https://[2001:db8::1]:8443/a;b=c/d?e=f=g#h", "https://h.example.com/@me/mcp?x=%20y&z=",
])
def test_a_url_without_a_secret_parameter_is_stored_as_listed(url):
    assert redacted_url(url) == url


def test_long_hostile_text_is_read_in_linear_time():
    # Before: a word boundary and a run of slashes made these take 20-40 s each (helper-72). The budget is generous.
    started = time.monotonic()
    redact_text("a." * 50_000)
    redact_text("a-" * 50_000)
    carries_credentials("https:" + "\\" * 100_000)
    redact_text("?" + "key[" * 50_000 + "=1")  # a secret's name as an array, never closed (status-1.6)
    carries_credentials("https://a.example.com/mcp?" + "key[" * 50_000 + "=1")
    carries_credentials("https://a.example.com/mcp?" + "PASS[" * 50_000 + "=1")  # all caps (status-1.7)
    redacted_url("https:" + "\\" * 100_000)
    assert time.monotonic() - started < 10


def test_a_secret_in_a_fragment_is_never_sent_so_probed_but_never_stored():
    (row,) = rows_for_entry({"server": {"name": "x/y", "remotes": [
        {"type": "streamable-http", "url": "https://a.example.com/mcp?a=1#access_token=LIVEKEY1"}]}}, DAY, NOW)
    assert row["listing"] == "probe" and row["url"] == "https://a.example.com/mcp?a=1#access_token=REDACTED"
    assert "LIVEKEY" not in row["entry_json"]


def test_redaction_keeps_everything_but_the_secret():
    # The path keeps its shape (so does the key), prose around a secret is kept.
    url = "https://a.example.com/v1;v=2/mcp?api%5Fkey=LIVEKEY1&profile=p"
    prose = "Use https://a.example.com/mcp?api_key=YOUR_KEY for weather, then ask."
    # A value as a URL parser reads it (a quote, a '?', a ';' inside it), a path parameter to its segment's end.
    for listed, stored in (("?api_key=AB'CD\"EF?GH<IJ;KL&x=1", "?api_key=REDACTED&x=1"),
                           (";sig=ABC/tools/x", ";sig=REDACTED/tools/x"),
                           ("?client%3Atoken=S", "?client%3Atoken=REDACTED"), ("?x%20token=S", "?x%20token=REDACTED")):
        (row,) = rows_for_entry({"server": {"name": "x/y", "remotes": [
            {"type": "streamable-http", "url": f"https://a.example.com/mcp{listed}"}]}}, DAY, NOW)
        assert row["url"] == f"https://a.example.com/mcp{stored}" and row["listing"] == "skip"
    for odd in ("ht\ttps://a.example.com/mcp?api_k\tey=LIVEKEY1", "wss://a.example.com/mcp?api_k\tey=LIVEKEY1"):
        (row,) = rows_for_entry({"server": {"name": "x/y", "description": odd, "remotes": [
            {"type": "streamable-http", "url": "https://a.example.com/mcp"}]}}, DAY, NOW)
        assert "LIVEKEY" not in row["entry_json"]
    (row,) = rows_for_entry({"server": {"name": "x/y", "description": prose,
                                        "remotes": [{"type": "streamable-http", "url": url}]}}, DAY, NOW)
    assert row["url"] == "https://a.example.com/v1;v=2/mcp?api%5Fkey=REDACTED&profile=p"
    assert row["server_key"] == server_key("https://a.example.com/v1;v=2/mcp")
    assert "?api_key=REDACTED for weather, then ask." in row["entry_json"] and "LIVEKEY" not in row["entry_json"]


def test_a_secret_in_a_key_of_the_entry_is_never_stored():
    (row,) = rows_for_entry({"server": {"name": "x/y", "remotes": [{"type": "streamable-http",
                                                                      "url": "https://a.example.com/mcp"}]},
                             "_meta": {"https://a.example.com/mcp?api_key=LIVEKEY1": {"seen": True}}}, DAY, NOW)
    assert "LIVEKEY" not in row["entry_json"] and row["listing"] == "probe"


def test_the_other_columns_of_a_registry_row_never_hold_a_credential():
    (row,) = rows_for_entry({"server": {"name": "com.example/https://u:LIVEKEY1@x.com", "version": "https://u:LIVEKEY2@x",
                                        "remotes": [{"type": "https://u:LIVEKEY3@x.com",
                                                     "url": "https://a.example.com/mcp"}]}}, DAY, NOW)
    assert not [k for k, v in row.items() if isinstance(v, str) and "LIVEKEY" in v], row


@pytest.mark.parametrize(("remotes", "listing"), [
    ({}, ["malformed"]), ("", ["malformed"]), (0, ["malformed"]), (False, ["malformed"]), (None, []), ([], [])])
def test_remotes_that_are_no_list_are_malformed_never_dropped(remotes, listing):
    rows = rows_for_entry({"server": {"name": "x/y", "remotes": remotes}}, DAY, NOW)
    assert [r["listing"] for r in rows] == listing


def test_older_snake_case_official_fields_are_read():
    def entry(version: str, latest: bool) -> dict:
        return {"server": {"name": "x/y", "version": version, "remotes": [
            {"type": "streamable-http", "url": f"https://a.example.com/{version}"}]},
                "_meta": {"io.modelcontextprotocol.registry/official": {
                    "is_latest": latest, "published_at": "2025-08-01T00:00:00Z", "updated_at": "2025-08-02T00:00:00Z"}}}

    versions = _Versions()
    versions.add(entry("1.0.0", True))
    versions.add(entry("2.0.0", False))  # read later, not the latest
    (kept,) = versions.entries()
    (row,) = rows_for_entry(kept, DAY, NOW)
    assert row["server_version"] == "1.0.0" and row["published_at"].isoformat() == "2025-08-01T00:00:00+00:00"


class _Registry:
    """A registry on loopback that answers each page with `body` (bytes, sent as `pieces` after `pause` each)."""

    def __init__(self, body: bytes, headers: list[tuple[bytes, bytes]], pieces: int = 1, pause: float = 0.0):
        self.body, self.headers, self.pieces, self.pause = body, headers, pieces, pause

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 200, "headers": self.headers})
        size = -(-len(self.body) // self.pieces)
        for i in range(self.pieces):
            await asyncio.sleep(self.pause)
            await send({"type": "http.response.body", "body": self.body[i * size:(i + 1) * size], "more_body": True})
        await send({"type": "http.response.body", "body": b""})


def _snapshot_of(app, timeout: float = 30.0, retry_pauses: tuple[float, ...] = ()):
    with served_on_loopback(app, "a registry") as url:
        async def go():
            async with build_client(ProbeConfig(allow_private=True)) as client:
                return await fetch_snapshot(client, url, DAY, NOW, timeout=timeout, retry_pauses=retry_pauses)

        return asyncio.run(go())


def test_a_registry_page_is_bounded_in_size_once_decoded_and_in_time_as_a_whole():
    bomb = gzip.compress(b'{"servers": [], "pad": "' + b" " * (PAGE_MAX_BYTES + 1) + b'"}')
    with pytest.raises(RegistryError, match="exceeds"):
        _snapshot_of(_Registry(bomb, [(b"content-type", b"application/json"), (b"content-encoding", b"gzip")]))
    drip = _Registry(b'{"servers": []}', [(b"content-type", b"application/json")], pieces=15, pause=0.2)
    with pytest.raises(RegistryError, match="not read within 1 s"):
        _snapshot_of(drip, timeout=1.0)  # each read comes in time; the page does not


class _FlakyRegistry:
    """A registry on loopback whose first `faults` answers are HTTP `fault`, then one page of one listing."""

    PAGE = (b'{"servers": [{"server": {"name": "com.example/a", "version": "1.0.0", "remotes": [{"type": '
            b'"streamable-http", "url": "https://mcp.example.com/mcp"}]}}]}')

    def __init__(self, faults: int, fault: int, retry_after: str | None = None):
        self.faults, self.fault, self.retry_after, self.asked = faults, fault, retry_after, 0

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return
        self.asked += 1
        if self.asked <= self.faults:
            headers = [(b"retry-after", self.retry_after.encode())] if self.retry_after else []
            await send({"type": "http.response.start", "status": self.fault, "headers": headers})
            await send({"type": "http.response.body", "body": b"upstream busy"})
            return
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": self.PAGE})


@pytest.mark.parametrize(("fault", "retry_after"), [(503, None), (429, "1"), (502, "Wed, 21 Oct 2015 07:28:00 GMT")])
def test_a_page_the_registry_fails_to_serve_for_a_moment_is_asked_again(fault, retry_after):
    registry = _FlakyRegistry(2, fault, retry_after)
    started = time.monotonic()
    snap = _snapshot_of(registry, retry_pauses=(0.05, 0.05))
    assert registry.asked == 3 and snap.retries == 2 and [r["server_name"] for r in snap.rows] == ["com.example/a"]
    if retry_after == "1":  # a Retry-After in seconds is waited where it is longer than our pause
        assert time.monotonic() - started >= 2.0
    # A fault that does not pass ends the snapshot after the last pause, saying what it was and how often.
    registry = _FlakyRegistry(5, fault, retry_after)
    with pytest.raises(RegistryError, match=r"\(asked 3 times; 2 retries in the snapshot\)"):
        _snapshot_of(registry, retry_pauses=(0.05, 0.05))
    assert registry.asked == 3
    # A Retry-After in seconds is read as ASCII digits alone: no date, no other script's digits.
    assert [retry_after_seconds(v) for v in ("7", " 60 ", "Wed, 21 Oct 2015 07:28:00 GMT", "\u0666\u0660", "1e3")] == [
        7.0, 60.0, None, None, None]


def test_a_connection_the_registry_drops_is_made_again():
    # A listener that closes its first two connections before answering, then answers as a registry does.
    listener = socket.create_server(("127.0.0.1", 0))
    accepted = []

    def serve() -> None:
        while len(accepted) < 3:
            conn, _ = listener.accept()
            accepted.append(conn)
            if len(accepted) < 3:
                conn.close()
                continue
            conn.recv(65536)
            body = _FlakyRegistry.PAGE
            conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n"
                         b"content-length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"

    async def go():
        async with build_client(ProbeConfig(allow_private=True)) as client:
            return await fetch_snapshot(client, url, DAY, NOW, retry_pauses=(0.05, 0.05))

    snap = asyncio.run(go())
    thread.join(5)
    listener.close()
    assert len(accepted) == 3 and snap.retries == 2 and len(snap.rows) == 1


def test_a_registry_failing_page_after_page_fails_the_snapshot_once_its_retries_are_spent():
    asked: dict[str, int] = {}

    async def every_page_fails_once(scope, receive, send) -> None:
        if scope["type"] != "http":
            return
        cursor = scope["query_string"].decode().partition("cursor=")[2] or "0"
        asked[cursor] = asked.get(cursor, 0) + 1
        if asked[cursor] == 1:
            await send({"type": "http.response.start", "status": 503, "headers": []})
            await send({"type": "http.response.body", "body": b"busy"})
            return
        page = {"servers": [], "metadata": {"nextCursor": str(int(cursor) + 1)} if int(cursor) < 20 else {}}
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": json.dumps(page).encode()})

    with pytest.raises(RegistryError, match=r"asked once; 6 retries in the snapshot"):
        _snapshot_of(every_page_fails_once, retry_pauses=(0.01, 0.01))
    assert len(asked) == 7  # six pages read after a retry each, the seventh's fault ends it


def test_a_page_the_registry_refuses_is_not_asked_again():
    registry = _FlakyRegistry(1, 400)
    with pytest.raises(RegistryError, match="HTTP 400: upstream busy"):
        _snapshot_of(registry, retry_pauses=(0.05, 0.05))
    assert registry.asked == 1


def test_the_probers_own_refusal_of_a_registry_address_is_not_asked_again(lake):
    # A registry named at a loopback address is refused by the prober's network guard before any connection:
    # the same refusal after every pause, so the day's scan fails at once, saying it asked once (it waited
    # 2 + 8 s for two more refusals before).
    with pytest.raises(RegistryError, match=r"ConnectError: 127\.0\.0\.1 resolves to a non-public address"
                                            r".*\(asked once; 0 retries in the snapshot\)"):
        take_snapshot(lake, DAY, "http://127.0.0.1:9", ProbeConfig(), clock=lambda: NOW)
    assert not lake.registry_file(DAY).exists()
    # ... while a registry that fails for a moment is still asked again on the prober's path (its pauses: 2 s).
    registry = _FlakyRegistry(1, 503)
    with served_on_loopback(registry, "a registry") as url:
        assert take_snapshot(lake, DAY, url, ProbeConfig(allow_private=True), clock=lambda: NOW) == 1
    assert registry.asked == 2 and lake.registry_file(DAY).exists()


@pytest.mark.parametrize(("page", "error"), [
    (b'{"servers": [], "metadata": {"nextCursor": "' + b"c" * 5000 + b'"}}', "a cursor of 5,000 characters"),
    (b'{"servers": [' + b"[" * 5000 + b"]" * 5000 + b"]}", "nested too deeply"),
])
def test_a_page_the_client_cannot_follow_is_a_registry_error_that_says_why(page, error):
    with pytest.raises(RegistryError, match=error):
        _snapshot_of(_Registry(page, [(b"content-type", b"application/json")]))


@pytest.mark.parametrize(("url", "reason"), [
    ("https://metadata.google.internal\u3002/", SkipReason.PRIVATE), ("https://127.0.0.1\u3002/mcp", SkipReason.IP),
    ("https://localhost\uff0e/mcp", SkipReason.PRIVATE), ("https://10\uff0e0\uff0e0\uff0e1/mcp", SkipReason.IP),
])
def test_a_full_stop_a_url_parser_reads_as_a_dot_hides_no_private_host(url, reason):
    """helper-86: `https://127.0.0.1。/` (an ideographic full stop, which httpx reads as ".") passed the private and
    IP rules, read as written; every rule now reads the name httpx connects to."""
    assert listing_decision(url, "streamable-http").kind is reason


def test_a_lone_surrogate_in_an_entry_is_kept_as_a_replacement_and_the_snapshot_written(lake):
    """helper-84: a JSON-escaped lone surrogate ("\\ud800") in an entry's name passed json.loads, and the day's
    registry snapshot could not be written: the day's scan stopped at its first step."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from sevenmaps_pipeline.lake.parquet_io import write_parquet
    from sevenmaps_pipeline.lake.schemas import RAW_REGISTRY, conform

    page = (b'{"servers": [{"server": {"name": "test.x/a\\ud800b", "version": "1.0.0", "description": "\\udc00 \\ud83d'
            b'\\ude00", "remotes": [{"type": "streamable-http", "url": "https://mcp.x.example.com/mcp"}]}}]}')
    snapshot = _snapshot_of(_Registry(page, [(b"content-type", b"application/json")]))
    (row,) = snapshot.rows
    assert row["server_name"] == "test.x/a\ufffdb" and "\ufffd \U0001f600" in row["entry_json"]
    write_parquet(lake, lake.registry_file(DAY), conform(pa.Table.from_pylist(snapshot.rows, RAW_REGISTRY.schema),
                                                         RAW_REGISTRY))
    assert pq.read_table(lake.registry_file(DAY)).column("server_name").to_pylist() == ["test.x/a\ufffdb"]


_URL_PIECES = st.sampled_from([
    "https://", "http://", "HTTPS://", "ftp://", "https:", "//", " https://", "\thttps://", "a.b", "Mcp.Example.COM",
    "example.com.", "-x-", "127.0.0.1", "[::1]", "[::1", "user:pw@", "@", ":443", ":", ":x", "/", "/mcp", "?q=1",
    "#f", "\t", "\n", " ", "%41", "é", "ﬁ", "\\", ";", "xn--bcher-kva.example"])


@settings(max_examples=3000, deadline=None, derandomize=True)
@given(st.lists(_URL_PIECES, max_size=7).map("".join))
def test_host_of_reads_every_url_as_urlsplit_does(url):
    # host_of reads plain authorities with a regular expression; whatever the URL, the host is urlsplit's.
    from urllib.parse import urlsplit

    from sevenmaps_pipeline.rules.hosts import host_of

    try:
        expected = (urlsplit(url).hostname or "").lower().rstrip(".")
    except ValueError:
        with pytest.raises(ValueError):
            host_of(url)
        return
    assert host_of(url) == expected


@pytest.mark.parametrize(("sent", "kept"), [
    ('{ "payTo": "0xabc",\n  "amount": 5 }', '{ "payTo": "0xabc",\n  "amount": 5 }'),  # nothing to redact: as sent
    ('{"u": "https://p.test/?token=a\\"b", "n": 1}', '{"u": "https://p.test/?token=REDACTED", "n": 1}'),
    # A stranger's review: escapes hid secrets from the text's patterns, and writing the JSON again lost a key
    # given twice (DuckDB reads the first), turned 1e400 into Infinity and a lone surrogate into what Arrow refuses.
    ('{"a": "https://alice:hunter2\\u0040pay.test/x"}', '{"a": "https://REDACTED@pay.test/x"}'),
    ('{"u": "https://p.test/?api_key\\u003dSECRET"}', '{"u": "https://p.test/?api_key=REDACTED"}'),
    ('{"payTo": "0xREAL", "payTo": "0xFAKE", "n": 1e400, "s": "\\ud800", "x": "https://u:p@h.test/"}',
     '{"payTo": "0xREAL", "payTo": "0xFAKE", "n": 1e400, "s": "\\ud800", "x": "https://REDACTED@h.test/"}'),
    ('{"é": "https://u:p@h.test/é"}', '{"é": "https://REDACTED@h.test/é"}'),  # non-ASCII kept as it was
    # A second review: a header's value named as a secret (kept before the string-by-string version too, and
    # redacted by the first), a key named as one; an empty value hides nothing.
    ('{"headers": [{"name": "X-Api-Key", "value": "sk_live_abc"}], "password": "hunter2", "token": "", "e": ""}',
     '{"headers": [{"name": "X-Api-Key", "value": "REDACTED"}], "password": "REDACTED", "token": "", "e": ""}'),
    ('not json ?token=abc "x"', 'not json ?token=REDACTED "x"'),
    ('[' * 5000 + '"?token=abc"' + ']' * 5000, '[' * 5000 + '"?token=REDACTED"' + ']' * 5000),  # too deep: as text
])
def test_a_json_answer_is_redacted_value_by_value_and_stays_json(sent, kept):
    assert redact_json_text(sent) == kept


def test_a_challenges_secret_params_and_a_locations_userinfo_are_redacted_as_a_reader_reads_them():
    """A second review: auth-params named as secrets were kept, a quote ended a URL's value early, and a Location a
    browser reads with userinfo (`https:\\\\u:p@host`, `https:u:p@host`) kept it."""
    assert redact_auth_params('Bearer realm="x", access_token="s1", token=s2, error="invalid_token"') == (
        'Bearer realm="x", access_token="REDACTED", token=REDACTED, error="invalid_token"')
    assert redact_value("https://x.test/cb?token=ab'SECRET&v=1") == "https://x.test/cb?token=REDACTED&v=1"
    for location in ("https:\\\\alice:pw1234@evil.test/", "https:alice:pw1234@evil.test/"):
        assert "pw1234" not in redact_value(location)


def test_a_listings_time_outside_the_calendar_in_utc_never_stops_the_days_later_slices(lake):
    """publishedAt 0001-01-01T00:00:00+01:00 is a valid ISO time whose UTC falls in year 0 (and 9999-12-31T23:59-01:00
    in year 10000): the snapshot stored it, and every later slice of the day, reading the landed snapshot back into
    Python, failed (OverflowError), so the whole day after the first slice was n. Now such a time is no time (null),
    as an unreadable one is; a time without a zone is read as UTC, an offset is turned into UTC."""
    def entry(name: str, published: str, updated: str) -> dict:
        return {"server": {"name": name, "remotes": [{"type": "streamable-http", "url": f"https://{name[3:]}.io/mcp"}]},
                "_meta": {"io.modelcontextprotocol.registry/official": {"publishedAt": published,
                                                                        "updatedAt": updated}}}

    rows = [*rows_for_entry(entry("io/early", "0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00"), DAY, NOW),
            *rows_for_entry(entry("io/plain", "2026-11-20T10:00:00", "2026-11-20T10:00:00+05:30"), DAY, NOW)]
    write_parquet(lake, lake.registry_file(DAY), _table(rows, RAW_REGISTRY))
    landed, reused = asyncio.run(_snapshot_rows(lake, DAY, "http://127.0.0.1:9", ProbeConfig(), lambda: NOW))
    assert reused and [(r["server_name"], r["published_at"], r["updated_at"]) for r in landed] == [
        ("io/early", None, None),
        ("io/plain", dt.datetime(2026, 11, 20, 10, tzinfo=dt.UTC), dt.datetime(2026, 11, 20, 4, 30, tzinfo=dt.UTC))]
