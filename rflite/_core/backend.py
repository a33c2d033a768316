"""The one seam between the algorithms and the Dask backend.

Every estimator, transformer and solver of rflite is written for arrays in
memory.  When it is handed a :class:`dask.array.Array` (or an operator over
one) it asks :func:`dask_backend` for the backend and calls it; nothing else in
the package names the backend.  The backend, :mod:`rflite._dask`, sits above
the estimators (it imports them, never the other way round) and is loaded on
first use, so ``import rflite`` never imports Dask.
"""

from __future__ import annotations

import importlib
import sys

#: The module that runs fits, predictions and transforms on Dask arrays.
DASK_BACKEND = "rflite._dask.backend"


def is_dask_array(x) -> bool:
    """Whether ``x`` is a :class:`dask.array.Array` (without importing Dask)."""
    mod = sys.modules.get("dask.array")
    return mod is not None and isinstance(x, mod.Array)


def is_dask_operator(A) -> bool:
    """Whether ``A`` is a feature operator over the rows of a Dask array."""
    return bool(getattr(A, "is_distributed", False))


def dask_backend():
    """The Dask backend module (imported on first use)."""
    return importlib.import_module(DASK_BACKEND)
