"""The package's layers point one way (docs/development.md, "Layers"): every import of the package, read from
its source with ast, goes to its own layer or one below; subpackages of one layer import each other without
a circle; and imports stand at the top of a module, except the CLI's lazy imports of devtools (what is not
the product loads only when a devtools command runs)."""

from __future__ import annotations

import ast
from pathlib import Path

import sevenmaps_pipeline

PACKAGE = Path(sevenmaps_pipeline.__file__).parent

# Lowest first. Each top-level module or subpackage of sevenmaps_pipeline belongs to exactly one layer.
LAYERS: list[set[str]] = [
    {"__version__", "packaged", "rules"},
    {"lake"},
    {"registry", "lookups", "probe"},
    {"curated"},
    {"integrity"},
    {"publishing"},
    {"surfaces"},
    {"defs", "definitions", "cli", "__main__"},
    {"devtools"},
]
LAYER_OF = {unit: depth for depth, units in enumerate(LAYERS) for unit in units}


def _unit(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return parts[0]


def _module_parts(path: Path) -> list[str]:
    return list(path.relative_to(PACKAGE).with_suffix("").parts)


def _target_unit(path: Path, node: ast.ImportFrom | ast.Import) -> list[str]:
    """The top-level units of the package an import statement names (none for other packages)."""
    if isinstance(node, ast.Import):
        return [alias.name.split(".")[1] for alias in node.names if alias.name.startswith("sevenmaps_pipeline.")]
    if node.level == 0:
        module = node.module or ""
        if module == "sevenmaps_pipeline":
            return [alias.name for alias in node.names]
        return [module.split(".")[1]] if module.startswith("sevenmaps_pipeline.") else []
    base = _module_parts(path)[:-1]  # the package the module is in
    base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
    target = base + (node.module.split(".") if node.module else [])
    if target:
        return [target[0]]
    return [alias.name for alias in node.names]  # `from . import x` at the top level


def _imports() -> list[tuple[Path, ast.Import | ast.ImportFrom, bool, list[str]]]:
    """(file, import statement, whether it stands inside a function, the units it names)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        inside: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                inside |= {id(n) for n in ast.walk(node) if isinstance(n, ast.Import | ast.ImportFrom)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                found.append((path, node, id(node) in inside, _target_unit(path, node)))
    return found


def test_every_unit_of_the_package_has_a_layer():
    units = {_unit(p) for p in PACKAGE.rglob("*.py")} - {"__init__"}
    assert units - set(LAYER_OF) == set(), "a new module or subpackage: place it in a layer (and in the docs)"


def test_no_import_points_up():
    upward = []
    for path, node, in_function, targets in _imports():
        source = _unit(path)
        for target in targets:
            if target == source or target not in LAYER_OF:
                continue
            if LAYER_OF[target] > LAYER_OF[source] and not (source == "cli" and target == "devtools" and in_function):
                upward.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {source} -> {target}")
    assert upward == []


def test_no_circle_between_subpackages():
    edges: dict[str, set[str]] = {}
    for path, _node, _in_function, targets in _imports():
        source = _unit(path)
        for target in targets:
            if target != source and target in LAYER_OF:
                edges.setdefault(source, set()).add(target)

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(nxt == goal or (nxt not in seen and reaches(nxt, goal, seen | {nxt}))
                   for nxt in edges.get(start, ()))

    circles = sorted(f"{a} <-> {b}" for a, targets in edges.items() for b in targets if reaches(b, a, {b}))
    assert circles == []


def test_imports_stand_at_the_top_of_a_module():
    inner = [f"{path.relative_to(PACKAGE)}:{node.lineno}" for path, node, in_function, targets in _imports()
             if in_function and not (_unit(path) == "cli" and targets == ["devtools"])]
    assert inner == []


def test_the_checker_itself_sees_an_upward_import_and_a_circle(tmp_path):
    # The rules above would pass on a package they cannot read: hold them to a made-up module's imports.
    source = tmp_path / "probe_mod.py"
    source.write_text("from ..surfaces import x\n\ndef f():\n    import json\n")
    tree = ast.parse(source.read_text())
    node = tree.body[0]
    assert isinstance(node, ast.ImportFrom)
    fake = PACKAGE / "lake" / "fake.py"
    assert _target_unit(fake, node) == ["surfaces"] and LAYER_OF["surfaces"] > LAYER_OF["lake"]
