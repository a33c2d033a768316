"""BLAS thread limits: one count per fit, shared safely by several Python threads."""

from __future__ import annotations

import contextlib
import threading



def blas_threads(limit: int | None = 1):
    """Context manager limiting BLAS to ``limit`` threads (``None``: no limit).

    Two reasons, both measured here.  Reproducibility: a threaded BLAS splits
    sums differently, and on nearly singular systems (SHRIMP's q = 1 paths)
    last-bit differences change which columns are pruned: the default
    ``SHRIMPRegressor`` on airfoil scored 0.577 with one BLAS thread and 0.835
    with two, same seed, while this limit was a no-op on installs without
    ``threadpoolctl`` (``tests/test_blas_threads.py``).  Speed: loops of many
    small BLAS calls (Gram updates, small eigendecompositions, per-task work
    in a process pool) run many times slower when OpenBLAS starts threads for
    each call on a busy machine (a 32 x 32 ``eigh``: ~190 ms instead of
    ~1 ms).  ``threadpoolctl`` is a runtime dependency for this; the previous
    limits are restored on exit.
    """
    if limit is None:
        return contextlib.nullcontext()
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limit, user_api="blas")


# The BLAS thread count is process-global, and ``blas_threads`` (threadpoolctl)
# saves it on entry and restores it on exit.  Two Python threads entering and
# leaving such contexts interleaved leave each other's BLAS calls running at
# whatever count the other set (and can leave the process at one thread for
# good), so a fit's rounding (OpenBLAS partitions differently by thread count)
# changed with timing: 4 of 40 concurrent fixed_rff fits differed from serial
# ones by up to 5e-16 here.  The gate below lets any number of threads share
# one limit, makes a thread asking for a different one wait until the others
# leave (or, with ``wait=False``, go on without a limit of its own), and
# restores the count when the last one leaves, so every BLAS call of a fit
# runs at the count a serial run uses.  A nested request in a thread that
# already holds the gate (e.g. a fit inside an ``arff`` callback) runs under
# the outer limit instead of waiting on itself.
_BLAS_GATE = threading.Condition()
_BLAS_STATE = {"limit": None, "count": 0, "ctx": None}
_BLAS_HELD = threading.local()


@contextlib.contextmanager
def shared_blas_limit(limit, wait: bool = True):
    """``blas_threads(limit)`` that concurrent threads can use without racing (see above).

    ``wait=False`` is for callers whose results do not depend on the BLAS
    thread count (a GEMM splits its output, not its sums): when another
    thread holds a different limit they run at that one instead of waiting.
    """
    if getattr(_BLAS_HELD, "depth", 0):
        _BLAS_HELD.depth += 1
        try:
            yield
        finally:
            _BLAS_HELD.depth -= 1
        return
    state = _BLAS_STATE
    with _BLAS_GATE:
        while wait and state["count"] and state["limit"] != limit:
            _BLAS_GATE.wait()
        entered = not (state["count"] and state["limit"] != limit)
        if entered:
            if state["count"] == 0:
                ctx = blas_threads(limit)
                ctx.__enter__()
                state["limit"], state["ctx"] = limit, ctx
            state["count"] += 1
    if not entered:
        yield
        return
    _BLAS_HELD.depth = 1
    try:
        yield
    finally:
        _BLAS_HELD.depth = 0
        with _BLAS_GATE:
            state["count"] -= 1
            if state["count"] == 0:
                ctx, state["ctx"] = state["ctx"], None
                ctx.__exit__(None, None, None)
                _BLAS_GATE.notify_all()
