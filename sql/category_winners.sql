-- category_winners: the winning topic of each text group the day's categories need and do not know yet, if
-- its rule's thresholds hold. Grain: one row per (rule, k) with a winner.
-- Inputs: list_texts (tools_hash, name, description: the tools of the tool lists not scored before under this
-- method, sql/list_categories.sql), listing_text (server_key, text: the registry name after its namespace,
-- title and description of the entry in force), daily_status of $day for the endpoints with a tool list (an
-- empty list too: its endpoint has a registry verdict, categories-1.5); topic_words (topic, word,
-- tool_name_topic, entry: every form that matches, plurals and two-word entries joined by '_' included, and the
-- topic's entry it is a form of) and generic_words (word) from assets/categories.json; parameters from
-- sevenmaps_pipeline/rules/methods.py and curated/categories.py (other_senses, whole_words).
-- Text groups: 'tool_names' and 'words' keyed by a tool list (k = tools_hash; item the tool's name's MD5 as a number:
-- a name of a megabyte on each of its words' rows took gigabytes; text its
-- name, or its name and description), 'name_and_summary' keyed by an endpoint with a tool list (its
-- listing's text). Thresholds (docs/methodology.md; sql/server_categories.sql applies the rules in order):
--   name_and_summary: the top topic with at least one word and more than any other topic;
--   tool_names: a topic named by >= $min_names tool names, at least $dominance times as many as any other
--     topic, and at least $min_share of all the list's tools (generic words dropped first); scored for
--     every list, shared or not (whether a list is shared is the day's: sql/server_categories.sql);
--   words: the top topic with >= $words_min words and more than any other topic.
-- entries: how many of the topic's own entries matched (a word and its plural are one entry; a name repeated in
-- the description is one entry): what sql/server_categories.sql asks of the registry text to keep its verdict
-- against the tools' (docs/methodology.md, categories-1.2).
-- Words are lower-case, split on non-alphanumerics and camelCase; each word and each pair of neighbouring
-- words is looked up as it is (topic_words carries the plural forms, so "news" and "teams" match as written).
-- A camelCase word that is a topic word as a whole ($whole_words: "GitLab", "YouTube") stays whole and is counted
-- once, not as its parts ("git" + "lab"), so a brand name counts however it is capitalised; any other camelCase
-- word ("getFlights", "ClickHouse") is its parts, as before (docs/methodology.md, categories-1.5).
-- Phrases in which a topic word means something else ($other_senses: "rich menu", "email delivery",
-- categories-1.4) are blanked first, twice so that a phrase right after another one is blanked too.
WITH endpoints AS (
    SELECT server_key FROM daily_status
    WHERE day = $day::DATE AND tools_hash IS NOT NULL
),
named_texts AS (  -- item: the tool's name as a number, which every word row carries (a name may be megabytes)
    SELECT tools_hash, name, description, md5_number(name) AS item FROM list_texts
),
category_texts AS (
    SELECT 'tool_names' AS rule, tools_hash AS k, item, name AS text FROM named_texts
    UNION ALL
    SELECT 'words', tools_hash, item, name || ' ' || coalesce(description, '') FROM named_texts
    UNION ALL
    SELECT 'name_and_summary', lt.server_key, NULL::UHUGEINT, lt.text
    FROM listing_text AS lt SEMI JOIN endpoints USING (server_key)
),
list_sizes AS (
    SELECT tools_hash, count(*) AS tool_count FROM list_texts GROUP BY tools_hash
),
split AS (  -- each run of letters and digits: whole when it is a topic word, else its camelCase parts
    SELECT rule, k, item,
           array_to_string(list_transform(regexp_split_to_array(text, '[^\pL\pN]+'), lambda w:
               CASE WHEN regexp_full_match(lower(w), $whole_words) THEN lower(w)
                    ELSE lower(regexp_replace(w, '([a-z0-9])([A-Z])', '\1_\2', 'g')) END), ' ') AS text
    FROM category_texts
),
tokens AS (
    SELECT rule, k, item,
           regexp_split_to_array(regexp_replace(regexp_replace(text, $other_senses, '\1 \3', 'g'),
                                                $other_senses, '\1 \3', 'g'), '[^a-z0-9]+') AS toks
    FROM split
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
           count(DISTINCT tw.entry) AS entries,
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
)
SELECT r.rule, r.k, r.topic, r.score, r.entries, list_sort(r.words) AS words
FROM ranked AS r LEFT JOIN list_sizes AS s ON r.rule = 'tool_names' AND s.tools_hash = r.k
WHERE r.rank = 1 AND CASE r.rule
    WHEN 'name_and_summary' THEN r.score >= 1 AND r.score > r.runner_up
    WHEN 'tool_names' THEN r.score >= $min_names AND r.score >= $dominance * r.runner_up
                           AND r.score >= $min_share * s.tool_count
    ELSE r.score >= $words_min AND r.score > r.runner_up
END
ORDER BY r.rule, r.k
