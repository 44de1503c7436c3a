"""`sevenmaps server ID`: one endpoint's 30 days, the status shown now, its tools and recent changes, as the
map's server_status answers them (publishing/status.py: the site's server page and the MCP tool read the same
function, so nothing here is computed anew; docs/operations.md "The command line")."""

from __future__ import annotations

import argparse
import datetime as dt
import json
from typing import Any

from ..lake.paths import parse_day
from ..publishing.charts import CODE_WORDS
from ..publishing.mapday import LeftTheMapError, MapDay
from ..publishing.pages import five_minute_text, moment_text, uptime_text
from ..publishing.status import server_status
from ..rules.rounding import percent
from .common import _existing_lake, terminal_safe

CHANGES_SHOWN = 20


def cmd_server(args: argparse.Namespace) -> int:
    lake = _existing_lake(args)
    # As the map's server answers it (live: the open day so far read too), unless a day is asked for.
    # --day D reads the day as its site does: its incidents as built, a later review not applied (helper-94)
    day = parse_day(args.day) if args.day else None
    with MapDay.open(lake, day, reviews=day is None, live=day is None) as mapday:
        try:
            status = server_status(mapday, args.server)
        except LeftTheMapError as exc:  # the next step, in the one line (helper-100)
            raise LeftTheMapError(f"{exc}: add `--day {exc.last_day}` to see it as it was then", exc.last_day) from None
    if args.json:
        print(json.dumps(status, indent=1, default=str))
    else:
        print("\n".join(terminal_safe(line) for line in server_text(status, live=not args.day)))
    return 0


def dated_codes(history: str, last_day: dt.date) -> list[str]:
    """The daily codes a week to a line, each line starting with its first day (as the server page's bars
    date theirs: the last code is the map day's)."""
    first = last_day - dt.timedelta(days=len(history) - 1)
    return [f"  {first + dt.timedelta(days=i)}  {' '.join(history[i:i + 7])}" for i in range(0, len(history), 7)]


def _now_line(s: dict[str, Any], live: bool) -> str:
    current, daily = s["current"] or {}, s["daily"] or {}
    by = (current.get("decided_by") or "daily").replace("_", "-")  # "five-minute", as the pages word it
    at = current.get("decided_at") or daily.get("checked_at")
    reason = current.get("current_reason") or daily.get("reason")
    since = f"; down since {s['down_since']}" if s.get("down_since") else ""
    # a day asked for is a record of that day, not the status shown now (helper-85)
    label = "status shown now" if live else f"status shown on the map of {s['map_day']}"
    return (f"{label}: {s['shown_status'] or 'no data'} (the {by} check{f' at {moment_text(at)}' if at else ''}"
            f"{f': {reason}' if reason else ''}){since}")


def _uptime_lines(s: dict[str, Any]) -> list[str]:
    """Uptime and success chance as the server page gives them (publishing/pages.py): the same precision,
    what they count beside them (docs/methodology.md, "What uptime counts"), and an owner-verified
    endpoint's five-minute uptime."""
    history = s["history"] or {}
    label, value = uptime_text(s["history"])
    line = f"{label}: {value}"
    if history.get("success_chance") is not None:
        line += (f"; success chance {percent(history['success_chance'], 1)} (90% interval "
                 f"{percent(history['success_chance_low'], 1)} to {percent(history['success_chance_high'], 1)})")
    lines = [line]
    if s.get("uptime_counts"):
        lines.append(f"uptime and success chance count answers: this server {s['uptime_counts']}")
    five = five_minute_text(s.get("five_minute_uptime"))
    if five is not None:
        lines.append(f"{five[0]}: {five[1]} (checks every five minutes, which the verified owner chose; not "
                     "covered by the signed root)")
    return lines


def _unsigned(s: dict[str, Any]) -> str:
    """Why the day is not shown signed: not yet, or its files changed since (the answer's note says which)."""
    note = s.get("note") or ""
    return note.removeprefix(f"{s['map_day']} is ") if "shown unsigned" in note else "not signed yet"


def server_text(s: dict[str, Any], live: bool = True) -> list[str]:
    history = s["history"] or {}
    signed = s["signed_root"]
    lines = [f"{s['server_name'] or s['url']}  (server_id {s['server_id']})", f"url: {s['url']}",
             f"map of {s['map_day']}, " + (f"signed (root {signed['root']})" if signed else _unsigned(s)),
             _now_line(s, live)]
    if s.get("owner_note"):
        note = s["owner_note"]
        lines.append(f"the owner's note (their own words, verified control of {note['host']}; never counted in the "
                     f"figures): {note['note']}")
    lines += _uptime_lines(s)
    codes = history.get("history") or ""
    legend = ", ".join(f"{code} {words}" for code, words in CODE_WORDS.items())
    lines.append(f"last {len(codes)} days, oldest first ({legend}):" if codes else "no daily codes yet")
    lines += dated_codes(codes, dt.date.fromisoformat(s["map_day"]))
    lines.append(f"tools ({len(s['tools'])}, from {s['tools_from']}):" if s["tools"] else "no tools listed")
    lines += [f"  {t['name']}  {t['risk']}  ({t['risk_rule']})" for t in s["tools"]]
    changes = s["changes"]
    # Of all the window's changes (changes_total), not of the part server_status carries (helper-94 F7).
    lines.append(f"changes, newest first ({min(len(changes), CHANGES_SHOWN)} of {s['changes_total']}):" if changes
                 else "no changes in the window")
    for c in changes[:CHANGES_SHOWN]:
        renamed = f" (was {c['previous_tool_name']})" if c.get("previous_tool_name") else ""
        risk = f"  {c['previous_risk']} -> {c['risk']}" if c.get("previous_risk") else f"  {c['risk']}" if c.get(
            "risk") else ""
        detail = f": {c['detail']}" if c.get("detail") else ""
        lines.append(f"  {c['day']}  {c['kind']}  {c['tool_name'] or ''}{renamed}{risk}".rstrip() + detail)
    lines += [f"live incident since {i['opened_day']}" for i in s["incidents"] if i["status"] == "live"]
    return lines
