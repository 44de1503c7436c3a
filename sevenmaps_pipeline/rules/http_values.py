"""Values of HTTP headers every outside client of ours reads alike."""

from __future__ import annotations

# The longest a Retry-After is waited (docs/methodology.md: "Package advisories and domain age", "Listing rules").
RETRY_AFTER_MAX = 60.0


def retry_after_seconds(value: str | None) -> float | None:
    """A Retry-After given in seconds (ASCII digits only, at most nine; its HTTP-date form is not read)."""
    if value is None:
        return None
    value = value.strip()
    return float(value) if value.isascii() and value.isdigit() and len(value) <= 9 else None
