"""C2SP tlog-checkpoint: the signed head of the log, `<origin>\\n<size>\\n<base64 root>\\n` as a signed note."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

from .merkle import EMPTY_ROOT, HASH_SIZE
from .note import OpenedNote, Verifier, open_note


@dataclass(frozen=True)
class Checkpoint:
    origin: str
    size: int
    root: bytes
    extensions: tuple[str, ...] = ()

    def text(self) -> str:
        lines = [self.origin, str(self.size), base64.b64encode(self.root).decode(), *self.extensions]
        return "\n".join(lines) + "\n"

    def describe(self) -> str:
        return f"{self.origin} size {self.size} root {base64.b64encode(self.root).decode()}"


def parse_checkpoint_text(text: str) -> tuple[Checkpoint | None, str | None]:
    if not isinstance(text, str) or not text.endswith("\n"):
        return None, "checkpoint text does not end in a newline"
    lines = text[:-1].split("\n")
    if len(lines) < 3:
        return None, "checkpoint has fewer than three lines (origin, size, root)"
    origin, size_text, root_text, *extensions = lines
    if not origin:
        return None, "checkpoint origin is empty"
    if not size_text.isascii() or not size_text.isdigit() or (size_text != "0" and size_text.startswith("0")):
        return None, f"checkpoint size {size_text[:40]!r} is not a decimal without leading zeroes"
    if len(size_text) > 20 or int(size_text) >= 1 << 63:
        return None, "checkpoint size is out of range"
    try:
        root = base64.b64decode(root_text.encode("ascii"), validate=True)
    except (binascii.Error, ValueError, UnicodeEncodeError):
        root = b""
    if len(root) != HASH_SIZE:
        return None, "checkpoint root is not base64 of a 32-byte hash"
    if any(not line for line in extensions):
        return None, "checkpoint has an empty extension line"
    size = int(size_text)
    if size == 0 and root != EMPTY_ROOT:
        return None, "a checkpoint of size 0 must carry the empty tree's root"
    return Checkpoint(origin, size, root, tuple(extensions)), None


def open_checkpoint(data: bytes | str, log: Verifier, origin: str | None = None,
                    extra: list[Verifier] | None = None) -> tuple[tuple[Checkpoint, OpenedNote] | None, str | None]:
    """A checkpoint signed by the trusted log key (and checked for the expected origin); signatures of
    `extra` keys (witnesses) are verified too when present."""
    opened, problem = open_note(data, [log, *(extra or [])])
    if opened is None:
        return None, problem
    if log not in opened.verified:
        return None, f"checkpoint is not signed by the log key {log.name}+{log.key_id:08x}"
    checkpoint, problem = parse_checkpoint_text(opened.text)
    if checkpoint is None:
        return None, problem
    if origin is not None and checkpoint.origin != origin:
        return None, f"checkpoint origin {checkpoint.origin!r} is not the log's origin {origin!r}"
    return (checkpoint, opened), None
