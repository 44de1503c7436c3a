-- readiness_scores: each listing's readiness score on $day, summed from its lines.
-- Grain: one row per MCP endpoint with a readiness check and per skill read on $day.
-- Inputs: readiness_lines of $day.
-- Rule (docs/methodology.md, "Readiness"): a line the probe could not see counts for nothing on either side
-- of the slash, so possible is the sum of the seen lines' points and earned the points they earned; each
-- section the same. The section columns follow the rubric's order (the second is "Speaks the protocol" for
-- MCP servers and "Speaks the format" for skills).
WITH lines AS (
    SELECT *, CASE section
        WHEN 'Reachable' THEN 'reachable'
        WHEN 'Speaks the protocol' THEN 'speaks' WHEN 'Speaks the format' THEN 'speaks'
        WHEN 'Cheap to hold' THEN 'cheap' WHEN 'Honest' THEN 'honest' WHEN 'Trustworthy' THEN 'trustworthy'
    END AS part
    FROM readiness_lines
    WHERE day = $day::DATE
),
summed AS (
    SELECT subject_kind, subject_key, any_value(server_id) AS server_id, any_value(server_name) AS server_name,
           any_value(rubric_version) AS rubric_version,
           sum(points) FILTER (WHERE part = 'reachable') AS reachable_earned,
           sum(max_points) FILTER (WHERE part = 'reachable' AND seen) AS reachable_possible,
           sum(points) FILTER (WHERE part = 'speaks') AS speaks_earned,
           sum(max_points) FILTER (WHERE part = 'speaks' AND seen) AS speaks_possible,
           sum(points) FILTER (WHERE part = 'cheap') AS cheap_earned,
           sum(max_points) FILTER (WHERE part = 'cheap' AND seen) AS cheap_possible,
           sum(points) FILTER (WHERE part = 'honest') AS honest_earned,
           sum(max_points) FILTER (WHERE part = 'honest' AND seen) AS honest_possible,
           sum(points) FILTER (WHERE part = 'trustworthy') AS trustworthy_earned,
           sum(max_points) FILTER (WHERE part = 'trustworthy' AND seen) AS trustworthy_possible,
           round(sum(points), 2) AS earned,
           coalesce(sum(max_points) FILTER (WHERE seen), 0) AS possible,
           count(*) FILTER (WHERE seen) AS lines_seen,
           count(*) FILTER (WHERE NOT seen) AS lines_unseen
    FROM lines
    GROUP BY subject_kind, subject_key
)
SELECT $day::DATE AS day, subject_kind, subject_key, server_id, server_name, rubric_version,
       round(coalesce(reachable_earned, 0), 2) AS reachable_earned, coalesce(reachable_possible, 0) AS reachable_possible,
       round(coalesce(speaks_earned, 0), 2) AS speaks_earned, coalesce(speaks_possible, 0) AS speaks_possible,
       round(coalesce(cheap_earned, 0), 2) AS cheap_earned, coalesce(cheap_possible, 0) AS cheap_possible,
       round(coalesce(honest_earned, 0), 2) AS honest_earned, coalesce(honest_possible, 0) AS honest_possible,
       round(coalesce(trustworthy_earned, 0), 2) AS trustworthy_earned,
       coalesce(trustworthy_possible, 0) AS trustworthy_possible,
       earned, possible,
       -- as the rubric shows it: 61/85, 76.14/100 (no trailing zeros)
       regexp_replace(regexp_replace(printf('%.2f', earned), '0+$', ''), '\.$', '') || '/'
           || regexp_replace(regexp_replace(printf('%.2f', possible), '0+$', ''), '\.$', '') AS score,
       lines_seen, lines_unseen
FROM summed
ORDER BY subject_kind, subject_key
