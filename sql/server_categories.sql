-- server_categories: one row per endpoint with a tool list on day $day: the registry text's verdict and the
-- tools' verdict, each with its words, and the one that placed it.
-- Grain: one row per endpoint with a tool list that day (tools_hash set), an empty list included: an empty list
-- has no list_categories row (no tools to score), so no tools' verdict, and the registry text alone places it
-- (docs/methodology.md: two verdicts for each endpoint with a tool list; categories-1.5).
-- Inputs: daily_status of $day (each endpoint's tools_hash and tool_count); list_categories (one row per list
-- with tools published on $day: tools_hash, tool_count and the winners of the tool_names and words rules,
-- sql/list_categories.sql,
-- kept per list and method by curated/categories.py); category_winners (sql/category_winners.sql: the
-- name_and_summary winner of each endpoint's listing, with its score and distinct entries); parameters from
-- sevenmaps_pipeline/rules/methods.py.
-- The two verdicts (docs/methodology.md, categories-1.2):
--   registry: name_and_summary (Agent-Ready rule): the server's own registry name and description; the top topic,
--     with at least one word and more than any other topic;
--   tools: tool_names (Agent-Ready rule): toolsets that >= $shared_min endpoints list identically that day
--     (gateway and template tools: the whole list, same tools_hash) are dropped first, and generic words; a topic
--     named by >= $min_names tool names, at least $dominance times as many as any other topic, and at least
--     $min_share of all the endpoint's tools; else words (7Maps): topic words in tool names and descriptions, the
--     top topic with >= $words_min words and more than any other topic.
-- Which one places it (`decision`), issue 37 point 4: a server is what its tools do, and one topic word in a name
-- or blurb ("Recipes") is weak evidence against them:
--   agree               both name the same topic: the registry's verdict (and words) place it;
--   registry_only       only the registry text names a topic;
--   tools_only          only the tools name a topic;
--   tools_win           they disagree: the tools' verdict places it ...
--   registry_two_words  ... unless the registry text has >= $registry_min_entries distinct entries of its topic;
--   none                neither: 'other'.
-- Only the shared-toolset count looks across endpoints; the rest depends on the tool list alone, so a list is
-- scored once under a method (the day it is first seen), not once per endpoint or per day.
WITH endpoints AS (
    SELECT server_key, server_id, tools_hash, tool_count FROM daily_status
    WHERE day = $day::DATE AND tools_hash IS NOT NULL
),
shared_lists AS (
    SELECT tools_hash FROM endpoints GROUP BY tools_hash HAVING count(*) >= $shared_min
),
lists AS (
    SELECT l.*, sl.tools_hash IS NOT NULL AS shared
    FROM list_categories AS l LEFT JOIN shared_lists AS sl USING (tools_hash)
),
by_registry AS (
    SELECT k AS server_key, topic, score, entries, words FROM category_winners WHERE rule = 'name_and_summary'
),
verdicts AS (
    SELECT e.server_key, e.server_id, coalesce(l.tool_count, e.tool_count) AS tool_count,
           r.topic AS registry_category, r.score AS registry_score, r.entries AS registry_entries,
           r.words AS registry_evidence,
           CASE WHEN NOT l.shared AND l.names_topic IS NOT NULL THEN 'tool_names'
                WHEN l.words_topic IS NOT NULL THEN 'words' END AS tools_rule,
           CASE WHEN NOT l.shared AND l.names_topic IS NOT NULL THEN l.names_topic ELSE l.words_topic END
               AS tools_category,
           CASE WHEN NOT l.shared AND l.names_topic IS NOT NULL THEN l.names_score ELSE l.words_score END
               AS tools_score,
           CASE WHEN NOT l.shared AND l.names_topic IS NOT NULL THEN l.names_words ELSE l.words_words END
               AS tools_evidence
    FROM endpoints AS e
    LEFT JOIN lists AS l USING (tools_hash)  -- none for an empty list: no tools' verdict
    LEFT JOIN by_registry AS r USING (server_key)
),
decided AS (
    SELECT *,
           CASE WHEN registry_category IS NULL AND tools_category IS NULL THEN 'none'
                WHEN tools_category IS NULL THEN 'registry_only'
                WHEN registry_category IS NULL THEN 'tools_only'
                WHEN registry_category = tools_category THEN 'agree'
                WHEN registry_entries >= $registry_min_entries THEN 'registry_two_words'
                ELSE 'tools_win' END AS decision
    FROM verdicts
)
SELECT
    $day::DATE AS day,
    server_key,
    server_id,
    CASE WHEN decision IN ('agree', 'registry_only', 'registry_two_words') THEN registry_category
         WHEN decision IN ('tools_only', 'tools_win') THEN tools_category ELSE 'other' END AS category,
    CASE WHEN decision IN ('agree', 'registry_only', 'registry_two_words') THEN 'name_and_summary'
         WHEN decision IN ('tools_only', 'tools_win') THEN tools_rule ELSE 'none' END AS placed_by,
    decision,
    coalesce(CASE WHEN decision IN ('agree', 'registry_only', 'registry_two_words') THEN registry_score
                  WHEN decision IN ('tools_only', 'tools_win') THEN tools_score END, 0)::INTEGER AS score,
    coalesce(CASE WHEN decision IN ('agree', 'registry_only', 'registry_two_words') THEN registry_evidence
                  WHEN decision IN ('tools_only', 'tools_win') THEN tools_evidence END, []::VARCHAR[]) AS evidence,
    registry_category,
    registry_score::INTEGER AS registry_score,
    registry_entries::INTEGER AS registry_entries,
    registry_evidence,
    tools_category,
    tools_rule,
    tools_score::INTEGER AS tools_score,
    tools_evidence,
    tool_count::INTEGER AS tool_count,
    $method_version AS method_version
FROM decided
ORDER BY server_key
