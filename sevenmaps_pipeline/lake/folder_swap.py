"""A built folder put in place of the one it replaces in one step (docs/operations.md, "Serving agents and
people": the site).

Renaming the old folder aside and then the new one into place left nothing at the place in between: a build
killed there left the day's site missing, and `site/current` pointing at nothing, until the next build
(helper-89). Linux swaps two names at once (renameat2 with RENAME_EXCHANGE, glibc 2.28); where it cannot, the
two renames are made as before.
"""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
from pathlib import Path

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_LIBC = ctypes.CDLL(None, use_errno=True)
_RENAMEAT2 = getattr(_LIBC, "renameat2", None)


def _exchange(a: Path, b: Path) -> bool:
    """Swap the names `a` and `b` at once; False where this system cannot."""
    if _RENAMEAT2 is None:
        return False
    if _RENAMEAT2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), str(b))


def replace_folder(built: Path, final: Path, aside: Path) -> None:
    """`built` at `final`'s place, the folder there before (if any) removed; at no moment is nothing there when
    there was something before (where the system cannot swap, the old folder is moved to `aside` first)."""
    if final.exists() and _exchange(built, final):
        shutil.rmtree(built, ignore_errors=True)  # now the old folder
        return
    if final.exists():
        final.rename(aside)
    built.rename(final)
    shutil.rmtree(aside, ignore_errors=True)

