"""docs/changelog.md has one dated entry for every method version the code carries (issue 35, point 7): every
`*_METHOD` constant of the package and every published asset's `method` field. A version bumped in code
without its entry fails here, naming it."""

from __future__ import annotations

import datetime as dt
import importlib
import json
import pkgutil
import re
from pathlib import Path

import sevenmaps_pipeline
from sevenmaps_pipeline.packaged import shipped

CHANGELOG = Path(__file__).resolve().parents[1] / "docs" / "changelog.md"
# Assets whose `method` names no published figure: the developer fleet's timeline.
NOT_METHODS = {"fleet_timeline.json"}
HEADING = re.compile(r"^### (\S+) — (\d{4}-\d{2}-\d{2})$", re.MULTILINE)


def versions_in_code() -> dict[str, str]:
    """version -> where it is declared: the package's *_METHOD constants (devtools apart: not the product)."""
    found: dict[str, str] = {}
    for module in pkgutil.walk_packages(sevenmaps_pipeline.__path__, "sevenmaps_pipeline."):
        if ".devtools" in module.name or module.name.startswith("sevenmaps_pipeline.defs"):
            continue
        loaded = importlib.import_module(module.name)
        for name, value in vars(loaded).items():
            if name.endswith("_METHOD") and isinstance(value, str):
                found.setdefault(value, name)
    assets = shipped("assets", "risk_vocabulary.json").parent
    for path in sorted(assets.glob("*.json")):
        if path.name not in NOT_METHODS:
            method = json.loads(path.read_text()).get("method")
            if method:
                found.setdefault(method, f"assets/{path.name}")
    return found


def test_every_method_version_in_code_has_a_dated_entry_in_the_changelog():
    text = CHANGELOG.read_text(encoding="utf-8")
    entries = {version: day for version, day in HEADING.findall(text)}
    code = versions_in_code()
    assert len(code) >= 20  # the scan itself found the package's methods
    missing = sorted(f"{version} ({where})" for version, where in code.items() if version not in entries)
    assert not missing, f"method versions with no entry in docs/changelog.md: {', '.join(missing)}"
    for version, day in entries.items():
        assert dt.date.fromisoformat(day) <= dt.date(2027, 12, 31), version


def test_every_entry_says_what_changed():
    text = CHANGELOG.read_text(encoding="utf-8")
    parts = HEADING.split(text)[1:]
    bodies = {parts[i]: parts[i + 2].split("\n## ")[0].strip() for i in range(0, len(parts), 3)}
    empty = sorted(version for version, body in bodies.items() if len(body) < 20)
    assert not empty, f"entries with nothing said: {', '.join(empty)}"
