"""A server's words as people see them (docs/agents.md, "Pages"): the one rule the pages, the live pages, the
watch feed and the command line show a name by, so that a name reads the same on each and none can pass for
another. Agents read the same words raw (the MCP server's answers, the JSON files): the rule is for what people see.
"""

from __future__ import annotations

from typing import Any

import markupsafe
from markupsafe import Markup

# In a server's prose (a tool's description, an owner's note) a tab or a line break is white space, which a page
# shows as a space: it hides nothing there, and real descriptions are written in lines.
_PROSE_SPACE = frozenset("\t\n\r")


def _code(ch: str) -> str:
    cp = ord(ch)
    return f"\\x{cp:02x}" if cp < 0x100 else f"\\u{cp:04x}" if cp < 0x10000 else f"\\U{cp:08x}"


def visible(text: str, prose: bool = False) -> str:
    """`text` with each character that is not printable shown as its code (`\\u202e`, `\\u200b`, `\\x0b`): C0 and
    C1 controls, direction overrides, embeddings, isolates and marks, zero-width and other format characters,
    separators other than the space (str.isprintable). Such a character can reverse a name (U+202E), join or split
    it unseen (U+200B), colour or rewrite a terminal (ESC): shown as its code, a name can pass for no other.
    With `prose`, a tab or a line break stays itself (white space on a page)."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() or (prose and ch in _PROSE_SPACE) else _code(ch) for ch in text)


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)  # as Jinja prints any other value (None as "None")


def shown_text(value: Any) -> str:
    """A template's filter for a name where no markup may stand (a page's <title>, an image's alt text)."""
    return visible(_as_text(value))


def shown(value: Any) -> Markup:
    """A template's filter for a server's or a tool's name, or a sentence quoting one (a change's detail, a
    reason): visible(), escaped, in its own <bdi>, so that right-to-left letters in it keep to it and never
    reorder the page's words around it."""
    return Markup("<bdi>") + markupsafe.escape(visible(_as_text(value))) + Markup("</bdi>")


def shown_prose(value: Any) -> Markup:
    """A template's filter for a server's prose (a tool's description, an owner's note): as shown(), its tabs and
    line breaks kept as the white space a page shows."""
    return Markup("<bdi>") + markupsafe.escape(visible(_as_text(value), prose=True)) + Markup("</bdi>")


FILTERS = {"shown": shown, "shown_text": shown_text, "shown_prose": shown_prose}
