"""C2SP signed notes with Ed25519 (signature type 0x01) and tlog-cosignature/v1: Ed25519 (type 0x04) and
ML-DSA-44 (type 0x06, the spec's choice for new witnesses).

A note is text ending in a newline, a blank line, and signature lines `— <name> base64(key ID || sig)`.
A verifier key (vkey) is `<name>+<hex key ID>+base64(type || 32-byte public key)`. Parsing never raises:
every function answers with a reason when the input is not what the spec says (docs/verifying.md).
Checked against the examples of golang.org/x/mod/sumdb/note and a real sum.golang.org checkpoint
(tests/vectors/signed-note.json)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import struct
import unicodedata
from dataclasses import dataclass, field

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.asymmetric.mldsa import MLDSA44PrivateKey, MLDSA44PublicKey

ED25519 = 0x01
COSIGNATURE_V1 = 0x04
COSIGNATURE_MLDSA44 = 0x06
COSIGNATURE_TYPES = (COSIGNATURE_V1, COSIGNATURE_MLDSA44)
KEY_SIZES = {ED25519: 32, COSIGNATURE_V1: 32, COSIGNATURE_MLDSA44: 1312}
SIGNATURE_SIZES = {ED25519: 64, COSIGNATURE_V1: 64, COSIGNATURE_MLDSA44: 2420}
DASH = "\u2014"
MAX_SIGNATURES = 100  # the spec asks for at least 16; golang.org/x/mod/sumdb/note accepts 100
MAX_NOTE_BYTES = 1 << 20


def _b64decode(text: str) -> bytes | None:
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, ValueError, UnicodeEncodeError):
        return None


def valid_name(name: str) -> bool:
    """Non-empty, no Unicode space, no plus, no control character."""
    return bool(name) and "+" not in name and not any(
        ch.isspace() or unicodedata.category(ch) in ("Zs", "Zl", "Zp", "Cc") for ch in name)


def key_id(name: str, sig_type: int, public: bytes) -> int:
    return int.from_bytes(hashlib.sha256(name.encode() + b"\n" + bytes([sig_type]) + public).digest()[:4], "big")


@dataclass(frozen=True)
class Verifier:
    """A trusted public key under a name: the log's (type 0x01) or a witness's (type 0x04)."""

    name: str
    sig_type: int
    public: bytes  # 32-byte Ed25519 key

    @property
    def key_id(self) -> int:
        return key_id(self.name, self.sig_type, self.public)

    @property
    def vkey(self) -> str:
        return f"{self.name}+{self.key_id:08x}+{base64.b64encode(bytes([self.sig_type]) + self.public).decode()}"

    def public_key(self) -> Ed25519PublicKey | MLDSA44PublicKey:
        if self.sig_type == COSIGNATURE_MLDSA44:
            return MLDSA44PublicKey.from_public_bytes(self.public)
        return Ed25519PublicKey.from_public_bytes(self.public)

    def verify(self, text: str, signature: bytes) -> bool:
        """`signature` without its 4-byte key ID."""
        message = text.encode()
        if self.sig_type in COSIGNATURE_TYPES:
            if len(signature) != 8 + SIGNATURE_SIZES[self.sig_type]:
                return False
            timestamp = struct.unpack(">Q", signature[:8])[0]
            if timestamp >= 1 << 63:
                return False
            if self.sig_type == COSIGNATURE_V1:
                message = cosigned_message(text, timestamp)
            else:
                subtree = subtree_message(self.name, text, timestamp)
                if subtree is None:
                    return False
                message = subtree
            signature = signature[8:]
        elif len(signature) != 64:
            return False
        try:
            self.public_key().verify(signature, message)
        except (InvalidSignature, ValueError):
            return False
        return True


def verifier_for(name: str, public: Ed25519PublicKey | MLDSA44PublicKey | bytes, sig_type: int = ED25519) -> Verifier:
    raw = public if isinstance(public, bytes) else public.public_bytes_raw()
    return Verifier(name, sig_type, raw)


def parse_vkey(text: str) -> tuple[Verifier | None, str | None]:
    """A vkey string -> (Verifier, None), or (None, why it is not one)."""
    if not isinstance(text, str):
        return None, "a vkey must be text"
    text = text.strip()
    parts = text.split("+", 2)  # base64 may hold "+"; a name and a key id never do
    if len(parts) != 3:
        return None, f"not a vkey (<name>+<hex key id>+<base64 key>): {text[:80]!r}"
    name, hex_id, b64 = parts
    if not valid_name(name):
        return None, f"vkey name {name[:60]!r} is empty or has a space or control character"
    if len(hex_id) != 8 or any(c not in "0123456789abcdef" for c in hex_id):
        return None, f"vkey key id {hex_id[:20]!r} is not 8 lower-case hex digits"
    material = _b64decode(b64)
    if material is None or not material:
        return None, "vkey key material is not base64 of a type byte and a public key"
    if material[0] not in KEY_SIZES:
        return None, (f"vkey signature type 0x{material[0]:02x} is not Ed25519 (0x01) or a cosignature/v1 key "
                      "(0x04 Ed25519, 0x06 ML-DSA-44)")
    if len(material) != 1 + KEY_SIZES[material[0]]:
        return None, f"vkey key material is not a type byte and a {KEY_SIZES[material[0]]}-byte public key"
    verifier = Verifier(name, material[0], material[1:])
    try:
        verifier.public_key()
    except ValueError:
        return None, "vkey key material is not an Ed25519 public key"
    if verifier.key_id != int(hex_id, 16):
        return None, f"vkey key id {hex_id} does not match its name and key (expected {verifier.key_id:08x})"
    return verifier, None


@dataclass(frozen=True)
class Signature:
    name: str
    key_id: int
    signature: bytes  # after the key ID

    def line(self) -> str:
        blob = self.key_id.to_bytes(4, "big") + self.signature
        return f"{DASH} {self.name} {base64.b64encode(blob).decode()}\n"


@dataclass
class Note:
    text: str
    signatures: list[Signature] = field(default_factory=list)

    def render(self) -> str:
        return self.text + "\n" + "".join(s.line() for s in self.signatures)


def parse_note(data: bytes | str) -> tuple[Note | None, str | None]:
    """Split a signed note into its text and signature lines, checking the form only."""
    if isinstance(data, bytes):
        if len(data) > MAX_NOTE_BYTES:
            return None, f"note larger than {MAX_NOTE_BYTES} bytes"
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError:
            return None, "note is not valid UTF-8"
    if not isinstance(data, str):
        return None, "note must be text"
    if any(ord(c) < 0x20 and c != "\n" for c in data):
        return None, "note contains a control character other than newline"
    cut = data.rfind("\n\n")
    if cut < 0:
        return None, "note has no blank line before its signatures"
    text, sig_block = data[:cut + 1], data[cut + 2:]
    if not sig_block:  # the last blank line ends the note: lines after the signatures, or none at all
        return None, "note ends in a blank line: nothing may follow its signature lines"
    if not sig_block.endswith("\n"):
        return None, "note's signature block does not end in a newline"
    signatures: list[Signature] = []
    for line in sig_block[:-1].split("\n"):
        if len(signatures) >= MAX_SIGNATURES:
            return None, f"note has more than {MAX_SIGNATURES} signatures"
        if not line.startswith(DASH + " "):
            return None, f"not a signature line: {line[:80]!r}"
        pieces = line[2:].split(" ")
        if len(pieces) != 2 or not valid_name(pieces[0]):
            return None, f"malformed signature line: {line[:80]!r}"
        blob = _b64decode(pieces[1])
        if blob is None or len(blob) < 5:
            return None, f"signature of {pieces[0]!r} is not base64 of a key id and a signature"
        signatures.append(Signature(pieces[0], int.from_bytes(blob[:4], "big"), blob[4:]))
    if not signatures:
        return None, "note has no signatures"
    return Note(text, signatures), None


@dataclass
class OpenedNote:
    text: str
    verified: list[Verifier]
    unverified: list[Signature]
    note: Note


def open_note(data: bytes | str, verifiers: list[Verifier]) -> tuple[OpenedNote | None, str | None]:
    """Verify a note against trusted keys: signatures of unknown keys are ignored; a known key whose
    signature fails rejects the note; no verified known signature rejects it."""
    note, problem = parse_note(data)
    if note is None:
        return None, problem
    known = {(v.name, v.key_id): v for v in verifiers}
    verified: list[Verifier] = []
    unverified: list[Signature] = []
    for sig in note.signatures:
        verifier = known.get((sig.name, sig.key_id))
        if verifier is None:
            unverified.append(sig)
            continue
        if not verifier.verify(note.text, sig.signature):
            return None, f"invalid signature for key {sig.name}+{sig.key_id:08x}"
        if verifier not in verified:
            verified.append(verifier)
    if not verified:
        names = ", ".join(sorted({f"{s.name}+{s.key_id:08x}" for s in note.signatures}))
        return None, f"no signature from a trusted key (the note is signed by {names})"
    return OpenedNote(note.text, verified, unverified, note), None


def sign(text: str, name: str, key: Ed25519PrivateKey) -> Signature:
    """An Ed25519 (0x01) note signature over `text` (which must end in a newline)."""
    if not text.endswith("\n") or not valid_name(name):
        raise ValueError("a note text ends in a newline and a key name has no space or plus")
    public = key.public_key().public_bytes_raw()
    return Signature(name, key_id(name, ED25519, public), key.sign(text.encode()))


def cosigned_message(text: str, timestamp: int) -> bytes:
    return f"cosignature/v1\ntime {timestamp}\n".encode() + text.encode()


def subtree_message(name: str, text: str, timestamp: int) -> bytes | None:
    """The ML-DSA-44 cosigned_message of a checkpoint text: "subtree/v1\\n\\0", the cosigner name and the log
    origin as 1-byte-length strings, u64 timestamp, u64 start (0), u64 end (the size), the 32-byte root."""
    lines = text.split("\n")
    if len(lines) < 4:
        return None
    origin, size, root = lines[0].encode(), lines[1], _b64decode(lines[2])
    cosigner = name.encode()
    if not (size.isdigit() and root and len(root) == 32 and 0 < len(origin) < 256 and 0 < len(cosigner) < 256):
        return None
    return (b"subtree/v1\n\x00" + bytes([len(cosigner)]) + cosigner + struct.pack(">Q", timestamp)
            + bytes([len(origin)]) + origin + struct.pack(">QQ", 0, int(size)) + root)


def cosign(text: str, name: str, key: Ed25519PrivateKey | MLDSA44PrivateKey, timestamp: int) -> Signature:
    """A tlog-cosignature/v1 over a checkpoint text: key ID || u64 timestamp || signature, Ed25519 (0x04) or
    ML-DSA-44 (0x06) by the key's kind."""
    if not 0 < timestamp < 1 << 63:
        raise ValueError("a cosignature timestamp is a positive POSIX time")
    public = key.public_key().public_bytes_raw()
    if isinstance(key, MLDSA44PrivateKey):
        message = subtree_message(name, text, timestamp)
        if message is None:
            raise ValueError("ML-DSA-44 cosignatures are over checkpoints with a name and origin under 256 bytes")
        return Signature(name, key_id(name, COSIGNATURE_MLDSA44, public),
                         struct.pack(">Q", timestamp) + key.sign(message))
    return Signature(name, key_id(name, COSIGNATURE_V1, public),
                     struct.pack(">Q", timestamp) + key.sign(cosigned_message(text, timestamp)))


def cosigner_type(key: Ed25519PrivateKey | MLDSA44PrivateKey) -> int:
    return COSIGNATURE_MLDSA44 if isinstance(key, MLDSA44PrivateKey) else COSIGNATURE_V1


def cosignature_time(sig: Signature) -> int | None:
    return struct.unpack(">Q", sig.signature[:8])[0] if len(sig.signature) in (72, 8 + 2420) else None
