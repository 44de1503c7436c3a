"""A refusal written down before its file leaves the raw area (docs/methodology.md, agent reports: "A day built
again keeps the reasons").

A day's build moves a raw file it cannot read to `quarantine/` (or deletes an agent-report batch whose content
may be an agent's words) and then writes the table that says why. A build that died between the two lost the
reason: the next build no longer met the file, no table held its row, and the day was signed as if the file had
never landed. So each refusal is appended here first, flushed to disk, and only then does its file leave;
the next build of the day reads back the refusals its table does not hold (curated/common.py
`with_earlier_refusals`), in the journal's order, so a day built through a crash is the day built without one;
a journal written after its table makes the day stale (curated/day.py), so the next build happens before
signing. A journal that cannot be written stops the refusal with the file still in place.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import Any

from ..lake.paths import LakePaths

# The tables whose file refusals are journaled.
REFUSAL_TABLES = ("quarantine", "agent_report_quarantine")


def journal_file(lake: LakePaths, table: str, day: dt.date) -> Path:
    return lake.quarantine_dir / "refusals" / table / f"day={day.isoformat()}.jsonl"


def record_refusal(lake: LakePaths, table: str, row: dict[str, Any]) -> None:
    """Append the refusal row of `table` (its `day` a date) to the day's journal, on disk before returning."""
    path = journal_file(lake, table, row["day"])
    path.parent.mkdir(parents=True, exist_ok=True)
    # Begun on a line of its own: a line a crash tore mid-write never swallows the next (read as one bad line).
    line = "\n" + json.dumps({**row, "day": row["day"].isoformat()}, ensure_ascii=False, sort_keys=True) + "\n"
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(line)
        fh.flush()
        os.fsync(fh.fileno())


def recorded_refusals(lake: LakePaths, table: str, day: dt.date) -> list[dict[str, Any]]:
    """The day's journaled refusal rows of `table`, in the order written, each source file once; a line a
    crash tore mid-write is left out (its file had not left yet: the write comes first)."""
    path = journal_file(lake, table, day)
    rows: dict[str, dict[str, Any]] = {}
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            row["day"] = dt.date.fromisoformat(row["day"])
        except (ValueError, TypeError, KeyError):
            continue
        if isinstance(row.get("source_file"), str):
            rows.setdefault(row["source_file"], row)
    return list(rows.values())
