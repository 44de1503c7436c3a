"""What agents report and what the map ranks, for one day: agent reports, ratings, incidents,
reliable rankings."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..lake import duck
from ..lake.parquet_io import SignedDayError, assert_day_writable, write_parquet
from ..lake.paths import LakePaths
from ..lake.schemas import (
    AGENT_REPORT_QUARANTINE,
    AGENT_REPORTS,
    DAILY_STATUS,
    FAIL_REASONS,
    INCIDENTS,
    RATING_AGGREGATES,
    RAW_AGENT_REPORTS,
    RELIABLE_RANKINGS,
    SERVER_CATEGORIES,
    SERVER_HISTORY,
    SURPRISES,
    conform,
)
from ..registry.incident_reviews import reviews_table
from ..rules.methods import (
    INCIDENTS_METHOD,
    INCIDENTS_PARAMS,
    RANKINGS_METHOD,
    RANKINGS_PARAMS,
    RATINGS_METHOD,
    RATINGS_PARAMS,
    REPORTS_METHOD,
    REPORTS_PARAMS,
)
from .common import BuildResult, partitions_between, status_files, with_earlier_refusals
from .report_batches import refuse_report_files


def _report_params(lake: LakePaths, day: dt.date) -> dict[str, Any]:
    p = REPORTS_PARAMS
    return {"day": day, "method_version": REPORTS_METHOD, "lake_prefix": str(lake.root) + "/",
            "max_age_days": p["max_age_days"], "tool_pattern": p["tool_pattern"], "withheld": p["withheld_pattern"],
            "checkable": p["checkable_failures"], "fail_reasons": list(FAIL_REASONS), "surprises": list(SURPRISES)}


def _bind_validation(con: Any, lake: LakePaths, day: dt.date, files: list[Path], params: dict[str, Any]) -> None:
    """agent_report_validation over `files`, against our own checks of the days they may be about."""
    duck.bind_input(con, "raw_agent_reports", files, RAW_AGENT_REPORTS.schema)
    duck.bind_input(con, "daily_status", status_files(lake, day, REPORTS_PARAMS["max_age_days"]), DAILY_STATUS.schema)
    con.execute("CREATE TEMP TABLE endpoints AS SELECT DISTINCT server_key, server_id FROM daily_status")
    validation = duck.load_sql("agent_report_validation")
    con.execute("CREATE TEMP TABLE agent_report_validation AS " + validation, duck.used_params(validation, params))


def validate_report_file(lake: LakePaths, path: Path, day: dt.date) -> list[str | None]:
    """The problem of each row of one report batch (None: usable), by the rules every landed batch meets
    when its day is built; `path` must sit in a `day=<day>` folder, as landed batches do. Used by the map's
    MCP server before a report lands (surfaces/report_intake.py)."""
    params = _report_params(lake, day)
    with duck.session() as con:
        _bind_validation(con, lake, day, [path], params)
        return [row[0] for row in con.execute("SELECT problem FROM agent_report_validation ORDER BY source_row")
                .fetchall()]


# The fields whose refused values are an agent's words, withheld (sql/agent_report_validation.sql safe_*).
_WORDS_FIELDS = ("fail", "surprise", "tool", "server", "tools_hash", "reporter_id")


def _refused_words(con: Any) -> dict[str, list[tuple[Any, ...]]]:
    """Per batch, the rows of the bound agent_report_validation whose fields carry refused words: (source_row,
    then each field's withheld value, in _WORDS_FIELDS order)."""
    differs = " OR ".join(f"safe_{f} IS DISTINCT FROM {f}" for f in _WORDS_FIELDS)
    found = con.execute(f"SELECT source_file, source_row, {', '.join('safe_' + f for f in _WORDS_FIELDS)} "
                        f"FROM agent_report_validation WHERE {differs} ORDER BY source_file, source_row").fetchall()
    by_file: dict[str, list[tuple[Any, ...]]] = {}
    for row in found:
        by_file.setdefault(row[0], []).append(row[1:])
    return by_file


def _withhold_words(lake: LakePaths, day: dt.date, by_file: dict[str, list[tuple[Any, ...]]]) -> None:
    """Rewrite each batch whose rows carry refused words with those values withheld, as the quarantine keeps
    them, so that no batch holds an agent's words once its day is built (reports-1.2); the rest of each batch as
    it was. A signed day's batches are frozen and left as signed."""
    try:
        assert_day_writable(lake, day)
    except SignedDayError:
        return
    for name, rows in by_file.items():
        table = pq.read_table(name)
        for i, field in enumerate(_WORDS_FIELDS):
            if field not in table.column_names:
                continue
            values = table.column(field).to_pylist()
            for row in rows:
                values[row[0]] = row[1 + i]
            table = table.set_column(table.column_names.index(field), field, pa.array(values, pa.string()))
        write_parquet(lake, Path(name), table)


def build_agent_reports(lake: LakePaths, day: dt.date) -> BuildResult:
    """Validate the agent reports that arrived on `day`: valid ones resolved and compared with our own check
    (curated/agent_reports), refused ones with their reason (curated/agent_report_quarantine)."""
    started = time.perf_counter()
    usable, kept, refused_files = refuse_report_files(lake, day)
    refused_files = with_earlier_refusals(lake, "agent_report_quarantine", day, refused_files)
    params = _report_params(lake, day)
    with duck.session() as con:
        _bind_validation(con, lake, day, usable, params)
        valid = conform(duck.run_sql(con, "agent_reports", params), AGENT_REPORTS)
        refused_rows = duck.run_sql(con, "agent_report_quarantine", params)
        words = _refused_words(con)
    if kept:  # the fixed fields kept of batches with extra columns: read by no rule but this one
        with duck.session() as con:
            _bind_validation(con, lake, day, kept, params)
            words.update(_refused_words(con))
    # After the rules read them: the tables above hold the same withheld values (safe_*), and a batch rewritten
    # before its day's tables are written is never newer than them.
    _withhold_words(lake, day, words)
    quarantine = pa.concat_tables([
        conform(pa.Table.from_pylist(refused_files, AGENT_REPORT_QUARANTINE.schema), AGENT_REPORT_QUARANTINE),
        conform(refused_rows, AGENT_REPORT_QUARANTINE)])
    write_parquet(lake, lake.curated_file("agent_report_quarantine", day), quarantine)
    path = write_parquet(lake, lake.curated_file("agent_reports", day), valid)
    agreement = valid.column("agreement").value_counts().to_pylist()
    return BuildResult("agent_reports", day, path, valid.num_rows, time.perf_counter() - started,
                       {"refused_rows": refused_rows.num_rows, "refused_files": len(refused_files),
                        "agreement": {c["values"]: c["counts"] for c in agreement}})


def build_rating_aggregates(lake: LakePaths, day: dt.date) -> BuildResult:
    """Agents' reports about each endpoint and tool over the 30-day window (sql/rating_aggregates.sql)."""
    started = time.perf_counter()
    p = RATINGS_PARAMS
    with duck.session() as con:
        duck.bind_input(con, "agent_reports", partitions_between(lake, "agent_reports", day, p["window_days"]),
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
    """Live, closed and unconfirmed incidents of the day (sql/incidents.sql), with a person's reviews made
    before the day ended. The reviews file is no input of the day's graph: a day is signed only when built
    after it ended, and every review that counts for it was made before then (docs/methodology.md,
    "Incidents")."""
    started = time.perf_counter()
    p = INCIDENTS_PARAMS
    reviews = reviews_table(lake)  # the SQL keeps those made before the day ended
    with duck.session() as con:
        con.register("incident_reviews", reviews)
        duck.bind_input(con, "agent_reports", partitions_between(lake, "agent_reports", day, p["lookback_days"]),
                        AGENT_REPORTS.schema)
        duck.bind_input(con, "daily_status", status_files(lake, day, p["lookback_days"] - 1), DAILY_STATUS.schema)
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
        # The order counts days answering with tools (server_history.tools_days, history-1.2): a history built
        # by an earlier method has none, and ranking on it would file nulls as figures.
        ((older,),) = con.execute("SELECT any_value(method_version) FROM server_history WHERE tools_days IS NULL"
                                  ).fetchall()
        if older is not None:
            raise ValueError(f"server_history of {day} was built by {older}, which does not count the days "
                             f"answering with tools; materialise server_history of {day} first")
        table = conform(duck.run_sql(con, "reliable_rankings", {
            "day": day, "method_version": RANKINGS_METHOD,
            "min_checked": RANKINGS_PARAMS["min_checked_days"]}), RELIABLE_RANKINGS)
    path = write_parquet(lake, lake.curated_file("reliable_rankings", day), table)
    return BuildResult("reliable_rankings", day, path, table.num_rows, time.perf_counter() - started,
                       {"categories": len(set(table.column("category").to_pylist()))})
