"""A listening witness bounds what a caller can hold (integrity/witness.py `serve`, on loopback): half-sent
requests are cut at the deadline, a trickle of bytes does not keep a connection open, connections past the
cap are closed at once, and after a flood the witness answers again. The deadline is injected (1 s); the
waits below are generous."""

from __future__ import annotations

import socket
import time

import httpx
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from sevenmaps_pipeline.integrity.witness import Witness, serve

DEADLINE_S = 1.0


def _witness(tmp_path, max_connections: int = 8):
    w = Witness("witness.test/w1", Ed25519PrivateKey.generate(), [], tmp_path / "witness-state.json")
    server = serve(w, request_seconds=DEADLINE_S, max_connections=max_connections)
    return server, server.server_address[1]


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the witness closed the connection (an empty read or a reset) within `seconds`."""
    sock.settimeout(seconds)
    try:
        return sock.recv(1024) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def test_half_sent_requests_are_cut_and_the_witness_answers_again(tmp_path):
    server, port = _witness(tmp_path, max_connections=8)
    try:
        flood = []
        for i in range(40):  # headers that never end, or a body shorter than its Content-Length
            sock = socket.create_connection(("127.0.0.1", port))
            sock.sendall(b"POST /add-checkpoint HTTP/1.1\r\nHost: w\r\nContent-Length: 100\r\n"
                         + (b"\r\npartial" if i % 2 else b""))
            flood.append(sock)
        started = time.monotonic()
        assert all(_closed_within(sock, 30) for sock in flood), "a half-sent request was held open"
        assert time.monotonic() - started < 30
        answer = httpx.get(f"http://127.0.0.1:{port}/", timeout=30)
        assert answer.status_code in (200, 404)  # it answers: the flood took nothing lasting
    finally:
        for sock in flood:
            sock.close()
        server.shutdown()


def test_a_trickle_of_bytes_does_not_hold_a_connection(tmp_path):
    server, port = _witness(tmp_path)
    try:
        sock = socket.create_connection(("127.0.0.1", port))
        closed = False
        for byte in b"POST /add-checkpoint HTTP/1.1\r\nHost: w\r\nX-Slow: " + b"a" * 40:
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                closed = True
                break
            if _closed_within(sock, 0.2):  # one byte every 0.2 s: each read alone is quick, the whole is not
                closed = True
                break
        assert closed, "a request sent a byte at a time outlived the witness's deadline"
        sock.close()
    finally:
        server.shutdown()


def test_connections_past_the_cap_are_closed_at_once(tmp_path):
    server, port = _witness(tmp_path, max_connections=2)
    try:
        held = [socket.create_connection(("127.0.0.1", port)) for _ in range(2)]
        time.sleep(0.2)  # the two are accepted and waiting for their requests
        extra = socket.create_connection(("127.0.0.1", port))
        assert _closed_within(extra, DEADLINE_S / 2), "a connection past the cap was kept"
        for sock in (*held, extra):
            sock.close()
    finally:
        server.shutdown()
