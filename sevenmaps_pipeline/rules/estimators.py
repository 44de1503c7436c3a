"""Numerical estimators SQL cannot express, registered as vectorised DuckDB functions."""

from __future__ import annotations

import duckdb
import numpy as np
import pyarrow as pa
from duckdb.func import FunctionNullHandling, PythonUDFType
from scipy.special import betaincinv


def beta_quantile(alpha: np.ndarray, beta: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Quantile q of Beta(alpha, beta) (inverse of the regularised incomplete beta function)."""
    return betaincinv(alpha, beta, q)


def _beta_quantile_arrow(alpha: pa.Array, beta: pa.Array, q: pa.Array) -> pa.Array:
    def arr(x: pa.Array) -> np.ndarray:
        return x.to_numpy(zero_copy_only=False).astype("float64")

    a, b, p = arr(alpha), arr(beta), arr(q)
    out = beta_quantile(a, b, p)
    return pa.array(out, type=pa.float64(), mask=np.isnan(a) | np.isnan(b) | np.isnan(p))


def register_estimators(con: duckdb.DuckDBPyConnection) -> None:
    double = duckdb.sqltype("DOUBLE")
    con.create_function(
        "beta_quantile", _beta_quantile_arrow, [double, double, double], double,
        type=PythonUDFType.ARROW, null_handling=FunctionNullHandling.SPECIAL,
    )
