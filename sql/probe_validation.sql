-- probe_validation: every landed raw probe row with `problem` (NULL when the row is usable).
-- Grain: one row per raw probe row.  Inputs: view raw_probes (files bound by the caller).
-- Rows with a problem never count toward any figure; they land in curated/quarantine with the reason.
SELECT
    p.*,
    CASE
        WHEN p.server_key IS NULL OR p.server_key = '' THEN 'missing server_key'
        WHEN p.day IS NULL THEN 'missing day'
        WHEN p.day::VARCHAR <> regexp_extract(p.source_file, 'day=(\d{4}-\d{2}-\d{2})', 1)
            THEN 'day ' || p.day::VARCHAR || ' does not match its partition folder'
        WHEN p.started_at IS NULL THEN 'missing started_at'
        -- The UTC day of the instant as whole days since 1970, floored (no time zone conversion: it cannot
        -- depend on the session's zone, and it costs a third of what a cast to a local TIMESTAMP does).
        WHEN epoch_us(p.started_at) // 86400000000 - (epoch_us(p.started_at) % 86400000000 < 0)::BIGINT
                <> p.day - DATE '1970-01-01'
            THEN 'started_at lies outside its day'
        WHEN p.check_kind IS NULL OR p.check_kind NOT IN ('daily', 'hourly', 'five_minute', 'control')
            THEN 'unknown check_kind ' || coalesce('''' || p.check_kind || '''', 'NULL')
        WHEN p.outcome IS NULL
            OR NOT (p.outcome IN ('ok', 'needs_auth', 'http_402', 'timeout', 'unreachable', 'redirect',
                                  'rpc_error', 'not_mcp', 'no_tool_list', 'skipped', 'prober_error')
                    OR regexp_full_match(p.outcome, 'http_[1-5][0-9][0-9]'))
            THEN 'unknown outcome ' || coalesce('''' || p.outcome || '''', 'NULL')
        WHEN p.handshake_ms < 0 THEN 'negative handshake_ms'
        WHEN p.outcome = 'ok' AND p.check_kind <> 'control' AND p.tools_hash IS NULL
            THEN 'outcome ok without a tool list'
        WHEN p.tool_count < 0 OR p.tool_list_size < 0 THEN 'negative tool count or size'
    END AS problem
FROM raw_probes AS p
