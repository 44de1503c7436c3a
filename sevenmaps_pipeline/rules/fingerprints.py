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


def summarize_tools(tools: list[Any]) -> ToolListSummary:
    text = compact_json(tools)
    fps = [tool_fingerprint(t) if isinstance(t, dict) else hashlib.sha256(canonical_json(t).encode())
           .hexdigest() for t in tools]
    return ToolListSummary(
        tools_json=text,
        tool_count=len(tools),
        tool_list_size=len(text.encode()),
        tools_hash=tools_hash(fps),
    )
