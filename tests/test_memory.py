"""lake/memory.py: freed memory handed back between a build's phases, nothing in use touched."""

from __future__ import annotations

import platform

import pyarrow as pa

from sevenmaps_pipeline.lake.memory import give_back_freed_memory


def test_freed_memory_is_given_back_and_what_is_in_use_stays():
    kept = pa.array([f"description {i}" * 20 for i in range(50_000)])
    freed = [bytes(200_000) for _ in range(200)]  # large blocks in the C heap, then freed
    del freed
    trimmed = give_back_freed_memory()
    if platform.system() == "Linux" and platform.libc_ver()[0] == "glibc":
        assert trimmed
    assert kept[49_999].as_py() == "description 49999" * 20
    assert pa.default_memory_pool().bytes_allocated() >= kept.nbytes
