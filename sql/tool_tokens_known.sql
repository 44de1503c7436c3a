-- tool_tokens_known: the token counts an earlier method counted with the tokenizer $tokenizer for the lists
-- $day needs facts for (wanted, sql/tool_lists_needed.sql). Not a table: after a method change of the rules
-- (risk, fingerprints' neighbours) tool_facts takes these counts instead of counting again (the tokenizer
-- did not change, so neither did they: docs/scaling.md, "The cold day").
-- Grain: one row per tools_hash of wanted that an earlier method counted.
-- Inputs: wanted; tool_lists and tool_facts of the days before $day.
WITH lists AS (
    SELECT tools_hash, any_value(definition_tokens) AS definition_tokens
    FROM tool_lists SEMI JOIN wanted USING (tools_hash)
    WHERE suffix(method_version, '+' || $tokenizer)
    GROUP BY tools_hash
),
tools AS (
    -- A tool's fingerprint holds its description; one list's tools under any such method count alike.
    SELECT DISTINCT tools_hash, fingerprint, description_tokens
    FROM tool_facts SEMI JOIN lists USING (tools_hash)
    WHERE suffix(method_version, '+' || $tokenizer)
)
SELECT l.tools_hash, any_value(l.definition_tokens) AS definition_tokens,
       list(t.fingerprint ORDER BY t.fingerprint) AS fingerprints,
       list(t.description_tokens ORDER BY t.fingerprint) AS description_tokens
FROM lists AS l JOIN tools AS t USING (tools_hash)
GROUP BY l.tools_hash
ORDER BY l.tools_hash
