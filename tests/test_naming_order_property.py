"""Property: an endpoint listed under several registry names is named by one listing everywhere (status-1.4,
docs/methodology.md "Its name"): the daily scan contacts it under the listing probe/scan.py naming_order puts
first, the hourly checks take that listing (probe/frequent.py listings_for), its day row carries that listing's
name, version and URL and its registry text is that listing's (both from sql/naming_listings.sql, through
sql/daily_status.sql `listed` and curated/tool_tables.py listing_text_table, categories-1.7), whatever the
registry's order. Hypothesis generates the snapshots: names, URLs and versions null, empty, upper and lower case,
non-ASCII; statuses other than active (mixed case, deleted, null); listings to skip (sse-only and other) and
malformed; listings without a server_key; entries cut short (no longer JSON); and each key of the order is
decided by one snapshot given explicitly (DECIDING)."""

from __future__ import annotations

import json
import random
import re
import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import DAY
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from sevenmaps_pipeline import curated
from sevenmaps_pipeline.curated.common import bind_registry
from sevenmaps_pipeline.curated.tool_tables import listing_text_table
from sevenmaps_pipeline.lake import duck
from sevenmaps_pipeline.lake.keys import server_id, server_key
from sevenmaps_pipeline.lake.parquet_io import write_parquet
from sevenmaps_pipeline.lake.paths import LakePaths
from sevenmaps_pipeline.lake.schemas import RAW_REGISTRY, conform
from sevenmaps_pipeline.probe.frequent import listings_for
from sevenmaps_pipeline.probe.scan import endpoints_to_check, naming_order
from sevenmaps_pipeline.registry.listing import SkipReason
from sevenmaps_pipeline.rules.namespace import namespace_owns_host

NAMES = [None, "", "a/x", "A/x", "Zeta/z", "alpha/a", "é/e", "e/é", "z/Ω", "io.x/ä", "io.x/a", "a/x ",
         "com.example/own", "COM.Example.K1/own", "com/x", "cöm.example/x"]
URLS = ["https://k{}.example.com/mcp", "https://K{}.example.com/mcp/", "https://www.k{}.example.com/mcp",
        "https://k{}.example.com/mcp?é=1", "https://k{}.example.com:1/mcp", "HTTPS://k{}.example.com./mcp"]
VERSIONS = [None, "", "1.0.0", "1.0.0a", "V2", "é"]
STATUSES = [None, "", "active", "Active", "ACTIVE", "deprecated", "deleted", "submitted"]
LISTINGS = [("probe", None), ("skip", str(SkipReason.SSE_ONLY)), ("skip", str(SkipReason.TEMPLATED)),
            ("malformed", "remote is not an object")]

LISTING = st.tuples(st.integers(0, 2), st.sampled_from(NAMES), st.sampled_from(URLS), st.sampled_from(VERSIONS),
                    st.sampled_from(STATUSES), st.sampled_from(LISTINGS), st.booleans(), st.booleans())


PROBE, SSE_ONLY, TEMPLATED, MALFORMED = LISTINGS
# Snapshots that each key of the order decides (random ones meet them less often than the key is worth): a listing
# to probe before an SSE-only one, then an active one, then the URL before the version; and in the last, one
# endpoint a key each: the name compared by code point ("Zeta" before "alpha", which a case-blind order turns
# round), the version alone (ascending), and a skip and a malformed listing ranked alike, either way round.
DECIDING = [[(0, "Zeta/z", URLS[0], "1.0.0", "active", SSE_ONLY, True, False),
             (0, "alpha/a", URLS[0], "1.0.0", "active", PROBE, True, False)],
            [(0, "Zeta/z", URLS[0], "1.0.0", "deprecated", PROBE, True, False),
             (0, "alpha/a", URLS[0], "1.0.0", "active", PROBE, True, False)],
            [(0, "a/x", URLS[0], "1.0.0", "active", PROBE, True, False),
             (0, "a/x", URLS[1], "V2", "active", PROBE, True, False)],
            # status-1.4: the owner's namespace before a stranger's name, whatever the URLs
            [(0, "a/x", URLS[0], "1.0.0", "active", PROBE, True, False),
             (0, "com.example/own", URLS[4], "1.0.0", "active", PROBE, True, False)],
            [(1, "a/x", URLS[4], "1.0.0", "active", PROBE, True, False),
             (1, "b/y", URLS[2], "1.0.0", "active", PROBE, True, False)],
            [(0, "alpha/a", URLS[0], "1.0.0", "active", PROBE, True, False),
             (0, "Zeta/z", URLS[0], "1.0.0", "active", PROBE, True, False),
             (1, "a/x", URLS[0], "V2", "active", PROBE, True, False),
             (1, "a/x", URLS[0], "1.0.0", "active", PROBE, True, False),
             (2, "alpha/a", URLS[0], "1.0.0", "active", MALFORMED, True, False),
             (2, "Zeta/z", URLS[0], "1.0.0", "active", TEMPLATED, True, False),
             (3, "alpha/a", URLS[0], "1.0.0", "active", TEMPLATED, True, False),
             (3, "Zeta/z", URLS[0], "1.0.0", "active", MALFORMED, True, False)]]


def deciding_examples(*more: Any):
    def decorate(test):
        for drawn in DECIDING:
            test = example(drawn, *more)(test)
        return test
    return decorate


def snapshot(drawn: list[tuple]) -> list[dict[str, Any]]:
    """Registry rows, each with a description of its own (listings alike in everything the order reads share
    one: the order cannot tell them apart, and neither need the text)."""
    rows: list[dict[str, Any]] = []
    described: dict[tuple, str] = {}
    for k, name, url, version, status, (listing, skip), keyed, cut in drawn:
        key = f"k{k}.example.com/mcp" if keyed else None
        description = described.setdefault((key, name, url.format(k), version, status == "active", listing,
                                            skip == SkipReason.SSE_ONLY), f"d{len(rows)}")
        entry = json.dumps({"server": {"name": name, "description": description}})
        rows.append({"day": DAY, "server_name": name, "server_version": version, "status": status,
                     "remote_type": "streamable-http", "url": url.format(k), "server_key": key,
                     "server_id": server_id(key) if key else None, "listing": listing, "skip_reason": skip,
                     "entry_json": entry[:-4] if cut else entry})
    return rows


def named(listing: dict[str, Any]) -> tuple:
    return listing["server_name"], listing["server_version"], listing["url"]


def text_of(listing: dict[str, Any]) -> str:
    """Its name after the namespace and its description; its name alone when its entry was cut (the registry
    client keeps 100,000 characters of an entry) and no longer parses (categories-1.7)."""
    name = re.sub(r"^.*/", "", listing["server_name"] or "")
    try:
        return f"{name} {json.loads(listing['entry_json'])['server']['description']}"
    except json.JSONDecodeError:
        return name


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(LISTING, min_size=1, max_size=10), st.randoms(use_true_random=False))
@deciding_examples(random.Random(0))
def test_the_scan_the_hourly_checks_the_day_row_and_the_text_name_one_listing(drawn, rng):
    rows = snapshot(drawn)
    shuffled = rows[:]
    rng.shuffle(shuffled)
    contacted, _skipped = endpoints_to_check(rows)
    assert endpoints_to_check(shuffled)[0] == contacted  # the registry's order never chooses
    with tempfile.TemporaryDirectory() as tmp:
        lake = LakePaths.at(Path(tmp) / "lake")
        write_parquet(lake, lake.registry_file(DAY), conform(pa.Table.from_pylist(shuffled, RAW_REGISTRY.schema),
                                                             RAW_REGISTRY))
        hourly, _not_listed = listings_for(lake, DAY, set(contacted))
        curated.build_quarantine(lake, DAY)
        curated.build_daily_status(lake, DAY)  # nothing checked: every listed endpoint is on the map, code n
        day = {r["server_key"]: r for r in pq.read_table(lake.curated_file("daily_status", DAY)).to_pylist()}
        texts = dict(zip(*listing_text_table(lake, DAY).to_pydict().values(), strict=True))
    probed = {key: listing for key, listing in contacted.items() if listing["listing"] == "probe"}
    assert {r["server_key"]: (*named(r), text_of(r)) for r in hourly} == {
        key: (*named(listing), text_of(listing)) for key, listing in probed.items()}
    assert {key: named(r) for key, r in day.items()} == {key: named(listing) for key, listing in probed.items()}
    assert {key: texts.get(key) for key in probed} == {key: text_of(listing) for key, listing in probed.items()}


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.lists(LISTING, min_size=1, max_size=12))
@deciding_examples()
def test_the_sql_naming_listing_is_the_first_by_the_python_order(drawn):
    """The two writings of the order agree directly, on many more snapshots than the whole day above: each
    endpoint's row of sql/naming_listings.sql is the first of its listings by probe/scan.py naming_order (skip and
    malformed listings included, which the view ranks after a listing to probe)."""
    rows = snapshot(drawn)
    with tempfile.TemporaryDirectory() as tmp:
        lake = LakePaths.at(Path(tmp) / "lake")
        write_parquet(lake, lake.registry_file(DAY), conform(pa.Table.from_pylist(rows, RAW_REGISTRY.schema),
                                                             RAW_REGISTRY))
        with duck.session() as con:
            bind_registry(con, lake, DAY)
            chosen = con.sql("SELECT server_key, server_name, server_version, url, listing, status "
                             "FROM naming_listings").to_arrow_table().to_pylist()
    first: dict[str, dict[str, Any]] = {}
    for row in rows:
        key = row["server_key"]
        if key is not None and (key not in first or naming_order(row) < naming_order(first[key])):
            first[key] = row
    assert {r["server_key"]: (*named(r), r["listing"], r["status"]) for r in chosen} == {
        key: (*named(row), row["listing"], row["status"]) for key, row in first.items()}


@pytest.mark.parametrize("stranger", ["https://mcp.victim.com:1/mcp", "https://www.mcp.victim.com/mcp/",
                                      "https://MCP.victim.com./mcp?x=/../admin", "https://mcp.victim.com/mcp"])
@pytest.mark.parametrize("own", ["https://mcp.victim.com/mcp", "https://mcp.victim.com:8443/mcp",
                                 "https://mcp.victim.com./mcp/"])
def test_a_strangers_listing_of_another_endpoint_never_replaces_the_owners(stranger, own):
    """helper-65's attack: a name sorting first (`com.attacker`) listed the victim's endpoint under a URL of the
    same key (the key ignores the port, the query, `www.` and a trailing dot), and was checked in its place. The
    owner's listing is the one whose namespace the registry proved for the host, whatever either URL's form."""
    def listing(name: str, url: str) -> dict[str, Any]:
        return {"server_name": name, "url": url, "server_key": server_key(url), "listing": "probe",
                "status": "active", "server_version": "1.0.0"}

    owner = listing("com.victim/mcp", own)
    contacted, _ = endpoints_to_check([listing("com.attacker/a", stranger), owner])
    assert contacted == {"mcp.victim.com/mcp": owner}


@pytest.mark.parametrize(("name", "url", "owns"), [
    ("com.example.evil/x", "https://evil.example.com/mcp", True),
    ("com.victim/x", "https://MCP.Victim.COM./mcp", True),
    ("com.victim/x", "https://victim.com/mcp", True),
    ("com.victim/x", "https://mcp.victim.com@evil.com/mcp", False),  # the host is evil.com
    ("com.victim/x", "https://victim.com.evil.org/mcp", False),
    ("com.victim/x", "https://xvictim.com/mcp", False),
    ("io.github.victim/x", "https://victim.github.io/mcp", False),  # a GitHub login proves no domain
    ("io.github/x", "https://victim.github.io/mcp", False),  # a public suffix owns nothing
    ("com.github/x", "https://api.github.com/mcp", True),  # github.com is a registrable domain, proven by DNS
    ("uk.co/x", "https://victim.co.uk/mcp", False),
    ("app.vercel/x", "https://victim.vercel.app/mcp", False),
    ("1.0.0.127/x", "https://127.0.0.1/mcp", False),
    ("com/x", "https://a.com/mcp", False),
    (None, "https://a.com/mcp", False), ("com.a/x", None, False), ("com.a", "https://a.com/mcp", False),
])
def test_which_namespaces_own_a_host(name, url, owns):
    assert namespace_owns_host(name, url) is owns
    with duck.session() as con:  # the SQL function is the same one
        assert con.execute("SELECT namespace_owns_host($n, $u)", {"n": name, "u": url}).fetchone()[0] is owns
