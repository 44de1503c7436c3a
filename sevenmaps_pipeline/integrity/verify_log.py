"""The transparency log against the signed roots (docs/verifying.md): its checkpoint and witnesses, its tiles
and entries, each root's recorded checkpoint, and consistency with a checkpoint the user verified before
(a fork otherwise); a log that is only behind its roots is named as such."""

from __future__ import annotations

import base64
import binascii
import contextlib
import datetime as dt
import json
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from .capped import MAX_KEY_BYTES, Unreadable, read_capped, read_text_capped
from .checkpoint import Checkpoint, open_checkpoint, parse_checkpoint_text
from .merkle import HASH_SIZE, HashTree, leaf_hash, verify_consistency
from .note import MAX_NOTE_BYTES, Verifier, parse_note, valid_name, verifier_for
from .report import Code, Trust, VerifyReport
from .root_docs import RootDoc
from .tiles import WIDTH, bundle_bytes, expected_files, load_entries, parse_tile_path, tile_bytes, tree_of


def check_log(report: VerifyReport, log_dir: Path, docs: list[RootDoc], public: Ed25519PublicKey | None,
              trust: Trust, complete: bool) -> tuple[HashTree | None, Checkpoint | None]:
    """The checkpoint (signed by the trusted key under the log's origin), the tiles and entries against it,
    the entries against the signed lines (all of them when `complete`, else the docs' own ranges), each
    root's recorded checkpoint a prefix of the latest, and the witness quorum.

    With `complete` (a lake), signed days wholly past the checkpoint are one BEHIND problem, not a fork,
    when every entry the log holds is the line the roots say and each such day's recorded checkpoint is
    the tree of the roots' lines: a signer stopped between a root and its checkpoint (docs/verifying.md,
    "Behind or forked"). No checkpoint at all is the empty log, behind every signed day."""
    path = log_dir / "checkpoint"
    if not path.is_file():
        if not complete or not docs:
            report.add(Code.NO_CHECKPOINT,
                       "no log/checkpoint: the signed days are not in the transparency log", None, "log/checkpoint")
            return None, None
        named = [(d.log or {}).get("origin") for d in docs]
        origin = trust.log_name or next((n for n in named if isinstance(n, str) and valid_name(n)), None)
        verifier = verifier_for(origin, public) if public is not None and origin else None
        _check_entries(report, docs, [], HashTree(), None, verifier, origin, complete)
        return None, None
    with open(path, "rb") as fh:  # a note is at most MAX_NOTE_BYTES: never read a larger file whole
        data = fh.read(MAX_NOTE_BYTES + 1)
    note, problem = parse_note(data)
    text_cp, problem = parse_checkpoint_text(note.text) if note else (None, problem)
    if text_cp is None:
        report.add(Code.CHECKPOINT_MALFORMED, f"log/checkpoint is malformed: {problem}", None, "log/checkpoint")
        return None, None
    origin = trust.log_name or text_cp.origin
    if trust.log_name and text_cp.origin != trust.log_name:
        report.add(Code.CHECKPOINT_WRONG_ORIGIN,
                   f"log/checkpoint has origin {text_cp.origin!r}, the trusted vkey names {trust.log_name!r}",
                   None, "log/checkpoint")
        return None, None
    verifier = verifier_for(origin, public) if public is not None and origin else None
    checkpoint = text_cp
    if verifier is not None:
        opened, problem = open_checkpoint(data, verifier, origin, trust.witnesses)
        if opened is None:
            report.add(Code.CHECKPOINT_INVALID, f"log/checkpoint: {problem}", None, "log/checkpoint")
            return None, None
        checkpoint, opened_note = opened
        report.cosigned_by = [v.name for v in opened_note.verified if v in trust.witnesses]
        if trust.quorum and len(report.cosigned_by) < trust.quorum:
            report.add(Code.QUORUM_UNMET,
                       f"log/checkpoint carries {len(report.cosigned_by)} valid witness cosignature(s); "
                       f"the quorum is {trust.quorum}", None, "log/checkpoint")
    report.checkpoint = checkpoint
    entries, problem = load_entries(log_dir, checkpoint.size)
    if entries is None:
        report.add(Code.LOG_UNREADABLE, f"the log cannot be read: {problem}", None, "log/tile")
        return None, checkpoint
    tree = tree_of(entries)
    if tree.root() != checkpoint.root:
        report.add(Code.ENTRIES_NOT_CHECKPOINT,
                   "the log's entries do not hash to the checkpoint's root", None, "log/tile/entries")
        return None, checkpoint
    for rel, expected in expected_files(tree, entries, checkpoint.size).items():
        if not rel.startswith("tile/entries"):
            tile = log_dir / rel
            if not tile.is_file():
                full = log_dir / rel.split(".p/")[0]
                whole = _hash_tile(full) if full.is_file() else None
                if whole is not None and whole[:len(expected)] == expected:
                    continue
                report.add(Code.TILE_MISSING, f"tile log/{rel} is missing", None, f"log/{rel}")
            elif _hash_tile(tile) != expected:
                report.add(Code.TILE_WRONG, f"tile log/{rel} does not match the entries", None, f"log/{rel}")
    _check_entries(report, docs, entries, tree, checkpoint, verifier, origin, complete)
    return tree, checkpoint


def _hash_tile(path: Path) -> bytes | None:
    """A hash tile's bytes, None when it is no tile: never more than a full tile's (helper-93: a 64 GB sparse
    tile was read whole)."""
    try:
        return read_capped(path, WIDTH * HASH_SIZE)
    except Unreadable:
        return None


def _check_entries(report: VerifyReport, docs: list[RootDoc], entries: list[bytes], tree: HashTree,
                   checkpoint: Checkpoint | None, verifier: Verifier | None, origin: str | None,
                   complete: bool) -> None:
    """Each day's lines against the log's entries, each root's recorded checkpoint against the log, and
    (complete) whether the log holds exactly the roots' lines or is only behind them."""
    size = checkpoint.size if checkpoint else 0
    latest = checkpoint.describe() if checkpoint else "no checkpoint"
    behind: list[RootDoc] = []
    ahead: HashTree | None = None  # the tree the roots say, grown past the checkpoint by the days behind
    at = 0
    for doc in docs:
        record = doc.log or {}
        first = _first_index(report, doc, entries, at, complete)
        if first is None:
            continue
        if complete and first != at:
            report.add(Code.LINES_OUT_OF_PLACE,
                       f"the day's lines start at log entry {first}, expected {at}", doc.day, doc.rel)
        end = first + len(doc.lines)
        wholly_past = complete and first == at >= size and end > size
        if wholly_past:
            behind.append(doc)
            ahead = ahead or tree.copy()
            for line in doc.lines:
                ahead.append(leaf_hash(line.encode()))
        elif end > size:
            report.add(Code.NOT_IN_LOG,
                       f"signed but not in the log (log size {size}, the day ends at entry {end})", doc.day, doc.rel)
        elif [e.decode(errors="replace") for e in entries[first:end]] != doc.lines:
            report.add(Code.ENTRIES_NOT_LINES,
                       f"log entries {first}..{end - 1} are not the day's signed lines", doc.day, doc.rel)
        at = end
        recorded = record.get("checkpoint")
        if isinstance(recorded, str) and verifier is not None:
            _check_root_checkpoint(report, doc, recorded, verifier, origin,
                                   ahead if wholly_past else None, tree, size, latest)
    if behind:
        days = f"{behind[0].day}" if len(behind) == 1 else f"{behind[0].day} .. {behind[-1].day}"
        report.add(Code.LOG_BEHIND, ("no log/checkpoint: " if checkpoint is None else "")
                   + f"the log is behind its roots: {len(behind)} signed day(s) ({days}, entries {size}..{at - 1}) "
                   f"are not in it yet (log size {size}); a signer stopped between a root and its checkpoint. "
                   "Run `sevenmaps log sync` (or the next signing does it)", None, "log/checkpoint")
    elif complete and at != size and not report.problems:
        report.add(Code.LOG_AHEAD, f"the log holds {size - at} entries beyond the signed roots", None, "log/checkpoint")


def _first_index(report: VerifyReport, doc: RootDoc, entries: list[bytes], at: int, complete: bool) -> int | None:
    """The log index of the day's first line: recorded in its root, or (a root signed before the log
    existed) where the log holds it; None, and the problem added, when the log does not hold it."""
    first = (doc.log or {}).get("first_index")
    if isinstance(first, int) and not isinstance(first, bool):
        return first
    if complete or not doc.lines:
        return at
    if doc.lines[0].encode() in entries:
        return entries.index(doc.lines[0].encode())
    report.add(Code.LINES_NOT_IN_LOG, "the day's lines are not in the log", doc.day, doc.rel)
    return None


def _check_root_checkpoint(report: VerifyReport, doc: RootDoc, recorded: str, verifier: Verifier,
                           origin: str | None, ahead: HashTree | None, tree: HashTree, size: int,
                           latest: str) -> None:
    """The checkpoint a root recorded: a valid note, and a prefix of the latest checkpoint's tree (or, for a
    day the log is behind on, of the tree the roots' lines make: `ahead`)."""
    opened, problem = open_checkpoint(recorded.encode(), verifier, origin)
    said = (doc.log or {}).get("tree_size")
    if opened is None:
        report.add(Code.ROOT_CHECKPOINT_INVALID, f"the root's log checkpoint: {problem}", doc.day, doc.rel)
    elif ahead is not None and (opened[0].size > ahead.size or ahead.root(opened[0].size) != opened[0].root):
        report.add(Code.OTHER_HISTORY,
                   f"the root's log checkpoint ({opened[0].describe()}) is not the tree of the signed "
                   "lines: the key signed another history", doc.day, doc.rel)
    elif ahead is None and (opened[0].size > size or tree.root(opened[0].size) != opened[0].root):
        report.add(Code.NOT_A_PREFIX,
                   f"the root's log checkpoint ({opened[0].describe()}) is not a prefix of the latest "
                   f"({latest})", doc.day, doc.rel)
    elif said is not None and opened[0].size != said:  # another day's checkpoint of this log in its place
        report.add(Code.ROOT_CHECKPOINT_INVALID, f"the root's log checkpoint is of size {opened[0].size}, where its "
                   f"signed record says tree_size {said}", doc.day, doc.rel)


# --- remembered state: fork detection -----------------------------------------------------------------


def check_state(report: VerifyReport, state_path: Path, trust: Trust, tree: HashTree | None,
                log_dir: Path) -> dict | None:
    """Compare with the checkpoint and key remembered from the last successful run; returns the new state
    to remember (or None when nothing may be remembered)."""
    current = report.checkpoint
    vkey = verifier_for(current.origin, trust.public).vkey if current and trust.public else None
    if current is None and (log_dir / "vkey").is_file():  # the checkpoint did not verify: whose key is it?
        with contextlib.suppress(Unreadable):
            vkey = read_text_capped(log_dir / "vkey", MAX_KEY_BYTES).strip()
    previous = None
    if state_path.is_file():
        try:
            previous = json.loads(read_text_capped(state_path, MAX_KEY_BYTES, follow_links=True))
            old_root = base64.b64decode(previous["root"], validate=True)
            old_size, old_origin, old_vkey = int(previous["size"]), previous["origin"], previous["vkey"]
        except (Unreadable, ValueError, KeyError, TypeError, binascii.Error, RecursionError) as exc:
            report.add(Code.STATE_UNREADABLE,
                       f"state file {state_path} is unreadable ({exc}); remove it to start over", None, str(state_path))
            return None
        was = f"size {old_size} root {previous['root']}"
        now = current.describe() if current else "a checkpoint the remembered key does not sign"
        if current is None:
            if vkey and vkey != old_vkey:
                report.add(Code.KEY_CHANGED,
                           f"the log's key changed: you last verified {old_vkey}, the lake now publishes {vkey} "
                           f"(last: {was}; now: {now})", None, "log/checkpoint")
            elif old_size and not (log_dir / "checkpoint").is_file():  # never behind: you saw it published
                report.add(Code.LOG_ROLLED_BACK,
                           f"the log went back from size {old_size} to no checkpoint at all (last: {was})", None,
                           "log/checkpoint")
            return None
        if old_vkey != vkey:
            report.add(Code.KEY_CHANGED,
                       f"the log's key changed: you last verified {old_vkey}, now {vkey} (last: {was}; now: {now})",
                       None, "log/checkpoint")
        elif old_origin != current.origin:
            report.add(Code.ORIGIN_CHANGED, f"the log's origin changed from {old_origin!r} to {current.origin!r}", None,
                       "log/checkpoint")
        elif current.size < old_size:
            report.add(Code.LOG_ROLLED_BACK,
                       f"the log went back from size {old_size} to {current.size} (last: {was}; now: {now})",
                       None, "log/checkpoint")
        elif current.size == old_size and current.root != old_root:
            report.add(Code.SPLIT_VIEW,
                       f"same size, different root: the log shows two histories (last: {was}; now: {now})",
                       None, "log/checkpoint")
        elif current.size > old_size:
            if tree is None:
                report.add(Code.NO_CONSISTENCY_PROOF,
                           "no consistency proof can be computed from the log's tiles", None, "log/tile")
            else:
                proof = tree.consistency_proof(old_size, current.size)
                problem = verify_consistency(old_size, current.size, proof, old_root, current.root)
                if problem:
                    report.add(Code.INCONSISTENT,
                               f"the log is not consistent with the checkpoint you last verified ({problem}; "
                               f"last: {was}; now: {now})", None, "log/checkpoint")
                else:
                    report.notes.append(f"consistent with the checkpoint you verified before ({was})")
    if current is None or vkey is None:
        return None
    return {"origin": current.origin, "vkey": vkey, "size": current.size,
            "root": base64.b64encode(current.root).decode(), "checkpoint": current.text(),
            "verified_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}




def check_tile_files(report: VerifyReport, log_dir: Path, tree: HashTree, entries: list[bytes]) -> int:
    """Every file under log/tile/ re-derived from the entries (full tiles, and the partial tiles each
    earlier checkpoint needed); returns how many were compared."""
    compared = 0
    folder = log_dir / "tile"
    if not folder.is_dir():
        return 0
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.name.startswith("."):
            continue
        rel = path.relative_to(log_dir).as_posix()
        parsed = parse_tile_path(rel)
        if parsed is None:
            report.add(Code.NOT_A_TILE, f"log/{rel} is not a tile path", None, f"log/{rel}")
            continue
        level, index, width = parsed
        span = 1 if isinstance(level, str) else WIDTH ** level
        if (index * WIDTH + width) * span > tree.size:
            report.add(Code.TILE_BEYOND_LOG,
                       f"log/{rel} covers entries beyond the log's size {tree.size}", None, f"log/{rel}")
            continue
        expected = (bundle_bytes(entries, index, width) if isinstance(level, str)
                    else tile_bytes(tree, level, index, width))
        if path.stat().st_size != len(expected) or path.read_bytes() != expected:  # never read a huge one whole
            report.add(Code.TILE_WRONG, f"log/{rel} is not what the entries give", None, f"log/{rel}")
        compared += 1
    return compared
