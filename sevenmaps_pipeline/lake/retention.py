"""Retention of the frequent raw batches (docs/operations.md, "Retention").

`raw/hourly`, `raw/five_minute` and `raw/sensors` are not covered by roots and grow every hour. Each
finished day of them is first summed into its aggregate, `aggregates/<kind>/day=D/part-0.parquet` (one row
per endpoint and check kind: checks, answered, not counted, first and last check), and a day's raw batches
are deleted only once that aggregate exists and the day is older than the kind's window. Nothing covered
by a signed root is ever touched: the kinds are fixed, and every file is checked against the lines of
every signed root before it is deleted. Every deletion is logged, file by file with its size and SHA-256,
in `control/retention_log.jsonl`.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from . import duck
from .digests import sha256_file
from .parquet_io import footer_readable
from .paths import COVERED_RAW, LakePaths, folder_day

log = logging.getLogger(__name__)

# Days kept after the day itself, per kind: five-minute checks feed 90-day uptime.
RETENTION_DAYS = {"hourly": 30, "five_minute": 90, "sensors": 30}
AGGREGATE_METHOD = "frequent-days-1.0"


@dataclass
class RetentionReport:
    aggregated: list[tuple[str, dt.date]] = field(default_factory=list)
    deleted: list[tuple[str, dt.date, int, int]] = field(default_factory=list)  # kind, day, files, bytes
    kept_without_aggregate: list[tuple[str, dt.date, str]] = field(default_factory=list)

    def summary(self) -> str:
        files = sum(d[2] for d in self.deleted)
        size = sum(d[3] for d in self.deleted)
        return (f"{len(self.aggregated)} day(s) aggregated; {len(self.deleted)} day(s) deleted ({files} files, "
                f"{size:,} bytes); {len(self.kept_without_aggregate)} kept (no aggregate)")


def aggregate_file(lake: LakePaths, kind: str, day: dt.date) -> Path:
    return lake.root / "aggregates" / kind / f"day={day.isoformat()}" / "part-0.parquet"


def log_file(lake: LakePaths) -> Path:
    return lake.root / "control" / "retention_log.jsonl"


def _days(lake: LakePaths, kind: str) -> list[dt.date]:
    folder = lake.root / "raw" / kind
    if not folder.is_dir():
        return []
    return sorted(d for p in folder.iterdir() if p.is_dir() and (d := folder_day(p.name)) is not None)


def aggregate_day(lake: LakePaths, kind: str, day: dt.date) -> Path | None:
    """Sum one finished day of a frequent kind (None when no readable batch exists)."""
    listed = sorted((lake.root / "raw" / kind / f"day={day.isoformat()}").glob("*.parquet"))
    files = [path for path in listed if footer_readable(path)]  # a torn batch stopped every kind's retention
    if len(files) < len(listed):
        log.warning("retention of %s %s leaves out %d unreadable batch(es): %s", kind, day, len(listed) - len(files),
                    ", ".join(str(path) for path in listed if path not in files))
    if not files:
        return None
    target = aggregate_file(lake, kind, day)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    with duck.connect() as con:
        con.execute(
            "COPY (SELECT $day::DATE AS day, check_kind, server_key, count(*) AS checks, "
            "count(*) FILTER (WHERE outcome NOT IN ('skipped', 'prober_error', 'not_checked')) AS counted, "
            "count(*) FILTER (WHERE outcome IN ('ok', 'needs_auth', 'http_402')) AS answered, "
            "min(started_at) AS first_check_at, max(started_at) AS last_check_at, "
            "count(DISTINCT filename) AS batches, $method AS method_version "
            "FROM read_parquet($files, union_by_name = true, filename = true) GROUP BY ALL "
            "ORDER BY check_kind, server_key) TO '" + str(tmp).replace("'", "''") + "' (FORMAT parquet)",
            {"day": day, "files": [str(f) for f in files], "method": AGGREGATE_METHOD})
    tmp.replace(target)
    return target


def signed_paths(lake: LakePaths) -> set[str]:
    """Every path a signed root names (relative to the lake root)."""
    names: set[str] = set()
    for doc in sorted(lake.roots_dir.glob("day=*.json")) if lake.roots_dir.is_dir() else ():
        try:
            lines = json.loads(doc.read_text()).get("lines") or []
        except (OSError, ValueError):
            continue
        names.update(line[66:] for line in lines if isinstance(line, str) and len(line) > 66)
    return names


def apply_retention(lake: LakePaths, today: dt.date, now: dt.datetime,
                    windows: dict[str, int] | None = None) -> RetentionReport:
    """Aggregate every finished day that lacks its aggregate; delete the raw batches of days older than
    their window whose aggregate exists. Never the open day, never a covered kind, never a signed file."""
    windows = windows or RETENTION_DAYS
    report = RetentionReport()
    signed = signed_paths(lake)
    for kind, keep in windows.items():
        if kind in COVERED_RAW:
            raise ValueError(f"raw/{kind} is covered by the signed roots: retention never deletes it")
        for day in _days(lake, kind):
            if day >= today:
                continue
            if not aggregate_file(lake, kind, day).is_file() and aggregate_day(lake, kind, day) is not None:
                report.aggregated.append((kind, day))
            if (today - day).days <= keep:
                continue
            folder = lake.root / "raw" / kind / f"day={day.isoformat()}"
            if not aggregate_file(lake, kind, day).is_file():
                report.kept_without_aggregate.append((kind, day, "no readable batch to aggregate"))
                continue
            files = sorted(p for p in folder.rglob("*") if p.is_file())
            rel = [p.relative_to(lake.root).as_posix() for p in files]
            if any(r in signed for r in rel):
                report.kept_without_aggregate.append((kind, day, "a file is named by a signed root"))
                continue
            sizes = [p.stat().st_size for p in files]
            listed = [{"path": r, "bytes": n, "sha256": sha256_file(p)}
                      for r, p, n in zip(rel, files, sizes, strict=True)]
            entry = {"at": now.isoformat(timespec="seconds"), "kind": kind, "day": day.isoformat(),
                     "aggregate": aggregate_file(lake, kind, day).relative_to(lake.root).as_posix(), "files": listed}
            log_file(lake).parent.mkdir(parents=True, exist_ok=True)
            with log_file(lake).open("a", encoding="utf-8") as log:  # logged before anything is deleted
                log.write(json.dumps(entry, sort_keys=True) + "\n")
            shutil.rmtree(folder)
            report.deleted.append((kind, day, len(files), sum(sizes)))
    return report
