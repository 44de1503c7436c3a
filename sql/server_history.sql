-- server_history: one row per endpoint on the map on $day, describing the $window_days UTC days that end
-- on $day (oldest first).
-- Inputs: daily_status for $day (the endpoints on the map); history_state (sql/history_state.sql) for the
--         window's days (missing partitions count as n);
--         tool_changes for $day and the $change_days_kept - 1 days before it (sql/tool_changes.sql).
-- Method ($method_version, parameters in sevenmaps_pipeline/rules/methods.py):
--   * history: one code per day, n where the endpoint had no row (not on the map, or no partition);
--   * checked = not n; answered = o + a + p; uptime = answered / checked in percent, floored to one
--     decimal with integer arithmetic, so 29/30 shows 96.6 and only all-answered shows 100.0;
--   * tools days: the o days whose tool list had at least one tool (an empty list is an answer, not tools;
--     history-1.2), what the reliable lists rank by;
--   * label '30-day uptime' from $label_min checked days, else 'over N days observed' ('over 1 day observed':
--     history-1.3), and 'no data' with no checked day, as every page says it (history-1.4);
--   * success chance: Beta($prior_alpha, $prior_beta) updated with checked days, each weighted
--     0.5^(age / $half_life) (age 0 = $day); mean and the $q_low/$q_high quantiles (90% interval);
--   * stability: 1 - change days / comparisons. A comparison is a day in the window with a tool list whose
--     endpoint had a tool list on an earlier day in the window, and whose tool_changes were built
--     (change_record_days: a day without change records cannot say whether the list changed); a change
--     day is such a day on which tool_changes recorded one of $list_change_kinds against that earlier day;
--   * change_days: the days of the last $change_days_kept with any tool_changes record (seed: kept 60 days).
-- The window's days come as history_state (sql/history_state.sql: per endpoint, bit masks of the days by
-- code and with a tool list, bit age, 0 for $day; the handshake of each o day by age), folded a day at a
-- time (curated/history_state.py), so no row of an earlier day is read here (docs/scaling.md). The days
-- with change records and with a list change are masks too, taken from tool_changes' rows. The first
-- listed day of the window, which has nothing earlier to be compared with, is taken off the comparisons
-- and change days it would count.
WITH today AS (
    SELECT server_key, server_id, server_name, url, code FROM daily_status WHERE day = $day::DATE
),
recorded AS (  -- the window's days whose tool_changes were built (a day without them cannot say "unchanged")
    SELECT coalesce(bit_or(1::BIGINT << ($day::DATE - day)::INTEGER), 0) AS mask
    FROM change_record_days
    WHERE day BETWEEN $day::DATE - ($window_days - 1)::INTEGER AND $day::DATE
),
list_changes AS (
    SELECT server_key, bit_or(1::BIGINT << ($day::DATE - day)::INTEGER) AS mask
    FROM (SELECT DISTINCT server_key, day FROM tool_changes
          WHERE list_contains($list_change_kinds, kind)
            AND previous_day >= $day::DATE - ($window_days - 1)::INTEGER AND day <= $day::DATE
            AND day >= $day::DATE - ($window_days - 1)::INTEGER)
    GROUP BY server_key
),
weights AS (  -- each age's weight as exact integer units (1e-12): their sums do not depend on the order
              -- they are added in, so a day recomputed comes out byte for byte the same (signed days must)
    SELECT list_transform(range($window_days), lambda age: round(power(0.5, age / $half_life) * 1e12)::BIGINT)
               AS units
),
per_server AS (
    SELECT server_key, lo, mid, hi, listed AS listed_mask,
           bit_count(lo | mid | hi)::INTEGER AS checked_days,
           bit_count((lo | mid) & ~hi)::INTEGER AS answered_days,
           bit_count(lo & ~mid & ~hi)::INTEGER AS ok_days,
           bit_count(with_tools)::INTEGER AS tools_days,
           bit_count(hi)::INTEGER AS down_days,
           $prior_alpha + list_sum(list_transform(range($window_days), lambda age:
               ((((lo | mid) & ~hi) >> age) & 1) * units[age + 1])) / 1e12 AS alpha,
           $prior_beta + list_sum(list_transform(range($window_days), lambda age:
               ((hi >> age) & 1) * units[age + 1])) / 1e12 AS beta,
           list_aggregate(handshakes, 'median') AS median_handshake_ms,
           list_max(list_filter(range($window_days), lambda age: (listed >> age) & 1 = 1)) AS first_listed_age
    FROM history_state CROSS JOIN weights
),
counted AS (
    SELECT p.*, coalesce(c.mask, 0) AS changed_mask, r.mask AS recorded_mask,
           -- comparisons: listed days with change records; change days: those with a list change too
           bit_count(p.listed_mask & r.mask)::INTEGER AS listed_recorded_days,
           bit_count(p.listed_mask & r.mask & coalesce(c.mask, 0))::INTEGER AS listed_changed_days
    FROM per_server AS p LEFT JOIN list_changes AS c USING (server_key) CROSS JOIN recorded AS r
),
tool_churn AS (
    SELECT server_key,
           listed_recorded_days - ((recorded_mask >> first_listed_age::INTEGER) & 1)::INTEGER AS comparisons,
           listed_changed_days - (((recorded_mask & changed_mask) >> first_listed_age::INTEGER) & 1)::INTEGER
               AS changes
    FROM counted
    WHERE listed_recorded_days > 0
),
recent_change_days AS (
    SELECT server_key, list(DISTINCT day ORDER BY day) AS change_days
    FROM tool_changes
    WHERE day BETWEEN $day::DATE - ($change_days_kept - 1)::INTEGER AND $day::DATE
    GROUP BY server_key
),
history AS (
    SELECT server_key,
           array_to_string(list_transform(range($window_days - 1, -1, -1),
               lambda age: ['n', 'o', 'a', 'p', 'd'][((lo >> age) & 1) + 2 * ((mid >> age) & 1)
                                                      + 4 * ((hi >> age) & 1) + 1]), '')
               AS history
    FROM counted
)
SELECT
    $day::DATE AS day,
    t.server_key,
    t.server_id,
    t.server_name,
    t.url,
    h.history,
    p.checked_days,
    p.answered_days,
    p.ok_days,
    p.tools_days,
    p.down_days,
    CASE WHEN p.checked_days > 0 THEN ((1000 * p.answered_days) // p.checked_days) / 10.0 END AS uptime_pct,
    CASE WHEN p.checked_days >= $label_min THEN '30-day uptime'
         WHEN p.checked_days = 1 THEN 'over 1 day observed'
         WHEN p.checked_days = 0 THEN 'no data'
         ELSE 'over ' || p.checked_days || ' days observed' END AS uptime_label,
    p.alpha / (p.alpha + p.beta) AS success_chance,
    beta_quantile(p.alpha, p.beta, $q_low) AS success_chance_low,
    beta_quantile(p.alpha, p.beta, $q_high) AS success_chance_high,
    coalesce(c.comparisons, 0) AS tool_list_comparisons,
    coalesce(c.changes, 0) AS tool_list_change_days,
    CASE WHEN c.comparisons > 0 THEN 1.0 - c.changes / c.comparisons END AS stability,
    coalesce(r.change_days, []::DATE[]) AS change_days,
    p.median_handshake_ms,
    $method_version AS method_version
FROM today AS t
JOIN counted AS p USING (server_key)
JOIN history AS h USING (server_key)
LEFT JOIN tool_churn AS c USING (server_key)
LEFT JOIN recent_change_days AS r USING (server_key)
ORDER BY t.server_key
