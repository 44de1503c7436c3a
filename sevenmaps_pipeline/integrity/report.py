"""What the verifier found (docs/verifying.md): each problem a named kind (`Code`) with the day and file it
concerns, rendered to one English line only when shown; the report of a whole run; what it trusts."""

from __future__ import annotations

import datetime as dt
import enum
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from .checkpoint import Checkpoint
from .keys import SigningKeyError, read_trusted_key
from .note import ED25519, Verifier, parse_vkey

EXIT_OK, EXIT_PROBLEM, EXIT_FORK, EXIT_BEHIND = 0, 1, 3, 4
# Problems of one code kept one by one; past it they are counted, with the days they concern. A hostile snapshot
# naming 1.9 million missing files held 1.6 GB of problems (docs/scaling.md), of which a report shows 21.
LISTED_PER_CODE = 1_000


class Kind(enum.Enum):
    """What a problem means (docs/verifying.md, "Behind or forked"): worst first, FORK > PROBLEM > BEHIND."""

    PROBLEM = "FAILED"  # something does not verify
    FORK = "FORK"  # two histories: a log or checkpoint that contradicts the roots or a remembered checkpoint
    BEHIND = "BEHIND"  # the log is a prefix of what the roots say; `sevenmaps log sync` appends the rest


class Code(enum.Enum):
    """Every kind of problem the verifier can name. Tests and callers match these, never the English line."""

    # the lake, the snapshot and the key
    NO_LAKE = "no_lake"
    NO_SNAPSHOT = "no_snapshot"
    NO_KEY = "no_key"
    KEY_UNREADABLE = "key_unreadable"
    # the roots and their chain
    ROOT_UNREADABLE = "root_unreadable"
    NO_ROOTS = "no_roots"
    NOT_SIGNED = "not_signed"
    CHAIN_BROKEN = "chain_broken"
    SIGNED_TOO_EARLY = "signed_too_early"
    ROOT_NOT_ITS_LINES = "root_not_its_lines"
    BAD_SIGNATURE = "bad_signature"
    BAD_STATEMENT = "bad_statement"
    # the files a root names, or a snapshot holds
    FILE_MISSING = "file_missing"
    FILE_ADDED = "file_added"
    FILE_CHANGED = "file_changed"
    FILE_NOT_LISTED = "file_not_listed"
    FILE_NOT_SIGNED = "file_not_signed"
    STRAY = "stray"  # beside the signed files, covered by no root, yet read by a reader of the folder
    SUMS_MISSING = "sums_missing"
    SUMS_MALFORMED = "sums_malformed"
    WITHHELD_UNREADABLE = "withheld_unreadable"
    DESCRIPTION_WRONG = "description_wrong"  # datapackage.json or croissant.json names a file no root signs
    PROOF_MISSING = "proof_missing"
    PROOF_INVALID = "proof_invalid"
    # the log
    NO_CHECKPOINT = "no_checkpoint"
    CHECKPOINT_MALFORMED = "checkpoint_malformed"
    CHECKPOINT_WRONG_ORIGIN = "checkpoint_wrong_origin"
    CHECKPOINT_INVALID = "checkpoint_invalid"
    QUORUM_UNMET = "quorum_unmet"
    LOG_UNREADABLE = "log_unreadable"
    ENTRIES_NOT_CHECKPOINT = "entries_not_checkpoint"
    TILE_MISSING = "tile_missing"
    TILE_WRONG = "tile_wrong"
    NOT_A_TILE = "not_a_tile"
    TILE_BEYOND_LOG = "tile_beyond_log"
    LINES_NOT_IN_LOG = "lines_not_in_log"
    LINES_OUT_OF_PLACE = "lines_out_of_place"
    NOT_IN_LOG = "not_in_log"
    ENTRIES_NOT_LINES = "entries_not_lines"
    ROOT_CHECKPOINT_INVALID = "root_checkpoint_invalid"
    LOG_AHEAD = "log_ahead"
    LOG_BEHIND = "log_behind"
    # two histories: the log or a checkpoint contradicts the roots or what the user verified before
    OTHER_HISTORY = "other_history"
    NOT_A_PREFIX = "not_a_prefix"
    KEY_CHANGED = "key_changed"
    ORIGIN_CHANGED = "origin_changed"
    LOG_ROLLED_BACK = "log_rolled_back"
    SPLIT_VIEW = "split_view"
    INCONSISTENT = "inconsistent"
    # what the user remembered
    STATE_UNREADABLE = "state_unreadable"
    NO_CONSISTENCY_PROOF = "no_consistency_proof"

    @property
    def kind(self) -> Kind:
        if self in _FORKS:
            return Kind.FORK
        return Kind.BEHIND if self is Code.LOG_BEHIND else Kind.PROBLEM


_FORKS = frozenset({Code.OTHER_HISTORY, Code.NOT_A_PREFIX, Code.KEY_CHANGED, Code.ORIGIN_CHANGED, Code.LOG_ROLLED_BACK,
                    Code.SPLIT_VIEW, Code.INCONSISTENT})


@dataclass(frozen=True)
class Problem:
    """One problem: its kind, the line that tells it, and the day and file it concerns."""

    code: Code
    what: str
    day: dt.date | None = None
    file: str | None = None

    @property
    def kind(self) -> Kind:
        return self.code.kind

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
    key_file: Path | None = None  # --public-key's file

    @classmethod
    def from_public_key_file(cls, path: Path) -> Trust:
        return cls(read_trusted_key(path), f"--public-key {path}", pinned=True, key_file=Path(path))

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
    found: set[tuple[Code, dt.date | None]] = field(default_factory=set)  # every problem's code and day, listed or not
    listed: dict[Code, int] = field(default_factory=dict)  # problems in `problems`, by code
    unlisted: dict[Code, int] = field(default_factory=dict)  # problems past LISTED_PER_CODE, counted

    def add(self, code: Code, what: str, day: dt.date | None = None, file: str | None = None) -> None:
        self.ok = False
        self.found.add((code, day))
        if self.listed.get(code, 0) >= LISTED_PER_CODE:
            self.unlisted[code] = self.unlisted.get(code, 0) + 1
            return
        self.listed[code] = self.listed.get(code, 0) + 1
        self.problems.append(Problem(code, what, day, file))

    def found_on(self, day: dt.date, code: Code | None = None) -> bool:
        """Whether a problem of `day` (of `code`, if given) was found, listed or only counted."""
        return any(d == day and (code is None or c is code) for c, d in self.found)

    @property
    def codes(self) -> list[Code]:
        return [p.code for p in self.problems]

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
        """The earliest day any problem concerns, listed or only counted (None: no problem names a day)."""
        return min((day for _, day in self.found if day is not None), default=None)

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
            more = max(0, len(rest) - 20) + sum(self.unlisted.values())
            if more:
                out.append(f"  ... and {more:,} more problems")
        if self.withheld:
            out.append(f"withheld ({len(self.withheld)} signed files not in this snapshot, see WITHHELD.txt):")
            out += [f"  {w}" for w in self.withheld[:20]] + ([f"  ... {len(self.withheld) - 20} more"]
                                                               if len(self.withheld) > 20 else [])
        out += [f"note: {n}" for n in self.notes]
        if self.legacy_days:
            days = sorted(self.legacy_days)
            out.append(f"note: {len(days)} root(s) of method 7maps-roots-1.0 ({days[0]} .. {days[-1]}): signed before "
                       "roots carried a statement, so their day, method and time are not signed")
        # One line each: a file named with a line break or a terminal escape in a lake cannot print a line of
        # its own ("OK: ..." under the FAILED line).
        return "\n".join(_shown(line) for line in out)


def _shown(line: str) -> str:
    """The line with every character that is not printable (line breaks, escapes, bidi controls) escaped."""
    return line if line.isprintable() else "".join(c if c.isprintable() else repr(c)[1:-1] for c in line)
