"""The operator's control files in the lake (`control/*.parquet`: opt-outs, owner claims, submissions):
what the operator decided, not what was observed, so no signed root covers them. A file that cannot be read
is an error naming it, never read as empty: an opt-out is never lost because a file broke."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq


def read_control_rows(path: Path, what: str, error: type[ValueError], consequence: str = "") -> list[Any]:
    """The file's rows, as dicts (none when it does not exist yet)."""
    if not path.exists():
        return []
    try:
        return pq.read_table(path).to_pylist()
    except Exception as exc:  # noqa: BLE001 - any reader failure stops the caller, naming the file
        raise error(f"{what} {path} cannot be read ({type(exc).__name__}: {exc}){consequence}") from exc
