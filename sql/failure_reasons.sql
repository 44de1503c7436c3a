-- failure_reasons: one row per failure class and UTC day $day: how many of the day's failed daily checks
-- (day code d) fell in it.
-- Inputs:
--   daily_status  curated/daily_status of $day (the deciding check of each endpoint)
-- Method ($method_version, docs/methodology.md "Why checks failed"): the classes the Agent-Ready directory
-- publishes, in its order, plus one of 7Maps' own (a redirect to another domain, which the directory does
-- not follow either but does not count apart):
--   http_4xx       HTTP 4xx error (400, 404, 405, ...; 401/403 ask for sign-in and 402 for payment: not failures)
--   unreachable    could not connect (DNS, TCP, TLS)
--   http_5xx       HTTP 5xx error
--   timeout        no answer in time (the seed's per-request timeouts)
--   not_mcp        answers, but not as a standard MCP endpoint: exactly the checks daily_status shows so
--                  (HTTP 400/405, or an answer that is not MCP), so the class and the shown status count
--                  the same endpoints under one label
--   rate_limited   rate limit reached (HTTP 429)
--   refused        refused the handshake (a JSON-RPC error to initialize, or no tool list after it)
--   redirect       redirects to another domain (recorded, not followed)
-- Any other failure that came with an answer counts as not_mcp, and shows so in daily_status.
-- Every class has a row, with 0 when no check fell in it, so a day's chart always has the same bars.
WITH classes(reason_class, label, position) AS (
    VALUES ('http_4xx', 'HTTP 4xx error', 1),
           ('unreachable', 'could not connect', 2),
           ('http_5xx', 'HTTP 5xx error', 3),
           ('timeout', 'no answer in time', 4),
           ('not_mcp', 'answers, but not as a standard MCP endpoint', 5),
           ('rate_limited', 'rate limit reached (HTTP 429)', 6),
           ('refused', 'refused the handshake', 7),
           ('redirect', 'redirects to another domain', 8)
),
failed AS (
    SELECT
        server_key,
        CASE
            WHEN shown_status = 'answers, but not as a standard MCP endpoint' THEN 'not_mcp'
            WHEN outcome = 'http_429' OR http_status = 429 THEN 'rate_limited'
            WHEN outcome LIKE 'http\_5%' ESCAPE '\' THEN 'http_5xx'
            WHEN outcome LIKE 'http\_4%' ESCAPE '\' THEN 'http_4xx'
            WHEN outcome = 'unreachable' THEN 'unreachable'
            WHEN outcome = 'timeout' THEN 'timeout'
            WHEN outcome = 'not_mcp' THEN 'not_mcp'
            WHEN outcome IN ('rpc_error', 'no_tool_list') THEN 'refused'
            WHEN outcome = 'redirect' THEN 'redirect'
            WHEN http_status BETWEEN 500 AND 599 THEN 'http_5xx'
            WHEN http_status BETWEEN 400 AND 499 THEN 'http_4xx'
            ELSE 'not_mcp'
        END AS reason_class
    FROM daily_status
    WHERE day = $day::DATE AND code = 'd'
),
counted AS (
    SELECT reason_class, count(*) AS failed_checks FROM failed GROUP BY reason_class
)
SELECT
    $day::DATE AS day,
    c.reason_class,
    c.label,
    c.position::INTEGER AS position,
    coalesce(n.failed_checks, 0)::BIGINT AS failed_checks,
    CASE WHEN (SELECT count(*) FROM failed) > 0
         THEN coalesce(n.failed_checks, 0) / (SELECT count(*) FROM failed)::DOUBLE END AS share,
    $method_version AS method_version
FROM classes AS c
LEFT JOIN counted AS n USING (reason_class)
ORDER BY c.position
