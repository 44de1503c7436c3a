"""Ed25519 signing keys: created with mode 0600 outside the lake; the public half is published in the lake."""

from __future__ import annotations

import base64
import json
import os
import stat
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from ..lake.parquet_io import write_bytes_atomic
from ..lake.paths import LakePaths
from ..packaged import workplace

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
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        raise SigningKeyError(f"signing key {path} is readable by others (mode {mode:o}); chmod 600 it")
    key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise SigningKeyError(f"{path} is not an Ed25519 private key")
    return key


def public_pem(key: Ed25519PrivateKey | Ed25519PublicKey) -> str:
    pub = key.public_key() if isinstance(key, Ed25519PrivateKey) else key
    return pub.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()


def read_published_key(lake: LakePaths) -> Ed25519PublicKey:
    if not lake.well_known.is_file():
        raise SigningKeyError(f"no public key published at {lake.well_known}")
    doc = json.loads(lake.well_known.read_text())
    pem = doc["integrity"]["public_key_pem"]
    key = serialization.load_pem_public_key(pem.encode())
    if not isinstance(key, Ed25519PublicKey):
        raise SigningKeyError(f"{lake.well_known} does not hold an Ed25519 public key")
    return key


def publish_public_key(lake: LakePaths, key: Ed25519PrivateKey) -> None:
    """Write `.well-known/7maps.json`, or check that the key already published is this key's."""
    mine = public_pem(key)
    if lake.well_known.is_file():
        if public_pem(read_published_key(lake)) != mine:
            raise SigningKeyError(
                f"the signing key does not match the public key published in {lake.well_known}; "
                "roots signed with it could not be verified"
            )
        return
    doc = {"integrity": {"algorithm": "Ed25519", "public_key_pem": mine,
                         "root": "sha256_hex(previous_root + '\\n' + '\\n'.join(lines)); signature over its 32 bytes"}}
    write_bytes_atomic(lake.well_known, (json.dumps(doc, indent=2) + "\n").encode())


def sign_root(key: Ed25519PrivateKey, root_hex: str) -> str:
    return base64.b64encode(key.sign(bytes.fromhex(root_hex))).decode()


def signature_valid(public: Ed25519PublicKey, root_hex: str, signature_b64: str) -> bool:
    try:
        public.verify(base64.b64decode(signature_b64, validate=True), bytes.fromhex(root_hex))
    except (InvalidSignature, ValueError):
        return False
    return True
