"""Memory a long build has freed, given back to the system between its phases.

A build that reads and writes hundreds of megabytes in pieces (curated/tool_facts.py) frees most of what it
allocates, but the allocators keep the freed pages for later: Arrow's pool (mimalloc) and the C library's
heap, where a large object freed in the middle of the heap stays resident. Summed over a day's processes
that retained memory was what passed the day's peak (docs/scaling.md, "The day's peak memory"), so such a
build hands it back after each phase. Nothing is freed that is still in use: only pages the allocators
already hold free.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import gc
from collections.abc import Callable, Iterator

import pyarrow as pa


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim, or None where the C library has none (musl, macOS)."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        trim = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


def give_back_freed_memory() -> bool:
    """Return the free pages of Arrow's pool and of the C heap to the system; True when the C heap was
    trimmed too (glibc)."""
    pa.default_memory_pool().release_unused()
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


def collector_off_in_worker() -> None:
    """A pool worker's start, once what it keeps for every unit of work is loaded: that heap frozen out of
    the cyclic collector, and the collector off. A unit's objects (parsed lists, a part's statuses and pages)
    make no reference cycle, so the collections they set off only walked them again while they lived; the
    worker collects once after each unit instead (curated/tool_facts.py, publishing/site.py;
    docs/scaling.md)."""
    gc.collect()
    gc.freeze()
    gc.disable()


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector off for a block that builds a large heap without reference cycles (the day's site
    gathers what the index needs of 100,000 endpoints, then renders the index: the collections that heap set
    off walked it again, about half of rendering the index: docs/scaling.md), and as it was after. The cycles
    the process made before are collected first and their memory given back, so that they are not kept through
    the block (a Dagster run builds the day's site in the process that built its map)."""
    was_on = gc.isenabled()
    gc.collect()
    give_back_freed_memory()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
