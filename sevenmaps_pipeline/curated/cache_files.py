"""What the lake's caches (`cache/`: change baselines, history states, category verdicts) share: the identity
of the daily_status files a cached relation stands for, and writing one with its description while pruning
the stale ones. A cache is never signed, exported or published, and safe to delete (docs/operations.md)."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import time
from collections.abc import Iterable
from pathlib import Path

import pyarrow as pa

from ..lake.parquet_io import write_parquet
from ..lake.paths import LakePaths

# A day's run reads what was cached the day before, a backfill what it wrote a moment ago: files not
# rewritten for two days are deleted when a new one of their kind is written.
KEEP_SECONDS = 2 * 86_400


def status_identities(lake: LakePaths, days: Iterable[dt.date]) -> dict[str, list[int] | None]:
    """(inode, size, mtime) of each day's daily_status file, None for a day without one. Every rewrite is a
    rename (lake.parquet_io), so a rebuilt day gets a new inode and time."""
    prints: dict[str, list[int] | None] = {}
    for day in days:
        try:
            st = os.stat(lake.curated_file("daily_status", day))
            prints[day.isoformat()] = [st.st_ino, st.st_size, st.st_mtime_ns]
        except FileNotFoundError:
            prints[day.isoformat()] = None
    return prints


def described(schema: pa.Schema) -> dict:
    """The description a cached file was written with (empty when it has none)."""
    return json.loads((schema.metadata or {}).get(b"sevenmaps", b"{}"))


def store(lake: LakePaths, path: Path, table: pa.Table, description: dict, kind: str) -> Path:
    """Write `table` at `path` with `description`; delete the other `<kind>-*.parquet` files not rewritten
    for KEEP_SECONDS."""
    written = write_parquet(lake, path, table.replace_schema_metadata(
        {"sevenmaps": json.dumps(description, sort_keys=True)} if description else None))
    oldest = time.time() - KEEP_SECONDS
    for other in written.parent.glob(f"{kind}-*.parquet"):
        with contextlib.suppress(FileNotFoundError):  # a concurrent run may prune it first
            if other != written and other.stat().st_mtime < oldest:
                other.unlink()
    return written
