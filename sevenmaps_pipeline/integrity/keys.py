"""Ed25519 signing keys: created with mode 0600 outside the lake; the public half is published in the lake."""

from __future__ import annotations

import base64
import json
import os
import stat
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.asymmetric.mldsa import MLDSA44PrivateKey

from ..lake.parquet_io import write_bytes_atomic
from ..lake.paths import LakePaths
from ..packaged import workplace
from .capped import MAX_KEY_BYTES, Unreadable, read_capped

KEY_ENV = "SEVENMAPS_SIGNING_KEY"
DEFAULT_KEY = Path(".secrets") / "7maps-signing-key.pem"  # under the workplace (packaged.workplace)


class SigningKeyError(RuntimeError):
    pass


def default_key_path() -> Path:
    return Path(os.environ.get(KEY_ENV) or workplace() / DEFAULT_KEY).resolve()


def generate_key(path: Path, lake: LakePaths | None = None) -> Path:
    path = Path(path).resolve()
    if lake is not None:
        _refuse_inside_lake(path, lake)
    if path.exists():
        raise SigningKeyError(f"refusing to overwrite the existing signing key {path}")
    pem = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    write_bytes_atomic(path, pem, mode=0o600)
    os.chmod(path, 0o600)
    return path


def _refuse_inside_lake(path: Path, lake: LakePaths) -> None:
    if path.is_relative_to(lake.root):
        raise SigningKeyError(
            f"the signing key {path} must not live inside the lake {lake.root}: the lake is exported and signed"
        )


def load_private_key(path: Path, lake: LakePaths) -> Ed25519PrivateKey:
    path = Path(path).resolve()
    _refuse_inside_lake(path, lake)
    if not path.is_file():
        raise SigningKeyError(f"no signing key at {path}; create one with `sevenmaps keygen --out {path}`")
    return _read_private(path, "signing key")


def _read_private(path: Path, what: str, kinds: tuple[type, ...] = (Ed25519PrivateKey,)):
    """A private key in PEM, of one of `kinds`, that only its owner can read."""
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        raise SigningKeyError(f"{what} {path} is readable by others (mode {mode:o}); chmod 600 it")
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (ValueError, TypeError):
        raise SigningKeyError(f"{path} is not a PEM private key") from None
    if not isinstance(key, kinds):
        raise SigningKeyError(f"{path} is not an {' or '.join(k.__name__[:-10] for k in kinds)} private key")
    return key


def public_pem(key: Ed25519PrivateKey | Ed25519PublicKey) -> str:
    pub = key.public_key() if isinstance(key, Ed25519PrivateKey) else key
    return pub.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()


def public_key_from_pem(pem: str | bytes, where: str) -> Ed25519PublicKey:
    try:
        key = serialization.load_pem_public_key(pem.encode() if isinstance(pem, str) else pem)
    except (ValueError, TypeError):
        raise SigningKeyError(f"{where} does not hold a PEM public key (nor a 7maps.json)") from None
    if not isinstance(key, Ed25519PublicKey):
        raise SigningKeyError(f"{where} does not hold an Ed25519 public key")
    return key


def read_well_known(path: Path) -> dict[str, Any]:
    """The `integrity` object of a 7maps.json, checked for type; SigningKeyError names what is wrong."""
    try:
        doc = json.loads(read_capped(Path(path), MAX_KEY_BYTES, follow_links=True).decode("utf-8"))
    except Unreadable as exc:  # helper-93: a 64 GB 7maps.json was read whole (MemoryError)
        raise SigningKeyError(f"{path} cannot be read: {exc}") from None
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:  # nesting past any parser too
        raise SigningKeyError(f"{path} cannot be read as JSON ({type(exc).__name__}: {exc})"[:300]) from None
    integrity = doc.get("integrity") if isinstance(doc, dict) else None
    if not isinstance(integrity, dict) or not isinstance(integrity.get("public_key_pem"), str):
        raise SigningKeyError(f"{path} has no integrity.public_key_pem")
    return integrity


def read_published_key(lake: LakePaths) -> Ed25519PublicKey:
    if not lake.well_known.is_file():
        raise SigningKeyError(f"no public key published at {lake.well_known}")
    return public_key_from_pem(read_well_known(lake.well_known)["public_key_pem"], str(lake.well_known))


def read_trusted_key(path: Path) -> Ed25519PublicKey:
    """A key the user trusts: a PEM file, or a 7maps.json carrying integrity.public_key_pem."""
    path = Path(path)
    try:
        data = read_capped(path, MAX_KEY_BYTES, follow_links=True)
    except Unreadable as exc:
        raise SigningKeyError(f"cannot read the public key {path}: {exc}") from None
    if data.lstrip()[:1] in (b"{", b"["):
        return public_key_from_pem(read_well_known(path)["public_key_pem"], str(path))
    return public_key_from_pem(data, str(path))


def publish_public_key(lake: LakePaths, key: Ed25519PrivateKey, log_origin: str | None = None,
                       log_vkey: str | None = None) -> None:
    """Write `.well-known/7maps.json`, or check that the key already published is this key's (and add the
    log's origin and vkey to it once there is a log)."""
    mine = public_pem(key)
    doc: dict[str, Any] = {"integrity": {
        "algorithm": "Ed25519", "public_key_pem": mine,
        "root": "sha256_hex(previous_root + '\\n' + '\\n'.join(lines)); signature over its 32 bytes"}}
    if lake.well_known.is_file():
        if public_pem(read_published_key(lake)) != mine:
            raise SigningKeyError(
                f"the signing key does not match the public key published in {lake.well_known}; "
                "roots signed with it could not be verified"
            )
        doc = json.loads(lake.well_known.read_text())
    integrity = doc["integrity"]
    if log_vkey is not None and integrity.get("log_vkey") != log_vkey:
        if integrity.get("log_vkey") is not None:
            raise SigningKeyError(f"{lake.well_known} names another log key ({integrity['log_vkey'][:80]})")
        integrity.update(log_origin=log_origin, log_vkey=log_vkey,
                         log="C2SP tlog-tiles under log/: checkpoint, tile/<L>/<N>, tile/entries/<N>")
    elif lake.well_known.is_file():
        return
    write_bytes_atomic(lake.well_known, (json.dumps(doc, indent=2) + "\n").encode())


def sign_root(key: Ed25519PrivateKey, root_hex: str) -> str:
    return base64.b64encode(key.sign(bytes.fromhex(root_hex))).decode()


def signature_valid(public: Ed25519PublicKey, root_hex: str, signature_b64: str) -> bool:
    try:
        public.verify(base64.b64decode(signature_b64, validate=True), bytes.fromhex(root_hex))
    except (InvalidSignature, ValueError):
        return False
    return True


def generate_witness_key(path: Path, ed25519: bool = False) -> Path:
    """A witness's private key, mode 0600: ML-DSA-44 (what C2SP tlog-cosignature recommends for new
    witnesses), or Ed25519."""
    path = Path(path).resolve()
    if path.exists():
        raise SigningKeyError(f"refusing to overwrite the existing witness key {path}")
    key = Ed25519PrivateKey.generate() if ed25519 else MLDSA44PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    write_bytes_atomic(path, pem, mode=0o600)
    os.chmod(path, 0o600)
    return path


def load_witness_key(path: Path) -> Ed25519PrivateKey | MLDSA44PrivateKey:
    """A witness's private key (PEM, mode 0600): ML-DSA-44 or Ed25519."""
    path = Path(path).resolve()
    if not path.is_file():
        raise SigningKeyError(f"no witness key at {path}")
    return _read_private(path, "witness key", (Ed25519PrivateKey, MLDSA44PrivateKey))
