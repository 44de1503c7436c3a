"""A person's reviews of incidents (docs/operations.md, "Reviewing incidents"): the closures, and the
confirmations the seed allows, kept in `control/incident_reviews.parquet`, one appended row per review
(who, when, why), never rewritten or removed. Operator decisions, not observations, so no signed root
covers the file; every day's build of `incidents` (sql/incidents.sql) reads the reviews made before that
day ended, and the live answers (publishing/incidents.py) read all of them at once.

- `close`: a person closes a live incident after review (seed 000 `incidents.closed_when`); it is closed
  from that moment, and a failure confirmed about a later day opens a new incident.
- `confirm`: seed 000 lets only our own fresh check or trusted reports confirm a failure, never a person's
  say-so; so a person confirms queued failure reports only on a check of ours (hourly or five-minute) of
  that endpoint that day that did not answer, and the row keeps that check as its evidence.

What a review may say is checked here (a name, a reason: bounded, no control characters); whether there is
anything to close or confirm is decided against the served day (publishing/incidents.py). An unreadable
file is an error naming it, never read as "nobody reviewed anything".
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from ..lake.control import ControlError, Refused, control_characters, control_lock, read_control_rows
from ..lake.parquet_io import write_parquet
from ..lake.paths import LakePaths

ACTIONS = ("close", "confirm")
MAX_REVIEWER_CHARS = 100
MAX_REASON_CHARS = 500
SCHEMA = pa.schema([
    pa.field("server_key", pa.string(), nullable=False),
    pa.field("action", pa.string(), nullable=False),  # close | confirm
    # close: the opening day of the live incident as the reviewer saw it; confirm: the day the failure reports
    # are about. An incident's opening day moves with the look-back window, so the build matches a closure by
    # its time, not by this day (sql/incidents.sql).
    pa.field("incident_day", pa.date32(), nullable=False),
    pa.field("reviewer", pa.string(), nullable=False),
    pa.field("reason", pa.string(), nullable=False),
    pa.field("reviewed_at", pa.timestamp("us", tz="UTC"), nullable=False),
    pa.field("map_day", pa.date32(), nullable=False),  # the built day the reviewer was shown
    # confirm: our own check that did not answer (the evidence seed 000 asks for)
    pa.field("check_kind", pa.string()),  # hourly | five_minute
    pa.field("check_started_at", pa.timestamp("us", tz="UTC")),
    pa.field("check_outcome", pa.string()),
])


class IncidentReviewError(ControlError):
    """A review cannot be recorded as asked, or the reviews cannot be read."""


@dataclass(frozen=True)
class Review:
    server_key: str
    action: str
    incident_day: dt.date
    reviewer: str
    reason: str
    reviewed_at: dt.datetime
    map_day: dt.date
    check_kind: str | None = None
    check_started_at: dt.datetime | None = None
    check_outcome: str | None = None


def reviews_file(lake: LakePaths) -> Path:
    return lake.root / "control" / "incident_reviews.parquet"


def read_reviews(lake: LakePaths) -> list[Review]:
    rows = read_control_rows(reviews_file(lake), "the incident reviews", IncidentReviewError,
                             "; no incident is shown or closed until it is repaired",
                             required=("server_key", "action"))
    return [Review(**{k: r.get(k) for k in SCHEMA.names}) for r in rows]


def reviews_table(lake: LakePaths, before: dt.datetime | None = None) -> pa.Table:
    """The reviews as an Arrow table of SCHEMA (those made before `before` when given): what the incidents
    SQL reads as `incident_reviews`."""
    rows = [dataclasses.asdict(r) for r in read_reviews(lake) if before is None or r.reviewed_at < before]
    return pa.Table.from_pylist(rows, SCHEMA)


def plain_text(text: str | None, what: str, limit: int, missing: Refused) -> str:
    """A reviewer's name or reason as kept: whitespace runs made one space; refused when empty, longer than
    `limit` or holding control characters (like an owner's note, registry/owners.py)."""
    value = " ".join((text or "").split())
    if not value:
        raise IncidentReviewError(missing, f"a review needs {what}")
    if len(value) > limit:
        raise IncidentReviewError(Refused.NOTE_TOO_LONG, f"{what} has {len(value):,} characters; at most {limit:,}")
    if control_characters(value):
        raise IncidentReviewError(Refused.NOTE_CONTROL_CHARACTERS, f"{what} holds control characters")
    return value


def append_review(lake: LakePaths, review: Review) -> Review:
    """Record a review (its name and reason checked here), after every earlier one."""
    if review.action not in ACTIONS:
        raise IncidentReviewError(Refused.UNKNOWN_HOW, f"a review's action is one of {', '.join(ACTIONS)}, "
                                  f"not {review.action!r}")
    review = dataclasses.replace(
        review, reviewer=plain_text(review.reviewer, "the reviewer's name", MAX_REVIEWER_CHARS, Refused.NO_REVIEWER),
        reason=plain_text(review.reason, "the reason", MAX_REASON_CHARS, Refused.NO_REASON))
    if review.action == "confirm" and (review.check_kind is None or review.check_started_at is None):
        raise IncidentReviewError(Refused.NO_FAILED_CHECK, "a confirmation keeps the check of ours that saw the "
                                  "failure; none was given")
    with control_lock(reviews_file(lake)):  # two reviewers recording at once both keep their row
        rows = [dataclasses.asdict(r) for r in read_reviews(lake)] + [dataclasses.asdict(review)]
        write_parquet(lake, reviews_file(lake), pa.Table.from_pylist(rows, SCHEMA))
    return review
