"""The tool tables for one day (tool_facts has a module of its own: curated/tool_facts.py): tools, token cost,
findings, categories, change records."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import time

import pyarrow as pa

from ..lake import duck
from ..lake.parquet_io import write_parquet, write_parquet_parts
from ..lake.paths import LakePaths
from ..lake.schemas import (
    DAILY_STATUS,
    FINDINGS,
    INTERNAL_FINDINGS,
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
from ..rules.methods import CATEGORY_PARAMS, CHANGES_METHOD, FINDINGS_METHOD, FINDINGS_PARAMS, TOKENIZER_METHOD
from ..rules.tool_facts import facts_method
from . import categories
from .baselines import baseline_before
from .categories import method_digest
from .common import BuildResult, bind_registry, partitions_through, require_status
from .list_facts import bind_list_facts, tools_parts

# pyarrow stops dictionary-encoding a column once its dictionary passes 1 MiB and writes every repeat in full;
# up to 16 MiB a row group's texts that repeat stay dictionary-encoded (at 100,000 endpoints some 5,700
# distinct input schemas over 1.2 million rows): 191 MB a day instead of 295, written in 2.8 s of CPU instead
# of 3.7 (docs/scaling.md, "The tool tables at 100,000 endpoints").
TOOLS_DICTIONARY_PAGE_BYTES = 16 << 20
# The columns of `tools` whose min/max statistics can skip anything: the day (a view over every day's files)
# and server_key (the rows are in its order, so each row group covers a key range of its own). Statistics
# over its long texts cost a third of the write and never skip a row.
TOOLS_STATISTICS = ("day", "server_key")


def build_tools(lake: LakePaths, day: dt.date) -> BuildResult:
    """Each endpoint's tools that day: its list's facts repeated per endpoint, in the order sql/tools.sql
    gives (server_key, position), written a part at a time (curated/list_facts.py)."""
    started = time.perf_counter()
    with contextlib.closing(tools_parts(lake, day)) as parts:
        path, rows = write_parquet_parts(lake, lake.curated_file("tools", day), TOOLS.schema, parts,
                                         dictionary_pagesize_limit=TOOLS_DICTIONARY_PAGE_BYTES,
                                         statistics=TOOLS_STATISTICS)
    return BuildResult("tools", day, path, rows, time.perf_counter() - started)


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


def findings_method() -> str:
    """The findings' thresholds, and the risk rules and tokenizer whose levels (annotation_contradiction) and
    counts (huge_description) some findings rest on (docs/changelog.md, findings)."""
    return f"{FINDINGS_METHOD}+{facts_method()}"


def build_findings(lake: LakePaths, day: dt.date) -> BuildResult:
    """Published findings (sql/findings.sql) and, apart, the internal-only pattern checks."""
    started = time.perf_counter()
    phrases = json.loads(INJECTION_PHRASES.read_text())
    with duck.session() as con:
        duck.bind_input(con, "daily_status", [lake.curated_file("daily_status", day)], DAILY_STATUS.schema)
        bind_list_facts(con, lake, day)
        discovery = lake.curated_file("readiness_discovery", day)
        duck.bind_input(con, "readiness_discovery", [discovery] if discovery.is_file() else [],
                        READINESS_DISCOVERY.schema)
        findings = conform(duck.run_sql(con, "findings", {
            "day": day, "method_version": findings_method(),
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
    """(server_key, text) of each endpoint in force on `day`: the registry name after its namespace
    (`io.github.acme/flight-search` -> `flight-search`), its title and its description, all three of the one
    listing its day row names it by (status-1.4; categories-1.6): where several list an endpoint, a listing to
    probe first, then active, then one whose namespace owns its host, then by name, URL and version
    (sql/naming_listings.sql). An entry cut at
    100,000 characters (registry/client.py) no longer parses: its listing still names the endpoint, and gives its
    name alone (categories-1.7; docs/methodology.md, server_categories)."""
    with duck.session() as con:
        bind_registry(con, lake, day)
        text = categories.LISTING_TEXT_SQL.format(
            name="coalesce(server_name, '')",
            title="coalesce(json_extract_string(entry, '$.server.title'), json_extract_string(entry, '$.title'))",
            description="coalesce(json_extract_string(entry, '$.server.description'), "
                        "json_extract_string(entry, '$.description'))")
        return con.sql(f"SELECT server_key, {text} AS text FROM (SELECT *, CASE WHEN json_valid(entry_json) THEN "
                       "entry_json END AS entry FROM naming_listings)").to_arrow_table()


def build_server_categories(lake: LakePaths, day: dt.date) -> BuildResult:
    started = time.perf_counter()
    document = CATEGORIES.read_bytes()
    listing_text = listing_text_table(lake, day)
    # Each list is scored once under the method (curated/categories.py): only the lists not scored before.
    digest = method_digest(document, CATEGORY_PARAMS)
    known = categories.known_lists(lake, digest)
    with duck.session() as con:
        duck.bind_input(con, "daily_status", [lake.curated_file("daily_status", day)], DAILY_STATUS.schema)
        bind_list_facts(con, lake, day)
        day_hashes = con.sql("SELECT DISTINCT tools_hash FROM list_facts ORDER BY tools_hash").to_arrow_table()
        con.register("known_lists", known.select(["tools_hash"]))
        con.execute("CREATE TEMP VIEW list_texts AS SELECT tools_hash, name, description FROM list_facts "
                    "ANTI JOIN known_lists USING (tools_hash)")
        placed = categories.place(con, day, json.loads(document), known, day_hashes.column(0), listing_text)
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
    # The same rows for less memory (docs/scaling.md, "The tool tables at 100,000 endpoints"): DuckDB turns the
    # first-facts QUALIFY of sql/tool_changes.sql into an arg_min over each tool's whole row (1.4 GB of hash
    # table for 160,000 tools on a churn day) unless told not to, a setting of the whole database (so one of
    # its own); and it reads ahead whole column chunks of tool_facts (a million rows a row group).
    with duck.session(settings={"disabled_optimizers": "top_n_window_elimination"}) as con:
        con.execute("SET disable_parquet_prefetching = true")  # site_of(url): registered in every session
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
