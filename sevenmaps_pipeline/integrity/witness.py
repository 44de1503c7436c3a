"""A minimal C2SP tlog-witness: `POST /add-checkpoint` cosigns (tlog-cosignature/v1: ML-DSA-44, or Ed25519
with an Ed25519 key) a checkpoint of
a known log only when it is consistent with the last one it cosigned for that origin; `GET
/<sha256(origin) hex>/checkpoint` serves the latest one it cosigned. Its state (one size and root per
origin) is checked and updated atomically under a lock; refused checkpoints are kept as evidence."""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import hashlib
import json
import socket
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.mldsa import MLDSA44PrivateKey

from ..lake.parquet_io import write_bytes_atomic
from .checkpoint import Checkpoint, parse_checkpoint_text
from .log import locked
from .merkle import EMPTY_ROOT, HashTree, verify_consistency
from .note import (
    COSIGNATURE_TYPES,
    DASH,
    Signature,
    Verifier,
    cosign,
    cosigner_type,
    open_note,
    parse_note,
    parse_vkey,
    verifier_for,
)

MAX_BODY = 64 * 1024
SIZE_TYPE = "text/x.tlog.size"


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes
    content_type: str = "text/plain; charset=utf-8"


def _text(status: int, message: str) -> Answer:
    return Answer(status, (message.rstrip("\n") + "\n").encode())


class Witness:
    """The witness's logic, apart from HTTP: known logs by origin, its key, its state file."""

    def __init__(self, name: str, key: Ed25519PrivateKey | MLDSA44PrivateKey, logs: list[Verifier], state_path: Path,
                 clock=time.time) -> None:
        self.name, self.key, self.state_path, self.clock = name, key, Path(state_path), clock
        self.logs = {v.name: v for v in logs}
        self.verifier = verifier_for(name, key.public_key(), cosigner_type(key))
        self._thread_lock = threading.Lock()

    def _read_state(self) -> dict:
        if not self.state_path.is_file():
            return {}
        return json.loads(self.state_path.read_text())

    def latest(self, origin: str) -> bytes | None:
        entry = self._read_state().get(origin)
        return entry["checkpoint"].encode() if entry else None

    def _keep_refused(self, body: bytes, why: str) -> None:
        evidence = self.state_path.with_suffix(".refused")
        stamp = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        with open(evidence, "ab") as fh:
            fh.write(f"# {stamp} refused: {why}\n".encode() + body + b"\n")

    def add_checkpoint(self, body: bytes) -> Answer:
        request = _parse_add_checkpoint(body)
        if isinstance(request, Answer):
            return request
        old, proof, note_bytes = request
        note, problem = parse_note(note_bytes)
        if note is None:
            return _text(400, f"not a signed note: {problem}")
        origin = note.text.split("\n", 1)[0]
        log = self.logs.get(origin)
        if log is None:
            return _text(404, f"unknown log origin {origin[:100]!r}")
        opened, problem = open_note(note_bytes, [log])
        if opened is None:
            return _text(403, f"checkpoint not signed by the log's key: {problem}")
        checkpoint, problem = parse_checkpoint_text(note.text)
        if checkpoint is None:
            if problem and "size 0" in problem:
                return _text(422, problem)
            return _text(400, f"not a checkpoint: {problem}")
        if old > checkpoint.size:
            return _text(400, f"old size {old} is larger than the checkpoint size {checkpoint.size}")
        with self._thread_lock, locked(self.state_path.with_suffix(".lock")):
            state = self._read_state()
            known = state.get(origin)
            known_size = known["size"] if known else 0
            known_root = base64.b64decode(known["root"]) if known else EMPTY_ROOT
            if old != known_size:
                return Answer(409, f"{known_size}\n".encode(), SIZE_TYPE)
            if old == 0 and proof:
                return _text(422, "a proof from size 0 must be empty")
            problem = verify_consistency(old, checkpoint.size, proof, known_root, checkpoint.root) if old else None
            if problem:
                self._keep_refused(body, problem)
                return _text(422, f"not consistent with the checkpoint of size {old} I cosigned: {problem}")
            timestamp = max(int(self.clock()), 1)
            signature = cosign(note.text, self.name, self.key, timestamp)
            # The checkpoint as cosigned: the log's own signature lines, then ours.
            log_lines = "".join(s.line() for s in note.signatures if (s.name, s.key_id) == (log.name, log.key_id))
            state[origin] = {"size": checkpoint.size, "root": base64.b64encode(checkpoint.root).decode(),
                             "checkpoint": note.text + "\n" + log_lines + signature.line(), "cosigned_at": timestamp}
            write_bytes_atomic(self.state_path, (json.dumps(state, indent=2) + "\n").encode())
        return Answer(200, signature.line().encode())

    def monitoring(self, path: str) -> Answer:
        parts = path.strip("/").split("/")
        if len(parts) == 2 and parts[1] == "checkpoint":
            for origin in self._read_state():
                if hashlib.sha256(origin.encode()).hexdigest() == parts[0]:
                    return Answer(200, self.latest(origin) or b"")
        return _text(404, "no checkpoint cosigned for that origin")


def _parse_add_checkpoint(body: bytes) -> tuple[int, list[bytes], bytes] | Answer:
    """An add-checkpoint request's old size, consistency proof and checkpoint note (C2SP tlog-witness), or
    the 400 answer that says what is wrong with it."""
    if len(body) > MAX_BODY:
        return _text(400, f"request larger than {MAX_BODY} bytes")
    head, sep, note_bytes = body.partition(b"\n\n")
    if not sep:
        return _text(400, "no empty line before the checkpoint")
    try:
        lines = head.decode("ascii").split("\n")
    except UnicodeDecodeError:
        return _text(400, "the old size and proof lines are not ASCII")
    if not lines[0].startswith("old "):
        return _text(400, "the first line is not 'old <size>'")
    old_text = lines[0][4:]
    if not old_text.isdigit() or (old_text != "0" and old_text.startswith("0")) or len(old_text) > 19:
        return _text(400, "old size is not a decimal without leading zeroes")
    proof = []
    for line in lines[1:]:
        try:
            value = base64.b64decode(line, validate=True)
        except ValueError:
            value = b""
        if len(value) != 32:
            return _text(400, "a consistency proof line is not base64 of a 32-byte hash")
        proof.append(value)
    if len(proof) > 63:
        return _text(400, "more than 63 consistency proof lines")
    return int(old_text), proof, note_bytes


# A listening witness bounds what a caller can hold (docs/verifying.md, "Witnesses"): a request, headers and
# body, must arrive whole within REQUEST_SECONDS or its connection is cut; at most MAX_CONNECTIONS are open at
# once, and one past them is closed at once; every answer closes its connection (HTTP/1.0), so nothing idles.
REQUEST_SECONDS = 10.0
MAX_CONNECTIONS = 64


class _BoundedServer(ThreadingHTTPServer):
    """ThreadingHTTPServer with a cap on open connections: one past the cap is closed unread."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], max_connections: int):
        super().__init__(address, handler)
        self._slots = threading.BoundedSemaphore(max_connections)

    def process_request(self, request, client_address) -> None:
        if not self._slots.acquire(blocking=False):
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request, client_address) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()


def serve(witness: Witness, host: str = "127.0.0.1", port: int = 0, request_seconds: float = REQUEST_SECONDS,
          max_connections: int = MAX_CONNECTIONS) -> ThreadingHTTPServer:
    """Start the witness's HTTP server in a thread; returns the server (server_address has the port). A
    request slower than `request_seconds` in all, or one past `max_connections` open, is cut."""
    class Handler(BaseHTTPRequestHandler):
        server_version = "sevenmaps-witness"
        timeout = request_seconds  # each read; the deadline below bounds the whole request

        def setup(self) -> None:
            super().setup()
            self._deadline = threading.Timer(request_seconds, self._cut)
            self._deadline.daemon = True
            self._deadline.start()

        def _cut(self) -> None:
            # wakes a read that is still waiting: a half-sent request never holds its thread
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)

        def finish(self) -> None:
            self._deadline.cancel()
            with contextlib.suppress(OSError):  # the connection was cut or reset: nothing left to flush
                super().finish()

        def handle(self) -> None:
            try:
                super().handle()
            except OSError:  # cut at the deadline, timed out, or reset by the caller: its own connection ends
                self.close_connection = True

        def _answer(self, answer: Answer) -> None:
            self.send_response(answer.status)
            self.send_header("Content-Type", answer.content_type)
            self.send_header("Content-Length", str(len(answer.body)))
            self.end_headers()
            self.wfile.write(answer.body)

        def do_POST(self) -> None:  # noqa: N802 - the http.server convention
            if self.path.rstrip("/") != "/add-checkpoint":
                return self._answer(_text(404, "POST /add-checkpoint"))
            try:
                length = int(self.headers.get("Content-Length") or "0")
            except ValueError:
                length = -1
            if not 0 <= length <= MAX_BODY:
                return self._answer(_text(400, f"a request body of 0..{MAX_BODY} bytes with Content-Length"))
            body = self.rfile.read(length)
            if len(body) < length:  # the caller stopped sending (or was cut): no answer to give
                self.close_connection = True
                return None
            self._answer(witness.add_checkpoint(body))

        def do_GET(self) -> None:  # noqa: N802
            self._answer(witness.monitoring(self.path))

        def log_message(self, format: str, *args) -> None:  # noqa: A002 - quiet unless asked
            pass

    server = _BoundedServer((host, port), Handler, max_connections)
    threading.Thread(target=server.serve_forever, daemon=True, name="witness").start()
    return server


# --- the log's side: asking a witness --------------------------------------------------------------------


@dataclass(frozen=True)
class WitnessConfig:
    verifier: Verifier  # its cosignature vkey (type 0x04 or 0x06)
    url: str  # submission prefix

    @classmethod
    def parse(cls, text: str) -> WitnessConfig:
        """'<vkey> <url>' (as in a tlog-policy witness line, without the name)."""
        parts = text.split()
        if len(parts) != 2:
            raise ValueError(f"a witness is '<vkey> <url>', got {text[:120]!r}")
        verifier, problem = parse_vkey(parts[0])
        if verifier is None:
            raise ValueError(f"witness vkey: {problem}")
        if verifier.sig_type not in COSIGNATURE_TYPES:
            raise ValueError(f"witness vkey {verifier.name} is not a cosignature/v1 key (0x04 or 0x06)")
        return cls(verifier, parts[1].rstrip("/"))


def request_body(old_size: int, proof: list[bytes], note_text: str) -> bytes:
    lines = [f"old {old_size}"] + [base64.b64encode(h).decode() for h in proof]
    return ("\n".join(lines) + "\n\n" + note_text).encode()


def ask_witness(config: WitnessConfig, note_text: str, checkpoint: Checkpoint, tree: HashTree, old_size: int,
                timeout: float = 10.0) -> tuple[str | None, str | None]:
    """One cosignature line from the witness, verified, or why there is none. A 409 names the size the
    witness holds; we retry once from there."""
    try:
        with httpx.Client(timeout=timeout, trust_env=False) as client:
            for _ in range(2):
                proof = tree.consistency_proof(old_size, checkpoint.size) if 0 < old_size <= checkpoint.size else []
                answer = client.post(config.url + "/add-checkpoint", content=request_body(old_size, proof, note_text))
                if answer.status_code == 409:
                    text = answer.text.strip()
                    if not text.isdigit() or int(text) > checkpoint.size:
                        return None, f"witness {config.verifier.name} holds size {text[:30]!r}, ahead of ours"
                    old_size = int(text)
                    continue
                break
    except httpx.HTTPError as exc:
        return None, f"witness {config.verifier.name} at {config.url}: {type(exc).__name__}: {exc}"
    if answer.status_code != 200:
        return None, f"witness {config.verifier.name} answered {answer.status_code}: {answer.text.strip()[:200]}"
    for line in answer.text.splitlines():
        pieces = line.split(" ")
        if len(pieces) != 3 or pieces[0] != DASH or pieces[1] != config.verifier.name:
            continue
        try:
            blob = base64.b64decode(pieces[2], validate=True)
        except ValueError:
            continue
        sig = Signature(pieces[1], int.from_bytes(blob[:4], "big"), blob[4:])
        if sig.key_id == config.verifier.key_id and config.verifier.verify(checkpoint.text(), sig.signature):
            return sig.line(), None
    return None, f"witness {config.verifier.name} sent no valid cosignature"
