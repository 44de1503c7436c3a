"""Atomic Parquet writes into day partitions, and the rule that signed days are frozen.

A write goes to a hidden temp file in the target folder and is renamed over the target, so a reader (or
a crash) never sees half a file; rewriting a partition replaces it whole. Every writer in the project
goes through `write_parquet` (or `parquet_stream`, for a table written a row group at a time), so no code
path can change a signed day.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
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
                return path
            raise
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{uuid.uuid4().hex}.tmp"
    try:
        kwargs: dict = {}
        if dictionary_pagesize_limit:
            kwargs["dictionary_pagesize_limit"] = dictionary_pagesize_limit
        if statistics is not None:
            kwargs["write_statistics"] = list(statistics)
        if decoded_schema(table.schema) != table.schema:
            # The Arrow schema Parquet stores beside its own would make pyarrow read the columns back as
            # dictionaries; without it they read as the value types the Parquet schema gives.
            kwargs["store_schema"] = False
        pq.write_table(table, tmp, compression=compression, **kwargs)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _remove_stale_temps(path.parent)
    return path


@contextlib.contextmanager
def parquet_stream(lake: LakePaths, path: Path, schema: pa.Schema, *,
                   compression: str = "zstd") -> Iterator[pq.ParquetWriter]:
    """A writer of `path` inside the lake for a table too large to hold at once: each `write_table` call adds
    row groups, and the file appears whole, atomically, when the block ends without an error (nothing of it
    otherwise). Into a signed day, as with `write_parquet`, only a rewrite whose content is the same passes
    (compared a batch at a time), and the frozen file is left as it was."""
    path = Path(path)
    day = _day_of(path.relative_to(lake.root))
    frozen: SignedDayError | None = None
    if day is not None:
        try:
            assert_day_writable(lake, day)
        except SignedDayError as exc:
            if not path.is_file():
                raise
            frozen = exc
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{uuid.uuid4().hex}.tmp"
    try:
        with pq.ParquetWriter(tmp, schema, compression=compression) as writer:
            yield writer
        if frozen is not None:
            if not _same_rows(path, tmp):
                raise frozen
            tmp.unlink()
            return
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _remove_stale_temps(path.parent)


def _same_rows(path: Path, other: Path) -> bool:
    """Whether two Parquet files hold the same rows, whatever their row groups, a batch at a time."""
    try:
        a, b = pq.ParquetFile(path), pq.ParquetFile(other)
        if a.schema_arrow != b.schema_arrow or a.metadata.num_rows != b.metadata.num_rows:
            return False
        xs, ys = a.iter_batches(65_536), b.iter_batches(65_536)
        x: pa.RecordBatch | None = None
        y: pa.RecordBatch | None = None
        while True:
            while x is None or len(x) == 0:
                if (x := next(xs, None)) is None:
                    break
            while y is None or len(y) == 0:
                if (y := next(ys, None)) is None:
                    break
            if x is None or y is None:
                return x is None and y is None
            n = min(len(x), len(y))
            if not x.slice(0, n).equals(y.slice(0, n)):
                return False
            x, y = x.slice(n), y.slice(n)
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


def _remove_stale_temps(folder: Path) -> None:
    """Temp files left by a crashed writer are hidden from readers; the next write sweeps them."""
    for stale in folder.glob(".*.tmp"):
        try:
            if stale.stat().st_mtime < (dt.datetime.now().timestamp() - 3600):
                stale.unlink()
        except FileNotFoundError:
            pass


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
