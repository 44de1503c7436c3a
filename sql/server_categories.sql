-- server_categories: one row per endpoint with a tool list on day $day, and the rule that placed it.
-- Inputs: daily_status of $day (each endpoint's tools_hash); list_facts (sql/day_list_facts.sql: the tools of
-- each list published on $day; an endpoint's tools are its list's, as in tools); listing_text (server_key,
-- text: the registry name after its namespace, title and description of the entry in force that day);
-- topic_words (topic, word: every form that matches, plurals and two-word entries joined by '_' included)
-- and generic_words (word) from assets/categories.json (method $method_version); parameters from
-- sevenmaps_pipeline/rules/methods.py.
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
-- Words are lower-case, split on non-alphanumerics and camelCase; each word and each pair of neighbouring
-- words is looked up as it is (topic_words carries the plural forms, so "news" and "teams" match as written).
-- Only the shared-toolset count looks across endpoints; the rest depends on the tool list alone, so words are
-- split once per distinct list (tools_hash) of the day, not once per endpoint.
WITH lists AS (
    SELECT tools_hash, position, name, coalesce(description, '') AS description FROM list_facts
),
endpoints AS (
    SELECT server_key, server_id, tools_hash FROM daily_status
    WHERE day = $day::DATE AND tools_hash IN (SELECT tools_hash FROM lists)
),
shared_lists AS (
    SELECT tools_hash FROM endpoints GROUP BY tools_hash HAVING count(*) >= $shared_min
),
totals AS (
    SELECT tools_hash, count(*) AS tool_count FROM lists GROUP BY tools_hash
),
-- Every text a rule reads, keyed by what the rule places (a tool list, or an endpoint for its listing):
-- tool_names reads each tool's name (outside shared toolsets) and counts names; words reads names and
-- descriptions and counts words; name_and_summary reads the listing's name, title and description.
texts AS (
    SELECT 'tool_names' AS rule, l.tools_hash AS k, l.name AS item, l.name AS text
    FROM lists AS l ANTI JOIN shared_lists USING (tools_hash)
    UNION ALL
    SELECT 'words', tools_hash, name, name || ' ' || description FROM lists
    UNION ALL
    SELECT 'name_and_summary', lt.server_key, lt.server_key, lt.text
    FROM listing_text AS lt SEMI JOIN endpoints USING (server_key)
),
tokens AS (
    SELECT rule, k, item,
           regexp_split_to_array(lower(regexp_replace(text, '([a-z0-9])([A-Z])', '\1_\2', 'g')), '[^a-z0-9]+')
               AS toks
    FROM texts
),
words AS (  -- each word, and each pair of neighbouring words joined by '_'
    SELECT rule, k, item,
           unnest(list_concat(toks, list_transform(range(1, len(toks)), lambda i: toks[i] || '_' || toks[i + 1])))
               AS word
    FROM tokens
),
scored AS (
    SELECT w.rule, w.k, tw.topic,
           CASE WHEN w.rule = 'tool_names' THEN count(DISTINCT w.item) ELSE count(*) END AS score,
           list(DISTINCT w.word) AS words
    FROM words AS w
    JOIN topic_words AS tw ON tw.word = w.word AND (w.rule <> 'tool_names' OR tw.tool_name_topic)
    WHERE w.word NOT IN (SELECT word FROM generic_words)
    GROUP BY w.rule, w.k, tw.topic
),
ranked AS (
    SELECT *, row_number() OVER (PARTITION BY rule, k ORDER BY score DESC, topic) AS rank,
           coalesce(max(score) OVER (PARTITION BY rule, k ORDER BY score DESC, topic
                                     ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING), 0) AS runner_up
    FROM scored
),
winners AS (
    SELECT r.rule, r.k, r.topic, r.score, r.words
    FROM ranked AS r LEFT JOIN totals ON r.rule = 'tool_names' AND totals.tools_hash = r.k
    WHERE r.rank = 1 AND CASE r.rule
        WHEN 'name_and_summary' THEN r.score >= 1 AND r.score > r.runner_up
        WHEN 'tool_names' THEN r.score >= $min_names AND r.score >= $dominance * r.runner_up
                               AND r.score >= $min_share * totals.tool_count
        ELSE r.score >= $words_min AND r.score > r.runner_up
    END
),
by_summary AS (SELECT k AS server_key, topic, score, words FROM winners WHERE rule = 'name_and_summary'),
by_names AS (SELECT k AS tools_hash, topic, score, words FROM winners WHERE rule = 'tool_names'),
by_words AS (SELECT k AS tools_hash, topic, score, words FROM winners WHERE rule = 'words')
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
