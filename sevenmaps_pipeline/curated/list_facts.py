"""The facts of the tool lists published on a day, read from the tool_facts files that keep them (each list's,
from the day it first appeared) as a build goes, never held whole: at 100,000 endpoints a day publishes some
38,000 lists of 1.1 million tools, 1.8 GB as Arrow, most of it their descriptions and schemas.

`bind_list_facts` gives a DuckDB session the view `list_facts` (sql/day_list_facts.sql): tools, findings and
server_categories read the columns their SQL names, as the rows stream by. `tools_parts` gives the `tools`
table in parts of about TOOLS_PART_ROWS rows, in its order (sql/tools.sql), for `write_parquet_parts`
(docs/scaling.md, "The tool tables at 100,000 endpoints").
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Generator
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

from ..lake import duck
from ..lake.parquet_io import spill_folder
from ..lake.paths import LakePaths
from ..lake.schemas import DAILY_STATUS, TOOL_FACTS, TOOL_LISTS, TOOLS, conform
from ..rules.tool_facts import facts_method
from .common import partitions_through, require_status

# Rows of `tools` sorted and written at a time, each part one row group: some 55 MB as Arrow at 1.7 KB a row.
TOOLS_PART_ROWS = 32_768
# Rows streamed out of DuckDB at a time on their way to the parts' spill files.
_STREAM_ROWS = 8_192
# The parts on their way to being sorted: written once and read once, so compressed cheaply.
_SPILL = pa.ipc.IpcWriteOptions(compression="lz4")


def list_sources(lake: LakePaths, day: dt.date) -> tuple[pa.Table, list[Path]]:
    """Each list published on `day` that has facts under the current method: the day they were computed and
    its tool count (sql/day_lists.sql); and the tool_facts files of those days (most lists first appeared
    long ago, on a few days)."""
    method = facts_method()
    require_status(lake, day)
    with duck.session() as con:
        duck.bind_input(con, "daily_status", [lake.curated_file("daily_status", day)], DAILY_STATUS.schema)
        duck.bind_input(con, "tool_lists", partitions_through(lake, "tool_lists", day), TOOL_LISTS.schema)
        lists = duck.run_sql(con, "day_lists", {"day": day, "method_version": method})
    days = sorted(set(lists.column("facts_day").to_pylist()))
    return lists, [lake.curated_file("tool_facts", d) for d in days]


def bind_list_facts(con: duckdb.DuckDBPyConnection, lake: LakePaths, day: dt.date) -> None:
    """The view `list_facts` in `con`: the facts of every list published on `day`, one row per tool
    (sql/day_list_facts.sql), and `list_sources`, the lists (sql/day_lists.sql). Each query over the view reads
    the files again, only the columns it names."""
    sources, files = list_sources(lake, day)
    # DuckDB otherwise reads ahead a whole column chunk of the row group it scans: tool_facts files hold a
    # million rows a row group, so 90-115 MB for each long text column read (descriptions, input schemas),
    # for each column and each file read at once. Without: 34 MB instead of 227 MB over reading both, at
    # the same CPU (docs/scaling.md). A setting of this session only.
    con.execute("SET disable_parquet_prefetching = true")
    con.register("list_sources", sources)
    duck.bind_input(con, "tool_facts", files, TOOL_FACTS.schema)
    con.execute("CREATE OR REPLACE TEMP VIEW list_facts AS " + duck.load_sql("day_list_facts"))


def tools_parts(lake: LakePaths, day: dt.date) -> Generator[pa.Table, None, None]:
    """`tools` of `day` (TOOLS' schema) in consecutive parts, in (server_key, position) order: sql/tools.sql's
    rows go, as DuckDB gives them, each to the spill file of its part (a range of endpoints; lake/parquet_io.py
    spill_folder); then each part is read back, sorted and given, one at a time."""
    with spill_folder(lake.curated_file("tools", day)) as spill:
        with duck.session() as con:
            duck.bind_input(con, "daily_status", [lake.curated_file("daily_status", day)], DAILY_STATUS.schema)
            bind_list_facts(con, lake, day)
            sql = duck.load_sql("tools")
            rows = con.sql(sql, params=duck.used_params(sql, {"day": day, "part_rows": TOOLS_PART_ROWS}))
            parts = _spill(rows.to_arrow_reader(_STREAM_ROWS), spill)
        for path in parts:
            yield _sorted_part(path)
            path.unlink()


def _spill(rows: pa.RecordBatchReader, folder: Path) -> list[Path]:
    """Each batch of `rows` split by part, each piece (TOOLS' columns and the endpoint's rank) appended to its
    part's file; the files, in the parts' order."""
    writers: dict[int, pa.ipc.RecordBatchStreamWriter] = {}
    try:
        for batch in rows:
            parts = batch.column("part").to_numpy()
            order = np.argsort(parts, kind="stable")
            batch, parts = batch.take(order), parts[order]
            table = conform(pa.Table.from_batches([batch]), TOOLS).append_column(
                "endpoint_rank", batch.column("endpoint_rank"))
            starts = np.flatnonzero(np.r_[True, parts[1:] != parts[:-1]])
            for start, stop in zip(starts, np.r_[starts[1:], len(parts)], strict=True):
                part = int(parts[start])
                if part not in writers:
                    writers[part] = pa.ipc.new_stream(folder / f"{part}.arrow", table.schema, options=_SPILL)
                writers[part].write_table(table.slice(start, stop - start))
    finally:
        for writer in writers.values():
            writer.close()
    return [folder / f"{part}.arrow" for part in sorted(writers)]


def _sorted_part(path: Path) -> pa.Table:
    """A part's rows in the table's order: by endpoint (its rank in server_key order), then position."""
    with pa.ipc.open_stream(path) as reader:
        rows = reader.read_all()
    order = np.lexsort((rows.column("position").to_numpy(), rows.column("endpoint_rank").to_numpy()))
    return rows.take(order).drop_columns(["endpoint_rank"])
