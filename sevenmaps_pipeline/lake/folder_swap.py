"""A built folder put in place of the one it replaces in one step (docs/operations.md, "Serving agents and
people": the site).

Renaming the old folder aside and then the new one into place left nothing at the place in between: a build
killed there left the day's site missing, and `site/current` pointing at nothing, until the next build
(helper-89). Linux swaps two names at once (renameat2 with RENAME_EXCHANGE, glibc 2.28); where it cannot, the
two renames are made as before. Working folders a killed build left (hidden, named by their prefix) are swept
once an hour old.
"""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
import time
from pathlib import Path

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_LIBC = ctypes.CDLL(None, use_errno=True)
_RENAMEAT2 = getattr(_LIBC, "renameat2", None)
STALE_SECONDS = 3600


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
    old = aside
    if final.exists():
        final.rename(old)
    built.rename(final)
    shutil.rmtree(old, ignore_errors=True)


def sweep_working_folders(parent: Path, prefixes: tuple[str, ...]) -> list[str]:
    """Remove the hidden working folders under `parent` named with one of `prefixes` whose last change is an hour
    old or more (a killed build's); the names removed."""
    removed = []
    for entry in sorted(parent.iterdir()) if parent.is_dir() else []:
        if not entry.name.startswith(prefixes) or entry.is_symlink() or not entry.is_dir():
            continue
        try:
            if entry.stat().st_mtime < time.time() - STALE_SECONDS:
                shutil.rmtree(entry)
                removed.append(entry.name)
        except OSError:
            continue
    return removed
