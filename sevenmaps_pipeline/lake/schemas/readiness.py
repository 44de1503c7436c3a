"""The readiness probe's raw tables and the rubric's tables."""

from __future__ import annotations

import pyarrow as pa

from .spec import UTC_TS, TableSpec, col

RAW_READINESS = TableSpec(
    name="readiness",
    layer="raw",
    location="raw/readiness/day=YYYY-MM-DD/<run_id>-<part>.parquet",
    grain="one row per readiness check of one endpoint (the readiness probe after its slice; the last of the day "
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
            col("round_trip_ms", pa.int32(), "ms from sending the request whose answer decided how the endpoint "
                "answered (discover, initialize or the 401) to its answer's end (mcp-2026-09-11.5; before: from the "
                "check's start to its first answer of any kind)"),
            col("outcome", pa.string(), "as probes.outcome", False),
            col("outcome_detail", pa.string(), "human-readable detail of the outcome"),
            col("skip_reason", pa.string(), "why the endpoint was not contacted (outcome skipped)"),
            col("http_status", pa.int32(), "HTTP status of the decisive response"),
            col("answered_via", pa.string(), "discover | initialize (the handshake whose result was accepted, "
                "even when tools/list failed after it, or was refused by the address guard: outcome skipped) | 401 | "
                "none (contacted, no such answer); null when not "
                "contacted or our own fault"),
            col("redirects_followed", pa.int32(), "redirects followed (the redirect rule allows one per step): "
                "before the answer, or a same-domain hop followed on the second tools/list; null when no answer "
                "was seen and none was followed"),
            col("later_redirect", pa.string(), "a redirect not followed on a request after the first tools/list "
                "(the second tools/list, an operator's bad call): what it was; it changes no outcome and fails "
                "\"https, with no redirect chain\" (null: none)"),
            col("protocol_version", pa.string(), "protocol revision the server answered with (served): 2026-07-28 when "
                "server/discover answered, else initialize's protocolVersion; null unless that handshake's result was "
                "accepted (a tools/list that failed after it keeps it)"),
            col("claimed_versions", pa.string(), "revisions the server said it supports in the answers of this check, "
                "comma-separated, whatever it served: server/discover's supportedVersions and an "
                "UnsupportedProtocolVersion error's data.supported (null: it claimed none; a card's claims are in "
                "readiness_discovery.card_protocol_versions)"),
            col("skills_extension", pa.bool_(), "the capabilities of the handshake that answered declare "
                "extensions[\"io.modelcontextprotocol/skills\"] (an object); null: no capabilities object seen"),
            col("skills_count", pa.int32(), "skills listed by that declaration itself (a `skills` array in it); "
                "null when it lists none (never asked for: no skills/list request is made)"),
            col("server_info_name", pa.string(), "serverInfo.name"),
            col("server_info_version", pa.string(), "serverInfo.version"),
            col("tools_json", pa.string(), "the first tools/list result's tools array, compact JSON"),
            col("tool_count", pa.int32(), "tools listed"),
            col("tool_list_complete", pa.bool_(), "false when the tool list was not read to its end (the page limit, a "
                "later page that answered with an error, a cursor that repeats or is not a string): the lines that "
                "need the whole list are then unseen; null on rows landed before it was kept (read as whole)"),
            col("required_arguments", pa.int32(), "required arguments over all tools (inputSchema.required)"),
            col("definition_tokens", pa.int32(), "o200k_base tokens of the list, counted by the probe as the map "
                "counts them (rules/tokens.py; rows before o200k_base-1.1 counted tools_json as sent)"),
            col("tools_hash", pa.string(), "SHA-256 over the canonical tool fingerprints (churn)"),
            col("second_tool_names_json", pa.string(), "the tool names of the second tools/list, in order, JSON "
                "(null: the second listing failed, so the order is unseen)"),
            col("ttl_ms", pa.int64(), "ttlMs of the tools/list result, in either era (non-negative integer, else "
                "null; null when a later page lacks ttlMs or cacheScope)"),
            col("cache_scope", pa.string(), "cacheScope of the tools/list result, in either era (null as ttl_ms)"),
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
                "well_known_mcp_json | ai_catalog | catalog | llms_txt | markdown_negotiated | markdown_index | "
                "registry_auth", False),
            col("url", pa.string(), "what was requested", False),
            col("accept", pa.string(), "the Accept header sent"),
            col("requested_at", UTC_TS, "when (UTC)", False),
            col("status", pa.int32(), "HTTP status (null: no answer, or not asked: see detail)"),
            col("content_type", pa.string(), "Content-Type of the answer"),
            col("body", pa.string(), "the answer when 200 (first 64 KiB, UTF-8 with replacement); on a 304 that "
                "revalidated a card, the card kept"),
            col("detail", pa.string(), "what happened (robots.txt disallows, timeout, redirect not followed...)"),
            col("prober_version", pa.string(), "version of the prober"),
            col("etag", pa.string(), "the answer's ETag (visible ASCII, at most 300 characters; else null); on a "
                "kept card, its ETag"),
            col("if_none_match", pa.string(), "the ETag sent as If-None-Match (server cards only; null: asked "
                "unconditionally)"),
            col("body_sha256", pa.string(), "SHA-256 hex of body as stored (the kept card's on a revalidating 304)"),
            col("revalidation", pa.string(), "a card asked for conditionally: not_modified (304 to our "
                "If-None-Match: the card kept) | modified (200: a new card) | unasked_304 (304 though no "
                "If-None-Match was sent: no card); null otherwise"),
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
            col("served_version", pa.string(), "the revision the server served in its check that day (as "
                "readiness_checks.protocol_version), beside what a card claims"),
            col("revalidation", pa.string(), "as readiness_surfaces.revalidation: not_modified is a card kept by "
                "a 304 (judged as the card it kept)"),
            col("body_sha256", pa.string(), "SHA-256 hex of the document (the kept card's on a 304)"),
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
            col("rubric_version", pa.string(), "mcp-2026-09-11.5 | skill-2026-09-11.2", False),
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
