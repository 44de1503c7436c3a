"""The append-only RFC 6962 log of every signed line, kept as C2SP tlog-tiles static files under `log/`.

Each signed day appends its lines (in the day's sorted order, days in chain order); entry = the line's
UTF-8 bytes, leaf hash SHA-256(0x00 || line), as Go's checksum database does with one record per line.
After each day a C2SP tlog-checkpoint signed with the lake's Ed25519 key (key name = origin) is
published at `log/checkpoint`, with any witness cosignatures. Publishing is a compare-and-swap under a
file lock: it fails unless the checkpoint is still the one the new tree was built on, so two signers can
never publish two histories (docs/verifying.md)."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..lake.parquet_io import write_bytes_atomic
from ..lake.paths import LakePaths
from .checkpoint import Checkpoint, parse_checkpoint_text
from .merkle import EMPTY_ROOT, HashTree, leaf_hash
from .note import Note, Verifier, parse_note, sign, verifier_for
from .tiles import MAX_ENTRY, expected_files, load_entries, tree_of

ORIGIN_ENV = "SEVENMAPS_LOG_ORIGIN"
DEFAULT_ORIGIN = "sevenmaps.invalid/log"  # .invalid never resolves: set a real name for a public log


class LogError(RuntimeError):
    pass


class LogConflict(LogError):
    """The checkpoint moved while a new one was being built: somebody else published."""


def configured_origin() -> str:
    return os.environ.get(ORIGIN_ENV) or DEFAULT_ORIGIN


def log_verifier(key: Ed25519PrivateKey, origin: str) -> Verifier:
    return verifier_for(origin, key.public_key())


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """An exclusive advisory lock held by this process for the block (released if the process dies)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


@dataclass
class LogState:
    origin: str
    entries: list[bytes]
    tree: HashTree
    checkpoint_bytes: bytes | None  # the published file, signatures included

    @property
    def size(self) -> int:
        return len(self.entries)


def read_state(lake: LakePaths, origin: str | None = None) -> LogState:
    """The published log: its checkpoint and the entries it covers, checked against each other (the
    checkpoint's signature is the verifier's business; here the tiles must agree with it)."""
    path = lake.log_dir / "checkpoint"
    if not path.is_file():
        return LogState(origin or configured_origin(), [], HashTree(), None)
    data = path.read_bytes()
    note, problem = parse_note(data)
    checkpoint, problem = parse_checkpoint_text(note.text) if note else (None, problem)
    if checkpoint is None:
        raise LogError(f"log/checkpoint is not a checkpoint: {problem}")
    if origin is not None and checkpoint.origin != origin:
        raise LogError(f"log/checkpoint has origin {checkpoint.origin!r}, not the configured {origin!r}")
    entries, problem = load_entries(lake.log_dir, checkpoint.size)
    if entries is None:
        raise LogError(f"the log cannot be read: {problem}")
    tree = tree_of(entries)
    if tree.root() != checkpoint.root:
        raise LogError(f"the log's entries do not hash to its checkpoint ({checkpoint.describe()}); "
                       "run `sevenmaps log check`")
    return LogState(checkpoint.origin, entries, tree, data)


@dataclass(frozen=True)
class Prepared:
    """The next checkpoint, built but not yet published."""

    origin: str
    old_size: int
    old_checkpoint: bytes | None
    entries: list[bytes]
    tree: HashTree
    checkpoint: Checkpoint
    note_text: str  # the checkpoint with the log's signature only

    @property
    def first_index(self) -> int:
        return self.old_size


def prepare(state: LogState, lines: list[str], key: Ed25519PrivateKey) -> Prepared:
    """Append `lines` to a copy of the log and sign the resulting checkpoint (Ed25519 is deterministic, so
    the same log and lines always give the same signed checkpoint)."""
    new = [line.encode() for line in lines]
    for entry in new:
        if len(entry) > MAX_ENTRY:
            raise LogError(f"a line of {len(entry)} bytes does not fit a log entry (max {MAX_ENTRY})")
    tree = state.tree.copy()
    for entry in new:
        tree.append(leaf_hash(entry))
    checkpoint = Checkpoint(state.origin, tree.size, tree.root() if tree.size else EMPTY_ROOT)
    text = checkpoint.text()
    note = Note(text, [sign(text, state.origin, key)]).render()
    return Prepared(state.origin, state.size, state.checkpoint_bytes, state.entries + new, tree, checkpoint, note)


def _write_immutable(path: Path, data: bytes) -> None:
    if path.is_file():
        if path.read_bytes() != data:
            raise LogConflict(f"{path.name} under log/ already holds other bytes; the log was written by someone "
                              "else (run `sevenmaps log check`)")
        return
    write_bytes_atomic(path, data)


def publish(lake: LakePaths, prepared: Prepared, cosignatures: list[str] | None = None) -> bytes:
    """Write the tiles the new size needs and swap the checkpoint in, if and only if the published one is
    still the one `prepared` was built on. Returns the published checkpoint bytes."""
    folder = lake.log_dir
    with locked(folder / ".checkpoint.lock"):
        path = lake.log_dir / "checkpoint"
        current = path.read_bytes() if path.is_file() else None
        if current != prepared.old_checkpoint:
            current_cp = None
            if current is not None:
                note, _ = parse_note(current)
                current_cp, _ = parse_checkpoint_text(note.text) if note else (None, None)
            raise LogConflict("the log's checkpoint changed while this one was prepared "
                              f"(expected size {prepared.old_size}, now "
                              f"{current_cp.describe() if current_cp else 'unreadable'}); nothing published")
        for rel, data in expected_files(prepared.tree, prepared.entries, prepared.tree.size).items():
            _write_immutable(folder / rel, data)
        published = (prepared.note_text + "".join(cosignatures or [])).encode()
        write_bytes_atomic(path, published)
    return published


def publish_vkey(lake: LakePaths, verifier: Verifier) -> None:
    path = lake.log_dir / "vkey"
    if path.is_file() and path.read_text().strip() != verifier.vkey:
        raise LogError(f"log/vkey holds another key ({path.read_text().strip()[:80]}) than the signing key's "
                       f"{verifier.vkey}")
    if not path.is_file():
        write_bytes_atomic(path, (verifier.vkey + "\n").encode())
