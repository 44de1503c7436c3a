"""Atomic Parquet writes into day partitions, and the rule that signed days are frozen.

A write goes to a hidden temp file in the target folder and is renamed over the target, so a reader (or
a crash) never sees half a file; rewriting a partition replaces it whole. Every writer in the project
goes through `write_parquet` (or `write_parquet_parts`, for a table written a part at a time), so no code
path can change a signed day.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import re
import shutil
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

from .paths import DAY_DIR, LakePaths, day_str

_ROOT_NAME = re.compile(r"^day=(\d{4}-\d{2}-\d{2})\.json$")


class SignedDayError(RuntimeError):
    """A write into a day whose files are covered by a signed root (or that precedes one)."""


def last_signed_day(lake: LakePaths) -> dt.date | None:
    if not lake.roots_dir.is_dir():
        return None
    days = [m.group(1) for p in lake.roots_dir.iterdir() if (m := _ROOT_NAME.match(p.name))]
    return dt.date.fromisoformat(max(days)) if days else None


def assert_day_writable(lake: LakePaths, day: dt.date | str) -> None:
    day = dt.date.fromisoformat(day_str(day))
    last = last_signed_day(lake)
    if last is None or day > last:
        return
    if lake.root_file(day).exists():
        raise SignedDayError(
            f"day {day} is signed ({lake.root_file(day).relative_to(lake.root)}); its files are frozen "
            "and can never be written again"
        )
    raise SignedDayError(
        f"day {day} precedes the last signed day {last}; signed history is closed and cannot gain files"
    )


def _day_of(path: Path) -> str | None:
    for part in path.parts:
        m = DAY_DIR.match(part)
        if m:
            return m.group(1)
    return None


def write_parquet(
    lake: LakePaths,
    path: Path,
    table: pa.Table,
    *,
    compression: str = "zstd",
    dictionary_pagesize_limit: int | None = None,
    statistics: tuple[str, ...] | None = None,
) -> Path:
    """Write `table` to `path` inside the lake atomically.

    Into a signed day (or one before the last signed day) only a rewrite that changes nothing passes, as a
    no-op: a backfill that recomputes a frozen day must not fail when the day would come out the same, and
    must fail loudly, naming the day, when it would not.

    Dictionary-encoded columns (a table that repeats a few values over many rows, built without copying
    them: curated/tool_tables.py) are written as their value type: readers see strings, as in every other
    file (such a file carries Parquet's schema only, not Arrow's copy of it with the encoding and the
    columns' descriptions, which the table specs hold). `statistics` limits the columns that
    get min/max statistics (each file is one row group of one day, so only some columns' statistics can
    ever skip anything); None gives every column its statistics."""
    path = Path(path)
    day = _day_of(path.relative_to(lake.root))
    if day is not None:
        try:
            assert_day_writable(lake, day)
        except SignedDayError:
            if path.is_file() and _same_content(path, decoded(table)):
                remove_stale_temps(path.parent)  # a killed rebuild's leftovers too (integrity/stray.py)
                return path
            raise
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{uuid.uuid4().hex}.tmp"
    try:
        kwargs = _writer_options(compression, dictionary_pagesize_limit, statistics)
        if decoded_schema(table.schema) != table.schema:
            # The Arrow schema Parquet stores beside its own would make pyarrow read the columns back as
            # dictionaries; without it they read as the value types the Parquet schema gives.
            kwargs["store_schema"] = False
        pq.write_table(table, tmp, **kwargs)
        _publish(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    remove_stale_temps(path.parent)
    return path


def write_parquet_parts(
    lake: LakePaths,
    path: Path,
    schema: pa.Schema,
    parts: Iterable[pa.Table],
    *,
    compression: str = "zstd",
    dictionary_pagesize_limit: int | None = None,
    statistics: tuple[str, ...] | None = None,
    store_schema: bool = False,
) -> tuple[Path, int]:
    """`write_parquet` for a table too large to hold whole: its `parts` (each of `schema`, in the table's row
    order) are written one at a time, each as row groups of its own. The same guarantees: the file appears
    whole, by one rename, or not at all; into a signed day only a rewrite with the same rows passes, as a
    no-op (compared part by part, never read whole), and a day that had no such file cannot gain it.

    The file carries Parquet's schema only, as a `write_parquet` of dictionary-encoded columns does: readers
    see the value types, without Arrow's copy of the columns' descriptions (the table specs hold them); with
    `store_schema`, Arrow's copy too, as a `write_parquet` of plain columns does. Returns the path and the rows
    written."""
    path = Path(path)
    day = _day_of(path.relative_to(lake.root))
    refused: SignedDayError | None = None
    if day is not None:
        try:
            assert_day_writable(lake, day)
        except SignedDayError as error:
            if not path.is_file():
                raise
            refused = error
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{uuid.uuid4().hex}.tmp"
    rows = 0
    try:
        kwargs = _writer_options(compression, dictionary_pagesize_limit, statistics)
        with pq.ParquetWriter(tmp, schema, store_schema=store_schema, **kwargs) as writer:
            for part in parts:
                writer.write_table(part)
                rows += part.num_rows
        if refused is not None:
            if _same_rows(path, tmp):
                tmp.unlink()
                remove_stale_temps(path.parent)  # a killed rebuild's leftovers too (integrity/stray.py)
                return path, rows
            raise refused
        _publish(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    remove_stale_temps(path.parent)
    return path, rows


def _writer_options(compression: str, dictionary_pagesize_limit: int | None,
                    statistics: tuple[str, ...] | None) -> dict:
    options: dict = {"compression": compression}
    if dictionary_pagesize_limit:
        options["dictionary_pagesize_limit"] = dictionary_pagesize_limit
    if statistics is not None:
        options["write_statistics"] = list(statistics)
    return options


def _publish(tmp: Path, path: Path) -> None:
    """The finished temp file on disk, then renamed over `path` in one step."""
    with open(tmp, "rb") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _batches(path: Path) -> Iterator[pa.RecordBatch]:
    """The file's rows in batches, empty ones left out."""
    for batch in pq.ParquetFile(path).iter_batches(batch_size=_COMPARED_ROWS):
        if batch.num_rows:
            yield batch


# Rows compared at a time when a signed day's file is checked against a rewrite written part by part.
_COMPARED_ROWS = 16_384


def _same_rows(a: Path, b: Path) -> bool:
    """Whether two Parquet files read as equal tables (`pa.Table.equals`), however their rows are grouped,
    holding a batch of each at a time."""
    try:
        fa, fb = pq.ParquetFile(a), pq.ParquetFile(b)
        if fa.metadata.num_rows != fb.metadata.num_rows or not fa.schema_arrow.equals(fb.schema_arrow):
            return False
        left, right = _batches(a), _batches(b)
        x, y = next(left, None), next(right, None)
        while x is not None and y is not None:
            n = min(x.num_rows, y.num_rows)
            if not x.slice(0, n).equals(y.slice(0, n)):
                return False
            x = x.slice(n) if n < x.num_rows else next(left, None)
            y = y.slice(n) if n < y.num_rows else next(right, None)
        return x is None and y is None
    except Exception:  # noqa: BLE001 - an unreadable frozen file is not the same content
        return False


def decoded_schema(schema: pa.Schema) -> pa.Schema:
    """`schema` with each dictionary-encoded field as its value type (nullability and metadata kept)."""
    fields = [f.with_type(f.type.value_type) if pa.types.is_dictionary(f.type) else f for f in schema]
    return pa.schema(fields, metadata=schema.metadata)


def decoded(table: pa.Table) -> pa.Table:
    """`table` with its dictionary-encoded columns decoded (the table itself when it has none)."""
    schema = decoded_schema(table.schema)
    return table if schema == table.schema else table.cast(schema)


def _same_content(path: Path, table: pa.Table) -> bool:
    try:
        return pq.read_table(path).equals(table)
    except Exception:  # noqa: BLE001 - an unreadable frozen file is not the same content
        return False


@contextlib.contextmanager
def spill_folder(path: Path) -> Iterator[Path]:
    """A hidden folder beside `path` for the scratch files of a table on its way to `path` (parts of it too
    large to hold at once: curated/list_facts.py), removed on leaving whatever happens. Hidden, like a temp
    file, it is part of no day (integrity/manifest.py); one left by a crash is swept by a later write into
    the same folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    folder = path.parent / f".{path.name}.{uuid.uuid4().hex}.spill"
    folder.mkdir()
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


class RankBuckets:
    """Rows spilled in a spill_folder as Arrow streams, in buckets of `size` consecutive ranks (a rank: a
    list's place in tools_hash order), each written as its rows come and read back once, whole
    (curated/tool_facts.py, curated/carried_facts.py). `found`: the ranks the caller has whole."""

    def __init__(self, folder: Path, size: int, lists: int, schema: pa.Schema, prefix: str = "") -> None:
        self.folder, self.size, self.schema, self.prefix = folder, size, schema, prefix
        self.found = np.zeros(lists, dtype=bool)
        self._writers: dict[int, ipc.RecordBatchStreamWriter] = {}

    def write(self, bucket: int, rows: pa.Table | pa.RecordBatch) -> None:
        if bucket not in self._writers:
            self._writers[bucket] = ipc.new_stream(self.folder / f"{self.prefix}{bucket}.arrows", self.schema)
        self._writers[bucket].write(rows)

    def close(self) -> None:
        for writer in self._writers.values():
            writer.close()

    def take(self, bucket: int) -> pa.Table | None:
        """The bucket's rows, its file then removed; None when nothing was written to it."""
        path = self.folder / f"{self.prefix}{bucket}.arrows"
        if not path.is_file():
            return None
        with ipc.open_stream(path) as reader:
            table = reader.read_all()
        path.unlink()
        return table


# A write's temp or spill folder older than this is a crashed write's: swept by the next write into its folder and
# by signing (integrity/stray.py: in a signed day's folder it is a stray).
STALE_SECONDS = 3600


def remove_stale_temps(folder: Path, patterns: tuple[str, ...] = (".*.tmp", ".*.spill")) -> list[str]:
    """Temp files (and spill folders) left by a crashed writer are hidden from readers; the next write sweeps
    them, and so does signing for the days it signs (integrity/roots.py), and the site's build its working
    folders (`patterns`). One that cannot be removed is left for verify to name. The names removed, sorted."""
    removed = []
    for stale in sorted({path for pattern in patterns for path in folder.glob(pattern)}):
        try:
            if stale.lstat().st_mtime < (dt.datetime.now().timestamp() - STALE_SECONDS):
                if stale.is_dir() and not stale.is_symlink():
                    shutil.rmtree(stale, ignore_errors=True)
                else:
                    stale.unlink()
                removed.append(stale.name)
        except (FileNotFoundError, PermissionError):
            pass
    return removed


def write_bytes_atomic(path: Path, data: bytes, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{uuid.uuid4().hex}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


# What `footer_readable` found, by file name, size and modification time (a file rewritten is read again).
_FOOTERS: dict[tuple[str, int, int], bool] = {}
_FOOTERS_KEPT = 200_000


def footer_readable(path: Path) -> bool:
    """Whether a Parquet file's footer reads (its schema and row groups): what a reader that lists files outside a
    day's build (the warehouse's views, the map's frequent checks) asks first, so that one torn file of a kind the
    build has not checked yet never stops it. A file whose footer reads may still hold a damaged page (the day's
    build decodes every value: curated/common.py unreadable)."""
    try:
        stat = path.stat()
    except OSError:
        return False
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    known = _FOOTERS.get(key)
    if known is None:
        try:
            pq.read_metadata(path)
            known = True
        except Exception:  # noqa: BLE001 - any reader failure is a file left out
            known = False
        if len(_FOOTERS) >= _FOOTERS_KEPT:
            _FOOTERS.clear()
        _FOOTERS[key] = known
    return known
