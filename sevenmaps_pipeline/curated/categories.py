"""The category rules' verdicts per tool list, kept per method (sql/list_categories.sql).

A list's tool_names and words winners depend on its tools and the category method alone (assets/
categories.json and CATEGORY_PARAMS), so a list is scored the first day it is seen and every later day
reads its row: `cache/list_categories-<method digest>.parquet`, one row per list ever scored under that
method. A changed method is another digest, hence another file, and every list is scored again. Like the
other caches it lies outside every day partition: never signed, exported or published, safe to delete (the
next build scores every list of its day again), and the same rows either way (docs/scaling.md).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..lake.paths import LakePaths
from .cache_files import store

CACHE_FORMAT = "list-categories-1"

LIST_CATEGORIES_SCHEMA = pa.schema([
    pa.field("tools_hash", pa.string()),
    pa.field("tool_count", pa.int32()),
    pa.field("names_topic", pa.string()),
    pa.field("names_score", pa.int32()),
    pa.field("names_words", pa.list_(pa.string())),
    pa.field("words_topic", pa.string()),
    pa.field("words_score", pa.int32()),
    pa.field("words_words", pa.list_(pa.string())),
    pa.field("scored_day", pa.date32()),
])


def method_digest(document: bytes, params: dict) -> str:
    """What the rows depend on besides the list: the categories document as shipped and the parameters."""
    blob = CACHE_FORMAT.encode() + b"\n" + document + b"\n" + json.dumps(params, sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def cache_file(lake: LakePaths, digest: str) -> Path:
    return lake.root / "cache" / f"list_categories-{digest}.parquet"


def known_lists(lake: LakePaths, digest: str) -> pa.Table:
    """Every list's row scored under the method so far (none when the file is missing or unreadable)."""
    path = cache_file(lake, digest)
    try:
        table = pq.read_table(path)
    except (OSError, ValueError, pa.ArrowException):
        return LIST_CATEGORIES_SCHEMA.empty_table()
    if not table.schema.remove_metadata().equals(LIST_CATEGORIES_SCHEMA):
        return LIST_CATEGORIES_SCHEMA.empty_table()
    return table.replace_schema_metadata(None)


def keep(lake: LakePaths, digest: str, known: pa.Table, scored: pa.Table) -> None:
    """Add the lists scored now to the method's file (rewritten whole, as every file in the lake)."""
    if not scored.num_rows:
        return
    fresh = pc.invert(pc.is_in(scored.column("tools_hash"), value_set=known.column("tools_hash")))
    rows = pa.concat_tables([known, scored.cast(LIST_CATEGORIES_SCHEMA).filter(fresh)])
    store(lake, cache_file(lake, digest), rows.sort_by("tools_hash"), {}, "list_categories")
