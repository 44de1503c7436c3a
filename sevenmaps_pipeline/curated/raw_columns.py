"""Whether a landed raw file's columns read as its kind's schema says, before any query reads its folder.

A day's files of one kind are read together (lake/duck.py bind_input: one view, columns matched by name), so one
file of another kind's columns once changed the view's types for every file of the day (a `day` given as a
timestamp quarantined every row of the day, and of the next days whose windows read it) or stopped the day's build
(text in a number's column). A file whose columns are not its kind's is refused whole, with the reason in our own
words: a type's own text may carry a sender's words (a struct's field names, a time zone's name).
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

# The columns DuckDB's read_parquet adds to each row (lake/duck.py bind_input): a file's own of these names clashes.
READER_COLUMNS = ("filename", "file_row_number")

_FAMILIES = ((pa.types.is_boolean, "boolean"), (pa.types.is_integer, "integer"), (pa.types.is_floating, "floating"),
             (pa.types.is_decimal, "decimal"), (pa.types.is_date, "date"), (pa.types.is_timestamp, "timestamp"),
             (pa.types.is_string, "text"), (pa.types.is_large_string, "text"), (pa.types.is_binary, "binary"),
             (pa.types.is_large_binary, "binary"), (pa.types.is_nested, "nested"))
_NUMBERS = frozenset({"integer", "floating", "decimal"})


def family(data_type: pa.DataType) -> str:
    """A column's kind in our words."""
    return next((name for test, name in _FAMILIES if test(data_type)), "other")


def column_problem(path: Path, schema: pa.Schema, spec: pa.Schema, *, any_number: bool = False,
                   extras_kept: bool = True) -> str | None:
    """Why the file's columns (`schema`, its footer's) cannot be read as `spec`'s, or None: a column named as a
    reader's own, a column of `spec` given twice or of a kind that is not its own (text for a number, a number for a
    flag, a timestamp for a date), or numbers its type cannot hold (2^64 where an int64 belongs). Integers of another
    width, dictionary-encoded and large strings, dates of either unit and timestamps of the unit, in UTC or naive,
    read as theirs; with `any_number`, numbers of any kind whose values fit (floats of whole values: what pandas
    writes for an integer column with a missing value). Columns `spec` does not name are never read; where they are
    dropped from the file (not `extras_kept`: the agent reports' batches), a reader's own names among them are too."""
    names = schema.names
    reserved = sorted(set(names) & set(READER_COLUMNS)) if extras_kept else []
    if reserved:
        return f"column(s) {', '.join(reserved)} named as a Parquet reader's own"
    twice = sorted({name for name in names if names.count(name) > 1 and name in spec.names})
    if twice:
        return f"column(s) {', '.join(twice)} given more than once"
    for field in schema:
        if field.name not in spec.names:
            continue
        wanted = spec.field(field.name).type
        actual = field.type.value_type if pa.types.is_dictionary(field.type) else field.type
        if pa.types.is_null(actual) or actual == wanted or family(actual) == family(wanted) in ("text", "date"):
            continue
        if pa.types.is_timestamp(actual) and pa.types.is_timestamp(wanted):
            if actual.unit == wanted.unit and actual.tz in (None, wanted.tz):
                continue  # the zone's name is never quoted: a sender's words
            return f"column {field.name} holds timestamps of another unit or zone, not {wanted.unit} in UTC"
        numbers = {family(wanted), family(actual)} <= (_NUMBERS if any_number else {"integer"})
        if not numbers:
            return f"column {field.name} holds {family(actual)} values, not {family(wanted)}"
        try:
            pq.read_table(path, columns=[field.name]).column(0).cast(wanted, safe=True)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return f"column {field.name} holds values that are no {family(wanted)} of its range"
    return None
