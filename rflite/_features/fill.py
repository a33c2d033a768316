r"""Filling a feature matrix: BLAS tiles, the sincos pass and the thread pool (private, for :mod:`rflite.features`).

:func:`_fill_blas_trig` builds sin / cos / fourier features of dense
weights tile by tile (the BLAS product of a :data:`TILE_ROWS_COLS` tile,
then its sincos while it is in cache); :func:`_run_blocks` hands row blocks
or tiles to a small thread pool when the matrix has at least
:data:`THREAD_MIN_ENTRIES` entries; :func:`_activate` applies the other
activations through NumPy's ufuncs; :func:`_fill_map` chooses among these
paths for a whole transform (row blocks of :data:`BLOCK_ENTRIES` entries).  The module notes of
:mod:`rflite.features` say which path each transform takes; that module
re-exports these names.  The constants are read here when a transform runs:
set them in this module.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.special

from rflite._features.kernels import (
    _preactivation,
    _trig_inplace,
    _trig_pick,
    _trig_rows,
)
from rflite._core.sincos import SINCOS_MAX_ABS
from rflite._core.validation import check_int
from rflite._core.blas import shared_blas_limit


#: Output tile (rows, columns) of the dense sin / cos / fourier path: its
#: product and its sincos run while it is in L2 cache (a few MB), and a few
#: hundred columns keep each BLAS call near full speed (``_fill_blas_trig``).
TILE_ROWS_COLS = (512, 512)


#: Below this many output entries threads are not worth starting.
THREAD_MIN_ENTRIES = 1 << 20


#: Activations computed by the fused sincos kernels (float64 output):
#: 0 sin, 1 cos, 2 fourier ``[cos | sin]``.
TRIG_KINDS = {"sin": 0, "cos": 1, "fourier": 2}


#: Target size, in matrix entries, of one row block (fits in L2 cache).
BLOCK_ENTRIES = 1 << 17


#: Multiply-adds per BLAS call of the pre-activation (a few tenths of a second;
#: calls of 1 << 28 were 2x slower here, of 1 << 30 1.25x, than one call):
#: large enough for BLAS's full speed, small enough that Ctrl-C, checked
#: between calls, stops a transform at once.
BLAS_CHUNK_MULADDS = 1 << 31


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


def _column_plan(full, columns):
    """Features to evaluate and, per output column, which half (cos/sin)."""
    if columns is None:
        return full, None
    sub = full.subset(columns % full.n_features)
    is_sin = columns >= full.n_features if full.activation == "fourier" else None
    return sub, is_sin

def _fill_map(full, X, columns, out, n_threads, amp=1.0):
    r"""Write the features of map ``full`` on ``X`` (all, or ``columns``) into
    ``out``: the body of :meth:`rflite.features.FeatureMap.transform` and
    ``columns``.  ``amp`` scales sin / cos / fourier outputs in the same pass
    (``RandomFeatures``' :math:`\sqrt{2/N}`; exact for the default 1.0)."""
    fmap, is_sin = _column_plan(full, columns)
    m = X.shape[0]
    n_cols = out.shape[1]
    block = max(1, min(m, BLOCK_ENTRIES // max(1, n_cols)))
    starts = range(0, m, block)
    W = fmap.dense_weights() if fmap.uses_blas else None
    # sin / cos / [cos | sin] in float64 go through the vectorised sincos
    # kernel, fused with the sparse pre-activation (numpy's sin costs
    # ~15 ns an entry here, the kernel ~1 ns)
    trig = TRIG_KINDS.get(full.activation) if out.dtype == np.float64 else None
    if W is not None and trig is not None and (columns is None or full.activation != "fourier"):
        _fill_blas_trig(X, fmap, out, trig, n_threads, amp)
        return
    in_place = out.dtype == np.float64 and full.activation not in ("fourier", "exp")
    if in_place and W is not None:
        # a few large BLAS calls (with BLAS's own threads) beat many
        # block-sized ones; bias and activation then go block by block.
        # Not one call: a BLAS call cannot be interrupted, and Ctrl-C is
        # handled between chunks of at most BLAS_CHUNK_MULADDS.
        rows = max(1, BLAS_CHUNK_MULADDS // max(1, n_cols * X.shape[1]))
        for r0 in range(0, m, rows):
            np.matmul(X[r0:r0 + rows], W.T, out=out[r0:r0 + rows])

    # selected fourier columns use the same sincos, so on the gather path
    # A[:, S] is bitwise the same as the columns of the full matrix
    # (ill-conditioned SHRIMP paths amplify even 1-ulp differences); on
    # the BLAS path the pre-activation itself may differ in the last bits
    # (see "Selected columns" in the module notes)
    pick = trig is not None and is_sin is not None
    if pick:  # (fourier, so never in place)
        trig = None

    if W is None and trig is not None:
        # one contiguous row of supports / values per term k: the kernel's
        # loop over the features then vectorises (11 % faster at q = 2)
        supports_t = np.ascontiguousarray(fmap.supports.T)
        values_t = np.ascontiguousarray(fmap.values.T)
        # every phase provably within the sincos range (an O(m d) test):
        # the kernel skips its per-row O(N) check (same values)
        in_range = fmap.q > 0 and _phases_in_range(fmap, X)

    def work(r0):
        r1 = min(m, r0 + block)
        target = out[r0:r1]
        if W is None and trig is not None:
            _trig_rows(X, r0, r1, supports_t, values_t, fmap.bias, target, trig, amp,
                       in_range)
            return
        Z = target if in_place else np.empty((r1 - r0, fmap.n_features))
        if W is None:
            _preactivation(X, r0, r1, fmap.supports, fmap.values, fmap.bias, Z)
        else:
            if not in_place:
                np.matmul(X[r0:r1], W.T, out=Z)
            Z += fmap.bias
        if pick:
            _trig_pick(Z, target, is_sin)
        else:
            _activate(Z, target, full.activation, is_sin)

    _run_blocks(work, starts, m * n_cols, n_threads)
