"""The outcomes of a check that are not a result about the server (docs/methodology.md, "Outcomes").

A check either tells us something about the endpoint (ok, needs_auth, http_402, or one of the ways of
not answering: day code d), or it does not: the listing was not to be contacted (`skipped`), our own
code failed (`prober_error`), or we could not check fairly (`not_checked`, with a reason kind below).
The last two are our trouble: the day is n, never d, and a later slice or a resumed scan checks again.
"""

from __future__ import annotations

SKIPPED = "skipped"
PROBER_ERROR = "prober_error"
NOT_CHECKED = "not_checked"

# Why a check was not made fairly, the first word of a not_checked row's outcome_detail (and its
# skip_reason): the prober could not keep up (measured event-loop lag or CPU wait during the check), our
# machine could not make the request (out of open files, memory or local ports, no route from us, our
# resolver failing: probe/ours.py), or the origin's robots.txt could not be read (RFC 9309: no answer or a
# 5xx means we may not check).
PROBER_OVERLOADED = "prober_overloaded"
PROBER_RESOURCES = "prober_resources"
ROBOTS_UNAVAILABLE = "robots_unavailable"
NOT_CHECKED_REASONS = (PROBER_OVERLOADED, PROBER_RESOURCES, ROBOTS_UNAVAILABLE)

# Outcomes that say nothing about the server: never counted as a check with a result.
NOT_A_RESULT = (SKIPPED, PROBER_ERROR, NOT_CHECKED)
# Outcomes that are ours to redo: a resumed scan or a later slice of the same day checks again.
OURS_TO_REDO = (PROBER_ERROR, NOT_CHECKED)


def not_checked_detail(reason: str, detail: str) -> str:
    """The outcome_detail of a not_checked row: the reason kind first, then what was seen."""
    if reason not in NOT_CHECKED_REASONS:
        raise ValueError(f"unknown not_checked reason {reason!r}")
    return f"{reason}: {detail}" if detail else reason
