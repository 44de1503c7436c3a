-- tools: one row per endpoint, day $day and tool.
-- Inputs: daily_status of $day (which list each endpoint published), tool_facts of every day so far (the
-- facts of each list, computed once per tools_hash), limited to $method_version so a method change never
-- mixes two methods.
WITH facts AS (
    SELECT * EXCLUDE (day) FROM tool_facts WHERE method_version = $method_version
    QUALIFY row_number() OVER (PARTITION BY tools_hash, position ORDER BY day) = 1
)
SELECT
    s.day, s.server_key, s.server_id, s.tools_hash, f.position, f.name, f.title, f.description,
    f.input_schema_json, f.annotations_json, f.read_only_hint, f.destructive_hint, f.idempotent_hint,
    f.open_world_hint, f.fingerprint, f.risk, f.risk_rule, f.risk_evidence, f.annotation_contradiction,
    f.description_tokens, f.method_version
FROM daily_status AS s
JOIN facts AS f USING (tools_hash)
WHERE s.day = $day::DATE AND s.tools_hash IS NOT NULL
ORDER BY s.server_key, f.position
