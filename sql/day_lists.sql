-- day_lists: one row per distinct tool list published on $day, the day its facts were first computed under
-- $method_version (a list's facts are computed once, on the day it first appeared: tool_facts) and its tool
-- count that day. Grain: one row per tools_hash.  Inputs: daily_status of $day; tool_lists of every day so far
-- (one row per list and day its facts were computed), so the builders read tool_facts of those days only
-- (curated/list_facts.py: registered as `list_sources`, with the method, for sql/day_list_facts.sql).
-- A list without facts under $method_version has no row: the tables built from list facts leave its
-- endpoints out (tool_changes refuses to run while any list lacks facts: sql/tool_lists_needed.sql).
SELECT l.tools_hash, min(l.day) AS facts_day, arg_min(l.tool_count, l.day) AS tool_count,
       $method_version AS method_version
FROM tool_lists AS l
WHERE l.method_version = $method_version
  AND l.tools_hash IN (SELECT tools_hash FROM daily_status WHERE day = $day::DATE AND tools_hash IS NOT NULL)
GROUP BY l.tools_hash
