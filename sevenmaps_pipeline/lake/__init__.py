"""The lake: paths, schemas, atomic Parquet writes, DuckDB sessions and the warehouse of views."""

from .paths import LakePaths

__all__ = ["LakePaths"]
