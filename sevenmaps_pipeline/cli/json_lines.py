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
import re
import uuid
from typing import Any

# DuckDB's text of an INTERVAL (`1 year 2 months 3 days 04:05:06.5`, `-1 day 00:00:00.5`, `1 day -00:00:01`):
# months, days and microseconds, each with its own sign.
_INTERVAL_TEXT = re.compile(r"(?:(?P<years>-?\d+) years? ?)?(?:(?P<months>-?\d+) months? ?)?"
                            r"(?:(?P<days>-?\d+) days? ?)?"
                            r"(?:(?P<neg>-)?(?P<h>\d+):(?P<m>\d\d):(?P<s>\d\d)(?:\.(?P<f>\d{1,6}))?)?")
_NESTED = ("list", "array", "struct", "map")
# Fetched as DuckDB's text, the Python client's value being lossy: a month as 30 days; 'infinity' as 9999-12-31;
# nanoseconds cut; a year past 9999 or before 1 as DuckDB's text (`300000-01-01`, `0044-03-15 (BC)`).
_AS_TEXT = {"interval": "interval", "date": "temporal", "timestamp": "temporal", "timestamp_s": "temporal",
            "timestamp_ms": "temporal", "timestamp_ns": "temporal", "timestamp with time zone": "temporal",
            "time_ns": "temporal"}


def json_line(columns: list[str], row: tuple[Any, ...], shapes: list[Any] | None = None) -> str:
    """One row as one line of JSON: the query's column names as keys, in order; `shapes` (json_relation's)
    says where a column holds DuckDB's text of an INTERVAL, a date or a timestamp."""
    shapes = shapes or [None] * len(columns)
    return json.dumps({name: _shaped(value, shape) for name, value, shape in zip(columns, row, shapes, strict=True)},
                      ensure_ascii=False, allow_nan=False)


def json_relation(relation: Any) -> tuple[Any, list[Any]]:
    """The relation `sevenmaps sql --format json` fetches, and where it holds values as DuckDB's text. DuckDB's
    Python client turns an INTERVAL into a timedelta, a month into 30 days (`INTERVAL 1 MONTH` read `P30D`),
    and raises past 999,999,999 days; a date or timestamp 'infinity' into 9999-12-31, a TIMESTAMP_NS into
    microseconds, a year outside 1 to 9999 into DuckDB's text. Each of those, in lists, arrays, structs and
    maps too, is fetched as DuckDB's text (exact) and written in ISO 8601. A repeated column name is renamed
    as DuckDB's own JSON writer renames it (`n`, `n_1`): a JSON object's keys are unique."""
    relation = relation.project("COLUMNS(*)")
    columns, shapes = [], []
    for name, kind in zip(relation.columns, relation.types, strict=True):
        quoted = _quoted(name)
        cast = _text_cast(kind)
        columns.append(f"CAST({quoted} AS {cast[0]}) AS {quoted}" if cast and cast[0] != str(kind) else quoted)
        shapes.append(cast[1] if cast else None)
    return (relation.project(", ".join(columns)) if any(shapes) else relation), shapes


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _text_cast(kind: Any) -> tuple[str, Any] | None:
    """The type `kind` with each type of _AS_TEXT in it as VARCHAR, and where those are and where a map's keys
    are of a nested type; None without either (a UNION's member is left alone: its value comes back without
    its member's name, as the client gives it)."""
    if kind.id in _AS_TEXT:
        return "VARCHAR", _AS_TEXT[kind.id]
    if kind.id not in _NESTED:
        return None
    children = [(name, child) for name, child in kind.children if not isinstance(child, int)]
    casts = [_text_cast(child) for _, child in children]
    nested_keys = kind.id == "map" and children[0][1].id in _NESTED  # come back as {"key": [...], "value": [...]}
    if not any(casts) and not nested_keys:
        return None
    texts = [cast[0] if cast else str(child) for cast, (_, child) in zip(casts, children, strict=True)]
    shapes = [cast[1] if cast else None for cast in casts]
    if kind.id == "list":
        return f"{texts[0]}[]", ("list", shapes[0])
    if kind.id == "array":
        return f"{texts[0]}[{dict(kind.children)['size']}]", ("list", shapes[0])
    if kind.id == "map":
        return f"MAP({texts[0]}, {texts[1]})", ("pairs" if nested_keys else "map", shapes[0], shapes[1])
    fields = ", ".join(f"{_quoted(name)} {text}" for (name, _), text in zip(children, texts, strict=True))
    return f"STRUCT({fields})", ("struct", {name: shape for (name, _), shape in zip(children, shapes, strict=True)})


def _shaped(value: Any, shape: Any) -> Any:
    if shape is None or value is None:
        return jsonable(value)
    if shape == "interval":
        return _interval(value)
    if shape == "temporal":
        return _temporal(value)
    if shape[0] == "list":
        return [_shaped(v, shape[1]) for v in value]
    if shape[0] == "struct":
        return {_key(k): _shaped(v, shape[1].get(k)) for k, v in value.items()}
    if shape[0] == "pairs":  # a map with keys of a nested type, as every map: an object, each key its JSON text
        return {_key(_shaped(k, shape[1])): _shaped(v, shape[2])
                for k, v in zip(value["key"], value["value"], strict=True)}
    return {_key(_shaped(k, shape[1])): _shaped(v, shape[2]) for k, v in value.items()}


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
    """A timedelta (a UNION's INTERVAL member) as an ISO 8601 duration: whole days, then seconds."""
    micros = value // dt.timedelta(microseconds=1)
    days, rest = divmod(abs(micros), 86_400_000_000)
    return _iso_duration(0, -days if micros < 0 else days, -rest if micros < 0 else rest)


def _interval(text: str) -> str:
    """DuckDB's text of an INTERVAL as an ISO 8601 duration: `1 year 2 months 3 days 04:05:06.5` is
    `P1Y2M3DT14706.5S`."""
    parts = _INTERVAL_TEXT.fullmatch(text)
    if parts is None:
        raise ValueError(f"not DuckDB's text of an INTERVAL: {text!r}")
    number = {k: int(v or 0) for k, v in parts.groupdict().items() if k not in ("neg", "f")}
    micros = ((number["h"] * 60 + number["m"]) * 60 + number["s"]) * 1_000_000 + int((parts["f"] or "").ljust(6, "0"))
    return _iso_duration(number["years"] * 12 + number["months"], number["days"], -micros if parts["neg"] else micros)


def _temporal(text: str) -> str:
    """DuckDB's text of a date, timestamp or TIME_NS in ISO 8601: `2026-11-10 12:00:00+00` is
    `2026-11-10T12:00:00+00:00`, nanoseconds kept; a year past 9999 or before 1 with a sign and six digits
    (`+300000-01-01`, `0044-03-15 (BC)` is `-000043-03-15`, year 0 being 1 BC); `infinity` and `-infinity` as
    DuckDB and PostgreSQL write them."""
    if text in ("infinity", "-infinity") or ":" in text.partition(" ")[0]:  # TIME_NS: `07:30:00.123456789`
        return _offset(text)
    before_christ = text.endswith(" (BC)")
    day, _, time_of_day = text.removesuffix(" (BC)").partition(" ")
    year_text, month, day_of_month = day.split("-")
    year = 1 - int(year_text) if before_christ else int(year_text)
    year_text = f"{year:04d}" if 0 <= year <= 9999 else f"{'-' if year < 0 else '+'}{abs(year):06d}"
    return f"{year_text}-{month}-{day_of_month}" + (f"T{_offset(time_of_day)}" if time_of_day else "")


def _offset(time_of_day: str) -> str:
    """DuckDB's `+00` offset as ISO 8601's extended `+00:00`."""
    return re.sub(r"([+-]\d\d)$", r"\1:00", time_of_day)


def _iso_duration(months: int, days: int, micros: int) -> str:
    """`P1Y2M3DT4.5S`; `-P...` when no part is positive; a part's own sign when the signs differ (`P1M-1D`, as
    DuckDB and PostgreSQL keep them: a month minus a day is not a fixed number of days)."""
    if (months or days or micros) and max(months, days, micros) <= 0:
        return "-" + _iso_duration(-months, -days, -micros)
    years = abs(months) // 12 * (1 if months > 0 else -1)
    text = "P" + "".join(f"{n}{unit}" for n, unit in ((years, "Y"), (months - years * 12, "M"), (days, "D")) if n)
    if micros or text == "P":
        seconds, fraction = divmod(abs(micros), 1_000_000)
        text += f"T{'-' if micros < 0 else ''}{seconds}" + (f".{fraction:06d}".rstrip("0") if fraction else "") + "S"
    return text
