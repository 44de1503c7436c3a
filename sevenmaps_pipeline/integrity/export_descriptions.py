"""A snapshot's descriptions (`datapackage.json`, `croissant.json`) against its signed files. No root signs them,
so whoever re-shares a copy can rewrite them; but every file they name must be a signed file the snapshot holds,
with its signed SHA-256, or a loader that reads through them (Frictionless, mlcroissant) would read rows no root
covers (helper-93: a resource pointed at a doctored copy under proofs/ verified OK; docs/verifying.md, section 5)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ..lake.digests import open_regular
from ..lake.schemas import croissant_type, resource_name, table_of
from .capped import MAX_LIST_BYTES, Unreadable, read_capped
from .report import Code, VerifyReport

UNSIGNED_NOTE = ("README.md, datapackage.json and croissant.json are not signed: verify checked only that every file "
                 "they name is one the roots sign, with its signed SHA-256; the README's words are not checked")


def check_descriptions(report: VerifyReport, folder: Path, signed: dict[str, str]) -> dict[str, Any]:
    """`signed`: each signed file of the snapshot's days (its path relative to the folder) and its signed SHA-256.
    One a copy left out may still be named (a loader then fails to find it: no rows are read that no root
    covers); one it holds was checked against its line before. The descriptions that could be read, by name, for
    check_package_columns (each read and parsed once: up to 256 MiB)."""
    docs: dict[str, Any] = {}
    for name, named, labels in (("datapackage.json", _package_files, _package_labels),
                                ("croissant.json", _croissant_files, _croissant_labels)):
        path = folder / name
        if not path.exists() and not path.is_symlink():
            continue  # a copy may leave its descriptions out; snapshots before 2026-12-04 have no croissant.json
        try:
            doc = json.loads(read_capped(path, MAX_LIST_BYTES).decode("utf-8"), object_pairs_hook=_once_each)
        except (Unreadable, UnicodeDecodeError, ValueError, RecursionError) as exc:
            report.add(Code.DESCRIPTION_WRONG, f"{name} cannot be read ({str(exc)[:120]})", None, name)
            continue
        docs[name] = doc
        for why in (_croissant_shape(doc) if name == "croissant.json" else []):
            report.add(Code.DESCRIPTION_WRONG, f"{name}: {why}", None, name)
        for why in labels(doc):
            report.add(Code.DESCRIPTION_WRONG, f"{name}: {why}", None, name)
        first: dict[tuple[str, str], str] = {}  # (kind, file): where the description first names it
        for kind, where, rel, digest in named(doc):
            if isinstance(rel, str) and (kind, rel) in first:
                report.add(Code.DESCRIPTION_WRONG, f"{name}: {where} names {rel[:120]} again ({first[kind, rel]} "
                           "does): a loader reads its rows twice", None, name)
            elif isinstance(rel, str):
                first[kind, rel] = where
            if not isinstance(rel, str):
                report.add(Code.DESCRIPTION_WRONG, f"{name}: {where} names no file of the snapshot", None, name)
            elif rel not in signed:
                report.add(Code.DESCRIPTION_WRONG,
                           f"{name}: {where} names {rel[:120]!r}, which is no file the snapshot's roots sign",
                           None, name)
            elif digest is not None and digest != signed[rel]:
                report.add(Code.DESCRIPTION_WRONG,
                           f"{name}: {where} gives {rel} another SHA-256 than its signed line", None, name)
    report.notes.append(UNSIGNED_NOTE)
    return docs


def _once_each(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are each given once: Python's json keeps the last of two, other readers the first, so
    a description checked here could lead one of them to another file (helper-99)."""
    doc: dict[str, Any] = {}
    for key, value in pairs:
        if key in doc:
            raise ValueError(f"the key {key[:80]!r} is given twice in one object: readers differ on which one "
                             "they take")
        doc[key] = value
    return doc


def _package_files(doc: Any) -> Iterator[tuple[str, str, Any, str | None]]:
    """("resource", where, path, sha256) of each resource of a Data Package; a hash is `sha256:<hex>`."""
    resources = doc.get("resources") if isinstance(doc, dict) else None
    for i, resource in enumerate(resources if isinstance(resources, list) else []):
        if not isinstance(resource, dict) or "data" in resource:  # rows written into the description itself
            yield "resource", f"resources[{i}] (no resource of a file)", None, None
            continue
        paths = resource.get("path")
        declared = resource.get("hash")
        digest = declared[7:] if isinstance(declared, str) and declared.startswith("sha256:") else (
            "" if declared is not None else None)  # a hash in another form never equals a signed one
        for path in paths if isinstance(paths, list) else [paths]:
            yield "resource", f"resource {str(resource.get('name'))[:80]!r}", path, digest


# The checks here read keys, not expanded JSON-LD: a context term renaming what a loader reads files or rows
# through (helper-98), or any other term (helper-101 F4), or a key spelled as a prefixed name or an IRI, would lead
# a loader past them. So every term means the property of its name, and the one context is the document's own.
def _croissant_shape(doc: Any) -> Iterator[str]:
    """What makes a Croissant description read other than its files as checked: a distribution that is not a list,
    a record set carrying rows of its own (`data`), a key that is a prefixed name or an IRI, a renamed term."""
    if not isinstance(doc, dict):
        yield "not a JSON object"
        return
    if not isinstance(doc.get("distribution"), list):
        yield "its distribution is not a list of files"
    context = doc.get("@context")
    if not isinstance(context, dict):  # a list or a link: terms from elsewhere (helper-101 F4)
        yield "its @context is not one JSON object of its own"
    for term, meaning in (context.items() if isinstance(context, dict) else []):
        iri = meaning.get("@id") if isinstance(meaning, dict) else meaning
        local = str(iri).rsplit("/", 1)[-1].rsplit(":", 1)[-1]
        # every term of the specification's context means the property of its own name (a prefix ends in "/"):
        # `column` as cr:fileProperty reads each field from another place than the column checked (helper-101 F4)
        if term != local and not term.startswith("@") and not str(iri).endswith("/"):
            yield f"its @context names {local[:80]!r} {term[:80]!r}"
    stack = [v for k, v in doc.items() if k != "@context"]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                if ":" in key or "/" in key:
                    yield f"a key spelled as a prefixed name or an IRI ({key[:80]!r})"
                elif key == "@context":  # mlcroissant reads a node's own context: its terms renamed there
                    yield "a node has a @context of its own"
                elif key == "data":
                    yield "a record set carries rows of its own (data)"
                stack.append(value)
        elif isinstance(item, list):
            stack.extend(item)
    for key in doc:
        if ":" in key or "/" in key:
            yield f"a key spelled as a prefixed name or an IRI ({key[:80]!r})"


def _croissant_files(doc: Any) -> Iterator[tuple[str, str, Any, str | None]]:
    """(kind, where, path, sha256) of each FileObject's contentUrl and each FileSet's includes."""
    distribution = doc.get("distribution") if isinstance(doc, dict) else None
    for i, item in enumerate(distribution if isinstance(distribution, list) else []):
        kind = item.get("@type") if isinstance(item, dict) else None
        where = f"distribution {str(item.get('@id'))[:80]!r}" if isinstance(item, dict) else f"distribution[{i}]"
        if kind == "cr:FileObject":
            digest = item.get("sha256")
            yield kind, where, item.get("contentUrl"), digest if isinstance(digest, str) else ""
        elif kind == "cr:FileSet":
            includes = item.get("includes")
            for rel in includes if isinstance(includes, list) else [includes]:
                yield kind, where, rel, None
        else:
            yield "other", f"{where} (neither a cr:FileObject nor a cr:FileSet)", None, None


def _package_labels(doc: Any) -> Iterator[str]:
    """A resource named for another file than its path, or several files as one resource: a loader would read a
    signed file's rows under another file's name (another day's, another table's). A file named twice is
    check_descriptions' to find."""
    resources = doc.get("resources") if isinstance(doc, dict) else None
    for resource in resources if isinstance(resources, list) else []:
        path = resource.get("path") if isinstance(resource, dict) else None
        if isinstance(path, list):
            yield f"resource {str(resource.get('name'))[:80]!r} joins several files into one"
        elif isinstance(path, str) and resource.get("name") != resource_name(path):
            yield f"resource {str(resource.get('name'))[:80]!r} is named for another file than {path[:120]}"


def _croissant_labels(doc: Any) -> Iterator[str]:
    """A FileObject named for another file than its contentUrl, a FileSet of another table's files or a table's
    FileSet given twice, or a record set whose values come from other than its own table's FileSet: a loader would
    read a signed file's rows under another name. A file named twice is check_descriptions' to find."""
    distribution = doc.get("distribution") if isinstance(doc, dict) else None
    items = [item for item in (distribution if isinstance(distribution, list) else []) if isinstance(item, dict)]
    for item in items:
        if item.get("@type") == "cr:FileObject" and not item.get("@id") == item.get("name") == item.get("contentUrl"):
            yield (f"distribution {str(item.get('@id'))[:80]!r} is named for another file than "
                   f"{str(item.get('contentUrl'))[:120]}")
    sets = [item for item in items if item.get("@type") == "cr:FileSet"]
    for item in sets:
        given = item.get("includes")
        includes: list[Any] = given if isinstance(given, list) else [given]
        tables = {spec.name if isinstance(rel, str) and (spec := table_of(rel)) else None for rel in includes}
        if any(item.get("@id") != f"{table}-files" or item.get("name") != item.get("@id") for table in tables):
            yield f"distribution {str(item.get('@id'))[:80]!r} holds files of another table than its name says"
    counts: Counter[str] = Counter(str(item.get("@id")) for item in sets if isinstance(item.get("@id"), str))
    for twice in sorted(n for n, times in counts.items() if times > 1):
        yield f"the FileSet {twice[:120]!r} is given twice"
    record_sets = doc.get("recordSet") if isinstance(doc, dict) else None
    for record_set in record_sets if isinstance(record_sets, list) else []:
        yield from _record_set_reads(record_set)


def _record_set_reads(record_set: Any) -> Iterator[str]:
    """A record set named for one table whose fields (or sub-fields) read another's files, one file alone, or
    another record set's fields."""
    if not isinstance(record_set, dict) or record_set.get("name") != record_set.get("@id"):
        yield f"record set {str(record_set)[:80]!r} is named for another table than its @id"
        return
    own = {"@id": f"{record_set.get('@id')}-files"}
    stack: list[Any] = [record_set]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            source = node.get("source")
            if "source" in node and not (isinstance(source, dict) and source.get("fileSet") == own
                                         and not {"field", "fileObject"} & set(source)):
                yield f"record set {str(record_set.get('@id'))[:80]!r} reads other than its own table's files"
                return
            if "source" in node and (source != _field_source(own, node.get("name"))
                                     or node.get("@id") != f"{record_set.get('@id')}/{node.get('name')}"):
                yield (f"record set {str(record_set.get('@id'))[:80]!r}: field {str(node.get('@id'))[:80]!r} reads "
                       "another column than its name gives, or reads it otherwise than as it is")
                return
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def _field_source(own: dict[str, str], name: Any) -> dict[str, Any] | None:
    """The one source a field named `name` may have (publishing/descriptors.py writes it): its column, a struct's
    member by JSONPath within it, and nothing else (no regex, no format, no other column: helper-101 F1, a field
    'shown_status' reading the column `reason` verified OK, and a loader read each row's reason as its status)."""
    if not isinstance(name, str) or not name:
        return None
    column, *members = name.split("/")
    source: dict[str, Any] = {"fileSet": own, "extract": {"column": column}}
    if members:
        source["transform"] = {"jsonPath": ".".join(members)}
    return source


# What a field of a datapackage.json may call missing: Parquet's null as Frictionless reads it (publishing/
# descriptors.py _table_field); another value there would turn a value of the file into a null.
_MISSING = {"", "nan", "NaT"}


def check_package_columns(report: VerifyReport, folder: Path, held: dict[str, str], docs: dict[str, Any]) -> None:
    """`docs`: the descriptions check_descriptions read. Each resource of datapackage.json of a file the snapshot
    holds (checked against its signed line) names that file's columns, in their order, and calls missing nothing but
    a null: Frictionless reads a Parquet file's columns by position under the fields' names, so a schema with two
    names swapped verified OK and a loader read one column's values under the other's name (helper-101 F1). And each
    field of croissant.json is typed as its column is in its table's files: mlcroissant converts to the type given
    (helper-101 F3: handshake_ms as sc:Boolean, 250 read as True)."""
    columns: dict[str, pa.Schema | None] = {}  # each file's footer read once, however many resources name it
    for rel in held:
        try:  # never through a link, never a FIFO: `held` are files verify read as regular ones, read again here
            with open_regular(folder / rel) as fh:
                columns[rel] = pq.read_schema(fh)
        except (pa.ArrowException, OSError):
            columns[rel] = None  # a signed file that is no Parquet: the export lists such withheld
    for name, check in (("datapackage.json", _package_columns), ("croissant.json", _croissant_types)):
        for why in check(docs[name], columns) if name in docs else ():
            report.add(Code.DESCRIPTION_WRONG, f"{name}: {why}", None, name)


def _package_columns(doc: Any, columns: dict[str, pa.Schema | None]) -> Iterator[str]:
    resources = doc.get("resources") if isinstance(doc, dict) else None
    for resource in resources if isinstance(resources, list) else []:
        rel = resource.get("path") if isinstance(resource, dict) else None
        if isinstance(rel, str) and rel in columns:
            schema = columns[rel]
            if why := _schema_wrong(resource.get("schema"), schema.names if schema is not None else None):
                yield f"resource {str(resource.get('name'))[:80]!r} {why}"


def _croissant_types(doc: Any, columns: dict[str, pa.Schema | None]) -> Iterator[str]:
    """Each leaf field's dataType (and isArray) as its column's, or struct member's, in one of its table's files."""
    tables: dict[str, list[pa.Schema]] = {}
    for rel, schema in columns.items():
        if schema is not None and (spec := table_of(rel)) is not None:
            tables.setdefault(spec.name, []).append(schema)
    record_sets = doc.get("recordSet") if isinstance(doc, dict) else None
    for record_set in record_sets if isinstance(record_sets, list) else []:
        table = record_set.get("@id") if isinstance(record_set, dict) else None
        schemas = tables.get(table) if isinstance(table, str) else None
        stack: list[Any] = [record_set.get("field")] if schemas and isinstance(record_set, dict) else []
        typed: dict[str, set[tuple[str, bool] | None]] = {}  # a name's types, read once however often it is named
        while stack:
            node = stack.pop()
            if isinstance(node, list):
                stack.extend(node)
            elif isinstance(node, dict) and "subField" in node:
                stack.append(node["subField"])
            elif isinstance(node, dict) and (node.get("dataType"), node.get("isArray") is True) not in _types_of(
                    typed, schemas or [], node.get("name")):
                yield (f"record set {str(table)[:80]!r}: field {str(node.get('@id'))[:80]!r} is "
                       "typed otherwise than its column (a loader would read its values converted)")
                break


def _types_of(typed: dict[str, set[tuple[str, bool] | None]], schemas: list[pa.Schema],
              name: Any) -> set[tuple[str, bool] | None]:
    if not isinstance(name, str):
        return set()
    if name not in typed:
        typed[name] = {_typed(schema, name) for schema in schemas}
    return typed[name]


def _typed(schema: pa.Schema, name: str) -> tuple[str, bool] | None:
    """(dataType, isArray) of the column (or struct member) a field's name gives, as publishing/descriptors.py
    types it; None when the file has no such column."""
    column, *members = name.split("/")
    if column not in schema.names:
        return None
    t = schema.field(column).type
    is_array = pa.types.is_list(t) or pa.types.is_large_list(t)
    for member in members:
        t = t.value_type if pa.types.is_list(t) or pa.types.is_large_list(t) else t
        if not pa.types.is_struct(t) or t.get_field_index(member) < 0:
            return None
        t = t.field(member).type
        is_array = pa.types.is_list(t) or pa.types.is_large_list(t)
    inner = t.value_type if is_array else t
    return croissant_type(inner), is_array


def _schema_wrong(schema: Any, columns: list[str] | None) -> str | None:
    fields = schema.get("fields") if isinstance(schema, dict) else None
    if not isinstance(fields, list) or not all(isinstance(f, dict) for f in fields):
        return "gives no schema of its own fields (a loader would read one from elsewhere, or guess)"
    # Column by column as far as both go: a snapshot written before 2026-12-04 described a file by its table's
    # schema of then, which may end in columns added after the file was written (no value read under another name).
    if columns is not None and any(f.get("name") != column for f, column in zip(fields, columns, strict=False)):
        return "names other columns than its file's, or in another order"
    for missing in [schema.get("missingValues", [""])] + [f.get("missingValues", [""]) for f in fields]:
        if not isinstance(missing, list) or not {str(m) for m in missing} <= _MISSING:
            return "calls a value of its file missing"
    return None
