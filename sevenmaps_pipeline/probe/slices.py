"""The moving daily hour (docs/operations.md, "The moving daily hour").

The day's scan runs as 24 hourly slices. An endpoint's slice on a day is

    slot_hour(server_key, day) = (h(server_key) + day.toordinal()) mod 24

with h a fixed hash of the key. The hour moves by one every day (the step, 1, is coprime to 24), so over
any 24 consecutive days the endpoint is checked once in every UTC hour, and on every day it is in exactly
one slice: checked once a UTC day, as before. A slice runs only within its own hour; a slice that did not
run is never made up later, so its endpoints stay n that day (our fault, never d).
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Collection, Iterable
from typing import Any

from ..rules.methods import SLICE_METHOD

__all__ = ["SLICE_METHOD", "HOURS", "slot_hour", "in_slices", "check_slice_hour", "SliceMissedError"]
HOURS = 24
HOUR_STEP = 1  # coprime to 24: 24 consecutive days reach every hour


def key_offset(server_key: str) -> int:
    return int.from_bytes(hashlib.sha256(server_key.encode()).digest()[:8], "big") % HOURS


def slot_hour(server_key: str, day: dt.date) -> int:
    """The UTC hour of `day` whose slice checks `server_key`."""
    return (key_offset(server_key) + HOUR_STEP * day.toordinal()) % HOURS


def in_slices(listings: Iterable[dict[str, Any]], day: dt.date, hours: Collection[int]) -> list[dict[str, Any]]:
    """The listings whose slot on `day` is one of `hours` (listings without a key are left to the scan's rules)."""
    return [row for row in listings if not row.get("server_key") or slot_hour(row["server_key"], day) in hours]


class SliceMissedError(RuntimeError):
    """A slice runs only within its own UTC hour: one that has passed is never made up."""


def check_slice_hour(day: dt.date, hour: int, now: dt.datetime) -> None:
    if not 0 <= hour < HOURS:
        raise ValueError(f"hour {hour} is not a UTC hour (0-23)")
    if (now.date(), now.hour) != (day, hour):
        raise SliceMissedError(f"the slice {day} {hour:02d}:00 UTC runs only within that hour (it is "
                               f"{now:%Y-%m-%d %H:%M} UTC): a slice that did not run leaves its endpoints n "
                               "that day and is never made up")
