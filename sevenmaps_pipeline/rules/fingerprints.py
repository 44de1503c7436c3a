"""Tool fingerprints, the order-free tools_hash and the tool-list size (docs/methodology.md, "Day codes,
history and signed roots").

Computed once where a tool list is read (the prober, or the synthetic generator) and stored with the
raw row, so curated steps never re-parse tool lists per endpoint-day.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass
from typing import Any

FINGERPRINT_FIELDS = ("name", "description", "inputSchema", "annotations")
# json.dumps with these options builds this same encoder on every call; one instance writes the same bytes.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_json(value: Any) -> str:
    return _CANONICAL.encode(value)


def compact_json(value: Any) -> str:
    """The compact JSON of a value, keys in the order received."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def tool_fingerprint(tool: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON of the tool's name, description, inputSchema and annotations.

    Fields the tool does not carry are left out (absent is not the same as null or empty)."""
    subset = {k: tool[k] for k in FINGERPRINT_FIELDS if isinstance(tool, dict) and k in tool}
    return _sha256(canonical_json(subset))


def tools_hash(fingerprints: list[str]) -> str:
    """SHA-256 over the sorted fingerprints joined by newlines: the same set in any order, one hash."""
    return hashlib.sha256("\n".join(sorted(fingerprints)).encode()).hexdigest()


@dataclass(frozen=True)
class ToolListSummary:
    tools_json: str
    tool_count: int
    tool_list_size: int
    tools_hash: str


@dataclass(frozen=True)
class EncodedTool:
    """One item of a tool list with each of its fields encoded once (canonical_json): its fingerprint, its
    own canonical JSON and tool_facts' schema columns are the same bytes as from the whole item, joined
    from those pieces instead of encoding a large inputSchema four times (docs/scaling.md)."""

    fields: dict[str, str]  # each field's canonical JSON; empty for an item that is no object
    canonical: str  # the item's canonical JSON
    item_fingerprint: str  # _item_fingerprint: an item that is no object is hashed whole
    fingerprint: str  # tool_fingerprint; an item that is no object is read as the tool {}


_EMPTY_FINGERPRINT = tool_fingerprint({})


@functools.lru_cache(maxsize=1024)  # a tool's field names are a few dozen words across all servers
def _key_json(key: str) -> str:
    return canonical_json(key)


def encode_tool(item: Any) -> EncodedTool:
    if not isinstance(item, dict):
        text = canonical_json(item)
        return EncodedTool({}, text, _sha256(text), _EMPTY_FINGERPRINT)
    fields = {k: canonical_json(v) for k, v in item.items()}
    if not all(isinstance(k, str) for k in fields):  # never from JSON: the encoder sorts and prints these
        fingerprint = tool_fingerprint(item)
        return EncodedTool(fields, canonical_json(item), fingerprint, fingerprint)
    # The encoder writes an object as `"key":value` members in the order of their keys, joined by commas.
    members = {k: _key_json(k) + ":" + text for k, text in fields.items()}
    keys = sorted(members)
    whole = "{" + ",".join([members[k] for k in keys]) + "}"
    signed = [k for k in keys if k in FINGERPRINT_FIELDS]
    fingerprint = _sha256(whole if len(signed) == len(keys) else "{" + ",".join([members[k] for k in signed]) + "}")
    return EncodedTool(fields, whole, fingerprint, fingerprint)


def _item_fingerprint(tool: Any) -> str:
    """A tool's fingerprint; an item of the array that is no object: SHA-256 of its canonical JSON."""
    if isinstance(tool, dict):
        return tool_fingerprint(tool)
    return _sha256(canonical_json(tool))


def definition_text(tools: list[Any]) -> str:
    """The text a tool list's definition tokens are counted over (rules/tokens.py): the canonical JSON of the
    tools array (keys sorted, no whitespace, UTF-8), its tools in the order of their fingerprints (then of
    their whole canonical JSON). A server that serves the same tools with their keys or the tools themselves
    in another order (two protocol versions, a shuffled list) is counted alike, as tools_hash takes them."""
    return definition_text_of([encode_tool(t) for t in tools])


def definition_text_of(tools: list[EncodedTool]) -> str:
    """definition_text of a list whose items are encoded already."""
    keyed = sorted((t.item_fingerprint, t.canonical) for t in tools)
    return "[" + ",".join(text for _, text in keyed) + "]"


def summarize_tools(tools: list[Any]) -> ToolListSummary:
    text = compact_json(tools)
    fps = [_item_fingerprint(t) for t in tools]
    return ToolListSummary(
        tools_json=text,
        tool_count=len(tools),
        tool_list_size=len(text.encode()),
        tools_hash=tools_hash(fps),
    )
