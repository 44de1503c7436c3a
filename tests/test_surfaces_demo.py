"""The surfaces on the demo lake: the map's MCP server through the official SDK client (`sevenmaps serve`'s
app on loopback), the site the sign job built, and that site rendered by headless Chromium from the
distribution's packages, screenshots kept in build/screenshots/."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import copy_for_serving, served_on_loopback
from mcp import Client

from sevenmaps_pipeline.integrity.manifest import sha256_file
from sevenmaps_pipeline.lake.keys import server_id as short_id
from sevenmaps_pipeline.lake.keys import server_key
from sevenmaps_pipeline.lake.paths import LakePaths
from sevenmaps_pipeline.publishing.live import render
from sevenmaps_pipeline.publishing.mapday import MapDay, latest_built_day
from sevenmaps_pipeline.publishing.site import ChangedSinceSigningError, build_site
from sevenmaps_pipeline.surfaces.oplog import OpLog, oplog_folder
from sevenmaps_pipeline.surfaces.route import route
from sevenmaps_pipeline.surfaces.serve import make_app

SCREENSHOTS = Path(__file__).resolve().parents[1] / "build" / "screenshots"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
TOOLS = {"route", "server_status", "verify_lock", "changes_since", "watch", "report_road"}


@pytest.fixture(scope="module")
def served(fleet_demo_lake, tmp_path_factory):
    """`sevenmaps serve`'s app over a copy of the demo lake (report_road writes into it), on loopback."""
    lake = copy_for_serving(fleet_demo_lake, tmp_path_factory.mktemp("served") / "lake")
    with served_on_loopback(make_app(lake, reports_per_hour=3), "the map's server") as url:  # a small cap
        yield lake, url


def _call(url: str, calls: list[tuple[str, dict]]) -> tuple[list, list]:
    async def go():
        async with Client(f"{url}/mcp") as client:
            listed = await client.list_tools()
            return listed.tools, [await client.call_tool(name, args) for name, args in calls]
    return asyncio.run(go())


def _hourly_outcomes(lake: LakePaths) -> list[str]:
    rows = [r for p in sorted((lake.root / "raw" / "hourly").glob("day=*/*.parquet"))
            for r in pq.read_table(p, columns=["server_key", "started_at", "outcome"]).to_pylist()]
    weather = sorted((r for r in rows if r["server_key"] == "mcp.weather.test/mcp"), key=lambda r: r["started_at"])
    return [r["outcome"] for r in weather]


def _answer(result) -> dict:
    assert not result.is_error, result.content
    return result.structured_content or json.loads(result.content[0].text)


def test_the_map_server_answers_every_tool_through_the_official_client(served):
    lake, url = served
    day = latest_built_day(lake)
    with MapDay.open(lake) as mapday:
        listed = mapday.rows("SELECT server_name, url, tools_hash FROM daily_status WHERE tools_hash IS NOT NULL "
                             "ORDER BY server_name LIMIT 1")[0]
    tools, (found, weather, status, lock, since, feed) = _call(url, [
        ("route", {"task": "search my notes"}),
        ("route", {"task": "weather forecast for a city"}),
        ("server_status", {"server": listed["url"]}),
        ("verify_lock", {"server": listed["url"], "tools_hash": listed["tools_hash"]}),
        ("changes_since", {"since": (day - dt.timedelta(days=3)).isoformat()}),
        ("watch", {"days": 30}),
    ])
    assert {t.name for t in tools} == TOOLS
    for t in tools:  # annotations on every tool: all read-only but report_road
        assert t.annotations is not None
        assert t.annotations.read_only_hint is (t.name != "report_road")
        assert t.annotations.destructive_hint is False
    routed = _answer(found)
    assert routed["map_day"] == day.isoformat() and routed["tools"]
    assert routed["tools"][0]["tool"] == "list_notes" and routed["placement"].startswith("placement cannot be bought")
    assert routed["signed"] is True and routed["signed_root"]["root"]
    # Both weather servers of the demo are down now (the hourly checks, two failures in a row, from 01:00 UTC:
    # devtools/demo_operations.py open_day): set aside, and named with why. The first is listed as
    # test.weather/weather and as test.snake/legacy-record: named by the first, whose namespace owns its host
    # (status-1.4; under 1.3 the first by name, test.snake/legacy-record).
    aside = {e["server_name"]: e["reasons"] for e in _answer(weather)["set_aside"]}
    with MapDay.open(lake, live=True) as mapday:
        (now,) = mapday.rows("SELECT current_shown_status FROM current_status "
                             "WHERE server_key = 'mcp.weather.test/mcp'")
    down = any(r.startswith("not answering with tools now: down") for r in aside.get("test.weather/weather", []))
    assert down == (now["current_shown_status"] == "down")
    assert down or len(_hourly_outcomes(lake)) == 1  # only a demo run in the day's first hour has one failure
    assert "a confirmed live incident" in aside["test.outage/outage"]
    assert _answer(status)["server_name"] == listed["server_name"]
    assert _answer(lock)["unchanged"] is True
    assert _answer(since)["total"] > 0  # the demo's timeline changes tool lists
    assert isinstance(_answer(feed)["entries"], list)
    logged = [json.loads(line) for p in oplog_folder(lake).glob("day=*.jsonl") for line in p.read_text().splitlines()]
    assert {"route", "server_status", "verify_lock", "changes_since", "watch"} <= {line["tool"] for line in logged}
    assert {line["client_name"] for line in logged} - {"unknown"}  # the client's own name, as it sent it


def test_an_owner_verified_endpoint_shows_its_five_minute_uptime_through_the_official_client(served):
    """Issue 35, point 3 (server_status): the demo's verified owner (mcp.calendar.test) chose its endpoint for
    five-minute checks; server_status shows their uptime, labelled as seed 000 labels uptime, and says it is
    not covered by roots; an endpoint without them shows none."""
    lake, url = served
    with MapDay.open(lake) as mapday:
        other = mapday.rows("SELECT url FROM daily_status WHERE server_key <> 'mcp.calendar.test/mcp' "
                            "ORDER BY server_key LIMIT 1")[0]["url"]
    _, (owned, plain) = _call(url, [("server_status", {"server": "https://mcp.calendar.test/mcp"}),
                                    ("server_status", {"server": other})])
    uptime = _answer(owned)["five_minute_uptime"]
    assert uptime["checks_30d"] >= 1 and uptime["uptime_30d_pct"] is not None
    assert uptime["answered_30d"] <= uptime["checks_30d"]
    assert uptime["method_version"] == "five-minute-uptime-1.0" and uptime["not_covered_by_roots"] is True
    # The demo's five-minute checks are all of its open day: one day observed, in the singular (site-1.5).
    assert uptime["days_observed_30d"] == 1 and uptime["label_30d"] == "five-minute uptime over 1 day observed"
    assert uptime["uptime_90d_pct"] is None and uptime["label_90d"] is None  # no checks older than 30 days
    assert _answer(plain)["five_minute_uptime"] is None
    # Their live badge and page (/live/) show it too, labelled the same; the day's site keeps the daily uptime
    # on its badge, for the record.
    import httpx

    owner_id = short_id("mcp.calendar.test/mcp")
    badge = httpx.get(f"{url}/live/badges/{owner_id}-uptime.svg", timeout=60)
    assert badge.status_code == 200 and f"{uptime['label_30d']}: {uptime['uptime_30d_pct']:.1f}%" in badge.text
    page = httpx.get(f"{url}/live/servers/{owner_id}.html", timeout=60).text
    assert f"{uptime['label_30d']}: {uptime['uptime_30d_pct']:.1f}%" in page
    assert "not covered by the signed root" in page
    assert "five-minute" not in (lake.root / "site" / "current" / "badges" / f"{owner_id}-uptime.svg").read_text()


def test_the_server_refuses_another_host_name_and_serves_the_site(served):
    import httpx

    _, url = served
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}
    rebound = httpx.post(f"{url}/mcp", json=body, headers={**headers, "Host": "evil.example"}, timeout=30)
    assert rebound.status_code in (400, 403, 421)  # the SDK's DNS-rebinding guard
    page = httpx.get(f"{url}/", timeout=30)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    badge = httpx.get(f"{url}/badges/{short_id(server_key('https://mcp.notes.test/mcp'))}.svg", timeout=30)
    assert badge.status_code == 200 and badge.headers["content-type"] == "image/svg+xml"
    assert httpx.get(f"{url}/../../etc/passwd", timeout=30).status_code == 404


def test_report_road_lands_valid_reports_and_refuses_free_text(served):
    lake, url = served
    with MapDay.open(lake) as mapday:
        key = mapday.rows("SELECT server_key FROM daily_status WHERE code = 'o' ORDER BY server_key LIMIT 1")[0][
            "server_key"]
    before = set((lake.root / "raw" / "agent_reports").rglob("mcp-*.parquet"))
    _, (good, bad, second, flood) = _call(url, [
        ("report_road", {"server": key, "tool": "get_weather", "ok": True, "ms": 120}),
        ("report_road", {"server": key, "tool": "the search tool was slow and returned the wrong city", "ok": True}),
        ("report_road", {"server": key, "tool": "get_weather", "ok": False, "fail": "timeout", "ms": 8000}),
        ("report_road", {"server": key, "tool": "get_weather", "ok": True, "ms": 90}),
    ])
    recorded = _answer(good)
    assert recorded["recorded"] is True
    assert bad.is_error and "free text is never accepted" in bad.content[0].text
    assert _answer(second)["recorded"] is True  # the third report of the hour (a refused one counts too)
    assert flood.is_error and "more than 3 reports in an hour" in flood.content[0].text
    landed = set((lake.root / "raw" / "agent_reports").rglob("mcp-*.parquet")) - before
    assert sorted(p.relative_to(lake.root).as_posix() for p in landed) == sorted(
        [recorded["batch"], _answer(second)["batch"]])
    row = pq.read_table(lake.root / recorded["batch"]).to_pylist()[0]
    assert row["server"] == key and row["paid"] is False and re.fullmatch("[0-9a-f]{64}", row["reporter_id"])
    # The operational log: tool, time, client name, agent code; never an address.
    text = "".join(p.read_text() for p in oplog_folder(lake).glob("day=*.jsonl"))
    lines = [json.loads(line) for line in text.splitlines()]
    assert [line["tool"] for line in lines[-4:]] == ["report_road"] * 4
    assert all(re.fullmatch("[0-9a-f]{64}", line["agent_code"]) for line in lines)
    assert any(line["outcome"] == "refused" for line in lines)  # that it was refused; never the words
    assert "127.0.0.1" not in text
    # The reporter is the address's code, the client's name left out (a caller names itself freely).
    assert row["reporter_id"] == OpLog.at(oplog_folder(lake)).agent_code("127.0.0.1", None) != lines[-1]["agent_code"]


def test_a_demo_route_answer_names_its_set_asides(fleet_demo_lake):
    with MapDay.open(fleet_demo_lake) as mapday:
        answer = route(mapday, "delete records")
    assert answer["task_risk"] == "red"
    assert answer["set_aside"], "a high-risk task on a few days' map sets new servers aside"
    assert all(e["reasons"] for e in answer["set_aside"])
    assert any("new server" in r for e in answer["set_aside"] for r in e["reasons"])


def _chromium(url: str, shot: Path, tmp: Path) -> str:
    assert Path(CHROMIUM).exists(), ("Chromium is not installed: `make test` installs Debian's chromium package "
                                     "(apt-get install chromium)")
    shot.parent.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp}", "--hide-scrollbars", "--window-size=1100,1600", "--enable-logging=stderr",
         "--v=0", f"--screenshot={shot}", url],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stderr


def test_the_site_renders_in_headless_chromium_without_errors(served, tmp_path):
    lake, url = served
    site = lake.root / "site" / "current"
    index = (site / "index.html").read_text()
    assert "<svg" in index and "Why checks failed" in index and "<script" not in index
    server_id = short_id(server_key("https://mcp.notes.test/mcp"))  # a server with tools of each risk level
    page = (site / "servers" / f"{server_id}.html").read_text()
    assert "integrity/root.json" in page and ".tlog-proof" in page  # the root and the proofs it was built from
    badge = (site / "badges" / f"{server_id}.svg").read_text()
    assert badge.startswith("<svg") and "7maps" in badge
    for name, path in (("index", "/"), ("server", f"/servers/{server_id}.html"), ("down", "/down.html"),
                       ("live-down", "/live/down.html"), ("live-server", f"/live/servers/{server_id}.html"),
                       ("live-categories", "/live/categories/")):
        shot = SCREENSHOTS / f"{name}.png"
        shot.unlink(missing_ok=True)
        log = _chromium(url + path, shot, tmp_path / name)
        errors = [line for line in log.splitlines()
                  if "CONSOLE" in line or "Failed to load resource" in line or "net::ERR" in line]
        assert errors == [], errors
        assert shot.stat().st_size > 10_000  # a rendered page, not a blank one
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_newest_signed_day_has_its_site_and_the_asset_carries_the_index_chart(fleet_demo_lake):
    """The demo's sign run signs 29 days at once: only the newest gets its site (the served one); the days
    it caught up are named as superseded, not built (a site is a page per endpoint: docs/scaling.md)."""
    import dagster as dg
    from dagster._core.instance.ref import InstanceRef

    from sevenmaps_pipeline.integrity.roots import signed_days

    days = signed_days(fleet_demo_lake)
    sites = fleet_demo_lake.root / "site" / "days"
    assert days and (sites / days[-1].isoformat() / "index.html").is_file()
    assert (fleet_demo_lake.root / "site" / "current").resolve() == (sites / days[-1].isoformat()).resolve()
    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(fleet_demo_lake.root / ".dagster"))) as instance:
        event = instance.get_latest_materialization_event(dg.AssetKey("day_site"))
    assert event is not None and event.asset_materialization is not None
    metadata = event.asset_materialization.metadata
    assert "data:image/svg+xml;base64," in metadata["index_chart"].value and metadata["pages"].value > 0
    superseded = metadata["superseded_days"].value
    assert metadata["day"].value == days[-1].isoformat() and days[-2].isoformat() in superseded
    assert not any((sites / d).exists() for d in superseded)


def test_the_site_written_a_part_at_a_time_is_the_site_written_whole(fleet_demo_lake, tmp_path):
    """build_site holds the whole status of only a part of the endpoints at once (memory at 100,000
    endpoints, docs/scaling.md); cut into many parts, written in this process or by worker processes, it
    writes the same files, byte for byte, as in one."""
    import hashlib

    from sevenmaps_pipeline.publishing.site import build_site
    from sevenmaps_pipeline.publishing.status import key_ranges, statuses

    lake = LakePaths.at(tmp_path / "lake")
    shutil.copytree(fleet_demo_lake.root, lake.root, symlinks=True,
                    ignore=lambda folder, names: [n for n in names if n == ".dagster"])
    day = latest_built_day(lake)
    assert day is not None

    def built(servers_per_part: int, workers: int = 1) -> dict[str, str]:
        folder = build_site(lake, day, servers_per_part=servers_per_part, workers=workers).folder
        return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
                for p in sorted(folder.rglob("*")) if p.is_file()}

    whole = built(10_000)
    endpoints = sum(1 for name in whole if name.startswith("servers/"))
    assert endpoints >= 20 and any(name.startswith("integrity/proofs/") for name in whole)
    nodes = {}  # the badges of one text are names of one file (site.py _Folder.write_same)
    for badge in (lake.root / "site" / "days" / day.isoformat() / "badges").iterdir():
        nodes.setdefault(badge.read_bytes(), set()).add(badge.stat().st_ino)
    assert len(nodes) < endpoints and all(len(inodes) == 1 for inodes in nodes.values())
    assert built(3) == whole
    assert built(3, workers=2) == whole  # the parts shared by two worker processes
    # A host whose main module a spawned worker cannot import again (a script read from stdin) loses its
    # workers; the pages are then all written in the one process, and say so.
    script = ("import datetime\nfrom pathlib import Path\nfrom sevenmaps_pipeline.lake.paths import LakePaths\n"
              "from sevenmaps_pipeline.publishing.site import build_site\n"
              f"r = build_site(LakePaths.at(Path({str(lake.root)!r})), datetime.date({day.year}, {day.month}, "
              f"{day.day}), servers_per_part=3, workers=2)\nprint(r.writers, r.writers_note)\n")
    done = subprocess.run([sys.executable, "-"], input=script, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("1 worker processes failed (") and "pages written in one process" in done.stdout
    folder = lake.root / "site" / "days" / day.isoformat()
    assert {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()} == whole
    with MapDay.open(lake, day) as mapday:
        ranges = key_ranges(mapday, 7)
        sizes = [len(statuses(mapday, part=part)) for part in ranges]
    assert ranges[0][0] is None and ranges[-1][1] is None  # consecutive ranges from the first key to the last
    assert all(before[1] == after[0] is not None for before, after in zip(ranges, ranges[1:], strict=False))
    assert sum(sizes) == endpoints and sum(1 for n in sizes if n) > 3  # every endpoint in exactly one part


def test_a_file_changed_after_signing_is_never_shown_signed(fleet_demo_lake, tmp_path):
    """A stranger's attack: with a signed day's tools rewritten (every risk red), server_status answered "signed",
    `sevenmaps site` rebuilt the day's pages with the root's hashes beside the changed rows, and a stray `.bak`
    folder of an earlier day made the server fail to open the map."""
    lake = copy_for_serving(fleet_demo_lake, tmp_path / "lake")
    day = latest_built_day(lake)
    tools = lake.curated_file("tools", day)
    table = pq.read_table(tools)
    pq.write_table(table.set_column(table.schema.get_field_index("risk"), "risk",
                                    pa.array(["red"] * table.num_rows)), tools)
    stray = lake.curated_file("tool_facts", day).parent.with_name(f"day={day - dt.timedelta(days=1)}.bak")
    shutil.copytree(lake.curated_file("tool_facts", day - dt.timedelta(days=1)).parent, stray)
    with MapDay.open(lake, live=True) as mapday:
        served = mapday.served()
        assert served["signed"] is False and served["signed_root"] is None
        assert "shown unsigned" in served["note"] and f"curated/tools/day={day}/part-0.parquet" in served["note"]
        (sid,) = [r["server_id"] for r in mapday.rows("SELECT server_id FROM daily_status LIMIT 1")]
        page = render(mapday, "server", sid)
        assert page is not None and b"This day is shown unsigned" in page.body and b"Signed root" not in page.body
    with pytest.raises(ChangedSinceSigningError, match="not those its root signed"):
        build_site(lake, day)
    shutil.copyfile(fleet_demo_lake.curated_file("tools", day), tools)  # the signed bytes again
    with MapDay.open(lake) as mapday:
        assert mapday.served()["signed"] is True
        # A running server notices a file it reads written again, and its next answer is not signed.
        pq.write_table(table.set_column(table.schema.get_field_index("risk"), "risk",
                                        pa.array(["red"] * table.num_rows)), tools)
        assert mapday.inputs_changed()
    # The root edited to match the changed file: its lines no longer give its root (a stranger's review).
    root = json.loads(lake.root_file(day).read_text())
    rel = f"curated/tools/day={day}/part-0.parquet"
    root["lines"] = [f"{sha256_file(tools)}  {rel}" if line.endswith("  " + rel) else line for line in root["lines"]]
    lake.root_file(day).chmod(0o644)
    lake.root_file(day).write_text(json.dumps(root))
    with MapDay.open(lake) as mapday:
        assert mapday.served()["signed"] is False and "lines do not give its root" in mapday.served()["note"]
    shutil.copyfile(fleet_demo_lake.curated_file("tools", day), tools)
    shutil.copyfile(fleet_demo_lake.root_file(day), lake.root_file(day))


def test_what_an_answer_reads_of_earlier_signed_days_is_checked_too(fleet_demo_lake, tmp_path):
    """A second review: an earlier day's tool facts changed, a day no root covers read by the every-day tables, a
    window's signed file deleted, and a running server's route index kept across the day's reopening."""
    lake = copy_for_serving(fleet_demo_lake, tmp_path / "lake")
    day = latest_built_day(lake)
    # An earlier signed day's file the served day reads (its tool facts): changed, the day is not shown signed.
    earlier = sorted((lake.root / "curated" / "tool_facts").glob("day=*/part-0.parquet"))[0]
    assert earlier.parent.name < f"day={day}"
    facts = pq.read_table(earlier)
    pq.write_table(facts.set_column(facts.schema.get_field_index("description"), "description",
                                    pa.array(["TAMPERED"] * facts.num_rows)), earlier)
    with MapDay.open(lake) as mapday:
        assert mapday.served()["signed"] is False and earlier.relative_to(lake.root).as_posix() in (
            mapday.served()["note"])
    shutil.copyfile(fleet_demo_lake.root / earlier.relative_to(lake.root), earlier)
    # A second review: a day no root covers read by the every-day tables, and a signed file of a window deleted.
    before = lake.root / "curated" / "tool_facts" / "day=2000-01-01"
    shutil.copytree(earlier.parent, before)
    with MapDay.open(lake) as mapday:
        assert mapday.served()["signed"] is False and "no root covers its day 2000-01-01" in mapday.served()["note"]
    shutil.rmtree(before)
    gone = lake.curated_file("daily_status", day - dt.timedelta(days=2))
    gone.unlink()
    with MapDay.open(lake) as mapday:
        assert mapday.served()["signed"] is False and "which its root signed, is gone" in mapday.served()["note"]
    shutil.copyfile(fleet_demo_lake.root / gone.relative_to(lake.root), gone)
    # A running server's route index read while a file differed is not kept once the signed bytes are back.
    from sevenmaps_pipeline.surfaces.mcp_server import MapService

    service = MapService(lake)

    def ask(mapday: MapDay) -> tuple[bool, list[str]]:
        answer = route(mapday, "search the product catalogue", None, 3, index=service.index(mapday),
                       facts=service.facts(mapday))
        return answer["signed"], [t.get("description") or "" for t in answer["tools"]]

    facts_now = pq.read_table(earlier)
    pq.write_table(facts_now.set_column(facts_now.schema.get_field_index("description"), "description",
                                        pa.array(["TAMPERED"] * facts_now.num_rows)), earlier)
    signed, _ = service.read(ask)
    assert signed is False
    shutil.copyfile(fleet_demo_lake.root / earlier.relative_to(lake.root), earlier)
    signed, descriptions = service.read(ask)
    assert signed is True and not any("TAMPERED" in d for d in descriptions)
