"""write_parquet_parts: a table written a part at a time keeps write_parquet's guarantees (the file appears whole
or not at all; a signed day takes only the same rows, as a no-op), and spill folders leave nothing behind."""

from __future__ import annotations

import os
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import DAY

from sevenmaps_pipeline.lake.parquet_io import SignedDayError, spill_folder, write_parquet_parts

SCHEMA = pa.schema([pa.field("k", pa.string(), nullable=False), pa.field("v", pa.int64())])


def parts_of(rows: list[tuple[str, int | None]], sizes: list[int]) -> list[pa.Table]:
    out, at = [], 0
    for size in sizes:
        chunk = rows[at:at + size]
        out.append(pa.table({"k": [k for k, _ in chunk], "v": [v for _, v in chunk]}, schema=SCHEMA))
        at += size
    return out


ROWS = [(f"key-{i:03d}", i if i % 7 else None) for i in range(50)]


def hidden(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_parts_are_row_groups_of_one_file_read_as_the_whole_table(lake):
    path = lake.curated_file("tools", DAY)
    written, rows = write_parquet_parts(lake, path, SCHEMA, iter(parts_of(ROWS, [20, 0, 25, 5])))
    assert (written, rows) == (path, 50)
    table = pq.read_table(path)
    assert table.equals(pa.concat_tables(parts_of(ROWS, [50])))
    assert pq.ParquetFile(path).metadata.num_row_groups == 4  # the empty part too: content is what counts
    assert table.schema.field("k").nullable is False and table.schema.metadata is None  # Parquet's schema only
    assert hidden(path.parent) == []


def test_a_failing_part_leaves_the_old_file_and_no_temp(lake):
    path = lake.curated_file("tools", DAY)
    write_parquet_parts(lake, path, SCHEMA, iter(parts_of(ROWS, [50])))
    before = path.read_bytes()

    def failing():
        yield from parts_of(ROWS, [10])
        raise RuntimeError("the source broke")

    with pytest.raises(RuntimeError, match="the source broke"):
        write_parquet_parts(lake, path, SCHEMA, failing())
    assert path.read_bytes() == before and hidden(path.parent) == []


def test_a_signed_day_takes_the_same_rows_however_grouped_and_refuses_others(lake):
    path = lake.curated_file("tools", DAY)
    write_parquet_parts(lake, path, SCHEMA, iter(parts_of(ROWS, [50])))
    before, mtime = path.read_bytes(), path.stat().st_mtime_ns
    lake.roots_dir.mkdir(parents=True, exist_ok=True)
    lake.root_file(DAY).write_text("{}")  # the day is signed from here on

    assert write_parquet_parts(lake, path, SCHEMA, iter(parts_of(ROWS, [7, 30, 13]))) == (path, 50)
    assert path.read_bytes() == before and path.stat().st_mtime_ns == mtime
    changed = [*ROWS[:49], ("key-049", -1)]
    for rows in (changed, ROWS[:49], [*ROWS, ("key-050", 50)]):
        with pytest.raises(SignedDayError, match=f"day {DAY} is signed"):
            write_parquet_parts(lake, path, SCHEMA, iter(parts_of(rows, [len(rows)])))
    assert path.read_bytes() == before and hidden(path.parent) == []

    consumed = []
    other = lake.curated_file("findings", DAY)  # a signed day cannot gain a file: refused before any part
    with pytest.raises(SignedDayError, match=f"day {DAY} is signed"):
        write_parquet_parts(lake, other, SCHEMA, (consumed.append(1) or p for p in parts_of(ROWS, [50])))
    assert consumed == [] and not other.exists()


def test_a_spill_folder_is_hidden_removed_on_leaving_and_swept_when_left_behind(lake):
    path = lake.curated_file("tools", DAY)
    with pytest.raises(RuntimeError), spill_folder(path) as spill:
        (spill / "0.arrow").write_bytes(b"scratch")
        assert spill.parent == path.parent and spill.name.startswith(".")
        raise RuntimeError("a build failed")
    assert not spill.exists()

    left = path.parent / ".part-0.parquet.crashed.spill"  # as a killed build leaves it
    left.mkdir()
    (left / "3.arrow").write_bytes(b"scratch")
    an_hour_ago = time.time() - 3700
    os.utime(left, (an_hour_ago, an_hour_ago))
    write_parquet_parts(lake, path, SCHEMA, iter(parts_of(ROWS, [50])))
    assert hidden(path.parent) == []
