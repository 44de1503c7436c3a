-- agent_report_quarantine: agent reports that arrived on $day and were refused, each with its reason.
-- Whole batch files that could not be read, or that carry columns beyond the fixed fields, are added by
-- the caller (they never reach SQL).
-- A field that is not what it may be is kept as "<N characters withheld>" (the safe_* columns): the
-- text of an agent's own words is never stored.
-- Grain: one row per refused report.  Inputs: view agent_report_validation (sql/agent_report_validation.sql).
SELECT
    $day::DATE AS day,
    substr(source_file, length($lake_prefix) + 1) AS source_file,
    source_row AS row_number,
    safe_server AS server,
    safe_reporter_id AS reporter_id,
    problem,
    to_json(struct_pack(day, about_day, server := safe_server, tool := safe_tool, ok, fail := safe_fail, ms,
                        matched_description, result_tokens, charged_usd, surprise := safe_surprise,
                        tools_hash := safe_tools_hash, reporter_id := safe_reporter_id, paid))::VARCHAR AS row_json,
    $method_version AS method_version
FROM agent_report_validation
WHERE problem IS NOT NULL
ORDER BY source_file, source_row
