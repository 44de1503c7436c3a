-- server_categories: one row per endpoint with a tool list on day $day, and the rule that placed it.
-- Inputs: daily_status of $day (each endpoint's tools_hash); list_categories (one row per list published on
-- $day: tools_hash, tool_count and the winners of the tool_names and words rules, sql/list_categories.sql,
-- kept per list and method by curated/categories.py); category_winners (sql/category_winners.sql: the
-- name_and_summary winner of each endpoint's listing); parameters from sevenmaps_pipeline/rules/methods.py.
-- Rules, in the Agent-Ready directory's order (docs/methodology.md):
--   1. name_and_summary (Agent-Ready rule): the server's own name and summary; the top topic, with at least one
--      word and more than any other topic, places it;
--   2. tool_names (Agent-Ready rule), only when its name and summary fit no category: toolsets that >= $shared_min
--      endpoints list identically that day (gateway and template tools: the whole list, same tools_hash) are
--      dropped first, and generic words; a topic named by >= $min_names tool names, at least $dominance times
--      as many as any other topic, and at least $min_share of all the endpoint's tools, places it;
--   3. words (7Maps): topic words in tool names and descriptions; the top topic with >= $words_min words and
--      more than any other topic places it;
--   4. otherwise 'other'.
-- Only the shared-toolset count looks across endpoints; the rest depends on the tool list alone, so a list is
-- scored once under a method (the day it is first seen), not once per endpoint or per day.
WITH endpoints AS (
    SELECT server_key, server_id, tools_hash FROM daily_status
    WHERE day = $day::DATE AND tools_hash IN (SELECT tools_hash FROM list_categories)
),
shared_lists AS (
    SELECT tools_hash FROM endpoints GROUP BY tools_hash HAVING count(*) >= $shared_min
),
by_summary AS (
    SELECT k AS server_key, topic, score, words FROM category_winners WHERE rule = 'name_and_summary'
),
lists AS (
    SELECT l.*, sl.tools_hash IS NOT NULL AS shared
    FROM list_categories AS l LEFT JOIN shared_lists AS sl USING (tools_hash)
)
SELECT
    $day::DATE AS day,
    e.server_key,
    e.server_id,
    coalesce(s.topic, CASE WHEN NOT l.shared THEN l.names_topic END, l.words_topic, 'other') AS category,
    CASE WHEN s.topic IS NOT NULL THEN 'name_and_summary' WHEN NOT l.shared AND l.names_topic IS NOT NULL
         THEN 'tool_names' WHEN l.words_topic IS NOT NULL THEN 'words' ELSE 'none' END AS placed_by,
    coalesce(s.score, CASE WHEN NOT l.shared THEN l.names_score END, l.words_score, 0)::INTEGER AS score,
    coalesce(s.words, CASE WHEN NOT l.shared THEN l.names_words END, l.words_words, []::VARCHAR[]) AS evidence,
    l.tool_count::INTEGER AS tool_count,
    $method_version AS method_version
FROM endpoints AS e
JOIN lists AS l USING (tools_hash)
LEFT JOIN by_summary AS s USING (server_key)
ORDER BY e.server_key
