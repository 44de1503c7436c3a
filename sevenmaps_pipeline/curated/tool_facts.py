"""tool_facts: the facts of every tool list a day needs that no earlier day computed under the current method
(rules/tool_facts.py), a batch of lists at a time, on every core when there are many.

A day shaped like the real registry's needs some 40,000 lists on its first day or after a method change:
1.6 GB of JSON and a million tools, which took 21 GB when parsed and kept at once (docs/scaling.md, "The
cold day"). So the JSON is read from the raw probes once, a probe file at a time, into buckets of lists
consecutive in tools_hash order (spilled beside the day's file: lake.parquet_io.spill_folder), and each
bucket is computed in that order, a batch at a time, its rows written as row groups of the day's file:
memory holds a bucket and the batches in flight, never the day. The rows and their order are those of one
batch over every list. After a method change of the rules alone, the lists an earlier method computed with the
same tokenizer keep their rows and have only their risk read again (curated/carried_facts.py).
"""

from __future__ import annotations

import datetime as dt
import multiprocessing
import os
import time
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ..lake import duck
from ..lake.memory import collector_off_in_worker, give_back_freed_memory
from ..lake.parquet_io import RankBuckets, spill_folder, write_parquet, write_parquet_parts
from ..lake.paths import LakePaths
from ..lake.schemas import DAILY_STATUS, RAW_PROBES, TOOL_FACTS, TOOL_LISTS, conform
from ..rules.methods import TOKENIZER_METHOD
from ..rules.tool_facts import KnownTokens, facts_batch, facts_batch_in_worker, facts_method
from .baselines import baseline_before
from .carried_facts import CarriedRows, carriable, spill_carried
from .common import BuildResult, partitions_through, probe_files, require_status


@dataclass(frozen=True)
class FactsPlan:
    """How a day's new lists are computed; the rows and their order are the same under every plan (`carry` aside:
    which copy of a list its rows keep)."""

    # Lists per spilled bucket (about 10 MB of JSON at the real registry's sizes: a bucket is read whole, and
    # 1,000 lists held some 200 MB more: docs/scaling.md, "The day's peak memory") and per batch computed at once.
    bucket_lists: int = 250
    batch_lists: int = 200
    batch_bytes: int = 8 << 20
    # Rows per row group of the day's file: a few batches' rows, so readers meet tens of groups, not hundreds,
    # and the writer holds about 25 MB of rows at once, not 100 (docs/scaling.md, "The day's peak memory").
    row_group_rows: int = 16_384
    # Processes computing batches; None: one per core once the day needs `parallel_from` lists (below that,
    # starting workers costs more than it saves).
    workers: int | None = None
    parallel_from: int = 2_000
    # Take the rows of the lists an earlier method of the rules computed with the same tokenizer and read their
    # risk again, instead of parsing the lists (False: parse every list). The rows are the same either way but
    # for which copy of a list they keep (curated/carried_facts.py).
    carry: bool = True


_SPILL_SCHEMA = pa.schema([pa.field("rank", pa.int64()), pa.field("tools_json", pa.large_string())])

Batch = list[tuple[str, str]]  # (tools_hash, tools_json), in tools_hash order


@dataclass
class FactsBatch:
    """Lists consecutive in tools_hash order: those parsed from their JSON, and those carried (their earlier
    rows, curated/carried_facts.py CARRIED_COLUMNS in tools_hash and position order, or None)."""

    lists: Batch
    carried: pa.Table | None = None

BatchRows = tuple[list[dict[str, Any]], pa.Table]  # the batch's tool_lists rows and its tool_facts rows


def build_tool_facts(lake: LakePaths, day: dt.date, plan: FactsPlan | None = None) -> BuildResult:
    """Facts for every tool list the day needs (its own, and the previous lists of endpoints whose list
    changed) that no earlier day computed under the current method."""
    plan = plan or FactsPlan()
    started = time.perf_counter()
    method = facts_method()
    require_status(lake, day)
    baseline = baseline_before(lake, day)
    with duck.session() as con:
        duck.bind_input(con, "daily_status", [lake.curated_file("daily_status", day)], DAILY_STATUS.schema)
        con.register("change_baseline", baseline.table)
        duck.bind_input(con, "tool_lists", partitions_through(lake, "tool_lists", day, before=True),
                        TOOL_LISTS.schema)
        needed = duck.load_sql("tool_lists_needed")
        con.execute("CREATE TEMP TABLE wanted AS " + needed, duck.used_params(needed, {"day": day, "method": method}))
        source_days = [d for (d,) in con.execute("SELECT DISTINCT day FROM wanted ORDER BY day").fetchall()]
        duck.bind_input(con, "raw_probes", probe_files(lake, source_days), RAW_PROBES.schema)
        duck.bind_input(con, "tool_facts", partitions_through(lake, "tool_facts", day, before=True),
                        TOOL_FACTS.schema)
        known = _Known(duck.run_sql(con, "tool_tokens_known", {"tokenizer": TOKENIZER_METHOD}))
        # A carried list takes its definition tokens from the counts (tool_lists), its rows from tool_facts.
        carried = (carriable([row for row in con.execute(duck.load_sql("tool_facts_carried"),
                                                         {"tokenizer": TOKENIZER_METHOD}).fetchall()
                              if row[0] in known]) if plan.carry else {})
        # Where each list's JSON may be: the rows of its day's probes that published it (hashes only, so
        # the JSON is read once, below).
        places = con.execute(
            "SELECT w.tools_hash, p.source_file, p.source_row FROM wanted AS w "
            "LEFT JOIN raw_probes AS p ON p.tools_hash = w.tools_hash AND p.day = w.day "
            "ORDER BY w.tools_hash, p.source_file, p.source_row").fetchall()
    baseline_source = baseline.source
    del baseline  # the change baseline (100 MB or more) is read only to find the wanted lists
    hashes = sorted({h for h, _, _ in places})
    workers = plan.workers
    if workers is None:
        workers = (os.cpu_count() or 1) if len(hashes) >= plan.parallel_from else 1
    lists: list[dict[str, Any]] = []
    facts_path = lake.curated_file("tool_facts", day)
    with spill_folder(facts_path) as spill:
        rows_of = spill_carried(spill, hashes, carried, plan.bucket_lists)
        # A list whose earlier rows could not be read is parsed, as any other.
        taken = {hashes[rank] for rank in np.flatnonzero(rows_of.found).tolist()}
        buckets = _spill_lists(spill, hashes, [place for place in places if place[0] not in taken],
                               plan.bucket_lists)
        del places
        give_back_freed_memory()
        missing = [hashes[rank] for rank in np.flatnonzero(~(buckets.found | rows_of.found)).tolist()]
        if missing:
            raise FileNotFoundError(f"{day}: the raw probes behind {len(missing)} tool list(s) are gone (e.g. "
                                    f"{missing[0]}); their facts cannot be computed under {method}")
        notes: list[str] = []
        computed = _computed(_batches(buckets, rows_of, hashes, plan), day, workers, notes, known)
        _, rows = write_parquet_parts(lake, facts_path, TOOL_FACTS.schema, _row_groups(computed, lists, plan),
                                      store_schema=True)
    write_parquet(lake, lake.curated_file("tool_lists", day),
                  conform(pa.Table.from_pylist(lists, TOOL_LISTS.schema), TOOL_LISTS))
    return BuildResult("tool_facts", day, facts_path, rows, time.perf_counter() - started,
                       {"new_lists": len(lists), "method": method, "baseline": baseline_source,
                        "counted_before": known.lists, "carried": len(taken),
                        "workers": 1 if notes else workers,
                        **({"workers_note": notes[0]} if notes else {})})


class _Buckets(RankBuckets):
    """The wanted lists' JSON, spilled in buckets of `size` consecutive ranks (tools_hash order)."""

    def __init__(self, folder: Path, size: int, lists: int) -> None:
        super().__init__(folder, size, lists, _SPILL_SCHEMA)

    def add(self, ranks: np.ndarray, texts: pa.Array) -> None:
        """Spill the first text of each rank not found yet (nulls are not found)."""
        fresh = np.asarray(texts.is_valid().to_numpy(zero_copy_only=False), dtype=bool) & ~self.found[ranks]
        _, first = np.unique(np.where(fresh, ranks, -1), return_index=True)
        keep = np.zeros(len(ranks), dtype=bool)
        keep[first] = True
        keep &= fresh
        self.found[ranks[keep]] = True
        buckets = ranks // self.size
        for bucket in np.unique(buckets[keep]).tolist():
            chosen = keep & (buckets == bucket)
            self.write(bucket, pa.record_batch(
                [pa.array(ranks[chosen], pa.int64()), texts.filter(pa.array(chosen)).cast(pa.large_string())],
                schema=_SPILL_SCHEMA))

    def read(self, bucket: int) -> pa.Table:
        table = self.take(bucket)
        return _SPILL_SCHEMA.empty_table() if table is None else table.sort_by("rank")


def _spill_lists(folder: Path, hashes: list[str], places: list[tuple[str, str | None, int | None]],
                 bucket_lists: int) -> _Buckets:
    """Read each probe file's tools_json once, a record batch at a time, and spill the first published JSON
    of each wanted list: Arrow all the way (a probe file of the real registry's shape holds some 170 MB)."""
    rank_of = {h: i for i, h in enumerate(hashes)}
    by_file: dict[str, list[tuple[int, int]]] = {}
    for tools_hash, source_file, source_row in places:
        if source_file is not None and source_row is not None:
            by_file.setdefault(source_file, []).append((source_row, rank_of[tools_hash]))
    buckets = _Buckets(folder, bucket_lists, len(hashes))
    try:
        for source_file, wanted in by_file.items():
            # Buffered column reads: a page at a time, not a probe file's whole column chunk at once, and a few
            # hundred rows (a few MB of JSON at the real registry's sizes) per record batch.
            parquet = pq.ParquetFile(source_file, buffer_size=4 << 20, pre_buffer=False)
            if "tools_json" not in parquet.schema_arrow.names:
                continue
            wanted.sort()
            rows = np.array([row for row, _ in wanted], dtype=np.int64)
            ranks = np.array([rank for _, rank in wanted], dtype=np.int64)
            start = 0
            for batch in parquet.iter_batches(batch_size=256, columns=["tools_json"]):
                inside = (rows >= start) & (rows < start + batch.num_rows)
                if inside.any():
                    texts = batch.column(0).take(pa.array(rows[inside] - start))
                    buckets.add(ranks[inside], texts)
                start += batch.num_rows
    finally:
        buckets.close()
    return buckets


def _batches(buckets: _Buckets, carried: CarriedRows, hashes: list[str], plan: FactsPlan) -> Iterator[FactsBatch]:
    """The lists in tools_hash order, in batches of at most `batch_lists` lists or about `batch_bytes` of JSON;
    a carried list's rows go with the batch its rank falls in."""
    for bucket in range(-(-len(hashes) // buckets.size)):
        table = buckets.read(bucket)
        rows = carried.read(bucket)
        # Each carried rank with the slice of `rows` that holds it, and each parsed rank with its JSON.
        items: list[tuple[int, str | None, int, int]] = []
        if rows is not None:
            ranks, starts = np.unique(rows.column("rank").to_numpy(), return_index=True)
            ends = [*starts[1:].tolist(), rows.num_rows]
            items += [(rank, None, start, end) for rank, start, end in zip(ranks.tolist(), starts.tolist(), ends,
                                                                          strict=True)]
        items += [(rank, text, 0, 0) for rank, text in zip(table.column("rank").to_pylist(),
                                                            table.column("tools_json").to_pylist(), strict=True)]
        items.sort(key=lambda item: item[0])
        batch: Batch = []
        first = last = -1  # the batch's carried rows: rows[first:last]
        count = size = 0
        for rank, text, start, end in items:
            if text is None:
                first, last = (start if first < 0 else first), end
            else:
                batch.append((hashes[rank], text))
                size += len(text)
            count += 1
            if count >= plan.batch_lists or size >= plan.batch_bytes:
                yield _batch_of(batch, rows, first, last)
                batch, first, last, count, size = [], -1, -1, 0, 0
        if count:
            yield _batch_of(batch, rows, first, last)


def _batch_of(batch: Batch, rows: pa.Table | None, first: int, last: int) -> FactsBatch:
    if rows is None or first < 0:
        return FactsBatch(batch)
    # Taken, not sliced: a slice pickles every buffer of the bucket it shares, once per batch.
    return FactsBatch(batch, rows.drop_columns(["rank"]).take(pa.array(np.arange(first, last))))


def _row_groups(computed: Iterable[BatchRows], lists: list[dict[str, Any]], plan: FactsPlan) -> Iterator[pa.Table]:
    """The batches' tool_facts rows a few batches at a time (`row_group_rows`), their tool_lists rows kept in
    `lists`."""
    group: list[pa.Table] = []
    for batch_lists, table in computed:
        give_back_freed_memory()  # what the batch before it left behind, its rows unpickled included
        lists += batch_lists
        group.append(table)
        if sum(t.num_rows for t in group) >= plan.row_group_rows:
            yield pa.concat_tables(group)
            group = []
    if group:
        yield pa.concat_tables(group)


class _Known:
    """The counts of the wanted lists an earlier method counted (sql/tool_tokens_known.sql), kept as Arrow
    and handed out a batch at a time."""

    def __init__(self, table: pa.Table) -> None:
        self.table = table
        self.lists = table.num_rows
        self._row = {h: i for i, h in enumerate(table.column("tools_hash").to_pylist())}

    def __contains__(self, tools_hash: str) -> bool:
        return tools_hash in self._row

    def of(self, batch: FactsBatch) -> dict[str, KnownTokens]:
        """The counts of the batch's lists; a carried list's rows hold its description tokens already."""
        out = {}
        for tools_hash, _ in batch.lists:
            row = self._row.get(tools_hash)
            if row is not None:
                (found,) = self.table.slice(row, 1).to_pylist()
                out[tools_hash] = KnownTokens(found["definition_tokens"],
                                              dict(zip(found["fingerprints"], found["description_tokens"],
                                                       strict=True)))
        if batch.carried is not None:
            definitions = self.table.column("definition_tokens")
            for tools_hash in batch.carried.column("tools_hash").unique().to_pylist():
                out[tools_hash] = KnownTokens(definitions[self._row[tools_hash]].as_py(), {})
        return out


def facts_rows(day: dt.date, batch: FactsBatch, known: dict[str, KnownTokens], one_thread: bool = False) -> BatchRows:
    """One batch's tool_lists rows and tool_facts table, in the day's own process."""
    lists, tools = facts_batch(day, batch.lists, known, TOOL_FACTS.schema, one_thread=one_thread,
                               carried=batch.carried)
    return lists, conform(tools, TOOL_FACTS)


def _computed(batches: Iterable[FactsBatch], day: dt.date, workers: int, notes: list[str],
              known: _Known) -> Iterator[BatchRows]:
    """Each batch's rows, in the batches' order: on `workers` spawned processes (DuckDB's threads make a
    fork unsafe), at most two batches each in flight; in this process when one worker is asked for, or
    when the workers cannot start (a host whose main module a spawned process cannot import again: a script
    without a main guard), which `notes` then says."""
    pending = iter(batches)
    if workers > 1:
        # Each batch with its future, kept until its rows are yielded: a pool that breaks hands them back.
        in_flight: deque[list[Any]] = deque()
        try:
            with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                                     initializer=collector_off_in_worker) as pool:
                for batch in pending:
                    in_flight.append([batch, None])
                    # The worker's function lives in rules/tool_facts.py, so a spawned worker imports the rules
                    # and not this package's builders and DuckDB (about 50 MB a worker: docs/scaling.md).
                    in_flight[-1][1] = pool.submit(facts_batch_in_worker, day, batch.lists, known.of(batch),
                                                   TOOL_FACTS.schema, batch.carried)
                    while len(in_flight) >= 2 * workers:
                        yield _first_done(in_flight)
                while in_flight:
                    yield _first_done(in_flight)
        except BrokenProcessPool as exc:
            notes.append(f"worker processes failed ({exc}); lists computed in one process")
            while in_flight:
                batch = in_flight.popleft()[0]
                yield facts_rows(day, batch, known.of(batch))
    for batch in pending:
        yield facts_rows(day, batch, known.of(batch))


def _first_done(in_flight: deque[list[Any]]) -> BatchRows:
    lists, tools = in_flight[0][1].result()
    in_flight.popleft()
    return lists, conform(tools, TOOL_FACTS)
