"""The watch feed of the day's site and of /live/ (feeds/watch.xml), and server texts as XML."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any
from xml.sax.saxutils import escape

from .mapday import MapDay
from .shown import visible

# What XML 1.0 forbids in a document, even escaped: C0 controls but tab and line breaks, lone surrogates, U+FFFE/F.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_text(text: str) -> str:
    """Text as XML character data: escaped, each character XML cannot hold as U+FFFD (a vertical tab in one tool's
    name made the whole feed unreadable)."""
    return escape(_NOT_XML.sub("\ufffd", text))


def shown_xml(text: str) -> str:
    """A server's words as a person reads them in the feed: as the pages and the command line show them
    (publishing/shown.py: a vertical tab as `\\x0b`, U+202E as `\\u202e`), which leaves nothing XML cannot hold."""
    return xml_text(visible(text))


def _utc(moment: dt.datetime) -> dt.datetime:
    moment = moment.replace(tzinfo=dt.UTC) if moment.tzinfo is None else moment.astimezone(dt.UTC)
    return moment.replace(microsecond=0)


def _provisional_times(mapday: MapDay) -> dict[str, dt.datetime]:
    """Each day read provisionally (live: the open day, and the day that just ended until its map is built) -> the
    latest check its build read (its build's time when it names none)."""
    return {b.day.isoformat(): _utc(b.last_check_at or b.built_at) for b in mapday.open_days}


def _entry(e: dict[str, Any], updated: dt.datetime, seen_by: dt.datetime | None) -> str:
    ident = f"urn:7maps:{e['server_id']}:{e['day']}:{e['kind']}:{e['tool_name'] or ''}"
    title = f"{e['server_name'] or e['server_key']}: {e['kind']}" + (f" {e['tool_name']}" if e["tool_name"] else "")
    summary = e["detail"] or e["kind"]
    if e.get("provisional"):  # a change of a day not built yet, as `watch` flags it: said in the entry itself
        title += " (provisional)"
        through = f", through {seen_by.isoformat()}" if seen_by else ""
        # in the words of the open day's own note (curated/open_day.py OpenDay.served)
        summary += (f" (provisional: the checks of {e['day']} so far{through}, never signed; the day is built and "
                    "signed once it ends)")
    return (f"<entry><id>{shown_xml(ident)}</id><title>{shown_xml(title)}</title>"
            f"<updated>{updated.isoformat()}</updated>"
            f"<link href=\"../servers/{xml_text(e['server_id'])}.html\"/>"
            f"<summary>{shown_xml(summary)}</summary></entry>")


def _subtitle(answer: dict[str, Any]) -> str:
    """What the feed holds: every change of its window, or the newest of them and how many there were (the cut at
    publishing/locks.py MAX_CHANGES was silent: helper-98)."""
    shown, total, days = len(answer["entries"]), answer["total"], answer["window_days"]
    if answer["truncated"]:
        return (f"the newest {shown:,} of {total:,} changes of the last {days} days; every change: the tool_changes "
                "table of those days' snapshots or of the warehouse")
    held = "no changes" if total == 0 else "1 change" if total == 1 else f"all {total:,} changes"
    return f"{held} of the last {days} days, newest first"


def atom_feed(mapday: MapDay, answer: dict[str, Any]) -> str:
    """The watch feed (`feeds/watch.xml` of the day's site and of /live/) of a `watch` answer (publishing/locks.py):
    Atom, one entry a change, its subtitle saying whether it holds them all. An entry is
    updated at the start of its day, a provisional one (live) at the latest check it rests on; the feed at its
    newest entry's time, or the map day's start when that is newer (helper-94 F16: the live feed said the map
    day while its entries were of the open day)."""
    entries: list[dict[str, Any]] = answer["entries"]
    provisional = _provisional_times(mapday)
    updated = dt.datetime.combine(mapday.day, dt.time(), dt.UTC)
    items = []
    for e in entries:
        seen_by = provisional.get(str(e["day"])) if e.get("provisional") else None
        at = seen_by or dt.datetime.combine(dt.date.fromisoformat(str(e["day"])), dt.time(), dt.UTC)
        updated = max(updated, at)
        items.append(_entry(e, at, seen_by))
    return ("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\">"
            f"<id>urn:7maps:watch</id><title>7Maps watch: rises in risk, sign-in, payment and redirect changes"
            f"</title><subtitle>{xml_text(_subtitle(answer))}</subtitle><updated>{updated.isoformat()}</updated>"
            f"<author><name>7Maps</name></author>{''.join(items)}"
            "</feed>\n")
