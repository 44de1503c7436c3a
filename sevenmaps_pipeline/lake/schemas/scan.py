"""The scan's tables: raw probes, the registry snapshot, origins, the quarantine, and the frequent
checks' raw kinds and their daily aggregates."""

from __future__ import annotations

import dataclasses

import pyarrow as pa

from .spec import UTC_TS, TableSpec, col

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
                "not_checked (we could not check fairly: prober_overloaded, prober_resources, robots_unavailable); "
                "the last two make the day code n, never d", False),
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
                "was not made fairly (outcome not_checked: prober_overloaded | prober_resources | robots_unavailable)"),
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
          "failed fetch is tried again): robots.txt and the three well-known documents; and the robots.txt a "
          "readiness run read on a host the scan never reads (a publisher domain, an authorization server; run_id "
          "readiness-...), its well-known columns null",
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


# The frequent checks (probe/frequent.py): the daily check's row, in their own raw kinds, never covered by
# roots and never read by a day code or uptime.
RAW_HOURLY = dataclasses.replace(
    RAW_PROBES, name="hourly", location="raw/hourly/day=YYYY-MM-DD/<run_id>.parquet", view="hourly_checks",
    grain="one row per hourly check of one of the most used endpoints (check_kind hourly); not covered by roots")
RAW_FIVE_MINUTE = dataclasses.replace(
    RAW_PROBES, name="five_minute", location="raw/five_minute/day=YYYY-MM-DD/<run_id>.parquet",
    view="five_minute_checks", grain="one row per five-minute check of an endpoint its owner chose (check_kind "
    "five_minute; skipped = not reached in time, never down); not covered by roots")


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
