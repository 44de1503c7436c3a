"""What a table's contract is: its columns, each with its documentation, and where it lives."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

UTC_TS = pa.timestamp("us", tz="UTC")


def col(name: str, type_: pa.DataType, doc: str, nullable: bool = True) -> pa.Field:
    return pa.field(name, type_, nullable=nullable, metadata={"doc": doc})


@dataclass(frozen=True)
class TableSpec:
    name: str
    layer: str  # "raw", "curated" or "aggregate"
    location: str  # path pattern below the lake root
    grain: str
    schema: pa.Schema
    view: str  # the warehouse.duckdb view over it

    def doc(self, column: str) -> str:
        meta = self.schema.field(column).metadata or {}
        return meta.get(b"doc", b"").decode()


def conform(table: pa.Table, spec: TableSpec) -> pa.Table:
    """Select and cast columns into the spec's schema (missing nullable columns become nulls)."""
    columns = []
    for field in spec.schema:
        if field.name in table.column_names:
            columns.append(table.column(field.name).cast(field.type))
        elif field.nullable:
            columns.append(pa.nulls(table.num_rows, field.type))
        else:
            raise ValueError(f"{spec.name}: required column {field.name!r} is missing")
    return pa.Table.from_arrays(columns, schema=spec.schema)
