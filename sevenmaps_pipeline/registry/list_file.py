"""The operator's list files (the skills list, the directory lists, the submissions file): UTF-8 text,
one entry per line, blank lines and `#` comments ignored. An unreadable file is an error naming it, never
an empty list."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path


def list_lines(path: str | os.PathLike[str], what: str,
               error: type[ValueError] = ValueError) -> Iterator[tuple[int, str]]:
    """(line number, the line without its comment) for every line that holds something."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{what} {path}: cannot be read ({type(exc).__name__}: {exc})") from exc
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if line:
            yield number, line
