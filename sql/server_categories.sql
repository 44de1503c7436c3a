-- server_categories: one row per endpoint with a tool list on day $day, and the rule that placed it.
-- Inputs: tools of $day; listing_text (server_key, text: the registry name after its namespace, title and
-- description of the entry in force that day); topic_words (topic, word: every form that matches, plurals
-- and two-word entries joined by '_' included) and generic_words (word) from assets/categories.json
-- (method $method_version); parameters from sevenmaps_pipeline/rules/methods.py.
-- Rules, in seed 004's order:
--   1. name_and_summary (seed 004): the server's own name and summary; the top topic, with at least one
--      word and more than any other topic, places it;
--   2. tool_names (seed 004), only when its name and summary fit no category: toolsets that >= $shared_min
--      endpoints list identically that day (gateway and template tools: the whole list, same tools_hash) are
--      dropped first, and generic words; a topic named by >= $min_names tool names, at least $dominance times
--      as many as any other topic, and at least $min_share of all the endpoint's tools, places it;
--   3. words (7Maps): topic words in tool names and descriptions; the top topic with >= $words_min words and
--      more than any other topic places it;
--   4. otherwise 'other'.
-- Words are lower-case, split on non-alphanumerics and camelCase; each word and each pair of neighbouring
-- words is looked up as it is (topic_words carries the plural forms, so "news" and "teams" match as written).
-- Only the shared-toolset count looks across endpoints; the rest depends on the tool list alone, so words are
-- split once per distinct list (tools_hash) of the day, not once per endpoint.
WITH t AS (
    SELECT server_key, server_id, tools_hash, position, name, coalesce(description, '') AS description
    FROM tools WHERE day = $day::DATE
),
endpoints AS (
    SELECT server_key, any_value(server_id) AS server_id, any_value(tools_hash) AS tools_hash FROM t
    GROUP BY server_key
),
shared_lists AS (
    SELECT tools_hash FROM endpoints GROUP BY tools_hash HAVING count(*) >= $shared_min
),
lists AS (
    SELECT tools_hash, position, any_value(name) AS name, any_value(description) AS description
    FROM t GROUP BY tools_hash, position
),
totals AS (
    SELECT tools_hash, count(*) AS tool_count FROM lists GROUP BY tools_hash
),
-- words(text) -> the words and neighbouring pairs of a text
name_tokens AS (
    SELECT l.tools_hash, l.name,
           regexp_split_to_array(lower(regexp_replace(l.name, '([a-z0-9])([A-Z])', '\1_\2', 'g')),
                                 '[^a-z0-9]+') AS toks
    FROM lists AS l ANTI JOIN shared_lists USING (tools_hash)
),
name_words AS (
    SELECT tools_hash, name,
           unnest(list_concat(toks, list_transform(range(1, len(toks)), lambda i: toks[i] || '_' || toks[i + 1])))
               AS word
    FROM name_tokens
),
name_topics AS (
    SELECT nw.tools_hash, tw.topic, count(DISTINCT nw.name) AS names, list(DISTINCT nw.word) AS words
    FROM name_words AS nw
    JOIN topic_words AS tw ON tw.word = nw.word AND tw.tool_name_topic
    WHERE nw.word NOT IN (SELECT word FROM generic_words)
    GROUP BY ALL
),
name_ranked AS (
    SELECT *, row_number() OVER (PARTITION BY tools_hash ORDER BY names DESC, topic) AS rank,
           coalesce(max(names) OVER (PARTITION BY tools_hash ORDER BY names DESC, topic
                                     ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING), 0) AS runner_up
    FROM name_topics
),
by_names AS (
    SELECT r.tools_hash, r.topic, r.names AS score, r.words
    FROM name_ranked AS r JOIN totals USING (tools_hash)
    WHERE r.rank = 1 AND r.names >= $min_names AND r.names >= $dominance * r.runner_up
      AND r.names >= $min_share * totals.tool_count
),
all_tokens AS (
    SELECT tools_hash,
           regexp_split_to_array(lower(regexp_replace(name || ' ' || description, '([a-z0-9])([A-Z])', '\1_\2',
                                                      'g')), '[^a-z0-9]+') AS toks
    FROM lists
),
all_words AS (
    SELECT tools_hash,
           unnest(list_concat(toks, list_transform(range(1, len(toks)), lambda i: toks[i] || '_' || toks[i + 1])))
               AS word
    FROM all_tokens
),
word_topics AS (
    SELECT aw.tools_hash, tw.topic, count(*) AS score, list(DISTINCT aw.word) AS words
    FROM all_words AS aw JOIN topic_words AS tw USING (word)
    WHERE aw.word NOT IN (SELECT word FROM generic_words)
    GROUP BY ALL
),
word_ranked AS (
    SELECT *, row_number() OVER (PARTITION BY tools_hash ORDER BY score DESC, topic) AS rank,
           coalesce(max(score) OVER (PARTITION BY tools_hash ORDER BY score DESC, topic
                                     ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING), 0) AS runner_up
    FROM word_topics
),
by_words AS (
    SELECT tools_hash, topic, score, words FROM word_ranked
    WHERE rank = 1 AND score >= $words_min AND score > runner_up
),
summary_tokens AS (
    SELECT lt.server_key,
           regexp_split_to_array(lower(regexp_replace(lt.text, '([a-z0-9])([A-Z])', '\1_\2', 'g')),
                                 '[^a-z0-9]+') AS toks
    FROM listing_text AS lt SEMI JOIN endpoints USING (server_key)
),
summary_words AS (
    SELECT server_key,
           unnest(list_concat(toks, list_transform(range(1, len(toks)), lambda i: toks[i] || '_' || toks[i + 1])))
               AS word
    FROM summary_tokens
),
summary_topics AS (
    SELECT sw.server_key, tw.topic, count(*) AS score, list(DISTINCT sw.word) AS words
    FROM summary_words AS sw JOIN topic_words AS tw USING (word)
    WHERE sw.word NOT IN (SELECT word FROM generic_words)
    GROUP BY ALL
),
summary_ranked AS (
    SELECT *, row_number() OVER (PARTITION BY server_key ORDER BY score DESC, topic) AS rank,
           coalesce(max(score) OVER (PARTITION BY server_key ORDER BY score DESC, topic
                                     ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING), 0) AS runner_up
    FROM summary_topics
),
by_summary AS (
    SELECT server_key, topic, score, words FROM summary_ranked
    WHERE rank = 1 AND score >= 1 AND score > runner_up
)
SELECT
    $day::DATE AS day,
    e.server_key,
    e.server_id,
    coalesce(s.topic, n.topic, w.topic, 'other') AS category,
    CASE WHEN s.topic IS NOT NULL THEN 'name_and_summary' WHEN n.topic IS NOT NULL THEN 'tool_names'
         WHEN w.topic IS NOT NULL THEN 'words' ELSE 'none' END AS placed_by,
    coalesce(s.score, n.score, w.score, 0)::INTEGER AS score,
    coalesce(list_sort(s.words), list_sort(n.words), list_sort(w.words), []::VARCHAR[]) AS evidence,
    totals.tool_count::INTEGER AS tool_count,
    $method_version AS method_version
FROM endpoints AS e
JOIN totals USING (tools_hash)
LEFT JOIN by_summary AS s USING (server_key)
LEFT JOIN by_names AS n USING (tools_hash)
LEFT JOIN by_words AS w USING (tools_hash)
ORDER BY e.server_key
