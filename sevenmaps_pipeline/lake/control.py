"""The operator's control files in the lake (`control/*.parquet`: opt-outs, owner claims, submissions,
incident reviews): what the operator decided, not what was observed, so no signed root covers them. A file
that cannot be read is an error naming it, never read as empty: an opt-out is never lost because a file
broke."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq


class Refused(enum.Enum):
    """Why a control (an opt-out, an owner's claim, a submission, an incident review) refused what it was
    asked: a named kind; the error's line says the rest (the host, the limit, what to do)."""

    FILE_UNREADABLE = "file_unreadable"
    NOT_A_HOST = "not_a_host"
    PUBLIC_SUFFIX = "public_suffix"
    TOKEN_EXPIRED = "token_expired"
    UNKNOWN_HOW = "unknown_how"
    ALREADY_OPTED_OUT = "already_opted_out"
    NO_TOKEN_ISSUED = "no_token_issued"
    NO_VERIFIED_OWNER = "no_verified_owner"
    NOTE_TOO_LONG = "note_too_long"
    NOTE_CONTROL_CHARACTERS = "note_control_characters"
    BAD_SETTING = "bad_setting"
    NOT_AN_HTTPS_URL = "not_an_https_url"
    NOT_THEIR_HOST = "not_their_host"
    TOO_MANY_ENDPOINTS = "too_many_endpoints"
    CREDENTIALS_IN_URL = "credentials_in_url"
    NOT_LISTABLE = "not_listable"
    # A person's review of an incident (registry/incident_reviews.py, publishing/incidents.py).
    NO_REVIEWER = "no_reviewer"
    NO_REASON = "no_reason"
    NOT_ON_THE_MAP = "not_on_the_map"
    NOTHING_LIVE = "nothing_live"
    ALREADY_CLOSED = "already_closed"
    NOT_AWAITING_REVIEW = "not_awaiting_review"
    NO_FAILED_CHECK = "no_failed_check"
    ANSWERED_SINCE = "answered_since"


class ControlError(ValueError):
    """A control's refusal: `kind` is what callers and tests match; `because`, the rule's own kind behind it
    when there is one (a listing rule's SkipReason); str() is the one line shown."""

    def __init__(self, kind: Refused, line: str, because: enum.Enum | None = None) -> None:
        super().__init__(line)
        self.kind, self.because = kind, because


def read_control_rows(path: Path, what: str, error: type[ControlError], consequence: str = "") -> list[Any]:
    """The file's rows, as dicts (none when it does not exist yet)."""
    if not path.exists():
        return []
    try:
        return pq.read_table(path).to_pylist()
    except Exception as exc:  # noqa: BLE001 - any reader failure stops the caller, naming the file
        raise error(Refused.FILE_UNREADABLE,
                    f"{what} {path} cannot be read ({type(exc).__name__}: {exc}){consequence}") from exc
