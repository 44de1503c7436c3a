"""A day's table at a glance: its rows, counts per value of the columns an operator reads first, and a few
rows as a Markdown table (docs/operations.md, "Reading a run"). Plain library code; the Dagster layer
turns it into materialisation metadata, the CLI and tests read it as is.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

from ..lake import duck
from ..lake.paths import LakePaths
from ..rules.rounding import round_half_away

# The columns counted per value, per table (each value's count becomes one number Dagster can plot).
BREAKDOWNS: dict[str, tuple[str, ...]] = {
    "daily_status": ("code", "shown_status"),
    "server_history": ("uptime_label",),
    "tool_facts": ("risk",),
    "tools": ("risk",),
    "token_cost": (),
    "findings": ("finding",),
    "server_categories": ("category",),
    "tool_changes": ("kind",),
    "agent_reports": ("agreement",),
    "rating_aggregates": ("rating_label",),
    "incidents": ("status",),
    "reliable_rankings": ("category",),
    "probes": ("outcome",),
}
# Columns whose day total is worth a number of its own.
TOTALS: dict[str, tuple[str, ...]] = {"token_cost": ("definition_tokens",), "tools": ("description_tokens",)}
# The columns shown in the preview (the first ones that say what a row is).
PREVIEW: dict[str, tuple[str, ...]] = {
    "daily_status": ("server_name", "url", "code", "shown_status", "tool_count", "handshake_ms"),
    "server_history": ("server_name", "history", "uptime_pct", "uptime_label", "success_chance"),
    "tool_facts": ("name", "risk", "risk_rule", "description_tokens"),
    "tools": ("server_key", "name", "risk", "risk_rule"),
    "token_cost": ("server_key", "tool_count", "definition_tokens", "definition_tokens_percentile"),
    "findings": ("server_key", "finding", "tool_name", "detail"),
    "server_categories": ("server_key", "category", "placed_by", "score"),
    "tool_changes": ("server_key", "kind", "tool_name", "detail"),
    "agent_reports": ("server_key", "tool", "ok", "fail", "our_code", "agreement"),
    "rating_aggregates": ("server_key", "scope", "reports", "rating_label"),
    "incidents": ("server_key", "status", "opened_day", "confirmed_by"),
    "reliable_rankings": ("category", "rank", "server_name", "uptime_pct"),
    "probes": ("server_name", "url", "outcome", "handshake_ms", "tool_count"),
}
MAX_VALUES = 24  # per column: the most frequent values, the rest summed under "(other)"


@dataclass
class DayProfile:
    table: str
    day: dt.date
    rows: int
    counts: dict[str, dict[str, int]] = field(default_factory=dict)  # column -> value -> rows
    totals: dict[str, int] = field(default_factory=dict)
    preview: str = ""  # Markdown

    def share(self, column: str, value: str) -> float:
        """Percent of the day's rows with this value, two decimals rounded as `map_days.share_d_pct` rounds them
        (half away from zero: rules/rounding.py), which docs/analyst.md says Dagster plots (0 for an empty day)."""
        return (round_half_away(100.0 * self.counts.get(column, {}).get(value, 0) / self.rows, 2) if self.rows
                else 0.0)


def _markdown(columns: list[str], rows: list[tuple]) -> str:
    def cell(v) -> str:
        text = "" if v is None else str(v)
        text = text.replace("|", "\\|").replace("\n", " ")
        return text if len(text) <= 60 else text[:57] + "..."

    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def profile_files(table: str, day: dt.date, files: list[Path], preview_rows: int = 5) -> DayProfile:
    """Profile the day's files of one table (set-based: one grouped query per counted column)."""
    if not files:
        return DayProfile(table, day, 0)
    with duck.session() as con:
        listed = ", ".join("'" + str(f).replace("'", "''") + "'" for f in files)  # a view takes no parameters
        con.execute(f"CREATE TEMP VIEW t AS SELECT * FROM read_parquet([{listed}], union_by_name = true)")
        rows = duck.one(con, "SELECT count(*) FROM t")[0]
        present = {r[0] for r in con.execute("DESCRIBE t").fetchall()}
        counts: dict[str, dict[str, int]] = {}
        for column in BREAKDOWNS.get(table, ()):
            if column not in present:
                continue
            found = con.execute(f'SELECT coalesce("{column}"::VARCHAR, \'(null)\') AS v, count(*) AS n FROM t '
                                "GROUP BY ALL ORDER BY n DESC, v").fetchall()
            kept = dict(found[:MAX_VALUES])
            if len(found) > MAX_VALUES:
                kept["(other)"] = sum(n for _, n in found[MAX_VALUES:])
            counts[column] = kept
        totals = {c: int(duck.one(con, f'SELECT coalesce(sum("{c}"), 0) FROM t')[0])
                  for c in TOTALS.get(table, ()) if c in present}
        shown = [c for c in PREVIEW.get(table, ()) if c in present] or sorted(present)[:6]
        sample = con.execute("SELECT " + ", ".join(f'"{c}"' for c in shown) + f" FROM t LIMIT {int(preview_rows)}"
                             ).fetchall()
    return DayProfile(table, day, rows, counts, totals, _markdown(shown, sample))


def profile_day(lake: LakePaths, table: str, day: dt.date, preview_rows: int = 5) -> DayProfile:
    """A curated table's day, or (table 'probes') the day's landed raw checks."""
    if table == "probes":
        return profile_files(table, day, lake.raw_files("probes", day), preview_rows)
    path = lake.curated_file(table, day)
    return profile_files(table, day, [path] if path.is_file() else [], preview_rows)
