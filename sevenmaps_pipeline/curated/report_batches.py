"""What a day's folder of agent reports may hold, and what leaves it (docs/methodology.md, "Agent reports").

Batches arrive from a reporting service we do not write: whatever else lands beside them, or whatever a batch
holds that the rules cannot read, is refused here with its reason before any query reads the folder, so no
batch can stop the day's build and nothing is signed that was never read (reports-1.2). Never text in an
agent's own words: a refused batch whose content cannot be told apart from words is kept only as its size
and SHA-256 (one past the limits too: its fields cannot be told apart unread); one with extra columns keeps its
fixed fields (in quarantine/, never published).
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from ..lake.digests import sha256_file
from ..lake.parquet_io import assert_day_writable, write_parquet
from ..lake.paths import LakePaths
from ..lake.schemas import RAW_AGENT_REPORTS
from ..rules.methods import REPORTS_METHOD, REPORTS_PARAMS
from .common import rel, unreadable, unreadable_reason
from .raw_columns import column_problem
from .refusal_journal import record_refusal

# DuckDB's read_parquet expands these in a file name, so a batch named `*.parquet` would read every batch again.
_WILDCARDS = frozenset("*?[]{}")


def _name_problem(path: Path) -> str | None:
    """Why a landed entry is no batch by its kind or name alone, or None."""
    if path.is_symlink() or not path.is_file():
        return "not a regular file"
    if _WILDCARDS & set(path.name):
        return "a name with a wildcard (* ? [ ] { }), which a Parquet reader expands to other batches"
    if shown(path.name) != path.name:
        return "a name that is not UTF-8"
    return None


def _batch_problem(path: Path) -> str | None:
    """Why a landed batch cannot be read whole by the rules, or None (docs/methodology.md, "Agent reports"). A
    reader's own words are never quoted: they may quote a value, an agent's words."""
    problem = unreadable(path, RAW_AGENT_REPORTS.schema, quoted=False)
    if problem is not None:
        return problem
    try:  # pyarrow may refuse a damaged file that DuckDB decoded whole (see `unreadable`)
        return column_problem(path, pq.read_schema(path), RAW_AGENT_REPORTS.schema, any_number=True,
                              extras_kept=False)
    except Exception as exc:  # noqa: BLE001 - any reader failure is a classified refusal
        return unreadable_reason(exc, quoted=False)


def shown(name: str) -> str:
    """A file's name as the quarantine can keep it: a byte that is not UTF-8 as its escape (`\\xe9`)."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")


# A refused file larger than this is deleted unhashed: a sparse file of terabytes reads as zeros for hours.
_MAX_HASHED = 1 << 30


def _refusal(lake: LakePaths, day: dt.date, path: Path, problem: str) -> dict[str, Any]:
    """The refusal row of an entry, written down before the entry leaves (curated/refusal_journal.py)."""
    row = {"day": day, "source_file": shown(rel(lake, path)), "row_number": None, "problem": problem,
           "method_version": REPORTS_METHOD}
    record_refusal(lake, "agent_report_quarantine", row)
    return row


def _delete_unread(lake: LakePaths, day: dt.date, path: Path, problem: str) -> dict[str, Any]:
    """Delete an entry whose content cannot be told apart from words; its refusal row, in our words."""
    assert_day_writable(lake, day)
    if path.is_symlink() or path.is_file():
        size = path.lstat().st_size
        if path.is_symlink():
            what, kept = "link", ""
        elif size > _MAX_HASHED:
            what, kept = "file", f" ({size} bytes, not hashed: larger than {_MAX_HASHED} bytes)"
        else:
            what, kept = "file", f" ({size} bytes, sha256 {sha256_file(path)})"
    else:
        what, kept = "entry", ""
    row = _refusal(lake, day, path, f"{problem}; the {what}{kept} was deleted: its content cannot be told apart "
                                    "from text in an agent's own words, which is never kept")
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()
    return row


def _keep_fixed_fields(lake: LakePaths, day: dt.date, path: Path, names: list[str]) -> dict[str, Any]:
    allowed = set(RAW_AGENT_REPORTS.schema.names)
    extra = sorted(set(names) - allowed)
    target = lake.quarantine_dir / path.relative_to(lake.root)
    assert_day_writable(lake, day)
    write_parquet(lake, target, pq.read_table(path, columns=[c for c in names if c in allowed]))
    row = _refusal(lake, day, path, f"unexpected column(s) {', '.join(extra)[:300]}: reports carry the fixed fields "
                                    f"only, never text in an agent's words; their values were dropped, the fixed "
                                    f"fields kept in {rel(lake, target)}")
    path.unlink()
    return row


def refuse_report_files(lake: LakePaths, day: dt.date) -> tuple[list[Path], list[Path], list[dict[str, Any]]]:
    """The day's report batches the rules can read whole, the fixed fields kept of those with extra columns (in
    quarantine/), and a row for each entry that left the raw area, with its reason. Hidden entries (a write in
    flight) are left alone."""
    entries = lake.raw_entries("agent_reports", day)
    batches = set(lake.raw_files("agent_reports", day))
    allowed = set(RAW_AGENT_REPORTS.schema.names)
    usable: list[Path] = []
    kept: list[Path] = []
    refused: list[dict[str, Any]] = []
    rows_so_far = 0
    for path in entries:
        problem = "not a report batch (a <name>.parquet file in the day's folder)" if path not in batches else (
            _name_problem(path))
        rows = 0
        if problem is None:
            try:  # the footer alone, before any column is read: a small file may say it holds billions of rows
                rows = pq.ParquetFile(path).metadata.num_rows
            except Exception as exc:  # noqa: BLE001 - any reader failure is a classified refusal
                problem = unreadable_reason(exc, quoted=False)
        if problem is None and (rows > REPORTS_PARAMS["max_batch_rows"]
                                or rows_so_far + rows > REPORTS_PARAMS["max_day_rows"]):
            problem = (f"{rows:,} reports: past the limit of {REPORTS_PARAMS['max_batch_rows']:,} a batch and "
                       f"{REPORTS_PARAMS['max_day_rows']:,} a day, so the day's build stays within its memory")
        problem = problem or _batch_problem(path)
        if problem is not None:
            refused.append(_delete_unread(lake, day, path, problem))
        elif not set(names := pq.read_schema(path).names) <= allowed:
            refused.append(_keep_fixed_fields(lake, day, path, names))
            kept.append(lake.quarantine_dir / path.relative_to(lake.root))
        else:
            usable.append(path)
            rows_so_far += rows
    return usable, kept, refused
