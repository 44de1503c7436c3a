"""The live pages `sevenmaps serve` answers under /live/ (docs/agents.md "Live badges and lists"): badges,
the down list, the reliable lists and each server's page from the status shown now (current_status: the
latest built day, the open day's checks so far, the hourly checks), where the day's static site keeps the
signed day's, for the record. The same templates and badge functions as the site; what differs is only the
status they read.

A reliable list here leaves out what is not answering with tools now (seed 000: "answering with tools right
now"): an endpoint whose check shown now did not answer, or answered with an empty tool list (reliable-1.2); its
order is the signed day's ranking (sql/reliable_rankings.sql), never re-scored.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from jinja2 import Environment

from .feed import atom_feed
from .locks import watch
from .mapday import MapDay
from .pages import _environment, server_page, status_badge, uptime_badge
from .site import slug
from .status import DOWN_SINCE, statuses

LIVE_METHOD = "live-pages-1.7"  # 1.1: down since (DOWN_SINCE) and what uptime counts, as on the site; 1.2: the
# token cost of the tool list shown (status.py TOKEN_COST); 1.3: an empty tool list shown now is off the reliable lists;
# 1.4: a category page says what its list is, its order as reliable-1.3 ranks (and shows its first key), as the
# site's (site-1.4); 1.5: "over 1 day observed", not "1 days", as the site's (site-1.5); 1.6: tied servers keep
# one rank, as the day's list ranks them; percents rounded a half away from zero, names shown and cut changes said
# of how many, as the site's (site-1.7); the feed's provisional entries say so, and it is updated when its newest
# entry is (publishing/feed.py); 1.7: the feed's subtitle says whether it holds every change, a server's page
# shown down says since when, the down list its counts, a check's time to the second, as the site's (site-1.8)
_ID = r"[0-9a-f]{12}"
# Every path the live pages answer (anything else is a 404 without reading the map).
PATHS = {
    "badge": re.compile(rf"^badges/({_ID})\.svg$"),
    "uptime_badge": re.compile(rf"^badges/({_ID})-uptime\.svg$"),
    "server": re.compile(rf"^servers/({_ID})\.html$"),
    "down_html": re.compile(r"^down\.html$"),
    "down_json": re.compile(r"^down\.json$"),
    "categories": re.compile(r"^categories/(?:index\.html)?$"),
    "category": re.compile(r"^categories/([a-z0-9-]{1,80})\.html$"),
    "reliable_json": re.compile(r"^reliable\.json$"),
    "watch": re.compile(r"^feeds/watch\.xml$"),
}
TYPES = {"badge": "image/svg+xml", "uptime_badge": "image/svg+xml", "server": "text/html; charset=utf-8",
         "down_html": "text/html; charset=utf-8", "down_json": "application/json",
         "categories": "text/html; charset=utf-8", "category": "text/html; charset=utf-8",
         "reliable_json": "application/json", "watch": "application/atom+xml"}


@dataclass(frozen=True)
class Rendered:
    body: bytes
    media_type: str


def kind_of(path: str) -> tuple[str, str | None] | None:
    """(the kind of live page `path` is, its argument), or None for a path the live pages do not answer."""
    for kind, pattern in PATHS.items():
        m = pattern.fullmatch(path)
        if m:
            return kind, (m.group(1) if m.groups() else None)
    return None


def _live(mapday: MapDay) -> dict[str, Any]:
    """What a live page says it rests on beside the map day. No time of its own: the same inputs give the same
    bytes, so the same ETag, and a cache's copy stays valid until what is shown changes."""
    unsigned = {"unsigned_why": mapday.unsigned_why} if mapday.unsigned_why else {}  # files changed since signing
    return {"open_day": mapday.open_day.served() if mapday.open_day else None, "method": LIVE_METHOD, **unsigned}


def _down(mapday: MapDay) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Down now (current_status), since when (publishing/status.py DOWN_SINCE, as every surface reads it) and
    why, and the confirmed live incidents."""
    since = {r["_key"]: r["since"] for r in mapday.rows(DOWN_SINCE.format(where="true"))}
    rows = mapday.rows(
        "SELECT server_id, server_name, server_key, current_reason AS reason, decided_by FROM current_status "
        "WHERE current_shown_status = 'down' ORDER BY server_name, server_key")
    down = [{"server_id": r["server_id"], "server_name": r["server_name"],
             "since": since.get(r["server_key"]),
             "reason": r["reason"], "decided_by": r["decided_by"]} for r in rows]
    live = mapday.rows(
        "SELECT s.server_id, s.server_name, i.opened_day, i.last_confirmed_day, i.confirmed_by FROM incidents i "
        "JOIN daily_status s USING (server_key) WHERE i.status = 'live' AND i.shown ORDER BY s.server_name")
    for i in live:
        for k in ("opened_day", "last_confirmed_day"):
            i[k] = i[k].isoformat() if i[k] else None
    return down, live


def _reliable(mapday: MapDay) -> dict[str, list[dict[str, Any]]]:
    """Each category's reliable list as ranked on the built day, without what is not answering with tools now,
    ranks counted again over what is left: tied servers keep one rank, as the day's list gives them
    (helper-94: `row_number()` numbered a tie 1 and 2, the day's list and the site 1 and 1)."""
    rows = mapday.rows(
        "SELECT r.category, r.rank AS day_rank, r.server_id, r.server_name, r.tools_days, r.uptime_pct, "
        "r.checked_days, r.median_handshake_ms, "
        "rank() OVER (PARTITION BY r.category ORDER BY r.rank) AS rank "
        "FROM reliable_rankings r JOIN current_status c USING (server_key) "
        "WHERE c.current_code = 'o' AND c.current_tool_count > 0 "
        "ORDER BY r.category, rank, r.server_id")
    out: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        out.setdefault(r["category"], []).append(r)
    return out


@dataclass(frozen=True)
class Known:
    """What the live pages can name on the served day: a path naming anything else is a 404 without
    reading the map (surfaces/live_pages.py)."""
    server_ids: frozenset[str]
    category_slugs: frozenset[str]

    def names(self, kind: str, arg: str | None) -> bool:
        if kind in ("badge", "uptime_badge", "server"):
            return arg in self.server_ids
        if kind == "category":
            return arg in self.category_slugs
        return True


def known(mapday: MapDay) -> Known:
    ids = frozenset(r["server_id"] for r in mapday.rows("SELECT server_id FROM daily_status"))
    slugs = frozenset(slug(r["category"]) for r in mapday.rows("SELECT DISTINCT category FROM server_categories"))
    return Known(ids, slugs)


def render(mapday: MapDay, kind: str, arg: str | None, env: Environment | None = None) -> Rendered | None:
    """The live page of `kind` (kind_of), or None when it names nothing on the map."""
    env = env or _environment()
    day, live = mapday.day, _live(mapday)
    common: dict[str, Any] = {"day": day.isoformat(), "root": mapday.root, "live": live, "sources": []}
    body: str
    if kind in ("badge", "uptime_badge", "server"):
        keys = [r["server_key"] for r in mapday.rows("SELECT server_key FROM daily_status WHERE server_id = $i",
                                                     {"i": arg})]
        if len(keys) != 1:
            return None
        s = statuses(mapday, keys)[keys[0]]
        if kind == "badge":
            body = status_badge(s)
        elif kind == "uptime_badge":
            body = uptime_badge(s, five_minute=True)
        else:
            body = server_page(env, s, day, mapday.root, [], live)
    elif kind in ("down_html", "down_json"):
        down, incidents = _down(mapday)
        if kind == "down_json":
            body = json.dumps({**mapday.served(), "live": live, "down": down, "live_incidents": incidents},
                              indent=1, default=str) + "\n"
        else:
            body = env.get_template("down.html").render(**common, base="", down=down, incidents=incidents)
    elif kind in ("categories", "category", "reliable_json"):
        reliable = _reliable(mapday)
        on_map = mapday.rows("SELECT category, count(*) AS n FROM server_categories GROUP BY category "
                             "ORDER BY category")
        if kind == "reliable_json":
            body = json.dumps({**mapday.served(), "live": live, "reliable": reliable}, indent=1, default=str) + "\n"
        elif kind == "categories":
            listed = [{"category": r["category"], "slug": slug(r["category"]), "endpoints": r["n"],
                       "reliable": len(reliable.get(r["category"], []))} for r in on_map]
            body = env.get_template("categories.html").render(**common, base="../", categories=listed)
        else:
            names = [r["category"] for r in on_map if slug(r["category"]) == arg]
            if not names:
                return None
            body = env.get_template("category.html").render(**common, base="../", category=names[0],
                                                            rows=reliable.get(names[0], []))
    elif kind == "watch":
        body = atom_feed(mapday, watch(mapday, days=30))
    else:
        return None
    return Rendered(body.encode(), TYPES[kind])


__all__ = ["LIVE_METHOD", "Known", "Rendered", "kind_of", "known", "render"]
