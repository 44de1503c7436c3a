"""A host held by one process at a time, across the runs of one lake (docs/operations.md, "Schedules").

Each cadence runs in a lane of its own, so a slice, the readiness probe, the hourly and five-minute checks
and the submitted servers' checks may contact servers side by side, each in its own run process. Inside a
process the host runner gives a host one session at a time (probe/hosts.py); across processes this lease
does: a host's session holds the host's lease for as long as it has the host, so two runs never have one
host in flight at once and the rule stays one request at a time per host (docs/methodology.md,
"Politeness").

The lease is a POSIX record lock on one byte of one file in the lake (`<lake>/.host-leases`), at an offset
named by the host's hash: the kernel drops it when its process ends, however it ends, so a killed run
never leaves a host held. Record locks belong to the process (two sessions of one process never exclude
each other; the host runner's own lock does that), and closing any descriptor of the file drops them all:
so the file is opened once per process and never closed, and a process counts its own holders of each
byte. Two hosts whose hashes share a byte (one chance in 2**40 per pair) only wait for each other.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import hashlib
import os
import threading
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

_lock = threading.Lock()
_files: dict[Path, int] = {}
_held: Counter[tuple[Path, int]] = Counter()


def _forget_after_fork() -> None:
    # A forked child holds none of its parent's record locks: it must take its own.
    global _lock
    _lock = threading.Lock()
    _files.clear()
    _held.clear()


os.register_at_fork(after_in_child=_forget_after_fork)


def offset_of(host: str) -> int:
    return int.from_bytes(hashlib.sha256(host.lower().encode()).digest()[:5], "big")


def _descriptor(path: Path) -> int:
    if path not in _files:
        path.parent.mkdir(parents=True, exist_ok=True)
        _files[path] = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    return _files[path]


def try_take(path: Path, host: str) -> bool:
    """Take the host's lease for this process now, or say it is held by another process."""
    key = (path, offset_of(host))
    with _lock:
        if _held[key] == 0:
            try:
                fcntl.lockf(_descriptor(path), fcntl.LOCK_EX | fcntl.LOCK_NB, 1, key[1])
            except OSError as exc:
                if exc.errno in (errno.EACCES, errno.EAGAIN):
                    return False
                raise
        _held[key] += 1
        return True


def give_back(path: Path, host: str) -> None:
    key = (path, offset_of(host))
    with _lock:
        _held[key] -= 1
        if _held[key] == 0:
            del _held[key]
            fcntl.lockf(_descriptor(path), fcntl.LOCK_UN, 1, key[1])


@contextlib.asynccontextmanager
async def host_lease(path: Path | None, host: str, poll_seconds: float = 0.05) -> AsyncIterator[None]:
    """Hold `host` against every other process of the lake whose leases are at `path` (None: no lease,
    a loop outside any lake such as `sevenmaps probe`). Waits, without blocking the event loop, while
    another process holds it."""
    if path is None:
        yield
        return
    while not try_take(path, host):
        await asyncio.sleep(poll_seconds)
    try:
        yield
    finally:
        give_back(path, host)
