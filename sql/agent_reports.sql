-- agent_reports: the valid agent reports that arrived on $day, resolved to their endpoint, with our own
-- day code for the day each is about and whether they agree with it.
-- Grain: one row per valid report.  Inputs: view agent_report_validation (sql/agent_report_validation.sql).
SELECT
    day, about_day, server_key, left(sha256(server_key), 12) AS server_id, tool, ok, fail, ms,
    matched_description, result_tokens, charged_usd, surprise, tools_hash, reporter_id, paid, our_code, agreement,
    substr(source_file, length($lake_prefix) + 1) AS raw_file, source_row AS raw_row,
    $method_version AS method_version
FROM agent_report_validation
WHERE problem IS NULL
ORDER BY source_file, source_row
