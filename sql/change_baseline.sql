-- change_baseline: each endpoint's latest rows of daily_status on or after $since, by kind: the latest
-- checked row (code not n), the latest row with a tool list, the latest row with payment addresses.
-- Not a table: what tool_lists_needed and tool_changes compare a day against (curated/baselines.py).
-- Grain: one row per server_key with a checked row on or after $since.
-- Inputs:
--   earlier_baseline  a baseline computed the same way through an earlier day (or empty)
--   daily_status      the days after it (or, with no earlier baseline, every day of the lookback)
-- The latest row by day of a union is the latest of the latest rows of its parts, and rows before $since
-- drop out, so baseline(D) = this over baseline(D - 1) and daily_status(D) is exactly this over the
-- lookback's files (docs/scaling.md, "Ninety days"). Code n never carries a tool list or a 402 body.
WITH candidates AS (
    SELECT server_key, checked, listed, paid FROM earlier_baseline
    UNION ALL
    SELECT server_key,
           {'day': day, 'code': code, 'outcome': outcome, 'redirect_location': redirect_location,
            'tools_hash': tools_hash, 'server_info_version': server_info_version} AS checked,
           CASE WHEN tools_hash IS NOT NULL
                THEN {'day': day, 'tools_hash': tools_hash, 'server_info_version': server_info_version} END AS listed,
           CASE WHEN len(payment_addresses) > 0
                THEN {'day': day, 'payment_addresses': payment_addresses} END AS paid
    FROM daily_status
    WHERE code <> 'n'
)
SELECT server_key,
       arg_max(checked, checked.day) FILTER (WHERE checked.day >= $since::DATE) AS checked,
       arg_max(listed, listed.day) FILTER (WHERE listed.day >= $since::DATE) AS listed,
       arg_max(paid, paid.day) FILTER (WHERE paid.day >= $since::DATE) AS paid
FROM candidates
WHERE checked.day >= $since::DATE
GROUP BY server_key
ORDER BY server_key
