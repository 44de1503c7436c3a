"""A snapshot's two descriptions of its Parquet files (docs/verifying.md "Snapshots"): `datapackage.json`, a
Frictionless Data Package v2 that `frictionless validate datapackage.json` passes, and `croissant.json`,
MLCommons Croissant 1.1 metadata for ML loaders. Both are written from each file's own Parquet schema (the
column text from lake/schemas/), so a file written before a column was added is described as it is."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import pyarrow as pa

from ..lake.schemas import DESCRIPTION_TYPES, TableSpec, croissant_type, resource_name

LICENSE = {"name": "CC-BY-4.0", "title": "Creative Commons Attribution 4.0 International",
           "path": "https://creativecommons.org/licenses/by/4.0/"}
PROFILE = "https://datapackage.org/profiles/2.0/datapackage.json"
PARQUET_MEDIATYPE = "application/vnd.apache.parquet"  # IANA-registered (2024)
# mlcroissant (the Croissant reference loader) recognises Parquet by this older name only.
CROISSANT_PARQUET = "application/x-parquet"
CROISSANT_SPEC = "http://mlcommons.org/croissant/1.1"
DESCRIPTION = ("Signed daily map of remote MCP servers: status codes, histories, tools, risk, findings, changes, "
               "categories, rankings and agent-report ratings. Verify with SHA256SUMS, roots/, log/ and proofs/ "
               "(README.md).")


@dataclass(frozen=True)
class DataFile:
    """One exported Parquet file: its path in the snapshot, table, day, size, SHA-256 and Parquet schema."""
    rel: str
    spec: TableSpec
    day: dt.date
    size: int
    sha256: str
    schema: pa.Schema

    def doc(self, column: str) -> str:
        if column in self.spec.schema.names:
            return self.spec.doc(column)
        meta = self.schema.field(column).metadata or {}
        return meta.get(b"doc", b"").decode() or f"{column} (a column of {self.spec.name})"


def _table_type(t: pa.DataType) -> str:
    """The Table Schema type of a Parquet column as Frictionless reads it (through pyarrow and pandas).
    Lists arrive as numpy arrays, which Frictionless's `array` type refuses (it takes a JSON array or a
    Python list), and maps as lists of pairs, which `object` refuses: both are `any`, their description
    naming the Parquet type. Structs arrive as dicts: `object`."""
    return next((table for test, table, _ in DESCRIPTION_TYPES if test(t)), "any")  # as verify holds it


def _table_field(f: pa.Field, doc: str) -> dict:
    kind = _table_type(f.type)
    field: dict = {"name": f.name, "type": kind,
                   "description": doc if kind != "any" else f"{doc} (Parquet {f.type})"}
    if not f.nullable:
        field["constraints"] = {"required": True}
    elif kind in ("integer", "datetime"):
        # A null integer reaches the validator as NaN (pandas has no null int64) and a null timestamp as
        # NaT: neither can be a value of these types, so declaring them missing only names Parquet's null.
        field["missingValues"] = ["", "nan" if kind == "integer" else "NaT"]
    return field


def data_resource(f: DataFile) -> dict:
    """One datapackage resource. No `bytes`: Frictionless 5 reads Parquet through pyarrow, not its byte
    loader, so it counts no bytes and reports every declared count as wrong (`byte-count`, "actual is
    None"); the size is in croissant.json (`contentSize`) and SHA256SUMS checks the bytes. The `hash` is
    declared (Frictionless does not recompute it for Parquet either: sha256sum and `verify --export` do)."""
    return {"name": resource_name(f.rel), "path": f.rel, "format": "parquet", "mediatype": PARQUET_MEDIATYPE,
            "hash": f"sha256:{f.sha256}", "description": f"{f.spec.name} of {f.day}: {f.spec.grain}",
            "schema": {"fields": [_table_field(c, f.doc(c.name)) for c in f.schema]}}


def datapackage(name: str, files: list[DataFile], created: dt.datetime) -> dict:
    return {"$schema": PROFILE, "name": f"sevenmaps-{name}", "title": f"7Maps daily map {name}",
            "description": DESCRIPTION, "created": created.isoformat(timespec="seconds"),
            "licenses": [LICENSE], "resources": [data_resource(f) for f in files]}


# Appendix 1 of the Croissant 1.1 specification: the recommended JSON-LD context, with schema.org as https, as
# mlcroissant (the reference loader, 1.1.1) and the published Croissant files write it: mlcroissant refuses a
# dataset whose type expands to http://schema.org/Dataset (docs/verifying.md, section 5).
CROISSANT_CONTEXT = {
    "@language": "en", "@vocab": "https://schema.org/", "sc": "https://schema.org/",
    "cr": "http://mlcommons.org/croissant/", "rai": "http://mlcommons.org/croissant/RAI/",
    "dct": "http://purl.org/dc/terms/", "annotation": "cr:annotation", "arrayShape": "cr:arrayShape",
    "citeAs": "cr:citeAs", "column": "cr:column", "conformsTo": "dct:conformsTo", "containedIn": "cr:containedIn",
    "data": {"@id": "cr:data", "@type": "@json"}, "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "equivalentProperty": "cr:equivalentProperty", "examples": {"@id": "cr:examples", "@type": "@json"},
    "excludes": "cr:excludes", "extract": "cr:extract", "field": "cr:field", "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject", "fileSet": "cr:fileSet", "format": "cr:format", "includes": "cr:includes",
    "isArray": "cr:isArray", "isLiveDataset": "cr:isLiveDataset", "jsonPath": "cr:jsonPath", "key": "cr:key",
    "md5": "cr:md5", "parentField": "cr:parentField", "recordSet": "cr:recordSet", "references": "cr:references",
    "regex": "cr:regex", "readLines": "cr:readLines", "sdVersion": "cr:sdVersion", "separator": "cr:separator",
    "source": "cr:source", "subField": "cr:subField", "transform": "cr:transform", "unArchive": "cr:unArchive",
    "value": "cr:value",
}


def _croissant_field(table: str, column: pa.Field, doc: str, path: list[str] | None = None) -> dict:
    """A Croissant Field for a column (or, with `path`, a struct member within it): lists are `isArray`
    of their item's type, structs have a subField per member, read by JSONPath within the column."""
    path = path or [column.name]
    t = column.type
    is_array = pa.types.is_list(t) or pa.types.is_large_list(t)
    inner = t.value_type if is_array else t
    source: dict = {"fileSet": {"@id": f"{table}-files"}, "extract": {"column": path[0]}}
    if len(path) > 1:
        source["transform"] = {"jsonPath": ".".join(path[1:])}
    out: dict = {"@type": "cr:Field", "@id": f"{table}/{'/'.join(path)}", "name": "/".join(path),
                 "description": doc, "source": source}
    if is_array:
        out |= {"isArray": True, "arrayShape": "-1"}
    if pa.types.is_struct(inner):
        out["subField"] = [_croissant_field(table, inner.field(i), f"{inner.field(i).name} of {column.name}",
                                            path + [inner.field(i).name]) for i in range(inner.num_fields)]
    else:
        out["dataType"] = croissant_type(inner)
    return out


def _record_sets(files: list[DataFile]) -> list[dict]:
    """One RecordSet per table: its columns over all its files (a column added later is listed once, as
    the first file that has it types it)."""
    tables: dict[str, list[DataFile]] = {}
    for f in files:
        tables.setdefault(f.spec.name, []).append(f)
    sets = []
    for table, group in sorted(tables.items()):
        columns: dict[str, tuple[pa.Field, str]] = {}
        for f in group:
            for c in f.schema:
                columns.setdefault(c.name, (c, f.doc(c.name)))
        sets.append({"@type": "cr:RecordSet", "@id": table, "name": table,
                     "description": f"{table}: {group[0].spec.grain}",
                     "field": [_croissant_field(table, c, doc) for c, doc in columns.values()]})
    return sets


def croissant(name: str, days: list[dt.date], files: list[DataFile], created: dt.datetime) -> dict:
    """Croissant 1.1: every Parquet file a FileObject (relative contentUrl, size, SHA-256), each table a
    FileSet of exactly its files and a RecordSet of its columns. `url` is the README beside it: a snapshot
    has no address of its own until someone shares it."""
    first, last = days[0], days[-1]
    distribution: list[dict] = [
        {"@type": "cr:FileObject", "@id": f.rel, "name": f.rel, "contentUrl": f.rel, "contentSize": f"{f.size} B",
         "encodingFormat": CROISSANT_PARQUET, "sha256": f.sha256} for f in files]
    tables: dict[str, list[str]] = {}
    for f in files:
        tables.setdefault(f.spec.name, []).append(f.rel)
    distribution += [{"@type": "cr:FileSet", "@id": f"{table}-files", "name": f"{table}-files",
                      "description": f"The {table} files of {first} .. {last}", "encodingFormat": CROISSANT_PARQUET,
                      "includes": rels} for table, rels in sorted(tables.items())]
    return {
        "@context": CROISSANT_CONTEXT, "@type": "sc:Dataset", "conformsTo": CROISSANT_SPEC,
        "name": f"sevenmaps-{name}", "description": DESCRIPTION, "license": LICENSE["path"], "url": "README.md",
        "creator": {"@type": "sc:Organization", "name": "7Maps"},
        "datePublished": created.isoformat(timespec="seconds"), "temporalCoverage": f"{first}/{last}",
        "citeAs": f"7Maps, signed daily map of remote MCP servers, snapshot {name} ({first} .. {last}), "
                  "CC BY 4.0",
        "isLiveDataset": False, "distribution": distribution, "recordSet": _record_sets(files),
    }
