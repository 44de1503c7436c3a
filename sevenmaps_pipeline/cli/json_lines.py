"""`sevenmaps sql --format json`: each row one JSON object on a line, valid JSON (RFC 8259) whatever a query
returns, in the forms JSON readers expect (docs/analyst.md).

`json.dumps(..., default=str)` wrote a timestamp as Python prints it (`2026-11-10 12:00:00+00:00`), a DECIMAL
as a string, an INTERVAL as `0:05:00`, a BLOB as Python's `b'...'` and a NaN as the bare word `NaN`, which
no strict reader (jq, JavaScript's JSON.parse) accepts; a MAP with DATE keys raised."""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import math
import uuid
from typing import Any


def json_line(columns: list[str], row: tuple[Any, ...]) -> str:
    """One row as one line of JSON: the query's column names as keys, in order."""
    return json.dumps({name: jsonable(value) for name, value in zip(columns, row, strict=True)},
                      ensure_ascii=False, allow_nan=False)


def jsonable(value: Any) -> Any:
    """A value DuckDB's Python client returns, as plain JSON types: timestamps, dates and times in ISO 8601
    (`2026-11-10T12:00:00+00:00`); a DECIMAL as a number when a double holds it exactly, else its digits as a
    string; an INTERVAL as an ISO 8601 duration (`PT300S`, `P1DT300S`); a BLOB in base64; a UUID as text;
    NaN and infinities as null (what JSON.stringify writes); lists, structs and maps element by element, map
    keys as text."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return _decimal(value)
    if isinstance(value, dt.timedelta):
        return _duration(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, dict):
        return {_key(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return str(value)


def _key(key: Any) -> str:
    """A map key as text. A NaN or an infinity as JavaScript's String() writes it (`NaN`, `Infinity`,
    `-Infinity`), not null: keys that differ stay distinct keys."""
    if isinstance(key, float) and not math.isfinite(key):
        return "NaN" if math.isnan(key) else ("Infinity" if key > 0 else "-Infinity")
    shown = jsonable(key)
    return shown if isinstance(shown, str) else json.dumps(shown, allow_nan=False)


def _decimal(value: decimal.Decimal) -> float | str | None:
    if not value.is_finite():
        return None
    as_float = float(value)
    return as_float if decimal.Decimal(repr(as_float)) == value else str(value)


def _duration(value: dt.timedelta) -> str:
    sign = "-" if value < dt.timedelta(0) else ""
    whole = -value if sign else value
    days, seconds, micros = whole.days, whole.seconds, whole.microseconds
    text = f"{sign}P{days}D" if days else f"{sign}P"
    if seconds or micros or not days:
        fraction = f".{micros:06d}".rstrip("0") if micros else ""
        text += f"T{seconds}{fraction}S"
    return text
