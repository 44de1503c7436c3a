"""What server_history reads of its window: each endpoint's days of codes, tool lists and handshakes as bit
masks and a list (sql/history_state.sql), as of a day.

Folded one day at a time: the state as of the day before, aged by a day, plus the day's daily_status. The
state as of each day built is cached (`cache/history_state-D.parquet`) with the identity of every
daily_status file of its window, so the next day reads one daily_status file and one cached state instead
of 30 files; a state whose files changed since (a missed day built late) is folded again from the window's
files. Like the change baselines' cache it lies outside every day partition: never signed, exported or
published, safe to delete, and the same rows either way (docs/scaling.md, "Incremental history").
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from ..lake import duck
from ..lake.paths import LakePaths
from ..lake.schemas import DAILY_STATUS
from ..rules.methods import HISTORY_PARAMS
from .cache_files import described, status_identities, store

CACHE_FORMAT = "history-state-2"  # 2: with_tools (history-1.2)
WINDOW_DAYS: int = HISTORY_PARAMS["window_days"]

STATE_SCHEMA = pa.schema([
    pa.field("server_key", pa.string()),
    pa.field("lo", pa.int64()),
    pa.field("mid", pa.int64()),
    pa.field("hi", pa.int64()),
    pa.field("listed", pa.int64()),
    pa.field("with_tools", pa.int64()),
    pa.field("handshakes", pa.list_(pa.int32())),
])


def cache_file(lake: LakePaths, day: dt.date) -> Path:
    return lake.day_cache_file("history_state", day)


def _window(day: dt.date, window: int) -> list[dt.date]:
    return [day - dt.timedelta(days=back) for back in range(window - 1, -1, -1)]


def _fingerprints(lake: LakePaths, day: dt.date, window: int) -> dict[str, list[int] | None]:
    """The daily_status files of the window ending on `day` (curated/cache_files.py)."""
    return status_identities(lake, _window(day, window))


def fold(earlier: pa.Table, lake: LakePaths, day: dt.date, window: int) -> pa.Table:
    """The state as of `day` from the state as of the day before (sql/history_state.sql)."""
    status = lake.curated_file("daily_status", day)
    with duck.session() as con:
        con.register("earlier_state", earlier)
        duck.bind_input(con, "daily_status", [status] if status.exists() else [], DAILY_STATUS.schema)
        table = duck.run_sql(con, "history_state", {"day": day, "window_days": window})
    return table.cast(STATE_SCHEMA)


def _load_cached(lake: LakePaths, day: dt.date, window: int, prints: dict) -> pa.Table | None:
    path = cache_file(lake, day)
    if not path.is_file():
        return None
    try:
        table = pq.read_table(path)
        meta = described(table.schema)
    except (OSError, ValueError, pa.ArrowException):
        return None  # unreadable: folded again, and written anew
    if (meta.get("format") != CACHE_FORMAT or meta.get("window_days") != window or meta.get("files") != prints
            or not table.schema.remove_metadata().equals(STATE_SCHEMA)):
        return None
    return table.replace_schema_metadata(None)


def _store(lake: LakePaths, day: dt.date, window: int, table: pa.Table, prints: dict) -> None:
    meta = {"format": CACHE_FORMAT, "window_days": window, "day": day.isoformat(), "files": prints}
    store(lake, cache_file(lake, day), table, meta, "history_state")


def history_state(lake: LakePaths, day: dt.date, window: int = WINDOW_DAYS) -> tuple[pa.Table, str]:
    """The state as of `day`, and how it was obtained: "cached", "folded from <the day before>'s", or
    "folded from the window's files (<why the day before's could not be used>)". Caches it."""
    # Taken before reading: a file rewritten from here on is seen as a change by the next reader.
    prints = _fingerprints(lake, day, window)
    cached = _load_cached(lake, day, window, prints)
    if cached is not None:
        return cached, "cached"
    before = day - dt.timedelta(days=1)
    earlier = _load_cached(lake, before, window, _fingerprints(lake, before, window))
    if earlier is not None:
        state, source = fold(earlier, lake, day, window), f"folded from {before}'s"
    else:
        state = STATE_SCHEMA.empty_table()
        for d in _window(day, window):
            if state.num_rows or prints[d.isoformat()] is not None:  # nothing folds into nothing
                state = fold(state, lake, d, window)
        source = f"folded from the window's files (no current state as of {before})"
    _store(lake, day, window, state, prints)
    return state, source
