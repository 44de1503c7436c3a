"""Method versions and the parameters of every rule that can change a published figure.

A change to anything here changes published numbers: bump the matching version, which is stored with
every row the rule produces.
"""

from __future__ import annotations

from typing import Any

# Day codes, shown status and which checks count (sql/daily_status.sql).
# The version of the definition tokens' rule (rules/tokens.py), on every token_cost row, in every list's facts method
# and in the evidence of the readiness lines that count tokens.
# o200k_base-1.1: counted over the list's canonical text (rules/fingerprints.py definition_text), not over the
# JSON as a server sent it, so one list is one figure wherever it is shown (docs/changelog.md).
# It also versions every tool_facts column but the risk's (a list's encoding, fingerprints, hints, schemas and
# counts): a method change of the rules alone carries them (curated/carried_facts.py), so a change to how any of
# them is computed is a new version here.
TOKENIZER_METHOD = "o200k_base-1.1"

STATUS_METHOD = "status-1.7"  # 1.1: a not_checked check (our trouble) is voided, like prober_error; 1.2: an o
# with an empty tool list shows "answers, lists no tools"; 1.3: an endpoint listed under several names carries
# one of them on every day, its first active listing by name (docs/methodology.md, "Its name"); 1.4: before the
# name, a listing whose namespace owns its URL's host (a stranger's variant URL of another's endpoint never
# names it); 1.5: a URL with a secret in its query (`?api_key=`) carries credentials, as userinfo does: skipped
# 1.6: a secret's name numbered, versioned, indexed or as a bracketed key (`key1`, `token_v2`, `apikey[]`,
# `config[api_key]`), and `pass`/`pw` as words of their own; 1.7: an all-caps name ending in PASS or PW (`DBPASS`)
# and a capitalised Pass after an acronym (`SSLPass`)
STATUS_PARAMS: dict[str, Any] = {
    # A minute of one run in which most checks of unrelated origins failed at the network level is our
    # own outage, not theirs: those failures are voided (the day becomes n, never d).
    "mass_failure_min_checks": 20,
    "mass_failure_min_origins": 10,
    "mass_failure_share": 0.8,
    # How far back an unchecked, still-listed endpoint's last check is looked up (to keep it off the map
    # if that check skipped it).
    "lookback_days": 29,
}

# When the prober could not keep up during a check (probe/load.py): a timeout, or an answer slower than
# the slow finding's threshold, seen then is checked again at the end of the scan, at a fraction of its
# concurrency, and recorded not_checked (prober_overloaded, day code n) when the prober is overloaded again.
# 1.1: our machine's trouble besides load (probe/ours.py): out of open files, memory or local ports, no route
# from us, our resolver failing or silent while it answered no other name: not_checked (prober_resources), n;
# lookups in threads of their own, never queued inside a check's step.
OVERLOAD_METHOD = "overload-1.1"
OVERLOAD_PARAMS: dict[str, Any] = {
    "max_loop_lag_s": 1.0,     # the event loop woke this late at least once during the check
    "min_cpu_wait_s": 0.5,     # ... or the prober's thread waited at least this long for a CPU
    "cpu_wait_share": 0.10,    #     and at least this share of the check's wall time
    "recheck_concurrency_divisor": 8,
    "recheck_calm_s": 1.0,     # before the second pass: wait for a quiet second of the loop, at most
    "recheck_calm_at_most_s": 30.0,
    "lookup_threads": 256,     # name lookups at once, each in a thread of its own (probe/ours.py)
    "lookup_retry_s": 1.0,     # a lookup answered "try again" is asked once more after this pause
    "silent_lookup_s": 5.0,    # a lookup unanswered this long when its step ends may be our resolver's silence
}

# 30-day history, uptime, success chance and stability (sql/server_history.sql).
# 1.1: stability counts the change days of tool_changes; 1.2: tools_days, the o days whose list had a tool;
# 1.3: the label of one checked day says "over 1 day observed" (1.2: "over 1 days observed"); 1.4: "no data" with no
# checked day, as the pages say (1.3: "over 0 days observed")
HISTORY_METHOD = "history-1.4"
HISTORY_PARAMS: dict[str, Any] = {
    "window_days": 30,
    "label_min_checked_days": 14,
    "half_life_days": 7.0,
    "prior_alpha": 1.0,
    "prior_beta": 1.0,
    "interval_low": 0.05,
    "interval_high": 0.95,
}

# 1.1: root, signature and lines exactly as 1.0 (the methodology's formula); in addition each root document
# carries a signed statement binding its day, method, time and log position, and its lines are logged.
ROOT_METHOD = "7maps-roots-1.1"

# Published findings (sql/findings.sql), the methodology's `findings.published`.
FINDINGS_METHOD = "findings-1.1"  # 1.1: card_disagrees (a server card that says otherwise than its server)
FINDINGS_PARAMS: dict[str, Any] = {
    "token_heavy_tokens": 10_000,  # tokens_estimate at or above
    "huge_description_tokens": 2_000,  # o200k_base tokens in one description, above
    "old_protocol_before": "2025-03-26",  # protocol versions older than this
    "slow_ms": 3_000,  # whole check, above
}

# Server categories (sql/server_categories.sql); the words live in assets/categories.json.
CATEGORY_PARAMS: dict[str, Any] = {
    # Agent-Ready rule: toolsets that 20 or more servers list identically are dropped
    "shared_toolset_min_endpoints": 20,
    "tool_name_min_names": 3,  # Agent-Ready rule: at least three tool names on one topic ...
    "tool_name_dominance": 2,  # ... twice as many as name any other topic ...
    "tool_name_min_share": 0.25,  # ... and at least a quarter of all its tools
    "words_min_score": 2,  # 7Maps words rule: at least two topic words, and more than any other topic
    # categories-1.2 (issue 37 point 4): when the registry text and the tools disagree, the tools' verdict wins
    # unless the registry text has at least two distinct words (entries) of its topic
    "registry_keeps_min_entries": 2,
}

# Change records (sql/tool_changes.sql), the methodology's `change_detection`.
CHANGES_METHOD = "changes-1.1"  # 1.1: tools of one name pair by level and fingerprint, never by position
CHANGES_PARAMS: dict[str, Any] = {
    # How far back an endpoint's previous checked day (and previous day with a tool list) is looked for;
    # also how many days of change days server_history keeps (the methodology keeps change days 60 days).
    "lookback_days": 60,
}
# Kinds that mean the tool list itself changed: these are the change days behind server_history.stability.
TOOL_LIST_CHANGE_KINDS = ("tool_added", "tool_removed", "tool_changed", "tool_renamed")

# Reliable rankings (sql/reliable_rankings.sql), the methodology's `reliable`. Nothing else may move a server: not
# payment, plans, owner verification or agents' ratings (none of them is an input of that SQL).
# 1.1: days answering with tools first; 1.2: an empty tool list is not eligible; 1.3: nor is a day of one a
# day answering with tools (server_history.tools_days)
RANKINGS_METHOD = "reliable-1.3"
RANKINGS_PARAMS: dict[str, Any] = {
    "min_checked_days": 14,  # checked days in the 30-day window to be eligible
}

# Agent reports: validation and agreement with our own check (sql/agent_report_validation.sql).
# 1.1: a refused report keeps no text in an agent's own words (safe_* columns); same reports refused.
REPORTS_METHOD = "reports-1.2"  # 1.2: a batch the rules cannot read whole, or anything beside the batches, is refused
# before the day is read; a refused report's words are withheld in its batch too (curated/report_batches.py)
REPORTS_PARAMS: dict[str, Any] = {
    # Reports a batch, and a day, may hold: past them a batch is refused by its footer and deleted unread (a day's
    # build takes about 1 KB of memory a report; the real-shaped bench lake's days hold some 20,000: docs/scaling.md).
    "max_batch_rows": 250_000,
    "max_day_rows": 1_000_000,
    # A report about a day more than this many days before it arrived can no longer count anywhere (the
    # ratings window is the 30 days ending on a day).
    "max_age_days": 29,
    # A tool name as MCP allows it; anything else in `tool` is free text, which reports never carry.
    "tool_pattern": r"^[A-Za-z0-9_.\-/]{1,128}$",
    # What a value refused as an agent's words is replaced by, in the quarantine and in its batch (reports-1.2).
    "withheld_pattern": r"<[0-9]+ characters withheld>",
    # Failures our own check can see: the report agrees when our day code says the same.
    "checkable_failures": ["unreachable", "timeout", "server_error"],
}

# Ratings (sql/rating_aggregates.sql), the methodology's `ratings`: every weight and threshold, in one place.
RATINGS_METHOD = "ratings-1.0"
RATINGS_PARAMS: dict[str, Any] = {
    "window_days": 30,  # reports about the 30 days ending on the day (and arrived by then)
    "recency_half_life_days": 7.0,  # weight 0.5^(age / 7), age = day - about_day
    "paid_weight": 3.0,  # a paying reporter's report ...
    "anonymous_weight": 1.0,  # ... against an anonymous one
    "agrees_weight": 1.5,  # the report says what our own check of that day said
    "unchecked_weight": 1.0,  # we could not check (no check that day, or a failure we cannot see)
    "disagrees_weight": 0.25,  # the report contradicts our own check of that day
    # Each reporter counts for at most this many reports per endpoint and day (a flood is scaled down to it).
    "reporter_cap_reports_per_endpoint_day": 3,
    "min_reporters": 5,  # stars only from this many distinct reporters ...
    "min_paid_reporters": 2,  # ... including this many paying ones
}

# Incidents (sql/incidents.sql), the methodology's `incidents`. 1.1: a person's closures and confirmations
# (control/incident_reviews.parquet) are read.
INCIDENTS_METHOD = "incidents-1.1"
INCIDENTS_PARAMS: dict[str, Any] = {
    "failures": ["unreachable", "timeout", "server_error"],  # reports of the endpoint itself failing
    "trusted_min_reporters": 2,  # distinct paying reporters that confirm a failure without our own check
    "age_out_days": 2,  # with no new confirmation for this many days, the reports have aged out
    "lookback_days": 14,  # how far back an incident's confirmations are read
}

# The readiness rubric (rules/readiness.py): its own two versions, one per rubric; a change to any point
# or threshold below is a new version (docs/methodology.md, "Readiness").
READINESS_MCP_METHOD = "mcp-2026-09-11.5"
READINESS_SKILL_METHOD = "skill-2026-09-11.2"
READINESS_PARAMS: dict[str, Any] = {
    "p50_under_ms": 500,
    "initialize_points": 8,  # `initialize` answers without `server/discover`: 8 of the line's 15
    "revision": "2026-07-28",
    "tokens_full_below": 5_000,  # definition tokens: 12 points below, sliding linearly ...
    "tokens_zero_at": 25_000,  # ... to 0 here
    "annotation_coverage_min": 0.90,
    "output_schema_coverage_min": 0.50,
    "pushed_within_months": 12,
    # Agent Skills: the format's portable frontmatter keys, and the lines' thresholds.
    "portable_keys": ["name", "description", "license", "allowed-tools", "metadata", "compatibility"],
    "description_max_chars": 1_024,  # under
    "description_max_tokens": 100,  # under
    "skill_body_full_below": 5_000,
    "skill_body_zero_at": 15_000,
    # "Says when to use it": cues in the description that tell an agent when to reach for the skill.
    "when_to_use_cues": ["use when", "use this when", "use it when", "use this skill when", "when the user",
                         "when you need", "when asked", "use for", "use this for", "triggers when"],
}
# The p50 line's window: the median round trip over the listing's answered checks (daily checks and the
# readiness check) of the last READINESS_P50_DAYS UTC days, the day included.
READINESS_P50_DAYS = 7

# Discovery surfaces (docs/methodology.md, "Readiness"): which documents count as answered, and what a
# server card is compared on.
DISCOVERY_METHOD = "discovery-1.1"  # 1.1: the ai-catalog path; a card kept by a 304 answers as that card

# When each endpoint is checked in the day (probe/slices.py), what is shown now (sql/current_status.sql)
# and five-minute uptime (sql/five_minute_uptime.sql); the SQL files carry their versions on every row.
SLICE_METHOD = "moving-hour-1.0"
CURRENT_STATUS_METHOD = "current-1.3"
FIVE_MINUTE_UPTIME_METHOD = "five-minute-uptime-1.0"

# Submitted servers (registry/submissions.py): checked every 6 hours for 7 days, then admitted or refused by
# these thresholds alone, the same for everyone.
SUBMISSION_METHOD = "submissions-1.0"
SUBMISSION_PARAMS: dict[str, Any] = {
    "days": 7,
    "every_hours": 6,  # 28 checks in the window
    "min_checks": 20,  # checks with a result (not skipped, not our own fault)
    "min_answered_share": 0.9,  # of those, answered with a tool list
    "max_tool_lists": 1,  # one tools_hash over the whole window: a stable list
}

# Package advisories (sql/package_advisories.sql) and domain age (sql/domain_ages.sql): outside lookups,
# once a day (lookups/daily.py). 1.1: over the registry snapshot in force on the day (lake/paths.py
# registry_in_force, 29 days back), the one the day's rows read; 1.0 looked 7 days back. advisories-1.2: a row per
# package and version listed, severities only GHSA's labels or CVSS vectors, advisories unread named in the status;
# domain-age-1.2: domains in their ASCII form, no address, registration dates from 1985 to today only.
# advisories-1.3: an entry's first 50 package versions asked, at most 20,000 a day, the rest landed "not asked".
# domain-age-1.3: at most 20,000 domains asked a day of those due (no fresh lookup), the rest on later days.
ADVISORIES_METHOD = "advisories-1.3"
DOMAIN_AGE_METHOD = "domain-age-1.3"
DOMAIN_AGE_PARAMS: dict[str, Any] = {
    "refresh_days": 30,  # a domain's RDAP record is asked again after this many days (a failure: the next day)
    "young_days": 90,  # registered fewer days before than this: young (the route's caution with high risk)
}

# Why checks failed (sql/failure_reasons.sql): the Agent-Ready directory's classes and a redirect.
FAILURE_REASONS_METHOD = "failure-reasons-1.1"  # 1.1: not_mcp is exactly the shown status of that name

# The route (surfaces/route.py, docs/agents.md "route"): BM25 over tool names and descriptions, computed
# once per distinct tool list, then seed 000's principles. Nothing here reads payment, plans, owner
# verification or ratings: placement cannot be bought.
# 1.1: set-aside servers listed in a fixed order (server_key) among equally relevant tools; 1.2: on a live map,
# the open day's checks so far (curated/open_day.py) decide an endpoint's list, status and changes today.
# 1.3: a result's caveats say what its uptime and success chance count when it asked for sign-in or payment; a
# tool whose name its list repeats is ranked once.
ROUTE_METHOD = "route-1.7"  # 1.4: answering again without a list on the served day: set aside, named; 1.5: an
# empty tool list shown now (current_status) is not answering with tools: set aside, named; 1.6: the caveats say on
# how many answered days the list was empty (uptime_counts, server_history.tools_days); 1.7: a tool name in a
# reason is quoted, cut past 200 characters
ROUTE_PARAMS: dict[str, Any] = {
    "k1": 1.2,  # BM25 term-frequency saturation
    "b": 0.75,  # BM25 length normalisation
    "name_weight": 2,  # a name's words count twice: a tool's name says what it does
    "results": 5,  # tools returned by default (at most max_results)
    "max_results": 20,
    "per_endpoint": 2,  # at most this many tools of one endpoint among the results
    "set_aside_listed": 20,  # set-asides named in an answer, most relevant first
    "min_relevance": 0.2,  # of the best match's BM25: weaker matches are not candidates
    "new_server_checked_days": 14,  # fewer checked days: a new server (as the reliable lists' bar)
    "gateway_shared_list": 20,  # a tool list that many endpoints list identically: a gateway or template
    "gateway_shared_host": 10,  # that many endpoints on one host: a gateway
    "risk_rise_days": 7,  # a rise in risk within this many days sets a server aside
    "redirect_days": 30,  # a redirect to another domain within this many days: "redirects elsewhere"
    "unknown_success_chance": 0.5,  # a server with no success chance yet ranks as an even chance
    "unknown_stability": 1.0,  # stability not measured yet (no day-to-day comparison) costs nothing, said in caveats
}
# The day-change kinds that mean "changed today" (the tool list or how the server answers).
ROUTE_CHANGED_TODAY_KINDS = ("tool_added", "tool_removed", "tool_changed", "tool_renamed", "changing_tool_rewritten",
                             "risk_rise", "silent", "now_asks_sign_in", "new_payment_address",
                             "redirects_other_domain")
# What watch reports (publishing/locks.py): rises in risk and sign-in, payment and redirect changes.
WATCH_KINDS = ("risk_rise", "now_asks_sign_in", "new_payment_address", "redirects_other_domain")
