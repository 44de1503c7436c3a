"""The floor of a day (issue 38, goal 2; docs/scaling.md, "The floor"): what any build of the day must do at
the least, in plain DuckDB and pyarrow, no Dagster, timed against the day's whole run (its site included).

It reads what the day reads, no more: the columns its SQL names of each input it reads (the day's landed
probes every column, as their validation decodes every value), over the same windows and files (curated/day.py
DAY_GRAPH, the builders of curated/*.py), and the rows that need them (the texts of the lists new that day
only); the caches of the day before whole. It writes what the day writes: every curated table of the day and
the caches it keeps, the same rows through the same writer (lake/parquet_io.py, atomic and synced), and the
SHA-256 of every file the day's root covers; and the day's site, its files with the same bytes, each badge of a
text as a link to the first file of that text, as the site writes them (site_files, write_site). It does not
compute: the tables and pages it writes are the day's own, read from the built lake before the clock starts, and
it does not read back what it wrote (the day re-reads daily_status a dozen times; a floor would keep it).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import re
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from ..curated.common import days_back, partitions_between, partitions_through, probe_files, registry_in_force
from ..curated.day import DAY_TABLES
from ..curated.list_facts import TOOLS_PART_ROWS
from ..curated.tool_tables import TOOLS_DICTIONARY_PAGE_BYTES, TOOLS_STATISTICS
from ..integrity.roots import sign_through
from ..lake import duck
from ..lake.parquet_io import write_parquet, write_parquet_parts
from ..lake.paths import COVERED_RAW, LakePaths
from ..lake.schemas import (
    AGENT_REPORTS,
    DAILY_STATUS,
    RAW_PROBES,
    RAW_REGISTRY,
    TOOL_CHANGES,
    TOOL_FACTS,
    TOOL_LISTS,
)
from ..rules.fingerprints import definition_text
from ..rules.methods import (
    CHANGES_PARAMS,
    DOMAIN_AGE_PARAMS,
    INCIDENTS_PARAMS,
    RATINGS_PARAMS,
    READINESS_P50_DAYS,
    REPORTS_PARAMS,
    STATUS_PARAMS,
)
from ..rules.tokens import count_many
from .synth_lists import published
from .tool_corpus import SHAPE_LISTS, load_servers

# Which SQL reads each input (and the few reads written in Python, as text): the columns of an input that
# these texts name are the columns read. A name that appears for another input too only reads more.
_READERS = {
    "probes": ("probe_problem", "probe_validation", "daily_status"),
    "registry": ("daily_status", "server_key server_name entry_json"),  # curated/tool_tables.py listing texts
    "tool_lists": ("tool_lists_needed", "day_lists", "token_cost"),
    "tool_facts": ("tool_changes",),
    "daily_status": ("agent_report_validation", "incidents", "domain_ages"),
    "tool_changes": ("server_history",),
    "agent_reports": ("rating_aggregates", "incidents"),
}


def named_columns(schema: pa.Schema, input_name: str) -> list[str]:
    """The columns of `schema` that the readers of `input_name` name (comments left out)."""
    texts = [re.sub(r"--[^\n]*", "", duck.load_sql(r) if " " not in r else r) for r in _READERS[input_name]]
    return [f.name for f in schema if any(re.search(rf"\b{re.escape(f.name)}\b", t) for t in texts)]


@dataclass(frozen=True)
class FloorRead:
    what: str
    files: list[Path]
    columns: list[str] | None  # None: every column
    where: str = ""


def day_outputs(lake: LakePaths, day: dt.date) -> dict[Path, pa.Table]:
    """What the built day wrote, by path relative to the lake: its curated tables and its caches."""
    paths = [lake.curated_file(t, day) for t in DAY_TABLES]
    paths += [lake.day_cache_file(k, day) for k in ("change_baseline", "history_state")]
    paths += sorted((lake.root / "cache").glob("list_categories-*.parquet"))
    return {p.relative_to(lake.root): pq.read_table(p) for p in paths if p.is_file()}


def floor_reads(lake: LakePaths, day: dt.date, outputs: dict[Path, pa.Table]) -> list[FloorRead]:
    """Every input the day reads, with the columns and rows it needs of it."""
    before = day - dt.timedelta(days=1)
    lookback = [d for d in days_back(day, STATUS_PARAMS["lookback_days"]) if d != day]
    registry = registry_in_force(lake, day)
    new = outputs.get(lake.curated_file("tool_lists", day).relative_to(lake.root))
    new_hashes = new.column("tools_hash").to_pylist() if new is not None else []
    listed = ", ".join(f"'{h}'" for h in new_hashes) or "NULL"
    status_days = max(REPORTS_PARAMS["max_age_days"], INCIDENTS_PARAMS["lookback_days"] - 1)
    facts_days = _facts_days(lake, day, outputs)
    all_facts = partitions_through(lake, "tool_facts", day, before=True)
    caches = [lake.day_cache_file("change_baseline", before), lake.day_cache_file("history_state", before),
              *sorted((lake.root / "cache").glob("list_categories-*.parquet"))]
    return [
        FloorRead("the day's landed probes (validated: every value)", lake.raw_files("probes", day), None),
        FloorRead("probes of the status lookback", probe_files(lake, lookback),
                  named_columns(RAW_PROBES.schema, "probes")),
        FloorRead("the registry in force", [registry] if registry else [],
                  named_columns(RAW_REGISTRY.schema, "registry")),
        # The texts of the lists new that day, from the days that hold them (the day, and the previous lists
        # of endpoints whose list changed: the baseline's days, at most the change lookback).
        FloorRead("the new lists' texts", probe_files(lake, _source_days(lake, day, set(new_hashes))),
                  ["tools_hash", "tools_json"], f"tools_hash IN ({listed})"),
        FloorRead("tool lists so far", partitions_through(lake, "tool_lists", day, before=True),
                  named_columns(TOOL_LISTS.schema, "tool_lists")),
        # The facts of the day's lists, from the days that computed them (curated/list_facts.py list_sources);
        # of the other days, what tool_changes names.
        FloorRead("tool facts of the day's lists", [p for p in all_facts if p in facts_days], None),
        FloorRead("tool facts so far", [p for p in all_facts if p not in facts_days],
                  named_columns(TOOL_FACTS.schema, "tool_facts")),
        FloorRead("daily_status of the reports' and incidents' windows",
                  partitions_between(lake, "daily_status", before, status_days),
                  named_columns(DAILY_STATUS.schema, "daily_status")),
        FloorRead("tool_changes of the history's lookback",
                  partitions_between(lake, "tool_changes", before, CHANGES_PARAMS["lookback_days"] - 1),
                  named_columns(TOOL_CHANGES.schema, "tool_changes")),
        FloorRead("agent_reports of the ratings' window",
                  partitions_between(lake, "agent_reports", before, RATINGS_PARAMS["window_days"] - 1),
                  named_columns(AGENT_REPORTS.schema, "agent_reports")),
        FloorRead("the day's agent reports", lake.raw_files("agent_reports", day), None),
        FloorRead("readiness checks", [f for d in days_back(day, READINESS_P50_DAYS - 1)
                                       for k in ("readiness", "readiness_surfaces", "skills")
                                       for f in lake.raw_files(k, d)], None),
        FloorRead("lookups", [*lake.raw_files("packages", day),
                              *(f for d in days_back(day, DOMAIN_AGE_PARAMS["refresh_days"] - 1)
                                for f in lake.raw_files("domains", d))], None),
        *(FloorRead(f"cache {p.name}", [p], None) for p in caches if p.is_file()),
    ]


def _facts_days(lake: LakePaths, day: dt.date, outputs: dict[Path, pa.Table]) -> set[Path]:
    """The earlier tool_facts files that hold the facts of a list published on `day`."""
    status = outputs.get(lake.curated_file("daily_status", day).relative_to(lake.root))
    files = partitions_through(lake, "tool_lists", day, before=True)
    if status is None or not files:
        return set()
    con = duck.connect()
    con.register("status", status.select(["tools_hash"]))
    listing = "[" + ", ".join(f"'{p}'" for p in files) + "]"
    days = con.execute(f"SELECT DISTINCT day FROM read_parquet({listing}) "
                       "WHERE tools_hash IN (SELECT tools_hash FROM status)").fetchall()
    con.close()
    return {lake.curated_file("tool_facts", d) for (d,) in days}


def _source_days(lake: LakePaths, day: dt.date, new: set[str]) -> list[dt.date]:
    """The days whose probes hold the lists new on `day`: the day, and the baseline's days of the previous lists
    of endpoints whose list changed (curated/baselines.py)."""
    days = {day}
    cache = lake.day_cache_file("change_baseline", day - dt.timedelta(days=1))
    if cache.is_file() and new:
        listed = pq.read_table(cache, columns=["listed"]).column("listed").to_pylist()
        days |= {row["day"] for row in listed if row and row.get("tools_hash") in new}
    return sorted(days)


def _read(con, read: FloorRead) -> int:
    """Decode the columns of the rows read; the row count."""
    files = [p for p in read.files if p.is_file()]
    if not files:
        return 0
    listing = "[" + ", ".join(f"'{p}'" for p in files) + "]"
    relation = f"read_parquet({listing}, union_by_name = true, hive_partitioning = false)"
    columns = read.columns if read.columns is not None else [
        r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {relation}").fetchall()]
    touched = ", ".join(f'sum(hash("{c}"))' for c in columns) or "0"
    where = f" WHERE {read.where}" if read.where else ""
    return int(con.execute(f"SELECT count(*), {touched} FROM {relation}{where}").fetchone()[0])


@dataclass(frozen=True)
class SiteFile:
    """One file of the day's site: where it goes, its bytes, and for a file of several names (a badge of a text
    many endpoints share), which of them it is, so a writer writes it once and links the rest to it."""

    folder: str  # relative to the day's site
    name: str
    data: bytes
    shared: int | None  # the inode its names share in the built site, else None


def site_files(lake: LakePaths, day: dt.date) -> list[SiteFile]:
    """Every file of the built day's site (none when it has no site), each file of several names read once."""
    root = lake.root / "site" / "days" / day.isoformat()
    read: dict[int, bytes] = {}
    files = []
    for folder, _, names in os.walk(root):
        for name in names:
            path = Path(folder) / name
            info = path.stat()
            shared = info.st_ino if info.st_nlink > 1 else None
            data = read.get(info.st_ino) if shared is not None else None
            if data is None:
                data = path.read_bytes()
                if shared is not None:
                    read[info.st_ino] = data
            files.append(SiteFile(str(Path(folder).relative_to(root)), name, data, shared))
    return files


def _write_files(root: Path, files: list[SiteFile]) -> None:
    """As the site writes its files (publishing/site.py _Folder): each opened relative to its folder's descriptor
    and written in one call where it can, a file of several names written once and linked to by the others."""
    folders: dict[str, int] = {}
    first: dict[tuple[str, int], str] = {}
    try:
        for f in files:
            fd_dir = folders.get(f.folder)
            if fd_dir is None:
                fd_dir = folders[f.folder] = os.open(root / f.folder, os.O_RDONLY | os.O_DIRECTORY)
            if f.shared is not None and (f.folder, f.shared) in first:
                os.link(first[(f.folder, f.shared)], f.name, src_dir_fd=fd_dir, dst_dir_fd=fd_dir)
                continue
            fd = os.open(f.name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666, dir_fd=fd_dir)
            try:
                view = memoryview(f.data)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
            if f.shared is not None:
                first[(f.folder, f.shared)] = f.name
    finally:
        for fd_dir in folders.values():
            os.close(fd_dir)


def site_shares(files: list[SiteFile], writers: int) -> list[list[SiteFile]]:
    """`files` in `writers` shares of about as many names each, every name of a file of several in one share: a
    share is written with links to its own first file of each text, so a text split between shares would be
    written once a share, more files than the site has (with two shares taken in turn, 1,656 badge files where
    the site has 843). Made before the clock starts."""
    groups: dict[tuple[str, int], list[SiteFile]] = {}
    shares: list[list[SiteFile]] = [[] for _ in range(writers)]
    single = []
    for f in files:
        if f.shared is None:
            single.append(f)
        else:
            groups.setdefault((f.folder, f.shared), []).append(f)
    for group in sorted(groups.values(), key=len, reverse=True):
        min(shares, key=len).extend(group)
    for f in single:
        min(shares, key=len).append(f)
    return shares


def write_site(shares: list[list[SiteFile]], root: Path) -> None:
    """The site's files into `root`, a thread a share (site_shares; the system calls run in parallel)."""
    for folder in sorted({f.folder for share in shares for f in share}):
        (root / folder).mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(len(shares)) as pool:
        list(pool.map(_write_files, [root] * len(shares), shares))


def run_floor(lake: LakePaths, day: dt.date, scratch: Path) -> dict:
    """Time the floor of `day` in the built `lake`: its reads, then its writes into `scratch` (emptied) and the
    hashes of what the root covers. Returns the figures and the rows written per table."""
    outputs = day_outputs(lake, day)
    reads = floor_reads(lake, day, outputs)
    site = site_files(lake, day)
    # The site's pages are written by a process a core; the floor's by a thread a core.
    shares = site_shares(site, os.cpu_count() or 1)
    shutil.rmtree(scratch, ignore_errors=True)
    target = LakePaths.at(scratch)
    con = duck.connect()
    started = time.perf_counter()
    rows_read = {r.what: _read(con, r) for r in reads}
    read_seconds = time.perf_counter() - started
    written: list[Path] = []
    for rel, table in outputs.items():
        if rel.parts[:2] == ("curated", "tools"):  # as curated/tool_tables.py writes it, a part at a time
            parts = (table.slice(at, TOOLS_PART_ROWS) for at in range(0, table.num_rows, TOOLS_PART_ROWS))
            written.append(write_parquet_parts(target, target.root / rel, table.schema, parts,
                                               statistics=TOOLS_STATISTICS,
                                               dictionary_pagesize_limit=TOOLS_DICTIONARY_PAGE_BYTES)[0])
        else:
            written.append(write_parquet(target, target.root / rel, table))
    covered = [*(f for kind in COVERED_RAW for f in lake.raw_files(kind, day)),
               *(p for p in written if p.relative_to(scratch).parts[0] == "curated")]
    for path in covered:
        hashlib.sha256(path.read_bytes()).hexdigest()
    site_started = time.perf_counter()
    write_site(shares, scratch / "site" / "days" / day.isoformat())
    ended = time.perf_counter()
    seconds = ended - started
    con.close()
    # A file of several names holds its bytes once.
    distinct = {("inode", f.shared) if f.shared is not None else ("file", id(f)): len(f.data) for f in site}
    return {"floor_seconds": seconds, "floor_read_seconds": read_seconds,
            "floor_write_seconds": seconds - read_seconds, "floor_site_seconds": ended - site_started,
            "floor_site_files": len(site), "floor_site_bytes": sum(distinct.values()),
            "floor_files_read": sum(len([p for p in r.files if p.is_file()]) for r in reads),
            "floor_rows_read": rows_read,
            "floor_rows_written": {rel.as_posix(): t.num_rows for rel, t in outputs.items()}}


def cold_morning(lake: LakePaths, day: dt.date, key: Path | None = None) -> LakePaths:
    """The morning of `day` after a method change of the tool facts and the categories: the earlier days' lists
    carry an older method (`EARLIER_METHOD`, the tokenizer's part too), so the day computes the facts, the token
    counts and the category verdicts of every list it needs, as on the first day after a bump (docs/methodology.md,
    method versions). With `key`, the earlier days are signed again over those files, as a lake built under the
    older method was (`resign_history`). `lake` is a hard-linked clone: each file is written anew and renamed over
    its link, so the lake it was cloned from keeps its bytes."""
    _rewrite_method(lake, day, lambda method: EARLIER_METHOD)
    for path in (lake.root / "cache").glob("list_categories-*.parquet"):
        path.unlink()
    if key is not None:
        resign_history(lake, day, key)
    return lake


# The methods the earlier days were built under: in cold_morning the whole facts method, in rules_changed_morning
# the risk rules' alone.
EARLIER_METHOD = "facts-bench-earlier+tokens-bench-earlier"
EARLIER_RULES = "risk-bench-earlier"


def rules_changed_morning(lake: LakePaths, day: dt.date, key: Path | None = None) -> LakePaths:
    """The morning of `day` after a method change of the risk rules alone, the tokenizer and the categories
    unchanged: the earlier days' tool_lists and tool_facts carry an older method (`EARLIER_RULES` with the same
    tokenizer), so every list the day needs is new under the method, and its token counts are taken over
    (sql/tool_tokens_known.sql), as on the first day after a bump of assets/risk_vocabulary.json. Each file is
    written anew and renamed over its hard link, so the lake it was cloned from keeps its bytes; with `key`, the
    earlier days are signed again over them (`resign_history`)."""
    _rewrite_method(lake, day, lambda m: EARLIER_RULES + "+" + m.split("+", 1)[1] if m and "+" in m else m)
    if key is not None:
        resign_history(lake, day, key)
    return lake


def _rewrite_method(lake: LakePaths, day: dt.date, earlier) -> None:
    for table in ("tool_lists", "tool_facts"):
        for path in partitions_through(lake, table, day, before=True):
            meta = pq.read_metadata(path)
            data = pq.read_table(path)
            methods = pa.array([earlier(m) for m in data["method_version"].to_pylist()],
                               data.schema.field("method_version").type)
            data = data.set_column(data.schema.get_field_index("method_version"), data.schema.field("method_version"),
                                   methods)
            fresh = path.with_name(path.name + ".earlier")
            pq.write_table(data, fresh, row_group_size=max(1, meta.row_group(0).num_rows) if meta.num_row_groups
                           else None, compression="zstd")
            fresh.replace(path)


def resign_history(lake: LakePaths, day: dt.date, key: Path) -> None:
    """The days before `day` signed again over their files as they now are, with a log of their own: a lake whose
    history was built (and signed) under the methods its files carry. The surfaces call a day signed only while
    what they read of earlier days is what their roots signed (integrity/served.py), so a clone whose earlier
    files were rewritten must be signed anew to stand for a real lake."""
    for path in lake.roots_dir.glob("day=*.json"):
        path.unlink()
    shutil.rmtree(lake.log_dir, ignore_errors=True)
    shutil.rmtree(lake.exports_dir, ignore_errors=True)
    sign_through(lake, day - dt.timedelta(days=1), key, now=dt.datetime.now(dt.UTC))


def flat_figures(one_day: dict, floor: dict, cold: dict | None, rules: dict | None = None) -> dict[str, float]:
    """The lake part's figures as one flat dict of named numbers (for the bench's history)."""
    figures = {
        "lake_day_wall_seconds": one_day["wall_seconds"], "lake_day_in_run_seconds": one_day["in_run_seconds"],
        "lake_day_site_seconds": one_day["site_seconds"], "lake_day_peak_rss_mb": one_day["peak_rss_mb"],
        "lake_floor_seconds": floor["floor_seconds"], "lake_floor_read_seconds": floor["floor_read_seconds"],
        "lake_floor_write_seconds": floor["floor_write_seconds"],
        "lake_floor_site_seconds": floor["floor_site_seconds"],
        "lake_day_to_floor": one_day["in_run_seconds"] / floor["floor_seconds"],
        "lake_map_to_floor": (one_day["in_run_seconds"] - one_day["site_seconds"]) / floor["floor_seconds"],
    }
    if cold is not None:
        figures.update({"lake_cold_day_wall_seconds": cold["wall_seconds"],
                        "lake_cold_day_in_run_seconds": cold["in_run_seconds"],
                        "lake_cold_day_site_seconds": cold["site_seconds"],
                        "lake_cold_day_peak_rss_mb": cold["peak_rss_mb"]})
    if rules is not None:
        figures.update({"lake_rules_day_wall_seconds": rules["wall_seconds"],
                        "lake_rules_day_in_run_seconds": rules["in_run_seconds"],
                        "lake_rules_day_site_seconds": rules["site_seconds"],
                        "lake_rules_day_peak_rss_mb": rules["peak_rss_mb"]})
    return figures


def _quantiles(values: list[float]) -> tuple[float, float, float]:
    ordered = sorted(values) or [0.0]
    at = lambda q: float(ordered[min(len(ordered) - 1, int(q * len(ordered)))])  # noqa: E731
    return at(0.5), at(0.9), at(0.99)


def shape_figures(lake: LakePaths, day: dt.date) -> dict[str, float]:
    """The lists of the built `day` against the corpora's (docs/scaling.md, "A real-shaped lake"): tokens and
    tools per list (each endpoint's list, as token_cost counts it), description length p99 (each tool row)."""
    con = duck.connect()
    rows = con.execute(
        "SELECT t.definition_tokens, s.tool_count FROM read_parquet($t) AS t JOIN read_parquet($s) AS s "
        "USING (server_key) WHERE s.tools_hash IS NOT NULL",
        {"t": str(lake.curated_file("token_cost", day)), "s": str(lake.curated_file("daily_status", day))}).fetchall()
    tokens, tools = [r[0] for r in rows], [r[1] for r in rows]
    descriptions = [n for (n,) in con.execute("SELECT length(coalesce(description, '')) FROM read_parquet($f)",
                                              {"f": str(lake.curated_file("tools", day))}).fetchall()]
    distinct = con.execute("SELECT count(DISTINCT tools_hash) FROM read_parquet($f)",
                           {"f": str(lake.curated_file("daily_status", day))}).fetchone()
    con.close()
    corpus = corpus_lists()
    figures: dict[str, float] = {"lake_distinct_lists": float(distinct[0] if distinct else 0)}
    for name, lake_values, corpus_values in (("tokens_per_list", tokens, corpus["tokens"]),
                                             ("tools_per_list", tools, corpus["tools"]),
                                             ("description_chars", descriptions, corpus["descriptions"])):
        for side, values in (("lake", lake_values), ("corpus", corpus_values)):
            p50, p90, p99 = _quantiles([float(v) for v in values])
            figures.update({f"{side}_{name}_p50": p50, f"{side}_{name}_p90": p90, f"{side}_{name}_p99": p99})
    return figures


def corpus_lists() -> dict[str, list[int]]:
    """Per corpus list its definition tokens and tool count, and every tool's description length."""
    servers = [[published(dict(t)) for t in s.tools] for s in load_servers(SHAPE_LISTS) if s.tools]
    return {"tokens": count_many([definition_text(tools) for tools in servers]),
            "tools": [len(tools) for tools in servers],
            "descriptions": [len(t.get("description") or "") for tools in servers for t in tools]}


def print_floor(f: dict[str, float], floor: dict) -> None:
    print(f"  the floor: what the day reads / writes  {f['lake_floor_read_seconds']:6.2f} s / "
          f"{f['lake_floor_write_seconds']:.2f} s = {f['lake_floor_seconds']:.2f} s   "
          f"({floor['floor_files_read']} files read, {len(floor['floor_rows_written'])} written; of the writes "
          f"the site's {floor['floor_site_files']:,} files, {floor['floor_site_bytes'] / 1e6:,.0f} MB, "
          f"{f['lake_floor_site_seconds']:.2f} s)")
    print(f"  ratio the day's run (site included) / floor {f['lake_day_to_floor']:6.1f} x   (goal <= 3 x; the map, "
          f"checks and root alone {f['lake_map_to_floor']:.1f} x; peak RSS {f['lake_day_peak_rss_mb']:,.0f} MB, "
          "goal <= 1,536)")
    print(f"  the day's site                         {f['lake_day_site_seconds']:8.1f} s   (goal <= 15 s at 100,000)")
    if "lake_cold_day_wall_seconds" in f:
        print(f"  the cold day (a method change): wall   {f['lake_cold_day_wall_seconds']:8.1f} s   (in-run "
              f"{f['lake_cold_day_in_run_seconds']:.1f} s, the site {f['lake_cold_day_site_seconds']:.1f} s; "
              f"peak RSS {f['lake_cold_day_peak_rss_mb']:,.0f} MB; goal <= 60 s; every token counted again)")
    if "lake_rules_day_wall_seconds" in f:
        print(f"  the cold day after a risk-rules change {f['lake_rules_day_wall_seconds']:8.1f} s   (in-run "
              f"{f['lake_rules_day_in_run_seconds']:.1f} s, the site {f['lake_rules_day_site_seconds']:.1f} s; "
              f"peak RSS {f['lake_rules_day_peak_rss_mb']:,.0f} MB; every list new, its token counts taken over)")
    print(f"  lists of the day: {f['lake_distinct_lists']:,.0f} distinct; tokens per list p50/p90 "
          f"{f['lake_tokens_per_list_p50']:,.0f}/{f['lake_tokens_per_list_p90']:,.0f} (corpora "
          f"{f['corpus_tokens_per_list_p50']:,.0f}/{f['corpus_tokens_per_list_p90']:,.0f}); tools p50/p90 "
          f"{f['lake_tools_per_list_p50']:.0f}/{f['lake_tools_per_list_p90']:.0f} (corpora "
          f"{f['corpus_tools_per_list_p50']:.0f}/{f['corpus_tools_per_list_p90']:.0f}); description chars p99 "
          f"{f['lake_description_chars_p99']:,.0f} (corpora {f['corpus_description_chars_p99']:,.0f})")
