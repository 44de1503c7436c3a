"""Every command's `--help`, through the real entry point: it says what the command does and shows how to run
it (cli/examples.py; docs/operations.md "The command line"). The walk finds every subcommand the parser has,
so a command added without a description or an example fails here."""

from __future__ import annotations

import argparse

import pytest

from sevenmaps_pipeline.cli import build_parser, main


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...],
                                                                                          argparse.ArgumentParser]]:
    """Every subcommand under `parser` (nested ones too: `incident list`), with its words on the command line."""
    found = []
    for action in parser._actions:  # argparse keeps subcommands on its private action; nothing public lists them
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.append(((*path, name), sub))
                found += _commands(sub, (*path, name))
    return found


def test_the_walk_finds_every_command_and_the_nested_ones():
    names = {" ".join(path) for path, _ in _commands(build_parser())}
    assert {"demo", "serve", "ui", "server", "verify", "incident", "incident close", "incident list"} <= names
    assert len(names) >= 34


@pytest.mark.parametrize("path", [path for path, _ in _commands(build_parser())], ids=" ".join)
def test_every_commands_help_says_what_it_does_with_an_example(path, capsys):
    with pytest.raises(SystemExit) as done:
        main([*path, "--help"])
    assert done.value.code == 0
    page = capsys.readouterr().out
    usage, _, rest = page.partition("\n\n")
    assert usage.startswith(f"usage: sevenmaps {' '.join(path)} ")
    # A description between the usage and the arguments: at least a sentence of its own.
    description = rest.split("\n\n", 1)[0]
    assert not description.startswith(("positional arguments:", "options:")), page
    assert len(description.split()) >= 5 and description.rstrip().endswith("."), description
    examples = page.partition("\nexamples:\n")[2]
    assert examples, f"no examples in `sevenmaps {' '.join(path)} --help`"
    lines = [line.strip() for line in examples.splitlines() if line.startswith("  ")]
    assert any(f"sevenmaps {' '.join(path)}" in line for line in lines), lines


@pytest.mark.parametrize("path", [path for path, _ in _commands(build_parser())], ids=" ".join)
def test_every_option_and_argument_says_what_it_is(path):
    """`sevenmaps serve --help` listed `--host HOST` and `--port PORT` with no word of what they are or that the
    port is 8765 (helper-100): every argument a command takes says what it is."""
    parser = dict(_commands(build_parser()))[path]
    bare = [action.option_strings or action.dest for action in parser._actions
            if not isinstance(action, argparse._HelpAction | argparse._SubParsersAction) and not action.help]
    assert bare == [], f"`sevenmaps {' '.join(path)} --help` says nothing of {bare}"
