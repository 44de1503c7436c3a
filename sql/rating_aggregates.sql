-- rating_aggregates: what agents reported about each endpoint (and each of its tools) over the
-- $window_days days ending on $day.
-- Grain: one row per endpoint (scope 'endpoint') and per endpoint and tool (scope 'tool') with reports.
-- Inputs: agent_reports that arrived in the window (valid rows only: sql/agent_reports.sql), about days in
-- the window.
-- Method ($method_version; every weight and threshold in sevenmaps_pipeline/rules/methods.py RATINGS_PARAMS):
--   * weight = recency 0.5^(age / $half_life) x (paid $paid_weight | anonymous $anonymous_weight)
--              x agreement with our own check of that day (agrees $agrees | unchecked $unchecked |
--              disagrees $disagrees);
--   * a reporter counts for at most $cap reports per endpoint and day: n reports are each scaled by
--     min(1, $cap / n), so a flood weighs what $cap of its reports would;
--   * success_share = weight of reports that worked / all weight;
--   * stars (1 + 4 x success_share, to the half star) only from $min_reporters distinct reporters
--     including $min_paid paying ones; otherwise 'not enough reports'.
-- Computed in passes that each read only the columns they need (docs/scaling.md): the reporter cap from a
-- count per reporter, endpoint and day joined back; distinct reporters from one row per reporter and scope.
WITH reports AS (
    SELECT server_key, tool, reporter_id, about_day, paid, agreement, ok, ms, fail, surprise
    FROM agent_reports
    WHERE day BETWEEN $day::DATE - ($window_days - 1)::INTEGER AND $day::DATE
      AND about_day BETWEEN $day::DATE - ($window_days - 1)::INTEGER AND $day::DATE
),
per_reporter_day AS (
    SELECT reporter_id, server_key, about_day, count(*) AS n
    FROM reports
    GROUP BY ALL
),
weighted AS (
    -- Weights as exact integer units (1e-12): sums that do not depend on the order threads add them in,
    -- so a recomputed day is byte for byte the same (signed days must be).
    SELECT r.server_key, r.tool, r.reporter_id, r.paid, r.ok, r.ms, r.fail, r.surprise,
           round(power(0.5, ($day::DATE - r.about_day) / $half_life)
                 * CASE WHEN r.paid THEN $paid_weight ELSE $anonymous_weight END
                 * CASE r.agreement WHEN 'agrees' THEN $agrees WHEN 'disagrees' THEN $disagrees ELSE $unchecked END
                 * least(1.0, $cap / c.n)
                 * 1e12)::HUGEINT AS units
    FROM reports AS r
    JOIN per_reporter_day AS c USING (reporter_id, server_key, about_day)
),
scoped AS (
    SELECT 'endpoint' AS scope, NULL::VARCHAR AS scope_tool, * EXCLUDE (tool) FROM weighted
    UNION ALL
    SELECT 'tool', tool, * EXCLUDE (tool) FROM weighted WHERE tool IS NOT NULL
),
fail_counts AS (
    SELECT server_key, scope, scope_tool,
           list(struct_pack(value := fail, reports := n) ORDER BY n DESC, fail) AS fail_reasons
    FROM (SELECT server_key, scope, scope_tool, fail, count(*) AS n FROM scoped WHERE fail IS NOT NULL GROUP BY ALL)
    GROUP BY ALL
),
surprise_counts AS (
    SELECT server_key, scope, scope_tool,
           list(struct_pack(value := surprise, reports := n) ORDER BY n DESC, surprise) AS surprises
    FROM (SELECT server_key, scope, scope_tool, surprise, count(*) AS n FROM scoped WHERE surprise IS NOT NULL
          GROUP BY ALL)
    GROUP BY ALL
),
reporters AS (
    SELECT server_key, scope, scope_tool,
           count(*) AS reporters,
           count(*) FILTER (WHERE paid) AS paid_reporters
    FROM (SELECT server_key, scope, scope_tool, reporter_id, bool_or(paid) AS paid FROM scoped GROUP BY ALL)
    GROUP BY ALL
),
aggregated AS (
    SELECT a.*, p.reporters, p.paid_reporters
    FROM (
        SELECT server_key, scope, scope_tool,
               count(*) AS reports,
               sum(units) / 1e12 AS weight,
               coalesce(sum(units) FILTER (WHERE ok), 0)::DOUBLE / sum(units)::DOUBLE AS success_share,
               median(ms) AS median_ms
        FROM scoped
        GROUP BY ALL
    ) AS a
    JOIN reporters AS p
        ON p.server_key = a.server_key AND p.scope = a.scope AND p.scope_tool IS NOT DISTINCT FROM a.scope_tool
),
rated AS (
    SELECT *,
           CASE WHEN reporters >= $min_reporters AND paid_reporters >= $min_paid
                THEN round((1 + 4 * success_share) * 2) / 2 END AS stars
    FROM aggregated
)
SELECT
    $day::DATE AS day,
    r.server_key,
    left(sha256(r.server_key), 12) AS server_id,
    r.scope,
    r.scope_tool AS tool,
    r.reports,
    r.reporters,
    r.paid_reporters,
    r.weight,
    r.success_share,
    f.fail_reasons,
    r.median_ms,
    s.surprises,
    r.stars,
    CASE WHEN r.stars IS NULL THEN 'not enough reports' ELSE printf('%.1f stars', r.stars) END AS rating_label,
    $method_version AS method_version
FROM rated AS r
LEFT JOIN fail_counts AS f
    ON f.server_key = r.server_key AND f.scope = r.scope AND f.scope_tool IS NOT DISTINCT FROM r.scope_tool
LEFT JOIN surprise_counts AS s
    ON s.server_key = r.server_key AND s.scope = r.scope AND s.scope_tool IS NOT DISTINCT FROM r.scope_tool
ORDER BY r.server_key, r.scope, r.scope_tool NULLS FIRST
