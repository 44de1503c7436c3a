"""One rounding rule for every figure shown: half away from zero, as DuckDB's `round` does, so a share or a
percentile reads the same in the warehouse (`map_days.share_d_pct`, docs/analyst.md's queries), in Dagster's asset
metadata and on the pages. Python's `round` and its `%`/`.0%` formats send a half to the even digit instead: 1 d of
32 was `share d %` 3.12 in Dagster and 3.13 in `map_days`, and 1 of 8 endpoints cheaper "dearer than 12%" on a page
where the analyst's `round(100 * p)` gave 13 (helper-94 F11).

Each works as DuckDB does on a DOUBLE: the value scaled by 10 ** digits in binary floating point, then rounded
half away from zero, then scaled back, so the same double gives the same figure on every surface (a value whose
decimal tie is not exact in binary, 1.005, rounds as its binary value lies, in both)."""

from __future__ import annotations

import math


def _half_away(value: float) -> float:
    """C's `round` (what DuckDB calls): the integer nearest `value`, a half away from zero. The fraction
    `value - trunc(value)` is exact in binary, so the tie is decided on the value itself, never on a sum."""
    whole = float(math.trunc(value))
    if abs(value - whole) >= 0.5:
        whole += math.copysign(1.0, value)
    return whole


def round_half_away(value: float, digits: int = 0) -> float:
    """`value` to `digits` decimals, a half away from zero: DuckDB's `round(value, digits)` of a DOUBLE."""
    if math.isnan(value) or math.isinf(value):
        return value
    if digits < 0:
        scale = 10.0 ** -digits
        return _half_away(value / scale) * scale
    scale = 10.0 ** digits
    return _half_away(value * scale) / scale


def percent(share: float, digits: int = 0) -> str:
    """A share (0..1) as a percent with `digits` decimals, as DuckDB's `round(100 * share, digits)` gives it:
    1/8 is "13%" (Python's `f"{1/8:.0%}"` says "12%")."""
    return f"{round_half_away(100 * share, digits):.{digits}f}%"


__all__ = ["percent", "round_half_away"]
