-- list_categories: one row per tool list scored today (the lists of list_texts): its tool count and the
-- winners of its two list rules, tool_names and words (sql/category_winners.sql; tool_names as if the list
-- were not shared, which is the day's to say). Inputs: list_texts, category_winners.
-- A list's row depends on its tools and the method alone: curated/categories.py keeps these rows per method
-- and every later day reads them instead of scoring the list again.
SELECT s.tools_hash, s.tool_count::INTEGER AS tool_count,
       n.topic AS names_topic, n.score::INTEGER AS names_score, n.words AS names_words,
       w.topic AS words_topic, w.score::INTEGER AS words_score, w.words AS words_words,
       $day::DATE AS scored_day  -- when the list was scored (the kept rows' own record; no figure reads it)
FROM (SELECT tools_hash, count(*) AS tool_count FROM list_texts GROUP BY tools_hash) AS s
LEFT JOIN category_winners AS n ON n.rule = 'tool_names' AND n.k = s.tools_hash
LEFT JOIN category_winners AS w ON w.rule = 'words' AND w.k = s.tools_hash
ORDER BY s.tools_hash
