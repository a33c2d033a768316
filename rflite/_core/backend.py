"""The one seam between the algorithms and the Dask backend.

Every estimator, transformer and solver of rflite is written for arrays in
memory.  When it is handed a :class:`dask.array.Array` (or an operator over
one) it asks :func:`dask_backend` for the backend and calls it; nothing else in
the package names the backend.  The backend, :mod:`rflite._dask`, sits above
the estimators (it imports them, never the other way round) and is loaded on
first use, so ``import rflite`` never imports Dask.
"""

from __future__ import annotations

import contextlib
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


#: A Dask fit whose ``X`` has at most this many rows computes ``X``, ``y`` and
#: the weights and runs the in-memory fit (the same model, bit for bit).
#: Below it a distributed fit costs what its task graphs cost -- each pass
#: over the rows is milliseconds of scheduling against microseconds of
#: arithmetic, and an automatic choice makes thousands of passes -- while
#: the rows themselves are a few MB.  Read at call time; set it to 0 to run
#: every Dask fit on the workers.
LOCAL_FIT_MAX_ROWS = 10_000


@contextlib.contextmanager
def fits_on_workers():
    """Within the block every Dask fit runs the distributed code, whatever its size.

    Sets :data:`LOCAL_FIT_MAX_ROWS` to 0 and restores it on exit: for
    measuring the distributed fits themselves (their passes and memory)
    on rows that would otherwise be fitted in memory.
    """
    global LOCAL_FIT_MAX_ROWS
    previous, LOCAL_FIT_MAX_ROWS = LOCAL_FIT_MAX_ROWS, 0
    try:
        yield
    finally:
        LOCAL_FIT_MAX_ROWS = previous


def fitted_locally(X) -> bool:
    """Whether a fit on the Dask array ``X`` runs in memory (:func:`local_arrays`):
    known row chunks and at most :data:`LOCAL_FIT_MAX_ROWS` rows."""
    rows = X.shape[0]
    return isinstance(rows, int) and rows <= LOCAL_FIT_MAX_ROWS


def local_arrays(X, y, sample_weight=None):
    """``(X, y, sample_weight)`` computed to NumPy when a Dask fit is small, else None.

    Small means ``X`` has known row chunks and at most
    :data:`LOCAL_FIT_MAX_ROWS` rows; arrays that are not Dask arrays pass
    through.  Input the Dask backend would refuse (unknown chunk sizes) is
    left to it, so its errors stay the same.
    """
    if not fitted_locally(X):
        return None
    import dask

    parts = [a if is_dask_array(a) else None for a in (X, y, sample_weight)]
    computed = iter(dask.compute(*[a for a in parts if a is not None]))
    return tuple(next(computed) if p is not None else a
                 for p, a in zip(parts, (X, y, sample_weight)))
