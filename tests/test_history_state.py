"""server_history's window folded a day at a time and cached (curated/history_state.py): the same table as
from the window's files alone, and a cached state never used once a file of its window changed."""

from __future__ import annotations

import datetime as dt
import json
import random

import pyarrow.parquet as pq
from conftest import land_status

from sevenmaps_pipeline import curated
from sevenmaps_pipeline.curated.history_state import cache_file, history_state

END = dt.date(2026, 11, 30)
DAYS = [END - dt.timedelta(days=44 - i) for i in range(45)]  # longer than the 30-day window
KEYS = [f"s{i}.example.com/mcp" for i in range(12)]


def _land(lake, seed: int = 1) -> None:
    rng = random.Random(seed)
    for day in DAYS:
        if rng.random() < 0.1 and day < DAYS[-3]:
            continue  # a day with no partition: n for everyone
        present = [k for k in KEYS if rng.random() < 0.85]  # endpoints come and go
        codes = {k: rng.choice("oooapdn") for k in present}
        land_status(lake, day, codes,
                    hashes={k: rng.choice(["h1", "h2", None]) for k in present},
                    handshake={k: rng.randint(20, 900) for k in present if rng.random() < 0.9},
                    tool_counts={k: rng.choice([0, 1, 4]) for k in present})  # some lists empty


def _history(lake, day):
    return pq.read_table(lake.curated_file("server_history", day))


def _cold(lake, day):
    """The day's history with no cached state at all."""
    for path in (lake.root / "cache").glob("history_state-*.parquet"):
        path.unlink()
    curated.build_server_history(lake, day)
    assert history_state(lake, day)[1] == "cached"  # and it cached the state it folded
    return _history(lake, day)


def _counted_from_files(lake, day) -> dict[str, tuple[int, int]]:
    """Each endpoint's o days and o days with at least one tool in the window ending on `day`, read from its
    daily_status files alone (no fold)."""
    counts: dict[str, tuple[int, int]] = {}
    for back in range(30):
        path = lake.curated_file("daily_status", day - dt.timedelta(days=back))
        for r in pq.read_table(path).to_pylist() if path.exists() else []:
            ok, tools = counts.get(r["server_key"], (0, 0))
            listed = r["code"] == "o" and (r["tool_count"] or 0) > 0
            counts[r["server_key"]] = (ok + (r["code"] == "o"), tools + listed)
    return counts


def _built_days(lake) -> list[dt.date]:
    return [d for d in DAYS if lake.curated_file("daily_status", d).exists()]


def test_folded_day_by_day_is_the_same_as_from_the_window_alone(lake):
    _land(lake)
    warm = {}
    days = _built_days(lake)
    assert len(days) < len(DAYS)  # some days have no partition
    for day in days:
        result = curated.build_server_history(lake, day)
        before = day - dt.timedelta(days=1)
        if before in warm:  # the state as of the day before was cached by its build
            assert result.stats["window_state"] == f"folded from {before}'s"
        else:
            assert result.stats["window_state"].startswith("folded from the window's files")
        warm[day] = _history(lake, day)
    assert sum(1 for d in days if d - dt.timedelta(days=1) in warm) >= 30
    # Past the window's length: its first and last days, and each day after a gap (each cold build folds the
    # window's 30 files again: every one of the last 16 days took most of this test's time).
    late = days[-16:]
    chosen = [d for d in late if d in (late[0], late[-1]) or d - dt.timedelta(days=1) not in days]
    assert len(chosen) >= 3
    for day in chosen:
        assert _cold(lake, day).equals(warm[day]), day
    assert {r["history"] for r in warm[days[-1]].to_pylist()} != {"n" * 30}
    assert any(r["tools_days"] < r["ok_days"] for r in warm[days[-1]].to_pylist())  # empty lists kept apart
    for day in chosen:  # and both count what the window's files hold, not merely the same as each other
        rows = warm[day].to_pylist()
        counted = _counted_from_files(lake, day)
        assert {r["server_key"]: (r["ok_days"], r["tools_days"]) for r in rows} == {
            r["server_key"]: counted[r["server_key"]] for r in rows}, day


def test_a_day_built_late_is_never_read_from_a_stale_state(lake):
    _land(lake, seed=2)
    for day in _built_days(lake):
        curated.build_server_history(lake, day)
    before = _history(lake, END)
    # A day inside the window is built again, differently (a missed day backfilled late).
    late = DAYS[-10]
    land_status(lake, late, {k: "d" for k in KEYS})
    result = curated.build_server_history(lake, END)
    assert result.stats["window_state"].startswith("folded from the window's files")
    after = _history(lake, END)
    assert not after.equals(before)
    assert {r["history"][-10] for r in after.to_pylist()} == {"d"}
    assert after.equals(_cold(lake, END))


def test_an_unreadable_cached_state_is_folded_again(lake):
    _land(lake, seed=3)
    for day in DAYS[-3:]:
        land_status(lake, day, {k: "o" for k in KEYS})
        curated.build_server_history(lake, day)
    expected = _history(lake, END)
    cache_file(lake, END - dt.timedelta(days=1)).write_bytes(b"not parquet")
    cache_file(lake, END).unlink()
    result = curated.build_server_history(lake, END)
    assert result.stats["window_state"].startswith("folded from the window's files")
    assert _history(lake, END).equals(expected)
    assert history_state(lake, END)[1] == "cached"


def test_a_state_cached_before_tools_days_is_folded_again(lake):
    """A lake upgraded to history-1.2: the state the day before cached without its days with tools (format
    history-state-1) is not read, so tools_days is never taken from a state that did not keep them."""
    _land(lake, seed=4)
    for day in _built_days(lake):
        curated.build_server_history(lake, day)
    expected = _history(lake, END)
    before = END - dt.timedelta(days=1)
    old = pq.read_table(cache_file(lake, before))
    meta = json.loads(old.schema.metadata[b"sevenmaps"])
    old = old.drop_columns(["with_tools"]).replace_schema_metadata(
        {"sevenmaps": json.dumps({**meta, "format": "history-state-1"}, sort_keys=True)})
    pq.write_table(old, cache_file(lake, before))
    cache_file(lake, END).unlink()
    result = curated.build_server_history(lake, END)
    assert result.stats["window_state"].startswith("folded from the window's files")
    assert _history(lake, END).equals(expected)
