"""Readiness (docs/methodology.md, "Readiness"): the discovery surfaces each endpoint answered, every rubric
line of every MCP endpoint and Agent Skill the night's readiness run read, and the scores summed from them."""



from .map_assets import day_spec

readiness_discovery = day_spec(
    "readiness_discovery", "readiness",
    description="Per endpoint with a readiness check that day, each discovery surface asked for it: its server "
    "card (<mcp-url>/server-card, Accept application/mcp-server-card+json) and RFC 9728 metadata, its origin's "
    "card paths (/.well-known/mcp/server-card.json, /.well-known/mcp.json), its publisher domain's catalog, "
    "/llms.txt, markdown door and registry proof file: whether it answered, and where a card disagrees with "
    "the server (a card_disagrees finding). sql/readiness_discovery.sql, rules/discovery.py",
)


readiness_lines = day_spec(
    "readiness_lines", "readiness",
    description="Every line of the readiness rubric (mcp-2026-09-11.1 for MCP endpoints, skill-2026-09-11.1 "
    "for Agent Skills) for each endpoint checked and skill read that night: seen, passed, points and "
    "evidence, with the rubric version. A line the probe could not see is unseen and counts on neither side. "
    "p50 is the median round trip of the last 7 days' readiness checks. sql/readiness_lines.sql, "
    "rules/readiness.py",
)


readiness_scores = day_spec(
    "readiness_scores", "readiness",
    description="Each listing's readiness score that day: every section's and the total's earned/possible over "
    "the lines seen (e.g. 61/85), lines seen and unseen, and the rubric version. sql/readiness_scores.sql",
)
