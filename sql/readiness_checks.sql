-- readiness_checks: the readiness check of each endpoint on $day, read by readiness_lines.sql and
-- readiness_discovery.sql (curated/readiness_tables.py binds it as `day_checks`).
-- Grain: one row per endpoint with a readiness check on $day: the last one that was not our own fault
--   or trouble (prober_error, not_checked: rules/outcomes.py), else the last.
-- Inputs: raw readiness checks of $day.
SELECT * EXCLUDE (pick, source_file, source_row)
FROM (
    SELECT *, row_number() OVER (PARTITION BY server_key
                                 ORDER BY (outcome IN ('prober_error', 'not_checked')), started_at DESC, source_file DESC,
                                          source_row DESC) AS pick
    FROM readiness
    WHERE day = $day::DATE AND server_key IS NOT NULL
)
WHERE pick = 1
