"""report_road's intake: one agent report, the seed's fixed fields only, validated by the same rules as
every landed batch (sql/agent_report_validation.sql, curated.report_tables.validate_report_file) before it
lands as a batch of its own in raw/agent_reports/day=<today>/ (docs/agents.md "report_road").

A refused report is answered with its reason and never lands; the operational log records the refusal.
"""

from __future__ import annotations

import datetime as dt
import tempfile
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa

from ..curated.report_tables import validate_report_file
from ..lake.parquet_io import write_parquet
from ..lake.paths import LakePaths
from ..lake.schemas import RAW_AGENT_REPORTS, conform
from ..publishing.mapday import AmbiguousServerError, MapDay, UnknownServerError

FIXED_FIELDS = ("server", "tool", "ok", "fail", "ms", "matched_description", "result_tokens", "charged_usd",
                "surprise", "tools_hash")


class ReportRefused(ValueError):
    """The report breaks a rule every landed report is held to."""


def endpoint_named(mapday: MapDay, server: str) -> str:
    """The server_key of the endpoint `server` names on the served day, in any form another tool answers with
    (its URL, server_key, 12-hex server_id or registry name: publishing/mapday.py MapDay.resolve), so that a
    report lands by its key; else `server` as given, for the rules to judge against the last days' endpoints
    (a key or id seen then still lands; anything else is refused as an unknown server). A registry name that
    several endpoints share is refused: the report would not say which one it is about."""
    try:
        return str(mapday.resolve(server)["server_key"])
    except AmbiguousServerError as exc:
        raise ReportRefused(str(exc)) from exc
    except UnknownServerError:
        return server


def land_report(lake: LakePaths, fields: dict[str, Any], reporter_id: str, now: dt.datetime) -> Path:
    """Validate one report and land it as its own batch; returns the batch file. Raises ReportRefused."""
    unknown = sorted(set(fields) - set(FIXED_FIELDS))
    if unknown:
        raise ReportRefused(f"unexpected field(s) {', '.join(unknown)[:200]}: reports carry the fixed fields only")
    day = now.astimezone(dt.UTC).date()
    row = {name: fields.get(name) for name in FIXED_FIELDS}
    row.update(day=day, about_day=day, reporter_id=reporter_id, paid=False)
    table = conform(pa.Table.from_pylist([row], RAW_AGENT_REPORTS.schema), RAW_AGENT_REPORTS)
    batch = f"mcp-{now:%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:12]}.parquet"
    with tempfile.TemporaryDirectory(prefix="sevenmaps-report-") as tmp:
        # The rules read the day from the file's folder, as they do for every landed batch.
        staged = LakePaths.at(tmp)
        staged_file = write_parquet(staged, staged.raw_dir("agent_reports", day) / batch, table)
        (problem,) = validate_report_file(lake, staged_file, day)
    if problem is not None:
        raise ReportRefused(problem)
    return write_parquet(lake, lake.raw_dir("agent_reports", day) / batch, table)
