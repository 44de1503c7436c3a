"""The `sevenmaps` command line. The parser names each command's handler, "<module>:<function>" in this
package, and `main` imports that module only when the command runs: `sevenmaps --help` and a command that
needs no Dagster never load it."""

from __future__ import annotations

import importlib
import os
import sys
import traceback
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .dev import _bench_each_part_apart
from .parser import build_parser

if TYPE_CHECKING:  # at run time, __getattr__ below imports them when they are first asked for
    from .pipeline import DATA_DICTIONARY_MARKERS, data_dictionary_text

__all__ = ["DATA_DICTIONARY_MARKERS", "_bench_each_part_apart", "build_parser", "data_dictionary_text", "main"]


def __getattr__(name: str) -> Any:
    """The data dictionary's text and markers live with its command, in a module that loads Dagster: imported
    when first asked for, so that importing the command line does not load Dagster."""
    if name in ("DATA_DICTIONARY_MARKERS", "data_dictionary_text"):
        return getattr(importlib.import_module(f"{__name__}.pipeline"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _function_named(handler: str) -> Callable[..., Any]:
    """The function a "<module>:<function>" handler names, its module of this package imported now."""
    module, _, function = handler.partition(":")
    return getattr(importlib.import_module(f"{__name__}.{module}"), function)


def main(argv: list[str] | None = None) -> int:
    warnings.filterwarnings("ignore", message=".*is currently in beta.*")
    args = build_parser().parse_args(argv)
    try:
        return _function_named(args.handler)(args)
    except BrokenPipeError:  # `sevenmaps sql ... | head`: the reader left; nothing to say
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - every error is one line unless --debug asks for the traceback
        if args.debug:  # the traceback first, and the same line and exit code as without (docs/operations.md)
            traceback.print_exc()
        line, code = _function_named("errors:_error_line")(exc)
        print(f"error: {line}", file=sys.stderr)
        return code
