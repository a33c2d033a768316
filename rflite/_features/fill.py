r"""Filling a feature matrix: BLAS tiles, the sincos pass and the thread pool (private, for :mod:`rflite.features`).

:func:`_fill_blas_trig` builds sin / cos / fourier features of dense
weights tile by tile (the BLAS product of a :data:`TILE_ROWS_COLS` tile,
then its sincos while it is in cache); :func:`_run_blocks` hands row blocks
or tiles to a small thread pool when the matrix has at least
:data:`THREAD_MIN_ENTRIES` entries; :func:`_activate` applies the other
activations through NumPy's ufuncs.  The module notes of
:mod:`rflite.features` say which path each transform takes.  Split out of
:mod:`rflite.features`, which imports these names and forwards the two
constants set there.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.special

from rflite._features.kernels import _trig_inplace
from rflite._core.sincos import SINCOS_MAX_ABS
from rflite._core.validation import check_int
from rflite._core.blas import shared_blas_limit


#: Output tile (rows, columns) of the dense sin / cos / fourier path: its
#: product and its sincos run while it is in L2 cache (a few MB), and a few
#: hundred columns keep each BLAS call near full speed (``_fill_blas_trig``).
TILE_ROWS_COLS = (512, 512)


#: Below this many output entries threads are not worth starting.
THREAD_MIN_ENTRIES = 1 << 20


def _fill_blas_trig(X, fmap, out, kind, n_threads, amp):
    """sin / cos / fourier features of dense weights, tile by tile: the
    product of a tile (:data:`TILE_ROWS_COLS`) by BLAS into ``out``, then
    bias, sincos and ``amp`` in place while the tile is still in cache
    (:func:`_trig_inplace`).

    One product over the whole output followed by a sincos pass would write
    and read the (memory-bound) output twice; tiled, the fill costs little
    more than the product alone plus writing the output once
    (``bench_transformer.py`` / ``bench_features.py``).  BLAS may round a tile's product differently
    from the whole product's (another kernel for another shape): on
    900 x 2100 at d = 100, 2645 entries moved by up to 1.2e-14, on the
    benchmark shapes none.  The tiles are fixed, so the result is the same
    on every call and with one or two threads (tested).  Tiles are split
    among the transform's threads with BLAS at one thread each (through
    :func:`rflite._core.blas.shared_blas_limit`, since the count is
    process-wide); a tile's product does not depend on the BLAS thread
    count (a GEMM splits its output, not its sums), so neither does the
    result.  Tiles take milliseconds, so Ctrl-C stops a transform at once.
    When :func:`_phases_in_range` bounds every phase, the sincos skips its
    per-row range check.
    """
    W, bias = fmap.dense_weights(), fmap.bias
    m, n = X.shape[0], W.shape[0]
    rows, cols = TILE_ROWS_COLS
    rows, cols = max(1, min(m, rows)), max(1, min(n, cols))
    tiles = [(r0, j0) for r0 in range(0, m, rows) for j0 in range(0, n, cols)]
    in_range = _phases_in_range(fmap, X)

    def work(tile):
        r0, j0 = tile
        r1, j1 = min(m, r0 + rows), min(n, j0 + cols)
        np.matmul(X[r0:r1], W[j0:j1].T, out=out[r0:r1, j0:j1])
        _trig_inplace(out[r0:r1], bias, kind, amp, j0, j1, in_range)

    threaded = _threaded(len(tiles), m * out.shape[1], n_threads)
    with shared_blas_limit(1 if threaded > 1 else None, wait=False):
        _run_blocks(work, tiles, m * out.shape[1], threaded)


def _phases_in_range(fmap, X):
    r"""Whether every phase :math:`x_i^\top w_j + b_j` is provably within
    :data:`rflite._core.sincos.SINCOS_MAX_ABS` (so the sincos needs no per-row check).

    :meth:`FeatureMap.phase_bound` at :math:`\max_{i,k} |x_{ik}|`; the
    computed product exceeds the exact one by at most :math:`d\,u` relative
    (the factor 1.001 covers it many times over).  O(m d) per call (the
    map's part is cached), against the O(m N) check it replaces.
    """
    x_max = float(np.abs(X).max()) if X.size else 0.0
    return bool(fmap.phase_bound(x_max) * 1.001 <= SINCOS_MAX_ABS)


def _threaded(n_blocks, n_entries, n_threads):
    """Threads :func:`_run_blocks` uses for ``n_blocks`` blocks of ``n_entries`` in all."""
    if n_threads is None:
        n_threads = os.cpu_count() or 1
    n_threads = check_int(n_threads, "n_threads", minimum=1)
    if n_entries < THREAD_MIN_ENTRIES or n_blocks == 1:
        return 1
    return n_threads


def _run_blocks(work, starts, n_entries, n_threads):
    """``work(r0)`` for every row block start, on a small thread pool when it pays."""
    n_threads = _threaded(len(starts), n_entries, n_threads)
    if n_threads == 1:
        for r0 in starts:
            work(r0)
        return
    pool = ThreadPoolExecutor(max_workers=n_threads)
    try:
        # list() re-raises the first exception of any block
        list(pool.map(work, starts))
    except BaseException:
        # Ctrl-C (KeyboardInterrupt reaches this thread while it waits) or a
        # failing block: cancel the queued blocks, wait only for the few
        # running ones (milliseconds each), re-raise.  A `with` block would
        # run the whole transform first.
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


def _activate(Z, out, activation, is_sin=None):
    """Apply ``activation`` to the pre-activation block ``Z`` into ``out`` (may alias)."""
    if activation == "sin":
        np.sin(Z, out=out)
    elif activation == "cos":
        np.cos(Z, out=out)
    elif activation == "relu":
        np.maximum(Z, 0.0, out=out)
    elif activation == "tanh":
        np.tanh(Z, out=out)
    elif activation == "sigmoid":
        scipy.special.expit(Z, out=out)
    elif activation == "exp":
        np.cos(Z, out=out.real)
        np.sin(Z, out=out.imag)
    elif is_sin is None:  # fourier, all columns: [cos | sin]
        n = Z.shape[1]
        np.cos(Z, out=out[:, :n])
        np.sin(Z, out=out[:, n:])
    else:  # fourier, selected columns
        out[:] = np.where(is_sin, np.sin(Z), np.cos(Z))
