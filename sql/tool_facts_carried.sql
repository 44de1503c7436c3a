-- tool_facts_carried: the lists $day needs facts for (wanted, sql/tool_lists_needed.sql) whose rows an earlier
-- method computed with the tokenizer $tokenizer, and the file that holds them. Not a table: after a method change
-- of the rules alone, tool_facts takes these rows and reads their risk again instead of parsing the lists'
-- JSON (every other column is the tokenizer method's: docs/scaling.md, "The rules day carries the rows").
-- Grain: one row per tools_hash of wanted; its rows are those of the latest earlier day that holds it.
-- Inputs: wanted; tool_facts of the days before $day.
WITH held AS (
    SELECT tools_hash, max(day) AS day
    FROM tool_facts SEMI JOIN wanted USING (tools_hash)
    WHERE suffix(method_version, '+' || $tokenizer)
    GROUP BY tools_hash
)
SELECT h.tools_hash, any_value(f.source_file) AS source_file
FROM held AS h JOIN tool_facts AS f ON f.tools_hash = h.tools_hash AND f.day = h.day
GROUP BY h.tools_hash
-- The rules read a tool's name and description as written, while a row keeps a description that is no string as
-- null and a name that is 0, false, [] or {} as its text: a list with such a tool is parsed again.
HAVING bool_and(f.description IS NOT NULL
                AND (f.name IS NULL OR f.name NOT IN ('0', '0.0', '-0.0', 'False', '[]', '{}')))
ORDER BY h.tools_hash
