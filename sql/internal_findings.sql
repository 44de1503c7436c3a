-- internal_findings: one row per endpoint, day $day, tool and matched phrase. Internal only: for a person
-- to review; never published, never exported (docs/methodology.md: findings.internal_only).
-- Inputs: tools of $day, phrases (assets/injection_phrases.json, version $method_version).
SELECT t.day, t.server_key, t.name AS tool_name, 'prompt_injection_phrase' AS "check", p.phrase AS pattern,
       $method_version AS method_version
FROM tools AS t
JOIN phrases AS p ON strpos(lower(t.description), p.phrase) > 0
WHERE t.day = $day::DATE
ORDER BY t.server_key, t.name, p.phrase
