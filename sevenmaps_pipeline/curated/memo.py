"""Relations that several of a day's builds read, kept in this process while the files they were read from
stay the same.

A day's builds run in one process (curated.day.build_day, two at a time), so the second build that needs,
say, the change baseline takes it from here instead of decoding the same Parquet again; one that asks while
the first is still computing it waits for it. (What is too large to keep is read again instead: the facts of
a day's tool lists, 1.8 GB at 100,000 endpoints, curated/list_facts.py.) Each entry is keyed by the identity (inode,
size, modification time) of every file it was read from, taken before reading: every write in the lake is a
rename (lake.parquet_io), so a rewritten input has a new identity and the relation is read again. Another
process, or a changed input, computes it afresh: the same rows either way, so no figure depends on this
(docs/scaling.md).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

# One entry per relation: a day's builds share it, and the next day's replaces it. (A single-run backfill
# builds each asset over all its days before the next asset, so older days' entries would wait there for a
# reader that comes only after they are gone, holding tens of MB each.)
_ENTRIES: dict[tuple, Any] = {}
_LOCK = threading.Lock()
# One computation at a time per relation: builds side by side that need the same one compute it once.
_COMPUTING: dict[str, threading.RLock] = {}


def identity(paths: Iterable[Path]) -> tuple:
    """(path, inode, size, mtime_ns) of each file; (path, None) for one that does not exist."""
    out: list[tuple] = []
    for path in paths:
        try:
            st = os.stat(path)
            out.append((str(path), st.st_ino, st.st_size, st.st_mtime_ns))
        except FileNotFoundError:
            out.append((str(path), None))
    return tuple(out)


def remembered(name: str, params: tuple, inputs: Iterable[Path], compute: Callable[[], T],
               writes: Iterable[Path] = ()) -> T:
    """`compute()`, or its value from an earlier call with the same name, parameters and unchanged inputs.

    `writes`: files `compute` may write as it goes (a cache of its own); they are part of the key as they
    are after computing, so a value is reused only while they still stand as it left them (a deleted cache
    is written again)."""
    writes = list(writes)
    inputs = list(inputs)
    with _LOCK:
        computing = _COMPUTING.setdefault(name, threading.RLock())
    with computing:
        # Taken before computing: a value computed while an input was rewritten is filed under the identity
        # the input had before, which no file takes again (a rewrite is a new inode and time), so it is never
        # reused.
        before = identity(inputs)
        with _LOCK:
            key = (name, params, before, identity(writes))
            if key in _ENTRIES:
                return _ENTRIES[key]
        value = compute()
        with _LOCK:
            for stale in [k for k in _ENTRIES if k[0] == name]:
                del _ENTRIES[stale]
            _ENTRIES[(name, params, before, identity(writes))] = value
        return value


def forget() -> None:
    """Drop every entry (tests; a long-lived process that wants its memory back)."""
    with _LOCK:
        _ENTRIES.clear()
