"""What several command groups share: the lake a command writes or reads, and the prober's configuration for
a one-endpoint command."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..lake.paths import LAKE_FOLDERS, LakePaths
from ..probe.config import ProbeConfig
from ..publishing.shown import visible
from ..registry.opt_outs import opted_out_hosts


def _lake(args: argparse.Namespace) -> LakePaths:
    return LakePaths.at(args.lake)


def _existing_lake(args: argparse.Namespace) -> LakePaths:
    """The lake a reading command reads: a lake that is not there is an input error, never an empty answer; so
    is a folder nothing has run in (an empty or foreign folder would read as a new lake with nothing in it)."""
    lake = _lake(args)
    if not lake.root.is_dir():
        raise ValueError(f"no lake at {lake.root} (pass --lake PATH or set SEVENMAPS_LAKE; `make demo` makes one)")
    if not lake.holds_lake():
        folders = ", ".join(f"{name}/" for name in LAKE_FOLDERS)
        raise ValueError(f"no lake at {lake.root} (the folder holds none of a lake's {folders}: pass --lake PATH or "
                         "set SEVENMAPS_LAKE; `make demo` makes one)")
    return lake


def _probe_config(args: argparse.Namespace) -> ProbeConfig:
    """The prober's configuration for a one-endpoint command: --allow-private, --resolve HOST:PORT, --ca-file,
    and the lake's opt-outs (--lake, else $SEVENMAPS_LAKE, else the checkout's data_lake/): an opted-out host is never
    contacted by any command, --allow-private or not (an unreadable opt-out file stops the command)."""
    host_map = {}
    for item in args.resolve or []:
        host, _, port = item.rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"--resolve takes HOST:PORT, got {item!r}")
        host_map[host.lower()] = int(port)
    return ProbeConfig(allow_private=args.allow_private, host_map=host_map,
                       ca_file=Path(args.ca_file) if args.ca_file else None,
                       opted_out_hosts=opted_out_hosts(_lake(args)))


def terminal_safe(line: str) -> str:
    """A line holding a server's words as a terminal may show it: each character that is not printable (an escape
    sequence's ESC, a bell, C1 controls, zero-width and direction marks) as its code (`\\x1b`, `\\u200b`), so a
    tool's name can neither colour nor rewrite the operator's screen, nor pass for another name: the rule the pages
    and the feed show names by (publishing/shown.py, docs/agents.md "Pages")."""
    return visible(line)
