"""The SHA-256 of a file, read a block at a time (a file may be far larger than memory)."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from pathlib import Path


def sha256_file(path: Path, follow_links: bool = False) -> str:
    """The SHA-256 of a regular file, streamed. A link is not followed (unless `follow_links`: a path the user gave),
    and a FIFO or device is refused before any read (OSError): a FIFO read waits for a writer for good, a link to
    /proc/self/pagemap reads for hours (helper-98; docs/verifying.md, "What verify reads")."""
    flags = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | (0 if follow_links else os.O_NOFOLLOW)
    digest = hashlib.sha256()
    with os.fdopen(os.open(path, flags), "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
