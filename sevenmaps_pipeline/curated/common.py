"""What every curated builder shares: the result record, day windows, input discovery."""

from __future__ import annotations

import datetime as dt
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..lake import duck
from ..lake.parquet_io import assert_day_writable
from ..lake.paths import LakePaths, folder_day, registry_in_force
from ..lake.schemas import (
    RAW_DOMAINS,
    RAW_FIVE_MINUTE,
    RAW_HOURLY,
    RAW_ORIGINS,
    RAW_PACKAGES,
    RAW_PROBES,
    RAW_READINESS,
    RAW_READINESS_SURFACES,
    RAW_REGISTRY,
    RAW_SKILLS,
    RAW_SUBMITTED,
    TableSpec,
)
from .raw_columns import column_problem
from .refusal_journal import record_refusal, recorded_refusals


@dataclass
class BuildResult:
    table: str
    day: dt.date
    path: Path
    rows: int
    seconds: float
    stats: dict[str, Any] = field(default_factory=dict)


def days_back(day: dt.date, n: int) -> list[dt.date]:
    return [day - dt.timedelta(days=i) for i in range(n, -1, -1)]


def rel(lake: LakePaths, path: Path) -> str:
    return path.relative_to(lake.root).as_posix()


def unreadable_reason(exc: Exception, quoted: bool = True) -> str:
    """How a file that a Parquet reader refused is described in the quarantine: with the reader's words, or only
    their kind where a value the reader quotes may be a sender's words (agent reports)."""
    return f"unreadable Parquet: {type(exc).__name__}" + (f": {str(exc)[:300]}" if quoted else "")


def unreadable(path: Path, spec_schema: pa.Schema, quoted: bool = True) -> str | None:
    """Why a landed raw file cannot be used, or None. Decodes every value of every column (corrupt pages
    show only then) with DuckDB, the engine every later step reads the file with, streaming, so memory stays
    bounded. DuckDB and pyarrow each refuse some damaged files the other decodes; a file that passes here
    reads in every later query (docs/data-dictionary.md, raw_probes). Four times faster than pyarrow on a day
    of probes, whose tool lists decode to some 200 MB."""
    relation = "read_parquet($path, hive_partitioning = false)"
    try:
        with duck.session() as con:
            names = [row[0] for row in con.execute(f"DESCRIBE SELECT * FROM {relation}",
                                                   {"path": str(path)}).fetchall()]
            con.execute(f"SELECT count(*), sum(hash(COLUMNS(*))) FROM {relation}", {"path": str(path)}).fetchall()
    except Exception as exc:  # noqa: BLE001 - any reader failure is a classified refusal
        return unreadable_reason(exc, quoted)
    missing = [f.name for f in spec_schema if not f.nullable and f.name not in names]
    if missing:
        return f"missing required columns: {', '.join(missing)}"
    return None


def quarantine_target(lake: LakePaths, path: Path) -> Path:
    """Where a refused raw file goes: the same place under `quarantine/`."""
    return lake.quarantine_dir / path.relative_to(lake.root)


def move_to_quarantine(lake: LakePaths, day: dt.date, path: Path) -> Path:
    """Move a refused raw file of `day` out of the raw area (views and signed roots never see it)."""
    assert_day_writable(lake, day)
    target = quarantine_target(lake, path)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(path), target)
    return target


# Every raw kind of a day but the agent reports' (curated/report_batches.py): what the day's build or a reader of
# the day reads, the lookups' and the frequent checks' included (a torn hourly batch stopped the warehouse, and so
# the day's map, and the nightly retention; a torn lookup the day's lookup tables). One landing after the build is
# left out by its readers (lake/warehouse.py, publishing/mapday.py, lake/retention.py).
_CHECKED_KINDS: tuple[tuple[str, TableSpec], ...] = (
    ("probes", RAW_PROBES), ("registry", RAW_REGISTRY), ("readiness", RAW_READINESS),
    ("readiness_surfaces", RAW_READINESS_SURFACES), ("skills", RAW_SKILLS), ("origins", RAW_ORIGINS),
    ("packages", RAW_PACKAGES), ("domains", RAW_DOMAINS), ("hourly", RAW_HOURLY), ("five_minute", RAW_FIVE_MINUTE),
    ("submitted", RAW_SUBMITTED))


def raw_file_problem(path: Path, spec: TableSpec) -> str | None:
    """Why a landed raw file of `spec`'s kind cannot be read with the day's other files, or None: unreadable, or
    columns that are not its kind's (curated/raw_columns.py)."""
    problem = unreadable(path, spec.schema)
    if problem is not None:
        return problem
    try:  # pyarrow may refuse a damaged file that DuckDB decoded whole (see `unreadable`)
        return column_problem(path, pq.read_schema(path), spec.schema)
    except Exception as exc:  # noqa: BLE001 - any reader failure is a classified refusal
        return unreadable_reason(exc)


def quarantine_unreadable_files(lake: LakePaths, day: dt.date) -> list[dict[str, Any]]:
    """Move raw files of `day` that cannot be read out of the lake's raw area, and describe each one."""
    refused: list[dict[str, Any]] = []
    for source, spec in _CHECKED_KINDS:
        for path in lake.raw_files(source, day):
            problem = raw_file_problem(path, spec)
            if problem is None:
                continue
            assert_day_writable(lake, day)
            row = {"day": day, "source": source, "source_file": rel(lake, path), "row_number": None,
                   "server_key": None, "problem": f"{problem} (moved to {rel(lake, quarantine_target(lake, path))})",
                   "row_json": None}
            record_refusal(lake, "quarantine", row)  # before the file leaves (curated/refusal_journal.py)
            move_to_quarantine(lake, day, path)
            refused.append(row)
    return refused


def with_earlier_refusals(lake: LakePaths, table: str, day: dt.date,
                          refused: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The file refusals of a day's build, with those an earlier build of the day made of files that have left the
    raw area since (moved or deleted then, so no build meets them again): a day built again keeps every reason
    (a signed day is then the same, byte for byte). An earlier build that died before its table was written
    left its refusals in the day's journal (curated/refusal_journal.py): they are read back from there."""
    now = {row["source_file"] for row in refused}
    previous = lake.curated_file(table, day)
    files = pq.read_table(previous, filters=pc.field("row_number").is_null()).to_pylist() if previous.is_file() else []
    earlier = [row for row in files if row["source_file"] not in now and not (lake.root / row["source_file"]).exists()]
    tabled = now | {row["source_file"] for row in files}
    recorded = recorded_refusals(lake, table, day)
    journaled = [row for row in recorded if row["source_file"] not in tabled
                 and not (lake.root / row["source_file"]).exists()]
    # In the order first refused (the journal's), so a build that died midway and the one after it write the rows a
    # build that never died writes; rows of tables from before the journal keep their own order (a signed day built
    # again is the same, byte for byte).
    first = {row["source_file"]: i for i, row in enumerate(recorded)}
    return sorted(refused + earlier + journaled, key=lambda row: first.get(row["source_file"], len(first)))


def bind_probe_validation(con: Any) -> None:
    """View probe_validation over the bound raw_probes (sql/probe_validation.sql), with its rules, the macro
    probe_problem (sql/probe_problem.sql)."""
    con.execute(duck.load_sql("probe_problem"))
    con.execute("CREATE TEMP VIEW probe_validation AS " + duck.load_sql("probe_validation"))


def bind_registry(con: duckdb.DuckDBPyConnection, lake: LakePaths, day: dt.date) -> Path | None:
    """Bind the registry snapshot in force on `day` as `registry`, and `naming_listings`, the listing of it that
    names each endpoint (sql/naming_listings.sql); the snapshot's path, or None when no snapshot is in force."""
    registry = registry_in_force(lake, day)
    duck.bind_input(con, "registry", [registry] if registry else [], RAW_REGISTRY.schema)
    con.execute(f"CREATE OR REPLACE TEMP VIEW naming_listings AS {duck.load_sql('naming_listings')}")
    return registry


def probe_files(lake: LakePaths, days: list[dt.date]) -> list[Path]:
    return [f for d in days for f in lake.raw_files("probes", d)]


def partitions_through(lake: LakePaths, table: str, day: dt.date, *, before: bool = False) -> list[Path]:
    """Every existing partition file of `table` up to `day` (or strictly before it)."""
    folder = lake.root / "curated" / table
    files = []
    if folder.is_dir():
        for child in sorted(folder.iterdir()):
            # a stray folder (`day=2026-11-09.bak`, a copy) is no day of the table (integrity/stray.py names it)
            if (earlier := folder_day(child.name)) is not None and earlier < day and (
                    child / "part-0.parquet").is_file():
                files.append(child / "part-0.parquet")
    # The day itself where the lake keeps it (a provisional build keeps the open day apart: lake/paths.py).
    if not before and (own := lake.curated_file(table, day)).is_file():
        files.append(own)
    return files


def status_files(lake: LakePaths, day: dt.date, days_before: int) -> list[Path]:
    """The daily_status partitions that exist for `day` and the `days_before` days before it."""
    return partitions_between(lake, "daily_status", day, days_before + 1)


def require_status(lake: LakePaths, day: dt.date) -> None:
    status = lake.curated_file("daily_status", day)
    if not status.is_file():
        raise FileNotFoundError(f"daily_status for {day} is missing ({status}); materialise it first")


def partitions_between(lake: LakePaths, table: str, day: dt.date, days: int) -> list[Path]:
    """The existing partitions of `table` for `day` and the `days - 1` days before it."""
    return [f for d in days_back(day, days - 1) if (f := lake.curated_file(table, d)).is_file()]
