"""Small rooms (docs/development.md, "Small rooms"): no module of the package over 500 lines, no function over
80 (its decorators included), and ruff's complexity (C901, at most 15) and statement (PLR0915, at most 50)
rules on in `make lint` with no file excused."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import sevenmaps_pipeline

PACKAGE = Path(sevenmaps_pipeline.__file__).parent
PYPROJECT = PACKAGE.parent / "pyproject.toml"
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80


def _function_lengths(source: str) -> list[tuple[str, int, int]]:
    """(name, first line, lines) of every function and method, nested ones included."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = min([d.lineno for d in node.decorator_list] + [node.lineno])
            out.append((node.name, first, (node.end_lineno or node.lineno) - first + 1))
    return out


def test_no_module_over_500_lines():
    big = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py")
           if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES}
    assert big == {}


def test_no_function_over_80_lines():
    long = [f"{p.relative_to(PACKAGE)}:{first} {name} ({n} lines)" for p in sorted(PACKAGE.rglob("*.py"))
            for name, first, n in _function_lengths(p.read_text()) if n > MAX_FUNCTION_LINES]
    assert long == []


def test_the_length_rule_counts_decorators_and_nested_functions():
    body = "\n".join(f"        x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    source = f"@decorator\ndef outer():\n    def inner():\n{body}\n    return inner\n"
    lengths = {name: n for name, _first, n in _function_lengths(source)}
    assert lengths == {"outer": MAX_FUNCTION_LINES + 4, "inner": MAX_FUNCTION_LINES + 1}


def test_ruff_holds_complexity_and_statements_with_no_file_excused():
    if not PYPROJECT.is_file():  # an installed wheel has no pyproject; the source tree's test run checks it
        raise AssertionError(f"no {PYPROJECT}: run the tests from the source tree")
    ruff = tomllib.loads(PYPROJECT.read_text())["tool"]["ruff"]
    lint = ruff["lint"]
    assert {"C901", "PLR0915"} <= set(lint["select"])
    assert lint["mccabe"]["max-complexity"] == 15 and lint["pylint"]["max-statements"] == 50
    for table in (ruff, lint):
        assert not {"per-file-ignores", "extend-per-file-ignores"} & set(table)
        for key in ("ignore", "extend-ignore", "unfixable"):
            assert not {"C", "C9", "C90", "C901", "PL", "PLR", "PLR0", "PLR09", "PLR091", "PLR0915"} & set(
                table.get(key, [])), f"{key} excuses the rules"


def _excuses(source: str) -> list[int]:
    """Lines that excuse a function from C901 or PLR0915: a noqa naming either, a bare noqa (every rule),
    or a file-wide `ruff: noqa` / `flake8: noqa`."""
    bare = re.compile(r"#\s*noqa(?!\s*:)", re.IGNORECASE)
    file_wide = re.compile(r"#\s*(ruff|flake8)\s*:\s*noqa", re.IGNORECASE)
    return [i for i, line in enumerate(source.splitlines(), 1)
            if ("noqa" in line.lower() and ("C901" in line or "PLR0915" in line)) or bare.search(line)
            or file_wide.search(line)]


def test_no_function_excuses_itself_from_the_rules():
    excused = [f"{p.relative_to(PACKAGE)}:{i}" for p in sorted(PACKAGE.rglob("*.py")) for i in _excuses(p.read_text())]
    assert excused == []


def test_the_excuse_finder_sees_every_form_of_excuse():
    source = ("def a():  # noqa: C901\n    pass\ndef b():  # noqa\n    pass\n# ruff: noqa\n# flake8: noqa: E501\n"
              "x = 1  # noqa: E501 - a long line is not an excuse from the rooms rules\n")
    assert _excuses(source) == [1, 3, 5, 6]
