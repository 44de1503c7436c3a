-- tool_changes: one row per change an endpoint showed on $day against its previous checked day.
-- Grain: endpoint x day x change (x tool for the tool kinds).
-- Inputs:
--   daily_status     $day
--   change_baseline  each endpoint's latest checked row, latest row with a tool list and latest row with
--                    payment addresses within the change lookback (60 days) before $day (sql/change_baseline.sql)
--   tool_facts       every list's tools under the current risk method $facts_method (the caller has made
--                    sure both days' lists have them, so a risk method change is never reported as a change)
--   site_of(url)     the registrable domain of a URL's host (the shipped, hash-checked Public Suffix List)
-- Method ($method_version, docs/methodology.md, `change_detection`; parameters in sevenmaps_pipeline/rules/methods.py):
--   * the baseline of the status kinds is the endpoint's previous checked day (code not n) within the
--     lookback; the baseline of the tool-list kinds is its previous day with a tool list; no baseline, no
--     change (a first sighting is not a change);
--   * stopped_answering: answering (o/a/p) -> d; started_answering: d -> o/a/p; now_asks_sign_in: -> a from
--     any other code; redirects_other_domain: an unfollowed redirect to another registrable domain, unless
--     the previous check already redirected to that domain; new_payment_address: a payTo address of today's
--     402 body absent from the endpoint's last earlier 402 body;
--   * tool lists (only when tools_hash differs): identical definitions (fingerprints, with multiplicity)
--     pair first; then the same name -> tool_changed (fields listed, `definition` when only the fingerprint
--     keeps what changed; several tools of one name pair in order of level, then fingerprint, never by
--     position: changes-1.1); then the same description and
--     inputSchema under a new name -> tool_renamed; the rest are tool_added / tool_removed. Each pair of
--     lists is diffed once, however many endpoints moved between them;
--   * changing_tool_rewritten: a tool_changed tool that is yellow or red on either day; risk_rise: a tool
--     added as red, or a changed or renamed tool whose level rose (green < yellow < red);
--   * silent: the list changed while serverInfo.version is the same (both days report one).
WITH today AS (
    SELECT day, server_key, server_id, url, code, outcome, server_info_version, tools_hash, redirect_location,
           payment_addresses
    FROM daily_status
    WHERE code <> 'n' AND day = $day::DATE
),
previous AS (
    SELECT server_key, checked, listed, paid.payment_addresses AS paid
    FROM change_baseline SEMI JOIN today USING (server_key)
),
previous_checked AS (
    SELECT server_key, checked.day, checked.code, checked.outcome, checked.redirect_location FROM previous
),
previous_listed AS (
    SELECT server_key, listed.day, listed.tools_hash, listed.server_info_version FROM previous
    WHERE listed IS NOT NULL
),
previous_paid AS (
    SELECT server_key, paid AS payment_addresses FROM previous WHERE paid IS NOT NULL
),
status_changes AS (
    SELECT t.server_key, p.day AS previous_day,
           CASE WHEN p.code IN ('o', 'a', 'p') AND t.code = 'd' THEN 'stopped_answering'
                WHEN p.code = 'd' AND t.code IN ('o', 'a', 'p') THEN 'started_answering' END AS kind,
           'day code ' || p.code || ' -> ' || t.code || coalesce(' (' || t.outcome || ')', '') AS detail
    FROM today AS t JOIN previous_checked AS p USING (server_key)
    UNION ALL
    SELECT t.server_key, p.day, CASE WHEN t.code = 'a' AND p.code <> 'a' THEN 'now_asks_sign_in' END,
           'asks for sign-in (HTTP 401/403); day code ' || p.code || ' -> a'
    FROM today AS t JOIN previous_checked AS p USING (server_key)
    UNION ALL
    SELECT t.server_key, p.day,
           CASE WHEN t.outcome = 'redirect' AND t.redirect_location IS NOT NULL
                     AND site_of(t.redirect_location) IS DISTINCT FROM site_of(t.url)
                     AND NOT (coalesce(p.outcome = 'redirect', false)
                              AND site_of(p.redirect_location) IS NOT DISTINCT FROM site_of(t.redirect_location))
                THEN 'redirects_other_domain' END,
           'redirects to ' || coalesce(t.redirect_location, '?') || ' (not followed)'
    -- Redirects first: site_of is Python, and the filter must not wait for the join.
    FROM (SELECT * FROM today WHERE outcome = 'redirect') AS t JOIN previous_checked AS p USING (server_key)
    UNION ALL
    SELECT t.server_key, p.day, 'new_payment_address', 'new payment address ' || address
    FROM (SELECT * FROM today WHERE len(payment_addresses) > 0) AS t  -- few endpoints ask for payment
    JOIN previous_checked AS p USING (server_key)
    LEFT JOIN previous_paid AS pp USING (server_key)
    CROSS JOIN unnest(t.payment_addresses) AS a(address)
    WHERE NOT list_contains(coalesce(pp.payment_addresses, []::VARCHAR[]), address)
),
endpoint_lists AS (
    SELECT t.server_key, p.day AS previous_day, p.tools_hash AS old_hash, t.tools_hash AS new_hash,
           p.server_info_version AS previous_server_info_version, t.server_info_version
    FROM today AS t JOIN previous_listed AS p USING (server_key)
    WHERE t.tools_hash IS NOT NULL AND t.tools_hash <> p.tools_hash
),
list_pairs AS (
    SELECT DISTINCT old_hash, new_hash FROM endpoint_lists
),
-- Only the lists of the pairs: a few hundred of the lists ever seen (filtered before the window, which
-- partitions by list, so each list's facts are still its first computed ones).
pair_lists AS (
    SELECT old_hash AS tools_hash FROM list_pairs UNION SELECT new_hash FROM list_pairs
),
facts AS (
    -- The texts are only compared, so each is carried as its SHA-256: the windows below then hold a few
    -- bytes a tool instead of its description and schemas (docs/scaling.md, "The day's peak memory").
    SELECT tools_hash, position, fingerprint, name, sha256(description) AS description_sha256,
           description IS NOT NULL AND description <> '' AS described,
           sha256(input_schema_json) AS input_schema_sha256, sha256(annotations_json) AS annotations_sha256, risk
    FROM tool_facts
    WHERE method_version = $facts_method AND tools_hash IN (SELECT tools_hash FROM pair_lists)
    QUALIFY row_number() OVER (PARTITION BY tools_hash, position ORDER BY day) = 1
),
old_tools AS (
    SELECT lp.old_hash, lp.new_hash, f.*,
           row_number() OVER (PARTITION BY lp.old_hash, lp.new_hash, f.fingerprint ORDER BY f.position) AS copy
    FROM list_pairs AS lp JOIN facts AS f ON f.tools_hash = lp.old_hash
),
new_tools AS (
    SELECT lp.old_hash, lp.new_hash, f.*,
           row_number() OVER (PARTITION BY lp.old_hash, lp.new_hash, f.fingerprint ORDER BY f.position) AS copy
    FROM list_pairs AS lp JOIN facts AS f ON f.tools_hash = lp.new_hash
),
-- 1. the same definition on both days is no change
-- Tools of one name that remain pair in order of their level, then their fingerprint (changes-1.1): a tools_hash
-- holds its tools in any order, so the stored copy's positions may be another server's (docs/methodology.md,
-- "Change records"), and a risk rise is then only ever a rise of the name's levels taken together.
old_left AS (
    SELECT o.*, row_number() OVER (PARTITION BY o.old_hash, o.new_hash, o.name
                                   ORDER BY list_position(['green', 'yellow', 'red'], o.risk), o.fingerprint,
                                            o.position) AS name_copy
    FROM old_tools AS o
    ANTI JOIN new_tools AS n USING (old_hash, new_hash, fingerprint, copy)
),
new_left AS (
    SELECT n.*, row_number() OVER (PARTITION BY n.old_hash, n.new_hash, n.name
                                   ORDER BY list_position(['green', 'yellow', 'red'], n.risk), n.fingerprint,
                                            n.position) AS name_copy
    FROM new_tools AS n
    ANTI JOIN old_tools AS o USING (old_hash, new_hash, fingerprint, copy)
),
-- 2. the same name with another definition: changed
changed AS (
    SELECT n.old_hash, n.new_hash, n.name, o.position AS old_position, n.position AS new_position,
           o.risk AS previous_risk, n.risk,
           -- Another fingerprint with the three kept alike: what changed is kept only in the fingerprint (a
           -- description that is not text, a schema absent then null): 'definition'.
           coalesce(nullif(list_filter([CASE WHEN o.description_sha256 IS DISTINCT FROM n.description_sha256
                                             THEN 'description' END,
                                        CASE WHEN o.input_schema_sha256 IS DISTINCT FROM n.input_schema_sha256
                                             THEN 'inputSchema' END,
                                        CASE WHEN o.annotations_sha256 IS DISTINCT FROM n.annotations_sha256
                                             THEN 'annotations' END],
                                       lambda f: f IS NOT NULL), []::VARCHAR[]), ['definition']) AS changed_fields
    FROM new_left AS n
    JOIN old_left AS o ON o.old_hash = n.old_hash AND o.new_hash = n.new_hash
        AND o.name IS NOT DISTINCT FROM n.name AND o.name_copy = n.name_copy
),
old_rest AS (
    SELECT o.*, row_number() OVER (PARTITION BY o.old_hash, o.new_hash, o.description_sha256, o.input_schema_sha256
                                   ORDER BY o.fingerprint, o.position) AS twin
    FROM old_left AS o
    ANTI JOIN changed AS c ON c.old_hash = o.old_hash AND c.new_hash = o.new_hash AND c.old_position = o.position
),
new_rest AS (
    SELECT n.*, row_number() OVER (PARTITION BY n.old_hash, n.new_hash, n.description_sha256, n.input_schema_sha256
                                   ORDER BY n.fingerprint, n.position) AS twin
    FROM new_left AS n
    ANTI JOIN changed AS c ON c.old_hash = n.old_hash AND c.new_hash = n.new_hash AND c.new_position = n.position
),
-- 3. the same description and schema under a new name: renamed (a description is needed to recognise it)
renamed AS (
    SELECT n.old_hash, n.new_hash, n.name, o.name AS previous_name, o.position AS old_position,
           n.position AS new_position, o.risk AS previous_risk, n.risk
    FROM new_rest AS n
    JOIN old_rest AS o ON o.old_hash = n.old_hash AND o.new_hash = n.new_hash
        AND o.description_sha256 = n.description_sha256
        AND o.input_schema_sha256 IS NOT DISTINCT FROM n.input_schema_sha256 AND o.twin = n.twin
    WHERE n.described
),
risk_rank AS (
    SELECT * FROM (VALUES ('green', 0), ('yellow', 1), ('red', 2)) AS r(risk, rank)
),
list_diffs AS (
    SELECT old_hash, new_hash, 'tool_changed' AS kind, name AS tool_name, NULL AS previous_tool_name,
           changed_fields, risk, previous_risk,
           coalesce(name, '(unnamed)') || ': ' || array_to_string(changed_fields, ', ') || ' changed' AS detail
    FROM changed
    UNION ALL
    SELECT old_hash, new_hash, 'changing_tool_rewritten', name, NULL, changed_fields, risk, previous_risk,
           coalesce(name, '(unnamed)') || ' (' || previous_risk || ' -> ' || risk || ') rewritten: '
               || array_to_string(changed_fields, ', ')
    FROM changed
    WHERE risk IN ('yellow', 'red') OR previous_risk IN ('yellow', 'red')
    UNION ALL
    SELECT old_hash, new_hash, 'tool_renamed', name, previous_name, NULL, risk, previous_risk,
           coalesce(previous_name, '(unnamed)') || ' renamed to ' || coalesce(name, '(unnamed)')
    FROM renamed
    UNION ALL
    SELECT x.old_hash, x.new_hash, 'risk_rise', x.name, x.previous_name, NULL, x.risk, x.previous_risk,
           coalesce(x.previous_name || ' -> ', '') || coalesce(x.name, '(unnamed)') || ': risk ' || x.previous_risk
               || ' -> ' || x.risk
    FROM (SELECT old_hash, new_hash, name, NULL AS previous_name, risk, previous_risk FROM changed
          UNION ALL
          SELECT old_hash, new_hash, name, previous_name, risk, previous_risk FROM renamed) AS x
    JOIN risk_rank AS level_now ON level_now.risk = x.risk
    JOIN risk_rank AS level_before ON level_before.risk = x.previous_risk
    WHERE level_now.rank > level_before.rank
    UNION ALL
    SELECT n.old_hash, n.new_hash, 'tool_added', n.name, NULL, NULL, n.risk, NULL,
           coalesce(n.name, '(unnamed)') || ' added (' || n.risk || ')'
    FROM new_rest AS n
    ANTI JOIN renamed AS r ON r.old_hash = n.old_hash AND r.new_hash = n.new_hash AND r.new_position = n.position
    UNION ALL
    SELECT n.old_hash, n.new_hash, 'risk_rise', n.name, NULL, NULL, n.risk, NULL,
           coalesce(n.name, '(unnamed)') || ' added as red'
    FROM new_rest AS n
    ANTI JOIN renamed AS r ON r.old_hash = n.old_hash AND r.new_hash = n.new_hash AND r.new_position = n.position
    WHERE n.risk = 'red'
    UNION ALL
    SELECT o.old_hash, o.new_hash, 'tool_removed', o.name, NULL, NULL, NULL, o.risk,
           coalesce(o.name, '(unnamed)') || ' removed (was ' || o.risk || ')'
    FROM old_rest AS o
    ANTI JOIN renamed AS r ON r.old_hash = o.old_hash AND r.new_hash = o.new_hash AND r.old_position = o.position
),
tool_list_changes AS (
    SELECT e.server_key, e.previous_day, d.kind, d.tool_name, d.previous_tool_name, d.changed_fields, d.risk,
           d.previous_risk, d.detail
    FROM endpoint_lists AS e
    JOIN list_diffs AS d USING (old_hash, new_hash)
    UNION ALL
    SELECT server_key, previous_day, 'silent', NULL, NULL, NULL, NULL, NULL,
           'the tool list changed while serverInfo.version stayed ' || server_info_version
    FROM endpoint_lists
    WHERE server_info_version = previous_server_info_version
),
all_changes AS (
    SELECT server_key, previous_day, kind, NULL AS tool_name, NULL AS previous_tool_name,
           NULL::VARCHAR[] AS changed_fields, NULL AS risk, NULL AS previous_risk, detail
    FROM status_changes
    WHERE kind IS NOT NULL
    UNION ALL
    SELECT * FROM tool_list_changes
)
SELECT
    $day::DATE AS day,
    c.server_key,
    t.server_id,
    c.kind,
    c.tool_name,
    c.previous_tool_name,
    c.changed_fields,
    c.risk,
    c.previous_risk,
    c.detail,
    c.previous_day,
    t.tools_hash,
    -- the row of the previous day the change is against: the previous checked day's, or the previous listed day's
    CASE WHEN c.previous_day = b.checked.day THEN b.checked.tools_hash ELSE b.listed.tools_hash END
        AS previous_tools_hash,
    t.server_info_version,
    CASE WHEN c.previous_day = b.checked.day THEN b.checked.server_info_version ELSE b.listed.server_info_version END
        AS previous_server_info_version,
    $method_version AS method_version
FROM all_changes AS c
JOIN today AS t USING (server_key)
JOIN previous AS b ON b.server_key = c.server_key
ORDER BY c.server_key, c.kind, c.tool_name, c.previous_tool_name, c.detail
