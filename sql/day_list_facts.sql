-- day_list_facts: the facts of every tool list published on the day, one row per tool: the view `list_facts`
-- that tools, findings, internal_findings and server_categories read (curated/list_facts.py) instead of one
-- row per endpoint and tool. Some 38,000 lists of 1.1 million tools a day at 100,000 endpoints, 1.8 GB as
-- Arrow: a view, not a table, so that each query reads only the columns it names, as it goes
-- (docs/scaling.md, "The tool tables at 100,000 endpoints").
-- Grain: one row per tools_hash and position, in no particular order.  Inputs: list_sources
-- (sql/day_lists.sql: each list, the day its facts were first computed and the method); tool_facts of those
-- days (TOOL_FACTS columns).
SELECT f.* EXCLUDE (day, source_file, source_row)
FROM tool_facts AS f
SEMI JOIN list_sources AS l
    ON l.tools_hash = f.tools_hash AND l.facts_day = f.day AND l.method_version = f.method_version
