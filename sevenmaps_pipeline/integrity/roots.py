"""Signing days: chain order, never twice, never before the day has ended."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..lake.parquet_io import last_signed_day, write_bytes_atomic
from ..lake.paths import LakePaths
from ..rules.methods import ROOT_METHOD
from .keys import load_private_key, publish_public_key, sign_root
from .manifest import compute_root, day_lines

# A day is signed only when the tables the map publishes for it exist (a signed day can never gain one).
REQUIRED_TABLES = ("daily_status", "server_history", "tool_lists", "tool_facts", "tools", "token_cost", "findings",
                   "internal_findings", "server_categories", "tool_changes", "agent_reports", "agent_report_quarantine",
                   "rating_aggregates", "incidents", "reliable_rankings")


class SigningError(RuntimeError):
    pass


class AlreadySignedError(SigningError):
    pass


@dataclass(frozen=True)
class SignedDay:
    day: dt.date
    root: str
    previous_root: str
    files: int
    path: Path


def read_root(lake: LakePaths, day: dt.date) -> dict[str, Any]:
    return json.loads(lake.root_file(day).read_text())


def chain_start(lake: LakePaths) -> dt.date | None:
    days = lake.days_with_data()
    return days[0] if days else None


def days_to_sign(lake: LakePaths, through: dt.date) -> list[dt.date]:
    """The unsigned days up to and including `through`, in chain order."""
    if lake.root_file(through).exists():
        raise AlreadySignedError(f"day {through} is already signed ({lake.root_file(through)}); "
                                 "a signed day is never signed again")
    last = last_signed_day(lake)
    if last is not None and through < last:
        raise SigningError(f"day {through} precedes the last signed day {last} and has no root; "
                           "signed history is closed")
    first = last + dt.timedelta(days=1) if last else chain_start(lake)
    if first is None or first > through:
        first = through
    return [first + dt.timedelta(days=i) for i in range((through - first).days + 1)]


def sign_through(lake: LakePaths, through: dt.date, key_path: Path, now: dt.datetime | None = None,
                 refresh: Callable[[dt.date], Any] | None = None) -> list[SignedDay]:
    """Sign every unsigned day up to `through`, oldest first. Refuses, before signing anything, when a
    day has not ended, was never built, or `through` is already signed. `refresh(day)` runs just before a
    day is hashed, once every earlier day is signed: it rebuilds the day's tables if they are not what
    its (now final) inputs say (curated.day.refresh_day)."""
    now = now or dt.datetime.now(dt.UTC)
    pending = days_to_sign(lake, through)
    for day in pending:
        ends = dt.datetime.combine(day + dt.timedelta(days=1), dt.time(), dt.UTC)
        if now < ends:
            raise SigningError(f"day {day} has not ended (it ends at {ends.isoformat()}); "
                               "a day is signed only after it has ended")
        missing = [t for t in REQUIRED_TABLES if not lake.curated_file(t, day).is_file()]
        if missing and (refresh is None or not lake.curated_file("daily_status", day).is_file()):
            raise SigningError(f"day {day} cannot be signed: {', '.join(missing)} not materialised for it; "
                               f"backfill {day} first (signing keeps chain order)")
    key = load_private_key(key_path, lake)
    publish_public_key(lake, key)
    last = last_signed_day(lake)
    previous_root = read_root(lake, last)["root"] if last else ""
    signed: list[SignedDay] = []
    for day in pending:
        if refresh is not None:
            refresh(day)
        lines = day_lines(lake, day)
        root = compute_root(previous_root, lines)
        doc = {
            "day": day.isoformat(),
            "method": ROOT_METHOD,
            "previous_day": last.isoformat() if last else None,
            "previous_root": previous_root,
            "root": root,
            "signature": sign_root(key, root),
            "signed_at": now.astimezone(dt.UTC).isoformat(timespec="seconds"),
            "lines": lines,
        }
        path = lake.root_file(day)
        if path.exists():  # a concurrent signer got here first
            raise AlreadySignedError(f"day {day} was signed by someone else meanwhile")
        write_bytes_atomic(path, (json.dumps(doc, indent=2) + "\n").encode())
        signed.append(SignedDay(day, root, previous_root, len(lines), path))
        previous_root, last = root, day
    return signed
