"""The static site of one built day (docs/agents.md "Pages"): Jinja2 templates, inline SVG, no JavaScript.

site/days/<D>/ holds index.html (the map's numbers, shown statuses over 30 days, why checks failed, every
server with its badge), servers/<server_id>.html, badges/<server_id>.svg and <server_id>-uptime.svg,
categories/index.html and categories/<category>.html (the reliable lists), down.html (down now and
confirmed live incidents only), feeds/watch.xml (Atom: rises in risk, sign-in, payment and redirect
changes), integrity/ (the day's root document, the log's vkey and the log's inclusion proof of every file a
page was built from) and .well-known/7maps.json (the public key). site/current points at the newest day
built, so every path above is stable.
Built whole in a hidden folder and renamed into place; never signed (it is derived from signed files).
"""

from __future__ import annotations

import atexit
import contextlib
import datetime as dt
import gc
import json
import multiprocessing
import os
import re
import shutil
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from jinja2 import Environment
from markupsafe import Markup

from ..lake.folder_swap import replace_folder
from ..lake.memory import collector_off_in_worker, collector_paused, give_back_freed_memory
from ..lake.parquet_io import remove_stale_temps
from ..lake.paths import LakePaths
from . import charts
from .feed import atom_feed
from .locks import watch
from .mapday import HISTORY_DAYS, MapDay
from .pages import ServerPages, _environment, status_badge, uptime_badge, uptime_text
from .status import KeyRange, hold_day, key_ranges, statuses

SITE_METHOD = "site-1.8"  # 1.1: five-minute uptime on an owner's page; 1.2: what uptime counts, down since; 1.3:
# "answers, lists no tools" in the chart (status-1.2), and the day code o's words; 1.4: a category page says which
# day's list it is and the order reliable-1.3 ranks by, and shows its first key (days on which the server listed
# its tools); what uptime counts names the days of an empty list; 1.5: "over 1 day observed", not "1 days" (the
# five-minute uptime's label; the daily one's is server_history's, history-1.3); 1.6: "now" reads the owners'
# five-minute checks since the day, as the hourly ones (its index said it did); 1.7: down since starts at the first
# day shown down and reaches past the 30 days to the day it stopped answering (status.py DOWN_SINCE); percents
# rounded a half away from zero, as DuckDB and docs/analyst.md's queries round them (rules/rounding.py); a name's
# invisible characters as their codes, each name in its own <bdi> (publishing/shown.py); a page whose changes are
# cut says of how many; 1.8: the watch feed's subtitle says whether it holds every change of its window (feed.py);
# a server's page shown down says since when, as the down list; the down list its counts; a check's time to the
# second, as down since's (pages.py moment_text)
# Endpoints whose whole status is held at once while their pages are written: about 24 KB each in the real
# registry's shape. A part is a range of server keys (status.key_ranges), so it reads only the row groups of
# the tools file its keys fall in, and small parts cost little more than large ones: at 100,000 endpoints,
# 20 parts held a worker to about 0.4 GB where 4 took 1 GB, in the same time. With the day held once per
# worker (status.hold_day) a part costs less of its own, and the day's peak, which falls in the site's step,
# needs the workers smaller: 3,000 a part holds each to about 0.37 GB for about 7% more CPU (docs/scaling.md).
SERVERS_PER_PART = 3_000
_SLUG = re.compile(r"[^a-z0-9]+")
INDEX_SOURCES = ("daily_status", "server_history", "tools", "failure_reasons")
SERVER_SOURCES = ("daily_status", "server_history", "tools", "findings", "token_cost", "server_categories",
                  "readiness_scores", "tool_changes", "incidents")
CATEGORY_SOURCES = ("reliable_rankings", "server_categories")
DOWN_SOURCES = ("daily_status", "incidents")


@dataclass(frozen=True)
class SiteResult:
    day: dt.date
    folder: Path
    pages: int
    badges: int
    proofs: int
    seconds: float
    index_chart: str
    current: bool
    writers: int = 1  # processes that wrote the server pages
    writers_note: str | None = None  # why fewer wrote them than were asked for


def slug(text: str) -> str:
    return _SLUG.sub("-", (text or "other").lower()).strip("-") or "other"


def _root_lines(lake: LakePaths, day: dt.date) -> dict[str, str]:
    path = lake.root_file(day)
    if not path.is_file():
        return {}
    out = {}
    for line in json.loads(path.read_text()).get("lines", []):
        digest, _, rel = line.partition("  ")
        out[rel] = digest
    return out


def _sources(lake: LakePaths, day: dt.date, tables: tuple[str, ...], lines: dict[str, str],
             proofs: set[str]) -> list[dict[str, Any]]:
    out = []
    for table in tables:
        rel = lake.curated_file(table, day).relative_to(lake.root).as_posix()
        out.append({"path": rel, "sha256": lines.get(rel),
                    "proof": f"integrity/proofs/{rel}.tlog-proof" if rel in proofs else None})
    return out


def _copy_integrity(lake: LakePaths, day: dt.date, folder: Path) -> set[str]:
    """The root document and the proofs of the files pages are built from (from the day's snapshot)."""
    target = folder / "integrity"
    target.mkdir(parents=True)
    if lake.root_file(day).is_file():
        shutil.copyfile(lake.root_file(day), target / "root.json")
    # The keys a reader checks the root and the proofs with (docs/verifying.md): the public key at its
    # well-known path and the log's vkey, as the lake publishes them when it signs.
    if lake.well_known.is_file():
        (folder / ".well-known").mkdir()
        shutil.copyfile(lake.well_known, folder / ".well-known" / "7maps.json")
    if (lake.log_dir / "vkey").is_file():
        shutil.copyfile(lake.log_dir / "vkey", target / "vkey")
    copied = set()
    exported = lake.exports_dir / day.isoformat() / "proofs"
    wanted = set(INDEX_SOURCES + SERVER_SOURCES + CATEGORY_SOURCES + DOWN_SOURCES)
    for table in sorted(wanted):
        rel = lake.curated_file(table, day).relative_to(lake.root).as_posix()
        proof = exported / f"{rel}.tlog-proof"
        if proof.is_file():
            (target / "proofs" / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(proof, target / "proofs" / f"{rel}.tlog-proof")
            copied.add(rel)
    return copied


def _chart_days(mapday: MapDay) -> list[tuple[dt.date, dict[str, int]]]:
    counts: dict[dt.date, dict[str, int]] = {}
    for r in mapday.rows("SELECT day, shown_status, count(*) AS n FROM status_window GROUP BY ALL ORDER BY day"):
        counts.setdefault(r["day"], {})[r["shown_status"]] = r["n"]
    first = mapday.day - dt.timedelta(days=HISTORY_DAYS - 1)
    return [(first + dt.timedelta(days=i), counts.get(first + dt.timedelta(days=i), {})) for i in range(HISTORY_DAYS)]


class ChangedSinceSigningError(RuntimeError):
    """A signed day whose files are no longer those its root signed (integrity/served.py)."""


def build_site(lake: LakePaths, day: dt.date, servers_per_part: int = SERVERS_PER_PART,
               workers: int | None = None) -> SiteResult:
    """The day's site, built whole in a hidden folder and renamed into place. Server pages are written
    `servers_per_part` endpoints at a time, by `workers` processes (site_workers() when None) when there
    is more than one part."""
    started = time.perf_counter()
    endpoints = _endpoints_of(lake, day)
    parts = max(1, -(-endpoints // max(1, servers_per_part)))
    workers = min(parts, workers if workers is not None else site_workers())
    parts = -(-parts // workers) * workers  # as many for each worker: none writes a last part alone
    env = _environment(auto_reload=False)
    site_root = lake.root / "site"
    (site_root / "days").mkdir(parents=True, exist_ok=True)
    remove_stale_temps(site_root, (".day-*", ".old-*"))  # a killed build's working folders, an hour old
    tmp = site_root / f".day-{day}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        # The workers start first: their interpreters' start and their opening of the day go on while this
        # process opens the day and writes what needs no endpoint's page (docs/scaling.md).
        with _writers(lake.root, day, workers) as pool, collector_paused(), \
                MapDay.open(lake, day, reviews=False) as mapday:  # the day's record: incidents as built
            if mapday.unsigned_why:  # never pages that show changed files beside the root's hashes
                raise ChangedSinceSigningError(f"{day}'s site is not built: {mapday.unsigned_why}")
            result = _render(lake, mapday, env, tmp, parts, pool, workers)
            if mapday.signed_inputs_changed():  # a file or root written while the pages were rendered
                raise ChangedSinceSigningError(f"{day}'s site is not kept: a file it was built from, or a root, was "
                                               "written while it was built; build it again")
        final = site_root / "days" / day.isoformat()
        # Never a moment without the day's site (lake/folder_swap.py)
        replace_folder(tmp, final, site_root / f".old-{day}-{uuid.uuid4().hex[:8]}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    current = _point_current(site_root, day)
    pages, badges, proofs, chart, writers, writers_note = result
    return SiteResult(day, final, pages, badges, proofs, time.perf_counter() - started, chart, current, writers,
                      writers_note)


def _endpoints_of(lake: LakePaths, day: dt.date) -> int:
    """The day's endpoints, from its daily_status file's footer (0 when it has none: MapDay.open then says so)."""
    found = lake.curated_file("daily_status", day)
    return pq.read_metadata(found).num_rows if found.is_file() else 0


@contextlib.contextmanager
def _writers(lake_root: Path, day: dt.date, workers: int) -> Iterator[ProcessPoolExecutor | None]:
    """`workers` processes that write server pages (None for one: this process writes them), each started at
    once and opening the day for itself (_open_in_worker)."""
    if workers <= 1:
        yield None
        return
    context = multiprocessing.get_context("spawn")  # DuckDB's threads make a fork unsafe
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_open_in_worker,
                             initargs=(lake_root, day)) as pool:
        for _ in range(workers):
            pool.submit(os.getpid)  # a spawning pool starts a worker for a task that finds none idle
        yield pool


def _point_current(site_root: Path, day: dt.date) -> bool:
    """site/current -> days/<newest day built>, swapped atomically; an older day rebuilt leaves it."""
    link = site_root / "current"
    built = sorted(p.name for p in (site_root / "days").iterdir() if p.is_dir())
    newest = built[-1] if built else day.isoformat()
    tmp_link = site_root / f".current-{uuid.uuid4().hex[:8]}"
    os.symlink(f"days/{newest}", tmp_link)
    os.replace(tmp_link, link)
    return newest == day.isoformat()


def site_workers() -> int:
    """Processes that write server pages side by side: the cores this process may use, at most 4 (each
    holds a part of the day's statuses and its own DuckDB connection)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    return max(1, min(4, cores))


class _Folder:
    """A folder of the site that files are written into by name. Each file is written as
    Path.write_text(text, encoding="utf-8") writes it (created or emptied, with the umask's mode), in three
    system calls and no file object, and opened relative to the folder's own descriptor where the system
    allows it, so the kernel does not walk the whole path again for each one: a day's site is about 270,000
    files, and a part's took 0.78 s of CPU this way against 1.26 s (docs/scaling.md).

    write_same() is for the many files of a few texts (the badges: 180,000 files a day of a few dozen
    texts): the first file of a text is written under a hidden name of this folder object's own, every file
    of it is a hard link to that one, and close() removes the hidden names. A link is one system call and
    no new inode or block where a file is three calls, an inode and a block of its own (docs/scaling.md)."""

    LINKS_PER_FILE = 60_000  # ext4 allows 65,000 names of one file; a new file of the text after this many

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY) if os.open in os.supports_dir_fd else None
        self._tag = uuid.uuid4().hex[:12]  # hidden names no other writer of the folder uses
        self._same: dict[str, list[Any]] = {}  # text -> [its hidden name, links made to it]
        self._hidden: list[str] = []

    def _open(self, name: str, flags: int) -> int:
        return os.open(name, flags, 0o666, dir_fd=self.fd) if self.fd is not None else \
            os.open(self.path / name, flags, 0o666)

    def write(self, name: str, text: str, flags: int = os.O_TRUNC) -> None:
        data = (text if os.linesep == "\n" else text.replace("\n", os.linesep)).encode("utf-8")
        fd = self._open(name, os.O_WRONLY | os.O_CREAT | flags | getattr(os, "O_CLOEXEC", 0))
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)

    def write_same(self, name: str, text: str) -> None:
        """`name` with `text`, as write() writes it (a name already there replaced), as a link to this
        folder's first file of the same text; written on its own where the file system makes no link."""
        same = self._same.get(text)
        if same is None or same[1] >= self.LINKS_PER_FILE:
            hidden = f".same-{self._tag}-{len(self._hidden)}"
            self.write(hidden, text, os.O_EXCL)
            self._hidden.append(hidden)
            same = self._same[text] = [hidden, 0]
        for _ in range(2):
            try:
                if self.fd is not None:
                    os.link(same[0], name, src_dir_fd=self.fd, dst_dir_fd=self.fd, follow_symlinks=False)
                else:
                    os.link(self.path / same[0], self.path / name, follow_symlinks=False)
                same[1] += 1
                return
            except FileExistsError:
                self._remove(name)  # never written through: it may be a link to another text's file
            except (OSError, NotImplementedError):  # too many links, or none on this system
                break
        self._remove(name)
        self.write(name, text)

    def _remove(self, name: str) -> None:
        try:
            if self.fd is not None:
                os.unlink(name, dir_fd=self.fd)
            else:
                os.unlink(self.path / name)
        except FileNotFoundError:
            pass

    def close(self) -> None:
        for hidden in self._hidden:
            self._remove(hidden)
        self._hidden, self._same = [], {}
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _server_pages(mapday: MapDay, env: Environment, out: Path, part: KeyRange,
                  sources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Writes the page and the two badges of each endpoint in `part` of the day; returns what the index,
    the down list and the totals need of each."""
    day = mapday.day
    servers = []
    pages, badges = _Folder(out / "servers"), _Folder(out / "badges")
    render = ServerPages(env, day, mapday.root, sources).render
    try:
        for s in statuses(mapday, part=part).values():
            pages.write(f"{s['server_id']}.html", render(s))
            badges.write_same(f"{s['server_id']}.svg", status_badge(s))
            badges.write_same(f"{s['server_id']}-uptime.svg", uptime_badge(s))
            servers.append(_index_row(s))
    finally:
        pages.close()
        badges.close()
    return servers


def _index_row(s: dict[str, Any]) -> dict[str, Any]:
    """What the index, the down list and the totals keep of an endpoint's status."""
    label, value = uptime_text(s["history"])
    return {"server_id": s["server_id"], "server_name": s["server_name"], "server_key": s["server_key"],
            "url": s["url"], "shown_status": s["shown_status"], "uptime_text": f"{label}: {value}",
            "tools": len(s["tools"]), "red": s["risk_mix"]["red"], "since": s["down_since"],
            "reason": (s["current"] or {}).get("current_reason") or (s["daily"] or {}).get("reason"),
            "live_incidents": [_as_before(i) for i in s["incidents"] if i["status"] == "live"]}


# An incident's review fields (incidents-1.1): left out of down.json where empty, so a day built before them
# renders as it did.
REVIEW_FIELDS = ("confirmed_check_at", "confirmed_reviewer", "closed_by", "closed_at", "closed_note")


def _as_before(incident: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in incident.items() if k not in REVIEW_FIELDS or v is not None}


# What a worker process opened once for every part it writes: the day and the environment.
_IN_WORKER: dict[str, Any] = {}


def _open_in_worker(lake_root: Path, day: dt.date) -> None:
    """A worker's start: the day opened, its day-wide answers computed (status.py hold_day) and the templates
    compiled once, not once per part. The cyclic collector is left off in the worker: a part's statuses and
    pages make no reference cycle (a collection after each part finds none), so the collections the part's
    million objects set off only walked them again, about a third of reading the statuses (docs/scaling.md)."""
    # the parent checks the day's files against its root before any page is kept (build_site)
    mapday = MapDay.open(LakePaths.at(lake_root), day, reviews=False, files_checked_by_caller=True)
    atexit.register(mapday.close)
    hold_day(mapday)
    _IN_WORKER.update(mapday=mapday, env=_environment(auto_reload=False))
    collector_off_in_worker()


def _server_pages_apart(out: Path, part: KeyRange, sources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """_server_pages in a worker process, over the day it opened (_open_in_worker)."""
    rows = _server_pages(_IN_WORKER["mapday"], _IN_WORKER["env"], out, part, sources)
    gc.collect()  # whatever cycle a part did make is freed before the next part
    give_back_freed_memory()  # and the pages its statuses held, before the next part's are read
    return rows


def _render(lake: LakePaths, mapday: MapDay, env: Environment, out: Path, parts: int,
            pool: ProcessPoolExecutor | None, workers: int) -> tuple[int, int, int, str, int, str | None]:
    day = mapday.day
    proofs = _copy_integrity(lake, day, out)
    lines = _root_lines(lake, day)
    common = {"day": day.isoformat(), "root": mapday.root}
    for folder in ("servers", "badges", "categories", "feeds"):
        (out / folder).mkdir()

    def meanwhile() -> int:
        """The pages that need no endpoint's page, written while the workers write those."""
        (out / "feeds" / "watch.xml").write_text(atom_feed(mapday, watch(mapday, days=30)), encoding="utf-8")
        return _category_pages(mapday, env, out, common, _sources(lake, day, CATEGORY_SOURCES, lines, proofs))

    servers, categories, workers, writers_note = _all_server_pages(
        mapday, env, out, _sources(lake, day, SERVER_SOURCES, lines, proofs), parts, pool, workers, meanwhile)
    servers.sort(key=lambda s: (s["server_name"] or "", s["server_key"]))
    chart = charts.shown_status_chart(_chart_days(mapday))
    _index_page(mapday, env, out, common, servers, chart, _sources(lake, day, INDEX_SOURCES, lines, proofs))
    down = [{"server_id": s["server_id"], "server_name": s["server_name"], "since": s["since"], "reason": s["reason"]}
            for s in servers if s["shown_status"] == "down"]
    live = [{"server_id": s["server_id"], "server_name": s["server_name"], **i}
            for s in servers for i in s["live_incidents"]]
    (out / "down.html").write_text(env.get_template("down.html").render(
        **common, base="", down=down, incidents=live, sources=_sources(lake, day, DOWN_SOURCES, lines, proofs)),
        encoding="utf-8")
    (out / "down.json").write_text(json.dumps({"day": day.isoformat(), "down": down, "live_incidents": live},
                                              indent=1, default=str) + "\n", encoding="utf-8")
    pages = len(servers) + 1 + categories + 3
    return pages, 2 * len(servers), len(proofs), chart, workers, writers_note


def _all_server_pages(mapday: MapDay, env: Environment, out: Path, sources: list[dict[str, Any]], parts: int,
                      pool: ProcessPoolExecutor | None, workers: int,
                      meanwhile: Callable[[], int]) -> tuple[list[dict[str, Any]], int, int, str | None]:
    """Every endpoint's page and badges, written from its whole status a part of the day at a time; what the
    index, the down list and the totals need of every endpoint is kept in a few fields (docs/scaling.md). At
    scale the parts are shared among the `pool`'s worker processes, each opening the day once for itself,
    and `meanwhile` runs here while they write. Returns those fields, what `meanwhile` returned, the writers
    and why fewer wrote than were asked for."""
    ranges = key_ranges(mapday, parts)
    servers: list[dict[str, Any]] = []
    meant: int | None = None
    writers_note = None
    if pool is None:
        workers = 1
    else:
        try:
            written = pool.map(_server_pages_apart, [out] * parts, ranges, [sources] * parts)
            meant = meanwhile()
            for rows in written:
                servers += rows
            # The workers end before the index is rendered here: each holds its day and the memory of its
            # parts, and the index's own peak beside theirs was the day's peak (docs/scaling.md).
            pool.shutdown(wait=True)
        except BrokenProcessPool as exc:
            # A host whose main module a spawned process cannot import again (a script read from stdin)
            # loses its workers: every page is then written here, over whatever the workers wrote, once they
            # are gone. A worker killed while it wrote a part never closed its badges folder: the hidden files
            # its badges were links to are removed (the badges written here link to files of their own).
            pool.shutdown(wait=True)
            for hidden in (out / "badges").glob(".same-*"):
                hidden.unlink(missing_ok=True)
            writers_note = f"worker processes failed ({exc}); pages written in one process"
            servers, workers = [], 1
    if workers <= 1:
        if len(ranges) > 1 and not mapday.held:
            hold_day(mapday)
        for part in ranges:
            servers += _server_pages(mapday, env, out, part, sources)
    return servers, meanwhile() if meant is None else meant, workers, writers_note


def _index_page(mapday: MapDay, env: Environment, out: Path, common: dict[str, Any], servers: list[dict[str, Any]],
                chart: str, sources: list[dict[str, Any]]) -> None:
    failures = mapday.rows("SELECT reason_class, label, failed_checks, share FROM failure_reasons ORDER BY position")
    # What "now" on a page built once means: the latest check current_status read (docs/agents.md, "Pages").
    held = "held_current_status" if mapday.held else "current_status"  # read once already when held
    ((shown_as_of,),) = mapday.con.execute(f"SELECT max(decided_at) FROM {held}").fetchall()
    totals = {"endpoints": len(servers),
              "answering": sum(1 for s in servers if s["shown_status"] == "answers with tools"),
              "down": sum(1 for s in servers if s["shown_status"] == "down"),
              "tools": sum(s["tools"] for s in servers),
              "red": sum(s["red"] for s in servers)}
    index = env.get_template("index.html").render(
        **common, base="", totals=totals, servers=servers, chart_days=HISTORY_DAYS, status_chart=Markup(chart),
        shown_as_of=shown_as_of.isoformat() if shown_as_of is not None else None,
        failures=failures, failed_total=sum(r["failed_checks"] for r in failures),
        failure_chart=Markup(charts.horizontal_bars([(r["label"], r["failed_checks"], "#c62828") for r in failures],
                                                    title="Failed checks by class")),
        sources=sources)
    (out / "index.html").write_text(index, encoding="utf-8")


def _category_pages(mapday: MapDay, env: Environment, out: Path, common: dict[str, Any],
                    sources: list[dict[str, Any]]) -> int:
    """The reliable list of each category on the map, and their index; returns how many lists."""
    rankings = mapday.rows("SELECT category, rank, server_id, server_name, tools_days, uptime_pct, checked_days, "
                           "median_handshake_ms FROM reliable_rankings ORDER BY category, rank, server_id")
    on_map = mapday.rows("SELECT category, count(*) AS n FROM server_categories GROUP BY category ORDER BY category")
    category_page = env.get_template("category.html")
    listed = []
    for row in on_map:
        name = row["category"]
        rows = [r for r in rankings if r["category"] == name]
        listed.append({"category": name, "slug": slug(name), "endpoints": row["n"], "reliable": len(rows)})
        (out / "categories" / f"{slug(name)}.html").write_text(category_page.render(
            **common, base="../", category=name, rows=rows, sources=sources), encoding="utf-8")
    (out / "categories" / "index.html").write_text(env.get_template("categories.html").render(
        **common, base="../", categories=listed, sources=sources), encoding="utf-8")
    return len(listed)
