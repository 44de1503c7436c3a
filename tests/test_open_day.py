"""The open day as it lands (curated/open_day.py): after each slice its provisional tables are built by the
day's own builders, and the map's server (`sevenmaps serve`'s app, through the official MCP SDK client)
follows them: a tool that turned red in the 09:00 slice is set aside by route within the hour, and every
answer says which checks it rests on. Read for the record, nothing changes; once the day is built, the day
itself is what answers read."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
from pathlib import Path

import pytest
from conftest import land_probes, probe, served_on_loopback
from mcp import Client

from sevenmaps_pipeline.curated import open_day as open_day_module
from sevenmaps_pipeline.curated.day import rebuild_day
from sevenmaps_pipeline.curated.open_day import OpenDayError, build_open_day, current_open_day
from sevenmaps_pipeline.lake.keys import server_key
from sevenmaps_pipeline.lake.paths import LakePaths
from sevenmaps_pipeline.lake.warehouse import open_warehouse, publish_warehouse
from sevenmaps_pipeline.publishing.mapday import MapDay
from sevenmaps_pipeline.rules.fingerprints import summarize_tools
from sevenmaps_pipeline.surfaces.route import route
from sevenmaps_pipeline.surfaces.serve import make_app

DAYS = [dt.date(2026, 11, 10) + dt.timedelta(days=i) for i in range(3)]
OPEN = DAYS[-1] + dt.timedelta(days=1)


def tool(name: str, description: str, **annotations: bool) -> dict:
    t = {"name": name, "description": description, "inputSchema": {"type": "object"}}
    if annotations:
        t["annotations"] = annotations
    return t


FORECAST = [tool("get_forecast", "Get the weather forecast for a city.")]
# The same tool, as the 09:00 slice finds it: its server now says it destroys data.
FORECAST_RED = [tool("get_forecast", "Get the weather forecast for a city.", readOnlyHint=False, destructiveHint=True)]
WEATHER = [tool("get_weather", "Current weather and forecast for a city.")]
NOTES = [tool("search_notes", "Search the notes in the notebook.")]
URLS = {"forecast": "https://forecast.example.com/mcp", "weather": "https://weather.example.org/mcp",
        "notes": "https://notes.example.net/mcp"}


def slice_key(hour: int) -> str:
    return f"{OPEN.isoformat()}-{hour:02d}:00"


@pytest.fixture
def lake(tmp_path) -> LakePaths:
    return open_day_lake(tmp_path / "lake")


def open_day_lake(root: Path) -> LakePaths:
    """Three built days of three endpoints, then the open day's 03:00 slice (weather and notes) landed and
    built provisionally, as the slice job does (also served to the TypeScript client, tests/test_ts_sdk_client.py)."""
    lake = LakePaths.at(root)
    for day in DAYS:
        land_probes(lake, [probe(URLS["forecast"], "ok", day=day, hour=9, tools=FORECAST),
                           probe(URLS["weather"], "ok", day=day, hour=3, tools=WEATHER),
                           probe(URLS["notes"], "ok", day=day, hour=3, tools=NOTES)], day=day)
        rebuild_day(lake, day)
    land_probes(lake, [probe(URLS["weather"], "ok", day=OPEN, hour=3, tools=WEATHER),
                       probe(URLS["notes"], "timeout", day=OPEN, hour=3)], day=OPEN, run_id="slice-03")
    build_open_day(lake, OPEN, slice_key(3))
    return lake


def land_nine_oclock_slice(lake: LakePaths) -> None:
    land_probes(lake, [probe(URLS["forecast"], "ok", day=OPEN, hour=9, tools=FORECAST_RED)], day=OPEN,
                run_id="slice-09")
    build_open_day(lake, OPEN, slice_key(9))


def call(url: str, calls: list[tuple[str, dict]]) -> list[dict]:
    async def go():
        async with Client(f"{url}/mcp") as client:
            return [await client.call_tool(name, args) for name, args in calls]

    answers = []
    for result in asyncio.run(go()):
        assert not result.is_error, result.content
        answers.append(result.structured_content or json.loads(result.content[0].text))
    return answers


def ranked(answer: dict) -> list[tuple[str, str]]:
    return [(t["server_name"], t["tool"]) for t in answer["tools"]]


def reasons(answer: dict) -> dict[str, list[str]]:
    return {e["url"]: e["reasons"] for e in answer["set_aside"]}


def test_a_tool_that_turned_red_in_the_nine_oclock_slice_is_set_aside_through_the_official_client(lake):
    forecast = server_key(URLS["forecast"])
    old_hash = summarize_tools(FORECAST).tools_hash
    with served_on_loopback(make_app(lake), "the map's server") as url:
        before, notes = call(url, [("route", {"task": "weather forecast for a city"}),
                                   ("server_status", {"server": URLS["notes"]})])
        assert ("io.test/forecast", "get_forecast") in ranked(before)
        assert before["map_day"] == DAYS[-1].isoformat()
        assert before["open_day"]["day"] == OPEN.isoformat()
        assert before["open_day"]["slices_through"] == slice_key(3)
        assert before["open_day"]["endpoints_checked"] == 2  # weather and notes so far
        # The notes server timed out at 03:00 today: shown down now, on today's check, which answers say.
        assert notes["shown_status"] == "down" and notes["current"]["decided_by"] == "slice"
        assert notes["daily"]["code"] == "o" and notes["open_day_check"]["code"] == "d"

        land_nine_oclock_slice(lake)  # the same server process answers: it follows the new build
        after, status, lock, changes, feed = call(url, [
            ("route", {"task": "weather forecast for a city"}),
            ("server_status", {"server": URLS["forecast"]}),
            ("verify_lock", {"server": URLS["forecast"], "tools_hash": old_hash}),
            ("changes_since", {"server": URLS["forecast"], "since": DAYS[-1].isoformat()}),
            ("watch", {"days": 7}),
        ])
    assert ("io.test/forecast", "get_forecast") not in ranked(after)
    why = reasons(after)[URLS["forecast"]]
    assert any(r.startswith("\"get_forecast\" is red: more privilege than a green task needs") for r in why), why
    assert any(r.startswith("changed today:") and "provisional" in r for r in why), why
    assert after["open_day"]["slices_through"] == slice_key(9) and after["open_day"]["endpoints_checked"] == 3
    assert after["map_day"] == DAYS[-1].isoformat() and after["signed"] is False

    assert status["current"]["decided_by"] == "slice"
    assert status["open_day_check"]["checked_at"].startswith(f"{OPEN.isoformat()}T09:00")
    assert status["tools_from"].startswith("the open day's check")
    assert [(t["name"], t["risk"]) for t in status["tools"]] == [("get_forecast", "red")]
    assert status["open_day"]["day"] == OPEN.isoformat()

    assert lock["unchanged"] is False and lock["risk_rose"] is True and lock["risk_rose_in"] == ["get_forecast"]
    assert lock["current_list_seen_on"] == OPEN.isoformat() and "provisional" in lock["rests_on"]

    kinds = {(c["kind"], c["day"], c["provisional"]) for c in changes["changes"]}
    assert ("risk_rise", OPEN.isoformat(), True) in kinds and changes["through"] == OPEN.isoformat()
    assert any(e["kind"] == "risk_rise" and e["server_key"] == forecast and e["provisional"] for e in feed["entries"])


def test_read_for_the_record_nothing_provisional_is_read(lake):
    land_nine_oclock_slice(lake)
    with MapDay.open(lake) as record:
        answer = route(record, "weather forecast for a city")
        assert ("io.test/forecast", "get_forecast") in ranked(answer)
        assert "open_day" not in answer and record.open_day is None
        assert {r["decided_by"] for r in record.rows("SELECT decided_by FROM current_status")} == {"daily"}
    with MapDay.open(lake, live=True) as live:
        assert live.open_day is not None and live.open_day.slices_through == slice_key(9)
        assert ("io.test/forecast", "get_forecast") not in ranked(route(live, "weather forecast for a city"))


def test_a_provisional_build_writes_nothing_of_the_day_itself_and_gives_way_once_the_day_is_built(lake):
    land_nine_oclock_slice(lake)
    assert not any(lake.root.glob(f"curated/*/day={OPEN.isoformat()}"))
    assert not (lake.root / "cache" / f"change_baseline-{OPEN.isoformat()}.parquet").exists()
    builds = sorted(p.name for p in (lake.provisional_dir / "builds").iterdir())
    assert len(builds) == 2  # the current build and the one before it
    # The warehouse's current_status reads the open day too, for analysts.
    publish_warehouse(lake)
    with open_warehouse(lake) as con:
        shown = dict(con.execute("SELECT server_key, decided_by FROM current_status").fetchall())
    assert shown[server_key(URLS["forecast"])] == "slice" and shown[server_key(URLS["weather"])] == "slice"

    rebuild_day(lake, OPEN)  # the day ends and is built: the day itself answers
    with MapDay.open(lake, live=True) as live:
        assert live.day == OPEN and live.open_day is None and live.served()["open_day"] is None
        assert ("io.test/forecast", "get_forecast") not in ranked(route(live, "weather forecast for a city"))
    with pytest.raises(OpenDayError, match="is built"):
        build_open_day(lake, OPEN, slice_key(10))
    assert current_open_day(lake) is not None and current_open_day(lake).day == OPEN  # kept, but not read


def test_the_slice_job_builds_the_open_day_through_dagster(lake):
    """The slice job's open_day asset, materialised by a real Dagster instance for the 09:00 slice."""
    import dagster as dg

    from sevenmaps_pipeline.defs.open_day_assets import open_day
    from sevenmaps_pipeline.defs.resources import LakeResource

    land_probes(lake, [probe(URLS["forecast"], "ok", day=OPEN, hour=9, tools=FORECAST_RED)], day=OPEN,
                run_id="slice-09")
    with dg.DagsterInstance.ephemeral() as instance:
        result = dg.materialize([open_day], partition_key=slice_key(9), instance=instance,
                                resources={"lake": LakeResource(root=str(lake.root))})
        assert result.success
        (event,) = result.asset_materializations_for_node("open_day")
        assert event.metadata["endpoints_checked"].value == 3
        built = current_open_day(lake)
        assert built is not None and built.slices_through == slice_key(9)
        assert event.metadata["build"].value == built.build_id

        rebuild_day(lake, OPEN)  # a slice of a day already built builds nothing, and says so
        again = dg.materialize([open_day], partition_key=slice_key(10), instance=instance,
                               resources={"lake": LakeResource(root=str(lake.root))})
        assert again.success and not again.asset_materializations_for_node("open_day")
        assert current_open_day(lake).build_id == built.build_id


def test_between_midnight_and_the_ended_days_map_that_day_is_still_read_and_nothing_is_reported_twice(lake):
    """OPEN has ended and its map is not built yet (it runs at 00:10) when the next day's first slice lands:
    the server keeps reading OPEN's last build (the notes server stays down, as OPEN's check found), and the
    new day's changes compare with OPEN's checks, so OPEN's change is not reported again."""
    land_nine_oclock_slice(lake)
    next_day = OPEN + dt.timedelta(days=1)
    land_probes(lake, [probe(URLS["weather"], "ok", day=next_day, hour=0, tools=WEATHER),
                       probe(URLS["forecast"], "ok", day=next_day, hour=0, tools=FORECAST_RED)], day=next_day,
                run_id="slice-00")
    build_open_day(lake, next_day, f"{next_day.isoformat()}-00:00")
    with MapDay.open(lake, live=True) as live:
        assert live.day == DAYS[-1] and [b.day for b in live.open_days] == [OPEN, next_day]
        assert live.served()["provisional_days"] == [OPEN.isoformat(), next_day.isoformat()]
        shown = {r["server_key"]: (r["current_code"], r["decided_by"], r["open_day"]) for r in
                 live.rows("SELECT server_key, current_code, decided_by, open_day FROM current_status")}
        assert shown[server_key(URLS["notes"])] == ("d", "slice", OPEN)  # OPEN's 03:00 check, still read
        assert shown[server_key(URLS["forecast"])] == ("o", "slice", next_day)
        rises = live.rows("SELECT day, kind, tool_name FROM change_window WHERE kind = 'risk_rise'")
        assert [(r["day"], r["tool_name"]) for r in rises] == [(OPEN, "get_forecast")]  # once, on OPEN
        assert [r["tool_name"] for r in live.rows(
            "SELECT tool_name FROM change_window WHERE day = $d", {"d": next_day})] == []


def test_a_build_that_began_earlier_never_replaces_one_that_began_later(lake, monkeypatch):
    # A retried step of the 03:00 slice begins; while it builds, the 09:00 slice lands and its build runs
    # whole; the 03:00 build finishes after it, with a later clock.
    checked_so_far, nested = open_day_module._checked_so_far, []

    def meanwhile(overlay, day):
        if not nested:
            nested.append(True)
            land_nine_oclock_slice(lake)
        return checked_so_far(overlay, day)

    monkeypatch.setattr(open_day_module, "_checked_so_far", meanwhile)
    late = build_open_day(lake, OPEN, slice_key(3), now=dt.datetime.now(dt.UTC) + dt.timedelta(minutes=5))
    later = current_open_day(lake)
    assert later is not None and later.slices_through == slice_key(9) and later.built_at < late.built_at
    assert current_open_day(lake).build_id == later.build_id != late.build_id
    with MapDay.open(lake, live=True) as live:
        assert live.open_day.build_id == later.build_id
    # An older day's build never moves `current` back either.
    assert (lake.provisional_dir / f"day={OPEN.isoformat()}").is_symlink()


def test_the_warehouse_answers_current_status_after_provisional_builds_are_removed(lake):
    import shutil

    publish_warehouse(lake)
    with open_warehouse(lake) as con:
        assert con.execute("SELECT count(*) FROM open_status").fetchone()[0] == 2
    shutil.rmtree(lake.provisional_dir)  # an operator cleans up, or a lake is restored without it
    with open_warehouse(lake) as con:  # rebuilt on opening: its open_status read a glob that now fails
        assert con.execute("SELECT count(*) FROM open_status").fetchone()[0] == 0
        assert {r[0] for r in con.execute("SELECT decided_by FROM current_status").fetchall()} == {"daily"}


def test_a_plain_duckdb_reader_follows_the_open_day_without_a_new_warehouse(lake):
    """helper-94 F10: a warehouse published before the open day's first build read an empty open_status for as
    long as no run of the day lane published it again (the slice lane never writes it); only `sevenmaps sql`
    rebuilt it. A plain read-only connection, as docs/analyst.md recommends, now follows the builds itself."""
    import shutil

    import duckdb

    shutil.rmtree(lake.provisional_dir)
    publish_warehouse(lake)  # before any provisional build of the open day
    made = lake.warehouse.stat().st_ino
    build_open_day(lake, OPEN, slice_key(3))
    with duckdb.connect(str(lake.warehouse), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM open_status").fetchone()[0] == 2
        shown = dict(con.execute("SELECT server_key, decided_by FROM current_status").fetchall())
        status = con.execute("SELECT current_shown_status FROM current_status WHERE server_key = $k",
                             {"k": server_key(URLS["notes"])}).fetchone()
    assert shown[server_key(URLS["notes"])] == "slice" and status == ("down",)  # as the map's server says
    shutil.rmtree(lake.provisional_dir)  # and no build at all: no rows, not an error
    with duckdb.connect(str(lake.warehouse), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM open_status").fetchone()[0] == 0
        assert {r[0] for r in con.execute("SELECT decided_by FROM current_status").fetchall()} == {"daily"}
    assert lake.warehouse.stat().st_ino == made  # the same file throughout


def test_a_build_that_began_later_wins_even_when_the_clock_was_stepped_back(lake):
    """"Began later" is the order builds began in, never the wall clock: after the clock is stepped back (NTP
    correcting a clock that ran fast), the 09:00 slice's build reads a time before the 03:00 build's, and it
    used to be refused, so answers read the 03:00 build until the clock caught up again."""
    first = current_open_day(lake)
    assert first is not None and first.slices_through == slice_key(3)
    land_probes(lake, [probe(URLS["forecast"], "ok", day=OPEN, hour=9, tools=FORECAST_RED)], day=OPEN,
                run_id="slice-09")
    stepped_back = first.built_at - dt.timedelta(hours=1)
    later = build_open_day(lake, OPEN, slice_key(9), now=stepped_back)
    assert current_open_day(lake).build_id == later.build_id
    assert os.readlink(lake.provisional_dir / f"day={OPEN.isoformat()}") == f"builds/{later.build_id}"
