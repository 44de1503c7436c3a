-- readiness_lines (its inputs): the readiness check of each endpoint on $day, with what the rubric reads
-- besides it. The lines themselves are scored in Python by rules/readiness.py (the code the live
-- `sevenmaps readiness` command runs too); curated/readiness_tables.py turns each row into its lines.
-- Grain: one row per endpoint with a readiness check on $day.
-- Inputs: the day's checks (day_checks: sql/readiness_checks.sql), raw readiness checks of $day and the
--   $p50_days - 1 days before it, raw readiness_surfaces of $day.
--   * p50_ms: the median round trip over the endpoint's answered readiness checks (discover, initialize or
--     a 401) in the window, $day included (docs/methodology.md, "Readiness": the p50 line);
--   * resource_metadata_*: the endpoint's RFC 9728 document as asked for that day;
--   * registry_auth_*: its publisher domain's /.well-known/mcp-registry-auth as asked for that day.
WITH window_p50 AS (
    SELECT server_key, median(round_trip_ms)::DOUBLE AS p50_ms, count(*) AS p50_checks
    FROM readiness
    WHERE day BETWEEN $day::DATE - ($p50_days - 1) AND $day::DATE
      AND answered_via IN ('discover', 'initialize', '401') AND round_trip_ms IS NOT NULL
    GROUP BY server_key
),
documents AS (
    SELECT scope, subject, surface, status, content_type, body, detail,
           row_number() OVER (PARTITION BY scope, subject, surface ORDER BY requested_at DESC, source_file DESC,
                                           source_row DESC) AS pick
    FROM readiness_surfaces
    WHERE day = $day::DATE AND surface IN ('resource_metadata', 'registry_auth')
)
SELECT l.*, w.p50_ms, w.p50_checks,
       m.status AS resource_metadata_status, m.content_type AS resource_metadata_content_type,
       m.body AS resource_metadata_body, m.detail AS resource_metadata_detail,
       a.status AS registry_auth_status, a.content_type AS registry_auth_content_type,
       a.body AS registry_auth_body, a.detail AS registry_auth_detail
FROM day_checks AS l
LEFT JOIN window_p50 AS w USING (server_key)
LEFT JOIN documents AS m ON m.pick = 1 AND m.scope = 'endpoint' AND m.surface = 'resource_metadata'
                         AND m.subject = l.server_key
LEFT JOIN documents AS a ON a.pick = 1 AND a.scope = 'domain' AND a.surface = 'registry_auth'
                         AND a.subject = l.publisher_domain
ORDER BY l.server_key
