"""`sevenmaps serve`'s live badges, lists and pages (/live/: publishing/live.py, surfaces/live_pages.py) over a
hand-made lake built by the real day builds: they follow current_status (two failed hourly checks take a server
off its reliable list and turn its badge down, one never does), answer with an ETag and Cache-Control a CDN
can use and 304 to a matching If-None-Match, and an owner-verified endpoint's badge and page show its
five-minute uptime; the signed day's tables keep what they had, for the record."""

from __future__ import annotations

import datetime as dt

import httpx
import pyarrow as pa
import pytest
from conftest import land_probes, land_status, probe, served_on_loopback

from sevenmaps_pipeline.curated.day import rebuild_day
from sevenmaps_pipeline.lake.keys import server_id, server_key
from sevenmaps_pipeline.lake.parquet_io import write_parquet
from sevenmaps_pipeline.lake.paths import LakePaths
from sevenmaps_pipeline.lake.schemas import RAW_FIVE_MINUTE, RAW_HOURLY, conform
from sevenmaps_pipeline.publishing.live import LIVE_METHOD
from sevenmaps_pipeline.publishing.mapday import MapDay
from sevenmaps_pipeline.publishing.site import build_site
from sevenmaps_pipeline.rules.methods import CURRENT_STATUS_METHOD
from sevenmaps_pipeline.surfaces.serve import make_app

DAY = dt.date(2026, 11, 20)
URLS = {"forecast": "https://forecast.example.com/mcp", "rain": "https://rain.example.org/mcp",
        "notes": "https://notes.example.net/mcp"}
ID = {name: server_id(server_key(url)) for name, url in URLS.items()}


def tool(name: str, description: str) -> dict:
    return {"name": name, "description": description, "inputSchema": {"type": "object"}}


WEATHER = [tool("get_forecast", "Get the weather forecast for a city."),
           tool("get_weather", "Current weather for a city."), tool("weather_alerts", "Weather alerts for a region.")]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> LakePaths:
    """Fifteen days on which three endpoints answered, then a day built from real probe rows: two weather
    servers on the weather category's reliable list, a notes server on productivity's."""
    lake = LakePaths.at(tmp_path_factory.mktemp("live") / "lake")
    keys = [server_key(u) for u in URLS.values()]
    for back in range(15, 0, -1):
        land_status(lake, DAY - dt.timedelta(days=back), dict.fromkeys(keys, "o"), handshake=dict.fromkeys(keys, 200))
    land_probes(lake, [probe(URLS["forecast"], "ok", day=DAY, tools=WEATHER),
                       probe(URLS["rain"], "ok", day=DAY, tools=[*WEATHER[:2], tool("rain_radar", "Weather radar.")]),
                       probe(URLS["notes"], "ok", day=DAY, tools=[tool("search_notes", "Search the notes.")])], day=DAY)
    rebuild_day(lake, DAY)
    return lake


@pytest.fixture
def lake(built, tmp_path) -> LakePaths:
    import shutil

    shutil.copytree(built.root, tmp_path / "lake")
    return LakePaths.at(tmp_path / "lake")


def land_hourly(lake: LakePaths, url: str, outcome: str, hour: int, tools: list | None = None) -> None:
    row = probe(url, outcome, day=DAY, hour=hour, check_kind="hourly", run_id=f"hourly-{hour}", tools=tools)
    write_parquet(lake, lake.raw_dir("hourly", DAY) / f"hourly-{hour}.parquet",
                  conform(pa.Table.from_pylist([row], RAW_HOURLY.schema), RAW_HOURLY))


def land_five_minute(lake: LakePaths, url: str, minutes: list[int]) -> None:
    rows = [probe(url, "ok", day=DAY, hour=10, minute=m, check_kind="five_minute", run_id=f"five-{m}") for m in minutes]
    write_parquet(lake, lake.raw_dir("five_minute", DAY) / "five-batch.parquet",
                  conform(pa.Table.from_pylist(rows, RAW_FIVE_MINUTE.schema), RAW_FIVE_MINUTE))


def get(url: str, path: str, etag: str | None = None) -> httpx.Response:
    return httpx.get(f"{url}/live/{path}", headers={"If-None-Match": etag} if etag else {}, timeout=30)


def reliable_names(response: httpx.Response) -> list[str]:
    return [name for name in ("io.test/forecast", "io.test/rain") if name in response.text]


def test_two_failed_hourly_checks_take_a_server_off_the_live_list_and_badge_one_never_does(lake):
    with served_on_loopback(make_app(lake, live_fresh_seconds=0), "the map's server") as url:
        listed, badge = get(url, "categories/weather.html"), get(url, f"badges/{ID['forecast']}.svg")
        assert listed.status_code == 200 and reliable_names(listed) == ["io.test/forecast", "io.test/rain"]
        assert "answers with tools" in badge.text and badge.headers["content-type"] == "image/svg+xml"
        assert "max-age=60" in badge.headers["cache-control"] and badge.headers["etag"].startswith('"')
        assert listed.headers["content-security-policy"].startswith("default-src 'none'; style-src 'unsafe-inline'")
        assert get(url, f"badges/{ID['forecast']}.svg", badge.headers["etag"]).status_code == 304

        land_hourly(lake, URLS["forecast"], "timeout", hour=5)  # one failure: a flap, nothing shown changes
        assert get(url, f"badges/{ID['forecast']}.svg", badge.headers["etag"]).status_code == 304
        assert reliable_names(get(url, "categories/weather.html")) == ["io.test/forecast", "io.test/rain"]

        land_hourly(lake, URLS["forecast"], "timeout", hour=6)  # two in a row: shown down now
        now_badge = get(url, f"badges/{ID['forecast']}.svg", badge.headers["etag"])
        assert now_badge.status_code == 200 and ">down<" in now_badge.text
        assert now_badge.headers["etag"] != badge.headers["etag"]
        assert reliable_names(get(url, "categories/weather.html")) == ["io.test/rain"]
        reliable = get(url, "reliable.json").json()["reliable"]
        assert [(r["server_name"], r["rank"]) for r in reliable["weather"]] == [("io.test/rain", 1)]
        down = get(url, "down.json").json()
        (entry,) = down["down"]
        assert entry["server_name"] == "io.test/forecast" and entry["decided_by"] == "hourly"
        assert entry["since"].startswith(f"{DAY.isoformat()}T05:00")  # since the first check that saw it
        assert f"Down since {entry['since']}" in get(url, f"servers/{ID['forecast']}.html").text  # as the list
        assert down["map_day"] == DAY.isoformat() and "open_day" in down
        assert "io.test/forecast" in get(url, "down.html").text
        assert "1 server down now, ordered by name; 0 confirmed live incidents." in get(url, "down.html").text

    # The signed day's tables keep what they had: the record, read by the day's own site.
    with MapDay.open(lake) as record:
        ranked = record.rows("SELECT server_name FROM reliable_rankings WHERE category = 'weather' ORDER BY rank, "
                             "server_name")
    assert [r["server_name"] for r in ranked] == ["io.test/forecast", "io.test/rain"]


def test_an_empty_tool_list_shown_now_takes_a_server_off_the_live_list_as_the_signed_lists_do(lake):
    # reliable-1.2: an empty list is an answer, not tools. An hourly check newer than the built day that lists
    # no tools is shown at once (an answer), so it is what the live list reads.
    land_hourly(lake, URLS["rain"], "ok", hour=7, tools=[])
    land_hourly(lake, URLS["forecast"], "ok", hour=8, tools=WEATHER)
    with served_on_loopback(make_app(lake, live_fresh_seconds=0), "the map's server") as url:
        assert reliable_names(get(url, "categories/weather.html")) == ["io.test/forecast"]
        reliable = get(url, "reliable.json").json()
        assert [(r["server_name"], r["rank"]) for r in reliable["reliable"]["weather"]] == [("io.test/forecast", 1)]
        assert reliable["live"]["method"] == LIVE_METHOD  # the version the answer was made by
    with MapDay.open(lake) as record:
        now = {r["server_name"]: r for r in record.rows(
            "SELECT server_name, current_code, current_tool_count, current_shown_status, decided_by, method_version "
            "FROM current_status")}
        ranked = record.rows("SELECT server_name FROM reliable_rankings WHERE category = 'weather' ORDER BY rank, "
                             "server_name")
    assert (now["io.test/rain"]["current_code"], now["io.test/rain"]["current_tool_count"]) == ("o", 0)
    assert now["io.test/rain"]["current_shown_status"] == "answers, lists no tools"  # status-1.2, current-1.2
    assert now["io.test/forecast"]["current_shown_status"] == "answers with tools"
    assert (now["io.test/forecast"]["current_tool_count"], now["io.test/notes"]["current_tool_count"]) == (3, 1)
    assert now["io.test/rain"]["decided_by"] == "hourly" and now["io.test/notes"]["decided_by"] == "daily"
    # The view's SQL names its method literally: it must be the one rules/methods.py and the changelog name.
    assert {r["method_version"] for r in now.values()} == {CURRENT_STATUS_METHOD}
    assert [r["server_name"] for r in ranked] == ["io.test/forecast", "io.test/rain"]  # the record keeps its lists


def test_a_category_page_says_which_list_it_is_and_how_it_is_ordered(lake):
    """The day's site keeps the signed day's list (answering with tools on that day); the live page is that list
    without what is not answering with tools now. Both name the order reliable-1.3 ranks by (a user read the
    day's page as "answering with tools now, then response time")."""
    build_site(lake, DAY)
    static = (lake.root / "site" / "current" / "categories" / "weather.html").read_text()
    with served_on_loopback(make_app(lake), "the map's server") as url:
        live = get(url, "categories/weather.html").text
    order = (f"ordered by the share of checked days answering with tools over the 30 days ending {DAY}, then the "
             "share answering at all (an empty tool list or a request for sign-in or payment is an answer, not "
             "tools), then the median handshake")
    assert order in static and order in live
    assert f"Answering with tools on {DAY} (at least one tool listed), with this category" in static
    assert f"The list as ranked on {DAY}, without what is not answering with tools now" in live
    assert "Answering with tools on" not in live


def test_the_days_site_says_as_of_when_its_now_is(lake):
    """A site is built once, and its "now" (badges, the index's counts, a page's shown status) is the latest check
    read then: the index says which, and a page says when the check that decided its status was made (a user
    read "down now" beside the signed day's figures as a contradiction)."""
    land_hourly(lake, URLS["rain"], "ok", hour=7, tools=WEATHER)
    build_site(lake, DAY)
    with MapDay.open(lake) as mapday:
        ((latest,),) = mapday.con.execute("SELECT max(decided_at) FROM current_status").fetchall()
        ((rain_at,),) = mapday.con.execute("SELECT decided_at FROM current_status WHERE decided_by = 'hourly'"
                                           ).fetchall()
    site = lake.root / "site" / "current"
    index = (site / "index.html").read_text()
    assert f"\"Now\" is the status shown as of {latest:%Y-%m-%dT%H:%M:%S}Z, the latest check read" in index
    page = (site / "servers" / f"{ID['rain']}.html").read_text()
    assert f"decided by the hourly check at {rain_at:%Y-%m-%dT%H:%M:%S}Z" in page  # as "down since" (helper-100)


def test_the_days_site_reads_the_five_minute_checks_since_as_it_reads_the_hourly_ones(lake):
    """Its index says "now" is the daily check, then the hourly and five-minute checks since: a newcomer found the
    site's pages decided by an hourly check while the owner's later five-minute checks decided every other surface.
    The five-minute uptime stays the record's: the 90 days through the day (none here)."""
    after = DAY + dt.timedelta(days=1)
    rows = [probe(URLS["notes"], "timeout", day=after, hour=1, minute=5 * i, check_kind="five_minute",
                  run_id=f"five-{i}") for i in range(2)]
    write_parquet(lake, lake.raw_dir("five_minute", after) / "five-batch.parquet",
                  conform(pa.Table.from_pylist(rows, RAW_FIVE_MINUTE.schema), RAW_FIVE_MINUTE))
    build_site(lake, DAY)
    page = (lake.root / "site" / "current" / "servers" / f"{ID['notes']}.html").read_text()
    assert "decided by the five-minute check at" in page and "five-minute uptime" not in page
    with MapDay.open(lake, live=True) as mapday:
        ((live_by,),) = mapday.con.execute("SELECT decided_by FROM current_status WHERE server_key = $k",
                                           {"k": server_key(URLS["notes"])}).fetchall()
    assert live_by == "five_minute"


def test_an_owner_verified_endpoint_shows_its_five_minute_uptime_on_its_live_badge_and_page(lake):
    land_five_minute(lake, URLS["notes"], [0, 5, 10])
    with served_on_loopback(make_app(lake), "the map's server") as url:
        badge = get(url, f"badges/{ID['notes']}-uptime.svg")
        page = get(url, f"servers/{ID['notes']}.html")
        other = get(url, f"badges/{ID['rain']}-uptime.svg")
        assert get(url, "badges/ffffffffffff.svg").status_code == 404  # names nothing on the map
        assert get(url, "servers/../../etc/passwd").status_code == 404
    # One day observed, in the singular (site-1.5, live-pages-1.5: it said "over 1 days observed").
    assert badge.status_code == 200 and "five-minute uptime over 1 day observed" in badge.text
    assert "100.0%" in badge.text and "1 days" not in badge.text
    assert "five-minute uptime over 1 day observed: 100.0%" in page.text and "3 of 3 five-minute checks" in page.text
    assert "live: the status shown now" in page.text
    assert "decided by the five-minute check" in page.text  # worded, never the column's five_minute
    assert "five-minute" not in other.text and "uptime" in other.text  # no five-minute checks: the daily uptime


def test_made_up_paths_are_404s_that_never_read_the_map(lake):
    """A flood of made-up server ids or categories is answered from the day's index of names, read once: it
    never takes the gate's turn from tool calls; a name with a trailing newline is not a live page's."""
    import asyncio

    from sevenmaps_pipeline.surfaces.call_gate import CallGate
    from sevenmaps_pipeline.surfaces.live_pages import LivePages
    from sevenmaps_pipeline.surfaces.mcp_server import MapService

    class CountingService(MapService):  # counts the reads of the map; the reading itself is the real one
        reads = 0

        def read(self, fn):
            CountingService.reads += 1
            return super().read(fn)

    async def go() -> tuple[list, object, object]:
        pages = LivePages(CountingService(lake), CallGate())
        made_up = [await pages.get(f"badges/{i:012x}.svg") for i in range(200)]
        made_up += [await pages.get(f"categories/topic-{i}.html") for i in range(50)]
        real = await pages.get(f"badges/{ID['forecast']}.svg")
        again = await pages.get(f"badges/{ID['forecast']}.svg")
        return made_up, real, again

    made_up, real, again = asyncio.run(go())
    assert made_up == [None] * 250 and real is not None and again is real
    assert CountingService.reads == 2  # the index of names once, the real badge once
    from sevenmaps_pipeline.publishing.live import kind_of

    assert kind_of(f"badges/{ID['forecast']}.svg\n") is None and kind_of("down.json\n") is None
    assert kind_of(f"badges/{ID['forecast']}.svg") == ("badge", ID["forecast"])


def test_an_owners_five_minute_checks_move_the_status_shown_now_as_hourly_ones_do(lake):
    """Two failed five-minute checks in a row show the owner's endpoint down on its live badge and the down
    list (decided by the five-minute check); one alone never does."""
    def land(outcomes: list[str]) -> None:
        rows = [probe(URLS["notes"], outcome, day=DAY, hour=10, minute=5 * i, check_kind="five_minute",
                      run_id=f"five-{i}") for i, outcome in enumerate(outcomes)]
        write_parquet(lake, lake.raw_dir("five_minute", DAY) / "five-batch.parquet",
                      conform(pa.Table.from_pylist(rows, RAW_FIVE_MINUTE.schema), RAW_FIVE_MINUTE))

    with served_on_loopback(make_app(lake, live_fresh_seconds=0), "the map's server") as url:
        land(["ok", "timeout"])
        assert "answers with tools" in get(url, f"badges/{ID['notes']}.svg").text
        land(["ok", "timeout", "timeout"])
        assert ">down<" in get(url, f"badges/{ID['notes']}.svg").text
        (entry,) = get(url, "down.json").json()["down"]
        assert entry["server_name"] == "io.test/notes" and entry["decided_by"] == "five_minute"
        assert entry["since"].startswith(f"{DAY.isoformat()}T10:05")  # the first failed check of the two


def test_tied_servers_keep_one_rank_live_as_on_the_days_list(tmp_path):
    """Two endpoints equal on every key of the reliable order: rank 1 and 1 on the day's list, on the site and live
    (helper-94: live-pages-1.5 counted them 1 and 2); once one is set aside, the other is 1."""
    lake = LakePaths.at(tmp_path / "lake")
    urls = {"alpha": "https://alpha.example.net/mcp", "beta": "https://beta.example.org/mcp"}
    keys = [server_key(u) for u in urls.values()]
    for back in range(16, 0, -1):
        land_status(lake, DAY - dt.timedelta(days=back), dict.fromkeys(keys, "o"), handshake=dict.fromkeys(keys, 200))
    land_probes(lake, [probe(u, "ok", day=DAY, tools=WEATHER[:2], handshake_ms=200) for u in urls.values()], day=DAY)
    rebuild_day(lake, DAY)
    with MapDay.open(lake) as record:
        day_ranks = record.rows("SELECT rank FROM reliable_rankings WHERE category = 'weather'")
    assert [r["rank"] for r in day_ranks] == [1, 1]
    with served_on_loopback(make_app(lake, live_fresh_seconds=0), "the map's server") as url:
        reliable = get(url, "reliable.json").json()
        assert reliable["live"]["method"] == "live-pages-1.7"
        assert [(r["rank"], r["day_rank"]) for r in reliable["reliable"]["weather"]] == [(1, 1), (1, 1)]
        land_hourly(lake, urls["alpha"], "timeout", hour=5)
        land_hourly(lake, urls["alpha"], "timeout", hour=6)  # shown down now: set aside
        (left,) = get(url, "reliable.json").json()["reliable"]["weather"]
        assert (left["server_id"], left["rank"], left["day_rank"]) == (server_id(keys[1]), 1, 1)
