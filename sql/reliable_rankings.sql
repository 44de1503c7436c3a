-- reliable_rankings: the reliable list of each category on $day.
-- Grain: one row per eligible endpoint.  Inputs: daily_status, server_history and server_categories of $day.
-- Method ($method_version, docs/methodology.md, `reliable`):
--   * eligible: answering with tools now (today's day code o and at least one tool listed: an empty list is
--     an answer, not tools; reliable-1.2), a category other than 'other', and at least $min_checked checked
--     days in the 30-day window;
--   * order: the share of checked days answering with tools over the window (server_history.tools_days: o
--     days whose list had at least one tool; seed 000: "answering with tools"; a day that only asked for
--     sign-in or payment, or listed no tools, is not one; reliable-1.3), then the share answering at all
--     (o, a or p), then the median handshake of the window's o days (faster first); equal on all three, an
--     equal rank;
--   * nothing else enters: payment, plans, owner verification and agents' ratings are not inputs here;
--   * a row's method_version is $method_version + the categories method that placed the endpoint (its
--     server_categories row's), since the category decides which list it is on.
WITH eligible AS (
    SELECT s.server_key, s.server_id, s.server_name, c.category, c.method_version AS categories_method,
           h.answered_days, h.tools_days, h.checked_days,
           h.uptime_pct, h.median_handshake_ms, h.answered_days::DOUBLE / h.checked_days AS answered_share,
           h.tools_days::DOUBLE / h.checked_days AS tools_share
    FROM daily_status AS s
    JOIN server_history AS h ON h.server_key = s.server_key AND h.day = s.day
    JOIN server_categories AS c ON c.server_key = s.server_key AND c.day = s.day
    WHERE s.day = $day::DATE AND s.code = 'o' AND s.tool_count > 0 AND c.category <> 'other'
      AND h.checked_days >= $min_checked
)
SELECT
    $day::DATE AS day,
    category,
    rank() OVER (PARTITION BY category ORDER BY tools_share DESC, answered_share DESC,
                                                median_handshake_ms ASC NULLS LAST) AS rank,
    server_key,
    server_id,
    server_name,
    tools_share,
    tools_days,
    answered_share,
    answered_days,
    checked_days,
    uptime_pct,
    median_handshake_ms,
    $method_version || '+' || categories_method AS method_version
FROM eligible
ORDER BY category, rank, server_key
