-- tool_lists_needed: the tool lists $day needs facts for under the current method $method, and the day
-- whose raw probes hold each one. Not a table: tool_facts computes the facts of these lists (in Python:
-- rules/tool_facts.py), and tool_changes refuses to run while any is missing.
-- Grain: one row per tools_hash.  Inputs: daily_status of $day; change_baseline (each endpoint's latest
-- earlier row with a tool list in the lookback, sql/change_baseline.sql); tool_lists so far.
-- Needed: every list an endpoint published on $day, and the previous list of each endpoint whose list changed
-- (tool_changes compares both days under the same, current method).
WITH today AS (
    SELECT server_key, tools_hash FROM daily_status WHERE day = $day AND tools_hash IS NOT NULL
),
baseline AS (
    SELECT b.server_key, b.listed.day AS day, b.listed.tools_hash AS tools_hash
    FROM change_baseline AS b SEMI JOIN today USING (server_key)
    WHERE b.listed IS NOT NULL
),
needed AS (
    SELECT tools_hash, $day AS day FROM today
    UNION ALL
    SELECT b.tools_hash, b.day FROM baseline AS b JOIN today AS t USING (server_key)
    WHERE b.tools_hash <> t.tools_hash
)
SELECT tools_hash, max(day) AS day FROM needed
WHERE tools_hash NOT IN (SELECT tools_hash FROM tool_lists WHERE method_version = $method)
GROUP BY tools_hash
