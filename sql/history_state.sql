-- history_state: one row per endpoint with anything in the $window_days UTC days ending on $day, as
-- sql/server_history.sql reads them: each day's code as bits of three day masks (bit age, 0 for $day:
-- lo for o and p, mid for a and p, hi for d; none for n or a missing row), a day mask of the days with a
-- tool list, a day mask of the o days whose list had at least one tool (an empty list is an answer, not
-- tools: history-1.2), and the handshake of each o day by age (position age + 1; NULL on the other days).
-- Inputs: earlier_state (this relation as of $day - 1; empty for none) and daily_status of $day alone.
-- One day folded in: the earlier state's days age by one and the oldest leaves the window. Folding the
-- window's days in order from an empty state gives exactly the state of the window's rows, so the state
-- cached the day before (curated/history_state.py) lets a day read one daily_status file, not 30.
-- An endpoint leaves the state once nothing of it is left in the window and it has no row today.
WITH today AS (
    SELECT server_key,
           CASE WHEN code IN ('o', 'p') THEN 1 ELSE 0 END::BIGINT AS lo,
           CASE WHEN code IN ('a', 'p') THEN 1 ELSE 0 END::BIGINT AS mid,
           CASE WHEN code = 'd' THEN 1 ELSE 0 END::BIGINT AS hi,
           CASE WHEN tools_hash IS NOT NULL THEN 1 ELSE 0 END::BIGINT AS listed,
           CASE WHEN code = 'o' AND coalesce(tool_count, 0) > 0 THEN 1 ELSE 0 END::BIGINT AS with_tools,
           CASE WHEN code = 'o' THEN handshake_ms END AS handshake_ms
    FROM daily_status
    WHERE day = $day::DATE
),
earlier AS (
    SELECT server_key,
           (lo << 1) & ((1::BIGINT << $window_days) - 1) AS lo,
           (mid << 1) & ((1::BIGINT << $window_days) - 1) AS mid,
           (hi << 1) & ((1::BIGINT << $window_days) - 1) AS hi,
           (listed << 1) & ((1::BIGINT << $window_days) - 1) AS listed,
           (with_tools << 1) & ((1::BIGINT << $window_days) - 1) AS with_tools,
           handshakes[1:$window_days - 1] AS handshakes
    FROM earlier_state
)
SELECT server_key,
       coalesce(e.lo, 0) | coalesce(t.lo, 0) AS lo,
       coalesce(e.mid, 0) | coalesce(t.mid, 0) AS mid,
       coalesce(e.hi, 0) | coalesce(t.hi, 0) AS hi,
       coalesce(e.listed, 0) | coalesce(t.listed, 0) AS listed,
       coalesce(e.with_tools, 0) | coalesce(t.with_tools, 0) AS with_tools,
       list_prepend(t.handshake_ms, coalesce(e.handshakes, []::INTEGER[])) AS handshakes
FROM earlier AS e FULL JOIN today AS t USING (server_key)
WHERE t.server_key IS NOT NULL OR (e.lo | e.mid | e.hi | e.listed) <> 0
ORDER BY server_key
