"""Every path docs/development.md names exists (a newcomer's map of the house must be true):
paths in backticks or prose (`probe/hosts.py`, tests/test_layers.py), and in the project layout each entry
and every file or folder its description names, found beside the entry, in the package or at the root."""

from __future__ import annotations

import re
from pathlib import Path

import sevenmaps_pipeline

PACKAGE = Path(sevenmaps_pipeline.__file__).parent
ROOT = PACKAGE.parent
DOC = ROOT / "docs" / "development.md"

# A path: words joined by '/', ending in a file extension or a '/'; no placeholders (<table>, *, =).
PATH = re.compile(r"(?<![\w./<>*=-])((?:[A-Za-z_][\w.-]*/)*[A-Za-z_][\w.-]*(?:\.(?:py|sql|json|md|html|toml)|/))"
                  r"(?![\w<>*=/-])")
ENTRY = re.compile(r"^( *)(\S+?)(?: {2,}(.*))?$")


def _exists(name: str, *bases: Path) -> bool:
    return any((base / name.rstrip("/")).exists() for base in bases)


def _layout() -> list[tuple[Path, str, list[str]]]:
    """(the folder an entry is in, the entry, the paths its description names) for the layout block."""
    text = DOC.read_text()
    block = text[text.index("## Project layout"):]
    block = block[block.index("```\n") + 4:]
    block = block[:block.index("```")]
    entries: list[tuple[Path, str, list[str]]] = []
    for line in block.splitlines():
        indent = len(line) - len(line.lstrip(" "))
        if indent >= 10 and entries:  # a description's next line
            entries[-1][2].extend(PATH.findall(line))
            continue
        m = ENTRY.match(line)
        assert m, f"not a layout line: {line!r}"
        name, description = m.group(2), m.group(3) or ""
        base = ROOT if indent == 0 else ROOT / "sevenmaps_pipeline"
        entries.append((base, name, PATH.findall(description)))
    assert entries
    return entries


def test_every_layout_entry_exists():
    missing = [f"{base.relative_to(ROOT) / name}" for base, name, _ in _layout() if not _exists(name, base)]
    assert missing == []


def test_every_path_a_layout_entry_names_exists():
    missing = []
    for base, name, named in _layout():
        here = base / name.rstrip("/")
        for path in named:
            if not _exists(path, here, here.parent, PACKAGE, ROOT):
                missing.append(f"{name}: {path}")
    assert missing == []


def test_every_path_in_the_prose_exists():
    text = DOC.read_text()
    prose = text[:text.index("## Project layout")] + text[text.index("```", text.index("## Project layout") + 30):]
    named = set(PATH.findall(prose))
    missing = sorted(p for p in named if not _exists(p, ROOT, PACKAGE, PACKAGE / "devtools"))
    assert missing == []
    assert {"probe/hosts.py", "tests/test_layers.py"} <= named  # the pattern finds what the doc names


def test_a_missing_path_is_seen():
    assert PATH.findall("see `probe/nowhere.py` and tests/test_gone.py, not sql/<table>.sql") == [
        "probe/nowhere.py", "tests/test_gone.py"]
    assert not _exists("probe/nowhere.py", ROOT, PACKAGE)
