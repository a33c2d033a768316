r"""The distributed feature operator and the Dask input checks (private, for :mod:`rflite._dask.backend`).

:class:`DaskFeatureOperator` is :class:`rflite.features.FeatureOperator` on a
row-chunked Dask ``X``: the feature map is broadcast to
the workers once (:func:`_broadcast`), every chunk builds its features with
the in-memory numba kernels block by block (:class:`_State`, at most
:data:`BLOCK_ENTRIES` numbers a block) and the products :math:`A^* r`, the
support Gram matrices :math:`A_S^* A_S`, :math:`A_S^* y` and the squared
column norms come back as tree sums (:data:`SPLIT_EVERY` partial sums a
node); vectors of length m stay in Dask arrays with ``X``'s row chunks.
The checks (:func:`check_dask_X`, :func:`check_dask_y`,
:func:`check_dask_weight`) read only the graph's metadata and raise a
``ValueError`` naming the argument before any computation.  The module
notes of :mod:`rflite._dask.backend` describe the whole layer; that module
re-exports these names; the two constants are read here, so set them here.
"""

from __future__ import annotations

import contextvars
import copy
import functools
import math
import sys
import time

import numpy as np

from rflite._core.backend import is_dask_array  # noqa: F401 - re-exported to the backend
from rflite._core.validation import check_array, check_int, relative_weights



#: Fan-in of the tree sums over chunks (partial sums combined per task).
SPLIT_EVERY = 8


#: Feature entries per row block inside a chunk task (:meth:`_State.blocks`).
BLOCK_ENTRIES = 1 << 22


def check_dask_X(X, name: str = "X"):
    """Validate a Dask ``X``: 2-d, known chunk sizes, row chunks holding every column.

    Raises ``ValueError`` naming ``name`` before any computation (only the
    graph's metadata is read).  Complex or non-numeric dtypes are refused;
    integer and float32 chunks are converted per chunk.
    """
    if X.ndim != 2:
        raise ValueError(f"{name} must have 2 dimensions, got shape {X.shape}")
    if any(math.isnan(c) for c in X.chunks[0]) or any(math.isnan(c) for c in X.chunks[1]):
        raise ValueError(
            f"{name} has unknown chunk sizes (nan in {name}.chunks); call "
            f"{name}.compute_chunk_sizes() (or build it with known chunks) first")
    if len(X.chunks[1]) != 1:
        raise ValueError(
            f"{name} is chunked along its columns (column chunks {X.chunks[1]}); rflite needs "
            f"row chunks holding all {X.shape[1]} columns: pass {name}.rechunk({{1: -1}})")
    if X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"{name} must have at least one row and one column, got shape {X.shape}")
    kind = np.dtype(X.dtype).kind
    if kind == "c":
        raise ValueError(f"{name} must be real (Complex data not supported), got dtype {X.dtype}")
    if kind not in "biuf":
        raise ValueError(f"{name} must be numeric, got dtype {X.dtype}")
    return X


def check_dask_y(y, X, name: str = "y"):
    """``y`` as an (m, k) Dask array with the row chunks of ``X``; returns ``(Y, one_d)``.

    A NumPy ``y`` is wrapped with ``X``'s row chunks (no copy on the
    client).  A Dask ``y`` must have the same row chunks as ``X``: a
    different chunking raises ``ValueError`` naming ``y`` (rechunking would
    silently move length-m data between workers).
    """
    import dask.array as da

    m = X.shape[0]
    if not is_dask_array(y):
        yy = check_array(y, name, ndim=(1, 2), allow_complex=True)
        if yy.shape[0] != m:
            raise ValueError(f"{name} must have length m={m} (X has shape {X.shape}), "
                             f"got {yy.shape[0]}")
        one_d = yy.ndim == 1
        yy = yy.reshape(m, -1)
        return da.from_array(yy, chunks=(X.chunks[0], (yy.shape[1],))), one_d
    if y.ndim not in (1, 2):
        raise ValueError(f"{name} must have 1 or 2 dimensions, got shape {y.shape}")
    if any(math.isnan(c) for c in y.chunks[0]):
        raise ValueError(f"{name} has unknown chunk sizes (nan in {name}.chunks); call "
                         f"{name}.compute_chunk_sizes() first")
    if y.shape[0] != m:
        raise ValueError(f"{name} must have length m={m} (X has shape {X.shape}), "
                         f"got {y.shape[0]}")
    if tuple(y.chunks[0]) != tuple(X.chunks[0]):
        raise ValueError(
            f"{name} must be chunked along rows like X: X's row chunks are "
            f"{_short(X.chunks[0])}, {name}'s {_short(y.chunks[0])}; pass "
            f"{name}.rechunk({{0: X.chunks[0]}})")
    kind = np.dtype(y.dtype).kind
    if kind not in "biufc":
        raise ValueError(f"{name} must be numeric, got dtype {y.dtype}")
    one_d = y.ndim == 1
    Y = y.reshape(m, 1) if one_d else y
    if len(Y.chunks[1]) != 1:  # a few target columns: merging them moves nothing
        Y = Y.rechunk({1: -1})
    if kind in "biu":
        Y = Y.astype(np.float64)
    return Y, one_d


def _short(chunks):
    chunks = tuple(int(c) for c in chunks)
    return str(chunks) if len(chunks) <= 6 else f"({', '.join(map(str, chunks[:3]))}, ..., " \
        f"{chunks[-1]}) [{len(chunks)} chunks]"


def check_dask_weight(sample_weight, X, name: str = "sample_weight"):
    r"""``sample_weight`` for a Dask ``X``: ``(W, total)``, W an (m, 1) Dask array or None.

    ``None`` gives ``(None, m)``.  A scalar or a NumPy vector is validated on
    the client exactly as in memory (:func:`rflite._core.validation.check_sample_weight`:
    1-d, length m, finite, non-negative, positive sum) and wrapped with
    ``X``'s row chunks.  A Dask vector must be 1-d with ``X``'s row chunks
    (checked on the graph's metadata, before any computation; a different
    chunking is refused, naming ``sample_weight``); its values are then
    checked by one small pass over the weights alone (minimum, finiteness,
    sum), before any feature is computed.  ``total`` is :math:`\sum_i w_i`,
    the weighted row count that scales the penalty (as in memory; for Dask
    weights a tree sum, equal to the in-memory sum to rounding only).
    """
    import dask
    import dask.array as da

    m = X.shape[0]
    if sample_weight is None:
        return None, float(m)
    if not is_dask_array(sample_weight):
        from rflite._core.validation import check_sample_weight

        w = relative_weights(check_sample_weight(sample_weight, m))
        # the in-memory fit's sum (over the kept rows, same order): relative
        # grids (lams / total) then agree to the last bit
        total = float(w[w > 0].sum())
        W = da.from_array(w.reshape(m, 1), chunks=(X.chunks[0], (1,)))
        return W, total
    if sample_weight.ndim != 1:
        raise ValueError(f"{name} must be 1-d, got shape {sample_weight.shape}")
    if any(math.isnan(c) for c in sample_weight.chunks[0]):
        raise ValueError(f"{name} has unknown chunk sizes (nan in {name}.chunks); call "
                         f"{name}.compute_chunk_sizes() first")
    if sample_weight.shape[0] != m:
        raise ValueError(f"{name}.shape == {sample_weight.shape}, expected {(m,)}!")
    if tuple(sample_weight.chunks[0]) != tuple(X.chunks[0]):
        raise ValueError(
            f"{name} must be chunked along rows like X: X's row chunks are "
            f"{_short(X.chunks[0])}, {name}'s {_short(sample_weight.chunks[0])}; pass "
            f"{name}.rechunk(X.chunks[0])")
    if np.dtype(sample_weight.dtype).kind not in "biuf":
        raise ValueError(f"{name} must be real numbers, got dtype {sample_weight.dtype}")
    W = sample_weight.astype(np.float64).reshape(m, 1)
    # the weights alone (m numbers, no features): errors before any long work
    lo, finite, total, lo_pos = dask.compute(W.min(), da.isfinite(W).all(), W.sum(),
                                             da.where(W > 0, W, np.inf).min())
    if not finite:
        raise ValueError(f"{name} contains NaN or infinite values")
    if lo < 0:
        raise ValueError(f"Negative values in data passed to {name} (min {float(lo):g})")
    if not total > 0:
        raise ValueError(f"{name} must have a positive sum, got all zero weights")
    # the in-memory fit's weights, chunk by chunk (relative to the smallest)
    W = W.map_blocks(relative_weights, lo=float(lo_pos), dtype=np.float64)
    return W, float(W.sum().compute())


def _client():
    """The ``distributed`` client that will run the next compute, or None."""
    if "distributed" not in sys.modules:
        return None
    from dask.base import get_scheduler
    from distributed import Client

    owner = getattr(get_scheduler(), "__self__", None)
    return owner if isinstance(owner, Client) else None


def _broadcast(obj):
    """``obj`` as a Dask ``Delayed``: scattered to every worker once when a client runs.

    With a ``distributed`` client the object is sent to every worker now
    (``scatter(broadcast=True)``) and every later graph refers to it by key,
    so the feature map crosses the network once per fit, not once per task
    or pass.  Without a client it is one literal node of each graph.
    """
    import dask

    client = _client()
    if client is not None:
        return dask.delayed(client.scatter(obj, broadcast=True, hash=False)), client
    return dask.delayed(obj, pure=True), None


#: The :class:`rflite._core.progress.Progress` of the fit running in this context (see
#: :func:`reports_passes`): every distributed pass prints a line through it.
_PROGRESS = contextvars.ContextVar("rflite_dask_progress", default=None)


def reports_passes(fit):
    """Decorate a Dask ``fit(est, ...)``: one line per distributed pass if ``est.verbose``.

    A pass at m = 10^7 rows can take minutes; without this a long Dask fit
    is silent until it ends.  The lines go through the estimator's
    :class:`rflite._core.progress.Progress` (stderr), e.g. ``[HARFERegressor] pass 3:
    gradient, 745 chunks, 512.3 s  1534.0 s`` (the last figure: time since
    the fit started).
    """
    @functools.wraps(fit)
    def wrapper(est, *args, **kwargs):
        from rflite._core.progress import Progress

        progress = Progress(getattr(est, "verbose", False), type(est).__name__)
        progress.passes = 0  # numbered across the fit's operators
        token = _PROGRESS.set(progress)
        try:
            return fit(est, *args, **kwargs)
        finally:
            _PROGRESS.reset(token)

    return wrapper


def _n_threads():
    """Threads per chunk kernel: all cores on the synchronous scheduler, else 1.

    Dask's threaded scheduler and ``distributed`` workers already run one
    task per core; nested feature-kernel threads would oversubscribe.
    """
    from dask.base import get_scheduler
    import dask.local

    return None if get_scheduler() is dask.local.get_sync else 1


class _State:
    r"""What every chunk task needs: the map and the (optional) centring and scaling.

    ``sw`` (the chunk's :math:`\sqrt{w}`, set per task by :meth:`with_rows`)
    scales the rows of a weighted fit.
    """

    sw = None

    def __init__(self, fmap, mean, scale, n_threads):
        self.fmap = fmap
        self.mean = mean
        self.scale = scale
        self.n_threads = n_threads

    def with_rows(self, sw):
        """A shallow copy scaling the rows by ``sw`` (one task's chunk of sqrt(weights))."""
        st = copy.copy(self)
        st.sw = sw
        return st

    def features(self, Xb, cols=None, *, out=None, rows=None):
        """Features of one chunk (all columns, or ``cols``), centred, weighted and scaled.

        ``out`` (optional) receives them; ``rows`` is the chunk's row slice
        when ``Xb`` is a sub-block of it (for the weights).
        """
        fmap = self.fmap
        Xb = np.ascontiguousarray(Xb, dtype=np.float64)
        n = fmap.n_columns if cols is None else cols.size
        if out is None:
            out = fmap._check_out(None, Xb.shape[0], n, np.float64)
        fmap._fill(Xb, cols, out, self.n_threads)
        # the same in-place operations, in the same order, as the dense path
        # (RandomFeatureModel._center_and_weight then the column scaling)
        if self.mean is not None:
            out -= self.mean if cols is None else self.mean[cols]
        if self.sw is not None:  # center_and_weight: centre, then the sqrt(w) rows
            sw = self.sw if rows is None else self.sw[rows]
            out *= sw[:, None]
        if self.scale is not None:
            out *= self.scale if cols is None else self.scale[cols]
        return out

    def blocks(self, Xb, cols=None):
        """``(r0, r1, A)`` over row blocks of a chunk, ``A`` the block's :meth:`features`.

        A block holds about :data:`BLOCK_ENTRIES` numbers (32 MB, the
        in-memory :class:`~rflite.features.FeatureOperator`'s block), in one
        buffer reused for every block of the task: a 10^4-row chunk of
        10^4 features is 800 MB at once, whose first-touch page faults and
        cache misses made every pass several times slower than the
        in-memory operator's.
        """
        Xb = np.ascontiguousarray(Xb, dtype=np.float64)
        m = Xb.shape[0]
        n = self.fmap.n_columns if cols is None else cols.size
        br = max(1, BLOCK_ENTRIES // max(1, n))
        buf = None
        for r0 in range(0, m, br):
            r1 = min(m, r0 + br)
            if buf is None or buf.shape[0] != r1 - r0:
                buf = self.fmap._check_out(None, r1 - r0, n, np.float64)
            yield r0, r1, self.features(Xb[r0:r1], cols, out=buf, rows=slice(r0, r1))


def _adj(A, R):
    """:math:`A^* R` without a conjugated copy of a real ``A``."""
    if np.iscomplexobj(A):
        return A.conj().T @ R
    if np.iscomplexobj(R):
        return A.T @ R.real + 1j * (A.T @ R.imag)
    return A.T @ R


def _k_rmat(Xb, Rb, state):
    out = 0
    for r0, r1, A in state.blocks(Xb):
        out = out + _adj(A, Rb[r0:r1])
    return out.reshape(1, -1)


def _k_gradient(Xb, yb, state, S, cS):
    r"""One chunk's :math:`A^*(y - A_S c_S)` and :math:`\|y - A_S c_S\|^2`.

    The operator is :math:`D_w (A - 1\bar a^T) D_s`; its centring, row
    weights and column scaling are applied to the vectors, not to the
    chunk's features: :math:`A_S c_S` is :math:`D_w(A_{:,S} d - 1\,\bar a_S^T d)`
    with :math:`d = D_s c_S`, and the product is
    :math:`D_s(A^* D_w r - \bar a^* \sum_i (D_w r)_i)`.  So the pass costs the
    raw features and one product, like the in-memory operator's
    :meth:`~rflite.features.FeatureOperator.rmatvec`, instead of up to three
    more sweeps over every feature entry (:meth:`_State.features`).
    """
    mean, scale, sw = state.mean, state.scale, state.sw
    raw = _State(state.fmap, None, None, state.n_threads)
    d = cS if scale is None else cS * scale[S]
    off = 0.0 if mean is None or not S.size else mean[S] @ d
    g, rr, total = 0, 0.0, 0.0
    for r0, r1, A in raw.blocks(Xb):
        r = yb[r0:r1, 0].copy()
        if S.size:
            f = A[:, S] @ d - off
            if sw is not None:
                f *= sw[r0:r1]
            r = r - f
        rw = r if sw is None else r * sw[r0:r1]
        g = g + _adj(A, rw)
        total = total + rw.sum()
        rr += np.vdot(r, r).real
    if mean is not None:
        g = g - np.conj(mean) * total
    if scale is not None:
        g = g * scale
    return np.concatenate([np.ravel(g), [rr]]).reshape(1, -1)


def _k_gram(Xb, yb, state, S, rows):
    B = state.features(Xb, S)
    Bt = B[:, rows]
    G = _adj(Bt, B)
    b = _adj(Bt, yb)
    return np.concatenate([G.ravel(), b.ravel()]).reshape(1, -1)


def _k_full_gram(Xb, yb, state):
    G = b = None
    for r0, r1, A in state.blocks(Xb):
        if G is None:
            G, b = _adj(A, A), _adj(A, yb[r0:r1])
        else:
            G += _adj(A, A)
            b += _adj(A, yb[r0:r1])
    return np.concatenate([G.ravel(), b.ravel()]).reshape(1, -1)


def _k_residual(Xb, yb, state, S, cS):
    B = state.features(Xb, S)
    r = yb[:, 0] - B @ cS
    return np.array([[np.vdot(r, r).real]])


def _k_sq_norms(Xb, state):
    sq = 0
    for _, _, A in state.blocks(Xb):
        sq = sq + np.einsum("ij,ij->j", A.real, A.real)
        if np.iscomplexobj(A):
            sq = sq + np.einsum("ij,ij->j", A.imag, A.imag)
    return sq.reshape(1, -1)


def _k_weighted(Xb, Wb, *rest, kernel, **kwargs):
    r"""``kernel`` on a chunk whose feature rows are scaled by :math:`\sqrt{w}` (weighted fits)."""
    *arrays, state = rest
    sw = np.sqrt(np.asarray(Wb, dtype=np.float64)[:, 0])
    return kernel(Xb, *arrays, state.with_rows(sw), **kwargs)


def _k_predict(Xb, state, S, C, intercept, real):
    # predict's X is checked chunk by chunk as the chunk is computed (the
    # in-memory predict refuses NaN / inf up front; a lazy one cannot)
    if not np.isfinite(Xb).all():
        raise ValueError("X contains NaN or infinite values (in a row chunk of the Dask X "
                         "given to predict)")
    B = state.features(Xb, S)
    out = B @ C + intercept
    return out.real if real and np.iscomplexobj(out) else out


class DaskFeatureOperator:
    r"""Distributed matrix-free feature matrix :math:`(A - 1\bar a^T)\,\mathrm{diag}(s)`.

    The interface of :class:`rflite.features.FeatureOperator` (``shape``,
    ``dtype``, ``matvec``, ``rmatvec``, ``columns``, ``column_norms``) plus
    the reductions a solver needs per iteration (:meth:`gradient`,
    :meth:`gram`, :meth:`residual_norm`), each one distributed pass over the
    row chunks of ``X``; see the module notes for where results live.

    Parameters
    ----------
    fmap : FeatureMap
    X : (m, d) dask.array.Array
        Chunked along rows only (each chunk holds all d columns), with known
        chunk sizes.  ``X`` is used as given: persist it first
        (``X = X.persist()``) if it fits in the cluster's memory and comes
        from slow storage, since every pass reads it again.
    col_mean : (n_columns,) array, optional
        Column means :math:`\bar a` subtracted from every row (centring).
    col_scale : (n_columns,) array, optional
        Column scaling :math:`s` applied after the centring.
    row_weight : (m,) or (m, 1) array, optional
        Row weights :math:`w \ge 0` (NumPy, or Dask with ``X``'s row
        chunks): the reductions see the rows scaled by :math:`\sqrt{w}`
        after the centring, :math:`D(A - 1\bar a^T)\,\mathrm{diag}(s)` as
        :func:`rflite._core.linalg.center_and_weight` (zero weights are rows
        that count for nothing: a cross-validation fold's training rows are
        its 0/1 weights).  ``matvec``, ``columns`` and predictions are
        unweighted.
    split_every : int, default :data:`SPLIT_EVERY`
        Fan-in of the tree sums.
    """

    #: Marks an operator over the rows of a Dask array (:mod:`rflite._core.backend`).
    is_distributed = True

    def __init__(self, fmap, X, *, col_mean=None, col_scale=None, row_weight=None,
                 split_every=SPLIT_EVERY):
        if not is_dask_array(X):
            raise ValueError(f"X must be a dask.array.Array, got {type(X).__name__}")
        self.X = check_dask_X(X)
        if X.shape[1] != fmap.n_inputs:
            raise ValueError(f"X has {X.shape[1]} features, but the FeatureMap is expecting "
                             f"{fmap.n_inputs} features as input")
        n = fmap.n_columns
        for name, v in (("col_mean", col_mean), ("col_scale", col_scale)):
            if v is not None and np.shape(v) != (n,):
                raise ValueError(f"{name} must have shape ({n},), got {np.shape(v)}")
        self.fmap = fmap
        self.col_mean = None if col_mean is None else np.asarray(col_mean)
        self.col_scale = None if col_scale is None else np.asarray(col_scale, dtype=np.float64)
        self.split_every = check_int(split_every, "split_every", minimum=2)
        self.W = None if row_weight is None else check_dask_y(row_weight, X, "row_weight")[0]
        self.shape = (int(X.shape[0]), n)
        self.dtype = np.dtype(np.complex128 if fmap.is_complex else np.float64)
        self._state = None
        self.n_passes = 0
        self.pass_seconds = []

    # -- plumbing ------------------------------------------------------------
    def _state_node(self):
        """The broadcast :class:`_State` (sent once per operator and scheduler)."""
        client = _client()
        if self._state is None or self._state[1] is not client:
            state = _State(self.fmap, self.col_mean, self.col_scale, _n_threads())
            self._state = _broadcast(state)
        return self._state[0]

    def _as_rows(self, v, name):
        """A length-m (or m x k) vector as a 2-d Dask array with X's row chunks."""
        Y, _ = check_dask_y(v, self.X, name)
        return Y

    def _reduce(self, kernel, arrays, length, dtype, **kwargs):
        """Map ``kernel`` over the row chunks and tree-sum its (1, length) rows."""
        import dask.array as da

        nb = self.X.numblocks[0]
        name = kernel.__name__
        if self.W is not None:
            arrays = [self.W, *arrays]
            kwargs = dict(kwargs, kernel=kernel)
            kernel = _k_weighted
        out = da.map_blocks(
            kernel, self.X, *arrays, self._state_node(), **kwargs,
            chunks=((1,) * nb, (length,)), dtype=dtype, meta=np.empty((0, 0), dtype),
            token=f"rflite-{name.strip('_')}")
        t0 = time.perf_counter()
        total = out.sum(axis=0, split_every=self.split_every).compute()
        seconds = time.perf_counter() - t0
        self.pass_seconds.append((name[3:], seconds))
        self.n_passes += 1
        progress = _PROGRESS.get()
        if progress:
            progress.passes += 1
            progress.line(f"pass {progress.passes}: {name[3:]}, {nb} chunks, {seconds:.1f} s")
        return np.asarray(total)

    # -- products --------------------------------------------------------------
    def rmatvec(self, r) -> np.ndarray:
        r""":math:`A^* r` (N,) on the client; ``r`` of length m (Dask with X's chunks, or NumPy)."""
        out = self.rmatmat(r)
        return out[:, 0] if np.ndim(r) == 1 else out

    def rmatmat(self, R):
        """:math:`A^* R` (N x k) on the client."""
        R2 = self._as_rows(R, "R")
        dtype = np.result_type(self.dtype, R2.dtype)
        return self._reduce(_k_rmat, [R2], self.shape[1] * R2.shape[1], dtype).reshape(
            self.shape[1], -1)

    def matvec(self, c):
        """:math:`A c` as a lazy Dask array of length m with X's row chunks."""
        c = np.asarray(c)
        if c.shape != (self.shape[1],):
            raise ValueError(f"c must have shape ({self.shape[1]},), got {c.shape}")
        S = np.flatnonzero(c)
        return self._lazy(S, c[S].reshape(-1, 1), 0.0, False)[:, 0]

    def columns(self, S):
        """``A[:, S]`` as a lazy Dask array (m x len(S)), row-chunked like X."""
        S = self.fmap._check_columns(S)
        return self._map_rows(_k_columns, S.size, self.dtype, "rflite-columns", S=S)

    def _lazy(self, S, C, intercept, real):
        dtype = np.result_type(self.dtype, C.dtype)
        if real:
            dtype = np.empty(0, dtype).real.dtype
        return self._map_rows(_k_predict, C.shape[1], dtype, "rflite-predict", S=S, C=C,
                              intercept=intercept, real=real)

    def _map_rows(self, kernel, n_cols, dtype, token, **kwargs):
        """``kernel`` per row chunk into a lazy (m, n_cols) array; weighted rows
        (``row_weight``) as in :meth:`_reduce`, so that ``A c`` and ``A[:, S]``
        are the rows of the same matrix as ``A^* r`` (they were unweighted)."""
        import dask.array as da

        arrays = [self.X]
        if self.W is not None:
            arrays.append(self.W)
            kwargs = dict(kwargs, kernel=kernel)
            kernel = _k_weighted
        return da.map_blocks(
            kernel, *arrays, self._state_node(), **kwargs,
            chunks=(self.X.chunks[0], (n_cols,)), dtype=dtype, meta=np.empty((0, 0), dtype),
            token=token)

    # -- reductions ------------------------------------------------------------
    def column_norms(self) -> np.ndarray:
        """Euclidean norm of every column (N,), one pass."""
        return np.sqrt(self._reduce(_k_sq_norms, [], self.shape[1], np.float64))

    def gradient(self, y, S, cS):
        r"""One pass: :math:`g = A^*(y - A_S c_S)` and :math:`\|y - A_S c_S\|^2`.

        The residual is formed inside each chunk from that chunk's features,
        so the pass costs one feature evaluation, like :meth:`rmatvec`.
        """
        Y = self._as_rows(y, "y")
        S = np.asarray(S, dtype=np.int64)
        cS = np.asarray(cS)
        dtype = np.result_type(self.dtype, Y.dtype, cS.dtype)
        out = self._reduce(_k_gradient, [Y], self.shape[1] + 1, dtype, S=S, cS=cS)
        return out[:-1], float(out[-1].real)

    def gram(self, S, y=None, *, rows=None):
        r""":math:`A_T^* A_S` (len(T) x len(S)) and :math:`A_T^* y`, one pass over ``S``'s columns.

        ``rows`` are positions in ``S`` giving the row subset ``T`` (default
        all of ``S``: the Gram of the column subset).  Only ``len(S)``
        columns are evaluated per chunk.
        """
        S = self.fmap._check_columns(S)
        rows = np.arange(S.size) if rows is None else np.asarray(rows, dtype=np.int64)
        if y is None:
            Y = self._as_rows(np.zeros(self.shape[0]), "y")
        else:
            Y = self._as_rows(y, "y")
        k = Y.shape[1]
        dtype = np.result_type(self.dtype, Y.dtype)
        out = self._reduce(_k_gram, [Y], rows.size * S.size + rows.size * k, dtype,
                           S=S, rows=rows)
        G = out[: rows.size * S.size].reshape(rows.size, S.size)
        b = out[rows.size * S.size:].reshape(rows.size, k)
        if y is None:
            return G
        return G, (b[:, 0] if np.ndim(y) == 1 else b)

    def full_gram(self, Y):
        r""":math:`A^* A` (N x N) and :math:`A^* Y` (N x k), one pass (ridge)."""
        Y = self._as_rows(Y, "y")
        n, k = self.shape[1], Y.shape[1]
        dtype = np.result_type(self.dtype, Y.dtype)
        out = self._reduce(_k_full_gram, [Y], n * n + n * k, dtype)
        return out[: n * n].reshape(n, n), out[n * n:].reshape(n, k)

    def residual_norm(self, y, S, cS) -> float:
        r""":math:`\|y - A_S c_S\|_2`, one pass over the ``S`` columns."""
        Y = self._as_rows(y, "y")
        S = np.asarray(S, dtype=np.int64)
        return math.sqrt(float(self._reduce(_k_residual, [Y], 1, np.float64, S=S,
                                            cS=np.asarray(cS))[0]))


def _k_columns(Xb, state, S):
    return state.features(Xb, S)
