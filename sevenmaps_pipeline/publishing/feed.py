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


def atom_feed(mapday: MapDay, entries: list[dict[str, Any]]) -> str:
    """The watch feed (`feeds/watch.xml` of the day's site and of /live/): Atom, one entry a change."""
    updated = dt.datetime.combine(mapday.day, dt.time(), dt.UTC).isoformat()
    items = []
    for e in entries:
        ident = f"urn:7maps:{e['server_id']}:{e['day']}:{e['kind']}:{e['tool_name'] or ''}"
        title = f"{e['server_name'] or e['server_key']}: {e['kind']}" + (f" {e['tool_name']}" if e["tool_name"] else "")
        items.append(f"<entry><id>{shown_xml(ident)}</id><title>{shown_xml(title)}</title>"
                     f"<updated>{e['day']}T00:00:00+00:00</updated>"
                     f"<link href=\"../servers/{xml_text(e['server_id'])}.html\"/>"
                     f"<summary>{shown_xml(e['detail'] or e['kind'])}</summary></entry>")
    return ("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\">"
            f"<id>urn:7maps:watch</id><title>7Maps watch: rises in risk, sign-in, payment and redirect changes"
            f"</title><updated>{updated}</updated><author><name>7Maps</name></author>{''.join(items)}</feed>\n")
