-- probe_validation: every landed raw probe row with `problem` (NULL when the row is usable).
-- Grain: one row per raw probe row.  Inputs: view raw_probes (files bound by the caller).
-- Rows with a problem never count toward any figure; they land in curated/quarantine with the reason.
-- The rules are the macro probe_problem (sql/probe_problem.sql), created first by the caller.
SELECT
    p.*,
    probe_problem(p.server_key, p.day, p.source_file, p.started_at, p.check_kind, p.outcome, p.handshake_ms,
                  p.tools_hash, p.tool_count, p.tool_list_size) AS problem
FROM raw_probes AS p
