"""The change baselines (curated/baselines.py) that tool_lists_needed and tool_changes compare a day against:
built day after day from the cache, they are exactly what the lookback's files give and what a plain
reference says, across gaps, expiry past 60 days, a day rebuilt or backfilled late, days built out of order,
and a damaged cache; and the cache is never part of a signed day."""

from __future__ import annotations

import datetime as dt
import os
import random
import shutil

import pyarrow as pa
import pytest

from sevenmaps_pipeline.curated import baselines
from sevenmaps_pipeline.curated.baselines import LOOKBACK_DAYS, baseline_before, cache_file
from sevenmaps_pipeline.integrity.manifest import day_files
from sevenmaps_pipeline.lake.parquet_io import write_parquet
from sevenmaps_pipeline.lake.schemas import DAILY_STATUS, conform

FIRST = dt.date(2026, 8, 1)
DAYS = 80
GAPS = {FIRST + dt.timedelta(days=i) for i in (5, 33, 64)}  # days without a daily_status (a missed day)


def day_rows(rng: random.Random, day: dt.date, keys: list[str]) -> list[dict]:
    rows = []
    for key in keys:
        code = rng.choices("oapdn", weights=(5, 1, 1, 2, 3))[0]
        if key == "gone" and day > FIRST + dt.timedelta(days=2):
            code = "n"  # checked on the first three days only: expires from the lookback
        if key == "paid-once":
            code = "p" if day == FIRST + dt.timedelta(days=3) else "o"
        row = {"day": day, "server_key": key, "server_id": key[:12], "code": code, "method_version": "test",
               "shown_status": "x", "outcome": {"o": "ok", "a": "needs_auth", "p": "http_402", "d": "redirect",
                                                 "n": None}[code],
               "tools_hash": None, "server_info_version": None, "payment_addresses": None, "redirect_location": None}
        if code == "o":
            row["tools_hash"] = rng.choice(["h1", "h2", "h3"])
            row["server_info_version"] = rng.choice(["1.0", "1.1", None])
        if code == "p":
            row["payment_addresses"] = rng.choice([[], ["0xA"], ["0xA", "0xB"]]) if key != "paid-once" else ["0xP"]
        if code == "d":
            row["redirect_location"] = rng.choice(["https://elsewhere.example/", None])
        rows.append(row)
    return rows


def write_day(lake, day: dt.date, rows: list[dict]) -> None:
    write_parquet(lake, lake.curated_file("daily_status", day), conform(pa.Table.from_pylist(rows), DAILY_STATUS))


@pytest.fixture
def status_lake(lake):
    rng = random.Random(7)
    keys = [f"k{i:02d}.example.com/mcp" for i in range(30)] + ["gone", "paid-once"]
    rows_by_day = {}
    for i in range(DAYS):
        day = FIRST + dt.timedelta(days=i)
        if day in GAPS:
            continue
        rows_by_day[day] = day_rows(rng, day, keys)
        write_day(lake, day, rows_by_day[day])
    return lake, rows_by_day


def reference(rows_by_day: dict[dt.date, list[dict]], day: dt.date) -> dict[str, tuple]:
    """Each endpoint's latest checked row, latest row with a list and latest with addresses, day - 60 .. day - 1."""
    latest: dict[str, dict] = {}
    for d in sorted(rows_by_day):
        if not day - dt.timedelta(days=LOOKBACK_DAYS) <= d < day:
            continue
        for r in rows_by_day[d]:
            if r["code"] == "n":
                continue
            entry = latest.setdefault(r["server_key"], {"checked": None, "listed": None, "paid": None})
            entry["checked"] = (d, r["code"], r["outcome"], r.get("redirect_location"), r.get("tools_hash"),
                                r.get("server_info_version"))
            if r.get("tools_hash"):
                entry["listed"] = (d, r["tools_hash"], r.get("server_info_version"))
            if r.get("payment_addresses"):
                entry["paid"] = (d, tuple(r["payment_addresses"]))
    return {k: (v["checked"], v["listed"], v["paid"]) for k, v in latest.items()}


def as_reference(table: pa.Table) -> dict[str, tuple]:
    out = {}
    for r in table.to_pylist():
        c, li, p = r["checked"], r["listed"], r["paid"]
        out[r["server_key"]] = (
            (c["day"], c["code"], c["outcome"], c["redirect_location"], c["tools_hash"], c["server_info_version"]),
            (li["day"], li["tools_hash"], li["server_info_version"]) if li else None,
            (p["day"], tuple(p["payment_addresses"])) if p else None)
    return out


def test_day_after_day_from_the_cache_equals_the_files_and_the_reference(status_lake):
    lake, rows_by_day = status_lake
    sources = []
    for i in range(1, DAYS):
        day = FIRST + dt.timedelta(days=i)
        if day in GAPS:
            continue
        cached = baseline_before(lake, day)
        sources.append(cached.source)
        assert as_reference(cached.table) == reference(rows_by_day, day), day
        shutil.rmtree(lake.root / "cache")  # the same day from the lookback's files alone
        computed = baseline_before(lake, day)
        assert computed.source.startswith("computed") and computed.table.equals(cached.table), day
        baseline_before(lake, day)  # the cache again, as the day left it
    # Every day but the first, and the days right after a gap (whose day before has no file), came from the
    # cache: the walk above re-created it after each removal.
    assert sources.count("cached") == len(sources) - 1 - len(GAPS)
    last = FIRST + dt.timedelta(days=DAYS - 1)
    expired = as_reference(baseline_before(lake, last).table)
    assert "gone" not in expired  # its last check is more than 60 days back
    assert expired["paid-once"][2] is None  # its only 402 body too
    assert as_reference(baseline_before(lake, FIRST + dt.timedelta(days=10)).table)["paid-once"][2] == (
        FIRST + dt.timedelta(days=3), ("0xP",))


def test_a_rebuilt_or_late_day_makes_the_cache_stale_and_the_answer_is_the_files_answer(status_lake):
    lake, rows_by_day = status_lake
    for i in range(60, 71):
        baseline_before(lake, FIRST + dt.timedelta(days=i))
    day = FIRST + dt.timedelta(days=71)
    assert baseline_before(lake, day).source == "cached"

    rebuilt = FIRST + dt.timedelta(days=66)  # a day inside the window is built again, with other codes
    rows_by_day[rebuilt] = [{**r, "code": "d", "outcome": "timeout", "tools_hash": None, "payment_addresses": None}
                            for r in rows_by_day[rebuilt]]
    write_day(lake, rebuilt, rows_by_day[rebuilt])
    after = baseline_before(lake, day)
    assert "changed" in after.source and as_reference(after.table) == reference(rows_by_day, day)

    late = FIRST + dt.timedelta(days=64)  # the missed day is backfilled
    assert late in GAPS
    rows_by_day[late] = day_rows(random.Random(1), late, ["late.example.com/mcp", "k01.example.com/mcp"])
    write_day(lake, late, rows_by_day[late])
    after = baseline_before(lake, day)
    assert "changed" in after.source and as_reference(after.table) == reference(rows_by_day, day)
    assert "late.example.com/mcp" in as_reference(after.table)


def test_days_out_of_order_and_a_damaged_cache_give_the_same_rows(status_lake):
    lake, rows_by_day = status_lake
    for i in (75, 62, 74, 63, 76):
        day = FIRST + dt.timedelta(days=i)
        assert as_reference(baseline_before(lake, day).table) == reference(rows_by_day, day)
    day = FIRST + dt.timedelta(days=77)
    baseline_before(lake, day)
    cache_file(lake, day - dt.timedelta(days=1)).write_bytes(b"PAR1 not a parquet file")
    damaged = baseline_before(lake, day)
    assert "unreadable" in damaged.source and as_reference(damaged.table) == reference(rows_by_day, day)


def test_the_cache_of_another_format_is_not_used(status_lake, monkeypatch):
    lake, rows_by_day = status_lake
    day = FIRST + dt.timedelta(days=70)
    baseline_before(lake, day)
    monkeypatch.setattr(baselines, "CACHE_FORMAT", "change-baseline-0")
    again = baseline_before(lake, day)
    assert "another format" in again.source and as_reference(again.table) == reference(rows_by_day, day)


def test_the_cache_lies_outside_every_signed_day(status_lake):
    lake, _ = status_lake
    day = FIRST + dt.timedelta(days=70)
    baseline_before(lake, day)
    assert cache_file(lake, day).is_file() and cache_file(lake, day - dt.timedelta(days=1)).is_file()
    covered = {p for d in range(DAYS) for p in day_files(lake, FIRST + dt.timedelta(days=d))}
    assert not any(p.is_relative_to(lake.root / "cache") for p in covered)


def test_cached_baselines_not_written_for_two_days_are_deleted(status_lake):
    lake, _ = status_lake
    stale = cache_file(lake, FIRST + dt.timedelta(days=40))
    baseline_before(lake, FIRST + dt.timedelta(days=41))
    assert stale.is_file()
    week_ago = stale.stat().st_mtime - 7 * 86_400
    os.utime(stale, (week_ago, week_ago))
    baseline_before(lake, FIRST + dt.timedelta(days=70))
    assert not stale.is_file()
    assert cache_file(lake, FIRST + dt.timedelta(days=41)).is_file()  # written a moment ago: kept
    assert cache_file(lake, FIRST + dt.timedelta(days=70)).is_file()
