-- readiness_discovery (its inputs): each endpoint's discovery surfaces on $day, joined to what the server
-- itself answered. Whether each answered, and where a server card disagrees with the server, is judged in
-- Python by rules/discovery.py (curated/readiness_tables.py), the same code the live command runs.
-- Grain: one row per endpoint with a readiness check on $day and surface asked for it: its own
--   (server_card, resource_metadata), its origin's (the card paths seen in the wild) and its publisher
--   domain's (ai_catalog and catalog, each its own row; llms_txt, markdown_negotiated, markdown_index,
--   registry_auth). A card a 304 kept carries the kept card in body (revalidation = 'not_modified').
-- Inputs: the day's checks (day_checks: sql/readiness_checks.sql) and raw readiness_surfaces of $day (the
--   last document per subject and surface).
WITH checks AS (SELECT * FROM day_checks WHERE answered_via IS NOT NULL),
documents AS (
    SELECT *, row_number() OVER (PARTITION BY scope, subject, surface ORDER BY requested_at DESC, source_file DESC,
                                                                         source_row DESC) AS pick
    FROM readiness_surfaces
    WHERE day = $day::DATE
)
SELECT c.server_key, c.server_id, c.server_name, c.url AS endpoint_url, c.protocol_version, c.server_info_name,
       c.server_info_version, d.surface, d.scope, d.url, d.status, d.content_type, d.body, d.detail,
       d.revalidation, d.body_sha256
FROM checks AS c
JOIN documents AS d ON d.pick = 1 AND (
       (d.scope = 'endpoint' AND d.subject = c.server_key)
    OR (d.scope = 'origin' AND d.subject = c.origin)
    OR (d.scope = 'domain' AND d.subject = c.publisher_domain))
ORDER BY c.server_key, d.scope, d.surface
