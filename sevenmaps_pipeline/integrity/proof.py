"""C2SP tlog-proof (`c2sp.org/tlog-proof@v1`): one self-contained, offline proof that a signed line is in
the log. Our `extra` line carries the logged line itself ("<sha256>  <path>"), so the leaf hash is
SHA-256(0x00 || extra) and a reader can check the file's bytes against the line (docs/verifying.md)."""

from __future__ import annotations

import base64
import binascii
import enum
from dataclasses import dataclass

from .checkpoint import Checkpoint, open_checkpoint
from .merkle import leaf_hash, verify_inclusion
from .note import Verifier

HEADER = "c2sp.org/tlog-proof@v1"
MAX_PROOF_BYTES = 1 << 20


@dataclass(frozen=True)
class TlogProof:
    index: int
    hashes: list[bytes]
    checkpoint: bytes  # verbatim, signatures included
    extra: bytes | None = None

    def render(self) -> str:
        lines = [HEADER]
        if self.extra is not None:
            lines.append("extra " + base64.b64encode(self.extra).decode())
        lines.append(f"index {self.index}")
        lines += [base64.b64encode(h).decode() for h in self.hashes]
        return "\n".join(lines) + "\n\n" + self.checkpoint.decode()


def parse_proof(data: bytes | str) -> tuple[TlogProof | None, str | None]:
    if isinstance(data, str):
        data = data.encode()
    if len(data) > MAX_PROOF_BYTES:
        return None, f"proof larger than {MAX_PROOF_BYTES} bytes"
    head, sep, checkpoint = data.partition(b"\n\n")
    if not sep:
        return None, "no empty line between the proof and its checkpoint"
    try:
        lines = head.decode("ascii").split("\n")
    except UnicodeDecodeError:
        return None, "the proof lines are not ASCII"
    if lines[0] != HEADER:
        return None, f"first line is not {HEADER!r}"
    at, extra = 1, None
    if len(lines) > at and lines[at].startswith("extra "):
        try:
            extra = base64.b64decode(lines[at][6:], validate=True)
        except (binascii.Error, ValueError):
            return None, "the extra line is not base64"
        at += 1
    if len(lines) <= at or not lines[at].startswith("index "):
        return None, "no index line"
    number = lines[at][6:]
    if not number.isdigit() or (number != "0" and number.startswith("0")) or len(number) > 19:
        return None, f"index {number[:30]!r} is not a decimal without leading zeroes"
    hashes = []
    for i, line in enumerate(lines[at + 1:]):
        try:
            value = base64.b64decode(line, validate=True)
        except (binascii.Error, ValueError):
            value = b""
        if len(value) != 32:
            return None, f"inclusion proof line {i + 1} is not base64 of a 32-byte hash"
        hashes.append(value)
    if len(hashes) > 63:
        return None, "an inclusion proof has at most 63 hashes"
    return TlogProof(int(number), hashes, checkpoint, extra), None


@dataclass(frozen=True)
class ProofResult:
    line: str
    index: int
    checkpoint: Checkpoint
    witnesses: list[str]


class ProofFailure(enum.Enum):
    """Why a tlog-proof does not prove its line (docs/verifying.md)."""

    MALFORMED = "malformed"  # not a c2sp.org/tlog-proof@v1 document
    CHECKPOINT = "checkpoint"  # its checkpoint is not signed by the trusted log key, or is malformed
    QUORUM = "quorum"  # fewer witness cosignatures than asked for
    NO_LINE = "no_line"  # no extra line, or not UTF-8: the logged line is not known
    LINE_MALFORMED = "line_malformed"  # the extra line is not '<sha256 hex>  <path>'
    NOT_INCLUDED = "not_included"  # the hashes do not lead from the line at the index to the checkpoint's root


@dataclass(frozen=True)
class ProofProblem:
    """A failed proof: its kind, and the line that tells it (str())."""

    kind: ProofFailure
    what: str

    def __str__(self) -> str:
        return self.what


def verify_proof(data: bytes | str, log: Verifier, origin: str | None = None, witnesses: list[Verifier] | None = None,
                 quorum: int = 0) -> tuple[ProofResult | None, ProofProblem | None]:
    """Check a .tlog-proof with nothing but the trusted keys: the checkpoint's log signature (and at least
    `quorum` witness cosignatures), then the inclusion of the line in `extra` at `index`."""
    proof, problem = parse_proof(data)
    if proof is None:
        return None, ProofProblem(ProofFailure.MALFORMED, problem or "not a tlog-proof")
    opened, problem = open_checkpoint(proof.checkpoint, log, origin or log.name, witnesses)
    if opened is None:
        return None, ProofProblem(ProofFailure.CHECKPOINT, f"checkpoint: {problem}")
    checkpoint, note = opened
    cosigned = [v.name for v in note.verified if v in (witnesses or [])]
    if len(cosigned) < quorum:
        return None, ProofProblem(ProofFailure.QUORUM, f"checkpoint carries {len(cosigned)} valid witness "
                                  f"cosignature(s), the quorum is {quorum}"
                                  + (f" (signed by {', '.join(cosigned)})" if cosigned else ""))
    if proof.extra is None:
        return None, ProofProblem(ProofFailure.NO_LINE, "the proof has no extra line: the logged line is not known")
    try:
        line = proof.extra.decode("utf-8")
    except UnicodeDecodeError:
        return None, ProofProblem(ProofFailure.NO_LINE, "the extra line is not UTF-8")
    digest, sep, path = line.partition("  ")
    if not sep or len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest) or not path:
        return None, ProofProblem(ProofFailure.LINE_MALFORMED,
                                  f"the logged line {line[:100]!r} is not '<sha256 hex>  <path>'")
    problem = verify_inclusion(proof.index, checkpoint.size, leaf_hash(proof.extra), proof.hashes, checkpoint.root)
    if problem:
        return None, ProofProblem(ProofFailure.NOT_INCLUDED,
                                  f"inclusion of entry {proof.index} in {checkpoint.describe()}: {problem}")
    return ProofResult(line, proof.index, checkpoint, cosigned), None
