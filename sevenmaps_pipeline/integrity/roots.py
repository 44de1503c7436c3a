"""Signing days: chain order, never twice, never before the day has ended."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import os
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..curated.day import DAY_TABLES
from ..lake.parquet_io import last_signed_day, remove_stale_temps
from ..lake.paths import LakePaths, folder_day
from ..rules.methods import ROOT_METHOD
from .keys import load_private_key, publish_public_key, sign_root
from .log import (
    ORIGIN_ENV,
    LogError,
    LogState,
    Prepared,
    configured_origin,
    locked,
    log_verifier,
    prepare,
    publish,
    publish_vkey,
    read_state,
)
from .manifest import compute_root, day_folders, day_lines
from .statement import sign_statement
from .stray import sweep_crashed_writes, uncovered_in_day, within_lake
from .witness import WitnessConfig, ask_witness

# A day is signed only when the tables the map builds for it exist (a signed day can never gain one); the
# quarantine is written only when something was refused.
REQUIRED_TABLES = tuple(t for t in DAY_TABLES if t != "quarantine")


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
    tree_size: int = 0
    cosignatures: int = 0
    problems: list[str] = field(default_factory=list)


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


def signed_days(lake: LakePaths) -> list[dt.date]:
    if not lake.roots_dir.is_dir():
        return []
    # a root document's name, of a date (`day=D.v2.json`, `day=2026-13-40.json` are strays: integrity/stray.py)
    return sorted(d for p in lake.roots_dir.glob("day=*.json") if (d := folder_day(p.name[:-5])) is not None)


def _ask_witnesses(prepared: Prepared, witnesses: Sequence[WitnessConfig]) -> tuple[list[str], list[str]]:
    lines, problems = [], []
    for witness in witnesses:
        line, problem = ask_witness(witness, prepared.note_text, prepared.checkpoint, prepared.tree,
                                    prepared.old_size)
        if line:
            lines.append(line)
        else:
            problems.append(problem or f"witness {witness.verifier.name}: no cosignature")
    return lines, problems


def _append_to_log(lake: LakePaths, state: LogState, lines: list[str], key, witnesses) -> tuple[LogState, list[str]]:
    prepared = prepare(state, lines, key)
    cosignatures, problems = _ask_witnesses(prepared, witnesses)
    published = publish(lake, prepared, cosignatures)
    return LogState(prepared.origin, prepared.entries, prepared.tree, published), problems


@dataclass(frozen=True)
class LogSync:
    """What bringing the log up to the signed roots did."""

    state: LogState
    days: list[dt.date]  # signed days whose lines were appended now (the log was behind its roots)
    problems: list[str]  # witnesses that did not cosign


def sync_log(lake: LakePaths, key, witnesses: Sequence[WitnessConfig] = ()) -> LogSync:
    """Bring the log up to the signed roots: every signed day's lines, in chain order, must be the log's
    entries; days signed but not yet logged (a lake signed before the log existed, or a signer that died
    or hit a full disk between its root and its checkpoint: the log is *behind*, docs/verifying.md) are
    appended now, one checkpoint per day as the signer would have published it. Idempotent. A log that
    disagrees with the roots is refused."""
    origin = configured_origin()
    state = read_state(lake)
    if state.checkpoint_bytes is None:
        state = LogState(origin, [], state.tree, None)
    at = 0
    problems: list[str] = []
    appended: list[dt.date] = []
    for day in signed_days(lake):
        lines = [line.encode() for line in read_root(lake, day)["lines"]]
        if at + len(lines) <= state.size:
            if state.entries[at:at + len(lines)] != lines:
                raise LogError(f"the log's entries {at}..{at + len(lines) - 1} are not the signed lines of {day}; "
                               "run `sevenmaps log check`")
        elif at < state.size:
            raise LogError(f"the log ends inside the lines of {day} (size {state.size}); run `sevenmaps log check`")
        else:
            text = [line.decode() for line in lines]
            # A signer that died after linking the root may have died before making the day's files read-only too.
            try:
                make_read_only(lake, text)
            except OSError as exc:  # never in the way of the log's repair (helper-92)
                problems.append(f"{day}'s files could not be made read-only ({exc})")
            state, trouble = _append_to_log(lake, state, text, key, witnesses)
            problems += trouble
            appended.append(day)
        at += len(lines)
    if at < state.size:
        raise LogError(f"the log holds {state.size - at} entries beyond the signed roots; run `sevenmaps log check`")
    return LogSync(state, appended, problems)


_LOG = logging.getLogger(__name__)

# The temp names of lake.parquet_io.write_bytes_atomic and _create_exclusive: `.<name>.<uuid4 hex>.tmp`.
TEMP_NAME = re.compile(r"^\..+\.[0-9a-f]{32}\.tmp$")


def remove_leftover_temps(lake: LakePaths) -> list[Path]:
    """The temp files a killed signer left in roots/ and log/ (never a root, tile or checkpoint: those
    appear only by rename or link, docs/operations.md "Interrupted signing"), and a killed build's in the day
    folders (logged). Call with the signing lock held; log/ is cleaned under its checkpoint lock too, the one
    every publisher holds while writing."""
    swept = sweep_crashed_writes(lake)  # a crashed build's, in any day's folder (integrity/stray.py)
    if swept:
        _LOG.warning("removed %d crashed writes' leftovers from day folders: %s", len(swept), ", ".join(swept[:10]))
    removed = []
    if lake.roots_dir.is_dir():
        removed += [p for p in lake.roots_dir.iterdir() if TEMP_NAME.match(p.name) and p.is_file()]
    if lake.log_dir.is_dir():
        with locked(lake.log_dir / ".checkpoint.lock"):
            removed += [p for p in lake.log_dir.rglob(".*.tmp") if TEMP_NAME.match(p.name) and p.is_file()]
    for path in removed:
        path.unlink(missing_ok=True)
    return removed


def complete_signing(lake: LakePaths, key_path: Path, witnesses: Sequence[WitnessConfig] = ()) -> LogSync:
    """Finish what an interrupted signer left: its temp files removed, the signed days the log lacks
    appended (`sevenmaps log sync`, and `daily_root` asked for a day that is already signed)."""
    with locked(lake.roots_dir / ".signing.lock"):
        remove_leftover_temps(lake)
        key = load_private_key(key_path, lake)
        synced = sync_log(lake, key, witnesses)
        publish_keys(lake, key, synced.state.origin)
    return synced


def publish_keys(lake: LakePaths, key, origin: str) -> None:
    """The public key and the log's vkey, in `.well-known/7maps.json` and `log/vkey`."""
    verifier = log_verifier(key, origin)
    publish_public_key(lake, key, origin, verifier.vkey)
    publish_vkey(lake, verifier)


# A signed day's files and its root are made read-only: a guard against an accidental in-place write (an
# editor, `open(path, 'r+b')`). Writers replace files by rename, which the mode does not stop, and root
# ignores mode bits: the frozen-day check (lake/parquet_io.py) and `sevenmaps verify` stay the real guards
# (docs/verifying.md "Read-only signed files").
SIGNED_MODE = 0o444


def make_read_only(lake: LakePaths, lines: Sequence[str]) -> None:
    """chmod 0444 every file the lines name (one that has gone meanwhile is for `verify` to name), never through a
    link (chmod follows one: it may name a file outside the lake, the signing key's)."""
    for line in lines:
        path = lake.root / line[66:]
        with contextlib.suppress(FileNotFoundError):
            if within_lake(lake, path):  # a link anywhere below the root: signing refuses the day (stray.py)
                os.chmod(path, SIGNED_MODE)


def _create_exclusive(path: Path, data: bytes) -> None:
    """Write a new read-only file atomically, failing if it exists (a concurrent signer cannot overwrite
    a root)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{uuid.uuid4().hex}.tmp"
    try:  # the temp is removed whatever happens, a full disk half-way through the write included
        with open(tmp, "xb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, SIGNED_MODE)
        os.link(tmp, path)
    except FileExistsError:
        raise AlreadySignedError(f"{path.name} was signed by someone else meanwhile") from None
    finally:
        tmp.unlink(missing_ok=True)


def _check_signable(lake: LakePaths, day: dt.date, now: dt.datetime) -> None:
    """SigningError unless the day has ended, every table it publishes is built, and its folders hold nothing its
    root could not cover (a crashed write's leftovers are swept first, as the writers sweep them)."""
    ends = dt.datetime.combine(day + dt.timedelta(days=1), dt.time(), dt.UTC)
    if now < ends:
        raise SigningError(f"day {day} has not ended (it ends at {ends.isoformat()}); "
                           "a day is signed only after it has ended")
    missing = [t for t in REQUIRED_TABLES if not lake.curated_file(t, day).is_file()]
    if missing:
        raise SigningError(f"day {day} cannot be signed: {', '.join(missing)} not materialised for it; "
                           f"backfill {day} first (signing keeps chain order)")
    for folder in day_folders(lake, day):
        remove_stale_temps(folder)
    stray = uncovered_in_day(lake, day)
    if stray:  # its root could not cover them, and readers of the folder would read them as signed
        more = f", and {len(stray) - 1} more" if len(stray) > 1 else ""
        raise SigningError(f"day {day} cannot be signed: its folders hold what no root can cover "
                           f"({stray[0][1]}: {stray[0][0]}{more}); remove it (a write still running, or one "
                           "that crashed) and sign again")


def sign_through(lake: LakePaths, through: dt.date, key_path: Path, now: dt.datetime | None = None,
                 witnesses: Sequence[WitnessConfig] = ()) -> list[SignedDay]:
    """Sign every unsigned day up to `through`, oldest first, and append each day's lines to the log with a
    new checkpoint (cosigned by the configured witnesses that answer). Refuses, before signing anything,
    when a day has not ended, was never built, or `through` is already signed and logged. It never rebuilds
    a day: the sign asset first refuses days the map job has not built and checked (defs/integrity_assets.py,
    docs/operations.md "When a day is stale"). One signer at a time per lake.

    Signing a day is two writes, its root and then the log's checkpoint. A signer killed (or out of disk)
    between them leaves the log behind its roots; the next call completes it before anything else (its
    temp files removed, the missing days appended), and asked for that very day it completes it and
    returns nothing new rather than refusing (docs/operations.md "Interrupted signing")."""
    now = now or dt.datetime.now(dt.UTC)
    with locked(lake.roots_dir / ".signing.lock"):
        remove_leftover_temps(lake)
        if lake.root_file(through).exists():
            key = load_private_key(key_path, lake)
            synced = sync_log(lake, key, witnesses)
            if not synced.days:
                days_to_sign(lake, through)  # raises AlreadySignedError, naming the day
            publish_keys(lake, key, synced.state.origin)
            return []
        pending = days_to_sign(lake, through)
        for day in pending:
            _check_signable(lake, day, now)
        key = load_private_key(key_path, lake)
        origin = configured_origin()
        synced = sync_log(lake, key, witnesses)
        state, witness_problems = synced.state, synced.problems
        publish_keys(lake, key, state.origin)
        if state.origin != origin:
            witness_problems.append(f"the log keeps its origin {state.origin!r} ({ORIGIN_ENV} says {origin!r})")
        last = last_signed_day(lake)
        previous_root = read_root(lake, last)["root"] if last else ""
        signed: list[SignedDay] = []
        for day in pending:
            lines = day_lines(lake, day)
            root = compute_root(previous_root, lines)
            prepared = prepare(state, lines, key)
            doc = {
                "day": day.isoformat(),
                "method": ROOT_METHOD,
                "previous_day": last.isoformat() if last else None,
                "previous_root": previous_root,
                "root": root,
                "signature": sign_root(key, root),
                "signed_at": now.astimezone(dt.UTC).isoformat(timespec="seconds"),
                "lines": lines,
                "log": {"origin": prepared.origin, "first_index": prepared.first_index,
                        "tree_size": prepared.checkpoint.size, "checkpoint": prepared.note_text},
            }
            doc["statement"] = sign_statement(doc, prepared.origin, key)
            path = lake.root_file(day)
            _create_exclusive(path, (json.dumps(doc, indent=2) + "\n").encode())
            make_read_only(lake, lines)
            cosignatures, problems = _ask_witnesses(prepared, witnesses)
            try:
                published = publish(lake, prepared, cosignatures)
            except OSError as exc:  # a full disk: the root stands, the log is behind until the next signing
                raise SigningError(f"day {day} is signed ({path.name}) but its log checkpoint could not be "
                                   f"written ({exc.strerror or exc}): the log is behind its roots; "
                                   "`sevenmaps log sync` or the next signing appends it") from exc
            state = LogState(prepared.origin, prepared.entries, prepared.tree, published)
            signed.append(SignedDay(day, root, previous_root, len(lines), path, prepared.checkpoint.size,
                                    len(cosignatures), witness_problems + problems))
            witness_problems = []
            previous_root, last = root, day
    return signed
