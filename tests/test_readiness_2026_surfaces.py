"""The readiness probe's 2026 surfaces (issue 35, point 6) against real servers on loopback: the domain
catalog at /.well-known/ai-catalog.json beside the older path, server cards revalidated with If-None-Match
over two nights of a lake (a 304 keeps the card), the skills extension read from answers already received
(never a skills/list request), and the revisions a server claims kept apart from the one it served."""

from __future__ import annotations

import asyncio
import copy
import datetime as dt
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sevenmaps_pipeline.curated.readiness_tables import build_readiness_discovery
from sevenmaps_pipeline.devtools.fleet.middleware import rpc_method
from sevenmaps_pipeline.devtools.fleet.registry_app import registry_entries
from sevenmaps_pipeline.devtools.fleet.run import Fleet, load_timeline
from sevenmaps_pipeline.devtools.fleet.scripted import Scripted, ScriptedApp, json_answer, tools_result
from sevenmaps_pipeline.lake.parquet_io import write_parquet
from sevenmaps_pipeline.lake.paths import LakePaths
from sevenmaps_pipeline.lake.schemas import RAW_READINESS, RAW_READINESS_SURFACES, RAW_REGISTRY, conform
from sevenmaps_pipeline.probe.config import ProbeConfig
from sevenmaps_pipeline.probe.readiness import readiness_one
from sevenmaps_pipeline.probe.run import ReplayClock, readiness_day
from sevenmaps_pipeline.probe.surfaces import CardBook
from sevenmaps_pipeline.registry.client import rows_for_entry
from sevenmaps_pipeline.rules.discovery import answered

DAY = dt.date(2026, 12, 3)
NEXT = DAY + dt.timedelta(days=1)
KEPT = ("newcat", "skillful", "claimant", "ready")
SCRIPTED = "mcp.oddities.test"


@pytest.fixture(scope="module")
def fleet():
    timeline = copy.deepcopy(load_timeline())
    timeline["servers"] = [s for s in timeline["servers"] if s["name"] in KEPT]
    timeline["extra_listings"], timeline["opted_out_hosts"] = [], []
    scripted = ScriptedApp()
    with Fleet(timeline=timeline, extra_apps={SCRIPTED: scripted}) as running:
        running.scripted = scripted
        yield running


def _night(fleet, lake: LakePaths, day: dt.date) -> dict:
    now = dt.datetime.combine(day, dt.time(12), dt.UTC)
    rows = [r for e in registry_entries(fleet) for r in rows_for_entry(e, day, now, opted_out=[],
                                                                        host_map=fleet.host_map)]
    write_parquet(lake, lake.registry_file(day), conform(pa.Table.from_pylist(rows, RAW_REGISTRY.schema),
                                                         RAW_REGISTRY))
    before = len(fleet.recorded)
    readiness_day(lake, day, ProbeConfig(host_map=fleet.host_map, ca_file=fleet.ca_file), ReplayClock(day))
    build_readiness_discovery(lake, day)
    surfaces = [r for p in lake.raw_files("readiness_surfaces", day) for r in pq.read_table(p).to_pylist()]
    checks = [r for p in lake.raw_files("readiness", day) for r in pq.read_table(p).to_pylist()]
    discovery = pq.read_table(lake.curated_file("readiness_discovery", day)).to_pylist()
    return {"requests": fleet.recorded[before:], "checks": {r["server_key"]: r for r in checks},
            "surfaces": {(r["subject"], r["surface"]): r for r in surfaces},
            "discovery": {(r["server_key"], r["surface"]): r for r in discovery}}


@pytest.fixture(scope="module")
def nights(fleet, tmp_path_factory):
    lake = LakePaths.at(tmp_path_factory.mktemp("surfaces2026") / "lake")
    return lake, _night(fleet, lake, DAY), _night(fleet, lake, NEXT)


def test_both_catalog_paths_are_asked_and_the_one_that_answered_is_recorded(nights):
    _, first, _ = nights
    asked = {(r["host"], r["path"]): dict(r["headers"]) for r in first["requests"]}
    assert asked[("newcat.test", "/.well-known/ai-catalog.json")]["accept"] == \
        "application/ai-catalog+json, application/json"
    assert ("newcat.test", "/.well-known/mcp/catalog.json") in asked
    assert ("ready.test", "/.well-known/ai-catalog.json") in asked
    d = first["discovery"]
    newer, older = d[("mcp.newcat.test/mcp", "ai_catalog")], d[("mcp.newcat.test/mcp", "catalog")]
    assert newer["answered"] and "served as application/ai-catalog+json" in newer["detail"]
    assert not older["answered"] and older["status"] == 404
    assert d[("mcp.ready.test/mcp", "catalog")]["answered"]  # the older path only
    assert not d[("mcp.ready.test/mcp", "ai_catalog")]["answered"]
    assert {r["method_version"] for r in d.values()} == {"discovery-1.1"}


def test_a_card_with_an_etag_is_revalidated_the_next_night_and_a_304_keeps_it(nights):
    _, first, second = nights
    key = ("mcp.newcat.test/mcp", "server_card")
    fetched, kept = first["surfaces"][key], second["surfaces"][key]
    assert fetched["status"] == 200 and fetched["etag"] == '"newcat-card-1"' and fetched["if_none_match"] is None
    card_requests = [r for r in second["requests"] if r["path"] == "/mcp/server-card"
                     and r["host"] == "mcp.newcat.test"]
    assert len(card_requests) == 1 and dict(card_requests[0]["headers"])["if-none-match"] == '"newcat-card-1"'
    assert kept["status"] == 304 and kept["revalidation"] == "not_modified"
    assert kept["body"] == fetched["body"] and kept["body_sha256"] == fetched["body_sha256"] is not None
    row = second["discovery"][key]
    assert row["answered"] and row["detail"].startswith("revalidated (304)") and row["revalidation"] == "not_modified"
    assert row["card_name"] == "test.newcat/newcat" and row["disagreement"] is None
    # A card served without an ETag is asked for unconditionally every night.
    plain = second["surfaces"][("mcp.claimant.test/mcp", "server_card")]
    assert plain["status"] == 200 and plain["if_none_match"] is None and plain["revalidation"] is None


def test_a_server_that_claims_2026_07_28_while_discover_fails_is_recorded_apart_from_what_it_served(nights):
    _, first, _ = nights
    check = first["checks"]["mcp.claimant.test/mcp"]
    assert check["answered_via"] == "initialize" and check["protocol_version"] == "2025-06-18"
    assert [rpc_method(r) for r in first["requests"] if r["host"] == "mcp.claimant.test" and rpc_method(r)][:2] \
        == ["server/discover", "initialize"]
    card = first["discovery"][("mcp.claimant.test/mcp", "server_card")]
    assert card["card_protocol_versions"] == "2026-07-28" and card["served_version"] == "2025-06-18"
    assert "protocol versions 2026-07-28, the server answered 2025-06-18" in card["disagreement"]
    # A server that serves 2026-07-28 claims it too, in server/discover's supportedVersions.
    newcat = first["checks"]["mcp.newcat.test/mcp"]
    assert newcat["claimed_versions"] == "2026-07-28" and newcat["protocol_version"] == "2026-07-28"


def test_the_skills_extension_is_read_from_the_answer_already_received(nights):
    _, first, _ = nights
    assert first["checks"]["mcp.skillful.test/mcp"]["skills_extension"] is True
    assert first["checks"]["mcp.skillful.test/mcp"]["skills_count"] is None  # the declaration lists none
    assert first["checks"]["mcp.newcat.test/mcp"]["skills_extension"] is False
    assert not [r for r in first["requests"] if (rpc_method(r) or "").startswith("skills/")]


def test_raw_files_written_before_the_new_columns_still_read(nights):
    lake, _, _ = nights
    later = NEXT + dt.timedelta(days=1)
    for kind, spec in (("readiness", RAW_READINESS), ("readiness_surfaces", RAW_READINESS_SURFACES)):
        new = {"claimed_versions", "skills_extension", "skills_count", "etag", "if_none_match", "body_sha256",
               "revalidation"}
        for i, path in enumerate(lake.raw_files(kind, DAY)):
            old = pq.read_table(path)
            old = old.drop_columns([c for c in old.column_names if c in new])
            old = old.set_column(old.schema.get_field_index("day"), "day", pa.array([later] * old.num_rows,
                                                                                  pa.date32()))
            target = lake.raw_dir(kind, later) / f"old-{i}.parquet"
            target.parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(old, target)
        assert spec.schema.names != pq.read_schema(target).names
    build_readiness_discovery(lake, later)
    rows = {(r["server_key"], r["surface"]): r
            for r in pq.read_table(lake.curated_file("readiness_discovery", later)).to_pylist()}
    card = rows[("mcp.newcat.test/mcp", "server_card")]
    assert card["answered"] and card["revalidation"] is None and card["body_sha256"] is None
    assert CardBook.from_lake(lake, later + dt.timedelta(days=1)).kept("server_card", "https://mcp.newcat.test/mcp"
                                                                      "/server-card") is None


def _scripted(fleet, script: dict) -> dict:
    fleet.scripted.reset(script)
    config = ProbeConfig(host_map=fleet.host_map, ca_file=fleet.ca_file)
    row, rows, _ = asyncio.run(readiness_one(f"https://{SCRIPTED}/mcp", config, NEXT))
    return {"row": row, "surfaces": {s["surface"]: s for s in rows.surfaces}}


def _initialize(capabilities) -> Scripted:
    return json_answer({"jsonrpc": "2.0", "id": 1, "result": {
        "protocolVersion": "2025-06-18", "capabilities": capabilities,
        "serverInfo": {"name": "scripted", "version": "1.0.0"}}})


LISTS = [tools_result([{"name": "get", "inputSchema": {"type": "object"}}], request_id=i) for i in (2, 7)]


def test_claims_in_an_unsupported_version_error_and_a_skills_count_the_answer_lists(fleet):
    refused = json_answer({"jsonrpc": "2.0", "id": "discover-1", "error": {
        "code": -32022, "message": "Unsupported protocol version",
        "data": {"supported": ["2026-07-28", 7, "x" * 100, None, "2025-11-25", "2026-07-28"]}}}, status=400)
    skills = {"io.modelcontextprotocol/skills": {"skills": [{"name": "a"}, {"name": "b"}, "odd"]}}
    seen = _scripted(fleet, {"server/discover": refused, "initialize": _initialize({"extensions": skills}),
                             "tools/list": LISTS})
    row = seen["row"]
    assert row["outcome"] == "ok" and row["answered_via"] == "initialize" and row["protocol_version"] == "2025-06-18"
    assert row["claimed_versions"] == "2026-07-28, 2025-11-25"  # claimed; 2025-06-18 served
    assert row["skills_extension"] is True and row["skills_count"] == 3


@pytest.mark.parametrize(("capabilities", "declared"), [
    ({"extensions": ["io.modelcontextprotocol/skills"]}, False),
    ({"extensions": {"io.modelcontextprotocol/skills": True}}, False),
    ({"extensions": {"io.modelcontextprotocol/skills": {"skills": "many"}}}, True),
    ({"tools": {}}, False),
    ("capabilities", None),
])
def test_odd_capabilities_are_classified_never_a_crash(fleet, capabilities, declared):
    discover = json_answer({"jsonrpc": "2.0", "id": "discover-1", "result": {
        "supportedVersions": "2026-07-28", "capabilities": {}}})
    row = _scripted(fleet, {"server/discover": discover, "initialize": _initialize(capabilities),
                            "tools/list": LISTS})["row"]
    assert row["outcome"] == "ok" and row["skills_extension"] is declared and row["skills_count"] is None
    assert row["claimed_versions"] is None  # a supportedVersions that is not a list claims nothing


def test_a_304_nobody_asked_for_keeps_nothing(fleet):
    seen = _scripted(fleet, {"server/discover": Scripted(404), "initialize": _initialize({}), "tools/list": LISTS,
                             "GET /mcp/server-card": Scripted(304, headers=[("etag", '"x"')])})
    card = seen["surfaces"]["server_card"]
    assert card["status"] == 304 and card["revalidation"] == "unasked_304" and card["body"] is None
    assert card["if_none_match"] is None
    ok, detail = answered("server_card", card["status"], card["content_type"], card["body"], card["revalidation"])
    assert not ok and "no If-None-Match was sent" in detail
    request = next(r for r in fleet.scripted.received if r["path"] == "/mcp/server-card")
    assert "if-none-match" not in request["headers"]


def test_an_etag_that_is_no_header_value_is_not_kept(fleet):
    card = json.dumps({"name": "x"})
    seen = _scripted(fleet, {"server/discover": Scripted(404), "initialize": _initialize({}), "tools/list": LISTS,
                             "GET /mcp/server-card": Scripted(200, headers=[("content-type", "application/json"),
                                                                             ("etag", "x" * 400)], body=card.encode())})
    surface = seen["surfaces"]["server_card"]
    assert surface["status"] == 200 and surface["etag"] is None
    assert CardBook([surface]).kept("server_card", surface["url"]) is None
