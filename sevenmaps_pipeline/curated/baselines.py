"""What a day's change records compare against: each endpoint's latest earlier rows of daily_status within
the change lookback (sql/change_baseline.sql), read by tool_lists_needed (tool_facts) and tool_changes.

Computed from the lookback's daily_status files (60 days of them), or from the day before's baseline and
one day's file when that baseline is cached and still stands for exactly the files it was computed from.
The cache (`cache/change_baseline-D.parquet`) lies outside every day partition: never signed, exported or
published, safe to delete, and the same rows either way, so no figure depends on it or on the order days
are built in (docs/scaling.md, "Ninety days").
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..lake import duck
from ..lake.paths import LakePaths
from ..lake.schemas import DAILY_STATUS
from ..rules.methods import CHANGES_PARAMS
from .cache_files import described, status_identities, store
from .memo import remembered

CACHE_FORMAT = "change-baseline-1"
LOOKBACK_DAYS: int = CHANGES_PARAMS["lookback_days"]

BASELINE_SCHEMA = pa.schema([
    pa.field("server_key", pa.string()),
    pa.field("checked", pa.struct([("day", pa.date32()), ("code", pa.string()), ("outcome", pa.string()),
                                   ("redirect_location", pa.string()), ("tools_hash", pa.string()),
                                   ("server_info_version", pa.string())])),
    pa.field("listed", pa.struct([("day", pa.date32()), ("tools_hash", pa.string()),
                                  ("server_info_version", pa.string())])),
    pa.field("paid", pa.struct([("day", pa.date32()), ("payment_addresses", pa.list_(pa.string()))])),
])


@dataclass(frozen=True)
class Baseline:
    table: pa.Table  # BASELINE_SCHEMA: the latest rows within [day - lookback, day - 1]
    source: str  # how it was obtained: "cached" or "computed (<why the cache could not be used>)"


def cache_file(lake: LakePaths, through: dt.date) -> Path:
    return lake.day_cache_file("change_baseline", through)


def _fingerprints(lake: LakePaths, through: dt.date) -> dict[str, list[int] | None]:
    """The daily_status files a baseline through `through` stands for (curated/cache_files.py)."""
    return status_identities(lake, (through - dt.timedelta(days=back) for back in range(LOOKBACK_DAYS + 1)))


def _compute(earlier: pa.Table, status_files: list[Path], since: dt.date) -> pa.Table:
    with duck.session() as con:
        con.register("earlier_baseline", earlier)
        duck.bind_input(con, "daily_status", status_files, DAILY_STATUS.schema)
        table = duck.run_sql(con, "change_baseline", {"since": since})
    return table.cast(BASELINE_SCHEMA)


def _since(baseline: pa.Table, since: dt.date) -> pa.Table:
    """`baseline` without what lies before `since`: what sql/change_baseline.sql gives over `baseline` alone
    (an endpoint whose latest checked row is older goes; a tool-list or 402 row that is older becomes null),
    as a filter: one baseline's rows are already one per endpoint, in order."""
    def recent(column: pa.ChunkedArray) -> pa.ChunkedArray:
        return pc.fill_null(pc.greater_equal(pc.struct_field(column, "day"), pa.scalar(since, pa.date32())), False)

    kept = baseline.filter(recent(baseline.column("checked")))
    for name in ("listed", "paid"):
        column = kept.column(name)
        kept = kept.set_column(kept.schema.get_field_index(name), name,
                               pc.if_else(recent(column), column, pa.nulls(len(column), column.type)))
    return kept


def _load_cached(lake: LakePaths, through: dt.date, prints: dict) -> tuple[pa.Table | None, str]:
    """The cached baseline through `through`, if it stands for the files `prints` describes; else why not."""
    path = cache_file(lake, through)
    if not path.is_file():
        return None, f"no cached baseline through {through}"
    try:
        table = pq.read_table(path)
        meta = described(table.schema)
    except (OSError, ValueError, pa.ArrowException) as exc:
        return None, f"the cached baseline through {through} is unreadable ({exc})"
    if meta.get("format") != CACHE_FORMAT or meta.get("lookback_days") != LOOKBACK_DAYS:
        return None, f"the cached baseline through {through} is of another format or lookback"
    if meta.get("files") != prints:
        return None, f"daily_status within the lookback of {through} changed since its baseline was cached"
    if not table.schema.remove_metadata().equals(BASELINE_SCHEMA):
        return None, f"the cached baseline through {through} has another schema"
    return table.replace_schema_metadata(None), "cached"


def _store(lake: LakePaths, through: dt.date, table: pa.Table, prints: dict[str, list[int] | None]) -> None:
    meta = {"format": CACHE_FORMAT, "lookback_days": LOOKBACK_DAYS, "through": through.isoformat(), "files": prints}
    store(lake, cache_file(lake, through), table, meta, "change_baseline")


def _through(lake: LakePaths, through: dt.date) -> tuple[pa.Table, str]:
    """The baseline of every row up to and including `through` (its window: [through - lookback, through]),
    from the cache, or computed from the window's files and cached."""
    prints = _fingerprints(lake, through)  # before reading: a file rewritten meanwhile makes the cache stale
    table, why = _load_cached(lake, through, prints)
    if table is not None:
        return table, why
    files = [lake.curated_file("daily_status", dt.date.fromisoformat(d)) for d, p in sorted(prints.items()) if p]
    table = _compute(BASELINE_SCHEMA.empty_table(), files, through - dt.timedelta(days=LOOKBACK_DAYS))
    _store(lake, through, table, prints)
    return table, f"computed ({why})"


def _cached_prints(lake: LakePaths, through: dt.date) -> dict | None:
    try:
        return described(pq.read_schema(cache_file(lake, through))).get("files")
    except (OSError, ValueError, pa.ArrowException):
        return None


def baseline_before(lake: LakePaths, day: dt.date) -> Baseline:
    """Each endpoint's latest rows within [day - lookback, day - 1]. Caches the baseline through the day
    before, and through `day` once its daily_status exists, so the next day reads two files, not 61. Both
    of the day's readers (tool_facts, tool_changes) get it from one computation in a process, while the
    daily_status files of its window and the cached baseline it starts from stay the same (curated/memo.py)."""
    window = [lake.curated_file("daily_status", day - dt.timedelta(days=back)) for back in range(LOOKBACK_DAYS + 1)]
    caches = [cache_file(lake, day - dt.timedelta(days=1)), cache_file(lake, day)]
    return remembered("change_baseline", (str(lake.root), day, CACHE_FORMAT, LOOKBACK_DAYS), window,
                      lambda: _baseline_before(lake, day),
                      writes=caches)


def _baseline_before(lake: LakePaths, day: dt.date) -> Baseline:
    # Taken first: whatever is rewritten from here on is seen as a change by the next reader of the cache.
    prints_today = _fingerprints(lake, day)
    earlier, source = _through(lake, day - dt.timedelta(days=1))
    since = day - dt.timedelta(days=LOOKBACK_DAYS)
    before = _since(earlier, since)
    if prints_today[day.isoformat()] is not None and _cached_prints(lake, day) != prints_today:
        _store(lake, day, _compute(before, [lake.curated_file("daily_status", day)], since), prints_today)
    return Baseline(before, source)
