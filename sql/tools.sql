-- tools: one row per endpoint, day $day and tool: the facts of the endpoint's tool list that day.
-- Inputs: daily_status of $day; list_sources (sql/day_lists.sql: each list published on $day with facts under
-- the current method, its tool count); list_facts (sql/day_list_facts.sql: the facts of those lists, one row
-- per list and tool). An endpoint whose list has no facts under the current method has no rows.
-- The table is in (server_key, position) order. Its rows come out of this statement in the facts' order, each
-- with endpoint_rank (the endpoint's place in server_key order) and part (a range of endpoints of about
-- $part_rows rows in all): curated/list_facts.py streams them into one spill file per part and sorts and
-- writes each part in turn, holding one part of a day's 1.2 million rows at a time, not the table (its texts
-- are the lists' own: 38,000 lists over 41,000 endpoints at 100,000 endpoints, so few repeat; docs/scaling.md,
-- "The tool tables at 100,000 endpoints").
WITH endpoints AS (
    SELECT s.day, s.server_key, s.server_id, s.tools_hash, l.tool_count,
           row_number() OVER (ORDER BY s.server_key) AS endpoint_rank
    FROM daily_status AS s
    JOIN list_sources AS l USING (tools_hash)
    WHERE s.day = $day::DATE
),
parts AS (
    SELECT *, ((sum(tool_count) OVER (ORDER BY endpoint_rank ROWS UNBOUNDED PRECEDING) - tool_count)
               // $part_rows)::BIGINT AS part
    FROM endpoints
)
SELECT p.part, p.endpoint_rank, p.day, p.server_key, p.server_id, p.tools_hash, f.position, f.name, f.title,
       f.description, f.input_schema_json, f.annotations_json, f.read_only_hint, f.destructive_hint,
       f.idempotent_hint, f.open_world_hint, f.fingerprint, f.risk, f.risk_rule, f.risk_evidence,
       f.annotation_contradiction, f.description_tokens, f.method_version
FROM parts AS p
JOIN list_facts AS f USING (tools_hash)
