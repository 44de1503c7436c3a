"""The operator's control files in the lake (`control/*.parquet`: opt-outs, owner claims, submissions,
incident reviews): what the operator decided, not what was observed, so no signed root covers them. A file
that cannot be read is an error naming it, never read as empty: an opt-out is never lost because a file
broke."""

from __future__ import annotations

import contextlib
import enum
import fcntl
import functools
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

import pyarrow.parquet as pq

from .paths import LakePaths


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


def control_characters(text: str) -> bool:
    """Whether a person's text holds a control character (C0, DEL or C1: an escape, a line break), which a control
    file's notes and reasons refuse: they are shown to people as written."""
    return any(ord(c) < 32 or 0x7F <= ord(c) < 0xA0 for c in text)


def read_control_rows(path: Path, what: str, error: type[ControlError], consequence: str = "",
                      required: Sequence[str] = ()) -> list[Any]:
    """The file's rows, as dicts (none when it does not exist yet). Anything else in its place (a link to nothing,
    a folder: a dataset reader reads an empty one as no rows) or a file without the `required` columns (an opt-out
    without its status read as none) is an error naming it, never no rows."""
    if not os.path.lexists(path):
        return []
    if not path.is_file():
        raise error(Refused.FILE_UNREADABLE, f"{what} {path} is not a file (a link to nothing, or a folder)"
                    f"{consequence}")
    try:
        table = pq.read_table(path)
    except Exception as exc:  # noqa: BLE001 - any reader failure stops the caller, naming the file
        raise error(Refused.FILE_UNREADABLE,
                    f"{what} {path} cannot be read ({type(exc).__name__}: {exc}){consequence}") from exc
    missing = [name for name in required if name not in table.column_names]
    if missing:
        raise error(Refused.FILE_UNREADABLE, f"{what} {path} lacks the column(s) {', '.join(missing)}{consequence}")
    return table.to_pylist()


# The control files a thread holds the lock of (a locked change may call another of the same file).
_HELD = threading.local()
P = ParamSpec("P")
R = TypeVar("R")


@contextlib.contextmanager
def control_lock(path: Path) -> Iterator[None]:
    """One writer of a control file at a time, across processes (`.<name>.lock` beside it): each change reads the
    file, changes its rows and writes it whole, so two at once kept only one (38 of 40 opt-outs made at once were
    lost)."""
    held: set[str] = getattr(_HELD, "paths", set())
    _HELD.paths = held
    if str(path) in held:
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.parent / f".{path.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        held.add(str(path))
        try:
            yield
        finally:
            held.discard(str(path))


def changes_control_file(file_of: Callable[[LakePaths], Path]) -> Callable[
        [Callable[Concatenate[LakePaths, P], R]], Callable[Concatenate[LakePaths, P], R]]:
    """A change of the control file `file_of(lake)`, made holding its lock (`control_lock`)."""
    def wrap(change: Callable[Concatenate[LakePaths, P], R]) -> Callable[Concatenate[LakePaths, P], R]:
        @functools.wraps(change)
        def locked(lake: LakePaths, *args: P.args, **kwargs: P.kwargs) -> R:
            with control_lock(file_of(lake)):
                return change(lake, *args, **kwargs)
        return locked
    return wrap
