"""Arrow schemas of every lake table: the one contract for raw inputs and curated outputs.

Each column carries its documentation in the field metadata; the README's data dictionary is generated
from here (`sevenmaps data-dictionary`) and a test keeps the two in step.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pyarrow as pa

UTC_TS = pa.timestamp("us", tz="UTC")


def col(name: str, type_: pa.DataType, doc: str, nullable: bool = True) -> pa.Field:
    return pa.field(name, type_, nullable=nullable, metadata={"doc": doc})


@dataclass(frozen=True)
class TableSpec:
    name: str
    layer: str  # "raw", "curated" or "aggregate"
    location: str  # path pattern below the lake root
    grain: str
    schema: pa.Schema
    view: str  # the warehouse.duckdb view over it

    def doc(self, column: str) -> str:
        meta = self.schema.field(column).metadata or {}
        return meta.get(b"doc", b"").decode()


RAW_PROBES = TableSpec(
    name="probes",
    layer="raw",
    location="raw/probes/day=YYYY-MM-DD/<run_id>-<part>.parquet",
    grain="one row per check of one endpoint (a run may check an endpoint again; the last completed "
    "daily check of the day counts)",
    view="probes",
    schema=pa.schema(
        [
            col("day", pa.date32(), "UTC day of the check (equals the folder's day=)", False),
            col("check_kind", pa.string(), "daily | hourly | five_minute | submitted | control (a check of an endpoint "
                "we run ourselves, proving the run's own network worked)", False),
            col("run_id", pa.string(), "the scan run that made the check", False),
            col("server_key", pa.string(), "the endpoint: normalised URL (lower-case host without www. and "
                "port, path without trailing slash, no query or fragment)", False),
            col("server_id", pa.string(), "first 12 hex of SHA-256(server_key), as 7Maps publishes it", False),
            col("server_name", pa.string(), "registry name of the listing (reverse-DNS/name)"),
            col("server_version", pa.string(), "registry version of the listing"),
            col("remote_type", pa.string(), "registry remote type: streamable-http | sse"),
            col("url", pa.string(), "the URL as listed (userinfo, if any, replaced by REDACTED: never stored)"),
            col("origin", pa.string(), "scheme://host[:port] of the URL (never its userinfo)"),
            col("started_at", UTC_TS, "when the check started (UTC)", False),
            col("handshake_ms", pa.int32(), "wall time of the whole check (initialize, "
                "notifications/initialized, tools/list), ms"),
            col("outcome", pa.string(), "ok | needs_auth | http_402 | timeout | unreachable | redirect | "
                "http_NNN | rpc_error | not_mcp | no_tool_list | skipped | prober_error (our own code failed) | "
                "not_checked (we could not check fairly: prober_overloaded, robots_unavailable); the last two "
                "make the day code n, never d", False),
            col("outcome_detail", pa.string(), "human-readable detail of the outcome"),
            col("http_status", pa.int32(), "HTTP status of the decisive response"),
            col("protocol_version", pa.string(), "protocol version the server answered with"),
            col("server_info_name", pa.string(), "serverInfo.name from the server"),
            col("server_info_version", pa.string(), "serverInfo.version from the server"),
            col("tools_json", pa.string(), "the tools array as returned (pages concatenated), compact JSON"),
            col("tool_count", pa.int32(), "number of tools listed"),
            col("tool_list_size", pa.int64(), "length in UTF-8 bytes of the compact JSON of the tools array"),
            col("tools_hash", pa.string(), "SHA-256 over the sorted tool fingerprints (order-free)"),
            col("pages_read", pa.int32(), "tools/list pages read"),
            col("tool_list_complete", pa.bool_(), "false when pagination was cut off"),
            col("redirect_location", pa.string(), "Location of a redirect that was not followed"),
            col("www_authenticate", pa.string(), "WWW-Authenticate header of a 401/403"),
            col("resource_metadata_url", pa.string(), "RFC 9728 resource_metadata URL, when given"),
            col("payment_json", pa.string(), "body of an HTTP 402 answer (payment details)"),
            col("skip_reason", pa.string(), "why the listing was not probed (outcome skipped), or why the check "
                "was not made fairly (outcome not_checked: prober_overloaded | robots_unavailable)"),
            col("discover_supported", pa.bool_(), "server/discover answered (protocol 2026-07-28)"),
            col("ttl_ms", pa.int64(), "ttlMs of the 2026-07-28 tools/list result (null when absent or not a "
                "non-negative integer)"),
            col("cache_scope", pa.string(), "cacheScope of the 2026-07-28 tools/list result"),
            col("prober_version", pa.string(), "version of the prober (or generator) that wrote the row"),
        ]
    ),
)

RAW_REGISTRY = TableSpec(
    name="registry",
    layer="raw",
    location="raw/registry/day=YYYY-MM-DD/servers.parquet",
    grain="one row per remote of each registry entry (latest version) in that day's snapshot",
    view="registry_servers",
    schema=pa.schema(
        [
            col("day", pa.date32(), "UTC day of the snapshot", False),
            col("fetched_at", UTC_TS, "when the snapshot was taken (UTC)"),
            col("server_name", pa.string(), "registry name"),
            col("server_version", pa.string(), "registry version (the latest)"),
            col("status", pa.string(), "registry status: active | deprecated; submitted for a server admitted "
                "from the submissions queue (registry/submissions.py), which the registry does not list"),
            col("published_at", UTC_TS, "registry publishedAt"),
            col("updated_at", UTC_TS, "registry updatedAt"),
            col("remote_type", pa.string(), "streamable-http | sse"),
            col("url", pa.string(), "remote URL as listed (userinfo replaced by REDACTED)"),
            col("server_key", pa.string(), "the endpoint key (see probes.server_key); null when the URL "
                "cannot be normalised"),
            col("server_id", pa.string(), "first 12 hex of SHA-256(server_key)"),
            col("listing", pa.string(), "probe | skip | malformed: the listing rules' decision", False),
            col("skip_reason", pa.string(), "why the listing is skipped or malformed"),
            col("entry_json", pa.string(), "the registry entry as received"),
        ]
    ),
)

RAW_ORIGINS = TableSpec(
    name="origins",
    layer="raw",
    location="raw/origins/day=YYYY-MM-DD/<run_id>-<part>.parquet",
    grain="one row per origin fetch by a daily scan, once per origin per UTC day (a later slice reuses it; a "
          "failed fetch is tried again): robots.txt and the three well-known documents",
    view="origins",
    schema=pa.schema(
        [
            col("day", pa.date32(), "UTC day of the scan", False),
            col("run_id", pa.string(), "the scan run", False),
            col("origin", pa.string(), "scheme://host[:port]", False),
            col("fetched_at", UTC_TS, "when robots.txt was requested (UTC)"),
            col("robots_status", pa.int32(), "HTTP status of /robots.txt (null: no answer)"),
            col("robots_policy", pa.string(), "rules (2xx, parsed) | allow_all (4xx) | disallow_all (5xx or no "
                "answer, RFC 9309: its endpoints not_checked, robots_unavailable) | host_unreachable (the "
                "connection refused or the name unresolved: nothing listens, the endpoints' own checks "
                "decide); on a 5xx or no answer, the "
                "policy of the last 24 h that stood in, if any (robots_detail says so)", False),
            col("robots_txt", pa.string(), "robots.txt as served (first 512 KiB)"),
            col("robots_detail", pa.string(), "what happened fetching robots.txt (and whether a cached policy "
                "stood in)"),
            col("oauth_protected_resource_status", pa.int32(), "HTTP status of /.well-known/oauth-protected-resource"),
            col("oauth_protected_resource_json", pa.string(), "its body when 200 (first 64 KiB)"),
            col("agent_card_status", pa.int32(), "HTTP status of /.well-known/agent-card.json"),
            col("agent_card_json", pa.string(), "its body when 200 (first 64 KiB)"),
            col("agent_json_status", pa.int32(), "HTTP status of /.well-known/agent.json (pre-0.3 A2A path)"),
            col("agent_json_json", pa.string(), "its body when 200 (first 64 KiB)"),
            col("prober_version", pa.string(), "version of the prober"),
        ]
    ),
)

QUARANTINE = TableSpec(
    name="quarantine",
    layer="curated",
    location="curated/quarantine/day=YYYY-MM-DD/part-0.parquet",
    grain="one row per landed raw row or file of the day that failed validation",
    view="quarantine",
    schema=pa.schema(
        [
            col("day", pa.date32(), "the partition the row or file landed in", False),
            col("source", pa.string(), "the raw input: probes | registry", False),
            col("source_file", pa.string(), "the file, relative to the lake root", False),
            col("row_number", pa.int64(), "0-based row in the file; null when the whole file was refused"),
            col("server_key", pa.string(), "the row's server_key, if readable"),
            col("problem", pa.string(), "why it was refused", False),
            col("row_json", pa.string(), "the refused row, as JSON (null for a refused file)"),
        ]
    ),
)

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
            col("server_name", pa.string(), "registry name"),
            col("server_version", pa.string(), "registry version"),
            col("url", pa.string(), "URL as listed"),
            col("code", pa.string(), "day code: o answered with tools, a asked for sign-in (401/403), p asked "
                "for payment (402), d not answering, n no (valid) daily check", False),
            col("outcome", pa.string(), "outcome of the deciding check (null for n)"),
            col("reason", pa.string(), "why: the outcome's detail, or why the day is n"),
            col("shown_status", pa.string(), "what the map shows: answers with tools | answers, asks for "
                "sign-in | answers, asks for payment | answers, but not as a standard MCP endpoint | down | "
                "no data", False),
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
            col("down_days", pa.int32(), "d days", False),
            col("uptime_pct", pa.float64(), "answered / checked in percent, floored to one decimal (never "
                "shows 100.0 unless every checked day answered); null with no checked day"),
            col("uptime_label", pa.string(), "'30-day uptime' from 14 checked days, else 'over N days "
                "observed'", False),
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
            col("definition_tokens", pa.int64(), "o200k_base tokens of the compact JSON of the tools array", False),
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
            col("method_version", pa.string(), "findings method", False),
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
            col("placed_by", pa.string(), "name_and_summary (the Agent-Ready directory's rule: the server's "
                "own registry name and description) | tool_names (the Agent-Ready directory's rule: its tool "
                "names, only when its name and summary fit no category) | words (7Maps: words in tool names and "
                "descriptions) | none", False),
            col("score", pa.int32(), "tool names (tool_names) or topic words (name_and_summary, words) that "
                "placed it", False),
            col("evidence", pa.list_(pa.string()), "the words that placed it"),
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
            col("definition_tokens", pa.int64(), "o200k_base tokens of that JSON"),
            col("definition_tokens_percentile", pa.float64(), "share of that day's endpoints with a list whose "
                "definition_tokens are lower (0 = cheapest, 1 = dearest)"),
            col("method_version", pa.string(), "tokenizer", False),
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

FAIL_REASONS = ("unreachable", "auth", "args", "server_error", "timeout", "rate_limited", "wrong_result")
SURPRISES = ("side_effect", "unexpected_cost", "data_leak_suspected", "other")

RAW_AGENT_REPORTS = TableSpec(
    name="agent_reports_raw",
    layer="raw",
    location="raw/agent_reports/day=YYYY-MM-DD/<batch>.parquet",
    grain="one row per agent report as the reporting service landed it, in the partition of the day it "
    "arrived (about_day says which day the call was made): the 7Maps methodology's fixed fields, the "
    "reporter's keyed hash and the paid flag, nothing else (never text in an agent's words)",
    view="raw_agent_reports",
    schema=pa.schema(
        [
            col("day", pa.date32(), "UTC day the report arrived (equals the folder's day=)", False),
            col("about_day", pa.date32(), "UTC day of the call the report is about"),
            col("server", pa.string(), "the endpoint: its server_key, or its 12-hex server_id as 7Maps publishes it"),
            col("tool", pa.string(), "the tool called (an MCP tool name)"),
            col("ok", pa.bool_(), "the call worked"),
            col("fail", pa.string(), "why it failed: " + " | ".join(FAIL_REASONS) + "; null when ok"),
            col("ms", pa.int64(), "the call's duration in ms"),
            col("matched_description", pa.bool_(), "the tool did what its description says"),
            col("result_tokens", pa.int64(), "tokens of the result"),
            col("charged_usd", pa.float64(), "what the call cost, in USD"),
            col("surprise", pa.string(), "what surprised the agent: " + " | ".join(SURPRISES)),
            col("tools_hash", pa.string(), "the tools_hash of the list the agent saw (SHA-256 hex)"),
            col("reporter_id", pa.string(), "the reporter: a keyed hash (64 hex), never an IP address"),
            col("paid", pa.bool_(), "the reporter paid for the call (a paying reporter)"),
        ]
    ),
)

AGENT_REPORTS = TableSpec(
    name="agent_reports",
    layer="curated",
    location="curated/agent_reports/day=YYYY-MM-DD/part-0.parquet",
    grain="one row per valid agent report that arrived that day (invalid ones are in agent_report_quarantine)",
    view="agent_reports",
    schema=pa.schema(
        [
            col("day", pa.date32(), "UTC day the report arrived", False),
            col("about_day", pa.date32(), "UTC day of the call", False),
            col("server_key", pa.string(), "the endpoint", False),
            col("server_id", pa.string(), "first 12 hex of SHA-256(server_key)", False),
            col("tool", pa.string(), "the tool called"),
            col("ok", pa.bool_(), "the call worked", False),
            col("fail", pa.string(), "why it failed (null when ok)"),
            col("ms", pa.int64(), "duration in ms"),
            col("matched_description", pa.bool_(), "the tool did what its description says"),
            col("result_tokens", pa.int64(), "tokens of the result"),
            col("charged_usd", pa.float64(), "cost in USD"),
            col("surprise", pa.string(), "side_effect | unexpected_cost | data_leak_suspected | other"),
            col("tools_hash", pa.string(), "the list the agent saw"),
            col("reporter_id", pa.string(), "keyed hash of the reporter", False),
            col("paid", pa.bool_(), "a paying reporter", False),
            col("our_code", pa.string(), "our own day code for the endpoint on about_day (null: not on the map "
                "that day or not built)"),
            col("agreement", pa.string(), "agrees | disagrees | unchecked: the report against our own check of "
                "about_day (a failure we cannot see, such as args or wrong_result, is unchecked)", False),
            col("raw_file", pa.string(), "the raw batch file, relative to the lake root", False),
            col("raw_row", pa.int64(), "0-based row in that file", False),
            col("method_version", pa.string(), "report validation and agreement rules", False),
        ]
    ),
)

AGENT_REPORT_QUARANTINE = TableSpec(
    name="agent_report_quarantine",
    layer="curated",
    location="curated/agent_report_quarantine/day=YYYY-MM-DD/part-0.parquet",
    grain="one row per landed agent report (or whole batch file) of the day that failed validation; never "
    "counted, never dropped silently",
    view="agent_report_quarantine",
    schema=pa.schema(
        [
            col("day", pa.date32(), "the partition the row or file arrived in", False),
            col("source_file", pa.string(), "the file, relative to the lake root", False),
            col("row_number", pa.int64(), "0-based row in the file; null when the whole file was refused"),
            col("server", pa.string(), "the row's server field as sent"),
            col("reporter_id", pa.string(), "the row's reporter_id as sent"),
            col("problem", pa.string(), "why it was refused", False),
            col("row_json", pa.string(), "the refused row, as JSON (null for a refused file)"),
            col("method_version", pa.string(), "report validation rules", False),
        ]
    ),
)

_COUNT_STRUCT = pa.struct([pa.field("value", pa.string()), pa.field("reports", pa.int64())])

RATING_AGGREGATES = TableSpec(
    name="rating_aggregates",
    layer="curated",
    location="curated/rating_aggregates/day=YYYY-MM-DD/part-0.parquet",
    grain="one row per endpoint (scope endpoint) and per endpoint and tool (scope tool) with valid reports "
    "about the 30 days ending that day",
    view="rating_aggregates",
    schema=pa.schema(
        [
            col("day", pa.date32(), "UTC day the window ends on", False),
            col("server_key", pa.string(), "the endpoint", False),
            col("server_id", pa.string(), "first 12 hex of SHA-256(server_key)", False),
            col("scope", pa.string(), "endpoint (all its tools) | tool", False),
            col("tool", pa.string(), "the tool (scope tool); null for scope endpoint"),
            col("reports", pa.int64(), "valid reports in the window", False),
            col("reporters", pa.int64(), "distinct reporters", False),
            col("paid_reporters", pa.int64(), "distinct paying reporters", False),
            col("weight", pa.float64(), "the reports' total weight after recency, paid, agreement and the "
                "per-reporter cap", False),
            col("success_share", pa.float64(), "weighted share of reports that worked", False),
            col("fail_reasons", pa.list_(_COUNT_STRUCT), "reports per fail reason, most first"),
            col("median_ms", pa.float64(), "median ms of the reports that gave one"),
            col("surprises", pa.list_(_COUNT_STRUCT), "reports per surprise, most first"),
            col("stars", pa.float64(), "1 to 5 in half stars (1 + 4 x success_share); null when not enough "
                "independent reporters, including paying ones, reported"),
            col("rating_label", pa.string(), "'N stars' or 'not enough reports'", False),
            col("method_version", pa.string(), "ratings method (weights and thresholds in rules/methods.py)",
                False),
        ]
    ),
)

INCIDENTS = TableSpec(
    name="incidents",
    layer="curated",
    location="curated/incidents/day=YYYY-MM-DD/part-0.parquet",
    grain="one row per endpoint with a live incident that day, one closed that day, or failure reports "
    "that day that nothing confirmed (status unconfirmed: for a person to review, never shown)",
    view="incidents",
    schema=pa.schema(
        [
            col("day", pa.date32(), "UTC day", False),
            col("server_key", pa.string(), "the endpoint", False),
            col("server_id", pa.string(), "first 12 hex of SHA-256(server_key)", False),
            col("status", pa.string(), "live (shown) | closed (closed that day) | unconfirmed (never shown)", False),
            col("shown", pa.bool_(), "true only for live incidents", False),
            col("opened_day", pa.date32(), "first confirmed day of the incident"),
            col("last_confirmed_day", pa.date32(), "latest day a failure was confirmed"),
            col("confirmed_by", pa.string(), "our_check (our own check that day was d) | trusted_reports "
                "(enough paying reporters) | both"),
            col("failure_reporters", pa.int64(), "distinct reporters of a failure about that day", False),
            col("trusted_failure_reporters", pa.int64(), "of those, paying reporters", False),
            col("our_code", pa.string(), "our own day code that day"),
            col("closed_reason", pa.string(), "a check works again | the reports aged out (closed rows)"),
            col("method_version", pa.string(), "incidents method", False),
        ]
    ),
)

RELIABLE_RANKINGS = TableSpec(
    name="reliable_rankings",
    layer="curated",
    location="curated/reliable_rankings/day=YYYY-MM-DD/part-0.parquet",
    grain="one row per eligible endpoint that day, ranked within its category",
    view="reliable_rankings",
    schema=pa.schema(
        [
            col("day", pa.date32(), "UTC day", False),
            col("category", pa.string(), "the endpoint's category that day (never 'other')", False),
            col("rank", pa.int64(), "1 = most reliable in the category; ties share a rank", False),
            col("server_key", pa.string(), "the endpoint", False),
            col("server_id", pa.string(), "first 12 hex of SHA-256(server_key)", False),
            col("server_name", pa.string(), "registry name"),
            col("answered_share", pa.float64(), "answered_days / checked_days over the 30 days (the first key)",
                False),
            col("answered_days", pa.int32(), "o + a + p days in the window", False),
            col("checked_days", pa.int32(), "days not n in the window (at least 14 to be eligible)", False),
            col("uptime_pct", pa.float64(), "answered_share in percent, floored to one decimal", False),
            col("median_handshake_ms", pa.float64(), "median handshake over the window's o days (the second key)"),
            col("method_version", pa.string(), "rankings method", False),
        ]
    ),
)

RAW_READINESS = TableSpec(
    name="readiness",
    layer="raw",
    location="raw/readiness/day=YYYY-MM-DD/<run_id>-<part>.parquet",
    grain="one row per readiness check of one endpoint (the nightly readiness probe; the last of the day "
    "counts). Its own check kind: it never changes a day code",
    view="readiness_checks",
    schema=pa.schema(
        [
            col("day", pa.date32(), "UTC day of the check", False),
            col("run_id", pa.string(), "the readiness run", False),
            col("server_key", pa.string(), "the endpoint (see probes.server_key)", False),
            col("server_id", pa.string(), "first 12 hex of SHA-256(server_key)", False),
            col("server_name", pa.string(), "registry name of the listing"),
            col("url", pa.string(), "the URL as listed (userinfo replaced by REDACTED)"),
            col("origin", pa.string(), "scheme://host[:port] of the URL"),
            col("started_at", UTC_TS, "when the check started (UTC)", False),
            col("round_trip_ms", pa.int32(), "wall time of the check up to its first answer's end (discover or "
                "initialize, or the 401), ms"),
            col("outcome", pa.string(), "as probes.outcome", False),
            col("outcome_detail", pa.string(), "human-readable detail of the outcome"),
            col("skip_reason", pa.string(), "why the endpoint was not contacted (outcome skipped)"),
            col("http_status", pa.int32(), "HTTP status of the decisive response"),
            col("answered_via", pa.string(), "discover | initialize | 401 | none (contacted, no such answer); "
                "null when not contacted or our own fault"),
            col("redirects_followed", pa.int32(), "redirects followed before the answer (the rule allows one)"),
            col("protocol_version", pa.string(), "protocol revision the server answered with"),
            col("server_info_name", pa.string(), "serverInfo.name"),
            col("server_info_version", pa.string(), "serverInfo.version"),
            col("tools_json", pa.string(), "the first tools/list result's tools array, compact JSON"),
            col("tool_count", pa.int32(), "tools listed"),
            col("required_arguments", pa.int32(), "required arguments over all tools (inputSchema.required)"),
            col("definition_tokens", pa.int32(), "o200k_base tokens of tools_json (whitespace removed)"),
            col("tools_hash", pa.string(), "SHA-256 over the canonical tool fingerprints (churn)"),
            col("second_tool_names_json", pa.string(), "the tool names of the second tools/list, in order, JSON "
                "(null: the second listing failed, so the order is unseen)"),
            col("ttl_ms", pa.int64(), "ttlMs of the tools/list result (non-negative integer, else null)"),
            col("cache_scope", pa.string(), "cacheScope of the tools/list result"),
            col("www_authenticate", pa.string(), "WWW-Authenticate of a 401/403"),
            col("resource_metadata_url", pa.string(), "its RFC 9728 resource_metadata URL"),
            col("publisher_domain", pa.string(), "where /llms.txt and the markdown door were looked for: the "
                "namespace's domain for a reverse-DNS name, else the URL host's registrable domain"),
            col("repository_url", pa.string(), "the registry entry's repository.url"),
            col("repo_private", pa.bool_(), "the code host's `private` (null: not read)"),
            col("repo_archived", pa.bool_(), "the code host's `archived`"),
            col("repo_pushed_at", pa.string(), "the code host's `pushed_at`"),
            col("repo_detail", pa.string(), "why the repository could not be read, when it could not"),
            col("prober_version", pa.string(), "version of the prober"),
        ]
    ),
)

RAW_READINESS_SURFACES = TableSpec(
    name="readiness_surfaces",
    layer="raw",
    location="raw/readiness_surfaces/day=YYYY-MM-DD/<run_id>-<part>.parquet",
    grain="one row per document the readiness probe asked for: per endpoint (its server card, its RFC 9728 "
    "metadata), per origin (the card paths seen in the wild) and per publisher domain (catalog, /llms.txt, "
    "markdown door, the registry's HTTP proof file)",
    view="readiness_surfaces",
    schema=pa.schema(
        [
            col("day", pa.date32(), "UTC day", False),
            col("run_id", pa.string(), "the readiness run", False),
            col("scope", pa.string(), "endpoint | origin | domain", False),
            col("subject", pa.string(), "the endpoint's server_key, the origin, or the domain", False),
            col("surface", pa.string(), "server_card | resource_metadata | well_known_server_card | "
                "well_known_mcp_json | catalog | llms_txt | markdown_negotiated | markdown_index | registry_auth",
                False),
            col("url", pa.string(), "what was requested", False),
            col("accept", pa.string(), "the Accept header sent"),
            col("requested_at", UTC_TS, "when (UTC)", False),
            col("status", pa.int32(), "HTTP status (null: no answer, or not asked: see detail)"),
            col("content_type", pa.string(), "Content-Type of the answer"),
            col("body", pa.string(), "the answer when 200 (first 64 KiB, UTF-8 with replacement)"),
            col("detail", pa.string(), "what happened (robots.txt disallows, timeout, redirect not followed...)"),
            col("prober_version", pa.string(), "version of the prober"),
        ]
    ),
)

RAW_SKILLS = TableSpec(
    name="skills",
    layer="raw",
    location="raw/skills/day=YYYY-MM-DD/<run_id>-<part>.parquet",
    grain="one row per skill folder of the skills list read that day (SKILL.md through the code host)",
    view="skill_checks",
    schema=pa.schema(
        [
            col("day", pa.date32(), "UTC day", False),
            col("run_id", pa.string(), "the readiness run", False),
            col("skill_key", pa.string(), "the folder: github.com/<owner>/<repo>/<path>", False),
            col("folder_url", pa.string(), "https://github.com/<owner>/<repo>/tree/<ref>/<path>", False),
            col("folder_name", pa.string(), "the folder's own name (what the frontmatter name must match)", False),
            col("requested_at", UTC_TS, "when (UTC)", False),
            col("skill_md", pa.string(), "SKILL.md as fetched (UTF-8; null when not fetched)"),
            col("skill_md_detail", pa.string(), "why SKILL.md was not fetched, when it was not"),
            col("repo_private", pa.bool_(), "the code host's `private` (null: not read)"),
            col("repo_archived", pa.bool_(), "the code host's `archived`"),
            col("repo_pushed_at", pa.string(), "the code host's `pushed_at`"),
            col("repo_detail", pa.string(), "why the repository could not be read, when it could not"),
            col("prober_version", pa.string(), "version of the prober"),
        ]
    ),
)

READINESS_DISCOVERY = TableSpec(
    name="readiness_discovery",
    layer="curated",
    location="curated/readiness_discovery/day=YYYY-MM-DD/part-0.parquet",
    grain="one row per endpoint with a readiness check that day and discovery surface asked for it (its own, "
    "its origin's and its publisher domain's)",
    view="readiness_discovery",
    schema=pa.schema(
        [
            col("day", pa.date32(), "UTC day", False),
            col("server_key", pa.string(), "the endpoint", False),
            col("server_id", pa.string(), "first 12 hex of SHA-256(server_key)", False),
            col("server_name", pa.string(), "registry name"),
            col("surface", pa.string(), "as readiness_surfaces.surface", False),
            col("scope", pa.string(), "endpoint | origin | domain", False),
            col("url", pa.string(), "what was requested", False),
            col("answered", pa.bool_(), "it answered with the document (see the method: status 200 and the "
                "expected kind of content)", False),
            col("status", pa.int32(), "HTTP status (null: no answer or not asked)"),
            col("detail", pa.string(), "why it did not answer, or what it is"),
            col("card_name", pa.string(), "a server card's server name"),
            col("card_version", pa.string(), "a server card's server version"),
            col("card_protocol_versions", pa.string(), "a server card's protocol versions, comma-separated"),
            col("disagreement", pa.string(), "where the card disagrees with what the server answered (name, "
                "version, protocol version); null when it agrees or cannot be compared"),
            col("method_version", pa.string(), "discovery method", False),
        ]
    ),
)

READINESS_LINES = TableSpec(
    name="readiness_lines",
    layer="curated",
    location="curated/readiness_lines/day=YYYY-MM-DD/part-0.parquet",
    grain="one row per rubric line of each MCP endpoint with a readiness check that day and of each skill "
    "read that day",
    view="readiness_lines",
    schema=pa.schema(
        [
            col("day", pa.date32(), "UTC day", False),
            col("subject_kind", pa.string(), "mcp | skill", False),
            col("subject_key", pa.string(), "the endpoint's server_key, or the skill's skill_key", False),
            col("server_id", pa.string(), "first 12 hex of SHA-256(server_key) (MCP only)"),
            col("server_name", pa.string(), "registry name (MCP), or the skill's folder URL"),
            col("rubric_version", pa.string(), "mcp-2026-09-11.1 | skill-2026-09-11.1", False),
            col("section", pa.string(), "the rubric's section", False),
            col("line", pa.string(), "the line's stable key", False),
            col("line_order", pa.int32(), "the line's place in its rubric, from 1", False),
            col("label", pa.string(), "the line as the rubric words it", False),
            col("max_points", pa.float64(), "what the line is worth", False),
            col("seen", pa.bool_(), "the probe could see it (an unseen line counts on neither side)", False),
            col("passed", pa.bool_(), "it passed (false when unseen)", False),
            col("points", pa.float64(), "points earned (0 when unseen; sliding lines to 0.01)", False),
            col("evidence", pa.string(), "what was seen, or why it could not be", False),
        ]
    ),
)

READINESS_SCORES = TableSpec(
    name="readiness_scores",
    layer="curated",
    location="curated/readiness_scores/day=YYYY-MM-DD/part-0.parquet",
    grain="one row per MCP endpoint with a readiness check that day and per skill read that day",
    view="readiness_scores",
    schema=pa.schema(
        [
            col("day", pa.date32(), "UTC day", False),
            col("subject_kind", pa.string(), "mcp | skill", False),
            col("subject_key", pa.string(), "as readiness_lines.subject_key", False),
            col("server_id", pa.string(), "first 12 hex of SHA-256(server_key) (MCP only)"),
            col("server_name", pa.string(), "registry name (MCP), or the skill's folder URL"),
            col("rubric_version", pa.string(), "the rubric version of every line summed", False),
            col("reachable_earned", pa.float64(), "Reachable: points earned", False),
            col("reachable_possible", pa.float64(), "Reachable: points of its seen lines", False),
            col("speaks_earned", pa.float64(), "Speaks the protocol (MCP) / the format (skills): earned", False),
            col("speaks_possible", pa.float64(), "... possible", False),
            col("cheap_earned", pa.float64(), "Cheap to hold: earned", False),
            col("cheap_possible", pa.float64(), "... possible", False),
            col("honest_earned", pa.float64(), "Honest: earned", False),
            col("honest_possible", pa.float64(), "... possible", False),
            col("trustworthy_earned", pa.float64(), "Trustworthy: earned", False),
            col("trustworthy_possible", pa.float64(), "... possible", False),
            col("earned", pa.float64(), "total earned", False),
            col("possible", pa.float64(), "total possible: the points of the lines seen (100 when all were)", False),
            col("score", pa.string(), "earned/possible as shown, e.g. 61/85", False),
            col("lines_seen", pa.int32(), "lines seen", False),
            col("lines_unseen", pa.int32(), "lines the probe could not see", False),
        ]
    ),
)

# The frequent checks (probe/frequent.py): the daily check's row, in their own raw kinds, never covered by
# roots and never read by a day code or uptime.
RAW_HOURLY = dataclasses.replace(
    RAW_PROBES, name="hourly", location="raw/hourly/day=YYYY-MM-DD/<run_id>.parquet", view="hourly_checks",
    grain="one row per hourly check of one of the most used endpoints (check_kind hourly); not covered by roots")
RAW_FIVE_MINUTE = dataclasses.replace(
    RAW_PROBES, name="five_minute", location="raw/five_minute/day=YYYY-MM-DD/<run_id>.parquet",
    view="five_minute_checks", grain="one row per five-minute check of an endpoint its owner chose (check_kind "
    "five_minute; skipped = not reached in time, never down); not covered by roots")

RAW_PACKAGES = TableSpec(
    name="packages", layer="raw", location="raw/packages/day=YYYY-MM-DD/<run_id>.parquet",
    grain="one row per npm or PyPI package that the day's registry entries ship, as looked up that day "
    "(public metadata, then its version against OSV)", view="raw_packages",
    schema=pa.schema([
        col("day", pa.date32(), "UTC day of the lookup (equals the folder's day=)", False),
        col("looked_up_at", UTC_TS, "when (UTC)", False),
        col("registry_type", pa.string(), "npm | pypi", False),
        col("package", pa.string(), "the package name (identifier)", False),
        col("version", pa.string(), "the version the registry entries ship (the highest listed)"),
        col("server_names", pa.list_(pa.string()), "the registry entries that ship it"),
        col("latest_version", pa.string(), "the package registry's latest version (npm dist-tags.latest, PyPI "
            "info.version)"),
        col("latest_published_at", pa.string(), "when the latest version was published, as the package registry "
            "says"),
        col("metadata_status", pa.string(), "ok, or why the metadata is unseen", False),
        col("osv_status", pa.string(), "ok, or why the advisories are unseen", False),
        col("checked_version", pa.string(), "the version checked against OSV (the listed one, else the latest)"),
        col("advisory_ids", pa.list_(pa.string()), "OSV ids of the advisories affecting that version"),
        col("advisories_json", pa.string(), "per advisory: id, severity, fixed versions, summary (JSON)"),
    ]),
)

RAW_DOMAINS = TableSpec(
    name="domains", layer="raw", location="raw/domains/day=YYYY-MM-DD/<run_id>.parquet",
    grain="one row per RDAP lookup of a registrable domain of the map (refreshed rarely: a domain with a "
    "record younger than the refresh window is not looked up again)", view="raw_domains",
    schema=pa.schema([
        col("day", pa.date32(), "UTC day of the lookup", False),
        col("looked_up_at", UTC_TS, "when (UTC)", False),
        col("domain", pa.string(), "the registrable domain (Public Suffix List)", False),
        col("registered_at", UTC_TS, "the RDAP record's registration event date"),
        col("status", pa.string(), "ok, or why there is no date", False),
        col("rdap_url", pa.string(), "the RDAP URL asked (from IANA's bootstrap)"),
    ]),
)

PACKAGE_ADVISORIES = TableSpec(
    name="package_advisories", layer="curated",
    location="curated/package_advisories/day=YYYY-MM-DD/part-0.parquet",
    grain="one row per package and UTC day: the advisories OSV lists for the version the registry ships",
    view="package_advisories",
    schema=pa.schema([
        col("day", pa.date32(), "UTC day", False),
        col("registry_type", pa.string(), "npm | pypi", False),
        col("package", pa.string(), "the package name", False),
        col("version", pa.string(), "the version the registry entries ship"),
        col("checked_version", pa.string(), "the version checked against OSV"),
        col("latest_version", pa.string(), "the package registry's latest version"),
        col("server_names", pa.list_(pa.string()), "the registry entries that ship it"),
        col("advisories", pa.int32(), "advisories affecting the checked version (null when unseen)"),
        col("advisory_ids", pa.list_(pa.string()), "their OSV ids"),
        col("severities", pa.list_(pa.string()), "their severities, in the order of advisory_ids"),
        col("fixed_versions", pa.list_(pa.string()), "versions that fix at least one of them"),
        col("max_severity", pa.string(), "CRITICAL | HIGH | MODERATE | LOW | (a CVSS vector) | null"),
        col("lookup_status", pa.string(), "ok, or why the advisories or the metadata are unseen", False),
        col("method_version", pa.string(), "version of the advisory rules", False),
    ]),
)

DOMAIN_AGES = TableSpec(
    name="domain_ages", layer="curated", location="curated/domain_ages/day=YYYY-MM-DD/part-0.parquet",
    grain="one row per registrable domain of the endpoints on the map that UTC day, with its registration date "
    "from RDAP (the latest record within the refresh window)", view="domain_ages",
    schema=pa.schema([
        col("day", pa.date32(), "UTC day", False),
        col("domain", pa.string(), "the registrable domain", False),
        col("endpoints", pa.int32(), "endpoints on the map under it", False),
        col("registered_at", UTC_TS, "registration date (RDAP), null when unseen"),
        col("age_days", pa.int32(), "days from registration to the day"),
        col("young", pa.bool_(), "registered fewer than young_days days before (the route's caution rule); null "
            "when unseen"),
        col("looked_up_on", pa.date32(), "the day of the record used"),
        col("status", pa.string(), "ok, or why the age is unseen (never looked up, or the lookup's reason)", False),
        col("method_version", pa.string(), "version of the domain-age rule", False),
    ]),
)

FAILURE_REASONS = TableSpec(
    name="failure_reasons", layer="curated", location="curated/failure_reasons/day=YYYY-MM-DD/part-0.parquet",
    grain="one row per failure class and UTC day (every class, 0 when none): the day's failed daily checks "
    "(day code d) by the classes the Agent-Ready directory publishes", view="failure_reasons",
    schema=pa.schema([
        col("day", pa.date32(), "UTC day", False),
        col("reason_class", pa.string(), "http_4xx | unreachable | http_5xx | timeout | not_mcp | rate_limited | "
            "refused | redirect", False),
        col("label", pa.string(), "the class in words, as the Agent-Ready directory words it", False),
        col("position", pa.int32(), "the class's place in that list, from 1", False),
        col("failed_checks", pa.int64(), "endpoints whose deciding daily check that day failed this way", False),
        col("share", pa.float64(), "failed_checks / all failed checks of the day (null when none failed)"),
        col("method_version", pa.string(), "version of the failure classes", False),
    ]),
)

RAW_SUBMITTED = dataclasses.replace(
    RAW_PROBES, name="submitted", location="raw/submitted/day=YYYY-MM-DD/<run_id>.parquet",
    view="submission_checks", grain="one row per check of a submitted server during its 7 days (check_kind "
    "submitted); not covered by roots: it is not on the map yet")


def _frequent_days(kind: str, view: str) -> TableSpec:
    return TableSpec(
        name=f"{kind}_days", layer="aggregate", location=f"aggregates/{kind}/day=YYYY-MM-DD/part-0.parquet",
        grain=f"one row per endpoint and finished UTC day of raw/{kind}: what retention keeps once the day's "
        "batches are deleted (lake/retention.py); not covered by roots", view=view,
        schema=pa.schema([
            col("day", pa.date32(), "UTC day", False),
            col("check_kind", pa.string(), "hourly | five_minute | sensors", False),
            col("server_key", pa.string(), "the endpoint", False),
            col("checks", pa.int64(), "checks that day", False),
            col("counted", pa.int64(), "checks with a result (not skipped, not our own fault)", False),
            col("answered", pa.int64(), "checks answered ok, needs_auth or http_402", False),
            col("first_check_at", UTC_TS, "first check of the day"),
            col("last_check_at", UTC_TS, "last check of the day"),
            col("batches", pa.int64(), "raw batches summed", False),
            col("method_version", pa.string(), "version of the aggregate (frequent-days-1.0)", False),
        ]))


HOURLY_DAYS = _frequent_days("hourly", "hourly_check_days")
FIVE_MINUTE_DAYS = _frequent_days("five_minute", "five_minute_check_days")

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


def table_of(rel_path: str) -> TableSpec | None:
    """The table a lake file (path relative to the lake root) belongs to."""
    folder = rel_path.split("/day=", 1)[0]
    for spec in ALL_TABLES:
        if spec.location.split("/day=", 1)[0] == folder:
            return spec
    return None

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


def conform(table: pa.Table, spec: TableSpec) -> pa.Table:
    """Select and cast columns into the spec's schema (missing nullable columns become nulls)."""
    columns = []
    for field in spec.schema:
        if field.name in table.column_names:
            columns.append(table.column(field.name).cast(field.type))
        elif field.nullable:
            columns.append(pa.nulls(table.num_rows, field.type))
        else:
            raise ValueError(f"{spec.name}: required column {field.name!r} is missing")
    return pa.Table.from_arrays(columns, schema=spec.schema)


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
    return "\n".join(out) + "\n"
