"""The commands that read a lake: status, SQL on the warehouse and its rebuild. (Serving it, the site and
route are cli/serving.py's, so that these load neither uvicorn, the MCP SDK nor Jinja2.)"""

from __future__ import annotations

import argparse
import contextlib
import csv
import sys
from typing import Any

import duckdb
import pyarrow.parquet as pq

from ..integrity.status import lake_status, status_text
from ..lake.paths import LakePaths
from ..lake.warehouse import open_warehouse, publish_warehouse
from .common import _existing_lake
from .json_lines import json_line, json_relation


def cmd_status(args: argparse.Namespace) -> int:
    lake = _existing_lake(args)
    status = lake_status(lake)
    print(status_text(lake, status))
    return 0 if status.ok else 1


def _sql_usage_problem(args: argparse.Namespace, lake: LakePaths) -> str | None:
    """What is wrong with how `sevenmaps sql` was asked, as its error line (args.format settled on the way)."""
    if not lake.warehouse.exists():
        return f"no warehouse at {lake.warehouse}; run `sevenmaps warehouse` or a pipeline run first"
    if not args.query.strip():
        return "the query is empty; e.g. sevenmaps sql \"SELECT code, count(*) FROM daily_status GROUP BY code\""
    args.format = args.format or (_format_of(args.out) if args.out else "table")
    if args.format is None:
        return (f"--out {args.out}: say --format csv, json or parquet (or name the file .csv, .json, .jsonl or "
                ".parquet)")
    if args.format == "parquet" and not args.out:
        return "--format parquet writes a file: add --out FILE.parquet"
    if args.format == "table" and args.out:
        return "--format table is for the terminal: with --out, use --format csv, json or parquet"
    return None


def _show_each(con: duckdb.DuckDBPyConnection, args: argparse.Namespace, statements: list[Any]) -> int:
    """Each statement's result in turn: DuckDB runs a query's statements and gives the last one's result alone."""
    if args.format != "table" or args.out:
        print(f"error: the query holds {len(statements)} statements; --format {args.format} and --out take one at a "
              "time", file=sys.stderr)
        return 2
    for statement in statements:
        if (shown := con.sql(statement)) is not None:
            shown.show(max_rows=args.max_rows, max_width=200)
    return 0


def cmd_sql(args: argparse.Namespace) -> int:
    lake = _existing_lake(args)
    if (problem := _sql_usage_problem(args, lake)) is not None:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    with open_warehouse(lake) as con:
        statements = con.extract_statements(args.query)
        if len(statements) > 1:
            return _show_each(con, args, statements)
        relation = con.sql(args.query)
        if relation is None:  # a statement that returns nothing
            return 0
        if args.format == "table" and not args.out:
            relation.show(max_rows=args.max_rows, max_width=200)
            return 0
        if args.format == "parquet":
            relation.write_parquet(args.out)
            print(f"wrote {args.out} ({pq.read_metadata(args.out).num_rows:,} rows)", file=sys.stderr)
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
            else:  # lines end in \n, as DuckDB's writer ends them (csv.writer's default is \r\n)
                writer = csv.writer(out, lineterminator="\n")
                writer.writerow(columns)
                writer.writerows(rows)
    if args.out:
        print(f"wrote {args.out} ({len(rows):,} rows)", file=sys.stderr)
    return 0


def _format_of(out: str) -> str | None:
    """The format a file's name says: .csv, .json or .jsonl (one object per line), .parquet; None for any other."""
    suffix = out.rsplit(".", 1)[-1].lower() if "." in out else ""
    return {"csv": "csv", "json": "json", "jsonl": "json", "ndjson": "json", "parquet": "parquet"}.get(suffix)


def cmd_warehouse(args: argparse.Namespace) -> int:
    print(f"published {publish_warehouse(_existing_lake(args), force=True)}")
    return 0
