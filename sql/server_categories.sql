-- server_categories: one row per endpoint with a tool list on day $day, and the rule that placed it.
-- Inputs: tools of $day; topic_words (topic, word) and generic_words (word) from assets/categories.json
-- (method $method_version); parameters from sevenmaps_pipeline/rules/methods.py.
-- Rules, in order:
--   1. tool_names (seed 004): drop tools that >= $shared_min endpoints list identically that day (gateway and
--      template tools) and generic words; a topic named by >= $min_names tool names, at least $dominance times
--      as many as any other topic, and at least $min_share of all the endpoint's tools, places it;
--   2. words (7Maps): topic words in tool names and descriptions; the top topic with >= $words_min words and
--      more than any other topic places it;
--   3. otherwise 'other'.
-- Words are lower-case, split on non-alphanumerics and camelCase, with a trailing 's' dropped.
-- Only the shared-tool count looks across endpoints; the rest depends on the tool list alone, so words are
-- split once per distinct list (tools_hash) of the day, not once per endpoint.
WITH t AS (
    SELECT server_key, server_id, tools_hash, position, name, coalesce(description, '') AS description, fingerprint
    FROM tools WHERE day = $day::DATE
),
endpoints AS (
    SELECT server_key, any_value(server_id) AS server_id, any_value(tools_hash) AS tools_hash FROM t
    GROUP BY server_key
),
shared AS (
    SELECT fingerprint FROM t GROUP BY fingerprint HAVING count(DISTINCT server_key) >= $shared_min
),
lists AS (
    SELECT tools_hash, position, any_value(name) AS name, any_value(description) AS description,
           any_value(fingerprint) AS fingerprint
    FROM t GROUP BY tools_hash, position
),
totals AS (
    SELECT tools_hash, count(*) AS tool_count FROM lists GROUP BY tools_hash
),
name_tokens AS (
    SELECT l.tools_hash, l.position, l.name,
           unnest(regexp_split_to_array(lower(regexp_replace(l.name, '([a-z0-9])([A-Z])', '\1_\2', 'g')),
                                        '[^a-z0-9]+')) AS token
    FROM lists AS l ANTI JOIN shared USING (fingerprint)
),
name_words AS (
    SELECT tools_hash, name, CASE WHEN length(token) > 3 THEN regexp_replace(token, 's$', '') ELSE token END AS word
    FROM name_tokens WHERE token <> ''
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
           unnest(regexp_split_to_array(lower(regexp_replace(name || ' ' || description, '([a-z0-9])([A-Z])',
                                                             '\1_\2', 'g')), '[^a-z0-9]+')) AS token
    FROM lists
),
all_words AS (
    SELECT tools_hash, CASE WHEN length(token) > 3 THEN regexp_replace(token, 's$', '') ELSE token END AS word
    FROM all_tokens WHERE token <> ''
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
)
SELECT
    $day::DATE AS day,
    e.server_key,
    e.server_id,
    coalesce(n.topic, w.topic, 'other') AS category,
    CASE WHEN n.topic IS NOT NULL THEN 'tool_names' WHEN w.topic IS NOT NULL THEN 'words' ELSE 'none' END
        AS placed_by,
    coalesce(n.score, w.score, 0)::INTEGER AS score,
    coalesce(list_sort(n.words), list_sort(w.words), []::VARCHAR[]) AS evidence,
    totals.tool_count::INTEGER AS tool_count,
    $method_version AS method_version
FROM endpoints AS e
JOIN totals USING (tools_hash)
LEFT JOIN by_names AS n USING (tools_hash)
LEFT JOIN by_words AS w USING (tools_hash)
ORDER BY e.server_key
