-- domain_ages: one row per registrable domain of the endpoints on the map on day $day.
-- Inputs:
--   map_domains  (server_key, domain) of daily_status on $day (the registrable domain by the Public Suffix List)
--   raw_domains  raw/domains of $day and the $refresh_days days before (lookups/daily.py: RDAP)
-- Method ($method_version, docs/methodology.md "Domain age"):
--   * the latest lookup on or before $day within the refresh window decides; an ok answer with a registration
--     date from 1985 to the day is preferred over a later failure (a record does not expire because one lookup
--     failed); any other date is no date (domain-age-1.2, also for rows landed before it);
--   * age_days = $day - the registration date; young when under $young_days days (the route's caution);
--   * a domain never looked up, or without a registration date, is unseen: age and young are null.
WITH domains AS (
    SELECT domain, count(DISTINCT server_key)::INTEGER AS endpoints FROM map_domains GROUP BY domain
),
looked_up AS (  -- a domain as a client writes it (ascii_domain: xn--; lookups before domain-age-1.2 kept the
                -- Unicode form), and whether its date is a registration date (from 1985 to the day)
    SELECT ascii_domain(domain) AS domain, registered_at, status, day AS looked_up_on, looked_up_at,
           coalesce(registered_at >= TIMESTAMPTZ '1985-01-01 00:00:00+00' AND registered_at::DATE <= $day::DATE,
                    false) AS dated
    FROM raw_domains
    WHERE day <= $day::DATE AND day > $day::DATE - $refresh_days::INTEGER
),
records AS (
    SELECT domain, CASE WHEN dated THEN registered_at END AS registered_at,
           CASE WHEN status = 'ok' AND NOT dated THEN 'no registration date between 1985 and the day'
                ELSE status END AS status, looked_up_on
    FROM looked_up
    QUALIFY row_number() OVER (PARTITION BY domain ORDER BY (status = 'ok' AND dated) DESC, looked_up_at DESC) = 1
)
SELECT
    $day::DATE AS day,
    d.domain,
    d.endpoints,
    r.registered_at,
    CASE WHEN r.registered_at IS NOT NULL THEN ($day::DATE - r.registered_at::DATE)::INTEGER END AS age_days,
    CASE WHEN r.registered_at IS NOT NULL THEN ($day::DATE - r.registered_at::DATE) < $young_days::INTEGER END
        AS young,
    r.looked_up_on,
    coalesce(r.status, 'never looked up') AS status,
    $method_version AS method_version
FROM domains AS d
LEFT JOIN records AS r USING (domain)
ORDER BY d.domain
