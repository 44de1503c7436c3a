"""The tool tables for one day: tool facts once per list, tools, token cost, findings, categories,
change records."""

from __future__ import annotations

import datetime as dt
import json
import time

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..lake import duck
from ..lake.parquet_io import write_parquet
from ..lake.paths import LakePaths
from ..lake.schemas import (
    DAILY_STATUS,
    FINDINGS,
    INTERNAL_FINDINGS,
    RAW_REGISTRY,
    READINESS_DISCOVERY,
    SERVER_CATEGORIES,
    TOKEN_COST,
    TOOL_CHANGES,
    TOOL_FACTS,
    TOOL_LISTS,
    TOOLS,
    conform,
)
from ..packaged import shipped
from ..rules.methods import CATEGORY_PARAMS, CHANGES_METHOD, FINDINGS_METHOD, FINDINGS_PARAMS
from ..rules.tokens import TOKENIZER_METHOD
from ..rules.tool_facts import facts_method
from . import categories
from .baselines import baseline_before
from .categories import method_digest
from .common import BuildResult, partitions_through, registry_in_force, require_status
from .memo import remembered

# A day's tools repeat a few thousand lists over some 500,000 rows (100,000 endpoints). pyarrow stops
# dictionary-encoding a column once its dictionary passes 1 MiB and writes every repeat in full; up to
# 16 MiB the texts stay dictionary-encoded: a quarter of the bytes (11 MB instead of 42), written in two
# thirds of the time and scanned in half (docs/scaling.md). Tables of mostly distinct values gain nothing.
TOOLS_DICTIONARY_PAGE_BYTES = 16 << 20
# The columns of `tools` whose min/max statistics can skip anything: the day (a view over every day's files)
# and server_key (the rows are in its order, so past a million rows each row group covers a key range of its
# own). Statistics over its long texts cost a third of the write and never skip a row.
TOOLS_STATISTICS = ("day", "server_key")
# The columns of `tools` that come from the endpoint (the others from its list's facts).
ENDPOINT_COLUMNS = ("day", "server_key", "server_id", "tools_hash")


def day_list_facts(lake: LakePaths, day: dt.date) -> pa.Table:
    """The facts of every tool list published on `day`: TOOL_FACTS' columns but day, one row per tool, in
    (tools_hash, position) order (sql/day_lists.sql, sql/day_list_facts.sql). tools, findings and
    server_categories all read it: once per process while its files stay the same (curated/memo.py)."""
    method = facts_method()
    status = lake.curated_file("daily_status", day)
    list_files = partitions_through(lake, "tool_lists", day)
    fact_files = partitions_through(lake, "tool_facts", day)

    def read() -> pa.Table:
        with duck.session() as con:
            duck.bind_input(con, "daily_status", [status], DAILY_STATUS.schema)
            duck.bind_input(con, "tool_lists", list_files, TOOL_LISTS.schema)
            lists = duck.run_sql(con, "day_lists", {"day": day, "method_version": method})
            con.register("day_lists", lists)
            # Only the days that hold the day's lists: most lists first appeared long ago, on a few days.
            days = sorted(set(lists.column("facts_day").to_pylist()))
            duck.bind_input(con, "tool_facts", [lake.curated_file("tool_facts", d) for d in days], TOOL_FACTS.schema)
            return duck.run_sql(con, "day_list_facts", {"method_version": method})

    require_status(lake, day)
    return remembered("day_list_facts", (str(lake.root), day, method), [status, *list_files, *fact_files], read)


def _row_numbers(table: pa.Table) -> pa.Array:
    return pa.array(np.arange(table.num_rows, dtype=np.int64))


def _repeated(column: pa.ChunkedArray, rows: pa.Array) -> pa.Array:
    """`column`'s values at `rows`; texts as a dictionary over the column's distinct values, so repeating a
    list's texts for every endpoint that publishes it copies none of them."""
    values = column.combine_chunks()
    if pa.types.is_string(values.type):
        encoded = values.dictionary_encode()
        return pa.DictionaryArray.from_arrays(encoded.indices.take(rows), encoded.dictionary)
    return values.take(rows)


def build_tools(lake: LakePaths, day: dt.date) -> BuildResult:
    """Each endpoint's tools that day: its list's facts repeated per endpoint, in the order sql/tools.sql
    gives (server_key, position)."""
    started = time.perf_counter()
    facts = day_list_facts(lake, day)
    with duck.session() as con:
        endpoints = con.sql(
            "SELECT day, server_key, server_id, tools_hash FROM read_parquet($f) "
            "WHERE day = $day::DATE AND tools_hash IS NOT NULL",
            params={"f": str(lake.curated_file("daily_status", day)), "day": day}).to_arrow_table()
        con.register("endpoints", endpoints.append_column("endpoint_row", _row_numbers(endpoints)))
        con.register("list_facts", facts.select(["tools_hash", "position"]).append_column("fact_row",
                                                                                           _row_numbers(facts)))
        pairs = duck.run_sql(con, "tools", {})
    endpoint_rows = pairs.column("endpoint_row").combine_chunks()
    fact_rows = pairs.column("fact_row").combine_chunks()
    columns, fields = [], []
    for field in TOOLS.schema:
        source, rows = (endpoints, endpoint_rows) if field.name in ENDPOINT_COLUMNS else (facts, fact_rows)
        column = _repeated(source.column(field.name), rows)
        if column.type != field.type and not (pa.types.is_dictionary(column.type)
                                              and column.type.value_type == field.type):
            raise TypeError(f"tools.{field.name}: {column.type} where {field.type} was expected")
        columns.append(column)
        fields.append(field.with_type(column.type))
    table = pa.Table.from_arrays(columns, schema=pa.schema(fields, metadata=TOOLS.schema.metadata))
    path = write_parquet(lake, lake.curated_file("tools", day), table,
                         dictionary_pagesize_limit=TOOLS_DICTIONARY_PAGE_BYTES, statistics=TOOLS_STATISTICS)
    return BuildResult("tools", day, path, table.num_rows, time.perf_counter() - started)


def _build_from_lists(lake: LakePaths, day: dt.date, spec, facts_table: str, facts_schema) -> BuildResult:
    started = time.perf_counter()
    with duck.session() as con:
        duck.bind_input(con, "daily_status", [lake.curated_file("daily_status", day)], DAILY_STATUS.schema)
        duck.bind_input(con, facts_table, partitions_through(lake, facts_table, day), facts_schema)
        result = conform(duck.run_sql(con, spec.name, {
            "day": day, "method_version": facts_method(), "tokenizer": TOKENIZER_METHOD}), spec)
    path = write_parquet(lake, lake.curated_file(spec.name, day), result)
    return BuildResult(spec.name, day, path, result.num_rows, time.perf_counter() - started)


def build_token_cost(lake: LakePaths, day: dt.date) -> BuildResult:
    return _build_from_lists(lake, day, TOKEN_COST, "tool_lists", TOOL_LISTS.schema)


INJECTION_PHRASES = shipped("assets", "injection_phrases.json")


def build_findings(lake: LakePaths, day: dt.date) -> BuildResult:
    """Published findings (sql/findings.sql) and, apart, the internal-only pattern checks."""
    started = time.perf_counter()
    phrases = json.loads(INJECTION_PHRASES.read_text())
    facts = day_list_facts(lake, day)
    with duck.session() as con:
        duck.bind_input(con, "daily_status", [lake.curated_file("daily_status", day)], DAILY_STATUS.schema)
        con.register("list_facts", facts)
        discovery = lake.curated_file("readiness_discovery", day)
        duck.bind_input(con, "readiness_discovery", [discovery] if discovery.is_file() else [],
                        READINESS_DISCOVERY.schema)
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


CATEGORIES = shipped("assets", "categories.json")


def listing_text_table(lake: LakePaths, day: dt.date) -> pa.Table:
    """(server_key, text) of each listing in force on `day`: the registry name after its namespace
    (`io.github.acme/flight-search` -> `flight-search`), its title and its description."""
    registry = registry_in_force(lake, day)
    with duck.session() as con:
        duck.bind_input(con, "registry", [registry] if registry else [], RAW_REGISTRY.schema)
        text = categories.LISTING_TEXT_SQL.format(
            name="coalesce(any_value(server_name), '')",
            title="any_value(coalesce(json_extract_string(entry_json, '$.server.title'), "
                  "json_extract_string(entry_json, '$.title')))",
            description="any_value(coalesce(json_extract_string(entry_json, '$.server.description'), "
                        "json_extract_string(entry_json, '$.description')))")
        return con.sql(f"SELECT server_key, {text} AS text FROM registry "
                       "WHERE server_key IS NOT NULL AND json_valid(entry_json) GROUP BY server_key").to_arrow_table()


def build_server_categories(lake: LakePaths, day: dt.date) -> BuildResult:
    started = time.perf_counter()
    document = CATEGORIES.read_bytes()
    listing_text = listing_text_table(lake, day)
    facts = day_list_facts(lake, day)
    # Each list is scored once under the method (curated/categories.py): only the lists not scored before.
    digest = method_digest(document, CATEGORY_PARAMS)
    known = categories.known_lists(lake, digest)
    day_hashes = pc.unique(facts.column("tools_hash"))
    new = pc.invert(pc.is_in(facts.column("tools_hash"), value_set=known.column("tools_hash")))
    list_texts = facts.filter(new).select(["tools_hash", "name", "description"])
    with duck.session() as con:
        duck.bind_input(con, "daily_status", [lake.curated_file("daily_status", day)], DAILY_STATUS.schema)
        placed = categories.place(con, day, json.loads(document), list_texts, known, day_hashes, listing_text)
    table = conform(placed.rows, SERVER_CATEGORIES)
    categories.keep(lake, digest, known, placed.scored)
    path = write_parquet(lake, lake.curated_file("server_categories", day), table)
    counts = table.column("placed_by").value_counts().to_pylist()
    decisions = table.column("decision").value_counts().to_pylist()
    return BuildResult("server_categories", day, path, table.num_rows, time.perf_counter() - started,
                       {"placed_by": {c["values"]: c["counts"] for c in counts},
                        "decision": {c["values"]: c["counts"] for c in decisions},
                        "lists_scored": placed.scored.num_rows,
                        "lists_known": placed.day_lists - placed.scored.num_rows})


def changes_method() -> str:
    return f"{CHANGES_METHOD}+{facts_method()}"


def build_tool_changes(lake: LakePaths, day: dt.date) -> BuildResult:
    """What each endpoint changed since its previous checked day (sql/tool_changes.sql)."""
    started = time.perf_counter()
    require_status(lake, day)
    baseline = baseline_before(lake, day)
    with duck.session() as con:  # site_of(url): lake/duck.py registers it in every session
        duck.bind_input(con, "daily_status", [lake.curated_file("daily_status", day)], DAILY_STATUS.schema)
        con.register("change_baseline", baseline.table)
        duck.bind_input(con, "tool_facts", partitions_through(lake, "tool_facts", day), TOOL_FACTS.schema)
        duck.bind_input(con, "tool_lists", partitions_through(lake, "tool_lists", day), TOOL_LISTS.schema)
        unclassified = duck.run_sql(con, "tool_lists_needed", {"day": day, "method": facts_method()}).to_pylist()
        if unclassified:
            raise FileNotFoundError(f"{day}: {len(unclassified)} tool list(s) have no facts under {facts_method()} "
                                    f"(e.g. {unclassified[0]['tools_hash']}); materialise tool_facts for {day} first")
        table = conform(duck.run_sql(con, "tool_changes", {
            "day": day, "facts_method": facts_method(), "method_version": changes_method()}), TOOL_CHANGES)
    path = write_parquet(lake, lake.curated_file("tool_changes", day), table)
    counts = table.column("kind").value_counts().to_pylist()
    return BuildResult("tool_changes", day, path, table.num_rows, time.perf_counter() - started,
                       {"kinds": {c["values"]: c["counts"] for c in counts}, "baseline": baseline.source})
