-- incidents: live incidents on $day, incidents closed that day, and failure reports nothing confirmed.
-- Grain: one row per endpoint with one of those.
-- Inputs: agent_reports that arrived in the $lookback_days days ending on $day (valid rows only), about days
-- in that span; daily_status over the same days (our own checks); incident_reviews, a person's reviews
-- (control/incident_reviews.parquet, registry/incident_reviews.py), those made before $day ended.
-- Method ($method_version, docs/methodology.md, `incidents`; parameters in rules/methods.py INCIDENTS_PARAMS):
--   * a failure report is a report that the endpoint itself failed ($failures);
--   * a day is confirmed when failures were reported about it and either our own check that day was d,
--     or at least $trusted_min distinct paying reporters reported a failure, or a person confirmed them on
--     a fresh check of ours that day (hourly or five-minute) that did not answer ('our_fresh_check'; the
--     review keeps that check); anonymous reports alone, or a person's say-so, never confirm anything;
--   * a day works when our check answered (o, a or p) or a paying reporter's call worked; a working day
--     after the last confirmed day closes the incident ('a check works again'), and so does a span of
--     $age_out days without a new confirmation ('the reports aged out'), and so does a person's closure
--     ('a person closed it after review', with closed_by, closed_at and their words in closed_note) on
--     the day it was made; whichever comes first, the person's on the same day;
--   * an incident opens on the first confirmed day of its run (confirmed days less than $age_out apart
--     with no working day and no person's closure between them), looked for at most $lookback_days back:
--     a failure confirmed about a day after a closure opens a new incident, while confirmations about the
--     closing day itself or before belong to the closed one;
--   * failure reports about $day that nothing confirmed, with no live incident, are 'unconfirmed': kept for
--     a person to review, never shown.
WITH days AS (
    SELECT ($day::DATE - i::INTEGER) AS day FROM range(0, $lookback_days) AS t(i)
),
reports AS (
    SELECT * FROM agent_reports
    WHERE about_day BETWEEN $day::DATE - ($lookback_days - 1)::INTEGER AND $day::DATE AND day <= $day::DATE
),
failures AS (
    SELECT server_key, about_day AS day,
           count(DISTINCT reporter_id) AS failure_reporters,
           count(DISTINCT reporter_id) FILTER (WHERE paid) AS trusted_failure_reporters
    FROM reports
    WHERE NOT ok AND list_contains($failures, fail)
    GROUP BY ALL
),
trusted_calls_work AS (
    SELECT DISTINCT server_key, about_day AS day FROM reports WHERE ok AND paid
),
reviews AS (
    SELECT * FROM incident_reviews WHERE reviewed_at < ($day::DATE + 1)::TIMESTAMPTZ
),
fresh_checks AS (
    SELECT server_key, incident_day AS day, max(check_started_at) AS check_at,
           arg_max(reviewer, check_started_at) AS reviewer
    FROM reviews WHERE action = 'confirm' GROUP BY ALL
),
closures AS (
    SELECT server_key, reviewed_at::DATE AS close_day, reviewed_at, reviewer, reason FROM reviews WHERE action = 'close'
),
grid AS (
    SELECT e.server_key, d.day, s.code,
           coalesce(f.failure_reporters, 0) AS failure_reporters,
           coalesce(f.trusted_failure_reporters, 0) AS trusted_failure_reporters,
           t.day IS NOT NULL AS trusted_call_works,
           r.check_at AS fresh_check_at, r.reviewer AS fresh_check_reviewer
    FROM (SELECT DISTINCT server_key FROM failures) AS e
    CROSS JOIN days AS d
    LEFT JOIN daily_status AS s ON s.server_key = e.server_key AND s.day = d.day
    LEFT JOIN failures AS f ON f.server_key = e.server_key AND f.day = d.day
    LEFT JOIN trusted_calls_work AS t ON t.server_key = e.server_key AND t.day = d.day
    LEFT JOIN fresh_checks AS r ON r.server_key = e.server_key AND r.day = d.day
),
flags AS (
    SELECT *,
           CASE WHEN failure_reporters = 0 THEN NULL
                WHEN code = 'd' AND trusted_failure_reporters >= $trusted_min THEN 'both'
                WHEN code = 'd' THEN 'our_check'
                WHEN trusted_failure_reporters >= $trusted_min THEN 'trusted_reports'
                WHEN fresh_check_at IS NOT NULL THEN 'our_fresh_check' END AS confirmed_by,
           code IN ('o', 'a', 'p') OR trusted_call_works AS works
    FROM grid
),
confirmed AS (
    SELECT server_key, day, confirmed_by,
           CASE WHEN confirmed_by = 'our_fresh_check' THEN fresh_check_at END AS fresh_check_at,
           CASE WHEN confirmed_by = 'our_fresh_check' THEN fresh_check_reviewer END AS fresh_check_reviewer,
           lag(day) OVER (PARTITION BY server_key ORDER BY day) AS previous_confirmed
    FROM flags WHERE confirmed_by IS NOT NULL
),
runs AS (
    SELECT c.*,
           (c.previous_confirmed IS NULL OR c.day - c.previous_confirmed >= $age_out
            OR EXISTS (SELECT 1 FROM flags AS f
                       WHERE f.server_key = c.server_key AND f.works AND f.confirmed_by IS NULL
                         AND f.day > c.previous_confirmed AND f.day < c.day)
            OR EXISTS (SELECT 1 FROM closures AS x
                       WHERE x.server_key = c.server_key
                         AND x.close_day >= c.previous_confirmed AND x.close_day < c.day)) AS starts_run
    FROM confirmed AS c
),
numbered AS (
    SELECT *, sum(starts_run::INTEGER) OVER (PARTITION BY server_key ORDER BY day) AS run
    FROM runs
),
latest_run AS (
    SELECT server_key, min(day) AS opened_day, max(day) AS last_confirmed_day,
           arg_max(confirmed_by, day) AS confirmed_by,
           arg_max(fresh_check_at, day) AS confirmed_check_at,
           arg_max(fresh_check_reviewer, day) AS confirmed_reviewer
    FROM numbered
    WHERE (server_key, run) IN (SELECT server_key, max(run) FROM numbered GROUP BY server_key)
    GROUP BY server_key
),
closing AS (
    SELECT l.*,
           (SELECT min(f.day) FROM flags AS f
            WHERE f.server_key = l.server_key AND f.works AND f.confirmed_by IS NULL
              AND f.day > l.last_confirmed_day) AS works_again_day,
           l.last_confirmed_day + $age_out::INTEGER AS aged_out_day,
           -- The first closure made on or after the incident's opening day (none falls between its
           -- confirmed days: such a closure would have started a new run).
           (SELECT arg_min(x, x.reviewed_at) FROM closures AS x
            WHERE x.server_key = l.server_key AND x.close_day >= l.opened_day) AS closure
    FROM latest_run AS l
),
ends AS (
    SELECT *,
           CASE WHEN works_again_day IS NOT NULL AND works_again_day <= aged_out_day THEN works_again_day
                ELSE aged_out_day END AS automatic_day
    FROM closing
),
states AS (
    SELECT e.*,
           CASE WHEN closure.close_day <= automatic_day THEN closure.close_day ELSE automatic_day END AS closed_day,
           CASE WHEN closure.close_day <= automatic_day THEN 'a person closed it after review'
                WHEN works_again_day IS NOT NULL AND works_again_day <= aged_out_day THEN 'a check works again'
                ELSE 'the reports aged out' END AS reason,
           coalesce(closure.close_day <= automatic_day, false) AS by_person
    FROM ends AS e
),
today AS (
    SELECT * FROM flags WHERE day = $day::DATE
)
SELECT
    $day::DATE AS day,
    t.server_key,
    left(sha256(t.server_key), 12) AS server_id,
    CASE WHEN s.closed_day > $day::DATE THEN 'live'
         WHEN s.closed_day = $day::DATE THEN 'closed'
         ELSE 'unconfirmed' END AS status,
    coalesce(s.closed_day > $day::DATE, false) AS shown,
    CASE WHEN s.closed_day >= $day::DATE THEN s.opened_day END AS opened_day,
    CASE WHEN s.closed_day >= $day::DATE THEN s.last_confirmed_day END AS last_confirmed_day,
    CASE WHEN s.closed_day >= $day::DATE THEN s.confirmed_by END AS confirmed_by,
    t.failure_reporters,
    t.trusted_failure_reporters,
    t.code AS our_code,
    CASE WHEN s.closed_day = $day::DATE THEN s.reason END AS closed_reason,
    CASE WHEN s.closed_day = $day::DATE AND s.by_person THEN s.closure.reviewer END AS closed_by,
    CASE WHEN s.closed_day = $day::DATE AND s.by_person THEN s.closure.reviewed_at END AS closed_at,
    CASE WHEN s.closed_day = $day::DATE AND s.by_person THEN s.closure.reason END AS closed_note,
    CASE WHEN s.closed_day >= $day::DATE THEN s.confirmed_check_at END AS confirmed_check_at,
    CASE WHEN s.closed_day >= $day::DATE THEN s.confirmed_reviewer END AS confirmed_reviewer,
    $method_version AS method_version
FROM today AS t
LEFT JOIN states AS s USING (server_key)
WHERE s.closed_day >= $day::DATE OR t.failure_reporters > 0
ORDER BY t.server_key
