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

import datetime as dt
import json
import multiprocessing
import os
import re
import shutil
import time
import uuid
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from ..lake.paths import LakePaths
from . import charts
from .locks import watch
from .mapday import HISTORY_DAYS, MapDay
from .status import statuses

SITE_METHOD = "site-1.2"  # 1.1: five-minute uptime on an owner's page; 1.2: what uptime counts, down since
# Endpoints whose whole status is held at once while their pages are written: about 10 KB each.
SERVERS_PER_PART = 10_000
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


def uptime_text(history: dict[str, Any] | None) -> tuple[str, str]:
    """(label, value) as the methodology words it: '30-day uptime' only from 14 checked days, else
    'over N days observed'; the figure is floored, so 100% only when every checked day answered."""
    if not history or history.get("uptime_pct") is None:
        return "uptime", "no data"
    label = history["uptime_label"] or f"over {history['checked_days']} days observed"
    return label, f"{history['uptime_pct']:.1f}%"


def uptime_colour(pct: float | None) -> str:
    if pct is None:
        return "#757575"
    return "#2e7d32" if pct >= 99 else "#9e9d24" if pct >= 95 else "#ef6c00" if pct >= 80 else "#c62828"


def status_colour(shown: str | None) -> str:
    return charts.SHOWN_COLOURS.get(shown or "no data", "#757575")


def _environment() -> Environment:
    return Environment(loader=PackageLoader("sevenmaps_pipeline.publishing", "templates"),
                       autoescape=select_autoescape(["html", "xml"]), trim_blocks=True, lstrip_blocks=True)


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


def _atom(mapday: MapDay, entries: list[dict[str, Any]]) -> str:
    updated = dt.datetime.combine(mapday.day, dt.time(), dt.UTC).isoformat()
    items = []
    for e in entries:
        ident = f"urn:7maps:{e['server_id']}:{e['day']}:{e['kind']}:{e['tool_name'] or ''}"
        title = f"{e['server_name'] or e['server_key']}: {e['kind']}" + (f" {e['tool_name']}" if e["tool_name"] else "")
        items.append(f"<entry><id>{escape(ident)}</id><title>{escape(title)}</title>"
                     f"<updated>{e['day']}T00:00:00+00:00</updated>"
                     f"<link href=\"../servers/{escape(e['server_id'])}.html\"/>"
                     f"<summary>{escape(e['detail'] or e['kind'])}</summary></entry>")
    return ("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\">"
            f"<id>urn:7maps:watch</id><title>7Maps watch: rises in risk, sign-in, payment and redirect changes"
            f"</title><updated>{updated}</updated><author><name>7Maps</name></author>{''.join(items)}</feed>\n")


def _chart_days(mapday: MapDay) -> list[tuple[dt.date, dict[str, int]]]:
    counts: dict[dt.date, dict[str, int]] = {}
    for r in mapday.rows("SELECT day, shown_status, count(*) AS n FROM status_window GROUP BY ALL ORDER BY day"):
        counts.setdefault(r["day"], {})[r["shown_status"]] = r["n"]
    first = mapday.day - dt.timedelta(days=HISTORY_DAYS - 1)
    return [(first + dt.timedelta(days=i), counts.get(first + dt.timedelta(days=i), {})) for i in range(HISTORY_DAYS)]


def build_site(lake: LakePaths, day: dt.date, servers_per_part: int = SERVERS_PER_PART,
               workers: int | None = None) -> SiteResult:
    """The day's site, built whole in a hidden folder and renamed into place. Server pages are written
    `servers_per_part` endpoints at a time, by `workers` processes (site_workers() when None) when there
    is more than one part."""
    started = time.perf_counter()
    env = _environment()
    site_root = lake.root / "site"
    (site_root / "days").mkdir(parents=True, exist_ok=True)
    tmp = site_root / f".day-{day}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        with MapDay.open(lake, day, reviews=False) as mapday:  # the day's record: incidents as built
            result = _render(lake, mapday, env, tmp, servers_per_part, workers)
        final = site_root / "days" / day.isoformat()
        old = site_root / f".old-{day}-{uuid.uuid4().hex[:8]}"
        if final.exists():
            final.rename(old)
        tmp.rename(final)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    current = _point_current(site_root, day)
    pages, badges, proofs, chart, writers, writers_note = result
    return SiteResult(day, final, pages, badges, proofs, time.perf_counter() - started, chart, current, writers,
                      writers_note)


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


def five_minute_text(five: dict[str, Any] | None) -> tuple[str, str] | None:
    """(label, value) of an owner-verified endpoint's five-minute uptime, labelled as the seed labels uptime
    (publishing/status.py labelled_five_minute_uptime); None for an endpoint without five-minute checks."""
    if not five or five.get("uptime_30d_pct") is None:
        return None
    return five["label_30d"], f"{five['uptime_30d_pct']:.1f}%"


def status_badge(s: dict[str, Any]) -> str:
    return charts.badge("7maps", s["shown_status"] or "no data", status_colour(s["shown_status"]))


def uptime_badge(s: dict[str, Any], five_minute: bool = False) -> str:
    """The uptime badge: the daily uptime with its label; with `five_minute`, an owner-verified endpoint's
    five-minute uptime instead where it has one (the live badge: docs/agents.md)."""
    five = five_minute_text(s["five_minute_uptime"]) if five_minute else None
    if five is not None:
        return charts.badge(*five, uptime_colour(s["five_minute_uptime"]["uptime_30d_pct"]))
    label, value = uptime_text(s["history"])
    return charts.badge(label, value, uptime_colour((s["history"] or {}).get("uptime_pct")))


def server_page(env: Environment, s: dict[str, Any], day: dt.date, root: dict[str, Any] | None,
                sources: list[dict[str, Any]], live: dict[str, Any] | None = None) -> str:
    """One endpoint's page from its server_status (the day's site, and `sevenmaps serve`'s live pages, which
    pass `live`: what the status shown now rests on)."""
    label, value = uptime_text(s["history"])
    history = (s["history"] or {}).get("history") or ""
    chance = s["history"] or {}
    tokens = s["token_cost"] or {}
    five = five_minute_text(s["five_minute_uptime"])
    return env.get_template("server.html").render(
        day=day.isoformat(), root=root, base="../", s=s, uptime_text=f"{label}: {value}", sources=sources,
        live=live, five_minute_text=f"{five[0]}: {five[1]}" if five else None,
        bars=Markup(charts.day_code_bars(history, day)),
        interval=Markup(charts.interval_chart(chance.get("success_chance"), chance.get("success_chance_low"),
                                              chance.get("success_chance_high"))),
        risk_mix=Markup(charts.risk_mix_bar(s["risk_mix"])),
        tokens=Markup(charts.position_chart(tokens.get("definition_tokens"),
                                            tokens.get("day_median_definition_tokens"),
                                            tokens.get("day_p90_definition_tokens"),
                                            tokens.get("definition_tokens_percentile"))))


def _server_pages(mapday: MapDay, env: Environment, out: Path, part: tuple[int, int],
                  sources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Writes the page and the two badges of each endpoint in `part` of the day; returns what the index,
    the down list and the totals need of each."""
    day = mapday.day
    servers = []
    for s in statuses(mapday, part=part).values():
        label, value = uptime_text(s["history"])
        (out / "servers" / f"{s['server_id']}.html").write_text(server_page(env, s, day, mapday.root, sources),
                                                                 encoding="utf-8")
        (out / "badges" / f"{s['server_id']}.svg").write_text(status_badge(s), encoding="utf-8")
        (out / "badges" / f"{s['server_id']}-uptime.svg").write_text(uptime_badge(s), encoding="utf-8")
        servers.append({
            "server_id": s["server_id"], "server_name": s["server_name"], "server_key": s["server_key"],
            "url": s["url"], "shown_status": s["shown_status"], "uptime_text": f"{label}: {value}",
            "tools": len(s["tools"]), "red": s["risk_mix"]["red"],
            "since": s["down_since"],
            "reason": (s["current"] or {}).get("current_reason") or (s["daily"] or {}).get("reason"),
            "live_incidents": [_as_before(i) for i in s["incidents"] if i["status"] == "live"]})
    return servers


# An incident's review fields (incidents-1.1): left out of down.json where empty, so a day built before them
# renders as it did.
REVIEW_FIELDS = ("confirmed_check_at", "confirmed_reviewer", "closed_by", "closed_at", "closed_note")


def _as_before(incident: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in incident.items() if k not in REVIEW_FIELDS or v is not None}


def _server_pages_apart(lake_root: Path, day: dt.date, out: Path, part: tuple[int, int],
                        sources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """_server_pages in a worker process, over the day opened there."""
    with MapDay.open(LakePaths.at(lake_root), day, reviews=False) as mapday:
        return _server_pages(mapday, _environment(), out, part, sources)


def _render(lake: LakePaths, mapday: MapDay, env: Environment, out: Path, servers_per_part: int = SERVERS_PER_PART,
            workers: int | None = None) -> tuple[int, int, int, str, int, str | None]:
    day = mapday.day
    proofs = _copy_integrity(lake, day, out)
    lines = _root_lines(lake, day)
    common = {"day": day.isoformat(), "root": mapday.root}
    (out / "servers").mkdir()
    (out / "badges").mkdir()
    (out / "categories").mkdir()
    (out / "feeds").mkdir()
    server_sources = _sources(lake, day, SERVER_SOURCES, lines, proofs)
    # Each endpoint's page is written from its whole status a part of the day at a time; what the index,
    # the down list and the totals need of every endpoint is kept in a few fields (docs/scaling.md). At
    # scale the parts are shared among worker processes, each reading the day for itself.
    endpoints = mapday.rows("SELECT count(*) AS n FROM daily_status")[0]["n"]
    parts = max(1, -(-endpoints // max(1, servers_per_part)))
    workers = min(parts, workers if workers is not None else site_workers())
    servers: list[dict[str, Any]] = []
    writers_note = None
    if workers > 1:
        context = multiprocessing.get_context("spawn")  # DuckDB's threads make a fork unsafe
        try:
            with ProcessPoolExecutor(workers, mp_context=context) as pool:
                for rows in pool.map(_server_pages_apart, [lake.root] * parts, [day] * parts, [out] * parts,
                                     [(part, parts) for part in range(parts)], [server_sources] * parts):
                    servers += rows
        except BrokenProcessPool as exc:
            # A host whose main module a spawned process cannot import again (a script read from stdin)
            # loses its workers: every page is then written here, over whatever the workers wrote.
            writers_note = f"worker processes failed ({exc}); pages written in one process"
            servers, workers = [], 1
    if workers <= 1:
        for part in range(parts):
            servers += _server_pages(mapday, env, out, (part, parts), server_sources)
    servers.sort(key=lambda s: (s["server_name"] or "", s["server_key"]))
    pages, badges = len(servers), 2 * len(servers)
    failures = mapday.rows("SELECT reason_class, label, failed_checks, share FROM failure_reasons ORDER BY position")
    failed_total = sum(r["failed_checks"] for r in failures)
    chart = charts.shown_status_chart(_chart_days(mapday))
    totals = {"endpoints": len(servers),
              "answering": sum(1 for s in servers if s["shown_status"] == "answers with tools"),
              "down": sum(1 for s in servers if s["shown_status"] == "down"),
              "tools": sum(s["tools"] for s in servers),
              "red": sum(s["red"] for s in servers)}
    index = env.get_template("index.html").render(
        **common, base="", totals=totals, servers=servers, chart_days=HISTORY_DAYS, status_chart=Markup(chart),
        failures=failures, failed_total=failed_total,
        failure_chart=Markup(charts.horizontal_bars([(r["label"], r["failed_checks"], "#c62828") for r in failures],
                                                    title="Failed checks by class")),
        sources=_sources(lake, day, INDEX_SOURCES, lines, proofs))
    (out / "index.html").write_text(index, encoding="utf-8")
    pages += 1
    rankings = mapday.rows("SELECT category, rank, server_id, server_name, uptime_pct, checked_days, "
                           "median_handshake_ms FROM reliable_rankings ORDER BY category, rank, server_id")
    on_map = mapday.rows("SELECT category, count(*) AS n FROM server_categories GROUP BY category ORDER BY category")
    category_page = env.get_template("category.html")
    category_sources = _sources(lake, day, CATEGORY_SOURCES, lines, proofs)
    listed = []
    for row in on_map:
        name = row["category"]
        rows = [r for r in rankings if r["category"] == name]
        listed.append({"category": name, "slug": slug(name), "endpoints": row["n"], "reliable": len(rows)})
        (out / "categories" / f"{slug(name)}.html").write_text(category_page.render(
            **common, base="../", category=name, rows=rows, sources=category_sources), encoding="utf-8")
        pages += 1
    (out / "categories" / "index.html").write_text(env.get_template("categories.html").render(
        **common, base="../", categories=listed, sources=category_sources), encoding="utf-8")
    down = [{"server_id": s["server_id"], "server_name": s["server_name"], "since": s["since"], "reason": s["reason"]}
            for s in servers if s["shown_status"] == "down"]
    live = [{"server_id": s["server_id"], "server_name": s["server_name"], **i}
            for s in servers for i in s["live_incidents"]]
    (out / "down.html").write_text(env.get_template("down.html").render(
        **common, base="", down=down, incidents=live, sources=_sources(lake, day, DOWN_SOURCES, lines, proofs)),
        encoding="utf-8")
    (out / "down.json").write_text(json.dumps({"day": day.isoformat(), "down": down, "live_incidents": live},
                                              indent=1, default=str) + "\n", encoding="utf-8")
    pages += 3
    (out / "feeds" / "watch.xml").write_text(_atom(mapday, watch(mapday, days=30)["entries"]), encoding="utf-8")
    return pages, badges, len(proofs), chart, workers, writers_note
