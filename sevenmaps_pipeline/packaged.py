"""Where the project's shipped files and its working places are, installed from a wheel or run from source.

`sql/` and `assets/` live at the top of the repository (the project's layout) and are shipped inside the
wheel as `sevenmaps_pipeline/sql` and `sevenmaps_pipeline/assets`; they are read through
importlib.resources, falling back to the source checkout in an editable install. The default places for
the lake, the signing key and the Dagster home are the checkout when run from source, else the current
working directory.
"""

from __future__ import annotations

import importlib.resources
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
_CHECKOUT = _PACKAGE.parent
# A source checkout (editable install, or running in the repository): the top-level folders are there.
SOURCE_ROOT: Path | None = _CHECKOUT if (_CHECKOUT / "pyproject.toml").is_file() and (_CHECKOUT / "sql").is_dir() \
    else None


def shipped(folder: str, name: str) -> Path:
    """A file of `sql/` or `assets/`: from the installed package, else from the source checkout."""
    packaged = importlib.resources.files("sevenmaps_pipeline") / folder / name
    if packaged.is_file():
        return Path(str(packaged))
    if SOURCE_ROOT is not None and (SOURCE_ROOT / folder / name).is_file():
        return SOURCE_ROOT / folder / name
    raise FileNotFoundError(f"{folder}/{name} is not shipped with this installation of sevenmaps-pipeline")


def workplace() -> Path:
    """Where the default lake, key and Dagster home go: the checkout from source, else the working directory."""
    return SOURCE_ROOT if SOURCE_ROOT is not None else Path.cwd()
