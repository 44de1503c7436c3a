-- internal_findings: one row per endpoint, day $day, tool and matched phrase. Internal only: for a person
-- to review; never published, never exported (docs/methodology.md: findings.internal_only).
-- Inputs: daily_status of $day (each endpoint's tools_hash), list_facts (curated/list_facts.py: the tools of
-- each list published on $day, read once as a stream), phrases (assets/injection_phrases.json, version
-- $method_version).
-- Each list's descriptions are matched once (list_facts holds a list once, whatever endpoints publish it), as
-- they stream by: a day's descriptions are nearly all distinct (1.1 million a day at 100,000 endpoints), so
-- gathering the distinct ones first would hold them all for nothing (docs/scaling.md, "The tool tables").
WITH list_matches AS (
    SELECT t.tools_hash, t.name AS tool_name, p.phrase
    FROM (SELECT tools_hash, name, lower(description) AS lowered FROM list_facts WHERE description IS NOT NULL) AS t
    JOIN phrases AS p ON strpos(t.lowered, p.phrase) > 0
)
SELECT s.day, s.server_key, l.tool_name, 'prompt_injection_phrase' AS "check", l.phrase AS pattern,
       $method_version AS method_version
FROM daily_status AS s
JOIN list_matches AS l USING (tools_hash)
WHERE s.day = $day::DATE
ORDER BY s.server_key, l.tool_name, l.phrase
