-- quarantine: raw rows of day $day that failed validation, with the reason. Whole files that could not
-- be read are added by the caller (they never reach SQL).
-- Grain: one row per refused raw row.  Inputs: view probe_validation (sql/probe_validation.sql).
SELECT
    $day::DATE AS day,
    'probes' AS source,
    substr(source_file, length($lake_prefix) + 1) AS source_file,
    source_row AS row_number,
    server_key,
    problem,
    to_json(struct_pack(day, check_kind, run_id, server_key, url, started_at, outcome, handshake_ms))::VARCHAR
        AS row_json
FROM probe_validation
WHERE problem IS NOT NULL
  AND regexp_extract(source_file, 'day=(\d{4}-\d{2}-\d{2})', 1) = $day::VARCHAR
ORDER BY source_file, source_row
