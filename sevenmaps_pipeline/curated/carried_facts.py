"""The rows of tool lists an earlier method computed with the same tokenizer, carried into a day's tool_facts
after a method change of the rules alone: their risk is read again (rules/tool_facts.py reclassified) and
nothing else, since every other column is the tokenizer method's (docs/scaling.md, "The rules day carries the
rows"). The rows are those parsing the list would give, but for which copy of it they keep: a tools_hash holds
its tools' name, description, inputSchema and annotations in any order, so a list served again in another order
or with another title or outputSchema keeps the positions, titles and schemas first computed, as on every day
after a list's first.

The rows are read from the earlier files once, only the row groups whose tools_hash range holds a wanted list,
and spilled beside the day's file in buckets of consecutive ranks, as the parsed lists' JSON is
(curated/tool_facts.py): memory holds a record batch, never a month of files.
"""

from __future__ import annotations

import bisect
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..lake.parquet_io import RankBuckets
from ..lake.schemas import TOOL_FACTS

# What a carried row keeps of an earlier method's: all but the columns of the day and of the rules.
CARRIED_COLUMNS = [name for name in TOOL_FACTS.schema.names if name not in (
    "day", "risk", "risk_rule", "risk_evidence", "annotation_contradiction", "method_version")]
_SCHEMA = pa.schema([pa.field("rank", pa.int64())] + [TOOL_FACTS.schema.field(c) for c in CARRIED_COLUMNS])


def carriable(held: list[tuple[str, str]]) -> dict[str, str]:
    """The wanted lists whose earlier rows can be carried (sql/tool_facts_carried.sql), each with its file: those
    of a file written before a column a carried row keeps was added, or that cannot be read, are parsed."""
    whole: dict[str, bool] = {}
    for _, source_file in held:
        if source_file not in whole:
            try:
                whole[source_file] = set(CARRIED_COLUMNS) <= set(pq.read_schema(source_file).names)
            except (OSError, pa.ArrowException):
                whole[source_file] = False
    return {tools_hash: source_file for tools_hash, source_file in held if whole[source_file]}


class CarriedRows(RankBuckets):
    """The carried lists' rows, spilled in buckets of `size` consecutive ranks. `found`: the ranks whose rows
    were read, from a file read to its end; a bucket read back holds only theirs."""

    def __init__(self, folder: Path, size: int, lists: int) -> None:
        super().__init__(folder, size, lists, _SCHEMA, prefix="carried-")

    def add(self, ranks: np.ndarray, rows: pa.Table) -> None:
        buckets = ranks // self.size
        for bucket in np.unique(buckets).tolist():
            chosen = pa.array(buckets == bucket)
            self.write(bucket, pa.Table.from_arrays(
                [pa.array(ranks, pa.int64()).filter(chosen)]
                + [rows.column(f.name).filter(chosen).cast(f.type) for f in list(_SCHEMA)[1:]], schema=_SCHEMA))

    def read(self, bucket: int) -> pa.Table | None:
        table = self.take(bucket)
        if table is None:
            return None
        table = table.filter(pa.array(self.found[table.column("rank").to_numpy()]))
        return table.sort_by([("rank", "ascending"), ("position", "ascending")]) if table.num_rows else None


def spill_carried(folder: Path, hashes: list[str], carried: dict[str, str], bucket_lists: int) -> CarriedRows:
    """Read each earlier file that holds carried lists once and spill their rows by the rank of their tools_hash
    in `hashes`. A list whose rows are not there (its file replaced since it was asked for), and every list of a
    file that fails part way, is left not found: it is parsed instead."""
    rows = CarriedRows(folder, bucket_lists, len(hashes))
    rank_of = {h: i for i, h in enumerate(hashes)}
    by_file: dict[str, list[str]] = {}
    for tools_hash, source_file in carried.items():
        by_file.setdefault(source_file, []).append(tools_hash)
    try:
        for source_file, held in by_file.items():
            ranks = np.array([rank_of[h] for h in held], dtype=np.int64)
            try:
                seen = _spill_file(rows, source_file, held, ranks)
            except (OSError, pa.ArrowException):
                continue
            rows.found[seen] = True
    finally:
        rows.close()
    return rows


def _spill_file(rows: CarriedRows, source_file: str, held: list[str], ranks: np.ndarray) -> np.ndarray:
    """Spill the rows of `held` (ranks `ranks`) the file holds; the ranks seen. A day's file holds each of its
    lists whole, so a list seen is a list read whole once the file is read to its end."""
    parquet = pq.ParquetFile(source_file, buffer_size=4 << 20, pre_buffer=False)
    wanted = pa.array(held, pa.string())
    seen = np.zeros(len(held), dtype=bool)
    for batch in parquet.iter_batches(batch_size=4096, columns=CARRIED_COLUMNS,
                                      row_groups=_groups_holding(parquet.metadata, sorted(held))):
        index = pc.index_in(batch.column("tools_hash"), value_set=wanted)
        inside = index.is_valid()
        if pc.any(inside).as_py():
            positions = index.filter(inside).to_numpy()
            seen[positions] = True
            rows.add(ranks[positions], pa.Table.from_batches([batch]).filter(inside))
    return ranks[seen]


def _groups_holding(meta: pq.FileMetaData, ordered: list[str]) -> list[int]:
    """The row groups whose tools_hash statistics may hold one of `ordered` (a day's file is written in
    tools_hash order, so a few lists need a few of its groups); a group without statistics is read."""
    column = next((i for i in range(meta.num_columns) if meta.schema.column(i).path == "tools_hash"), None)
    groups = []
    for group in range(meta.num_row_groups):
        stats = meta.row_group(group).column(column).statistics if column is not None else None
        if stats is None or not stats.has_min_max:
            groups.append(group)
            continue
        at = bisect.bisect_left(ordered, stats.min)
        if at < len(ordered) and ordered[at] <= stats.max:
            groups.append(group)
    return groups
