"""Agents' reports, the ratings and incidents built from them, and the reliable rankings."""

from __future__ import annotations

import pyarrow as pa

from .spec import TableSpec, col

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
    grain="one row per endpoint with a live incident that day, one closed that day (by a check, the reports "
    "ageing out or a person's review), or failure reports that day that nothing confirmed (status unconfirmed: "
    "for a person to review, never shown)",
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
                "(enough paying reporters) | both | our_fresh_check (a person confirmed the reports on a check "
                "of ours that day, hourly or five-minute, that did not answer)"),
            col("failure_reporters", pa.int64(), "distinct reporters of a failure about that day", False),
            col("trusted_failure_reporters", pa.int64(), "of those, paying reporters", False),
            col("our_code", pa.string(), "our own day code that day"),
            col("closed_reason", pa.string(), "a check works again | the reports aged out | a person closed it "
                "after review (closed rows)"),
            col("closed_by", pa.string(), "who closed it, as they named themselves (closed by a person)"),
            col("closed_at", pa.timestamp("us", tz="UTC"), "when the person closed it (closed by a person)"),
            col("closed_note", pa.string(), "why, in the reviewer's words (closed by a person)"),
            col("confirmed_check_at", pa.timestamp("us", tz="UTC"), "when the check of ours a person confirmed "
                "the reports on was made (confirmed_by our_fresh_check)"),
            col("confirmed_reviewer", pa.string(), "who confirmed them on that check (confirmed_by our_fresh_check)"),
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
            col("tools_share", pa.float64(), "tools_days / checked_days over the 30 days (the first key)"),
            col("tools_days", pa.int32(), "days in the window answered with tools: o days whose list had at "
                "least one tool (reliable-1.3; o days in rows of reliable-1.2 and before)"),
            col("answered_share", pa.float64(), "answered_days / checked_days over the 30 days (the second key)",
                False),
            col("answered_days", pa.int32(), "o + a + p days in the window", False),
            col("checked_days", pa.int32(), "days not n in the window (at least 14 to be eligible)", False),
            col("uptime_pct", pa.float64(), "answered_share in percent, floored to one decimal", False),
            col("median_handshake_ms", pa.float64(), "median handshake over the window's o days (the third key)"),
            col("method_version", pa.string(), "rankings method + the categories method that placed the endpoint "
                "(reliable-1.3+categories-1.7)", False),
        ]
    ),
)
