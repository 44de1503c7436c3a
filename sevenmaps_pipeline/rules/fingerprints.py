"""Tool fingerprints, the order-free tools_hash and the tool-list size (docs/methodology.md, "Day codes,
history and signed roots").

Computed once where a tool list is read (the prober, or the synthetic generator) and stored with the
raw row, so curated steps never re-parse tool lists per endpoint-day.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

FINGERPRINT_FIELDS = ("name", "description", "inputSchema", "annotations")


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def compact_json(value: Any) -> str:
    """The compact JSON of a value, keys in the order received."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def tool_fingerprint(tool: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON of the tool's name, description, inputSchema and annotations.

    Fields the tool does not carry are left out (absent is not the same as null or empty)."""
    subset = {k: tool[k] for k in FINGERPRINT_FIELDS if isinstance(tool, dict) and k in tool}
    return hashlib.sha256(canonical_json(subset).encode()).hexdigest()


def tools_hash(fingerprints: list[str]) -> str:
    """SHA-256 over the sorted fingerprints joined by newlines: the same set in any order, one hash."""
    return hashlib.sha256("\n".join(sorted(fingerprints)).encode()).hexdigest()


@dataclass(frozen=True)
class ToolListSummary:
    tools_json: str
    tool_count: int
    tool_list_size: int
    tools_hash: str


def _item_fingerprint(tool: Any) -> str:
    """A tool's fingerprint; an item of the array that is no object: SHA-256 of its canonical JSON."""
    if isinstance(tool, dict):
        return tool_fingerprint(tool)
    return hashlib.sha256(canonical_json(tool).encode()).hexdigest()


def definition_text(tools: list[Any]) -> str:
    """The text a tool list's definition tokens are counted over (rules/tokens.py): the canonical JSON of the
    tools array (keys sorted, no whitespace, UTF-8), its tools in the order of their fingerprints (then of
    their whole canonical JSON). A server that serves the same tools with their keys or the tools themselves
    in another order (two protocol versions, a shuffled list) is counted alike, as tools_hash takes them."""
    keyed = sorted((_item_fingerprint(t), canonical_json(t)) for t in tools)
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
