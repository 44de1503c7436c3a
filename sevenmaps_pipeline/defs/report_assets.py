"""What agents report, and what the map ranks: validated reports, rating aggregates, incidents, rankings."""



from .map_assets import day_spec

agent_reports = day_spec(
    "agent_reports", "reports",
    description="The agent reports that arrived that UTC day (raw/agent_reports, landed by the reporting service), "
    "validated: fixed fields only (an unknown enum, a negative figure, free text where a tool name belongs, an "
    "unknown server or a reporter id that is not a keyed hash is refused with its reason into "
    "agent_report_quarantine, never counted), resolved to the endpoint and compared with our own check of the "
    "day each is about. sql/agent_report_validation.sql, sql/agent_reports.sql",
)


rating_aggregates = day_spec(
    "rating_aggregates", "reports",
    description="Per endpoint and per tool, over the 30 days ending that day: weighted success share (recency, "
    "paid over anonymous, agreement with our own check; each reporter capped per endpoint and day), fail "
    "reasons, median ms, surprises; stars only from enough independent reporters including paying ones, "
    "otherwise 'not enough reports'. Weights in rules/methods.py RATINGS_PARAMS. sql/rating_aggregates.sql",
)


incidents = day_spec(
    "incidents", "reports",
    description="Live incidents (confirmed by our own check that day, by enough paying reporters, or by a person "
    "on a fresh check of ours that did not answer; never by anonymous reports alone), incidents closed that day "
    "(a check works again, the reports aged out, or a person closed it after review, with who and why: "
    "control/incident_reviews.parquet, reviews made before the day ended), and unconfirmed failure reports kept "
    "for a person to review (never shown). sql/incidents.sql",
)


reliable_rankings = day_spec(
    "reliable_rankings", "map",
    description="The reliable list of each category: endpoints answering with tools now, with a category other "
    "than 'other' and >= 14 checked days, ranked by the share of checked days answering with tools over 30 days "
    "(server_history.tools_days: an empty tool list is an answer, not tools), then the share answering at all, "
    "then median handshake. Payment, plans, owner verification and ratings never enter the order. "
    "sql/reliable_rankings.sql",
)
