-- internal_findings: one row per endpoint, day $day, tool and matched phrase. Internal only: for a person
-- to review; never published, never exported (docs/methodology.md: findings.internal_only).
-- Inputs: daily_status of $day (each endpoint's tools_hash), list_facts (sql/day_list_facts.sql: the tools
-- of each list published on $day), phrases (assets/injection_phrases.json, version $method_version).
-- Each distinct description is matched once (a day repeats the same few lists on many endpoints).
WITH t AS (
    SELECT tools_hash, name, description FROM list_facts WHERE description IS NOT NULL
),
matched AS (
    SELECT d.description, p.phrase
    FROM (SELECT description, lower(description) AS lowered FROM (SELECT DISTINCT description FROM t)) AS d
    JOIN phrases AS p ON strpos(d.lowered, p.phrase) > 0
),
list_matches AS (
    SELECT t.tools_hash, t.name AS tool_name, m.phrase FROM t JOIN matched AS m USING (description)
)
SELECT s.day, s.server_key, l.tool_name, 'prompt_injection_phrase' AS "check", l.phrase AS pattern,
       $method_version AS method_version
FROM daily_status AS s
JOIN list_matches AS l USING (tools_hash)
WHERE s.day = $day::DATE
ORDER BY s.server_key, l.tool_name, l.phrase
