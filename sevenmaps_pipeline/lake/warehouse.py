"""`warehouse.duckdb`: documented views over the public Parquet tables, and nothing else; and
`internal.duckdb`: the same for the internal-only tables (internal findings, quarantines), for reviewers.

It is rebuilt in a new file and renamed over the old one: no pipeline step ever holds it open, so an
analyst's read-only session can never stall a run (DuckDB lets one writer *or* many readers at a time).
Views use absolute paths, so they resolve from any working directory; each file records the lake it was
built for (`warehouse_lake`), and `open_warehouse`, which every reader in the project goes through,
rebuilds the views first when that is not the lake the file sits in (a copied or moved lake answers from
itself, docs/analyst.md "A copied lake").
"""

from __future__ import annotations

import glob
import hashlib
import logging
import os
import uuid
from pathlib import Path

import duckdb
import pyarrow as pa

from ..packaged import shipped
from . import duck
from .parquet_io import footer_readable, remove_stale_temps
from .paths import LakePaths
from .schemas import DAILY_ROOTS_DOC, DAILY_STATUS, DERIVED_VIEWS, INTERNAL_TABLES, PUBLIC_TABLES, TableSpec

log = logging.getLogger(__name__)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


# A day's folder's name and no other: `day=*` read a copy kept beside a day (`day=2026-11-09.bak`) as more rows of
# it (helper-86), where every other reader takes such a folder for no day (lake/paths.py folder_day).
_A_DAY = "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]"


def _glob(lake: LakePaths, spec: TableSpec) -> str:
    pattern = spec.location.replace("YYYY-MM-DD", _A_DAY).replace("<run_id>-<part>", "*").replace("<run_id>", "*")
    pattern = pattern.replace("<batch>", "*")
    return str(_literal(lake.root) / pattern)


def _literal(folder: Path) -> Path:
    """`folder` as a pattern that matches only itself (`lake[1]`: `lake[[]1]`), for Python's glob and DuckDB's,
    which escape alike: read as a pattern, `lake[1]` matched `lake1` and no view read the lake."""
    return Path(glob.escape(str(folder)))


# A raw table landed by a service outside the map (agent reports) is read only on the days its build has checked
# (curated/report_batches.py): a batch landing today that no reader can open would stop every view from being
# made, and a refused report's words are withheld in its batch only when its day is built (reports-1.2).
_CHECKED_BY = {"raw_agent_reports": "agent_reports"}


def _files(lake: LakePaths, spec: TableSpec, left_out: list[str] | None = None) -> str | None:
    """What the view of `spec` reads: its files' glob, or for a table of _CHECKED_BY the files its days' builds
    read (written before them: one landing since waits for its day's next build), as read_parquet's argument;
    None when there is no file. With `left_out`, each file whose footer reads, by name, the others added to it."""
    pattern = _glob(lake, spec)
    checked = _CHECKED_BY.get(spec.view)
    if checked is None and left_out is not None:
        listed = sorted(glob.glob(pattern))
        unreadable = {path for path in listed if not footer_readable(Path(path))}
        left_out += sorted(unreadable)
        readable = [path for path in listed if path not in unreadable]
        return "[" + ", ".join(_quote(f) for f in readable) + "]" if readable else None
    if checked is None:
        return _quote(pattern) if next(glob.iglob(pattern), None) is not None else None  # iglob stops at the first
    kind = Path(pattern).parent.parent.name
    files = []
    for built in sorted((lake.root / "curated" / checked).glob(f"day={_A_DAY}/part-0.parquet")):
        day, at = built.parent.name.removeprefix("day="), built.stat().st_mtime
        files += [str(f) for f in lake.raw_files(kind, day) if f.stat().st_mtime <= at]
    return "[" + ", ".join(_quote(f) for f in files) + "]" if files else None


_EMPTY_SELECTS: dict[bytes, str] = {}


def _empty_select(schema: pa.Schema) -> str:
    """A typed, empty SELECT of `schema` (for a table with no file yet), in DuckDB's names of its types.
    Worked out once per schema: every asset of a run publishes the warehouse."""
    key = schema.serialize().to_pybytes()
    if key not in _EMPTY_SELECTS:
        with duck.session() as con:
            con.register("__schema_probe", schema.empty_table())
            cols = con.execute("DESCRIBE SELECT * FROM __schema_probe").fetchall()
        _EMPTY_SELECTS[key] = ("SELECT " + ", ".join(f'CAST(NULL AS {ctype}) AS "{name}"' for name, ctype, *_ in cols)
                               + " WHERE false")
    return _EMPTY_SELECTS[key]


def view_statements(lake: LakePaths, tables: tuple[TableSpec, ...] = PUBLIC_TABLES,
                    with_roots: bool = True, left_out: list[str] | None = None) -> list[str]:
    """The views over the lake's tables; with `left_out`, each over the files whose footers read, by name (the
    unreadable ones added to it, and named in its comment)."""
    statements = []
    for spec in tables:
        before = len(left_out) if left_out is not None else 0
        files = _files(lake, spec, left_out)
        if files is not None:
            # Every column of the schema, null in files written before it was added, even while no file has
            # it yet (a signed day is never rebuilt; docs/data-dictionary.md), as lake/duck.py bind_input reads.
            body = (f"{_empty_select(spec.schema)} UNION ALL BY NAME SELECT * FROM read_parquet({files}, "
                    "union_by_name = true, hive_partitioning = false)")
        else:
            body = _empty_select(spec.schema)
        statements.append(f"CREATE VIEW {spec.view} AS {body}")
        for field in spec.schema:
            statements.append(f"COMMENT ON COLUMN {spec.view}.{field.name} IS {_quote(spec.doc(field.name))}")
        unread = left_out[before:] if left_out is not None else []
        note = f". Left out, unreadable: {', '.join(unread)}" if unread else ""
        statements.append(f"COMMENT ON VIEW {spec.view} IS {_quote(f'{spec.grain}. Files: {spec.location}{note}')}")
    if not with_roots:
        return statements
    statements += open_status_statements(lake)
    roots = str(_literal(lake.roots_dir) / f"day={_A_DAY}.json")  # a root's name, no other
    if next(glob.iglob(roots), None) is not None:
        body = (f"SELECT day::DATE AS day, previous_day::DATE AS previous_day, previous_root, root, signature, "
                f"lines, signed_at::TIMESTAMPTZ AS signed_at, method FROM read_json({_quote(roots)}, "
                "format = 'auto', columns = {day: 'VARCHAR', previous_day: 'VARCHAR', previous_root: 'VARCHAR', "
                "root: 'VARCHAR', signature: 'VARCHAR', lines: 'VARCHAR[]', signed_at: 'VARCHAR', "
                "method: 'VARCHAR'})")
    else:
        body = ("SELECT NULL::DATE AS day, NULL::DATE AS previous_day, NULL::VARCHAR AS previous_root, "
                "NULL::VARCHAR AS root, NULL::VARCHAR AS signature, NULL::VARCHAR[] AS lines, "
                "NULL::TIMESTAMPTZ AS signed_at, NULL::VARCHAR AS method WHERE false")
    statements.append(f"CREATE VIEW daily_roots AS {body}")
    for name, doc in DAILY_ROOTS_DOC.items():
        statements.append(f"COMMENT ON COLUMN daily_roots.{name} IS {_quote(doc)}")
    return statements


# The option that lets open_status read no provisional build without failing (DuckDB 2.0.1).
ALLOW_EMPTY = "allow_empty = true"


def open_status_glob(lake: LakePaths) -> str:
    """Each provisional day's latest build's daily_status (curated/open_day.py: the links `provisional/day=D`
    move to each new build, so the view follows them)."""
    return str(_literal(lake.provisional_dir) / f"day={_A_DAY}" / "curated" / "daily_status" / f"day={_A_DAY}"
               / "part-0.parquet")


def open_status_statements(lake: LakePaths) -> list[str]:
    """`open_status`: the daily checks of the days after the latest built day so far, from their provisional
    builds (empty while none exists).

    The slice lane builds them and never writes the warehouse (defs/lanes.py), so the view must follow them
    with no new file: `allow_empty` reads a glob that matches nothing as no rows (one `empty` column, left out
    here) where read_parquet would fail. A plain DuckDB reader then sees the first build, and no build once
    provisional/ is gone, whenever the file was made (helper-94 F10; docs/analyst.md "The views")."""
    columns = ", ".join(f'"{name}"' for name in DAILY_STATUS.schema.names)
    body = (f"SELECT {columns} FROM ({_empty_select(DAILY_STATUS.schema)} UNION ALL BY NAME SELECT * FROM "
            f"read_parquet({_quote(open_status_glob(lake))}, union_by_name = true, hive_partitioning = false, "
            f"{ALLOW_EMPTY}))")
    return [f"CREATE VIEW open_status AS {body}", "COMMENT ON VIEW open_status IS " + _quote(
        "The daily checks of the days not built yet so far: daily_status of the endpoints checked since the "
        "latest built day, rebuilt after each slice (provisional: never signed; a day is built and signed once "
        "it ends). current_status reads each endpoint's latest of them.")]


# The tables an analyst reads most, each with a `latest_<table>` view (docs/analyst.md).
LATEST_TABLES = ("daily_status", "server_history", "tools", "token_cost", "findings", "server_categories",
                 "tool_changes", "agent_reports", "rating_aggregates", "incidents", "reliable_rankings",
                 "readiness_discovery", "readiness_lines", "readiness_scores")
LATEST_DAY = "(SELECT max(day) FROM daily_status)"


def analyst_view_statements(tables: tuple[TableSpec, ...] = PUBLIC_TABLES) -> list[str]:
    """Views over the table views: `servers` (one row per endpoint ever on the map), `map_days` (one row
    per built day: endpoints by code, and whether a root document signed it; views never hash files, helper-94
    F8) and `latest_<table>` (the map's latest built day, with the endpoint's registry name and URL on every row)."""
    by_view = {t.view: t for t in tables}
    statements = [
        "CREATE VIEW servers AS SELECT server_key, any_value(server_id) AS server_id, "
        "arg_max(server_name, day) AS server_name, arg_max(url, day) AS url, min(day) AS first_day, "
        "max(day) AS last_day, count(*) AS days_on_map, arg_max(code, day) AS latest_code, "
        "arg_max(shown_status, day) AS latest_shown_status FROM daily_status GROUP BY server_key",
        "COMMENT ON VIEW servers IS " + _quote(
            "One row per endpoint ever on the map: its key and id, the registry name and URL it was last listed "
            "with, the first and last UTC day it was on the map, and its code on its last day. Join any table "
            "on server_key to name its rows."),
        "CREATE VIEW map_days AS SELECT s.day, count(*) AS endpoints, "
        + ", ".join(f"count(*) FILTER (WHERE code = '{c}') AS {c}" for c in "oapdn")
        + ", round(100.0 * count(*) FILTER (WHERE code = 'd') / count(*), 2) AS share_d_pct, "
        "any_value(r.root) IS NOT NULL AS signed, any_value(r.root) AS root "
        "FROM daily_status s LEFT JOIN daily_roots r ON r.day = s.day GROUP BY s.day",
        "COMMENT ON VIEW map_days IS " + _quote(
            "One row per UTC day the map was built: endpoints by day code (o a p d n), the share of d, and "
            "whether the day was signed (a root document exists; whether its files still hold is `sevenmaps "
            "verify`'s to say)."),
    ]
    statements += sql_view_statements(set(by_view))
    for name in LATEST_TABLES:
        spec = by_view.get(name)
        if spec is None:
            continue
        # Each column keeps its table's comment, from the same schema (docs/analyst.md "The views"); the name and
        # URL joined from daily_status keep daily_status's.
        columns = [(field.name, spec.doc(field.name)) for field in spec.schema]
        if "server_name" in spec.schema.names or "server_key" not in spec.schema.names:
            body = f"SELECT * FROM {name} WHERE day = {LATEST_DAY}"
        else:
            body = (f"SELECT t.*, s.server_name, s.url FROM {name} t LEFT JOIN daily_status s "
                    f"ON s.day = t.day AND s.server_key = t.server_key WHERE t.day = {LATEST_DAY}")
            columns += [(column, by_view["daily_status"].doc(column)) for column in ("server_name", "url")]
        statements.append(f"CREATE VIEW latest_{name} AS {body}")
        statements += [f"COMMENT ON COLUMN latest_{name}.{column} IS {_quote(doc)}" for column, doc in columns]
        statements.append(f"COMMENT ON VIEW latest_{name} IS " + _quote(
            f"{name} on the map's latest built day (the latest day of daily_status), with the endpoint's "
            "registry name and URL."))
    return statements


# Views whose logic is a file of sql/ (one hop from the name), each with the view it reads and its comment.
SQL_VIEWS = {
    "current_status": ("hourly_checks", "One row per endpoint on the map's latest built day: the status shown now. "
                       "The daily status, replaced by the open day's check of the endpoint so far (open_status) "
                       "and by a newer hourly (most used endpoints) or five-minute (owner-chosen) check: an answer "
                       "at once, a failure only when the check before it failed too (sql/current_status.sql, "
                       "method current-1.3). Never changes a day code or uptime."),
    "five_minute_uptime": ("five_minute_checks", "One row per endpoint with five-minute checks (owner-verified): "
                           "uptime over 30 days, and over 90 days once older checks exist; skipped checks (not "
                           "reached in time) are never down (sql/five_minute_uptime.sql). Not covered by roots."),
}


def sql_view_statements(views: set[str]) -> list[str]:
    statements = []
    for name, (reads, doc) in SQL_VIEWS.items():
        if reads not in views:
            continue
        lines = shipped("sql", f"{name}.sql").read_text().splitlines()
        body = "\n".join(line for line in lines if not line.lstrip().startswith("--"))
        statements += [f"CREATE VIEW {name} AS {body}", f"COMMENT ON VIEW {name} IS {_quote(doc)}"]
    return statements


def derived_view_comments() -> list[str]:
    """Each column of the derived views (servers, map_days, open_status, current_status, five_minute_uptime,
    owner_notes) with its comment (lake/schemas/views.py), as every table's column has its own."""
    return [f"COMMENT ON COLUMN {view}.{column} IS {_quote(doc)}"
            for view, (_, columns) in DERIVED_VIEWS.items() for column, doc in columns.items()]


def owner_note_statements(lake: LakePaths) -> list[str]:
    """`owner_notes`: each verified owner's note beside every endpoint on their host (control/owners.parquet:
    not covered by roots, never read by a figure)."""
    path = lake.owners_file
    if path.is_file():
        claims = (f"SELECT host, note, note_updated_at, verified_at FROM read_parquet({_quote(str(path))}) "
                  "WHERE status = 'verified' AND note IS NOT NULL")
    else:
        claims = ("SELECT NULL::VARCHAR AS host, NULL::VARCHAR AS note, NULL::TIMESTAMPTZ AS note_updated_at, "
                  "NULL::TIMESTAMPTZ AS verified_at WHERE false")
    body = ("WITH claims AS (" + claims + "), endpoints AS (SELECT server_key, server_name, url, "
            "lower(regexp_extract(url, '^[a-zA-Z]+://([^/:?#]+)', 1)) AS url_host FROM servers) "
            "SELECT e.server_key, e.server_name, e.url, c.host AS owner_host, c.note, c.note_updated_at, c.verified_at "
            "FROM endpoints e JOIN claims c ON e.url_host = c.host OR ends_with(e.url_host, '.' || c.host)")
    return [f"CREATE VIEW owner_notes AS {body}", "COMMENT ON VIEW owner_notes IS " + _quote(
        "The verified owner's note, in their own words, beside each endpoint on their host: shown beside the "
        "figures, never mixed into them (control/owners.parquet, not covered by roots).")]


# The one-row table naming the lake a warehouse file's views read (their paths are absolute).
BUILT_FOR = "warehouse_lake"


def built_for_statements(lake: LakePaths) -> list[str]:
    return [f"CREATE TABLE {BUILT_FOR} AS SELECT {_quote(str(lake.root))} AS lake_root",
            f"COMMENT ON TABLE {BUILT_FOR} IS " + _quote(
                "The lake folder this file's views read. When it is not the folder the file sits in (a copied "
                "or moved lake), the views read that other lake: `sevenmaps sql` and `sevenmaps warehouse` "
                "rebuild them (docs/analyst.md)."),
            f"COMMENT ON COLUMN {BUILT_FOR}.lake_root IS "
            + _quote("the absolute path of the lake folder the views were built for")]


def _built_for(path: Path) -> str | None:
    """The lake root a warehouse file was built for (None: no file, or one from before it was recorded)."""
    if not path.is_file():
        return None
    try:
        with duck.connect(str(path), read_only=True) as con:
            row = con.execute(f"SELECT lake_root FROM {BUILT_FOR}").fetchone()
    except duckdb.CatalogException:
        return None
    return row[0] if row else None


def open_warehouse(lake: LakePaths, internal: bool = False) -> duckdb.DuckDBPyConnection:
    """A read-only session on the lake's warehouse (or internal.duckdb) whose views read this lake: when the
    file was built for another lake root (the lake was copied or moved), or its views read a list of files that was
    right when they were made (a file no reader could open was left out: no marker), it is rebuilt here first."""
    path = lake.internal_warehouse if internal else lake.warehouse
    listed = path.exists() and not (lake.root / ".warehouse.sha256").is_file()  # helper-86: a folder gone since
    if _built_for(path) != str(lake.root) or (not internal and _open_status_stale(path)):
        publish_warehouse(lake, force=True)
    elif listed:
        try:
            publish_warehouse(lake, force=True)
        except (OSError, duckdb.Error) as exc:  # a reader who cannot write the lake reads it as it was (helper-87)
            log.warning("the warehouse could not be rebuilt (%s): its views read the files they were made over", exc)
    return duck.connect(str(path), read_only=True)


def _open_status_stale(path: Path) -> bool:
    """Whether the file's `open_status` view is one made before it read with ALLOW_EMPTY (its glob failed once
    provisional/ was gone, and an empty view missed the first build): such a file is rebuilt."""
    try:
        with duck.connect(str(path), read_only=True) as con:
            row = con.execute("SELECT sql FROM duckdb_views() WHERE view_name = 'open_status'").fetchone()
    except duckdb.Error:
        return True
    return row is None or ALLOW_EMPTY not in row[0]


def publish_warehouse(lake: LakePaths, force: bool = False) -> str:
    """Build fresh `warehouse.duckdb` and `internal.duckdb` files next to the old ones and atomically rename
    them into place.

    Views read their tables through globs, so a new day's files show up without a new warehouse; it is
    rebuilt only when a view itself changes (a table's first file, the lake moved, a schema changed, a day of
    agent reports built: `_CHECKED_BY`), which `.warehouse.sha256` (the digest of the view statements) tells."""
    if "?" in str(lake.root):
        # DuckDB reads a "?" in a database's path as the start of its options (its write-ahead log is then made
        # at `lake.wal?...`), so no warehouse can be written in such a folder.
        raise ValueError(f"no warehouse can be written in a lake whose path holds a '?': {lake.root}")
    lake.root.mkdir(parents=True, exist_ok=True)
    for name in remove_stale_temps(lake.root, _PUBLISH_TEMPS):
        log.info("removed a killed publish's working file: %s", lake.root / name)
    public, internal = _statements(lake)
    digest = hashlib.sha256("\n".join(public + ["-- internal"] + internal).encode()).hexdigest()
    marker = lake.root / ".warehouse.sha256"
    if (not force and lake.warehouse.exists() and lake.internal_warehouse.exists() and marker.is_file()
            and marker.read_text() == digest):
        return str(lake.warehouse)
    try:
        _publish(lake, lake.warehouse, public)
        _publish(lake, lake.internal_warehouse, internal)
    except duckdb.Error:
        # A file no reader can open, of a day not built yet (its build moves it to quarantine/) or of a kind no
        # build checks: the views are made over the files that read, those left out named in their comments, and
        # the marker is not written, so the next publish tries the globs again.
        left_out: list[str] = []
        public, internal = _statements(lake, left_out)
        if not left_out:
            raise
        _publish(lake, lake.warehouse, public)
        _publish(lake, lake.internal_warehouse, internal)
        marker.unlink(missing_ok=True)
        log.warning("the warehouse's views leave out %d unreadable file(s): %s", len(left_out), ", ".join(left_out))
        return str(lake.warehouse)
    marker.write_text(digest)
    return str(lake.warehouse)


def _statements(lake: LakePaths, left_out: list[str] | None = None) -> tuple[list[str], list[str]]:
    public = (view_statements(lake, left_out=left_out) + analyst_view_statements() + owner_note_statements(lake)
              + derived_view_comments() + built_for_statements(lake))
    internal = (view_statements(lake, INTERNAL_TABLES, with_roots=False, left_out=left_out)
                + built_for_statements(lake))
    return public, internal


# _publish's working database (and its write-ahead log), left only when its process is killed: swept an hour later.
# Only the names _publish gives them (a uuid4's 32 hex): an operator's `.warehouse.old.duckdb` is theirs (helper-101).
_PUBLISH_TEMPS = tuple(f".{name}.{'[0-9a-f]' * 32}.duckdb{wal}" for name in ("warehouse", "internal")
                       for wal in ("", ".wal"))


def _publish(lake: LakePaths, target, statements: list[str]) -> None:
    """The statements (some 50 views and 900 column comments) in one transaction: one commit, not one per
    statement (a small lake's publish 0.31 s of CPU instead of 0.44 s, docs/development.md)."""
    tmp = lake.root / f".{target.stem}.{uuid.uuid4().hex}.duckdb"
    try:
        con = duck.connect(str(tmp))
        try:
            con.execute("BEGIN TRANSACTION")
            for statement in statements:
                con.execute(statement)
            con.execute("COMMIT")
            con.execute("CHECKPOINT")
        finally:
            con.close()
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
        (tmp.parent / (tmp.name + ".wal")).unlink(missing_ok=True)
