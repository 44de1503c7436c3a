"""The package's layers point one way (docs/development.md, "Layers"): every import of the package, read from
its source with ast, goes to its own layer or one below; subpackages of one layer import each other without
a circle; and imports stand at the top of a module, except the CLI's lazy imports of devtools (what is not
the product loads only when a devtools command runs). A dynamic import (importlib.import_module,
__import__) stands only where the command line loads the module of the command that runs."""

from __future__ import annotations

import ast
from pathlib import Path

import sevenmaps_pipeline

PACKAGE = Path(sevenmaps_pipeline.__file__).parent

# Lowest first. Each top-level module or subpackage of sevenmaps_pipeline belongs to exactly one layer.
LAYERS: list[set[str]] = [
    {"__init__", "__version__", "packaged", "rules"},
    {"lake"},
    {"registry", "lookups", "probe"},
    {"curated"},
    {"integrity"},
    {"publishing"},
    {"surfaces"},
    {"defs", "definitions", "cli"},
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
    if isinstance(node, ast.Import):  # `import sevenmaps_pipeline` alone reaches the package's own __init__
        return [alias.name.split(".")[1] if "." in alias.name else "__init__" for alias in node.names
                if alias.name.split(".")[0] == "sevenmaps_pipeline"]
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


# Where a dynamic import may stand: the command line's dispatch to the module of the command that runs.
DYNAMIC_IMPORTS_ALLOWED = {"cli/__init__.py"}


def _dynamic_calls(source: str) -> list[int]:
    """The lines of every call of importlib.import_module, import_module or __import__ in a module's source."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if name in ("import_module", "__import__"):
                lines.append(node.lineno)
    return sorted(lines)


def _dynamic_imports() -> list[str]:
    """Every dynamic import in the package: "file:line"."""
    return [f"{path.relative_to(PACKAGE).as_posix()}:{line}" for path in sorted(PACKAGE.rglob("*.py"))
            for line in _dynamic_calls(path.read_text())]


def test_every_unit_of_the_package_has_a_layer():
    units = {_unit(p) for p in PACKAGE.rglob("*.py")}
    assert units - set(LAYER_OF) == set(), "a new module or subpackage: place it in a layer (and in the docs)"
    assert set(LAYER_OF) - units - {"__version__"} == set(), "a layer names a unit the package does not have"


def test_dynamic_imports_stand_only_in_the_command_lines_dispatch():
    found = _dynamic_imports()
    assert found and {f.split(":")[0] for f in found} <= DYNAMIC_IMPORTS_ALLOWED, found


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


def test_the_checker_sees_a_bare_package_import_and_a_dynamic_one(tmp_path):
    tree = ast.parse("import sevenmaps_pipeline\nimport sevenmaps_pipeline.surfaces.route as r\n")
    fake = PACKAGE / "lake" / "fake.py"
    assert [_target_unit(fake, node) for node in tree.body] == [["__init__"], ["surfaces"]]
    source = "import importlib\nimportlib.import_module('x')\n__import__('y')\nfrom importlib import import_module\n" \
        "import_module('z')\n"
    assert _dynamic_calls(source) == [2, 3, 5]
