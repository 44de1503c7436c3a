"""The one verifier: `sevenmaps verify`, the Dagster check on `daily_root` and `daily_root` itself call it.

It recomputes every signed day from its files, checks the chain and every signature against a key the
user trusts (never the lake's own copy, unless nothing else is given, and then it says so), checks the
log (checkpoint signature, tiles, entries = the signed lines, each root's checkpoint a prefix of the
latest), witness cosignatures against a quorum, and consistency with a checkpoint remembered from an
earlier run (a fork otherwise). It never raises on bad input: each problem names the day and file
(docs/verifying.md)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import NamedTuple

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from ..lake.parquet_io import write_bytes_atomic
from ..lake.paths import LakePaths
from .capped import MAX_KEY_BYTES, Unreadable, read_capped, read_text_capped
from .keys import SigningKeyError, read_trusted_key, signature_valid
from .manifest import compute_root, day_lines, days_lines
from .merkle import HashTree
from .note import valid_name, verifier_for
from .report import Code, Problem, Trust, VerifyReport
from .root_docs import MAX_ROOT_BYTES, RootDoc, diff_lines, parse_root_doc, read_root_docs
from .statement import check_statement
from .stray import stray_paths, stray_roots, uncovered_in_day
from .tiles import load_entries, tree_of
from .verify_log import check_log, check_state, check_tile_files


def check_chain(report: VerifyReport, docs: list[RootDoc], public: Ed25519PublicKey | None,
                first_previous: tuple[dt.date | None, str] | None = None) -> None:
    """Chain links, roots from lines, signatures, signed only after the day ended. `first_previous` is what
    the first doc must chain to (None: take it as written, e.g. a snapshot that starts mid-history)."""
    previous = first_previous
    statements = False  # a root with a statement seen before this one in the chain
    for doc in docs:
        if previous is not None:
            expected_day, expected_root = previous
            if expected_day is not None and doc.day != expected_day + dt.timedelta(days=1):
                gap = expected_day + dt.timedelta(days=1)
                unreadable = report.found_on(gap, Code.ROOT_UNREADABLE)
                report.add(Code.CHAIN_BROKEN, f"broken chain: no root for {gap} (roots/day={gap}.json "
                           f"{'cannot be read: above' if unreadable else 'missing'})", doc.day, doc.rel)
            elif doc.previous_day != expected_day or doc.previous_root != expected_root:
                report.add(Code.CHAIN_BROKEN,
                           f"broken chain: previous_root does not match the root of {expected_day}", doc.day, doc.rel)
        if doc.signed_at < dt.datetime.combine(doc.day + dt.timedelta(days=1), dt.time(), dt.UTC):
            report.add(Code.SIGNED_TOO_EARLY,
                       f"signed at {doc.signed_at.isoformat()}, before the day ended", doc.day, doc.rel)
        if compute_root(doc.previous_root, doc.lines) != doc.root:
            report.add(Code.ROOT_NOT_ITS_LINES, f"root does not match its lines in {doc.rel}", doc.day, doc.rel)
        elif public is not None and not signature_valid(public, doc.root, doc.signature):
            report.add(Code.BAD_SIGNATURE,
                       f"bad signature in {doc.rel}: not signed by the trusted key", doc.day, doc.rel)
        elif public is not None:
            _check_statement(report, doc, public, statements)
        statements = statements or "statement" in doc.raw
        previous = (doc.day, doc.root)


# 7maps-roots-1.1 (docs/changelog.md) was first signed on 2026-12-01: a day is signed after it ends, so a root of
# 1.0, which carries no signed statement, is possible only for a day before that, and only before every 1.1 root.
ROOTS_1_0_UNTIL = dt.date(2026, 11, 30)


def _check_statement(report: VerifyReport, doc: RootDoc, public: Ed25519PublicKey,
                     after_statements: bool = False) -> None:
    method = doc.raw.get("method")
    if method == "7maps-roots-1.0" and "statement" not in doc.raw:
        if doc.day > ROOTS_1_0_UNTIL or after_statements:
            report.add(Code.BAD_STATEMENT, f"a root of 7maps-roots-1.0, without a statement, for a day "
                       f"{'after a root with one' if after_statements else 'signed only since 7maps-roots-1.1'}: "
                       f"a root does not go back to 1.0 ({doc.rel})", doc.day, doc.rel)
            return
        report.legacy_days.append(doc.day)
        return
    name = (doc.log or {}).get("origin")
    if not isinstance(name, str) or not valid_name(name):
        report.add(Code.BAD_STATEMENT, "the root's log record names no valid log origin", doc.day, doc.rel)
        return
    if not isinstance((doc.log or {}).get("checkpoint"), str):  # what the signer saw the log at, then
        report.add(Code.BAD_STATEMENT, "the root's log record has no checkpoint (a root with a statement "
                   "records the one it was signed into)", doc.day, doc.rel)
        return
    problem = check_statement(doc.raw, verifier_for(name, public))
    if problem:
        report.add(Code.BAD_STATEMENT, f"{problem} ({doc.rel})", doc.day, doc.rel)


def trust_from_state(state_path: Path | None) -> Trust | None:
    """A key remembered by an earlier run, to verify against when the user gives none."""
    if state_path is None or not state_path.is_file():
        return None
    try:
        vkey = json.loads(read_text_capped(state_path, MAX_KEY_BYTES, follow_links=True))["vkey"]
    except (Unreadable, ValueError, KeyError, TypeError, RecursionError):
        return None
    try:
        trust = Trust.from_vkey(vkey)
    except SigningKeyError:
        return None
    trust.source = f"the key remembered in {state_path}"
    return trust


# Whose copy of the key sits beside the files checked: a lake publishes one, a snapshot carries one (helper-93: a
# snapshot's notes spoke of the lake's).
class KeyCopy(NamedTuple):
    own: str  # verified against it when no key is given
    copy: str  # compared with the key given
    holder: str  # whoever can write it can replace the key
    rel: str  # where it sits


LAKE_KEY = KeyCopy("the lake's own public key", "the lake's published key", "the lake", ".well-known/7maps.json")
SNAPSHOT_KEY = KeyCopy("the snapshot's own public key", "the snapshot's copy of the key", "the snapshot", "7maps.json")


def resolve_trust(report: VerifyReport, lake_key: Path | None, trust: Trust | None,
                  state_path: Path | None, whose: KeyCopy = LAKE_KEY) -> Trust | None:
    if trust is None:
        trust = trust_from_state(state_path)
    rel = whose.rel
    if trust is None:
        trust = Trust()
        if lake_key is None or not lake_key.is_file():
            report.add(Code.NO_KEY, "no public key: pass --public-key FILE or --vkey KEY", None, rel)
            return None
        try:
            trust.public = read_trusted_key(lake_key)
        except SigningKeyError as exc:
            report.add(Code.KEY_UNREADABLE, f"public key: {exc}", None, rel)
            return None
        report.notes.append(f"verified against {whose.own}, which whoever can write {whose.holder} can replace: "
                            "pin one with --public-key FILE, --vkey KEY or --state FILE")
        trust.source = f"{whose.own} ({whose.rel}; not pinned: pass --public-key or --vkey)"
    else:
        if trust.witnesses and not trust.quorum:
            trust.quorum = len(trust.witnesses)
        _compare_published(report, lake_key, trust, whose)
    report.trusted = trust.source
    return trust


def _compare_published(report: VerifyReport, lake_key: Path | None, trust: Trust,
                       whose: KeyCopy) -> None:
    """A note when the key the lake publishes is not the one trusted: readers who take the lake's copy would
    check against another key (nothing signs that copy, so it is a note, not a problem)."""
    if lake_key is None or trust.public is None or not lake_key.is_file():
        return
    try:
        published = read_trusted_key(lake_key)
    except SigningKeyError as exc:
        report.notes.append(f"{whose.copy} cannot be read ({exc}): readers who take it cannot check")
        return
    raw = Encoding.Raw
    if published.public_bytes(raw, PublicFormat.Raw) != trust.public.public_bytes(raw, PublicFormat.Raw):
        report.notes.append(f"{whose.copy} ({whose.rel}) is not the key you trust: readers who take that copy "
                            "check against another key")


def verify_lake(lake: LakePaths, trust: Trust | None = None, state_path: Path | None = None,
                workers: int | None = None, now: float | None = None) -> VerifyReport:
    """Every signed day of the lake, its files, its log; against `trust` (or a remembered key, or, saying
    so, the lake's own published key). The files of all days are hashed `workers` at once (default: one
    per core); the report is the same whatever the number."""
    report = VerifyReport()
    if not lake.root.is_dir():
        report.add(Code.NO_LAKE, f"no lake at {lake.root}")
        return report
    docs = read_root_docs(report, lake.roots_dir, lake.root)
    if not docs and not report.problems:
        return report
    trust = resolve_trust(report, lake.well_known, trust, state_path)
    if trust is None:
        return report
    for doc, actual in zip(docs, days_lines(lake, [doc.day for doc in docs], workers), strict=True):
        if compute_root(doc.previous_root, doc.lines) == doc.root:  # else its lines were edited: the chain says so,
            for code, what, path in diff_lines(doc.lines, actual):  # and a diff would blame the files
                report.add(code, what, doc.day, path)
        report.files_checked += len(doc.lines)
    for day, rel, why in stray_paths(lake, {doc.day for doc in docs}, now):  # `now`: the clock (tests inject it)
        report.add(Code.STRAY, f"{why}: {rel}", day, rel)
    for rel, why in stray_roots(lake.roots_dir, lake.root):
        report.add(Code.STRAY, f"{why}: {rel}", None, rel)
    check_chain(report, docs, trust.public, first_previous=(None, ""))
    tree, _ = check_log(report, lake.log_dir, docs, trust.public, trust, complete=True)
    if tree is not None and not report.behind:  # every tile file as the entries give it, as `log check` does
        tiles_as_entries_give(report, lake.log_dir, tree)
    new_state = check_state(report, state_path, trust, tree, lake.log_dir) if state_path else None
    finish_report(report, docs)
    if report.ok and state_path and new_state:
        write_bytes_atomic(state_path, (json.dumps(new_state, indent=2) + "\n").encode())
    return report


def finish_report(report: VerifyReport, docs: list[RootDoc]) -> None:
    """Problems in day order (a stable sort: within a day, in the order found; the log's last); the days
    verified are those before the first bad one."""
    report.problems.sort(key=lambda p: (p.day is None, p.day or dt.date.min))
    first_bad = report.bad_day
    report.days_verified = [d.day for d in docs if first_bad is None or d.day < first_bad]
    if docs and report.ok:
        report.latest_root = docs[-1].root


def verify_days(lake: LakePaths, days: list[dt.date], public: Ed25519PublicKey) -> list[Problem]:
    """The checks one signed day must pass, for the Dagster check and `daily_root`: its root parses, chains
    to the day before, matches its lines and the files now, and carries a valid signature by `public`."""
    report = VerifyReport()
    for day in days:
        rel = lake.root_file(day).relative_to(lake.root).as_posix()
        docs = []
        for d in (day - dt.timedelta(days=1), day):
            path = lake.root_file(d)
            if not path.exists() and not path.is_symlink():
                continue
            try:
                data = read_capped(path, MAX_ROOT_BYTES)
            except Unreadable as exc:
                report.add(Code.ROOT_UNREADABLE, f"root file unreadable: {path.relative_to(lake.root).as_posix()} "
                           f"({exc})", d, rel)
                continue
            doc, problem = parse_root_doc(data, d, path.relative_to(lake.root).as_posix())
            if doc is None:
                report.add(Code.ROOT_UNREADABLE, f"root file unreadable: {problem}", d, rel)
            else:
                docs.append(doc)
        mine = [doc for doc in docs if doc.day == day]
        if not mine:
            if not report.found_on(day):
                report.add(Code.NOT_SIGNED, "not signed", day, rel)
            continue
        doc = mine[0]
        before = [d for d in docs if d.day < day]
        first_previous = (before[0].day, before[0].root) if before else None
        if doc.previous_day is not None and not before:
            report.add(Code.CHAIN_BROKEN, f"chains to {doc.previous_day}, whose root is missing", day, rel)
        check_chain(report, [doc], public, first_previous=first_previous)
        for code, what, _path in diff_lines(doc.lines, day_lines(lake, day)):
            report.add(code, what, day, rel)
        for stray, why in uncovered_in_day(lake, day):
            report.add(Code.STRAY, f"{why}: {stray}", day, stray)
    return report.problems


def check_log_only(lake: LakePaths, trust: Trust | None = None) -> tuple[VerifyReport, int]:
    """`sevenmaps log check`: the checkpoint's signature, every tile and entry bundle re-derived from the
    entries, and the entries against the signed roots (like Tessera's fsck)."""
    report = VerifyReport()
    docs = read_root_docs(report, lake.roots_dir, lake.root)
    trust = resolve_trust(report, lake.well_known, trust, None)
    if trust is None:
        return report, 0
    tree, checkpoint = check_log(report, lake.log_dir, docs, trust.public, trust, complete=True)
    compared = 0
    if report.behind:  # tiles a stopped signer wrote past the checkpoint are what the roots say, or a problem
        said = [line.encode() for doc in docs for line in doc.lines]
        compared = check_tile_files(report, lake.log_dir, tree_of(said), said)
    elif tree is not None:
        compared = tiles_as_entries_give(report, lake.log_dir, tree)
    finish_report(report, docs)
    return report, compared


def tiles_as_entries_give(report: VerifyReport, log_dir: Path, tree: HashTree) -> int:
    """Every file under log/tile/ against what the log's entries (that `tree` was built from) give."""
    entries, _ = load_entries(log_dir, tree.size)
    return check_tile_files(report, log_dir, tree, entries or [])
