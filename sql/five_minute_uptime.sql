-- five_minute_uptime (a view): one row per endpoint with five-minute checks, its uptime over the last 30
-- days, and over the last 90 days once it has checks older than 30 days.
-- Inputs:
--   five_minute_checks  raw/five_minute: checks of endpoints their owners chose (not covered by roots)
-- Method (five-minute-uptime-1.0, docs/methodology.md "Five-minute checks"):
--   * the windows end at the newest five-minute check of any endpoint (not the reader's clock), and are 30 and
--     90 days of 24 hours (720 and 2160 HOUR: an interval of DAYs on a TIMESTAMPTZ is days of the session's zone,
--     which is a plain reader's machine zone, an hour off across a change of summer time; docs/analyst.md);
--   * a check counts when it has a result: skipped (not reached in time, opted out), prober_error and
--     not_checked (our own fault or trouble) are counted apart, never as down;
--   * answered = ok, needs_auth or http_402 (the same answers as the day codes o, a, p);
--   * uptime is floored to one decimal and is 100% only when every counted check answered;
--   * the 90-day figures are null until the endpoint has a counted check older than 30 days.
WITH checks AS (
    SELECT server_key, started_at, outcome,
           outcome NOT IN ('skipped', 'prober_error', 'not_checked') AS counted,
           outcome IN ('ok', 'needs_auth', 'http_402') AS answered
    FROM five_minute_checks
    WHERE check_kind = 'five_minute'
),
window_end AS (
    SELECT max(started_at) AS window_end_at FROM checks
),
per_endpoint AS (
    SELECT c.server_key,
           count(*) FILTER (WHERE counted AND started_at > w.window_end_at - INTERVAL 720 HOUR) AS checks_30d,
           count(*) FILTER (WHERE answered AND started_at > w.window_end_at - INTERVAL 720 HOUR) AS answered_30d,
           count(*) FILTER (WHERE counted AND started_at > w.window_end_at - INTERVAL 2160 HOUR) AS checks_90d,
           count(*) FILTER (WHERE answered AND started_at > w.window_end_at - INTERVAL 2160 HOUR) AS answered_90d,
           count(*) FILTER (WHERE NOT counted AND started_at > w.window_end_at - INTERVAL 720 HOUR) AS not_counted_30d,
           bool_or(counted AND started_at <= w.window_end_at - INTERVAL 720 HOUR) AS has_older,
           min(started_at) AS first_check_at,
           max(started_at) AS last_check_at,
           arg_max(outcome, started_at) AS last_outcome
    FROM checks AS c, window_end AS w
    GROUP BY c.server_key
)
SELECT
    server_key,
    checks_30d,
    answered_30d,
    not_counted_30d,
    CASE WHEN checks_30d = 0 THEN NULL
         WHEN answered_30d = checks_30d THEN 100.0
         ELSE least(floor(1000.0 * answered_30d / checks_30d) / 10, 99.9) END AS uptime_30d_pct,
    CASE WHEN has_older THEN checks_90d END AS checks_90d,
    CASE WHEN has_older THEN answered_90d END AS answered_90d,
    CASE WHEN NOT has_older OR checks_90d = 0 THEN NULL
         WHEN answered_90d = checks_90d THEN 100.0
         ELSE least(floor(1000.0 * answered_90d / checks_90d) / 10, 99.9) END AS uptime_90d_pct,
    first_check_at,
    last_check_at,
    last_outcome,
    'five-minute-uptime-1.0' AS method_version
FROM per_endpoint
