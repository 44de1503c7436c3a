"""The SHA-256 of a file, read a block at a time (a file may be far larger than memory)."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from pathlib import Path
from typing import BinaryIO

NOT_REGULAR = "not a regular file (a FIFO, a device or a folder)"


def open_regular(path: Path, follow_links: bool = False) -> BinaryIO:
    """`path` opened for reading only if it is a regular file: a link is not followed (unless `follow_links`: a
    path the user gave: ELOOP), and a FIFO or device is refused before any read (EINVAL, NOT_REGULAR). A FIFO read
    waits for a writer for good, a link to /proc/self/pagemap reads for hours (helper-98; docs/verifying.md, "What
    verify reads")."""
    flags = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | (0 if follow_links else os.O_NOFOLLOW)
    fh = os.fdopen(os.open(path, flags), "rb")  # O_NONBLOCK: opening a FIFO never waits for a writer
    if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
        fh.close()
        raise OSError(errno.EINVAL, NOT_REGULAR, str(path))
    return fh


def sha256_file(path: Path, follow_links: bool = False) -> str:
    """The SHA-256 of a regular file (open_regular), streamed."""
    digest = hashlib.sha256()
    with open_regular(path, follow_links) as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
