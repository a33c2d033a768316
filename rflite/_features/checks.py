"""Argument checks of :class:`rflite.features.FeatureMap`'s column selections and outputs."""

from __future__ import annotations

import numpy as np

from rflite._core.memory import check_memory


def _check_columns(columns, n_columns) -> np.ndarray:
    """Column indices (or a boolean mask) as int64 indices in ``[0, n_columns)``."""
    columns = np.asarray(columns)
    if columns.dtype == bool:
        if columns.shape != (n_columns,):
            raise ValueError(f"a boolean columns mask must have shape ({n_columns},), "
                             f"got {columns.shape}")
        columns = np.flatnonzero(columns)
    if columns.size == 0:
        columns = columns.astype(np.int64).reshape(0)
    if columns.ndim != 1 or not np.issubdtype(columns.dtype, np.integer):
        raise ValueError("columns must be a 1-d array of integer indices")
    columns = columns.astype(np.int64, copy=False)
    if columns.size and (columns.min() < 0 or columns.max() >= n_columns):
        raise ValueError(f"columns must lie in [0, {n_columns})")
    return columns


def _check_out(out, m, n, dtype, is_complex):
    """``out`` checked as the (m, n) result of a transform, or a new array when ``None``."""
    dtype = np.dtype(dtype)
    if dtype not in (np.float64, np.float32):
        raise ValueError(f"dtype must be float64 or float32, got {dtype}")
    if is_complex:
        dtype = np.dtype(np.complex128 if dtype == np.float64 else np.complex64)
    if out is None:
        check_memory(
            (m, n), dtype, "the feature matrix (m samples x n_columns)",
            "use FeatureMap.operator(X) for matrix-free products or fewer features",
        )
        return np.empty((m, n), dtype=dtype)
    if not isinstance(out, np.ndarray) or out.shape != (m, n) or out.dtype != dtype:
        raise ValueError(
            f"out must be an ndarray of shape {(m, n)} and dtype {dtype}, got "
            f"{getattr(out, 'shape', None)} {getattr(out, 'dtype', None)}"
        )
    if not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError("out must be C-contiguous and writeable")
    return out
