-- current_status (a view): one row per endpoint on the map's latest built day, with the status shown now.
-- Inputs:
--   daily_status   the latest built day (its deciding daily check: code, shown status, checked_at)
--   open_status    the daily checks of the days after the built day so far (provisional, rebuilt after
--                  each slice: curated/open_day.py); empty where none is read (the signed day's site)
--   hourly_checks  raw/hourly: the hourly checks of the most used endpoints (not covered by roots)
--   five_minute_checks  raw/five_minute: the five-minute checks of the endpoints their owners chose
-- Method (current-1.3, docs/methodology.md "Hourly checks" and "The open day"):
--   * the daily status stands until a newer check says otherwise;
--   * the open day's daily check of an endpoint (its slice today) replaces the built day's at once: it is
--     decided as any day's check is (sql/daily_status.sql), so it needs no second check;
--   * a newer hourly or five-minute answer (ok, needs_auth, http_402) replaces it at once;
--   * a failed hourly or five-minute check replaces it only when the check just before it (of any kind)
--     failed too: one failure is a flap and changes nothing shown; two in a row are shown;
--   * skipped checks and our own faults (prober_error, not_checked) are not results: they are left out;
--   * hourly, five-minute and the open day's checks never change a day code, uptime or any signed table: this is a view
--     for answers, badges and lists;
--   * failing_since: the first check of the run shown down now (a failure shown as "answers, but not as a standard
--     MCP endpoint" is no part of such a run), among the deciding daily check and the checks after it; the down
--     list's "down since" reaches back over earlier days from it (publishing/status.py DOWN_SINCE).
WITH latest AS (
    SELECT * FROM daily_status WHERE day = (SELECT max(day) FROM daily_status)
),
today AS (
    -- An endpoint's latest check of a day after the built day (the day that just ended, until its map is
    -- built, or the open day), read provisionally.
    SELECT o.server_key, o.day, o.checked_at, o.code, o.outcome, o.reason, o.http_status, o.tool_count
    FROM open_status AS o
    JOIN latest AS l USING (server_key)
    WHERE o.day > l.day AND o.checked_at IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY o.server_key ORDER BY o.day DESC, o.checked_at DESC) = 1
),
deciding AS (
    SELECT server_key, day, checked_at, code, outcome, reason, http_status, tool_count, 'slice' AS source FROM today
    UNION ALL
    SELECT l.server_key, l.day, l.checked_at, l.code, l.outcome, l.reason, l.http_status, l.tool_count, 'daily'
    FROM latest AS l ANTI JOIN today AS t USING (server_key)
),
frequent_checks AS (
    SELECT server_key, check_kind, started_at, outcome, outcome_detail, http_status, tool_count
    FROM hourly_checks WHERE check_kind = 'hourly'
    UNION ALL
    SELECT server_key, check_kind, started_at, outcome, outcome_detail, http_status, tool_count
    FROM five_minute_checks WHERE check_kind = 'five_minute'
),
hourly AS (
    -- The hourly and five-minute checks newer than the deciding daily check (the name is the older one's).
    SELECT h.server_key, h.check_kind, h.started_at, h.outcome, h.outcome_detail, h.http_status, h.tool_count,
           CASE h.outcome WHEN 'ok' THEN 'o' WHEN 'needs_auth' THEN 'a' WHEN 'http_402' THEN 'p' ELSE 'd' END AS code
    FROM frequent_checks AS h
    JOIN deciding AS l USING (server_key)
    WHERE h.outcome NOT IN ('skipped', 'prober_error', 'not_checked')
      -- midnight UTC of the day before, in any session zone (a cast to TIMESTAMPTZ would take a plain reader's
      -- machine zone: docs/analyst.md)
      AND h.started_at > coalesce(l.checked_at, (l.day - INTERVAL 1 DAY) AT TIME ZONE 'UTC')
),
sequence AS (
    SELECT server_key, checked_at AS seen_at, code, outcome, reason AS detail, http_status, tool_count, source
    FROM deciding
    UNION ALL
    SELECT server_key, started_at, code, outcome, outcome_detail, http_status, tool_count, check_kind FROM hourly
),
judged AS (
    SELECT *, lag(code) OVER (PARTITION BY server_key ORDER BY seen_at NULLS FIRST) AS previous_code,
           -- a failure shown as down, not as an answer that is no standard MCP endpoint (current_shown_status)
           code = 'd' AND NOT (coalesce(http_status IN (400, 405), false) OR outcome = 'not_mcp') AS shown_down
    FROM sequence
),
shown AS (
    -- The latest check that counts: a daily one (the built day's or the open day's), an hourly or five-minute
    -- answer, or a failure that follows a failure.
    SELECT * FROM judged
    WHERE source IN ('daily', 'slice') OR code IN ('o', 'a', 'p') OR (code = 'd' AND previous_code = 'd')
    QUALIFY row_number() OVER (PARTITION BY server_key ORDER BY seen_at DESC NULLS LAST) = 1
),
last_up AS (
    SELECT server_key, max(seen_at) AS up_at FROM judged WHERE NOT shown_down GROUP BY server_key
),
failing AS (
    -- The first check of the run of checks shown down the endpoint is in now (of any kind; a day without a valid
    -- check is no check, so it never ends a run): where an outage shown now began, at the latest.
    SELECT j.server_key, min(j.seen_at) AS failing_since
    FROM judged AS j LEFT JOIN last_up AS u USING (server_key)
    WHERE j.shown_down AND (u.up_at IS NULL OR j.seen_at > u.up_at)
    GROUP BY j.server_key
),
counts AS (
    SELECT server_key, count(*) FILTER (WHERE check_kind = 'hourly') AS hourly_checks,
           count(*) FILTER (WHERE check_kind = 'five_minute') AS five_minute_checks,
           max(started_at) AS last_hourly_at, arg_max(outcome, started_at) AS last_hourly_outcome
    FROM hourly GROUP BY server_key
)
SELECT
    l.day,
    l.server_key,
    l.server_id,
    l.server_name,
    l.url,
    s.code AS current_code,
    CASE s.code
        WHEN 'o' THEN CASE WHEN coalesce(s.tool_count, 0) > 0 THEN 'answers with tools'
                           ELSE 'answers, lists no tools' END
        WHEN 'a' THEN 'answers, asks for sign-in'
        WHEN 'p' THEN 'answers, asks for payment'
        WHEN 'n' THEN 'no data'
        ELSE CASE WHEN s.http_status IN (400, 405) OR s.outcome = 'not_mcp'
                  THEN 'answers, but not as a standard MCP endpoint' ELSE 'down' END
    END AS current_shown_status,
    -- The tools the deciding check listed (an o with 0 is an answer, not tools: reliable-1.2).
    CASE WHEN s.code = 'o' THEN s.tool_count END AS current_tool_count,
    s.source AS decided_by,
    s.seen_at AS decided_at,
    s.detail AS current_reason,
    l.code AS daily_code,
    l.shown_status AS daily_shown_status,
    t.day AS open_day,
    t.code AS open_day_code,
    t.checked_at AS open_day_checked_at,
    CASE WHEN s.shown_down THEN f.failing_since END AS failing_since,  -- null unless shown down now
    coalesce(c.hourly_checks, 0) AS hourly_checks_since_daily,
    coalesce(c.five_minute_checks, 0) AS five_minute_checks_since_daily,
    c.last_hourly_at,
    c.last_hourly_outcome,
    -- The newest hourly or five-minute check failed and is not shown yet (one failure in a row).
    coalesce(c.last_hourly_outcome NOT IN ('ok', 'needs_auth', 'http_402') AND c.last_hourly_at > s.seen_at, false)
        AS unconfirmed_failure,
    'current-1.3' AS method_version
FROM latest AS l
JOIN shown AS s USING (server_key)
LEFT JOIN today AS t USING (server_key)
LEFT JOIN failing AS f USING (server_key)
LEFT JOIN counts AS c USING (server_key)
