"""DuckDB sessions for computations: in-memory, over Parquet files, never over warehouse.duckdb."""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
from duckdb.func import FunctionNullHandling

from ..packaged import shipped
from ..rules.estimators import register_estimators
from ..rules.hosts import ascii_domain
from ..rules.namespace import namespace_owns_host
from ..rules.psl import site_of_url


def load_sql(name: str) -> str:
    return shipped("sql", f"{name}.sql").read_text()


def used_params(sql: str, params: dict) -> dict:
    """The parameters `sql` uses (DuckDB refuses unused ones); comments, which name them too, do not count."""
    code = re.sub(r"--[^\n]*", "", sql)
    return {k: v for k, v in params.items() if re.search(rf"\${re.escape(k)}\b", code)}


def run_sql(con: duckdb.DuckDBPyConnection, name: str, params: dict) -> pa.Table:
    """Run `sql/<name>.sql` with the parameters it uses."""
    sql = load_sql(name)
    return con.sql(sql, params=used_params(sql, params)).to_arrow_table()


def connect(database: str = ":memory:", *, read_only: bool = False,
            config: dict[str, str | bool | int | float | list[str]] | None = None) -> duckdb.DuckDBPyConnection:
    """Every DuckDB connection the project opens: its session time zone is UTC whatever the machine's.

    DuckDB ships ICU built in, so `::TIMESTAMP`, `::DATE` and `date_trunc` on a TIMESTAMPTZ use the
    session zone, which defaults to the machine's (TZ): a probe at 02:00 UTC would fall on the day before
    in New York. The setting exists only once ICU is loaded, hence SET after connecting, not in `config`.

    DuckDB's allocator (jemalloc, on Linux) keeps what a query freed until something purges it; without its
    background threads nothing does while DuckDB is idle, so a large query's 600 MB stayed resident beside
    the work that followed it (tool_facts' process after sql/tool_tokens_known.sql: 1,195 MB at the peak,
    633 MB with them; docs/scaling.md, "The day's peak memory"). A process-wide setting, which closing any
    database turns off again for the whole process, so each connection and each session sets it (SET, not
    `config`: a file opened twice must be opened with the same config)."""
    con = duckdb.connect(database, read_only=read_only, config=config or {})
    con.execute("SET TimeZone = 'UTC'")
    con.execute("SET allocator_background_threads = true")
    return con


def one(con: duckdb.DuckDBPyConnection, sql: str, params: object = None) -> tuple[Any, ...]:
    """The single row of an aggregate query (which always has one)."""
    row = con.execute(sql, params).fetchone() if params is not None else con.execute(sql).fetchone()
    if row is None:
        raise LookupError(f"no row from: {sql[:200]}")
    return row


# The process's one in-memory database, with our functions registered (once: they belong to the
# database), and the process it was opened in (a forked child opens its own).
_SHARED: tuple[int, duckdb.DuckDBPyConnection] | None = None
_SHARED_LOCK = threading.Lock()


def _shared_database() -> duckdb.DuckDBPyConnection:
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None or _SHARED[0] != os.getpid():
            con = connect()
            _register_functions(con)
            _SHARED = (os.getpid(), con)
        return _SHARED[1]


@contextlib.contextmanager
def session(threads: int | None = None, memory_limit: str | None = None,
            settings: dict[str, str] | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """An in-memory DuckDB session (UTC, see `connect`), closed on exit whatever happens.

    A cursor of the process's one in-memory database: opening a database costs about 20 ms and a cursor
    0.1 ms, and a day's build opens some sixty sessions. Each cursor is a connection of its own, with its
    own temporary views and tables and registered Arrow tables, all gone when it closes. With `threads`,
    `memory_limit` or `settings` (database-wide options, which a cursor would set for every session of the
    process), a database of its own."""
    if threads or memory_limit or settings:
        config: dict[str, str | bool | int | float | list[str]] = dict(settings or {})
        if threads:
            config["threads"] = threads
        if memory_limit:
            config["memory_limit"] = memory_limit
        con = connect(config=config)
        _register_functions(con)
    else:
        shared = _shared_database()
        with _SHARED_LOCK:  # a connection object is not safe across threads; its cursors are, one per thread
            con = shared.cursor()
        con.execute("SET TimeZone = 'UTC'")
        con.execute("SET allocator_background_threads = true")
    try:
        yield con
    finally:
        con.close()


def _sql_literal_list(items: Sequence[Path | str]) -> str:
    return "[" + ", ".join("'" + str(p).replace("'", "''") + "'" for p in items) + "]"


def bind_input(con: duckdb.DuckDBPyConnection, view: str, files: Sequence[Path], schema: pa.Schema) -> None:
    """Create temp view `view` over `files` with every column of `schema` (nulls where a file lacks one;
    an empty, typed relation when there are no files), and no other: a column of a file that `schema` does not name
    never reaches a query (a raw file's own `problem` column once stood in for the validation's). Adds `source_file`
    and `source_row` (0-based)."""
    empty = pa.schema(list(schema) + [pa.field("source_file", pa.string()),
                                      pa.field("source_row", pa.int64())]).empty_table()
    con.register(f"__empty_{view}", empty)
    if files:
        con.execute(
            f"CREATE OR REPLACE TEMP VIEW {view} AS "
            f"SELECT * FROM __empty_{view} UNION ALL BY NAME "
            f"SELECT COLUMNS(lambda c: list_contains({_sql_literal_list(schema.names)}, c)), "
            f"filename AS source_file, file_row_number AS source_row "
            f"FROM read_parquet({_sql_literal_list(files)}, union_by_name = true, hive_partitioning = false, "
            f"filename = true, file_row_number = true)"
        )
    else:
        con.execute(f"CREATE OR REPLACE TEMP VIEW {view} AS SELECT * FROM __empty_{view}")


def _register_functions(con: duckdb.DuckDBPyConnection) -> None:


    register_estimators(con)
    # The registrable domain of a URL's host (the shipped, hash-checked Public Suffix List).
    con.create_function("site_of", site_of_url, [duckdb.sqltype("VARCHAR")], duckdb.sqltype("VARCHAR"),
                        null_handling=FunctionNullHandling.SPECIAL, side_effects=False)
    # Whether a listing's namespace owns its URL's host (status-1.4: sql/naming_listings.sql; the same function
    # probe/scan.py naming_order calls).
    con.create_function("namespace_owns_host", namespace_owns_host,
                        [duckdb.sqltype("VARCHAR"), duckdb.sqltype("VARCHAR")], duckdb.sqltype("BOOLEAN"),
                        null_handling=FunctionNullHandling.SPECIAL, side_effects=False)
    # A domain in the ASCII form a client writes (domain-age-1.2: sql/domain_ages.sql reads older lookups so).
    con.create_function("ascii_domain", ascii_domain, [duckdb.sqltype("VARCHAR")], duckdb.sqltype("VARCHAR"),
                        side_effects=False)
