-- tools: one row per endpoint, day $day and tool: the facts of the endpoint's tool list that day.
-- Inputs: endpoints (daily_status of $day: each endpoint that published a tool list, with endpoint_row, its
-- row number); list_facts (sql/day_list_facts.sql: the facts of each list published on $day, computed once
-- per tools_hash under the current method, with fact_row, its row number).
-- This statement pairs the rows, in the table's order (server_key, then position); build_tools
-- (curated/tool_tables.py) takes every column's values by these row numbers, so the texts of some 5,000
-- lists are repeated over some 500,000 rows without being copied (dictionary-encoded columns,
-- docs/scaling.md). An endpoint whose list has no facts under the current method has no rows.
SELECT e.endpoint_row, f.fact_row
FROM endpoints AS e
JOIN list_facts AS f USING (tools_hash)
ORDER BY e.server_key, f.position
