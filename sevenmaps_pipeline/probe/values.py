"""Values read from a server's JSON, type-checked before use: nothing a server sends raises."""

from __future__ import annotations

import math
import re
from typing import Any

# What may be sent back in a header: visible ASCII (the spec's rule for Mcp-Session-Id), bounded.
_HEADER_TOKEN = re.compile(r"[\x21-\x7e]{1,1024}")


def header_token(value: Any) -> str | None:
    return value if isinstance(value, str) and _HEADER_TOKEN.fullmatch(value) else None


def json_int(value: Any) -> int | None:
    """A JSON integer (never a bool, never a float that is not whole or not finite)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return None


def scalar_text(value: Any, limit: int) -> str | None:
    """A name or version as stored: strings as they are, numbers as text, anything else not at all."""
    if isinstance(value, str):
        return value[:limit]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)[:limit]
    return None
