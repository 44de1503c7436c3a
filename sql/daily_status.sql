-- daily_status: one row per endpoint on the map on day $day, with its day code.
-- Inputs:
--   probe_validation  raw probe rows of $day and of the $lookback_days days before (sql/probe_validation.sql);
--                     rows with a problem never count (raw_probes and probe_problem, the view's rows and
--                     rules, where only some endpoints' rows are wanted)
--   registry          the registry snapshot in force on $day (the latest one on or before it), and
--   naming_listings   its listing that names each endpoint (sql/naming_listings.sql)
-- Method ($method_version, parameters in sevenmaps_pipeline/rules/methods.py):
--   * only daily checks count (hourly, five-minute and control checks never decide a day code);
--   * the last completed valid daily check of the UTC day decides: ok -> o, needs_auth -> a,
--     http_402 -> p, any other outcome -> d;
--   * a run whose control check failed is voided, and so are the network failures (timeout/unreachable)
--     in any minute of a run where most checks of many unrelated origins failed that way: our outage, not
--     theirs; a prober_error check (our own code failed) is voided too, and so is a not_checked one (we
--     could not check fairly: the prober overloaded, robots.txt unavailable). An endpoint left with no valid
--     check is n, never d. A skip is a listing decision, not a network result: it is never voided, so a
--     voided run never brings a skipped listing back onto the map;
--   * on the map: endpoints checked today and not skipped, plus endpoints listed in the registry in force
--     (listing 'probe') whose last check in the lookback was not a skip; without a valid check they are n;
--   * HTTP 400/405 and non-MCP answers keep code d but show "answers, but not as a standard MCP endpoint";
--     an o whose tool list is empty keeps code o but shows "answers, lists no tools";
--   * the deciding check's unfollowed redirect target and the payTo addresses of a 402 body are kept for
--     tool_changes (sql/tool_changes.sql);
--   * an endpoint's name, version and URL are those of one listing of the registry in force, the same whether
--     or not it was checked that day (1.3): its first active listing by name (any listing when none is active);
--     an endpoint no listing names keeps its check's (docs/methodology.md, "Its name").
WITH today AS (
    -- Named columns: this CTE is used several times, so DuckDB materialises it; tools_json is not needed.
    SELECT day, check_kind, run_id, server_key, server_name, server_version, url, origin, started_at,
           handshake_ms, outcome, outcome_detail, http_status, protocol_version, server_info_name,
           server_info_version, tool_count, tool_list_size, tools_hash, redirect_location, payment_json
    FROM probe_validation
    WHERE problem IS NULL AND day = $day::DATE
),
voided_runs AS (
    SELECT run_id,
           'run voided: its control check failed (' || any_value(coalesce(outcome_detail, outcome)) || ')'
               AS void_reason
    FROM today
    WHERE check_kind = 'control' AND outcome <> 'ok'
    GROUP BY run_id
),
minutes AS (
    SELECT run_id, date_trunc('minute', started_at) AS minute,
           count(*) AS checks,
           count(DISTINCT origin) AS origins,
           count(*) FILTER (WHERE outcome IN ('timeout', 'unreachable')) AS network_failures
    FROM today
    WHERE check_kind = 'daily'
    GROUP BY ALL
),
voided_minutes AS (
    SELECT run_id, minute,
           'check voided: ' || network_failures || ' of ' || checks || ' checks across ' || origins
               || ' origins failed in the same minute' AS void_reason
    FROM minutes
    WHERE checks >= $mass_min_checks AND origins >= $mass_min_origins
      AND network_failures >= $mass_share * checks
),
daily_checks AS (
    SELECT t.*,
           CASE
               WHEN t.outcome = 'skipped' THEN NULL
               WHEN t.outcome = 'prober_error' THEN 'our prober failed: ' || coalesce(t.outcome_detail, '')
               WHEN t.outcome = 'not_checked' THEN 'not checked fairly: ' || coalesce(t.outcome_detail, '')
               ELSE coalesce(vr.void_reason,
                             CASE WHEN t.outcome IN ('timeout', 'unreachable') THEN vm.void_reason END)
           END AS void_reason
    FROM today AS t
    LEFT JOIN voided_runs AS vr USING (run_id)
    LEFT JOIN voided_minutes AS vm
        ON vm.run_id = t.run_id AND vm.minute = date_trunc('minute', t.started_at)
    WHERE t.check_kind = 'daily'
),
deciding AS (
    SELECT * FROM daily_checks
    WHERE void_reason IS NULL
    QUALIFY row_number() OVER (PARTITION BY server_key ORDER BY started_at DESC, run_id DESC) = 1
),
voided_only AS (
    SELECT server_key, arg_max(void_reason, started_at) AS void_reason,
           arg_max(server_name, started_at) AS server_name, arg_max(server_version, started_at) AS server_version,
           arg_max(url, started_at) AS url
    FROM daily_checks
    WHERE server_key NOT IN (SELECT server_key FROM deciding)
    GROUP BY server_key
),
listed AS (
    -- One listing per endpoint names it on every day (1.3): under 1.2 a checked endpoint carried the name of
    -- the listing the prober met first (the registry's order) and an unchecked one the first by name, so an
    -- endpoint listed under two names changed name on a missed day. The order is total: never the file's
    -- (sql/naming_listings.sql, where a listing to probe comes first: an endpoint with none is not listed).
    SELECT server_key, server_name, server_version, url
    FROM naming_listings
    WHERE listing = 'probe'
),
listed_unchecked AS (
    SELECT l.*
    FROM listed AS l
    WHERE l.server_key NOT IN (SELECT server_key FROM deciding)
      AND l.server_key NOT IN (SELECT server_key FROM voided_only)
),
earlier_rows AS MATERIALIZED (
    -- Only the listed endpoints left unchecked today (usually few) are looked up in the earlier days, and
    -- only their rows are validated: chosen first (materialised, so the validation cannot run ahead of the
    -- join over every row of the lookback), then probe_problem (sql/probe_problem.sql).
    SELECT server_key, day, source_file, started_at, check_kind, outcome, handshake_ms, tools_hash, tool_count,
           tool_list_size
    FROM raw_probes
    WHERE server_key IN (SELECT server_key FROM listed_unchecked)
),
last_earlier_check AS (
    SELECT server_key, arg_max(outcome, started_at) AS outcome
    FROM earlier_rows
    WHERE probe_problem(server_key, day, source_file, started_at, check_kind, outcome, handshake_ms, tools_hash,
                        tool_count, tool_list_size) IS NULL
      AND check_kind = 'daily' AND day < $day::DATE
    GROUP BY server_key
),
unchecked_on_map AS (
    SELECT l.*
    FROM listed_unchecked AS l
    LEFT JOIN last_earlier_check AS e USING (server_key)
    WHERE coalesce(e.outcome, '') <> 'skipped'
),
on_map AS (
    SELECT server_key, server_name, server_version, url, outcome, outcome_detail AS reason, http_status,
           handshake_ms, protocol_version, server_info_name, server_info_version, tool_count, tool_list_size,
           tools_hash, redirect_location, payment_json, started_at AS checked_at, run_id
    FROM deciding
    WHERE outcome <> 'skipped'
    UNION ALL BY NAME
    SELECT server_key, server_name, server_version, url, void_reason AS reason
    FROM voided_only
    UNION ALL BY NAME
    SELECT server_key, server_name, server_version, url, 'no daily check' AS reason
    FROM unchecked_on_map
),
named AS (
    -- The listing's name, version and URL where the registry in force lists the endpoint; else its check's.
    SELECT m.* EXCLUDE (server_name, server_version, url),
           if(l.server_key IS NULL, m.server_name, l.server_name) AS server_name,
           if(l.server_key IS NULL, m.server_version, l.server_version) AS server_version,
           if(l.server_key IS NULL, m.url, l.url) AS url
    FROM on_map AS m
    LEFT JOIN listed AS l USING (server_key)
),
coded AS (
    SELECT *,
           CASE
               WHEN outcome IS NULL THEN 'n'
               WHEN outcome = 'ok' THEN 'o'
               WHEN outcome = 'needs_auth' THEN 'a'
               WHEN outcome = 'http_402' THEN 'p'
               ELSE 'd'
           END AS code
    FROM named
)
SELECT
    $day::DATE AS day,
    server_key,
    left(sha256(server_key), 12) AS server_id,
    server_name,
    server_version,
    url,
    code,
    outcome,
    reason,
    CASE code
        -- An empty list is an answer, not tools (status-1.2; reliable-1.2).
        WHEN 'o' THEN CASE WHEN coalesce(tool_count, 0) > 0 THEN 'answers with tools' ELSE 'answers, lists no tools' END
        WHEN 'a' THEN 'answers, asks for sign-in'
        WHEN 'p' THEN 'answers, asks for payment'
        WHEN 'n' THEN 'no data'
        ELSE CASE WHEN http_status IN (400, 405) OR outcome = 'not_mcp'
                  THEN 'answers, but not as a standard MCP endpoint' ELSE 'down' END
    END AS shown_status,
    http_status,
    handshake_ms,
    protocol_version,
    server_info_name,
    server_info_version,
    tool_count,
    tool_list_size,
    round(tool_list_size / 4.0)::BIGINT AS tokens_estimate,
    tools_hash,
    redirect_location,
    -- x402 bodies list addresses under accepts[].payTo; a body that is not JSON gives an empty list.
    CASE WHEN outcome = 'http_402' THEN
        coalesce(list_sort(list_distinct(list_filter(
            CASE WHEN json_valid(payment_json) THEN
                list_concat(coalesce(json_extract_string(payment_json, '$.accepts[*].payTo'), []),
                            [json_extract_string(payment_json, '$.payTo')])
            END, lambda a: a IS NOT NULL AND a <> ''))), []::VARCHAR[])
    END AS payment_addresses,
    checked_at,
    run_id,
    $method_version AS method_version
FROM coded
ORDER BY server_key
