"""The day's map: codes, histories, the tool tables and the change records."""

from __future__ import annotations

import pyarrow as pa

from .spec import UTC_TS, TableSpec, col

DAILY_STATUS = TableSpec(
    name="daily_status",
    layer="curated",
    location="curated/daily_status/day=YYYY-MM-DD/part-0.parquet",
    grain="one row per endpoint on the map that day (checked, or listed and not skipped)",
    view="daily_status",
    schema=pa.schema(
        [
            col("day", pa.date32(), "UTC day", False),
            col("server_key", pa.string(), "the endpoint (normalised URL)", False),
            col("server_id", pa.string(), "first 12 hex of SHA-256(server_key)", False),
            col("server_name", pa.string(), "registry name: of the endpoint's first active listing by name, when "
                "several list it (docs/methodology.md, \"Its name\")"),
            col("server_version", pa.string(), "registry version (of that listing)"),
            col("url", pa.string(), "URL as listed (by that listing)"),
            col("code", pa.string(), "day code: o answered initialize and tools/list (its list may be empty), a "
                "asked for sign-in (401/403), p asked for payment (402), d not answering, n no (valid) daily check",
                False),
            col("outcome", pa.string(), "outcome of the deciding check (null for n)"),
            col("reason", pa.string(), "why: the outcome's detail, or why the day is n"),
            col("shown_status", pa.string(), "what the map shows: answers with tools | answers, lists no tools | "
                "answers, asks for sign-in | answers, asks for payment | answers, but not as a standard MCP endpoint "
                "| down | no data", False),
            col("http_status", pa.int32(), "HTTP status of the deciding check"),
            col("handshake_ms", pa.int32(), "wall time of the deciding check, ms"),
            col("protocol_version", pa.string(), "protocol version answered"),
            col("server_info_name", pa.string(), "serverInfo.name"),
            col("server_info_version", pa.string(), "serverInfo.version"),
            col("tool_count", pa.int32(), "tools listed"),
            col("tool_list_size", pa.int64(), "UTF-8 bytes of the compact JSON of the tools array"),
            col("tokens_estimate", pa.int64(), "tool_list_size / 4, rounded half up"),
            col("tools_hash", pa.string(), "SHA-256 over the sorted tool fingerprints"),
            col("redirect_location", pa.string(), "where a redirect that was not followed pointed (outcome "
                "redirect)"),
            col("payment_addresses", pa.list_(pa.string()), "payTo addresses of the HTTP 402 body (x402 "
                "`accepts[].payTo`, or a top-level `payTo`), distinct and sorted; null unless the day's check "
                "was a 402"),
            col("checked_at", UTC_TS, "start of the deciding check"),
            col("run_id", pa.string(), "run of the deciding check"),
            col("method_version", pa.string(), "version of the day-status rules", False),
        ]
    ),
)

SERVER_HISTORY = TableSpec(
    name="server_history",
    layer="curated",
    location="curated/server_history/day=YYYY-MM-DD/part-0.parquet",
    grain="one row per endpoint on the map that day: its last 30 UTC days ending that day",
    view="server_history",
    schema=pa.schema(
        [
            col("day", pa.date32(), "UTC day the window ends on", False),
            col("server_key", pa.string(), "the endpoint", False),
            col("server_id", pa.string(), "first 12 hex of SHA-256(server_key)", False),
            col("server_name", pa.string(), "registry name"),
            col("url", pa.string(), "URL as listed"),
            col("history", pa.string(), "30 day codes, oldest first, the last one is `day`", False),
            col("checked_days", pa.int32(), "days in the window that are not n", False),
            col("answered_days", pa.int32(), "o + a + p days", False),
            col("ok_days", pa.int32(), "o days", False),
            col("tools_days", pa.int32(), "o days whose tool list had at least one tool (an empty list is an "
                "answer, not tools); null in rows of history-1.1 and before"),
            col("down_days", pa.int32(), "d days", False),
            col("uptime_pct", pa.float64(), "answered / checked in percent, floored to one decimal (never "
                "shows 100.0 unless every checked day answered); null with no checked day"),
            col("uptime_label", pa.string(), "'30-day uptime' from 14 checked days, else 'over N days "
                "observed' ('over 1 day observed' for one; 'no data' for none, history-1.4)", False),
            col("success_chance", pa.float64(), "posterior mean chance the next handshake works: Beta(1,1) "
                "updated with checked days weighted 0.5^(age/7)"),
            col("success_chance_low", pa.float64(), "5% quantile of that posterior (90% credible interval)"),
            col("success_chance_high", pa.float64(), "95% quantile of that posterior"),
            col("tool_list_comparisons", pa.int32(), "day-to-day comparisons of consecutive tool lists in "
                "the window (each listed day against the endpoint's previous listed day in the window)", False),
            col("tool_list_change_days", pa.int32(), "of those, the days tool_changes recorded a tool added, "
                "removed, changed or renamed", False),
            col("stability", pa.float64(), "1 - tool_list_change_days / tool_list_comparisons (1.0 never "
                "changed); null without a comparison"),
            col("change_days", pa.list_(pa.date32()), "the days in the 60 days ending on `day` on which "
                "tool_changes recorded any change, oldest first (the 7Maps methodology keeps change days 60 "
                "days)", False),
            col("median_handshake_ms", pa.float64(), "median handshake_ms over the window's o days"),
            col("method_version", pa.string(), "version of the history and estimator rules", False),
        ]
    ),
)

TOOL_LISTS = TableSpec(
    name="tool_lists",
    layer="curated",
    location="curated/tool_lists/day=YYYY-MM-DD/part-0.parquet",
    grain="one row per distinct tool list (tools_hash) first seen that day under the current method "
    "(computed once per list, never per endpoint-day)",
    view="tool_lists",
    schema=pa.schema(
        [
            col("day", pa.date32(), "the day the list was first computed", False),
            col("tools_hash", pa.string(), "SHA-256 over the sorted tool fingerprints", False),
            col("tool_count", pa.int32(), "tools in the list", False),
            col("definition_tokens", pa.int64(), "o200k_base tokens of the list's canonical JSON (keys sorted, tools "
                "in fingerprint order: rules/fingerprints.py definition_text)", False),
            col("method_version", pa.string(), "risk method + tokenizer that produced the facts", False),
        ]
    ),
)

TOOL_FACTS = TableSpec(
    name="tool_facts",
    layer="curated",
    location="curated/tool_facts/day=YYYY-MM-DD/part-0.parquet",
    grain="one row per tool of each list in tool_lists (same day partition)",
    view="tool_facts",
    schema=pa.schema(
        [
            col("day", pa.date32(), "the day the list was first computed", False),
            col("tools_hash", pa.string(), "the list the tool belongs to", False),
            col("position", pa.int32(), "0-based position in the list as returned", False),
            col("fingerprint", pa.string(), "SHA-256 of canonical JSON of name, description, inputSchema, "
                "annotations", False),
            col("name", pa.string(), "tool name"),
            col("title", pa.string(), "tool title"),
            col("description", pa.string(), "tool description"),
            col("input_schema_json", pa.string(), "inputSchema, canonical JSON"),
            col("output_schema_json", pa.string(), "outputSchema, canonical JSON"),
            col("annotations_json", pa.string(), "annotations as published, canonical JSON (null: none)"),
            col("read_only_hint", pa.bool_(), "readOnlyHint; null when unset (unset is not false)"),
            col("destructive_hint", pa.bool_(), "destructiveHint; null when unset"),
            col("idempotent_hint", pa.bool_(), "idempotentHint; null when unset"),
            col("open_world_hint", pa.bool_(), "openWorldHint; null when unset"),
            col("risk", pa.string(), "green read-only | yellow changes data | red deletes, pays, grants, "
                "deploys or runs code", False),
            col("risk_rule", pa.string(), "the rule that decided the level", False),
            col("risk_evidence", pa.list_(pa.string()), "the annotations or words that decided it"),
            col("annotation_contradiction", pa.string(), "annotations that contradict the name or description"),
            col("description_tokens", pa.int64(), "o200k_base tokens of the description"),
            col("method_version", pa.string(), "risk method + tokenizer", False),
        ]
    ),
)

TOOLS = TableSpec(
    name="tools",
    layer="curated",
    location="curated/tools/day=YYYY-MM-DD/part-0.parquet",
    grain="one row per endpoint, day and tool (endpoints that listed tools that day)",
    view="tools",
    schema=pa.schema(
        [
            col("day", pa.date32(), "UTC day", False),
            col("server_key", pa.string(), "the endpoint", False),
            col("server_id", pa.string(), "first 12 hex of SHA-256(server_key)", False),
            col("tools_hash", pa.string(), "the endpoint's tool list that day", False),
            col("position", pa.int32(), "position in the list", False),
            col("name", pa.string(), "tool name"),
            col("title", pa.string(), "tool title"),
            col("description", pa.string(), "tool description"),
            col("input_schema_json", pa.string(), "inputSchema, canonical JSON"),
            col("annotations_json", pa.string(), "annotations, canonical JSON (null: none)"),
            col("read_only_hint", pa.bool_(), "readOnlyHint; null when unset"),
            col("destructive_hint", pa.bool_(), "destructiveHint; null when unset"),
            col("idempotent_hint", pa.bool_(), "idempotentHint; null when unset"),
            col("open_world_hint", pa.bool_(), "openWorldHint; null when unset"),
            col("fingerprint", pa.string(), "tool fingerprint", False),
            col("risk", pa.string(), "green | yellow | red", False),
            col("risk_rule", pa.string(), "the rule that fired", False),
            col("risk_evidence", pa.list_(pa.string()), "the words or annotations that decided it"),
            col("annotation_contradiction", pa.string(), "annotations contradicting the words (a finding)"),
            col("description_tokens", pa.int64(), "o200k_base tokens of the description"),
            col("method_version", pa.string(), "risk method + tokenizer", False),
        ]
    ),
)

FINDINGS = TableSpec(
    name="findings",
    layer="curated",
    location="curated/findings/day=YYYY-MM-DD/part-0.parquet",
    grain="one row per endpoint, day and published finding (per tool for annotation contradictions)",
    view="findings",
    schema=pa.schema(
        [
            col("day", pa.date32(), "UTC day", False),
            col("server_key", pa.string(), "the endpoint", False),
            col("server_id", pa.string(), "first 12 hex of SHA-256(server_key)", False),
            col("finding", pa.string(), "token_heavy | huge_description | missing_descriptions | no_annotations | "
                "missing_schema | duplicate_names | old_protocol | slow | annotation_contradiction | card_disagrees",
                False),
            col("tool_name", pa.string(), "the tool concerned, when one tool is"),
            col("value", pa.float64(), "the measured figure (tokens, ms, count of tools)"),
            col("threshold", pa.float64(), "the threshold it was held against"),
            col("detail", pa.string(), "what was found, in words", False),
            col("method_version", pa.string(), "findings method + the risk method + the tokenizer "
                "(findings-1.1+risk-1.7+o200k_base-1.1)", False),
        ]
    ),
)

INTERNAL_FINDINGS = TableSpec(
    name="internal_findings",
    layer="curated",
    location="curated/internal_findings/day=YYYY-MM-DD/part-0.parquet",
    grain="one row per endpoint, day, tool and matched pattern; for a person to review, never exported",
    view="internal_findings",
    schema=pa.schema(
        [
            col("day", pa.date32(), "UTC day", False),
            col("server_key", pa.string(), "the endpoint", False),
            col("tool_name", pa.string(), "the tool whose description matched"),
            col("check", pa.string(), "the internal check (prompt_injection_phrase)", False),
            col("pattern", pa.string(), "the phrase that matched", False),
            col("method_version", pa.string(), "version of the phrase list", False),
        ]
    ),
)

SERVER_CATEGORIES = TableSpec(
    name="server_categories",
    layer="curated",
    location="curated/server_categories/day=YYYY-MM-DD/part-0.parquet",
    grain="one row per endpoint with a tool list that day",
    view="server_categories",
    schema=pa.schema(
        [
            col("day", pa.date32(), "UTC day", False),
            col("server_key", pa.string(), "the endpoint", False),
            col("server_id", pa.string(), "first 12 hex of SHA-256(server_key)", False),
            col("category", pa.string(), "a topic from assets/categories.json, or 'other' when nothing matches",
                False),
            col("placed_by", pa.string(), "the rule whose verdict placed it: name_and_summary (the registry "
                "text: the server's own registry name and description) | tool_names (the Agent-Ready directory's "
                "rule on its tool names) | words (7Maps: words in tool names and descriptions) | none", False),
            col("decision", pa.string(), "why that verdict: agree | registry_only | tools_only | tools_win (they "
                "disagree: the tools' verdict wins) | registry_two_words (they disagree, and the registry text has "
                "at least two words of its topic) | none", False),
            col("score", pa.int32(), "tool names (tool_names) or topic words (name_and_summary, words) that "
                "placed it", False),
            col("evidence", pa.list_(pa.string()), "the words that placed it"),
            col("registry_category", pa.string(), "the registry text's verdict (name_and_summary); null: none"),
            col("registry_score", pa.int32(), "topic words in the registry text, repeats counted"),
            col("registry_entries", pa.int32(), "distinct words of its topic in the registry text (a word and "
                "its plural are one)"),
            col("registry_evidence", pa.list_(pa.string()), "the registry text's topic words"),
            col("tools_category", pa.string(), "the tools' verdict (tool_names, else words); null: none"),
            col("tools_rule", pa.string(), "tool_names | words; null: no verdict"),
            col("tools_score", pa.int32(), "tool names (tool_names) or topic words (words) behind it"),
            col("tools_evidence", pa.list_(pa.string()), "the tools' topic words"),
            col("tool_count", pa.int32(), "tools the endpoint listed", False),
            col("method_version", pa.string(), "categories method", False),
        ]
    ),
)

TOKEN_COST = TableSpec(
    name="token_cost",
    layer="curated",
    location="curated/token_cost/day=YYYY-MM-DD/part-0.parquet",
    grain="one row per endpoint and day with a tool list",
    view="token_cost",
    schema=pa.schema(
        [
            col("day", pa.date32(), "UTC day", False),
            col("server_key", pa.string(), "the endpoint", False),
            col("server_id", pa.string(), "first 12 hex of SHA-256(server_key)", False),
            col("tools_hash", pa.string(), "the tool list", False),
            col("tool_count", pa.int32(), "tools listed"),
            col("tool_list_size", pa.int64(), "UTF-8 bytes of the compact JSON of the tools array"),
            col("tokens_estimate", pa.int64(), "tool_list_size / 4, rounded half up (the 7Maps methodology)"),
            col("definition_tokens", pa.int64(), "o200k_base tokens of the list (tool_lists: its canonical JSON, keys "
                "sorted; the figure every page, server_status and the readiness line show)"),
            col("definition_tokens_percentile", pa.float64(), "share of that day's endpoints with a list whose "
                "definition_tokens are lower (0 = cheapest, 1 = dearest)"),
            col("method_version", pa.string(), "the definition tokens' rule (TOKENIZER_METHOD)", False),
        ]
    ),
)

TOOL_CHANGES = TableSpec(
    name="tool_changes",
    layer="curated",
    location="curated/tool_changes/day=YYYY-MM-DD/part-0.parquet",
    grain="one row per change an endpoint showed that day against its previous checked day (tool-list "
    "kinds: against its previous checked day with a tool list, at most 60 days back)",
    view="tool_changes",
    schema=pa.schema(
        [
            col("day", pa.date32(), "UTC day the change was seen", False),
            col("server_key", pa.string(), "the endpoint", False),
            col("server_id", pa.string(), "first 12 hex of SHA-256(server_key)", False),
            col("kind", pa.string(), "tool_added | tool_removed | tool_changed | tool_renamed | "
                "changing_tool_rewritten (a yellow or red tool's definition changed) | risk_rise (added as red, "
                "or its level rose) | silent (the list changed, serverInfo.version did not) | stopped_answering "
                "| started_answering | now_asks_sign_in | new_payment_address | redirects_other_domain", False),
            col("tool_name", pa.string(), "the tool concerned (its new name for a rename)"),
            col("previous_tool_name", pa.string(), "the old name of a renamed tool"),
            col("changed_fields", pa.list_(pa.string()), "for tool_changed and changing_tool_rewritten: which of "
                "description, inputSchema, annotations changed"),
            col("risk", pa.string(), "the tool's level that day, under the current method"),
            col("previous_risk", pa.string(), "its level on the previous day, under the same current method "
                "(so a method change is never reported as a change by the server)"),
            col("detail", pa.string(), "the change in words", False),
            col("previous_day", pa.date32(), "the day compared against", False),
            col("tools_hash", pa.string(), "the endpoint's tool list that day"),
            col("previous_tools_hash", pa.string(), "its tool list on previous_day"),
            col("server_info_version", pa.string(), "serverInfo.version that day"),
            col("previous_server_info_version", pa.string(), "serverInfo.version on previous_day"),
            col("method_version", pa.string(), "change rules + the risk method both days were classified with",
                False),
        ]
    ),
)
