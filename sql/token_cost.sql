-- token_cost: one row per endpoint with a tool list on day $day.
-- Inputs: daily_status of $day (tool_list_size, tokens_estimate as the methodology defines them), tool_lists of
-- every day so far (definition_tokens, counted once per list with o200k_base), method $method_version.
WITH lists AS (
    SELECT tools_hash, definition_tokens, method_version FROM tool_lists WHERE method_version = $method_version
    QUALIFY row_number() OVER (PARTITION BY tools_hash ORDER BY day) = 1
)
SELECT
    s.day, s.server_key, s.server_id, s.tools_hash, s.tool_count, s.tool_list_size, s.tokens_estimate,
    l.definition_tokens,
    percent_rank() OVER (ORDER BY l.definition_tokens) AS definition_tokens_percentile,
    $tokenizer AS method_version
FROM daily_status AS s
JOIN lists AS l USING (tools_hash)
WHERE s.day = $day::DATE AND s.tools_hash IS NOT NULL
ORDER BY s.server_key
