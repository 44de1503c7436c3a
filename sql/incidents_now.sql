-- incidents_now (a view, publishing/mapday.py): the served day's incidents with a person's reviews applied at
-- read time, for the live answers (server_status, route, `sevenmaps incident`): a closure stops an incident
-- being live at once, not at the next build. The day's signed file and its site stay as built.
-- Grain: as incidents, one row per endpoint of the served day's incidents file.
-- Inputs: incidents_built (the served day's curated/incidents file); incident_reviews (control/incident_reviews
-- .parquet: every review when the served day is the newest built day, else those made before it ended).
-- Method (incidents-1.1, docs/methodology.md "Incidents"): the rules sql/incidents.sql applies to the reviews
-- made before a day ended, on that day's rows:
--   * a person's confirmation of the day's unconfirmed failure reports (made on a check of ours that day that
--     did not answer) makes them a live incident opened that day, confirmed_by 'our_fresh_check';
--   * the first closure made on or after a live incident's opening day and its last confirmed day closes it:
--     closed, never shown, 'a person closed it after review', with who, when and their words.
WITH confirms AS (
    SELECT server_key, incident_day AS day, max(check_started_at) AS check_at,
           arg_max(reviewer, check_started_at) AS reviewer
    FROM incident_reviews WHERE action = 'confirm' GROUP BY ALL
),
marked AS (
    SELECT i.*, c.check_at AS review_check_at, c.reviewer AS review_reviewer,
           coalesce(i.status = 'unconfirmed' AND c.check_at IS NOT NULL, false) AS newly_confirmed
    FROM incidents_built AS i
    LEFT JOIN confirms AS c ON c.server_key = i.server_key AND c.day = i.day
),
confirmed AS (
    SELECT * REPLACE (
        CASE WHEN newly_confirmed THEN 'live' ELSE status END AS status,
        shown OR newly_confirmed AS shown,
        CASE WHEN newly_confirmed THEN day ELSE opened_day END AS opened_day,
        CASE WHEN newly_confirmed THEN day ELSE last_confirmed_day END AS last_confirmed_day,
        CASE WHEN newly_confirmed THEN 'our_fresh_check' ELSE confirmed_by END AS confirmed_by,
        CASE WHEN newly_confirmed THEN review_check_at ELSE confirmed_check_at END AS confirmed_check_at,
        CASE WHEN newly_confirmed THEN review_reviewer ELSE confirmed_reviewer END AS confirmed_reviewer)
    FROM marked
),
closures AS (
    SELECT l.server_key, arg_min(x, x.reviewed_at) AS closure
    FROM confirmed AS l
    JOIN incident_reviews AS x
      ON x.server_key = l.server_key AND x.action = 'close'
     AND x.reviewed_at::DATE >= l.opened_day AND x.reviewed_at::DATE >= l.last_confirmed_day
    WHERE l.status = 'live'
    GROUP BY l.server_key
)
SELECT l.* EXCLUDE (review_check_at, review_reviewer, newly_confirmed) REPLACE (
    CASE WHEN x.closure IS NOT NULL THEN 'closed' ELSE l.status END AS status,
    l.shown AND x.closure IS NULL AS shown,
    CASE WHEN x.closure IS NOT NULL THEN 'a person closed it after review' ELSE l.closed_reason END AS closed_reason,
    CASE WHEN x.closure IS NOT NULL THEN x.closure.reviewer ELSE l.closed_by END AS closed_by,
    CASE WHEN x.closure IS NOT NULL THEN x.closure.reviewed_at ELSE l.closed_at END AS closed_at,
    CASE WHEN x.closure IS NOT NULL THEN x.closure.reason ELSE l.closed_note END AS closed_note)
FROM confirmed AS l
LEFT JOIN closures AS x USING (server_key)
