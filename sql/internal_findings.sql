-- internal_findings: one row per endpoint, day $day, tool and matched phrase. Internal only: for a person
-- to review; never published, never exported (docs/methodology.md: findings.internal_only).
-- Inputs: tools of $day, phrases (assets/injection_phrases.json, version $method_version).
-- Each distinct description is matched once (a day repeats the same few lists on many endpoints).
WITH t AS (
    SELECT day, server_key, name, description FROM tools WHERE day = $day::DATE AND description IS NOT NULL
),
matched AS (
    SELECT d.description, p.phrase
    FROM (SELECT description, lower(description) AS lowered FROM (SELECT DISTINCT description FROM t)) AS d
    JOIN phrases AS p ON strpos(d.lowered, p.phrase) > 0
)
SELECT t.day, t.server_key, t.name AS tool_name, 'prompt_injection_phrase' AS "check", m.phrase AS pattern,
       $method_version AS method_version
FROM t
JOIN matched AS m USING (description)
ORDER BY t.server_key, t.name, m.phrase
