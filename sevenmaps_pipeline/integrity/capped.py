"""Reading a file that someone else may have made, within bounds: a regular file only (no link followed, and no
FIFO or device opened for a read that could block or never end), never more than a cap, and every failure one
named reason rather than a hang or a MemoryError (docs/verifying.md, "What verify reads")."""

from __future__ import annotations

import errno
import os
from pathlib import Path

from ..lake.digests import open_regular

# A key file, 7maps.json or log/vkey: a few hundred bytes.
MAX_KEY_BYTES = 1 << 20
# SHA256SUMS and WITHHELD.txt: a line of about 150 bytes per file; a year of the registry's days is far below.
MAX_LIST_BYTES = 256 << 20


class Unreadable(Exception):
    """Why a file was not read, in a few words (its path is the caller's to name)."""


def read_capped(path: Path, cap: int, follow_links: bool = False) -> bytes:
    """At most `cap` bytes of the regular file at `path`, or Unreadable saying why not: a link (unless
    `follow_links`: a path the user gave), anything but a regular file, a file larger than `cap`, or the
    system's own error."""
    try:
        with open_regular(path, follow_links) as fh:
            if os.fstat(fh.fileno()).st_size > cap:
                raise Unreadable(f"larger than {cap:,} bytes")
            data = fh.read(cap + 1)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow_links:
            raise Unreadable("a link, not a file") from None
        raise Unreadable(exc.strerror or type(exc).__name__) from None
    except MemoryError:
        raise Unreadable("too large to hold in memory") from None
    if len(data) > cap:  # it grew while being read
        raise Unreadable(f"larger than {cap:,} bytes")
    return data


def read_text_capped(path: Path, cap: int, follow_links: bool = False) -> str:
    """read_capped as UTF-8 text, any byte that is not shown as U+FFFD."""
    return read_capped(path, cap, follow_links).decode("utf-8", errors="replace")
