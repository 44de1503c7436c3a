"""Method versions and the parameters of every rule that can change a published figure.

A change to anything here changes published numbers: bump the matching version, which is stored with
every row the rule produces.
"""

from __future__ import annotations

# Day codes, shown status and which checks count (sql/daily_status.sql).
STATUS_METHOD = "status-1.0"
STATUS_PARAMS = {
    # A minute of one run in which most checks of unrelated origins failed at the network level is our
    # own outage, not theirs: those failures are voided (the day becomes n, never d).
    "mass_failure_min_checks": 20,
    "mass_failure_min_origins": 10,
    "mass_failure_share": 0.8,
    # How far back an unchecked, still-listed endpoint's last check is looked up (to keep it off the map
    # if that check skipped it).
    "lookback_days": 29,
}

# 30-day history, uptime, success chance and stability (sql/server_history.sql).
HISTORY_METHOD = "history-1.1"  # 1.1: stability counts the change days of tool_changes
HISTORY_PARAMS = {
    "window_days": 30,
    "label_min_checked_days": 14,
    "half_life_days": 7.0,
    "prior_alpha": 1.0,
    "prior_beta": 1.0,
    "interval_low": 0.05,
    "interval_high": 0.95,
}

ROOT_METHOD = "7maps-roots-1.0"

# Published findings (sql/findings.sql), seed 000 `findings.published`.
FINDINGS_METHOD = "findings-1.0"
FINDINGS_PARAMS = {
    "token_heavy_tokens": 10_000,  # tokens_estimate at or above
    "huge_description_tokens": 2_000,  # o200k_base tokens in one description, above
    "old_protocol_before": "2025-03-26",  # protocol versions older than this
    "slow_ms": 3_000,  # whole check, above
}

# Server categories (sql/server_categories.sql); the words live in assets/categories.json.
CATEGORY_PARAMS = {
    "shared_toolset_min_endpoints": 20,  # seed 004: tools that 20 or more servers list identically are dropped
    "tool_name_min_names": 3,  # seed 004: at least three tool names on one topic ...
    "tool_name_dominance": 2,  # ... twice as many as name any other topic ...
    "tool_name_min_share": 0.25,  # ... and at least a quarter of all its tools
    "words_min_score": 2,  # 7Maps words rule: at least two topic words, and more than any other topic
}

# Change records (sql/tool_changes.sql), seed 000 `change_detection`.
CHANGES_METHOD = "changes-1.0"
CHANGES_PARAMS = {
    # How far back an endpoint's previous checked day (and previous day with a tool list) is looked for;
    # also how many days of change days server_history keeps (seed 000: change days kept 60 days).
    "lookback_days": 60,
}
# Kinds that mean the tool list itself changed: these are the change days behind server_history.stability.
TOOL_LIST_CHANGE_KINDS = ("tool_added", "tool_removed", "tool_changed", "tool_renamed")
