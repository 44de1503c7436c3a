"""The map's tables for one day: quarantine, daily_status, server_history."""

from __future__ import annotations

import datetime as dt
import time

import pyarrow as pa

from ..lake import duck
from ..lake.parquet_io import write_parquet
from ..lake.paths import LakePaths
from ..lake.schemas import (
    DAILY_STATUS,
    FAILURE_REASONS,
    QUARANTINE,
    RAW_PROBES,
    SERVER_HISTORY,
    TOOL_CHANGES,
    conform,
)
from ..rules.methods import (
    CHANGES_PARAMS,
    FAILURE_REASONS_METHOD,
    HISTORY_METHOD,
    HISTORY_PARAMS,
    STATUS_METHOD,
    STATUS_PARAMS,
    TOOL_LIST_CHANGE_KINDS,
)
from .common import (
    BuildResult,
    bind_probe_validation,
    bind_registry,
    days_back,
    partitions_between,
    probe_files,
    quarantine_unreadable_files,
    rel,
    require_status,
    with_earlier_refusals,
)
from .history_state import history_state


def build_quarantine(lake: LakePaths, day: dt.date) -> BuildResult:
    """Validate what landed for `day`: refuse unreadable files and invalid rows, with reasons."""
    started = time.perf_counter()
    refused_files = with_earlier_refusals(lake, "quarantine", day, quarantine_unreadable_files(lake, day))
    with duck.session() as con:
        duck.bind_input(con, "raw_probes", lake.raw_files("probes", day), RAW_PROBES.schema)
        bind_probe_validation(con)
        rows = con.sql(duck.load_sql("quarantine"),
                           params={"day": day, "lake_prefix": str(lake.root) + "/"}).to_arrow_table()
        landed = duck.one(con, "SELECT count(*) FROM raw_probes")[0]
    table = pa.concat_tables([conform(pa.Table.from_pylist(refused_files, QUARANTINE.schema), QUARANTINE),
                              conform(rows, QUARANTINE)])
    path = write_parquet(lake, lake.curated_file("quarantine", day), table)
    return BuildResult("quarantine", day, path, table.num_rows, time.perf_counter() - started,
                       {"landed_probe_rows": landed, "refused_files": len(refused_files),
                        "refused_rows": rows.num_rows})


def build_daily_status(lake: LakePaths, day: dt.date) -> BuildResult:
    started = time.perf_counter()
    days = days_back(day, STATUS_PARAMS["lookback_days"])
    with duck.session() as con:
        duck.bind_input(con, "raw_probes", probe_files(lake, days), RAW_PROBES.schema)
        registry = bind_registry(con, lake, day)
        bind_probe_validation(con)
        params = {
            "day": day,
            "method_version": STATUS_METHOD,
            "mass_min_checks": STATUS_PARAMS["mass_failure_min_checks"],
            "mass_min_origins": STATUS_PARAMS["mass_failure_min_origins"],
            "mass_share": STATUS_PARAMS["mass_failure_share"],
        }
        result = conform(duck.run_sql(con, "daily_status", params), DAILY_STATUS)
    path = write_parquet(lake, lake.curated_file("daily_status", day), result)
    codes = result.column("code").value_counts().to_pylist()
    return BuildResult("daily_status", day, path, result.num_rows, time.perf_counter() - started,
                       {"codes": {c["values"]: c["counts"] for c in codes},
                        "registry_snapshot": rel(lake, registry) if registry else None})


# Days sql/history_state.sql keeps as bits of one BIGINT mask (bit age; the sign bit left alone).
MAX_HISTORY_DAYS = 63


def build_server_history(lake: LakePaths, day: dt.date) -> BuildResult:
    started = time.perf_counter()
    window = HISTORY_PARAMS["window_days"]
    if not 1 <= window <= MAX_HISTORY_DAYS:
        raise ValueError(f"the history window is {window} days; sql/history_state.sql keeps at most "
                         f"{MAX_HISTORY_DAYS} days as bits of one BIGINT")
    require_status(lake, day)
    files = partitions_between(lake, "daily_status", day, window)
    state, source = history_state(lake, day, window)
    kept = CHANGES_PARAMS["lookback_days"]
    change_files = partitions_between(lake, "tool_changes", day, kept)
    # The window's days whose change records were built (a day without them cannot say "unchanged").
    built = set(change_files)
    recorded = [d for d in days_back(day, window - 1) if lake.curated_file("tool_changes", d) in built]
    with duck.session() as con:
        duck.bind_input(con, "daily_status", [lake.curated_file("daily_status", day)], DAILY_STATUS.schema)
        con.register("history_state", state)
        duck.bind_input(con, "tool_changes", change_files, TOOL_CHANGES.schema)
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
                       {"window_files": len(files), "window_state": source,
                        "window_days_without_change_records": window - len(recorded)})


def build_failure_reasons(lake: LakePaths, day: dt.date) -> BuildResult:
    started = time.perf_counter()
    require_status(lake, day)
    with duck.session() as con:
        duck.bind_input(con, "daily_status", [lake.curated_file("daily_status", day)], DAILY_STATUS.schema)
        table = conform(duck.run_sql(con, "failure_reasons", {"day": day, "method_version": FAILURE_REASONS_METHOD}),
                        FAILURE_REASONS)
    path = write_parquet(lake, lake.curated_file("failure_reasons", day), table)
    failed = sum(table.column("failed_checks").to_pylist())
    return BuildResult("failure_reasons", day, path, table.num_rows, time.perf_counter() - started,
                       {"failed_checks": failed})
