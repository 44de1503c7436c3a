"""Arrow schemas of every lake table: the one contract for raw inputs and curated outputs.

Each column carries its documentation in the field metadata; the README's data dictionary is generated
from here (`sevenmaps data-dictionary`) and a test keeps the two in step.

Split by what the tables are about (spec, scan, day_map, reports, readiness, lookups); every name is
importable from `lake.schemas` itself.
"""

from __future__ import annotations

import pyarrow as pa

from .day_map import (
    DAILY_STATUS,
    FINDINGS,
    INTERNAL_FINDINGS,
    SERVER_CATEGORIES,
    SERVER_HISTORY,
    TOKEN_COST,
    TOOL_CHANGES,
    TOOL_FACTS,
    TOOL_LISTS,
    TOOLS,
)
from .lookups import DOMAIN_AGES, FAILURE_REASONS, PACKAGE_ADVISORIES, RAW_DOMAINS, RAW_PACKAGES
from .readiness import (
    RAW_READINESS,
    RAW_READINESS_SURFACES,
    RAW_SKILLS,
    READINESS_DISCOVERY,
    READINESS_LINES,
    READINESS_SCORES,
)
from .reports import (
    AGENT_REPORT_QUARANTINE,
    AGENT_REPORTS,
    FAIL_REASONS,
    INCIDENTS,
    RATING_AGGREGATES,
    RAW_AGENT_REPORTS,
    RELIABLE_RANKINGS,
    SURPRISES,
)
from .scan import (
    FIVE_MINUTE_DAYS,
    HOURLY_DAYS,
    QUARANTINE,
    RAW_FIVE_MINUTE,
    RAW_HOURLY,
    RAW_ORIGINS,
    RAW_PROBES,
    RAW_REGISTRY,
    RAW_SUBMITTED,
)
from .spec import UTC_TS, TableSpec, col, conform
from .views import DERIVED_VIEWS, derived_views_markdown

__all__ = [
    "AGENT_REPORTS", "AGENT_REPORT_QUARANTINE", "DAILY_STATUS", "DERIVED_VIEWS", "DOMAIN_AGES", "FAILURE_REASONS",
    "FAIL_REASONS", "FINDINGS", "FIVE_MINUTE_DAYS", "HOURLY_DAYS", "INCIDENTS", "INTERNAL_FINDINGS",
    "PACKAGE_ADVISORIES", "QUARANTINE", "RATING_AGGREGATES", "RAW_AGENT_REPORTS", "RAW_DOMAINS",
    "RAW_FIVE_MINUTE", "RAW_HOURLY", "RAW_ORIGINS", "RAW_PACKAGES", "RAW_PROBES", "RAW_READINESS",
    "RAW_READINESS_SURFACES", "RAW_REGISTRY", "RAW_SKILLS", "RAW_SUBMITTED", "READINESS_DISCOVERY",
    "READINESS_LINES", "READINESS_SCORES", "RELIABLE_RANKINGS", "SERVER_CATEGORIES", "SERVER_HISTORY",
    "SURPRISES", "TOKEN_COST", "TOOLS", "TOOL_CHANGES", "TOOL_FACTS", "TOOL_LISTS", "TableSpec", "UTC_TS",
    "col", "conform",
]

RAW_TABLES = (RAW_PROBES, RAW_ORIGINS, RAW_REGISTRY, RAW_AGENT_REPORTS, RAW_READINESS, RAW_READINESS_SURFACES,
              RAW_SKILLS, RAW_HOURLY, RAW_FIVE_MINUTE, RAW_SUBMITTED, RAW_PACKAGES, RAW_DOMAINS)
CURATED_TABLES = (QUARANTINE, DAILY_STATUS, SERVER_HISTORY, TOOL_LISTS, TOOL_FACTS, TOOLS, TOKEN_COST, FINDINGS,
                  INTERNAL_FINDINGS, SERVER_CATEGORIES, TOOL_CHANGES, AGENT_REPORTS, AGENT_REPORT_QUARANTINE,
                  RATING_AGGREGATES, INCIDENTS, RELIABLE_RANKINGS, READINESS_DISCOVERY, READINESS_LINES,
                  READINESS_SCORES, PACKAGE_ADVISORIES, DOMAIN_AGES, FAILURE_REASONS)
AGGREGATE_TABLES = (HOURLY_DAYS, FIVE_MINUTE_DAYS)
ALL_TABLES = RAW_TABLES + CURATED_TABLES + AGGREGATE_TABLES
BY_NAME = {t.name: t for t in ALL_TABLES}

# Signed tables that are never exported nor shown in warehouse.duckdb (they are in internal.duckdb, for
# reviewers), with the reason WITHHELD.txt gives (docs/verifying.md "Snapshots").
WITHHELD_TABLES = {
    "internal_findings": "internal-only findings: pattern checks on tool descriptions kept for a person to review, "
                         "never published (methodology: findings are published except the internal-only checks)",
    "quarantine": "quarantine: raw rows and files that failed validation, kept as sent for operators",
    "agent_report_quarantine": "quarantine: agent reports that failed validation, kept for operators",
}
PUBLIC_TABLES = tuple(t for t in ALL_TABLES if t.name not in WITHHELD_TABLES)
INTERNAL_TABLES = tuple(t for t in ALL_TABLES if t.name in WITHHELD_TABLES)


_TABLE_OF_FOLDER: dict[str, TableSpec] = {}
for _spec in ALL_TABLES:
    _TABLE_OF_FOLDER.setdefault(_spec.location.split("/day=", 1)[0], _spec)


def table_of(rel_path: str) -> TableSpec | None:
    """The table a lake file (path relative to the lake root) belongs to (a lookup: a snapshot's description may
    name millions of paths)."""
    return _TABLE_OF_FOLDER.get(rel_path.split("/day=", 1)[0])


def resource_name(rel_path: str) -> str:
    """A snapshot's Data Package name of a lake file (path relative to the lake root): the one name its path gives
    (publishing/descriptors.py writes it, integrity/export_descriptions.py holds a description to it)."""
    spec_part, _, rest = rel_path.partition("/day=")
    day, _, file = rest.partition("/")
    stem = file.rsplit(".", 1)[0]
    raw = f"{spec_part.split('/', 1)[-1]}.{day}.{stem}".lower()
    return "".join(c if c.isalnum() or c in "._-" else "-" for c in raw)


# (Parquet type test, Table Schema type, Croissant dataType): the one type table a snapshot's two descriptions are
# written by (publishing/descriptors.py) and held to (integrity/export_descriptions.py: a Croissant field typed
# otherwise than its column is read converted, 250 as True: helper-101 F3).
DESCRIPTION_TYPES = ((pa.types.is_boolean, "boolean", "sc:Boolean"), (pa.types.is_integer, "integer", "sc:Integer"),
                     (pa.types.is_floating, "number", "sc:Float"), (pa.types.is_date, "date", "sc:Date"),
                     (pa.types.is_timestamp, "datetime", "sc:DateTime"), (pa.types.is_string, "string", "sc:Text"),
                     (pa.types.is_large_string, "string", "sc:Text"), (pa.types.is_struct, "object", "sc:Text"))


def croissant_type(t: pa.DataType) -> str:
    """The Croissant dataType of a Parquet column (of a list's item: a list is `isArray`)."""
    return next((croissant for test, _, croissant in DESCRIPTION_TYPES if test(t)), "sc:Text")


def withheld_reason(rel_path: str) -> str | None:
    """Why a snapshot leaves a signed file out (publishing/export.py writes it so, integrity/export_check.py checks
    it): its table is internal (WITHHELD_TABLES) or no documented table; None: a snapshot holds it."""
    spec = table_of(rel_path)
    return "not a documented table" if spec is None else WITHHELD_TABLES.get(spec.name)


DAILY_ROOTS_DOC = {
    "day": "the signed UTC day",
    "previous_day": "the day whose root this one chains to (null for the first)",
    "previous_root": "that day's root ('' for the first)",
    "root": "sha256 hex of previous_root + '\\n' + the day's lines joined by '\\n'",
    "signature": "base64 Ed25519 signature over the 32 bytes of root",
    "lines": "'<sha256>  <path>' for every covered file of the day, sorted by path",
    "signed_at": "when it was signed (UTC)",
    "method": "version of the root format",
}


def data_dictionary_markdown() -> str:
    out: list[str] = []
    for spec in ALL_TABLES:
        out.append(f"### `{spec.view}` — {spec.layer} `{spec.location}`\n")
        out.append(f"Grain: {spec.grain}.\n")
        out.append("| column | type | meaning |\n|---|---|---|")
        for field in spec.schema:
            meaning = spec.doc(field.name).replace("|", "\\|")  # a pipe in a table cell must be escaped
            out.append(f"| `{field.name}` | `{field.type}` | {meaning} |")
        out.append("")
    out.append("### `daily_roots` — `roots/day=YYYY-MM-DD.json`\n")
    out.append("Grain: one row per signed day.\n")
    out.append("| column | meaning |\n|---|---|")
    for name, doc in DAILY_ROOTS_DOC.items():
        out.append(f"| `{name}` | {doc} |")
    return "\n".join(out) + "\n\n" + derived_views_markdown()
