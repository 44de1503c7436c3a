-- findings: one row per endpoint, day $day and published finding (docs/methodology.md: findings.published).
-- Inputs: daily_status of $day (protocol, handshake, tokens_estimate, and the endpoint's tool list:
-- tools_hash), list_facts (sql/day_list_facts.sql: the facts of each list published on $day, one row per
-- tool; an endpoint's tools are its list's facts, as in tools), readiness_discovery of $day (server cards),
-- method $method_version with thresholds from sevenmaps_pipeline/rules/methods.py:
--   token_heavy       tokens_estimate >= $token_heavy
--   huge_description  a description of more than $huge_description o200k_base tokens (per tool)
--   missing_descriptions / missing_schema / duplicate_names / no_annotations: over the tool list
--   old_protocol      an answered protocol version older than $old_protocol_before
--   slow              the whole check (o day) took more than $slow_ms
--   annotation_contradiction  annotations that contradict the tool's own name or description (per tool)
--   card_disagrees    a server card (readiness_discovery of $day) says otherwise than the server answered
--                     (name, version or protocol versions), one row per card
-- What depends on the tool list alone is found once per list (tools_hash), then given to every endpoint
-- that published that list on $day (some 5,000 lists over some 500,000 tools a day: docs/scaling.md).
WITH s AS (
    SELECT * FROM daily_status WHERE day = $day::DATE
),
lists AS (
    SELECT tools_hash,
           count(*) AS tool_count,
           count(*) FILTER (WHERE description IS NULL OR trim(description) = '') AS no_description,
           count(*) FILTER (WHERE input_schema_json IS NULL) AS no_schema,
           count(*) FILTER (WHERE annotations_json IS NOT NULL) AS annotated,
           count(*) - count(DISTINCT name) AS duplicate_names
    FROM list_facts GROUP BY tools_hash
),
list_found AS (
    SELECT tools_hash, 'huge_description' AS finding, name AS tool_name, description_tokens::DOUBLE AS value,
           $huge_description::DOUBLE AS threshold, 'description of ' || description_tokens || ' tokens' AS detail
    FROM list_facts WHERE description_tokens > $huge_description
    UNION ALL
    SELECT tools_hash, 'missing_descriptions', NULL, no_description, 0,
           no_description || ' of ' || tool_count || ' tools have no description'
    FROM lists WHERE no_description > 0
    UNION ALL
    SELECT tools_hash, 'no_annotations', NULL, tool_count, 0, 'none of ' || tool_count || ' tools declares annotations'
    FROM lists WHERE annotated = 0 AND tool_count > 0
    UNION ALL
    SELECT tools_hash, 'missing_schema', NULL, no_schema, 0,
           no_schema || ' of ' || tool_count || ' tools declare no input schema'
    FROM lists WHERE no_schema > 0
    UNION ALL
    SELECT tools_hash, 'duplicate_names', NULL, duplicate_names, 0, duplicate_names || ' duplicate tool name(s)'
    FROM lists WHERE duplicate_names > 0
    UNION ALL
    SELECT tools_hash, 'annotation_contradiction', name, NULL, NULL, annotation_contradiction
    FROM list_facts WHERE annotation_contradiction IS NOT NULL
),
found AS (
    SELECT server_key, 'token_heavy' AS finding, NULL AS tool_name, tokens_estimate::DOUBLE AS value,
           $token_heavy::DOUBLE AS threshold,
           'tool list of about ' || tokens_estimate || ' tokens (size / 4)' AS detail
    FROM s WHERE tokens_estimate >= $token_heavy
    UNION ALL
    SELECT s.server_key, l.finding, l.tool_name, l.value, l.threshold, l.detail
    FROM s JOIN list_found AS l USING (tools_hash)
    UNION ALL
    SELECT server_key, 'old_protocol', NULL, NULL, NULL,
           'answers with protocol ' || protocol_version || ', older than ' || $old_protocol_before
    FROM s WHERE code IN ('o', 'a', 'p') AND protocol_version IS NOT NULL AND protocol_version < $old_protocol_before
    UNION ALL
    SELECT server_key, 'slow', NULL, handshake_ms, $slow_ms, 'the whole check took ' || handshake_ms || ' ms'
    FROM s WHERE code = 'o' AND handshake_ms > $slow_ms
    UNION ALL
    SELECT server_key, 'card_disagrees', NULL, NULL, NULL, surface || ' (' || url || '): ' || disagreement
    FROM readiness_discovery WHERE day = $day::DATE AND disagreement IS NOT NULL
)
SELECT $day::DATE AS day, f.server_key, left(sha256(f.server_key), 12) AS server_id, f.finding, f.tool_name,
       f.value, f.threshold, f.detail, $method_version AS method_version
FROM found AS f
ORDER BY f.server_key, f.finding, f.tool_name, f.detail
