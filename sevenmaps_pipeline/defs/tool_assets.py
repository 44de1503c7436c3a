"""What each endpoint's tools can do and cost: facts once per distinct tool list, then per endpoint-day."""



from .map_assets import day_spec

tool_facts = day_spec(
    "tool_facts", "tools",
    kinds=("parquet", "python"),
    description="Facts of every tool list the day needs (its endpoints' lists, and the previous list of each "
    "endpoint whose list changed) not yet computed under the current method: one row "
    "per tool in curated/tool_facts (fingerprint, hints with unset kept apart from false, risk with rule and "
    "evidence, description tokens) and one per list in curated/tool_lists (o200k_base definition tokens). "
    "Computed once per list, never per endpoint-day. sevenmaps_pipeline/rules/tool_facts.py",
)


tools = day_spec(
    "tools", "tools",
    description="One row per endpoint, day and tool: name, description, schema, annotations (unset kept apart "
    "from false), fingerprint, risk green/yellow/red with the rule that fired and its evidence, annotation "
    "contradictions. sql/tools.sql",
)


token_cost = day_spec(
    "token_cost", "tools",
    description="Per endpoint and day: tool_list_size, tokens_estimate (size/4), definition_tokens (o200k_base) "
    "and the endpoint's percentile among that day's endpoints. sql/token_cost.sql",
)


findings = day_spec(
    "findings", "tools",
    description="Published findings per endpoint and day (token_heavy, huge_description, missing_descriptions, "
    "no_annotations, missing_schema, duplicate_names, old_protocol, slow, annotation_contradiction, "
    "card_disagrees from readiness_discovery; "
    "sql/findings.sql) and, in a separate table never exported, internal-only pattern checks on descriptions "
    "(sql/internal_findings.sql).",
)


server_categories = day_spec(
    "server_categories", "tools",
    description="A category per endpoint and day, with the rule that placed it, in the Agent-Ready "
    "directory's order: the server's own registry name and description; else its tool-name rule (>= 3 "
    "names on a topic, twice any other, >= a quarter of the tools, after dropping whole toolsets that >= 20 "
    "endpoints list identically and generic words); else 7Maps' words in names and descriptions; else 'other'. "
    "sql/server_categories.sql, words in assets/categories.json",
)


tool_changes = day_spec(
    "tool_changes", "tools",
    description="What each endpoint changed since its previous checked day (at most 60 days back): tools added, "
    "removed, changed (which fields), renamed, a yellow/red tool rewritten, a rise in risk, 'silent' list "
    "changes under the same serverInfo.version, stopped/started answering, now asks for sign-in, a new payment "
    "address, a redirect to another domain. Both days' tools are classified with the current risk method, so a "
    "method change is never a change by the server. sql/tool_changes.sql",
)
