"""The lines of a day: `<sha256 hex>  <path relative to the lake root>` for every covered file."""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path

from ..lake.paths import COVERED_RAW, LakePaths, day_str


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def day_folders(lake: LakePaths, day: dt.date | str) -> list[Path]:
    """Every covered partition folder of the day: raw inputs the roots cover, and all curated tables."""
    d = day_str(day)
    folders = [lake.root / "raw" / kind / f"day={d}" for kind in COVERED_RAW]
    curated = lake.root / "curated"
    if curated.is_dir():
        folders += [table / f"day={d}" for table in sorted(curated.iterdir()) if table.is_dir()]
    return [f for f in folders if f.is_dir()]


def day_files(lake: LakePaths, day: dt.date | str) -> list[Path]:
    """Covered files of the day (hidden files, i.e. in-flight temp files, are not part of a day)."""
    files = []
    for folder in day_folders(lake, day):
        files += [p for p in folder.rglob("*") if p.is_file() and not any(
            part.startswith(".") for part in p.relative_to(folder).parts)]
    return sorted(files, key=lambda p: p.relative_to(lake.root).as_posix())


def day_lines(lake: LakePaths, day: dt.date | str) -> list[str]:
    lines = [f"{sha256_file(p)}  {p.relative_to(lake.root).as_posix()}" for p in day_files(lake, day)]
    return sorted(lines, key=lambda line: line.split("  ", 1)[1])


def compute_root(previous_root: str, lines: list[str]) -> str:
    """root = sha256_hex((previous_root or "") + "\\n" + "\\n".join(lines))."""
    return hashlib.sha256(((previous_root or "") + "\n" + "\n".join(lines)).encode()).hexdigest()
