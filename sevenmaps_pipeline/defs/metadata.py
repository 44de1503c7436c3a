"""What an operator reads on an asset in the Dagster UI: per day, the counts per code and shown status (and
their equivalents for the other tables) as numbers the Overview tab's Plots view charts per partition, a Markdown
preview, and the column schema from the schema module (docs/operations.md, "Reading a run")."""

from __future__ import annotations

from typing import Any

import dagster as dg

from ..curated.profile import DayProfile
from ..lake.schemas import BY_NAME

# Types as DuckDB names them, the way analysts see them in the warehouse.
_TYPES = {"string": "VARCHAR", "large_string": "VARCHAR", "int64": "BIGINT", "int32": "INTEGER", "int16": "SMALLINT",
          "double": "DOUBLE", "float": "FLOAT", "bool": "BOOLEAN", "date32[day]": "DATE"}


def column_schema(table: str) -> dg.TableSchema:
    spec = BY_NAME[table]
    columns = []
    for f in spec.schema:
        kind = str(f.type)
        kind = _TYPES.get(kind, "TIMESTAMP WITH TIME ZONE" if kind.startswith("timestamp") else kind.upper())
        columns.append(dg.TableColumn(f.name, kind, description=spec.doc(f.name) or None,
                                      constraints=dg.TableColumnConstraints(nullable=f.nullable)))
    return dg.TableSchema(columns=columns)


def table_metadata(table: str) -> dict[str, Any]:
    """Definition metadata: the column schema (shown before anything is materialised)."""
    return {"dagster/column_schema": column_schema(table)} if table in BY_NAME else {}


def day_metadata(profile: DayProfile) -> dict[str, Any]:
    """One day's numbers: rows, a count per value of the counted columns (key `<column> <value>`), the
    share of d days for daily_status, totals, and the preview."""
    metadata: dict[str, Any] = {"dagster/row_count": dg.MetadataValue.int(profile.rows)}
    for column, values in profile.counts.items():
        for value, n in values.items():
            metadata[f"{column} {value}"] = dg.MetadataValue.int(n)
    if profile.table == "daily_status":
        for code in "oapdn":
            metadata[f"code {code}"] = dg.MetadataValue.int(profile.counts.get("code", {}).get(code, 0))
        metadata["share d %"] = dg.MetadataValue.float(profile.share("code", "d"))
        metadata["share n %"] = dg.MetadataValue.float(profile.share("code", "n"))
    for column, total in profile.totals.items():
        metadata[f"total {column}"] = dg.MetadataValue.int(total)
    if profile.preview:
        heading = f"**{profile.table}, {profile.day}** (first rows)"
        metadata["preview"] = dg.MetadataValue.md(f"{heading}\n\n{profile.preview}")
    return metadata


def range_summary(profiles: list[DayProfile]) -> str:
    """A Markdown table of every day of a range run, one row per day."""
    columns = sorted({f"{c} {v}" for p in profiles for c, vals in p.counts.items() for v in vals})[:12]
    lines = ["| day | rows | " + " | ".join(columns) + " |", "|---|---|" + "---|" * len(columns)]
    for p in profiles:
        cells = [str(p.counts.get(c.split(" ", 1)[0], {}).get(c.split(" ", 1)[1], 0)) for c in columns]
        lines.append(f"| {p.day} | {p.rows} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
