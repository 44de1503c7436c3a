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
WITH today AS (
    SELECT server_key, server_id, server_name, url, code FROM daily_status WHERE day = $day::DATE
),
spine AS (
    SELECT ($day::DATE - i::INTEGER) AS day, i AS age
    FROM range(0, $window_days) AS t(i)
),
grid AS (
    -- Day weights as exact integer units (1e-12): their sums do not depend on the order DuckDB's threads
    -- add them in, so a day recomputed comes out byte for byte the same (signed days must).
    SELECT t.server_key, s.day, s.age, coalesce(ds.code, 'n') AS code, ds.handshake_ms,
           round(power(0.5, s.age / $half_life) * 1e12)::HUGEINT AS weight_units
    FROM today AS t
    CROSS JOIN spine AS s
    LEFT JOIN daily_status AS ds ON ds.server_key = t.server_key AND ds.day = s.day
),
listed_days AS (
    SELECT ds.server_key, ds.day, ds.tools_hash,
           lag(ds.tools_hash) OVER (PARTITION BY ds.server_key ORDER BY ds.day) AS previous_hash
    FROM daily_status AS ds
    SEMI JOIN today AS t ON t.server_key = ds.server_key
    WHERE ds.tools_hash IS NOT NULL AND ds.day BETWEEN $day::DATE - ($window_days - 1)::INTEGER AND $day::DATE
),
list_change_days AS (
    SELECT DISTINCT server_key, day
    FROM tool_changes
    WHERE list_contains($list_change_kinds, kind)
      AND previous_day >= $day::DATE - ($window_days - 1)::INTEGER AND day <= $day::DATE
),
tool_churn AS (
    SELECT l.server_key,
           count(l.previous_hash)::INTEGER AS comparisons,
           count(c.day) FILTER (WHERE l.previous_hash IS NOT NULL)::INTEGER AS changes
    FROM listed_days AS l
    SEMI JOIN change_record_days AS r USING (day)
    LEFT JOIN list_change_days AS c USING (server_key, day)
    GROUP BY l.server_key
),
recent_change_days AS (
    SELECT server_key, list(DISTINCT day ORDER BY day) AS change_days
    FROM tool_changes
    WHERE day BETWEEN $day::DATE - ($change_days_kept - 1)::INTEGER AND $day::DATE
    GROUP BY server_key
),
per_server AS (
    SELECT server_key,
           string_agg(code, '' ORDER BY day) AS history,
           count(*) FILTER (WHERE code <> 'n')::INTEGER AS checked_days,
           count(*) FILTER (WHERE code IN ('o', 'a', 'p'))::INTEGER AS answered_days,
           count(*) FILTER (WHERE code = 'o')::INTEGER AS ok_days,
           count(*) FILTER (WHERE code = 'd')::INTEGER AS down_days,
           $prior_alpha + coalesce(sum(weight_units) FILTER (WHERE code IN ('o', 'a', 'p')), 0) / 1e12
               AS alpha,
           $prior_beta + coalesce(sum(weight_units) FILTER (WHERE code = 'd'), 0) / 1e12 AS beta,
           median(handshake_ms) FILTER (WHERE code = 'o') AS median_handshake_ms
    FROM grid
    GROUP BY server_key
)
SELECT
    $day::DATE AS day,
    t.server_key,
    t.server_id,
    t.server_name,
    t.url,
    p.history,
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
JOIN per_server AS p USING (server_key)
LEFT JOIN tool_churn AS c USING (server_key)
LEFT JOIN recent_change_days AS r USING (server_key)
ORDER BY t.server_key
