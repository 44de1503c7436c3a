"""The commands that read a lake and serve it: status, the map's MCP server and site, route, SQL on the
warehouse and its rebuild."""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import sys

from ..integrity.status import lake_status, status_text
from ..lake.paths import parse_day
from ..lake.warehouse import open_warehouse, publish_warehouse
from ..publishing.mapday import MapDay, latest_built_day
from ..publishing.site import build_site
from ..surfaces.route import route
from ..surfaces.serve import serve
from .common import _existing_lake


def cmd_status(args: argparse.Namespace) -> int:
    lake = _existing_lake(args)
    status = lake_status(lake)
    print(status_text(lake, status))
    return 0 if status.ok else 1


def cmd_serve(args: argparse.Namespace) -> int:
    lake = _existing_lake(args)
    day = latest_built_day(lake)
    hosts = [h.strip() for h in (args.allowed_host or []) if h.strip()] or None
    print(f"the map's MCP server on http://{args.host}:{args.port}/mcp (streamable HTTP, stateless, JSON) and "
          f"the site on http://{args.host}:{args.port}/, over {lake.root} "
          f"({'map of ' + day.isoformat() if day else 'no built day yet'}); Ctrl-C stops it", flush=True)
    serve(lake, args.host, args.port, hosts)
    return 0


def cmd_site(args: argparse.Namespace) -> int:
    lake = _existing_lake(args)
    day = parse_day(args.day) if args.day else latest_built_day(lake)
    if day is None:
        print(f"error: no built day in {lake.root}: build the map first (sevenmaps demo, or the daily job)",
              file=sys.stderr)
        return 2
    result = build_site(lake, day)
    print(f"{day}: {result.pages} pages, {result.badges} badges, {result.proofs} proofs linked, in {result.folder}"
          f"{' (site/current)' if result.current else ''}; {result.seconds:.1f}s"
          f"{f', {result.writers} processes writing server pages' if result.writers > 1 else ''}")
    if result.writers_note:
        print(f"note: {result.writers_note}", file=sys.stderr)
    return 0


def cmd_route(args: argparse.Namespace) -> int:
    lake = _existing_lake(args)
    with MapDay.open(lake, parse_day(args.day) if args.day else None) as mapday:
        answer = route(mapday, args.task, args.risk, args.limit)
    print(json.dumps(answer, indent=1, default=str))
    return 0


def cmd_sql(args: argparse.Namespace) -> int:
    lake = _existing_lake(args)
    if not lake.warehouse.exists():
        print(f"error: no warehouse at {lake.warehouse}; run `sevenmaps warehouse` or a pipeline run first",
              file=sys.stderr)
        return 2
    if not args.query.strip():
        print("error: the query is empty; e.g. sevenmaps sql \"SELECT code, count(*) FROM daily_status GROUP BY code\"",
              file=sys.stderr)
        return 2
    if args.format == "parquet" and not args.out:
        print("error: --format parquet writes a file: add --out FILE.parquet", file=sys.stderr)
        return 2
    with open_warehouse(lake) as con:
        relation = con.sql(args.query)
        if relation is None:  # a statement that returns nothing
            return 0
        if args.format == "table" and not args.out:
            relation.show(max_rows=args.max_rows, max_width=200)
            return 0
        if args.format == "parquet":
            relation.write_parquet(args.out)
            print(f"wrote {args.out}", file=sys.stderr)
            return 0
        columns, rows = relation.columns, relation.fetchall()
        target = open(args.out, "w", newline="") if args.out else contextlib.nullcontext(sys.stdout)  # noqa: SIM115
        with target as out:
            if args.format == "json":  # one JSON object per line
                for row in rows:
                    out.write(json.dumps(dict(zip(columns, row, strict=True)), default=str, ensure_ascii=False) + "\n")
            else:
                writer = csv.writer(out)
                writer.writerow(columns)
                writer.writerows(rows)
    return 0


def cmd_warehouse(args: argparse.Namespace) -> int:
    print(f"published {publish_warehouse(_existing_lake(args), force=True)}")
    return 0
