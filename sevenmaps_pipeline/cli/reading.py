"""The commands that read a lake: status, SQL on the warehouse and its rebuild. (Serving it, the site and
route are cli/serving.py's, so that these load neither uvicorn, the MCP SDK nor Jinja2.)"""

from __future__ import annotations

import argparse
import contextlib
import csv
import sys

from ..integrity.status import lake_status, status_text
from ..lake.warehouse import open_warehouse, publish_warehouse
from .common import _existing_lake
from .json_lines import json_line, json_relation


def cmd_status(args: argparse.Namespace) -> int:
    lake = _existing_lake(args)
    status = lake_status(lake)
    print(status_text(lake, status))
    return 0 if status.ok else 1


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
        shapes = None
        if args.format == "json":  # names made unique; INTERVALs, dates, timestamps as DuckDB's text (docs/analyst.md)
            relation, shapes = json_relation(relation)
        columns = relation.columns
        if args.format == "csv":
            # Each value as DuckDB's own text of it, what its CSV writer writes (true/false, [a, b], a timestamp's
            # +00), never Python's repr of it (True, ['a', 'b']): docs/analyst.md. The header keeps the query's
            # names (the cast renames a repeated one).
            relation = relation.project("COLUMNS(*)::VARCHAR")
        rows = relation.fetchall()
        target = open(args.out, "w", newline="") if args.out else contextlib.nullcontext(sys.stdout)  # noqa: SIM115
        with target as out:
            if args.format == "json":  # one JSON object per line
                for row in rows:
                    out.write(json_line(columns, row, shapes) + "\n")
            else:
                writer = csv.writer(out)
                writer.writerow(columns)
                writer.writerows(rows)
    return 0


def cmd_warehouse(args: argparse.Namespace) -> int:
    print(f"published {publish_warehouse(_existing_lake(args), force=True)}")
    return 0
