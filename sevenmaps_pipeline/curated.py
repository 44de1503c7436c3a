"""Builds each curated table for one UTC day: bind the inputs, run `sql/<table>.sql`, write one file.

Plain library code (no Dagster): the assets in `defs/` call these, and so do tests and benchmarks.
"""

from __future__ import annotations

import datetime as dt
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .lake import duck
from .lake.parquet_io import assert_day_writable, write_parquet
from .lake.paths import LakePaths
from .lake.schemas import (
    AGENT_REPORT_QUARANTINE,
    AGENT_REPORTS,
    DAILY_STATUS,
    FAIL_REASONS,
    FINDINGS,
    INCIDENTS,
    INTERNAL_FINDINGS,
    QUARANTINE,
    RATING_AGGREGATES,
    RAW_AGENT_REPORTS,
    RAW_PROBES,
    RAW_REGISTRY,
    RELIABLE_RANKINGS,
    REPORT_SOURCES,
    SERVER_CATEGORIES,
    SERVER_HISTORY,
    SURPRISES,
    TOKEN_COST,
    TOOL_CHANGES,
    TOOL_FACTS,
    TOOL_LISTS,
    TOOLS,
    conform,
)
from .registry.psl import site_of_url
from .rules.methods import (
    CATEGORY_PARAMS,
    CHANGES_METHOD,
    CHANGES_PARAMS,
    FINDINGS_METHOD,
    FINDINGS_PARAMS,
    HISTORY_METHOD,
    HISTORY_PARAMS,
    INCIDENTS_METHOD,
    INCIDENTS_PARAMS,
    RANKINGS_METHOD,
    RANKINGS_PARAMS,
    RATINGS_METHOD,
    RATINGS_PARAMS,
    REPORTS_METHOD,
    REPORTS_PARAMS,
    STATUS_METHOD,
    STATUS_PARAMS,
    TOOL_LIST_CHANGE_KINDS,
)
from .rules.tokens import TOKENIZER_METHOD
from .rules.tool_facts import facts_method, facts_of_lists


@dataclass
class BuildResult:
    table: str
    day: dt.date
    path: Path
    rows: int
    seconds: float
    stats: dict[str, Any] = field(default_factory=dict)


def _days_back(day: dt.date, n: int) -> list[dt.date]:
    return [day - dt.timedelta(days=i) for i in range(n, -1, -1)]


def _rel(lake: LakePaths, path: Path) -> str:
    return path.relative_to(lake.root).as_posix()


def _unreadable(path: Path, spec_schema: pa.Schema) -> str | None:
    """Why a landed raw file cannot be used, or None. Decodes every page (corrupt pages show only then),
    a batch at a time so memory stays flat."""
    try:
        with pq.ParquetFile(path) as parquet:
            names = parquet.schema_arrow.names
            for _ in parquet.iter_batches(batch_size=16_384):
                pass
    except Exception as exc:  # noqa: BLE001 - any reader failure is a classified refusal
        return f"unreadable Parquet: {type(exc).__name__}: {str(exc)[:300]}"
    missing = [f.name for f in spec_schema if not f.nullable and f.name not in names]
    if missing:
        return f"missing required columns: {', '.join(missing)}"
    return None


def quarantine_unreadable_files(lake: LakePaths, day: dt.date) -> list[dict[str, Any]]:
    """Move raw files of `day` that cannot be read out of the lake's raw area, and describe each one."""
    refused: list[dict[str, Any]] = []
    for source, spec in (("probes", RAW_PROBES), ("registry", RAW_REGISTRY)):
        for path in lake.raw_files(source, day):
            problem = _unreadable(path, spec.schema)
            if problem is None:
                continue
            assert_day_writable(lake, day)
            target = lake.quarantine_dir / path.relative_to(lake.root)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(path), target)
            refused.append({"day": day, "source": source, "source_file": _rel(lake, path), "row_number": None,
                            "server_key": None, "problem": f"{problem} (moved to {_rel(lake, target)})",
                            "row_json": None})
    return refused


def registry_in_force(lake: LakePaths, day: dt.date) -> Path | None:
    for d in reversed(_days_back(day, STATUS_PARAMS["lookback_days"])):
        path = lake.registry_file(d)
        if path.is_file():
            return path
    return None


def _probe_files(lake: LakePaths, days: list[dt.date]) -> list[Path]:
    return [f for d in days for f in lake.raw_files("probes", d)]


def build_quarantine(lake: LakePaths, day: dt.date) -> BuildResult:
    """Validate what landed for `day`: refuse unreadable files and invalid rows, with reasons."""
    started = time.perf_counter()
    refused_files = quarantine_unreadable_files(lake, day)
    with duck.session() as con:
        duck.bind_input(con, "raw_probes", lake.raw_files("probes", day), RAW_PROBES.schema)
        con.execute("CREATE TEMP VIEW probe_validation AS " + duck.load_sql("probe_validation"))
        rows = con.sql(duck.load_sql("quarantine"),
                           params={"day": day, "lake_prefix": str(lake.root) + "/"}).to_arrow_table()
        landed = con.execute("SELECT count(*) FROM raw_probes").fetchone()[0]
    table = pa.concat_tables([conform(pa.Table.from_pylist(refused_files, QUARANTINE.schema), QUARANTINE),
                              conform(rows, QUARANTINE)])
    path = write_parquet(lake, lake.curated_file("quarantine", day), table)
    return BuildResult("quarantine", day, path, table.num_rows, time.perf_counter() - started,
                       {"landed_probe_rows": landed, "refused_files": len(refused_files),
                        "refused_rows": rows.num_rows})


def build_daily_status(lake: LakePaths, day: dt.date) -> BuildResult:
    started = time.perf_counter()
    days = _days_back(day, STATUS_PARAMS["lookback_days"])
    registry = registry_in_force(lake, day)
    with duck.session() as con:
        duck.bind_input(con, "raw_probes", _probe_files(lake, days), RAW_PROBES.schema)
        duck.bind_input(con, "registry", [registry] if registry else [], RAW_REGISTRY.schema)
        con.execute("CREATE TEMP VIEW probe_validation AS " + duck.load_sql("probe_validation"))
        params = {
            "day": day,
            "method_version": STATUS_METHOD,
            "mass_min_checks": STATUS_PARAMS["mass_failure_min_checks"],
            "mass_min_origins": STATUS_PARAMS["mass_failure_min_origins"],
            "mass_share": STATUS_PARAMS["mass_failure_share"],
        }
        result = conform(con.sql(duck.load_sql("daily_status"), params=params).to_arrow_table(), DAILY_STATUS)
    path = write_parquet(lake, lake.curated_file("daily_status", day), result)
    codes = result.column("code").value_counts().to_pylist()
    return BuildResult("daily_status", day, path, result.num_rows, time.perf_counter() - started,
                       {"codes": {c["values"]: c["counts"] for c in codes},
                        "registry_snapshot": _rel(lake, registry) if registry else None})


def build_server_history(lake: LakePaths, day: dt.date) -> BuildResult:
    started = time.perf_counter()
    window = HISTORY_PARAMS["window_days"]
    files = [lake.curated_file("daily_status", d) for d in _days_back(day, window - 1)]
    today = lake.curated_file("daily_status", day)
    if not today.is_file():
        raise FileNotFoundError(f"daily_status for {day} is missing ({today}); materialise it first")
    kept = CHANGES_PARAMS["lookback_days"]
    change_files = [f for d in _days_back(day, kept - 1) if (f := lake.curated_file("tool_changes", d)).is_file()]
    with duck.session() as con:
        duck.bind_input(con, "daily_status", [f for f in files if f.is_file()], DAILY_STATUS.schema)
        duck.bind_input(con, "tool_changes", change_files, TOOL_CHANGES.schema)
        recorded = [d for d in _days_back(day, window - 1) if lake.curated_file("tool_changes", d).is_file()]
        con.register("change_record_days", pa.table({"day": pa.array(recorded, pa.date32())}))
        params = {
            "day": day,
            "method_version": HISTORY_METHOD,
            "window_days": window,
            "label_min": HISTORY_PARAMS["label_min_checked_days"],
            "half_life": HISTORY_PARAMS["half_life_days"],
            "prior_alpha": HISTORY_PARAMS["prior_alpha"],
            "prior_beta": HISTORY_PARAMS["prior_beta"],
            "q_low": HISTORY_PARAMS["interval_low"],
            "q_high": HISTORY_PARAMS["interval_high"],
            "change_days_kept": kept,
            "list_change_kinds": list(TOOL_LIST_CHANGE_KINDS),
        }
        result = conform(duck.run_sql(con, "server_history", params), SERVER_HISTORY)
    path = write_parquet(lake, lake.curated_file("server_history", day), result)
    return BuildResult("server_history", day, path, result.num_rows, time.perf_counter() - started,
                       {"window_files": sum(f.is_file() for f in files),
                        "window_days_without_change_records": window - len(recorded)})


def _partitions_through(lake: LakePaths, table: str, day: dt.date, *, before: bool = False) -> list[Path]:
    """Every existing partition file of `table` up to `day` (or strictly before it)."""
    folder = lake.root / "curated" / table
    if not folder.is_dir():
        return []
    files = []
    for child in sorted(folder.iterdir()):
        if child.name.startswith("day=") and (child / "part-0.parquet").is_file():
            d = dt.date.fromisoformat(child.name[4:])
            if d < day or (d == day and not before):
                files.append(child / "part-0.parquet")
    return files


def _status_files(lake: LakePaths, day: dt.date, days_before: int) -> list[Path]:
    """The daily_status partitions that exist for `day` and the `days_before` days before it."""
    return [f for d in _days_back(day, days_before) if (f := lake.curated_file("daily_status", d)).is_file()]


def _require_status(lake: LakePaths, day: dt.date) -> None:
    status = lake.curated_file("daily_status", day)
    if not status.is_file():
        raise FileNotFoundError(f"daily_status for {day} is missing ({status}); materialise it first")


# The lists whose facts `day` needs under the current method: today's, and each endpoint's previous list
# when it differs (tool_changes compares both under the same, current method).
_WANTED_LISTS = """
WITH today AS (
    SELECT server_key, tools_hash FROM daily_status WHERE day = $day AND tools_hash IS NOT NULL
),
baseline AS (
    SELECT s.server_key, s.day, s.tools_hash
    FROM daily_status AS s SEMI JOIN today USING (server_key)
    WHERE s.day < $day AND s.tools_hash IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY s.server_key ORDER BY s.day DESC) = 1
),
needed AS (
    SELECT tools_hash, $day AS day FROM today
    UNION ALL
    SELECT b.tools_hash, b.day FROM baseline AS b JOIN today AS t USING (server_key)
    WHERE b.tools_hash <> t.tools_hash
)
SELECT tools_hash, max(day) AS day FROM needed
WHERE tools_hash NOT IN (SELECT tools_hash FROM tool_lists WHERE method_version = $method)
GROUP BY tools_hash
"""


def build_tool_facts(lake: LakePaths, day: dt.date) -> BuildResult:
    """Facts for every tool list the day needs (its own, and the previous lists of endpoints whose list
    changed) that no earlier day computed under the current method."""
    started = time.perf_counter()
    method = facts_method()
    _require_status(lake, day)
    with duck.session() as con:
        duck.bind_input(con, "daily_status", _status_files(lake, day, CHANGES_PARAMS["lookback_days"]),
                        DAILY_STATUS.schema)
        duck.bind_input(con, "tool_lists", _partitions_through(lake, "tool_lists", day, before=True),
                        TOOL_LISTS.schema)
        con.execute("CREATE TEMP TABLE wanted AS " + _WANTED_LISTS, {"day": day, "method": method})
        source_days = [d for (d,) in con.execute("SELECT DISTINCT day FROM wanted ORDER BY day").fetchall()]
        duck.bind_input(con, "raw_probes", _probe_files(lake, source_days), RAW_PROBES.schema)
        new = con.execute(
            "SELECT w.tools_hash, any_value(p.tools_json) FROM wanted AS w "
            "LEFT JOIN raw_probes AS p ON p.tools_hash = w.tools_hash AND p.day = w.day AND p.tools_json IS NOT NULL "
            "GROUP BY w.tools_hash ORDER BY w.tools_hash").fetchall()
    missing = [h for h, tools_json in new if tools_json is None]
    if missing:
        raise FileNotFoundError(f"{day}: the raw probes behind {len(missing)} tool list(s) are gone (e.g. "
                                f"{missing[0]}); their facts cannot be computed under {method}")
    lists, tools = [], []
    for facts in facts_of_lists(new):
        tools_hash = facts.tools_hash
        lists.append({"day": day, "tools_hash": tools_hash, "tool_count": len(facts.tool_rows),
                      "definition_tokens": facts.definition_tokens, "method_version": method})
        tools += [{"day": day, **row} for row in facts.tool_rows]
    write_parquet(lake, lake.curated_file("tool_lists", day),
                  conform(pa.Table.from_pylist(lists, TOOL_LISTS.schema), TOOL_LISTS))
    table = conform(pa.Table.from_pylist(tools, TOOL_FACTS.schema), TOOL_FACTS)
    path = write_parquet(lake, lake.curated_file("tool_facts", day), table)
    return BuildResult("tool_facts", day, path, table.num_rows, time.perf_counter() - started,
                       {"new_lists": len(lists), "method": method})


def _build_from_lists(lake: LakePaths, day: dt.date, spec, facts_table: str, facts_schema) -> BuildResult:
    started = time.perf_counter()
    with duck.session() as con:
        duck.bind_input(con, "daily_status", [lake.curated_file("daily_status", day)], DAILY_STATUS.schema)
        duck.bind_input(con, facts_table, _partitions_through(lake, facts_table, day), facts_schema)
        result = conform(duck.run_sql(con, spec.name, {
            "day": day, "method_version": facts_method(), "tokenizer": TOKENIZER_METHOD}), spec)
    path = write_parquet(lake, lake.curated_file(spec.name, day), result)
    return BuildResult(spec.name, day, path, result.num_rows, time.perf_counter() - started)


def build_tools(lake: LakePaths, day: dt.date) -> BuildResult:
    return _build_from_lists(lake, day, TOOLS, "tool_facts", TOOL_FACTS.schema)


def build_token_cost(lake: LakePaths, day: dt.date) -> BuildResult:
    return _build_from_lists(lake, day, TOKEN_COST, "tool_lists", TOOL_LISTS.schema)


INJECTION_PHRASES = Path(__file__).resolve().parents[1] / "assets" / "injection_phrases.json"


def build_findings(lake: LakePaths, day: dt.date) -> BuildResult:
    """Published findings (sql/findings.sql) and, apart, the internal-only pattern checks."""
    import json

    started = time.perf_counter()
    phrases = json.loads(INJECTION_PHRASES.read_text())
    with duck.session() as con:
        duck.bind_input(con, "daily_status", [lake.curated_file("daily_status", day)], DAILY_STATUS.schema)
        duck.bind_input(con, "tools", [lake.curated_file("tools", day)], TOOLS.schema)
        findings = conform(duck.run_sql(con, "findings", {
            "day": day, "method_version": FINDINGS_METHOD,
            "token_heavy": FINDINGS_PARAMS["token_heavy_tokens"],
            "huge_description": FINDINGS_PARAMS["huge_description_tokens"],
            "old_protocol_before": FINDINGS_PARAMS["old_protocol_before"], "slow_ms": FINDINGS_PARAMS["slow_ms"],
        }), FINDINGS)
        con.register("phrases", pa.table({"phrase": [p.lower() for p in phrases["phrases"]]}))
        internal = conform(duck.run_sql(con, "internal_findings", {"day": day, "method_version": phrases["method"]}),
                           INTERNAL_FINDINGS)
    write_parquet(lake, lake.curated_file("internal_findings", day), internal)
    path = write_parquet(lake, lake.curated_file("findings", day), findings)
    counts = findings.column("finding").value_counts().to_pylist()
    return BuildResult("findings", day, path, findings.num_rows, time.perf_counter() - started,
                       {"findings": {c["values"]: c["counts"] for c in counts}, "internal": internal.num_rows})


CATEGORIES = Path(__file__).resolve().parents[1] / "assets" / "categories.json"


def build_server_categories(lake: LakePaths, day: dt.date) -> BuildResult:
    import json

    started = time.perf_counter()
    doc = json.loads(CATEGORIES.read_text())
    name_topics = set(doc["tool_name_topics"])
    words = [(topic, w, topic in name_topics) for topic, ws in doc["topics"].items() for w in ws]
    with duck.session() as con:
        duck.bind_input(con, "tools", [lake.curated_file("tools", day)], TOOLS.schema)
        con.register("topic_words", pa.table({"topic": [w[0] for w in words], "word": [w[1] for w in words],
                                              "tool_name_topic": [w[2] for w in words]}))
        con.register("generic_words", pa.table({"word": doc["generic_words"]}))
        p = CATEGORY_PARAMS
        table = conform(duck.run_sql(con, "server_categories", {
            "day": day, "method_version": doc["method"], "shared_min": p["shared_toolset_min_endpoints"],
            "min_names": p["tool_name_min_names"], "dominance": p["tool_name_dominance"],
            "min_share": p["tool_name_min_share"], "words_min": p["words_min_score"]}), SERVER_CATEGORIES)
    path = write_parquet(lake, lake.curated_file("server_categories", day), table)
    counts = table.column("placed_by").value_counts().to_pylist()
    return BuildResult("server_categories", day, path, table.num_rows, time.perf_counter() - started,
                       {"placed_by": {c["values"]: c["counts"] for c in counts}})


def changes_method() -> str:
    return f"{CHANGES_METHOD}+{facts_method()}"


def build_tool_changes(lake: LakePaths, day: dt.date) -> BuildResult:
    """What each endpoint changed since its previous checked day (sql/tool_changes.sql)."""
    import duckdb

    started = time.perf_counter()
    _require_status(lake, day)
    with duck.session() as con:
        con.create_function("site_of", site_of_url, [duckdb.sqltype("VARCHAR")], duckdb.sqltype("VARCHAR"),
                            null_handling="special", side_effects=False)
        duck.bind_input(con, "daily_status", _status_files(lake, day, CHANGES_PARAMS["lookback_days"]),
                        DAILY_STATUS.schema)
        duck.bind_input(con, "tool_facts", _partitions_through(lake, "tool_facts", day), TOOL_FACTS.schema)
        duck.bind_input(con, "tool_lists", _partitions_through(lake, "tool_lists", day), TOOL_LISTS.schema)
        unclassified = con.execute(_WANTED_LISTS, {"day": day, "method": facts_method()}).fetchall()
        if unclassified:
            raise FileNotFoundError(f"{day}: {len(unclassified)} tool list(s) have no facts under {facts_method()} "
                                    f"(e.g. {unclassified[0][0]}); materialise tool_facts for {day} first")
        table = conform(duck.run_sql(con, "tool_changes", {
            "day": day, "lookback_days": CHANGES_PARAMS["lookback_days"], "facts_method": facts_method(),
            "method_version": changes_method()}), TOOL_CHANGES)
    path = write_parquet(lake, lake.curated_file("tool_changes", day), table)
    counts = table.column("kind").value_counts().to_pylist()
    return BuildResult("tool_changes", day, path, table.num_rows, time.perf_counter() - started,
                       {"kinds": {c["values"]: c["counts"] for c in counts}})


def _refuse_report_files(lake: LakePaths, day: dt.date) -> tuple[list[Path], list[dict[str, Any]]]:
    """The day's report batches that can be read and carry only the fixed fields; the others are moved out
    of the raw area (so no view ever shows their extra columns) and described."""
    allowed = set(RAW_AGENT_REPORTS.schema.names)
    usable, refused = [], []
    for path in lake.raw_files("agent_reports", day):
        problem = _unreadable(path, RAW_AGENT_REPORTS.schema)
        if problem is None:
            extra = sorted(set(pq.read_schema(path).names) - allowed)
            if extra:
                problem = (f"unexpected column(s) {', '.join(extra)[:200]}: reports carry the fixed fields only, "
                           "never text in an agent's words")
        if problem is None:
            usable.append(path)
            continue
        assert_day_writable(lake, day)
        target = lake.quarantine_dir / path.relative_to(lake.root)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(path), target)
        refused.append({"day": day, "source_file": _rel(lake, path), "row_number": None,
                        "problem": f"{problem} (moved to {_rel(lake, target)})", "method_version": REPORTS_METHOD})
    return usable, refused


def build_agent_reports(lake: LakePaths, day: dt.date) -> BuildResult:
    """Validate the agent reports that arrived on `day`: valid ones resolved and compared with our own check
    (curated/agent_reports), refused ones with their reason (curated/agent_report_quarantine)."""
    started = time.perf_counter()
    usable, refused_files = _refuse_report_files(lake, day)
    p = REPORTS_PARAMS
    status = _status_files(lake, day, p["max_age_days"])
    params = {"day": day, "method_version": REPORTS_METHOD, "lake_prefix": str(lake.root) + "/",
              "max_age_days": p["max_age_days"], "tool_pattern": p["tool_pattern"],
              "checkable": p["checkable_failures"], "fail_reasons": list(FAIL_REASONS),
              "surprises": list(SURPRISES), "sources": list(REPORT_SOURCES)}
    with duck.session() as con:
        duck.bind_input(con, "raw_agent_reports", usable, RAW_AGENT_REPORTS.schema)
        duck.bind_input(con, "daily_status", status, DAILY_STATUS.schema)
        con.execute("CREATE TEMP TABLE endpoints AS SELECT DISTINCT server_key, server_id FROM daily_status")
        validation = duck.load_sql("agent_report_validation")
        con.execute("CREATE TEMP TABLE agent_report_validation AS " + validation,
                    duck.used_params(validation, params))
        valid = conform(duck.run_sql(con, "agent_reports", params), AGENT_REPORTS)
        refused_rows = duck.run_sql(con, "agent_report_quarantine", params)
    quarantine = pa.concat_tables([
        conform(pa.Table.from_pylist(refused_files, AGENT_REPORT_QUARANTINE.schema), AGENT_REPORT_QUARANTINE),
        conform(refused_rows, AGENT_REPORT_QUARANTINE)])
    write_parquet(lake, lake.curated_file("agent_report_quarantine", day), quarantine)
    path = write_parquet(lake, lake.curated_file("agent_reports", day), valid)
    agreement = valid.column("agreement").value_counts().to_pylist()
    return BuildResult("agent_reports", day, path, valid.num_rows, time.perf_counter() - started,
                       {"refused_rows": refused_rows.num_rows, "refused_files": len(refused_files),
                        "agreement": {c["values"]: c["counts"] for c in agreement}})


def _partitions_between(lake: LakePaths, table: str, day: dt.date, days: int) -> list[Path]:
    """The existing partitions of `table` for `day` and the `days - 1` days before it."""
    return [f for d in _days_back(day, days - 1) if (f := lake.curated_file(table, d)).is_file()]


def build_rating_aggregates(lake: LakePaths, day: dt.date) -> BuildResult:
    """Agents' reports about each endpoint and tool over the 30-day window (sql/rating_aggregates.sql)."""
    started = time.perf_counter()
    p = RATINGS_PARAMS
    with duck.session() as con:
        duck.bind_input(con, "agent_reports", _partitions_between(lake, "agent_reports", day, p["window_days"]),
                        AGENT_REPORTS.schema)
        table = conform(duck.run_sql(con, "rating_aggregates", {
            "day": day, "method_version": RATINGS_METHOD, "window_days": p["window_days"],
            "half_life": p["recency_half_life_days"], "paid_weight": p["paid_weight"],
            "anonymous_weight": p["anonymous_weight"], "agrees": p["agrees_weight"],
            "unchecked": p["unchecked_weight"], "disagrees": p["disagrees_weight"],
            "cap": float(p["reporter_cap_reports_per_endpoint_day"]), "min_reporters": p["min_reporters"],
            "min_paid": p["min_paid_reporters"]}), RATING_AGGREGATES)
    path = write_parquet(lake, lake.curated_file("rating_aggregates", day), table)
    rated = pc.sum(pc.is_valid(table.column("stars"))).as_py() or 0
    return BuildResult("rating_aggregates", day, path, table.num_rows, time.perf_counter() - started,
                       {"with_stars": rated, "not_enough_reports": table.num_rows - rated})


def build_incidents(lake: LakePaths, day: dt.date) -> BuildResult:
    """Live, closed and unconfirmed incidents of the day (sql/incidents.sql)."""
    started = time.perf_counter()
    p = INCIDENTS_PARAMS
    with duck.session() as con:
        duck.bind_input(con, "agent_reports", _partitions_between(lake, "agent_reports", day, p["lookback_days"]),
                        AGENT_REPORTS.schema)
        duck.bind_input(con, "daily_status", _status_files(lake, day, p["lookback_days"] - 1), DAILY_STATUS.schema)
        table = conform(duck.run_sql(con, "incidents", {
            "day": day, "method_version": INCIDENTS_METHOD, "lookback_days": p["lookback_days"],
            "failures": p["failures"], "trusted_min": p["trusted_min_reporters"], "age_out": p["age_out_days"]}),
            INCIDENTS)
    path = write_parquet(lake, lake.curated_file("incidents", day), table)
    counts = table.column("status").value_counts().to_pylist()
    return BuildResult("incidents", day, path, table.num_rows, time.perf_counter() - started,
                       {"status": {c["values"]: c["counts"] for c in counts}})


def build_reliable_rankings(lake: LakePaths, day: dt.date) -> BuildResult:
    """The reliable list of each category (sql/reliable_rankings.sql)."""
    started = time.perf_counter()
    inputs = {"daily_status": DAILY_STATUS, "server_history": SERVER_HISTORY, "server_categories": SERVER_CATEGORIES}
    for name in inputs:
        if not lake.curated_file(name, day).is_file():
            raise FileNotFoundError(f"{name} for {day} is missing; materialise it first")
    with duck.session() as con:
        for name, spec in inputs.items():
            duck.bind_input(con, name, [lake.curated_file(name, day)], spec.schema)
        table = conform(duck.run_sql(con, "reliable_rankings", {
            "day": day, "method_version": RANKINGS_METHOD,
            "min_checked": RANKINGS_PARAMS["min_checked_days"]}), RELIABLE_RANKINGS)
    path = write_parquet(lake, lake.curated_file("reliable_rankings", day), table)
    return BuildResult("reliable_rankings", day, path, table.num_rows, time.perf_counter() - started,
                       {"categories": len(set(table.column("category").to_pylist()))})
