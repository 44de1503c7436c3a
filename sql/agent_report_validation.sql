-- agent_report_validation: every agent report that arrived on $day, with `problem` (NULL when usable),
-- the endpoint it resolves to and how it compares with our own check of the day it is about.
-- Grain: one row per raw report row.
-- Inputs: raw_agent_reports (the day's batches, files already checked for readability and fixed columns);
--         endpoints (server_key, server_id of every endpoint on the map in the $max_age_days before $day);
--         daily_status (our day codes over the same days).
-- Method ($method_version, sevenmaps_pipeline/rules/methods.py REPORTS_PARAMS): reports carry the methodology's fixed
-- fields only. An unknown enum, a negative figure, free text where a tool name belongs, an unknown server,
-- or a reporter id that is not a keyed hash is refused with its reason: never counted, never dropped.
-- Agreement: a report that worked agrees with an o day and disagrees with a d day; a failure we can see
-- ($checkable) agrees with a d day and disagrees with o/a/p; an auth failure agrees with an a day; anything
-- else, or a day we have no check for, is unchecked.
-- Never text in an agent's own words: a string field that is not what its field allows (an enum value, a
-- tool name, a hex digest, an endpoint key or id) is kept as "<N characters withheld>" in safe_* columns,
-- which the problem texts and the quarantine use; the words themselves are never stored.
-- A value already withheld (its batch's words replaced when the day was first built, reports-1.2) reads
-- as it is, so a day built again refuses it with the same words.
WITH ids AS (
    SELECT server_id, any_value(server_key) AS server_key, count(*) AS endpoints FROM endpoints GROUP BY server_id
),
resolved AS (
    SELECT r.*,
           coalesce(k.server_key, CASE WHEN i.endpoints = 1 THEN i.server_key END) AS server_key,
           i.endpoints > 1 AS ambiguous_id
    FROM raw_agent_reports AS r
    LEFT JOIN endpoints AS k ON k.server_key = r.server
    LEFT JOIN ids AS i ON i.server_id = lower(r.server)
),
safe AS (
    SELECT r.*,
           CASE WHEN r.fail IS NULL OR regexp_full_match(r.fail, $withheld) OR list_contains($fail_reasons, r.fail)
                THEN r.fail ELSE '<' || length(r.fail) || ' characters withheld>' END AS safe_fail,
           CASE WHEN r.surprise IS NULL OR regexp_full_match(r.surprise, $withheld)
                     OR list_contains($surprises, r.surprise)
                THEN r.surprise ELSE '<' || length(r.surprise) || ' characters withheld>' END AS safe_surprise,
           CASE WHEN r.tool IS NULL OR regexp_full_match(r.tool, $withheld) OR regexp_full_match(r.tool, $tool_pattern)
                THEN r.tool ELSE '<' || length(r.tool) || ' characters withheld>' END AS safe_tool,
           CASE WHEN r.server IS NULL OR regexp_full_match(r.server, $withheld) OR r.server_key IS NOT NULL
                     OR (length(r.server) <= 300 AND regexp_full_match(r.server, '[a-z0-9.-]+(/[A-Za-z0-9._~/-]*)?'))
                THEN r.server ELSE '<' || length(r.server) || ' characters withheld>' END AS safe_server,
           CASE WHEN r.tools_hash IS NULL OR regexp_full_match(r.tools_hash, $withheld)
                     OR regexp_full_match(r.tools_hash, '[0-9a-f]{64}')
                THEN r.tools_hash ELSE '<' || length(r.tools_hash) || ' characters withheld>' END AS safe_tools_hash,
           CASE WHEN r.reporter_id IS NULL OR regexp_full_match(r.reporter_id, $withheld)
                     OR regexp_full_match(r.reporter_id, '[0-9a-f]{64}')
                THEN r.reporter_id ELSE '<' || length(r.reporter_id) || ' characters withheld>' END AS safe_reporter_id
    FROM resolved AS r
),
checked AS (
    SELECT r.*,
           CASE
               WHEN r.reporter_id IS NULL OR NOT regexp_full_match(r.reporter_id, '[0-9a-f]{64}')
                   THEN 'reporter_id is not a keyed hash (64 lower-case hex): reports never carry an IP address '
                        || 'or a name'
               WHEN r.day IS NULL OR r.day::VARCHAR <> regexp_extract(r.source_file, 'day=(\d{4}-\d{2}-\d{2})', 1)
                   THEN 'day ' || coalesce(r.day::VARCHAR, 'NULL') || ' does not match its partition folder'
               WHEN r.about_day IS NULL THEN 'missing about_day'
               WHEN r.about_day > r.day THEN 'about a day (' || r.about_day || ') after the day it arrived'
               WHEN r.about_day < r.day - $max_age_days::INTEGER
                   THEN 'about a day (' || r.about_day || ') more than ' || $max_age_days || ' days before it arrived'
               WHEN r.server IS NULL OR r.server = '' THEN 'missing server'
               WHEN r.ambiguous_id THEN 'server id ' || r.safe_server || ' names more than one endpoint'
               WHEN r.server_key IS NULL THEN 'unknown server ' || left(r.safe_server, 80)
               WHEN r.ok IS NULL THEN 'missing ok'
               WHEN r.paid IS NULL THEN 'missing paid'
               WHEN r.fail IS NOT NULL AND NOT list_contains($fail_reasons, r.fail)
                   THEN 'unknown fail reason ''' || r.safe_fail || ''''
               WHEN r.ok AND r.fail IS NOT NULL THEN 'a fail reason for a call that worked'
               WHEN NOT r.ok AND r.fail IS NULL THEN 'no fail reason for a call that failed'
               WHEN r.surprise IS NOT NULL AND NOT list_contains($surprises, r.surprise)
                   THEN 'unknown surprise ''' || r.safe_surprise || ''''
               WHEN r.tool IS NOT NULL AND NOT regexp_full_match(r.tool, $tool_pattern)
                   THEN 'tool is not a tool name (free text is never accepted): ''' || r.safe_tool || ''''
               WHEN r.tools_hash IS NOT NULL AND NOT regexp_full_match(r.tools_hash, '[0-9a-f]{64}')
                   THEN 'tools_hash is not a SHA-256 hex digest'
               WHEN r.ms < 0 THEN 'negative ms'
               WHEN r.result_tokens < 0 THEN 'negative result_tokens'
               WHEN r.charged_usd < 0 OR isnan(r.charged_usd) OR isinf(r.charged_usd)
                   THEN 'negative or non-finite charged_usd'
           END AS problem
    FROM safe AS r
)
SELECT
    c.*,
    s.code AS our_code,
    CASE
        WHEN c.problem IS NOT NULL OR s.code IS NULL OR s.code = 'n' THEN 'unchecked'
        WHEN c.ok AND s.code = 'o' THEN 'agrees'
        WHEN c.ok AND s.code = 'd' THEN 'disagrees'
        WHEN NOT c.ok AND list_contains($checkable, c.fail) AND s.code = 'd' THEN 'agrees'
        WHEN NOT c.ok AND list_contains($checkable, c.fail) THEN 'disagrees'
        WHEN NOT c.ok AND c.fail = 'auth' AND s.code = 'a' THEN 'agrees'
        ELSE 'unchecked'
    END AS agreement
FROM checked AS c
LEFT JOIN daily_status AS s ON s.server_key = c.server_key AND s.day = c.about_day
