"""The one verifier: `sevenmaps verify`, the Dagster check on `daily_root` and `daily_root` itself call it.

It recomputes every signed day from its files, checks the chain and every signature against a key the
user trusts (never the lake's own copy, unless nothing else is given, and then it says so), checks the
log (checkpoint signature, tiles, entries = the signed lines, each root's checkpoint a prefix of the
latest), witness cosignatures against a quorum, and consistency with a checkpoint remembered from an
earlier run (a fork otherwise). It never raises on bad input: each problem names the day and file
(docs/verifying.md)."""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import enum
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from ..lake.parquet_io import write_bytes_atomic
from ..lake.paths import LakePaths
from .checkpoint import Checkpoint, open_checkpoint, parse_checkpoint_text
from .keys import SigningKeyError, read_trusted_key, signature_valid
from .manifest import compute_root, day_lines
from .merkle import HashTree, leaf_hash, verify_consistency
from .note import ED25519, Verifier, parse_note, parse_vkey, valid_name, verifier_for
from .statement import check_statement
from .tiles import WIDTH, bundle_bytes, expected_files, load_entries, parse_tile_path, tile_bytes, tree_of

ROOT_NAME = re.compile(r"^day=(\d{4}-\d{2}-\d{2})\.json$")
LINE = re.compile(r"^([0-9a-f]{64})  ((?:raw|curated)/[A-Za-z0-9_]+/day=(\d{4}-\d{2}-\d{2})/[^\n\r]+)$")
HEX64 = re.compile(r"^[0-9a-f]{64}$")
B64_SIG = re.compile(r"^[A-Za-z0-9+/]{86}==$")

EXIT_OK, EXIT_PROBLEM, EXIT_FORK, EXIT_BEHIND = 0, 1, 3, 4


class Kind(enum.Enum):
    """What a problem means (docs/verifying.md, "Behind or forked"): worst first, FORK > PROBLEM > BEHIND."""

    PROBLEM = "FAILED"  # something does not verify
    FORK = "FORK"  # two histories: a log or checkpoint that contradicts the roots or a remembered checkpoint
    BEHIND = "BEHIND"  # the log is a prefix of what the roots say; `sevenmaps log sync` appends the rest


@dataclass(frozen=True)
class Problem:
    what: str
    day: dt.date | None = None
    file: str | None = None
    kind: Kind = Kind.PROBLEM

    @property
    def fork(self) -> bool:
        return self.kind is Kind.FORK

    def __str__(self) -> str:
        file = self.file if self.file and self.file not in self.what else None
        where = " ".join(x for x in (self.day.isoformat() if self.day else None, file) if x)
        return f"{where}: {self.what}" if where else self.what


@dataclass
class Trust:
    """What the verifier trusts: a public key (and the log's name for it), witnesses and a quorum."""

    public: Ed25519PublicKey | None = None
    source: str = "the lake's own .well-known/7maps.json (not pinned: pass --public-key or --vkey)"
    log_name: str | None = None  # the vkey's name = the log's origin, when a vkey was given
    witnesses: list[Verifier] = field(default_factory=list)
    quorum: int = 0
    pinned: bool = False

    @classmethod
    def from_public_key_file(cls, path: Path) -> Trust:
        return cls(read_trusted_key(path), f"--public-key {path}", pinned=True)

    @classmethod
    def from_vkey(cls, vkey: str) -> Trust:
        verifier, problem = parse_vkey(vkey)
        if verifier is None:
            raise SigningKeyError(f"--vkey: {problem}")
        if verifier.sig_type != ED25519:
            raise SigningKeyError("--vkey must be the log's Ed25519 (0x01) key, not a witness's cosignature key")
        key = verifier.public_key()
        assert isinstance(key, Ed25519PublicKey)  # the sig_type was checked just above
        return cls(key, f"--vkey {verifier.vkey}", verifier.name, pinned=True)


@dataclass
class VerifyReport:
    ok: bool = True
    days_verified: list[dt.date] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    latest_root: str | None = None
    checkpoint: Checkpoint | None = None
    cosigned_by: list[str] = field(default_factory=list)
    withheld: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    files_checked: int = 0
    proofs_checked: int = 0
    trusted: str | None = None  # where the key verified against came from
    legacy_days: list[dt.date] = field(default_factory=list)  # roots of method 7maps-roots-1.0

    def add(self, what: str, day: dt.date | None = None, file: str | None = None, fork: bool = False,
            kind: Kind = Kind.PROBLEM) -> None:
        self.ok = False
        self.problems.append(Problem(what, day, file, Kind.FORK if fork else kind))

    @property
    def fork(self) -> bool:
        return any(p.fork for p in self.problems)

    @property
    def kind(self) -> Kind | None:
        """The worst kind found: a fork, else a problem, else the log only behind its roots."""
        kinds = {p.kind for p in self.problems}
        return next((k for k in (Kind.FORK, Kind.PROBLEM, Kind.BEHIND) if k in kinds), None)

    @property
    def behind(self) -> bool:
        return self.kind is Kind.BEHIND

    @property
    def bad_day(self) -> dt.date | None:
        return self.problems[0].day if self.problems else None

    @property
    def problem(self) -> str | None:
        return self.problems[0].what if self.problems else None

    @property
    def exit_code(self) -> int:
        return {None: EXIT_OK, Kind.FORK: EXIT_FORK, Kind.PROBLEM: EXIT_PROBLEM, Kind.BEHIND: EXIT_BEHIND}[self.kind]

    def summary(self) -> str:
        out = []
        if self.ok:
            if not self.days_verified:
                out.append("no signed days to verify")
            else:
                out.append(f"OK: {len(self.days_verified)} signed days verified "
                           f"({self.days_verified[0]} .. {self.days_verified[-1]}); latest root {self.latest_root}")
            if self.checkpoint:
                out.append(f"log: {self.checkpoint.describe()}"
                           + (f"; cosigned by {', '.join(self.cosigned_by)}" if self.cosigned_by else ""))
        else:
            kind = self.kind or Kind.PROBLEM
            first = next(p for p in self.problems if p.kind is kind)
            out.append(f"{kind.value} at {first.day}: {first.what}" if first.day else f"{kind.value}: {first.what}")
            if kind is Kind.BEHIND and self.days_verified:
                out.append(f"  the roots verified: {len(self.days_verified)} signed days ({self.days_verified[0]} .. "
                           f"{self.days_verified[-1]}), every entry the log holds one of their lines")
            rest = [p for p in self.problems if p is not first]
            out += [f"  also: {p}" for p in rest[:20]]
            if len(rest) > 20:
                out.append(f"  ... and {len(rest) - 20} more problems")
        if self.withheld:
            out.append(f"withheld ({len(self.withheld)} signed files not in this snapshot, see WITHHELD.txt):")
            out += [f"  {w}" for w in self.withheld[:20]] + ([f"  ... {len(self.withheld) - 20} more"]
                                                               if len(self.withheld) > 20 else [])
        out += [f"note: {n}" for n in self.notes]
        if self.legacy_days:
            days = sorted(self.legacy_days)
            out.append(f"note: {len(days)} root(s) of method 7maps-roots-1.0 ({days[0]} .. {days[-1]}): signed before "
                       "roots carried a statement, so their day, method and time are not signed")
        return "\n".join(out)


# --- root documents -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class RootDoc:
    day: dt.date
    previous_day: dt.date | None
    previous_root: str
    root: str
    signature: str
    signed_at: dt.datetime
    lines: list[str]
    log: dict[str, Any] | None
    rel: str
    raw: dict[str, Any]


def parse_root_doc(data: bytes, day: dt.date, rel: str) -> tuple[RootDoc | None, str | None]:
    """A root document, every field type-checked; (None, why) when it is not one."""
    try:
        doc = json.loads(data)
    except (UnicodeDecodeError, ValueError) as exc:
        return None, f"root file is not JSON ({exc})"
    if not isinstance(doc, dict):
        return None, "root file is not a JSON object"
    for name in ("day", "root", "signature", "signed_at", "previous_root"):
        if not isinstance(doc.get(name), str):
            return None, f"root file has no text field {name!r}"
    if doc["day"] != day.isoformat():
        return None, f"root file names day {doc['day'][:20]!r}"
    if not HEX64.match(doc["root"]):
        return None, "root is not 64 lower-case hex digits"
    if doc["previous_root"] and not HEX64.match(doc["previous_root"]):
        return None, "previous_root is not 64 lower-case hex digits"
    if not B64_SIG.match(doc["signature"]):
        return None, "signature is not base64 of a 64-byte Ed25519 signature"
    previous_day = doc.get("previous_day")
    if previous_day is not None and not isinstance(previous_day, str):
        return None, "previous_day is neither null nor a day"
    try:
        previous = dt.date.fromisoformat(previous_day) if previous_day else None
        signed_at = dt.datetime.fromisoformat(doc["signed_at"])
    except ValueError:
        return None, "previous_day or signed_at is not an ISO date/time"
    if signed_at.tzinfo is None:
        return None, "signed_at has no time zone"
    lines = doc.get("lines")
    if not isinstance(lines, list) or not all(isinstance(x, str) for x in lines):
        return None, "lines is not a list of text lines"
    for i, line in enumerate(lines):
        m = LINE.match(line)
        if not m:
            return None, f"line {i} is not '<sha256 hex>  <raw|curated path>': {line[:100]!r}"
        if m.group(3) != day.isoformat():
            return None, f"line {i} names a file of another day: {m.group(2)[:100]}"
        if ".." in m.group(2).split("/"):
            return None, f"line {i} has a '..' path element"
    paths = [line[66:] for line in lines]
    if paths != sorted(paths) or len(set(paths)) != len(paths):
        return None, "lines are not sorted by path, or name a file twice"
    log = doc.get("log")
    if log is not None and not isinstance(log, dict):
        return None, "log is not an object"
    return RootDoc(day, previous, doc["previous_root"], doc["root"], doc["signature"], signed_at, lines, log, rel,
                   doc), None


def _root_files(roots_dir: Path) -> list[tuple[dt.date, Path]]:
    if not roots_dir.is_dir():
        return []
    found = []
    for path in roots_dir.iterdir():
        m = ROOT_NAME.match(path.name)
        if m:
            try:
                found.append((dt.date.fromisoformat(m.group(1)), path))
            except ValueError:
                continue
    return sorted(found)


def diff_lines(recorded: list[str], actual: list[str]) -> list[str]:
    rec = {line[66:]: line[:64] for line in recorded}
    act = {line[66:]: line[:64] for line in actual}
    out = []
    for path in sorted(set(rec) | set(act)):
        if path not in act:
            out.append(f"file missing: {path}")
        elif path not in rec:
            out.append(f"file added after signing: {path}")
        elif rec[path] != act[path]:
            out.append(f"file changed: {path} (signed sha256 {rec[path]}, now {act[path]})")
    return out


def check_chain(report: VerifyReport, docs: list[RootDoc], public: Ed25519PublicKey | None,
                first_previous: tuple[dt.date | None, str] | None = None) -> None:
    """Chain links, roots from lines, signatures, signed only after the day ended. `first_previous` is what
    the first doc must chain to (None: take it as written, e.g. a snapshot that starts mid-history)."""
    previous = first_previous
    for doc in docs:
        if previous is not None:
            expected_day, expected_root = previous
            if expected_day is not None and doc.day != expected_day + dt.timedelta(days=1):
                gap = expected_day + dt.timedelta(days=1)
                report.add(f"broken chain: no root for {gap} (roots/day={gap}.json missing)", doc.day, doc.rel)
            elif doc.previous_day != expected_day or doc.previous_root != expected_root:
                report.add(f"broken chain: previous_root does not match the root of {expected_day}", doc.day, doc.rel)
        if doc.signed_at < dt.datetime.combine(doc.day + dt.timedelta(days=1), dt.time(), dt.UTC):
            report.add(f"signed at {doc.signed_at.isoformat()}, before the day ended", doc.day, doc.rel)
        if compute_root(doc.previous_root, doc.lines) != doc.root:
            report.add(f"root does not match its lines in {doc.rel}", doc.day, doc.rel)
        elif public is not None and not signature_valid(public, doc.root, doc.signature):
            report.add(f"bad signature in {doc.rel}: not signed by the trusted key", doc.day, doc.rel)
        elif public is not None:
            _check_statement(report, doc, public)
        previous = (doc.day, doc.root)


def _check_statement(report: VerifyReport, doc: RootDoc, public: Ed25519PublicKey) -> None:
    method = doc.raw.get("method")
    if method == "7maps-roots-1.0" and "statement" not in doc.raw:
        report.legacy_days.append(doc.day)
        return
    name = (doc.log or {}).get("origin")
    if not isinstance(name, str) or not valid_name(name):
        report.add("the root's log record names no valid log origin", doc.day, doc.rel)
        return
    problem = check_statement(doc.raw, verifier_for(name, public))
    if problem:
        report.add(f"{problem} ({doc.rel})", doc.day, doc.rel)


MAX_ROOT_BYTES = 256 << 20  # a day of the real registry is well under 1 MiB of lines


def read_root_docs(report: VerifyReport, roots_dir: Path, base: Path) -> list[RootDoc]:
    docs = []
    for day, path in _root_files(roots_dir):
        rel = path.relative_to(base).as_posix()
        try:
            if path.stat().st_size > MAX_ROOT_BYTES:
                report.add(f"root file unreadable: {rel} (larger than {MAX_ROOT_BYTES:,} bytes)", day, rel)
                continue
            data = path.read_bytes()
        except OSError as exc:
            report.add(f"root file unreadable: {rel} ({exc.strerror})", day, rel)
            continue
        doc, problem = parse_root_doc(data, day, rel)
        if doc is None:
            report.add(f"root file unreadable: {rel} ({problem})", day, rel)
            continue
        docs.append(doc)
    return docs


# --- the log ------------------------------------------------------------------------------------------


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
            report.add("no log/checkpoint: the signed days are not in the transparency log", None, "log/checkpoint")
            return None, None
        named = [(d.log or {}).get("origin") for d in docs]
        origin = trust.log_name or next((n for n in named if isinstance(n, str) and valid_name(n)), None)
        verifier = verifier_for(origin, public) if public is not None and origin else None
        _check_entries(report, docs, [], HashTree(), None, verifier, origin, complete)
        return None, None
    data = path.read_bytes()
    note, problem = parse_note(data)
    text_cp, problem = parse_checkpoint_text(note.text) if note else (None, problem)
    if text_cp is None:
        report.add(f"log/checkpoint is malformed: {problem}", None, "log/checkpoint")
        return None, None
    origin = trust.log_name or text_cp.origin
    if trust.log_name and text_cp.origin != trust.log_name:
        report.add(f"log/checkpoint has origin {text_cp.origin!r}, the trusted vkey names {trust.log_name!r}",
                   None, "log/checkpoint")
        return None, None
    verifier = verifier_for(origin, public) if public is not None and origin else None
    checkpoint = text_cp
    if verifier is not None:
        opened, problem = open_checkpoint(data, verifier, origin, trust.witnesses)
        if opened is None:
            report.add(f"log/checkpoint: {problem}", None, "log/checkpoint")
            return None, None
        checkpoint, opened_note = opened
        report.cosigned_by = [v.name for v in opened_note.verified if v in trust.witnesses]
        if trust.quorum and len(report.cosigned_by) < trust.quorum:
            report.add(f"log/checkpoint carries {len(report.cosigned_by)} valid witness cosignature(s); "
                       f"the quorum is {trust.quorum}", None, "log/checkpoint")
    report.checkpoint = checkpoint
    entries, problem = load_entries(log_dir, checkpoint.size)
    if entries is None:
        report.add(f"the log cannot be read: {problem}", None, "log/tile")
        return None, checkpoint
    tree = tree_of(entries)
    if tree.root() != checkpoint.root:
        report.add("the log's entries do not hash to the checkpoint's root", None, "log/tile/entries")
        return None, checkpoint
    for rel, expected in expected_files(tree, entries, checkpoint.size).items():
        if not rel.startswith("tile/entries"):
            tile = log_dir / rel
            if not tile.is_file():
                full = log_dir / rel.split(".p/")[0]
                if full.is_file() and full.read_bytes()[:len(expected)] == expected:
                    continue
                report.add(f"tile log/{rel} is missing", None, f"log/{rel}")
            elif tile.read_bytes() != expected:
                report.add(f"tile log/{rel} does not match the entries", None, f"log/{rel}")
    _check_entries(report, docs, entries, tree, checkpoint, verifier, origin, complete)
    return tree, checkpoint


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
        first = record.get("first_index")
        if not isinstance(first, int) or isinstance(first, bool):  # a root signed before the log existed
            if complete or not doc.lines:
                first = at
            elif doc.lines[0].encode() in entries:
                first = entries.index(doc.lines[0].encode())
            else:
                report.add("the day's lines are not in the log", doc.day, doc.rel)
                continue
        if complete and first != at:
            report.add(f"the day's lines start at log entry {first}, expected {at}", doc.day, doc.rel)
        end = first + len(doc.lines)
        wholly_past = complete and first == at >= size and end > size
        if wholly_past:
            behind.append(doc)
            ahead = ahead or tree.copy()
            for line in doc.lines:
                ahead.append(leaf_hash(line.encode()))
        elif end > size:
            report.add(f"signed but not in the log (log size {size}, the day ends at entry {end})", doc.day, doc.rel)
        elif [e.decode(errors="replace") for e in entries[first:end]] != doc.lines:
            report.add(f"log entries {first}..{end - 1} are not the day's signed lines", doc.day, doc.rel)
        at = end
        recorded = record.get("checkpoint")
        if isinstance(recorded, str) and verifier is not None:
            opened, problem = open_checkpoint(recorded.encode(), verifier, origin)
            if opened is None:
                report.add(f"the root's log checkpoint: {problem}", doc.day, doc.rel)
            elif wholly_past and ahead is not None:
                if opened[0].size > ahead.size or ahead.root(opened[0].size) != opened[0].root:
                    report.add(f"the root's log checkpoint ({opened[0].describe()}) is not the tree of the signed "
                               "lines: the key signed another history", doc.day, doc.rel, fork=True)
            elif opened[0].size > size or tree.root(opened[0].size) != opened[0].root:
                report.add(f"the root's log checkpoint ({opened[0].describe()}) is not a prefix of the latest "
                           f"({latest})", doc.day, doc.rel, fork=True)
    if behind:
        days = f"{behind[0].day}" if len(behind) == 1 else f"{behind[0].day} .. {behind[-1].day}"
        report.add(("no log/checkpoint: " if checkpoint is None else "")
                   + f"the log is behind its roots: {len(behind)} signed day(s) ({days}, entries {size}..{at - 1}) "
                   f"are not in it yet (log size {size}); a signer stopped between a root and its checkpoint. "
                   "Run `sevenmaps log sync` (or the next signing does it)", None, "log/checkpoint", kind=Kind.BEHIND)
    elif complete and at != size and not report.problems:
        report.add(f"the log holds {size - at} entries beyond the signed roots", None, "log/checkpoint")


# --- remembered state: fork detection -----------------------------------------------------------------


def check_state(report: VerifyReport, state_path: Path, trust: Trust, tree: HashTree | None,
                log_dir: Path) -> dict | None:
    """Compare with the checkpoint and key remembered from the last successful run; returns the new state
    to remember (or None when nothing may be remembered)."""
    current = report.checkpoint
    vkey = verifier_for(current.origin, trust.public).vkey if current and trust.public else None
    if current is None and (log_dir / "vkey").is_file():  # the checkpoint did not verify: whose key is it?
        vkey = (log_dir / "vkey").read_text(errors="replace").strip()
    previous = None
    if state_path.is_file():
        try:
            previous = json.loads(state_path.read_text())
            old_root = base64.b64decode(previous["root"], validate=True)
            old_size, old_origin, old_vkey = int(previous["size"]), previous["origin"], previous["vkey"]
        except (OSError, ValueError, KeyError, TypeError, binascii.Error) as exc:
            report.add(f"state file {state_path} is unreadable ({exc}); remove it to start over", None, str(state_path))
            return None
        was = f"size {old_size} root {previous['root']}"
        now = current.describe() if current else "a checkpoint the remembered key does not sign"
        if current is None:
            if vkey and vkey != old_vkey:
                report.add(f"the log's key changed: you last verified {old_vkey}, the lake now publishes {vkey} "
                           f"(last: {was}; now: {now})", None, "log/checkpoint", fork=True)
            elif old_size and not (log_dir / "checkpoint").is_file():  # never behind: you saw it published
                report.add(f"the log went back from size {old_size} to no checkpoint at all (last: {was})", None,
                           "log/checkpoint", fork=True)
            return None
        if old_vkey != vkey:
            report.add(f"the log's key changed: you last verified {old_vkey}, now {vkey} (last: {was}; now: {now})",
                       None, "log/checkpoint", fork=True)
        elif old_origin != current.origin:
            report.add(f"the log's origin changed from {old_origin!r} to {current.origin!r}", None,
                       "log/checkpoint", fork=True)
        elif current.size < old_size:
            report.add(f"the log went back from size {old_size} to {current.size} (last: {was}; now: {now})",
                       None, "log/checkpoint", fork=True)
        elif current.size == old_size and current.root != old_root:
            report.add(f"same size, different root: the log shows two histories (last: {was}; now: {now})",
                       None, "log/checkpoint", fork=True)
        elif current.size > old_size:
            if tree is None:
                report.add("no consistency proof can be computed from the log's tiles", None, "log/tile")
            else:
                proof = tree.consistency_proof(old_size, current.size)
                problem = verify_consistency(old_size, current.size, proof, old_root, current.root)
                if problem:
                    report.add(f"the log is not consistent with the checkpoint you last verified ({problem}; "
                               f"last: {was}; now: {now})", None, "log/checkpoint", fork=True)
                else:
                    report.notes.append(f"consistent with the checkpoint you verified before ({was})")
    if current is None or vkey is None:
        return None
    return {"origin": current.origin, "vkey": vkey, "size": current.size,
            "root": base64.b64encode(current.root).decode(), "checkpoint": current.text(),
            "verified_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}


def trust_from_state(state_path: Path | None) -> Trust | None:
    """A key remembered by an earlier run, to verify against when the user gives none."""
    if state_path is None or not state_path.is_file():
        return None
    try:
        vkey = json.loads(state_path.read_text())["vkey"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    try:
        trust = Trust.from_vkey(vkey)
    except SigningKeyError:
        return None
    trust.source = f"the key remembered in {state_path}"
    return trust


# --- entry points -------------------------------------------------------------------------------------


def resolve_trust(report: VerifyReport, lake_key: Path | None, trust: Trust | None,
                   state_path: Path | None) -> Trust | None:
    if trust is None:
        trust = trust_from_state(state_path)
    if trust is None:
        trust = Trust()
        if lake_key is None or not lake_key.is_file():
            report.add("no public key: pass --public-key FILE or --vkey KEY", None, ".well-known/7maps.json")
            return None
        try:
            trust.public = read_trusted_key(lake_key)
        except SigningKeyError as exc:
            report.add(f"public key: {exc}", None, ".well-known/7maps.json")
            return None
        report.notes.append("verified against the lake's own public key, which whoever can write the lake can "
                            "replace: pin one with --public-key FILE, --vkey KEY or --state FILE")
    elif trust.witnesses and not trust.quorum:
        trust.quorum = len(trust.witnesses)
    report.trusted = trust.source
    return trust


def verify_lake(lake: LakePaths, trust: Trust | None = None, state_path: Path | None = None) -> VerifyReport:
    """Every signed day of the lake, its files, its log; against `trust` (or a remembered key, or, saying
    so, the lake's own published key)."""
    report = VerifyReport()
    if not lake.root.is_dir():
        report.add(f"no lake at {lake.root}")
        return report
    docs = read_root_docs(report, lake.roots_dir, lake.root)
    if not docs and not report.problems:
        return report
    trust = resolve_trust(report, lake.well_known, trust, state_path)
    if trust is None:
        return report
    for doc in docs:
        for problem in diff_lines(doc.lines, day_lines(lake, doc.day)):
            report.add(problem, doc.day, problem.split(": ", 1)[1].split(" (")[0])
        report.files_checked += len(doc.lines)
    check_chain(report, docs, trust.public, first_previous=(None, ""))
    tree, _ = check_log(report, lake.log_dir, docs, trust.public, trust, complete=True)
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
            if not path.is_file():
                continue
            doc, problem = parse_root_doc(path.read_bytes(), d, path.relative_to(lake.root).as_posix())
            if doc is None:
                report.add(f"root file unreadable: {problem}", d, rel)
            else:
                docs.append(doc)
        mine = [doc for doc in docs if doc.day == day]
        if not mine:
            if not any(p.day == day for p in report.problems):
                report.add("not signed", day, rel)
            continue
        doc = mine[0]
        before = [d for d in docs if d.day < day]
        first_previous = (before[0].day, before[0].root) if before else None
        if doc.previous_day is not None and not before:
            report.add(f"chains to {doc.previous_day}, whose root is missing", day, rel)
        check_chain(report, [doc], public, first_previous=first_previous)
        for problem in diff_lines(doc.lines, day_lines(lake, day)):
            report.add(problem, day, rel)
    return report.problems


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
            report.add(f"log/{rel} is not a tile path", None, f"log/{rel}")
            continue
        level, index, width = parsed
        span = 1 if isinstance(level, str) else WIDTH ** level
        if (index * WIDTH + width) * span > tree.size:
            report.add(f"log/{rel} covers entries beyond the log's size {tree.size}", None, f"log/{rel}")
            continue
        expected = (bundle_bytes(entries, index, width) if isinstance(level, str)
                    else tile_bytes(tree, level, index, width))
        if path.read_bytes() != expected:
            report.add(f"log/{rel} is not what the entries give", None, f"log/{rel}")
        compared += 1
    return compared


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
        entries, _ = load_entries(lake.log_dir, tree.size)
        compared = check_tile_files(report, lake.log_dir, tree, entries or [])
    finish_report(report, docs)
    return report, compared
