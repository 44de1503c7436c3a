"""What went wrong, in one line with an exit code. Loaded only when a command fails: the errors it knows come
from DuckDB, the signing key, the log, exports and map days, which a command that did not need them never
loaded."""

from __future__ import annotations

import duckdb

from ..integrity.keys import SigningKeyError
from ..integrity.log import LogError
from ..publishing.export import ExportError
from ..publishing.mapday import NoMapError, UnknownServerError


def _error_line(exc: BaseException) -> tuple[str, int]:
    """One line saying what went wrong and what to do, and the exit code."""
    text = " ".join(str(exc).split())
    if isinstance(exc, (NoMapError, UnknownServerError)):
        return text, 2
    if isinstance(exc, duckdb.IOException) and "lock" in text.lower():
        return (f"{text.split(' See also')[0][:300]}: another process holds this DuckDB file open read-write "
                "(DuckDB allows one writer or many readers); close it and try again"), 2
    if isinstance(exc, duckdb.Error):
        return f"SQL: {text[:500]}", 2
    if isinstance(exc, (SigningKeyError, LogError, ExportError, ValueError)):
        return text, 2
    if isinstance(exc, OSError):  # a copy names both ends: a full disk is the second's (helper-99)
        ends = " -> ".join(str(f) for f in (exc.filename, exc.filename2) if f)
        return f"{exc.strerror or text}: {ends}" if exc.filename else text, 2
    return f"{type(exc).__name__}: {text[:500]} (an error in sevenmaps itself: rerun with --debug and report it)", 1
