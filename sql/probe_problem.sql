-- probe_problem: why one landed raw probe row cannot be used, or NULL when it can: the validation rules of
-- every raw probe row (sql/probe_validation.sql applies them to all rows), as a macro over the row's
-- columns, so a query can validate only the rows it has chosen (sql/daily_status.sql looks up a few
-- endpoints' earlier checks among 30 days of rows).
CREATE OR REPLACE TEMP MACRO probe_problem(server_key, day, source_file, started_at, check_kind, outcome,
                                           handshake_ms, tools_hash, tool_count, tool_list_size) AS
CASE
    WHEN server_key IS NULL OR server_key = '' THEN 'missing server_key'
    WHEN day IS NULL THEN 'missing day'
    WHEN day::VARCHAR <> regexp_extract(source_file, 'day=(\d{4}-\d{2}-\d{2})', 1)
        THEN 'day ' || day::VARCHAR || ' does not match its partition folder'
    WHEN started_at IS NULL THEN 'missing started_at'
    -- The UTC day of the instant as whole days since 1970, floored (no time zone conversion: it cannot
    -- depend on the session's zone, and it costs a third of what a cast to a local TIMESTAMP does).
    WHEN epoch_us(started_at) // 86400000000 - (epoch_us(started_at) % 86400000000 < 0)::BIGINT
            <> day - DATE '1970-01-01'
        THEN 'started_at lies outside its day'
    WHEN check_kind IS NULL OR check_kind NOT IN ('daily', 'hourly', 'five_minute', 'control')
        THEN 'unknown check_kind ' || coalesce('''' || check_kind || '''', 'NULL')
    WHEN outcome IS NULL
        OR NOT (outcome IN ('ok', 'needs_auth', 'http_402', 'timeout', 'unreachable', 'redirect',
                            'rpc_error', 'not_mcp', 'no_tool_list', 'skipped', 'prober_error',
                            'not_checked')
                OR regexp_full_match(outcome, 'http_[1-5][0-9][0-9]'))
        THEN 'unknown outcome ' || coalesce('''' || outcome || '''', 'NULL')
    WHEN handshake_ms < 0 THEN 'negative handshake_ms'
    WHEN outcome = 'ok' AND check_kind <> 'control' AND tools_hash IS NULL
        THEN 'outcome ok without a tool list'
    WHEN tool_count < 0 OR tool_list_size < 0 THEN 'negative tool count or size'
END
