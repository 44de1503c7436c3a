-- server_history: one row per endpoint on the map on $day, describing the $window_days UTC days that end
-- on $day (oldest first).
-- Inputs: daily_status for $day and the days before it in the window (missing partitions count as n);
--         tool_changes for $day and the $change_days_kept - 1 days before it (sql/tool_changes.sql).
-- Method ($method_version, parameters in sevenmaps_pipeline/rules/methods.py):
--   * history: one code per day, n where the endpoint had no row (not on the map, or no partition);
--   * checked = not n; answered = o + a + p; uptime = answered / checked in percent, floored to one
--     decimal with integer arithmetic, so 29/30 shows 96.6 and only all-answered shows 100.0;
--   * label '30-day uptime' from $label_min checked days, else 'over N days observed';
--   * success chance: Beta($prior_alpha, $prior_beta) updated with checked days, each weighted
--     0.5^(age / $half_life) (age 0 = $day); mean and the $q_low/$q_high quantiles (90% interval);
--   * stability: 1 - change days / comparisons. A comparison is a day in the window with a tool list whose
--     endpoint had a tool list on an earlier day in the window, and whose tool_changes were built
--     (change_record_days: a day without change records cannot say whether the list changed); a change
--     day is such a day on which tool_changes recorded one of $list_change_kinds against that earlier day;
--   * change_days: the days of the last $change_days_kept with any tool_changes record (seed: kept 60 days).
-- One pass over the window's rows, grouped by endpoint (no endpoint x day grid, no ordered aggregate, no
-- window function, no join per row; docs/scaling.md): each day's code sits in 3 bits of one HUGEINT at bit
-- 3 x age (0 for n, so a missing row reads as n), 42 days at most (build_server_history refuses a longer
-- window); the days checked, answered, ok, down and with a tool list are bit masks (bit age) counted by
-- their bits, and so are the days with change records and with a list change, taken apart from the rows.
-- The first listed day of the window, which has nothing earlier to be compared with, is taken off the
-- comparisons and change days it would count.
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
per_server AS (
    SELECT server_key,
           bit_or((CASE code WHEN 'o' THEN 1 WHEN 'a' THEN 2 WHEN 'p' THEN 3 WHEN 'd' THEN 4 ELSE 0 END)::HUGEINT
                  << (3 * age)) AS packed_codes,
           bit_count(bit_or(CASE WHEN code <> 'n' THEN 1::BIGINT << age ELSE 0 END))::INTEGER AS checked_days,
           bit_count(bit_or(CASE WHEN code IN ('o', 'a', 'p') THEN 1::BIGINT << age ELSE 0 END))::INTEGER
               AS answered_days,
           bit_count(bit_or(CASE WHEN code = 'o' THEN 1::BIGINT << age ELSE 0 END))::INTEGER AS ok_days,
           bit_count(bit_or(CASE WHEN code = 'd' THEN 1::BIGINT << age ELSE 0 END))::INTEGER AS down_days,
           -- Day weights as exact integer units (1e-12): their sums do not depend on the order DuckDB's
           -- threads add them in, so a day recomputed comes out byte for byte the same (signed days must).
           $prior_alpha + coalesce(sum(round(power(0.5, age / $half_life) * 1e12)::BIGINT)
               FILTER (WHERE code IN ('o', 'a', 'p')), 0) / 1e12 AS alpha,
           $prior_beta + coalesce(sum(round(power(0.5, age / $half_life) * 1e12)::BIGINT)
               FILTER (WHERE code = 'd'), 0) / 1e12 AS beta,
           median(handshake_ms) FILTER (WHERE code = 'o') AS median_handshake_ms,
           bit_or(CASE WHEN tools_hash IS NOT NULL THEN 1::BIGINT << age ELSE 0 END) AS listed_mask,
           max(age) FILTER (WHERE tools_hash IS NOT NULL) AS first_listed_age
    FROM (SELECT *, ($day::DATE - day)::INTEGER AS age FROM daily_status
          WHERE day BETWEEN $day::DATE - ($window_days - 1)::INTEGER AND $day::DATE) AS w
    GROUP BY server_key
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
               lambda age: ['n', 'o', 'a', 'p', 'd'][((packed_codes >> (3 * age)::INTEGER) & 7)::INTEGER + 1]), '')
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
    p.down_days,
    CASE WHEN p.checked_days > 0 THEN ((1000 * p.answered_days) // p.checked_days) / 10.0 END AS uptime_pct,
    CASE WHEN p.checked_days >= $label_min THEN '30-day uptime'
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
