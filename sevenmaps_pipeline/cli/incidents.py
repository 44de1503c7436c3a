"""`sevenmaps incident list|show|close|confirm`: a person's review of incidents (publishing/incidents.py)."""

from __future__ import annotations

import argparse
import datetime as dt
import json
from typing import Any

from ..lake.paths import parse_day
from ..publishing import incidents
from .common import _existing_lake, terminal_safe


def _line(row: dict[str, Any]) -> str:
    name = row["server_name"] or "-"
    if row["status"] == "unconfirmed":
        return (f"  {row['server_key']:<44} {name:<32} {row['failure_reporters']} reporters "
                f"({row['trusted_failure_reporters']} paying), our code {row['our_code'] or 'none'}")
    text = f"  {row['server_key']:<44} {name:<32} since {row['opened_day']}, confirmed by {row['confirmed_by']}"
    if row["confirmed_reviewer"]:
        text += f" ({row['confirmed_reviewer']}, on our check at {row['confirmed_check_at']})"
    if row["status"] == "closed":
        text += f"; closed: {row['closed_reason']}"
        if row["closed_by"]:
            text += f", by {row['closed_by']} at {row['closed_at']}: {row['closed_note']}"
    return text


def _list(args: argparse.Namespace) -> int:
    found = incidents.overview(_existing_lake(args), parse_day(args.day) if args.day else None)
    if args.queue:
        found = {k: v for k, v in found.items() if k not in ("live", "closed")}
    if args.json:
        print(json.dumps(found, indent=1, default=str))
        return 0
    note = "" if found["newest"] else " (an older day: reviews made before it ended)"
    print(f"map of {found['map_day']}{note}")
    for title, rows in _sections(found):
        print(f"{title}: {len(rows)}")
        for row in rows:
            print(terminal_safe(_line(row)))  # a server's name is the registry's words (helper-100)
    return 0


def _sections(found: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    """The list's sections. A live incident of an endpoint no longer on the day's map (its row joins no
    daily_status row: `on_map` false) is apart: no page, answer or `incident show` reaches it (helper-100)."""
    sections = []
    if "live" in found:
        off = [r for r in found["live"] if not r["on_map"]]
        sections.append(("live incidents (shown)", [r for r in found["live"] if r["on_map"]]))
        if off:
            sections.append((f"live incidents of endpoints not on the map of {found['map_day']} (shown nowhere; "
                             "`incident show` and `incident close` refuse them)", off))
    if "closed" in found:
        sections.append(("closed on that day", found["closed"]))
    sections.append(("failure reports awaiting review (never shown; nothing confirmed them)",
                     found["awaiting_review"]))
    return sections


def cmd_incident(args: argparse.Namespace) -> int:
    """A person's review of incidents: list, show, close, confirm."""
    if args.action == "list":
        return _list(args)
    lake = _existing_lake(args)
    if args.action == "show":
        print(json.dumps(incidents.detail(lake, args.server, parse_day(args.day) if args.day else None),
                         indent=1, default=str))
        return 0
    now = dt.datetime.now(dt.UTC)
    if args.action == "close":
        review = incidents.close(lake, args.server, args.by, args.reason, now)
        print(f"{review.server_key}: incident (opened {review.incident_day}) closed by {review.reviewer} at "
              f"{review.reviewed_at:%Y-%m-%d %H:%M}Z: {review.reason}; no longer live in any answer. Signed days "
              "and their site stay as they were")
        return 0
    review = incidents.confirm(lake, args.server, args.by, args.reason, now)
    print(f"{review.server_key}: failure reports of {review.incident_day} confirmed by {review.reviewer} on our "
          f"{review.check_kind} check at {review.check_started_at:%H:%M}Z ({review.check_outcome}): a live incident "
          "from now")
    return 0
