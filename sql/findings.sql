-- findings: one row per endpoint, day $day and published finding (docs/methodology.md: findings.published).
-- Inputs: daily_status of $day (protocol, handshake, tokens_estimate), tools of $day (per tool),
-- readiness_discovery of $day (server cards), method
-- $method_version with thresholds from sevenmaps_pipeline/rules/methods.py:
--   token_heavy       tokens_estimate >= $token_heavy
--   huge_description  a description of more than $huge_description o200k_base tokens (per tool)
--   missing_descriptions / missing_schema / duplicate_names / no_annotations: over the tool list
--   old_protocol      an answered protocol version older than $old_protocol_before
--   slow              the whole check (o day) took more than $slow_ms
--   annotation_contradiction  annotations that contradict the tool's own name or description (per tool)
--   card_disagrees    a server card (readiness_discovery of $day) says otherwise than the server answered
--                     (name, version or protocol versions), one row per card
WITH s AS (
    SELECT * FROM daily_status WHERE day = $day::DATE
),
t AS (
    SELECT * FROM tools WHERE day = $day::DATE
),
lists AS (
    SELECT server_key,
           count(*) AS tool_count,
           count(*) FILTER (WHERE description IS NULL OR trim(description) = '') AS no_description,
           count(*) FILTER (WHERE input_schema_json IS NULL) AS no_schema,
           count(*) FILTER (WHERE annotations_json IS NOT NULL) AS annotated,
           count(*) - count(DISTINCT name) AS duplicate_names
    FROM t GROUP BY server_key
),
found AS (
    SELECT server_key, 'token_heavy' AS finding, NULL AS tool_name, tokens_estimate::DOUBLE AS value,
           $token_heavy::DOUBLE AS threshold,
           'tool list of about ' || tokens_estimate || ' tokens (size / 4)' AS detail
    FROM s WHERE tokens_estimate >= $token_heavy
    UNION ALL
    SELECT server_key, 'huge_description', name, description_tokens, $huge_description,
           'description of ' || description_tokens || ' tokens'
    FROM t WHERE description_tokens > $huge_description
    UNION ALL
    SELECT server_key, 'missing_descriptions', NULL, no_description, 0,
           no_description || ' of ' || tool_count || ' tools have no description'
    FROM lists WHERE no_description > 0
    UNION ALL
    SELECT server_key, 'no_annotations', NULL, tool_count, 0, 'none of ' || tool_count || ' tools declares annotations'
    FROM lists WHERE annotated = 0 AND tool_count > 0
    UNION ALL
    SELECT server_key, 'missing_schema', NULL, no_schema, 0,
           no_schema || ' of ' || tool_count || ' tools declare no input schema'
    FROM lists WHERE no_schema > 0
    UNION ALL
    SELECT server_key, 'duplicate_names', NULL, duplicate_names, 0, duplicate_names || ' duplicate tool name(s)'
    FROM lists WHERE duplicate_names > 0
    UNION ALL
    SELECT server_key, 'old_protocol', NULL, NULL, NULL,
           'answers with protocol ' || protocol_version || ', older than ' || $old_protocol_before
    FROM s WHERE code IN ('o', 'a', 'p') AND protocol_version IS NOT NULL AND protocol_version < $old_protocol_before
    UNION ALL
    SELECT server_key, 'slow', NULL, handshake_ms, $slow_ms, 'the whole check took ' || handshake_ms || ' ms'
    FROM s WHERE code = 'o' AND handshake_ms > $slow_ms
    UNION ALL
    SELECT server_key, 'annotation_contradiction', name, NULL, NULL, annotation_contradiction
    FROM t WHERE annotation_contradiction IS NOT NULL
    UNION ALL
    SELECT server_key, 'card_disagrees', NULL, NULL, NULL, surface || ' (' || url || '): ' || disagreement
    FROM readiness_discovery WHERE day = $day::DATE AND disagreement IS NOT NULL
)
SELECT $day::DATE AS day, f.server_key, left(sha256(f.server_key), 12) AS server_id, f.finding, f.tool_name,
       f.value, f.threshold, f.detail, $method_version AS method_version
FROM found AS f
ORDER BY f.server_key, f.finding, f.tool_name, f.detail
