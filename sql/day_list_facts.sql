-- day_list_facts: the facts of every tool list published on $day, one row per tool, in (tools_hash,
-- position) order; what tools, findings and server_categories read instead of one row per endpoint and
-- tool (some 5,000 lists repeat over some 500,000 endpoint-tool rows a day at 100,000 endpoints).
-- Grain: one row per tools_hash and position.  Inputs: day_lists (sql/day_lists.sql: each list and the day
-- its facts were first computed under $method_version); tool_facts of those days (TOOL_FACTS columns).
SELECT f.* EXCLUDE (day, source_file, source_row)
FROM tool_facts AS f
SEMI JOIN day_lists AS l ON l.tools_hash = f.tools_hash AND l.facts_day = f.day
WHERE f.method_version = $method_version
ORDER BY f.tools_hash, f.position
