"""The commands that serve a built day to agents and people: the map's MCP server and site (serve), the
static site (site), and route's answer on the command line."""

from __future__ import annotations

import argparse
import json
import sys

from ..lake.paths import parse_day
from ..publishing.mapday import BUILD_A_DAY, MapDay, latest_built_day
from ..publishing.site import ChangedSinceSigningError, build_site
from ..rules.methods import ROUTE_PARAMS
from ..surfaces.route import route
from ..surfaces.serve import listening_socket, serve
from .common import _existing_lake


def cmd_serve(args: argparse.Namespace) -> int:
    lake = _existing_lake(args)
    day = latest_built_day(lake)
    hosts = [h.strip() for h in (args.allowed_host or []) if h.strip()] or None
    sock = listening_socket(args.host, args.port)  # a port in use stops here, before it says it serves
    print(f"the map's MCP server on http://{args.host}:{args.port}/mcp (streamable HTTP, stateless, JSON) and "
          f"the site on http://{args.host}:{args.port}/, over {lake.root} "
          f"({'map of ' + day.isoformat() if day else 'no built day yet'}); Ctrl-C stops it", flush=True)
    serve(lake, args.host, args.port, hosts, sock=sock)
    return 0


def cmd_site(args: argparse.Namespace) -> int:
    lake = _existing_lake(args)
    day = parse_day(args.day) if args.day else latest_built_day(lake)
    if day is None:
        print(f"error: no built day in {lake.root}: {BUILD_A_DAY}",
              file=sys.stderr)
        return 2
    # what it does, before the minutes a registry-sized day takes (helper-100)
    print(f"building the site of {day} in {lake.root / 'site' / 'days' / day.isoformat()} ...", flush=True)
    try:
        result = build_site(lake, day)
    except ChangedSinceSigningError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{day}: {result.pages} pages, {result.badges} badges, {result.proofs} proofs linked, in {result.folder}"
          f"{' (site/current)' if result.current else ''}; {result.seconds:.1f}s"
          f"{f', {result.writers} processes writing server pages' if result.writers > 1 else ''}")
    if result.writers_note:
        print(f"note: {result.writers_note}", file=sys.stderr)
    if not lake.root_file(day).exists():  # helper-85: said nowhere but on the pages
        print(f"note: {day} is not signed, as its pages say: once it is, signing builds the newest signed day's "
              f"site (`sevenmaps site --day {day}` builds this one again)", file=sys.stderr)
    return 0


def cmd_route(args: argparse.Namespace) -> int:
    most = ROUTE_PARAMS["max_results"]
    if args.limit is not None and not 1 <= args.limit <= most:  # refused as the MCP tool refuses it
        print(f"error: --limit must be a whole number from 1 to {most} (got {args.limit})", file=sys.stderr)
        return 2
    lake = _existing_lake(args)
    # As the map's server answers (live: the open day so far read too), unless a day is asked for.
    # --day D reads the day as its site does: its incidents as built, a later review not applied (helper-94)
    day = parse_day(args.day) if args.day else None
    with MapDay.open(lake, day, reviews=day is None, live=day is None) as mapday:
        answer = route(mapday, args.task, args.risk, args.limit)
    print(json.dumps(answer, indent=1, default=str))
    return 0
