r"""Fits on data that lives in a Dask array, on a Dask cluster (issue 16).

For ``X`` a row-chunked :class:`dask.array.Array` (m x d, every chunk holding
all d columns) the feature matrix :math:`A = \sigma(X W^T + b)` (m x N) is
never formed anywhere.  :class:`DaskFeatureOperator` evaluates it chunk by
chunk on the workers with the numba kernels of :mod:`rflite.features` (the
small :class:`~rflite.features.FeatureMap` is sent to every worker once) and
returns only reductions over the rows, summed by Dask's tree reduction
(``dask.array.sum(..., split_every=SPLIT_EVERY)``):

=========================  ===============================  ==================
operation                  result                           lives on
=========================  ===============================  ==================
``op.rmatvec(r)``          :math:`A^* r`, (N,)              client (NumPy)
``op.gradient(y, S, c)``   :math:`A^*(y - A_S c)`,          client
                           :math:`\|y - A_S c\|^2`
``op.gram(S, y, rows=T)``  :math:`A_T^* A_S`, :math:`A_T^*y`  client
``op.column_norms()``      :math:`\|a_j\|`, (N,)            client
``op.matvec(c)``           :math:`A c`, (m,)                cluster (lazy Dask)
``op.columns(S)``          :math:`A_S`, (m, s)              cluster (lazy Dask)
=========================  ===============================  ==================

Per worker a task holds one chunk of features, ``chunk_rows x N`` numbers;
length-m vectors (``y``, residuals, predictions) stay Dask arrays with the
row chunks of ``X``; length-N vectors and s x s systems live on the client.

Solvers
-------
* :func:`harfe_dask` -- HARFE (Saha, Schaeffer and Tran 2023, Algorithm 1)
  with one distributed pass per iteration for the gradient
  :math:`A^*(y - A_S c_S)` (the residual is formed inside the chunk) and one
  cheaper pass over the s support columns for the Gram rows of the columns
  that entered the support, :math:`A_{in}^* A_{S'}` and :math:`A_{in}^* y`.
  The s x s ridge system is solved on the client by
  :func:`rflite._numerics.ridge_solve` (fresh Cholesky each iteration).
* :func:`fit_harfe` / :func:`fit_ridge` -- the estimators'
  ``fit`` on Dask input, with the same centring and column normalisation as
  the in-memory path (column means from the first pass, centred norms or
  the centred Gram from the second).
* :func:`fit_shrimp` -- SHRIMP (Xie, Shi, Schaeffer and Ward 2022) for
  m >> N: one distributed TSQR of the centred ``[A, y]`` (training and
  validation rows apart) and the whole pruning path on the client from the
  small triangular factors, a least-squares path, with no further pass
  except the refit's TSQR over the kept columns.
* :func:`as_linear_operator` -- a SciPy ``LinearOperator`` view for BPDN /
  basis pursuit / SRFE (:mod:`rflite.bp`): ``A^* r`` distributed, ``A c``
  and support columns computed to the client (m-length vectors).
* :func:`predict` -- lazy predictions by ``map_blocks`` (a Dask array) for
  every estimator whose prediction is ``A(X)_{:, S} c_S + c_0``.

The Dask fits set ``dask_passes_`` (a list of ``(kind, seconds)``, one
per distributed pass) and ``dask_fit_seconds_`` on the estimator.

Self-tuning defaults
--------------------
The default estimators choose their regularisation from the data on Dask
input too, in the spirit of the in-memory choice:

* ``RandomFeatureRidge(lam="auto")`` (and ``RandomFeatureRidgeCV`` with
  ``cv=None``): 5-fold validation over the same grid with the same rule, from
  *one* extra pass of per-fold sufficient statistics (:func:`choose_ridge_lam`).
* ``HARFERegressor(s="auto", lam="auto")``: the in-memory grid (s as
  fractions of m, shifts / m), scored on a hold-out fifth of the rows,
  warm-started along the grid, one validation pass for the whole grid per
  fold (:func:`choose_harfe`); ``HARFECV`` with ``cv=None`` uses all five
  folds.  About 2 passes per HARFE iteration per grid point: pin ``s`` and
  ``lam`` for large m.
* ``SHRIMPRegressor``: ``n_features=None`` is resolved by the in-memory rule
  (on the m rows; in memory on the distinct rows), and the guarded
  ``refit="auto"`` / ``"ridge"`` choice runs on the TSQR factors
  (:func:`fit_shrimp`).

The folds are not the in-memory ones: :func:`rflite.ridge.row_folds` needs a
global ``unique`` over the m rows, so on Dask each row's fold is a hash of
its values (:class:`_RowSplit`: equal rows share a fold, independent of the
chunking and the row order).  With those folds passed to the in-memory CV
estimator the choices are identical (tests).  SHRIMP's split is the
in-memory one when the rows are distinct and sorted (the in-memory fit
sorts its distinct rows first; on Dask the client draws a permutation of
the m rows).  ``cv`` other than None is refused with a ``ValueError``, as
is ``lam="auto"`` with complex features (``activation="exp"``).

Not done: ``sample_weight`` with Dask input (refused with a ``ValueError``),
ARFF's Metropolis fit, GFC's fit and the SHRIMPCV / other CV estimators on
Dask arrays (their *predictions* are lazy).

Accuracy
--------
The chunk kernels compute every feature entry exactly as the in-memory path
does (same kernel, same centring and scaling operations); only the order of
the sums over rows differs (per-chunk BLAS products, then a fixed tree).  So
results agree with the in-memory fit to rounding: supports identical and
coefficients to about 1e-12 relative on well-conditioned problems (tests
check 1e-10).  The graph, hence the result, does not depend on the number
of workers or on which worker computes which task; different chunkings sum
in a different order (agreement again to rounding).

Dask is imported only here, and only when a Dask object is passed:
``import rflite`` never imports it.
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np

from rflite._numerics import MAX_ABS, check_bool, check_int, check_real, ridge_fit, ridge_solve

__all__ = [
    "DaskFeatureOperator",
    "is_dask_array",
    "harfe_dask",
    "fit_harfe",
    "fit_ridge",
    "predict",
    "as_linear_operator",
    "fit_shrimp",
    "SPLIT_EVERY",
    "choose_ridge_lam",
    "choose_harfe",
]

#: Fan-in of the tree sums over chunks (partial sums combined per task).
SPLIT_EVERY = 8


def is_dask_array(x) -> bool:
    """Whether ``x`` is a :class:`dask.array.Array` (without importing Dask)."""
    mod = sys.modules.get("dask.array")
    return mod is not None and isinstance(x, mod.Array)


# ------------------------------------------------------------------ validation
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
        from rflite._numerics import check_array

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


# ----------------------------------------------------------- cluster plumbing
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


def _n_threads():
    """Threads per chunk kernel: all cores on the synchronous scheduler, else 1.

    Dask's threaded scheduler and ``distributed`` workers already run one
    task per core; nested feature-kernel threads would oversubscribe.
    """
    from dask.base import get_scheduler
    import dask.local

    return None if get_scheduler() is dask.local.get_sync else 1


class _State:
    """What every chunk task needs: the map and the (optional) centring and scaling."""

    def __init__(self, fmap, mean, scale, n_threads):
        self.fmap = fmap
        self.mean = mean
        self.scale = scale
        self.n_threads = n_threads

    def features(self, Xb, cols=None):
        """Features of one chunk (all columns, or ``cols``), centred and scaled."""
        fmap = self.fmap
        Xb = np.ascontiguousarray(Xb, dtype=np.float64)
        if cols is None:
            out = fmap._check_out(None, Xb.shape[0], fmap.n_columns, np.float64)
            fmap._fill(Xb, None, out, self.n_threads)
        else:
            out = fmap._check_out(None, Xb.shape[0], cols.size, np.float64)
            fmap._fill(Xb, cols, out, self.n_threads)
        # the same in-place operations, in the same order, as the dense path
        # (RandomFeatureModel._center_and_weight then the column scaling)
        if self.mean is not None:
            out -= self.mean if cols is None else self.mean[cols]
        if self.scale is not None:
            out *= self.scale if cols is None else self.scale[cols]
        return out


# ------------------------------------------------------------ chunk kernels
# Each returns a (1, L) array: one row of partial sums per chunk, summed by
# the tree reduction.  Module level, so that workers unpickle them by name.
def _adj(A, R):
    """:math:`A^* R` without a conjugated copy of a real ``A``."""
    if np.iscomplexobj(A):
        return A.conj().T @ R
    if np.iscomplexobj(R):
        return A.T @ R.real + 1j * (A.T @ R.imag)
    return A.T @ R


def _k_rmat(Xb, Rb, state):
    return _adj(state.features(Xb), Rb).reshape(1, -1)


def _k_gradient(Xb, yb, state, S, cS):
    A = state.features(Xb)
    r = yb[:, 0] - A[:, S] @ cS if S.size else yb[:, 0].copy()
    g = _adj(A, r)
    rr = np.vdot(r, r).real
    return np.concatenate([g, [rr]]).reshape(1, -1)


def _k_gram(Xb, yb, state, S, rows):
    B = state.features(Xb, S)
    Bt = B[:, rows]
    G = _adj(Bt, B)
    b = _adj(Bt, yb)
    return np.concatenate([G.ravel(), b.ravel()]).reshape(1, -1)


def _k_full_gram(Xb, yb, state):
    A = state.features(Xb)
    G = _adj(A, A)
    b = _adj(A, yb)
    return np.concatenate([G.ravel(), b.ravel()]).reshape(1, -1)


def _k_residual(Xb, yb, state, S, cS):
    B = state.features(Xb, S)
    r = yb[:, 0] - B @ cS
    return np.array([[np.vdot(r, r).real]])


def _k_sq_norms(Xb, state):
    A = state.features(Xb)
    sq = np.einsum("ij,ij->j", A.real, A.real)
    if np.iscomplexobj(A):
        sq += np.einsum("ij,ij->j", A.imag, A.imag)
    return sq.reshape(1, -1)


def _k_first(Xb, Yb, state, with_features, block_info=None):
    """Validation of a chunk of X and y, plus column sums and y sums (first pass).

    Returns ``[bad_X, bad_y, sum_y (k), sum |y|^2 (k), column sums (N)]``.
    Non-finite or too large entries are counted rather than raised here, so
    that the client raises one clear ``ValueError`` naming the argument and
    the rows.
    """
    Xf = np.asarray(Xb, dtype=np.float64)
    if not np.iscomplexobj(Yb):
        Yb = np.asarray(Yb, dtype=np.float64)
    bad_x = float(np.count_nonzero(~(np.abs(Xf) <= MAX_ABS)))
    bad_y = float(np.count_nonzero(~(np.abs(Yb) <= MAX_ABS)))
    sums = Yb.sum(axis=0)
    sq = np.einsum("ij,ij->j", Yb.real, Yb.real)
    if np.iscomplexobj(Yb):
        sq = sq + np.einsum("ij,ij->j", Yb.imag, Yb.imag)
    dtype = np.result_type(Yb.dtype, state.fmap.is_complex and np.complex128 or np.float64)
    parts = [np.array([bad_x, bad_y]), sums, sq]
    if with_features:
        if bad_x:
            col = np.zeros(state.fmap.n_columns, dtype=dtype)
        else:
            col = state.features(Xf).sum(axis=0)
        parts.append(col)
    return np.concatenate([p.astype(dtype) for p in parts]).reshape(1, -1)


def _k_predict(Xb, state, S, C, intercept, real):
    B = state.features(Xb, S)
    out = B @ C + intercept
    return out.real if real and np.iscomplexobj(out) else out


# ------------------------------------------------------------------ operator
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
    split_every : int, default :data:`SPLIT_EVERY`
        Fan-in of the tree sums.
    """

    def __init__(self, fmap, X, *, col_mean=None, col_scale=None, split_every=SPLIT_EVERY):
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
        out = da.map_blocks(
            kernel, self.X, *arrays, self._state_node(), **kwargs,
            chunks=((1,) * nb, (length,)), dtype=dtype, meta=np.empty((0, 0), dtype),
            token=f"rflite-{kernel.__name__.strip('_')}")
        t0 = time.perf_counter()
        total = out.sum(axis=0, split_every=self.split_every).compute()
        self.pass_seconds.append((kernel.__name__[3:], time.perf_counter() - t0))
        self.n_passes += 1
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
        import dask.array as da

        S = self.fmap._check_columns(S)
        return da.map_blocks(
            _k_columns, self.X, self._state_node(), S=S,
            chunks=(self.X.chunks[0], (S.size,)), dtype=self.dtype,
            meta=np.empty((0, 0), self.dtype),
            token="rflite-columns")

    def _lazy(self, S, C, intercept, real):
        import dask.array as da

        dtype = np.result_type(self.dtype, C.dtype)
        if real:
            dtype = np.empty(0, dtype).real.dtype
        return da.map_blocks(
            _k_predict, self.X, self._state_node(), S=S, C=C, intercept=intercept, real=real,
            chunks=(self.X.chunks[0], (C.shape[1],)), dtype=dtype, meta=np.empty((0, 0), dtype),
            token="rflite-predict")

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


def as_linear_operator(op):
    r"""A :class:`scipy.sparse.linalg.LinearOperator` view of a :class:`DaskFeatureOperator`.

    For solvers written against NumPy products (:func:`rflite.bp.bpdn`,
    :func:`rflite.bp.basis_pursuit`, :func:`rflite.bp.srfe`): ``A^* r`` is
    one distributed pass returning N numbers, but ``A c`` and
    ``columns(S)`` are *computed* into the client's memory (m and m x |S|
    numbers), so this suits m up to what the client holds as a few
    vectors, not the m = 10^8 of :func:`harfe_dask`.  Every product is one
    pass over the data.
    """
    from scipy.sparse.linalg import LinearOperator

    class _Client(LinearOperator):
        def __init__(self):
            super().__init__(op.dtype, op.shape)

        def _matvec(self, c):
            return np.asarray(op.matvec(np.ravel(c)).compute())

        def _rmatvec(self, r):
            return op.rmatvec(np.ravel(r))

        def columns(self, idx):
            return np.asarray(op.columns(idx).compute())

        def column_norms(self):
            return op.column_norms()

    return _Client()


def _k_columns(Xb, state, S):
    return state.features(Xb, S)


# --------------------------------------------------------------------- HARFE
def harfe_dask(op, y, *, s, lam, mu, max_iter, tol, c0=None):
    r"""HARFE (Algorithm 1) on a :class:`DaskFeatureOperator`: the iterates of :func:`rflite.htp.harfe`.

    Per iteration one full pass, :meth:`DaskFeatureOperator.gradient`, gives
    :math:`A^*(y - A_S c_S)` and the residual of the current iterate (so the
    ``tol`` test of iteration n is made at the start of iteration n + 1,
    with the same outcome), and one pass over the s support columns,
    :meth:`DaskFeatureOperator.gram` restricted to the rows of the columns
    that entered the support, updates the s x s Gram matrix kept on the
    client; :func:`rflite._numerics.ridge_solve` then solves
    :math:`(G + m\lambda I) z = A_S^* y` there.  A run that ends by
    ``max_iter`` takes one more pass over the support columns for the last
    residual.  Arguments and result as :func:`rflite.htp.harfe`.
    """
    from rflite.htp import HTPResult, _check_shift, top_s

    m, n = op.shape
    Y, one_d = check_dask_y(y, op.X)
    if not one_d and Y.shape[1] != 1:
        raise ValueError(f"y must have 1 dimension, got shape {y.shape}")
    s = check_int(s, "s", minimum=1, maximum=n)
    lam = check_real(lam, "lam", minimum=0.0)
    mu = check_real(mu, "mu", minimum=0.0, strict=True)
    _check_shift(m, lam, mu)
    max_iter = check_int(max_iter, "max_iter", minimum=1)
    tol = check_real(tol, "tol", minimum=0.0)
    dtype = np.result_type(op.dtype, Y.dtype, np.float64)
    c = np.zeros(n, dtype=dtype)
    if c0 is not None:
        from rflite._numerics import check_array

        c0 = check_array(c0, "c0", ndim=1, allow_complex=True)
        if c0.shape[0] != n:
            raise ValueError(f"c0 must have length N={n}, got {c0.shape[0]}")
        dtype = np.result_type(dtype, c0.dtype)
        c = c0.astype(dtype, copy=True)
    y_sq = float(_y_stats(Y)[1][0])
    if not np.isfinite(y_sq):
        raise ValueError("y contains NaN or infinite values")
    y_norm = math.sqrt(y_sq)
    if y_norm == 0.0:
        return HTPResult(np.zeros(n, dtype=dtype), np.zeros(0, dtype=np.int64), 0, True,
                         "zero_target", np.zeros(0))
    shift = m * lam
    step = 1.0 - mu * shift
    support = np.flatnonzero(c)
    gram = _GramCache()
    solved = False
    residuals = []
    reason = "max_iter"
    for _ in range(max_iter):
        g, rr = op.gradient(Y, support, c[support])
        if solved:
            residuals.append(math.sqrt(max(rr, 0.0)) / y_norm)
            if residuals[-1] <= tol:
                reason = "tol"
                break
        g = g * mu
        if support.size:
            g[support] += step * c[support]
        a = np.abs(g)
        if not np.all(np.isfinite(a)):
            raise ValueError("A contains NaN or infinite values (A^*(y - A c) is not finite)")
        new = top_s(a, s)
        if solved and np.array_equal(new, support):
            residuals.append(residuals[-1])
            reason = "fixed_point"
            break
        G, b = gram.move(op, Y, new)
        z = ridge_solve(G, b, shift)
        c[support] = 0
        c[new] = z
        support = new
        solved = True
    else:
        residuals.append(op.residual_norm(Y, support, c[support]) / y_norm)
        if residuals[-1] <= tol:
            reason = "tol"
    return HTPResult(c, support, len(residuals), reason != "max_iter", reason,
                     np.asarray(residuals))


class _GramCache:
    r"""The Gram matrix :math:`A_S^* A_S` and :math:`A_S^* y` of the current support.

    Moving to a new support computes only the rows of the entering columns,
    :math:`A_{in}^* A_{S'}` (k x s), in one pass over the s new support
    columns; the rows and columns of the kept ones are copied.
    """

    def __init__(self):
        self.S = np.zeros(0, dtype=np.int64)
        self.G = None
        self.b = None

    def move(self, op, Y, new):
        pos_in = np.flatnonzero(~np.isin(new, self.S))
        if pos_in.size == 0 and self.G is not None and new.size == self.S.size:
            return self.G, self.b
        G_in, b_in = op.gram(new, Y, rows=pos_in)
        dtype = np.result_type(G_in.dtype, b_in.dtype)
        s = new.size
        G = np.empty((s, s), dtype=dtype)
        b = np.empty(s, dtype=dtype)
        keep_new = np.flatnonzero(np.isin(new, self.S))
        if keep_new.size:
            old_pos = np.searchsorted(self.S, new[keep_new])
            G[np.ix_(keep_new, keep_new)] = self.G[np.ix_(old_pos, old_pos)]
            b[keep_new] = self.b[old_pos]
        G[:, pos_in] = G_in.conj().T
        G[pos_in, :] = G_in
        b[pos_in] = b_in[:, 0]
        self.S, self.G, self.b = new, G, b
        return G, b


def _y_stats(Y):
    """Sums and squared norms of the columns of a Dask ``Y`` (one pass over ``Y``)."""
    import dask

    sq = (abs(Y) ** 2).sum(axis=0) if np.iscomplexobj(np.empty(0, Y.dtype)) else \
        (Y * Y).sum(axis=0)
    s, q = dask.compute(Y.sum(axis=0), sq)
    return np.asarray(s), np.asarray(q)


# ---------------------------------------------------------------- estimators
def _first_pass(fmap, X, Y, with_features):
    """Validate X and y (NaN / inf / too large) and get the means, in one pass.

    Returns ``(y_mean (k,), col_mean (N,) or None)``; raises ``ValueError``
    naming ``X`` or ``y``.
    """
    op = DaskFeatureOperator(fmap, X)
    k, n = Y.shape[1], fmap.n_columns
    length = 2 + 2 * k + (n if with_features else 0)
    dtype = np.result_type(Y.dtype, np.complex128 if fmap.is_complex else np.float64)
    out = op._reduce(_k_first, [Y], length, dtype, with_features=with_features)
    if out[0].real:
        raise ValueError(f"X contains NaN, infinity or a value too large (|x| > {MAX_ABS:g}) "
                         f"in {int(out[0].real)} entries")
    if out[1].real:
        raise ValueError(f"y contains NaN, infinity or a value too large (|y| > {MAX_ABS:g}) "
                         f"in {int(out[1].real)} entries")
    m = X.shape[0]
    y_mean = out[2:2 + k] / m
    if not np.iscomplexobj(Y.dtype.type(0)):
        y_mean = y_mean.real
    col_mean = out[2 + 2 * k:] / m if with_features else None
    if col_mean is not None and not fmap.is_complex:
        col_mean = col_mean.real
    return y_mean, col_mean, op


def _prepare(est, X, y, sample_weight):
    """Checks common to the Dask fits; returns ``(X, Y, one_d)``."""
    check_dask_X(X)
    if sample_weight is not None:
        raise ValueError("sample_weight is not supported for Dask input (pass "
                         "sample_weight=None, or fit in memory)")
    Y, one_d = check_dask_y(y, X)
    if np.dtype(Y.dtype).kind == "c":
        raise ValueError(f"y must be real (Complex data not supported), got dtype {Y.dtype}")
    est.n_features_in_ = int(X.shape[1])
    if hasattr(est, "feature_names_in_"):
        del est.feature_names_in_
    est._one_d = one_d
    return X, Y, one_d


def fit_harfe(est, X, y, sample_weight=None):
    """:meth:`rflite.htp.HARFERegressor.fit` on a Dask ``X`` (and ``y``).

    The in-memory fit's steps, distributed: one pass validates ``X`` and
    ``y`` and gives the column means and ``y``'s mean (``fit_intercept``),
    one gives the centred column norms (``normalize``), then
    :func:`harfe_dask` per output.  ``matrix_free`` is irrelevant (Dask
    fits are always matrix-free) and ``sample_weight`` is refused.  With
    ``s`` / ``lam`` ``"auto"`` (the defaults, or :class:`rflite.htp.HARFECV`
    with ``cv=None``) they are first chosen by :func:`choose_harfe`; ``s_``,
    ``lam_`` and ``cv_results_`` are set as in memory.
    """
    from rflite.htp import _check_shift

    X, Y, one_d = _prepare(est, X, y, sample_weight)
    m = X.shape[0]
    n_features = check_int(est.n_features, "n_features", minimum=1)
    n_columns = n_features * (2 if est.activation == "fourier" else 1)
    search = est._search()
    est._check_s_lam(n_columns, m, search)
    check_real(est.mu, "mu", minimum=0.0, strict=True)
    check_int(est.max_iter, "max_iter", minimum=1)
    check_real(est.tol, "tol", minimum=0.0)
    normalize = check_bool(est.normalize, "normalize")
    check_bool(est.matrix_free, "matrix_free")
    fit_intercept = check_bool(est.fit_intercept, "fit_intercept")
    if search is not None:
        if getattr(est, "cv", None) is not None:
            raise ValueError(f"cv={est.cv!r} is not supported for Dask input (the folds are "
                             "the rows' hash labels); pass cv=None")
        points, _, lams = est._grid_points(search, m, n_columns)
        rule = est._rule()
        for lam0 in lams[:1]:
            _check_shift(m, lam0, est.mu)
    rng = est._rng()
    fmap = est._draw_features(X.shape[1], rng)
    t0 = time.perf_counter()
    # validation (NaN / inf named) before anything else, then the means of all rows
    y_mean, a_mean, first = _first_pass(fmap, X, Y, fit_intercept)
    passes = []
    if search is not None:
        # HARFECV: every label is a validation fold; HARFERegressor: label 0 (a fifth)
        folds = list(range(5)) if hasattr(est, "cv") else [0]
        s, lam, passes = choose_harfe(est, fmap, X, Y, rng, points, rule, fit_intercept,
                                      normalize, 5, folds)
    else:
        s, lam = int(est.s), float(est.lam)
        if hasattr(est, "cv_results_"):
            del est.cv_results_
    est.s_, est.lam_ = s, lam
    _check_shift(m, lam, est.mu)
    if not fit_intercept:
        y_mean = np.zeros(Y.shape[1])
    scale = np.ones(fmap.n_columns)
    passes = first.pass_seconds + passes
    if normalize:
        op0 = DaskFeatureOperator(fmap, X, col_mean=a_mean)
        norms = op0.column_norms()
        passes += op0.pass_seconds
        nz = norms > 0
        scale[nz] = 1.0 / norms[nz]
    op = DaskFeatureOperator(fmap, X, col_mean=a_mean, col_scale=scale)
    Yc = Y - y_mean if fit_intercept else Y
    supports, coefs, results = [], [], []
    for k in range(Y.shape[1]):
        res = harfe_dask(op, Yc[:, k], s=s, lam=lam, mu=est.mu, max_iter=est.max_iter,
                         tol=est.tol)
        results.append(res)
        supports.append(res.support)
        coefs.append(res.coef[res.support] * scale[res.support])
    passes += op.pass_seconds
    est.n_iter_ = results[0].n_iter if one_d else [r.n_iter for r in results]
    est.converged_ = results[0].converged if one_d else [r.converged for r in results]
    est.stop_reason_ = results[0].stop_reason if one_d else [r.stop_reason for r in results]
    est.residuals_ = results[0].residuals if one_d else [r.residuals for r in results]
    est.dask_passes_ = passes
    est.dask_fit_seconds_ = time.perf_counter() - t0
    return est._finish(fmap, supports, coefs, a_mean, y_mean)


def fit_ridge(est, X, y, sample_weight=None):
    """:meth:`rflite.ridge.RandomFeatureRidge.fit` on a Dask ``X`` (and ``y``).

    One pass validates the data and gives the column means (``fit_intercept``);
    one more pass accumulates the centred Gram matrix :math:`A_c^* A_c`
    (N x N) and :math:`A_c^* Y_c` by tree sums, and the primal system
    :math:`(A_c^* A_c + m\\lambda I) C = A_c^* Y_c` is solved on the client
    (:func:`rflite._numerics.ridge_solve`).  Every task holds an N x N
    partial Gram matrix, so this suits N up to a few thousand.  ``lam="auto"``
    (the default; :class:`rflite.ridge.RandomFeatureRidgeCV` with ``cv=None``)
    first chooses ``lam_`` by :func:`choose_ridge_lam` (one more pass, five
    N x N partial Gram matrices per task).
    """
    from rflite.ridge import check_grid

    X, Y, one_d = _prepare(est, X, y, sample_weight)
    m = X.shape[0]
    check_int(est.n_features, "n_features", minimum=1)
    grid = est._grid()
    if grid is not None:
        grid = check_grid(grid, "lams")
        rule = est._rule()
        if est._cv() is not None:
            raise ValueError(f"cv={est._cv()!r} is not supported for Dask input (the folds "
                             "are the rows' hash labels); pass cv=None")
        lam = float(grid.max())
    else:
        lam = est._check_lam()
    if not np.isfinite(m * lam):
        raise ValueError(f"lam={lam:g} overflows float64 in the penalty m * lam "
                         f"(m={m:g}); lam must be far smaller")
    fit_intercept = check_bool(est.fit_intercept, "fit_intercept")
    rng = est._rng()
    fmap = est._draw_features(X.shape[1], rng)
    t0 = time.perf_counter()
    # validation (NaN / inf named) before anything else, then the means of all rows
    y_mean, a_mean, first = _first_pass(fmap, X, Y, fit_intercept)
    passes = []
    lams = [lam] * Y.shape[1]
    if grid is not None:
        lams, passes = choose_ridge_lam(est, fmap, X, Y, rng, grid, rule, fit_intercept)
    elif hasattr(est, "cv_results_"):
        del est.cv_results_
    est.lam_ = lams[0] if one_d else np.array(lams)
    if not fit_intercept:
        y_mean = np.zeros(Y.shape[1])
    op = DaskFeatureOperator(fmap, X, col_mean=a_mean)
    G, B = op.full_gram(Y - y_mean if fit_intercept else Y)
    # one Gram for every output; one solve per distinct lam
    C = np.column_stack([ridge_solve(G, B[:, [t]], m * lams[t]).ravel()
                         for t in range(B.shape[1])])
    est.dask_passes_ = first.pass_seconds + passes + op.pass_seconds
    est.dask_fit_seconds_ = time.perf_counter() - t0
    cols = np.arange(fmap.n_columns)
    return est._finish(fmap, [cols] * C.shape[1], list(C.T), a_mean, y_mean)


# ------------------------------------------------- automatic regularisation
class _RowSplit:
    r"""Fold labels of rows from a deterministic hash of their values (the ``"auto"`` choices).

    The in-memory choice deals the *distinct* rows of ``X`` to folds in a
    random order (:func:`rflite.ridge.row_folds`), which needs a global
    ``unique`` over all m rows.  On Dask every chunk labels its own rows:
    :math:`v_i = \langle x_i, g\rangle` with ``g`` standard normal (drawn from
    the estimator's stream right after the features, like ``row_folds``), and
    the label is a 64-bit hash (splitmix64) of the bits of :math:`v_i` mixed
    with a seed drawn from the same stream, modulo the number of folds.  As in
    memory, equal rows get equal labels (integer ``sample_weight`` would equal
    repeated rows) and the labels do not depend on the row order; unlike in
    memory they also do not depend on the chunking or on the other rows, and
    the folds are equal in size only on average (multinomial).  :meth:`labels`
    on a NumPy ``X`` gives the same labels, so an in-memory fit with these
    folds (:class:`rflite.ridge.RandomFeatureRidgeCV` or
    :class:`rflite.htp.HARFECV` with ``cv`` yielding them) reproduces the Dask
    choice.  The projection is summed column by column in a fixed order, so
    that a row's ``v`` is bitwise the same whatever chunk it lies in.
    """

    def __init__(self, rng, d, n_folds):
        self.g = rng.standard_normal(d)
        self.seed = np.uint64(rng.integers(0, 2**63, dtype=np.int64))
        self.n_folds = int(n_folds)

    def labels(self, Xb):
        Xb = np.asarray(Xb, dtype=np.float64)
        v = np.zeros(Xb.shape[0])
        for j in range(Xb.shape[1]):  # fixed order: independent of the chunking
            v += Xb[:, j] * self.g[j]
        v += 0.0  # -0.0 -> 0.0: equal values, equal bits
        with np.errstate(over="ignore"):
            h = v.view(np.uint64) ^ self.seed
            h = (h ^ (h >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            h = (h ^ (h >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            h = h ^ (h >> np.uint64(31))
        return (h % np.uint64(self.n_folds)).astype(np.int64)

    def splits(self, X):
        """``(train, test)`` index pairs of an in-memory ``X`` (empty folds skipped)."""
        lab = self.labels(X)
        out = []
        for f in range(self.n_folds):
            te, tr = np.flatnonzero(lab == f), np.flatnonzero(lab != f)
            if te.size and tr.size:
                out.append((tr, te))
        return out


class _MaskedState(_State):
    """A :class:`_State` whose features are zero on the rows of fold ``fold`` (training rows)."""

    def __init__(self, fmap, mean, scale, n_threads, split, fold):
        super().__init__(fmap, mean, scale, n_threads)
        self.split = split
        self.fold = fold

    def features(self, Xb, cols=None):
        out = super().features(Xb, cols)
        out[self.split.labels(Xb) == self.fold] = 0
        return out


class _MaskedOperator(DaskFeatureOperator):
    """The operator of the training rows of a fold: the other rows' features are zero."""

    def __init__(self, fmap, X, split, fold, **kwargs):
        super().__init__(fmap, X, **kwargs)
        self.split, self.fold = split, fold

    def _state_node(self):
        client = _client()
        if self._state is None or self._state[1] is not client:
            state = _MaskedState(self.fmap, self.col_mean, self.col_scale, _n_threads(),
                                 self.split, self.fold)
            self._state = _broadcast(state)
        return self._state[0]


def _k_fold_counts(Xb, Yb, state, split):
    """Per fold: row count, sums of y (k) and of y^2 (k); a (1, K (1 + 2k)) row."""
    lab = split.labels(Xb)
    Yb = np.asarray(Yb, dtype=np.float64)
    parts = []
    for f in range(split.n_folds):
        Yf = Yb[lab == f]
        parts += [[float(Yf.shape[0])], Yf.sum(axis=0), (Yf * Yf).sum(axis=0)]
    return np.concatenate(parts).reshape(1, -1)


def _k_fold_gram(Xb, Yb, state, split):
    """Per fold: count, column sums, y sums, y^2 sums, A^T A, A^T Y (uncentred features)."""
    lab = split.labels(Xb)
    A = state.features(Xb)
    Yb = np.asarray(Yb, dtype=np.float64)
    parts = []
    for f in range(split.n_folds):
        r = lab == f
        Af, Yf = A[r], Yb[r]
        parts += [[float(Af.shape[0])], Af.sum(axis=0), Yf.sum(axis=0), (Yf * Yf).sum(axis=0),
                  (Af.T @ Af).ravel(), (Af.T @ Yf).ravel()]
    return np.concatenate(parts).reshape(1, -1)


def _k_masked_y(Xb, Yb, split, fold, y_mean):
    """``Y - y_mean`` on the training rows of ``fold``, zero on its validation rows."""
    out = np.asarray(Yb, dtype=np.float64) - y_mean
    out[split.labels(Xb) == fold] = 0
    return out


def _k_val_sse(Xb, Yb, state, split, fold, U, a_mean, C, y_mean):
    """Squared validation errors (rows of ``fold``) of ``(A_U - a_mean) C + y_mean``."""
    r = split.labels(Xb) == fold
    if not r.any():
        return np.zeros((1, C.shape[1]))
    B = state.features(np.asarray(Xb)[r], U)
    if a_mean is not None:
        B -= a_mean
    E = (B @ C).real + y_mean - np.asarray(Yb, dtype=np.float64)[r][:, _target_index(C, Yb)]
    return np.einsum("ij,ij->j", E, E).reshape(1, -1)


def _target_index(C, Yb):
    """Column ``j`` of ``C`` predicts target ``j % k`` (grid points outer, targets inner)."""
    k = np.shape(Yb)[1]
    return np.arange(C.shape[1]) % k


def _fold_stats(op, X, Y, split):
    """One pass without features: per fold (count, sum y, sum y^2)."""
    K, k = split.n_folds, Y.shape[1]
    out = op._reduce(_k_fold_counts, [Y], K * (1 + 2 * k), np.float64, split=split)
    out = out.reshape(K, 1 + 2 * k)
    return out[:, 0], out[:, 1:1 + k], out[:, 1 + k:]


def _baselines(n, sy, syy, folds):
    """Validation MSE of predicting the training mean, per fold (as ``ridge.fold_baseline``)."""
    out = []
    for f in folds:
        n_t = n.sum() - n[f]
        ym = (sy.sum(axis=0) - sy[f]) / n_t
        sse = syy[f] - 2 * ym * sy[f] + n[f] * ym ** 2
        out.append(float(sse.sum() / (n[f] * sy.shape[1])))
    return np.array(out)


def _check_auto_input(est, fmap, what):
    if fmap.is_complex:
        raise ValueError(f"{what} on Dask input needs real features, got activation="
                         f"{est.activation!r}; pass {what.split('=')[0]} explicitly")


def choose_ridge_lam(est, fmap, X, Y, rng, grid, rule, fit_intercept):
    r"""``lam="auto"`` on Dask: K-fold validation errors from one pass of fold statistics.

    One pass accumulates, for each of the K = 5 folds of :class:`_RowSplit`,
    the row count, the column sums, :math:`\sum y`, :math:`\sum y^2`, the
    uncentred Gram :math:`A_f^T A_f` and :math:`A_f^T Y_f` (K N x N partial
    Gram matrices per task).  On the client, fold f's training statistics are
    the totals minus fold f's; they are centred with the training means by
    rank-one corrections, the centred training Gram is diagonalised once and
    the validation error of every ``lam`` is
    :math:`\|\tilde Y\|^2 - 2\,\mathrm{tr}(C^T \tilde A^T \tilde Y) +
    \mathrm{tr}(C^T \tilde A^T \tilde A C)` with the validation rows centred
    by the training means.  The rule and the predict-the-mean guard are
    :func:`rflite._cv.choose`'s, as in memory.  Errors computed as these
    differences lose about :math:`10^{-16}\|y\|^2` absolutely, which matters
    only for near-interpolating fits of noise-free data.
    """
    from rflite._cv import choose
    from rflite.ridge import DEFAULT_FOLDS, cv_results_per_output

    _check_auto_input(est, fmap, "lam='auto'")
    split = _RowSplit(rng, X.shape[1], DEFAULT_FOLDS)
    op = DaskFeatureOperator(fmap, X)
    n, k, K = fmap.n_columns, Y.shape[1], split.n_folds
    width = 1 + n + 2 * k + n * n + n * k
    out = op._reduce(_k_fold_gram, [Y], K * width, np.float64, split=split).reshape(K, width)
    cnt = out[:, 0]
    sa = out[:, 1:1 + n]
    sy = out[:, 1 + n:1 + n + k]
    syy = out[:, 1 + n + k:1 + n + 2 * k]
    G = out[:, 1 + n + 2 * k:1 + n + 2 * k + n * n].reshape(K, n, n)
    B = out[:, 1 + n + 2 * k + n * n:].reshape(K, n, k)
    folds = [f for f in range(K) if 0 < cnt[f] < cnt.sum()]
    if not folds:
        raise ValueError("lam='auto' needs at least 2 distinct rows of X (a validation split)")
    # one score per (fold, lam, output): each output chooses its own lam, as in memory
    scores = np.empty((len(folds), len(grid), k))
    for i, f in enumerate(folds):
        n_t, n_v = cnt.sum() - cnt[f], cnt[f]
        sa_t, sy_t = sa.sum(axis=0) - sa[f], sy.sum(axis=0) - sy[f]
        G_t, B_t = G.sum(axis=0) - G[f], B.sum(axis=0) - B[f]
        mu = sa_t / n_t if fit_intercept else np.zeros(n)
        ym = sy_t / n_t if fit_intercept else np.zeros(k)
        Gc = G_t - n_t * np.outer(mu, mu)
        Bc = B_t - n_t * np.outer(mu, ym)
        # validation rows centred by the training means
        Gv = G[f] - np.outer(mu, sa[f]) - np.outer(sa[f], mu) + n_v * np.outer(mu, mu)
        Bv = B[f] - np.outer(mu, sy[f]) - np.outer(sa[f], ym) + n_v * np.outer(mu, ym)
        yy = syy[f] - 2 * ym * sy[f] + n_v * ym ** 2
        e, V = np.linalg.eigh((Gc + Gc.T) / 2)
        e = np.maximum(e, 0.0)
        b = V.T @ Bc
        H = V.T @ Gv @ V
        h = V.T @ Bv
        for j, lam in enumerate(grid):
            Z = b / (e + n_t * lam)[:, None]
            sse = yy - 2 * np.einsum("ij,ij->j", Z, h) + np.einsum("ij,ij->j", Z, H @ Z)
            scores[i, j] = np.maximum(sse, 0.0) / n_v
    choices = [choose(scores[:, :, t], rule=rule,
                      baseline=_baselines(cnt, sy[:, [t]], syy[:, [t]], folds))
               for t in range(k)]
    est.cv_results_ = cv_results_per_output({"lam": np.asarray(grid)}, scores, choices)
    return [float(grid[c.index]) for c in choices], op.pass_seconds


def choose_harfe(est, fmap, X, Y, rng, points, rule, fit_intercept, normalize, n_folds, folds):
    r"""``s`` / ``lam`` ``"auto"`` on Dask: the in-memory hold-out (or K-fold) choice, distributed.

    The rows are labelled by :class:`_RowSplit` (5 labels; the hold-out is
    label 0, a fifth of the rows, like :func:`rflite.ridge.row_folds` in
    memory; :class:`~rflite.htp.HARFECV` uses every label).  For each
    validation fold: one pass for the training means (column sums over the
    training rows), one for the training-centred column norms (``normalize``),
    then HARFE (:func:`harfe_dask`) on the training-rows operator (features
    of the validation rows are zero, the targets too) at every grid point,
    warm-started along the grid exactly like :func:`rflite.htp.harfe_grid`,
    and finally *one* pass scoring every grid point on the validation rows
    (the union of the supports, all coefficient vectors at once).  The
    choice rule and guard are :func:`rflite._cv.choose`'s.  Every HARFE
    iteration is two passes, so the grid (15 points by default) costs about
    15 x (iterations) x 2 passes: on a cluster pass explicit ``s`` and
    ``lam`` when that is too slow.
    """
    from rflite._cv import choose
    from rflite.ridge import cv_results

    split = _RowSplit(rng, X.shape[1], n_folds)
    op0 = DaskFeatureOperator(fmap, X)
    cnt, sy, syy = _fold_stats(op0, X, Y, split)
    folds = [f for f in folds if 0 < cnt[f] < cnt.sum()]
    if not folds:
        raise ValueError("the automatic choice of s / lam needs at least 2 distinct rows "
                         "of X; pass s and lam explicitly")
    m, k, n = X.shape[0], Y.shape[1], fmap.n_columns
    passes = list(op0.pass_seconds)
    scores = np.empty((len(folds), len(points)))
    for i, f in enumerate(folds):
        n_t = cnt.sum() - cnt[f]
        a_mean, y_mean = None, np.zeros(k)
        if fit_intercept:
            y_mean = (sy.sum(axis=0) - sy[f]) / n_t
            ones = _MaskedOperator(fmap, X, split, f)
            a_mean = ones.rmatmat(_ones_like_rows(X))[:, 0] / n_t
            passes += ones.pass_seconds
        scale = np.ones(n)
        if normalize:
            opn = _MaskedOperator(fmap, X, split, f, col_mean=a_mean)
            norms = opn.column_norms()
            passes += opn.pass_seconds
            nz = norms > 0
            scale[nz] = 1.0 / norms[nz]
        op = _MaskedOperator(fmap, X, split, f, col_mean=a_mean, col_scale=scale)
        Yc = _masked_y(X, Y, split, f, y_mean)
        # (n, n_points * k) coefficients of the raw features, column j * k + t
        C = np.zeros((n, len(points) * k), dtype=op.dtype)
        for t in range(k):
            prev = None
            for j, (s, lam) in enumerate(points):
                res = harfe_dask(op, Yc[:, t], s=int(s), lam=lam * n_t / m, mu=est.mu,
                                 max_iter=est.max_iter, tol=est.tol, c0=prev)
                prev = res.coef
                C[res.support, j * k + t] = res.coef[res.support] * scale[res.support]
        passes += op.pass_seconds
        U = np.flatnonzero(np.any(C != 0, axis=1))
        if U.size == 0:
            U = np.zeros(1, dtype=np.int64)
        plain = DaskFeatureOperator(fmap, X)
        sse = plain._reduce(_k_val_sse, [Y], C.shape[1], np.float64, split=split, fold=f, U=U,
                            a_mean=None if a_mean is None else a_mean[U], C=C[U],
                            y_mean=np.tile(y_mean, len(points)))
        passes += plain.pass_seconds
        scores[i] = sse.reshape(len(points), k).sum(axis=1) / (cnt[f] * k)
    base = _baselines(cnt, sy, syy, folds)
    choice = choose(scores, rule=rule, baseline=base)
    est.cv_results_ = cv_results(
        {"s": np.array([p[0] for p in points]), "lam": np.array([p[1] for p in points])},
        scores, choice)
    s, lam = points[choice.index]
    return int(s), float(lam), passes


def _ones_like_rows(X):
    import dask.array as da

    return da.ones((X.shape[0], 1), chunks=(X.chunks[0], (1,)))


def _masked_y(X, Y, split, fold, y_mean):
    import dask.array as da

    return da.map_blocks(_k_masked_y, X, Y, split=split, fold=fold, y_mean=y_mean,
                         chunks=Y.chunks, dtype=np.float64, meta=np.empty((0, 0)),
                         token="rflite-masked-y")


# ---------------------------------------------------------------- prediction
def predict(est, X, *, real=True):
    r"""Lazy predictions :math:`\mathrm{Re}(A(X)_{:, S} c_S + c_0)` on a Dask ``X``.

    Returns a Dask array with ``X``'s row chunks ((m,) for a 1-d fit, else
    (m, n_targets)); each chunk evaluates only the kept columns.  ``real``
    False keeps the complex model (``"exp"``).
    """
    est._check_fitted()
    X = check_dask_X(X)
    n = getattr(est, "n_features_in_", X.shape[1])
    if X.shape[1] != n:
        raise ValueError(
            f"X has {X.shape[1]} features, but {type(est).__name__} is expecting "
            f"{n} features as input (X must have {n} columns, got shape {X.shape})")
    support = getattr(est, "support_", None)
    fmap = est.feature_map_
    if support is None:
        support = np.arange(fmap.n_columns)
    coef = np.asarray(est.coef_)
    one_d = coef.ndim == 1
    C = coef.reshape(coef.shape[0], -1)
    intercept = np.asarray(est.intercept_).reshape(-1)
    op = DaskFeatureOperator(fmap, X)
    out = op._lazy(np.asarray(support, dtype=np.int64), C, intercept, real)
    return out[:, 0] if one_d else out


# -------------------------------------------------------------------- SHRIMP
def _qr_r(M, L):
    """R factor of ``M`` (rows x L) padded with zero rows to L x L.

    One BLAS thread: a task is one core's work, and threaded OpenBLAS on
    these small factorisations was 30-100x slower on a busy machine.
    """
    from rflite._numerics import blas_threads

    out = np.zeros((L, L))
    if M.shape[0]:
        with blas_threads(1):
            R = np.linalg.qr(M, mode="r")
        out[: R.shape[0]] = R[:L]
    return out


def _k_split_sums(Xb, Yb, Vb, state):
    """First SHRIMP pass: validation, and column / y sums over training and all rows.

    Returns ``[bad_X, bad_y, y sums train (k), y sums all (k), columns train (N),
    columns all (N)]``.
    """
    Xf = np.asarray(Xb, dtype=np.float64)
    Yb = np.asarray(Yb, dtype=np.float64)
    tr = ~Vb[:, 0]
    bad_x = float(np.count_nonzero(~(np.abs(Xf) <= MAX_ABS)))
    bad_y = float(np.count_nonzero(~(np.abs(Yb) <= MAX_ABS)))
    n = state.fmap.n_columns
    if bad_x:
        A_tr = A_all = np.zeros(n)
    else:
        A = state.features(Xf)
        A_tr, A_all = A[tr].sum(axis=0), A.sum(axis=0)
    return np.concatenate([[bad_x, bad_y], Yb[tr].sum(axis=0), Yb.sum(axis=0),
                           A_tr, A_all]).reshape(1, -1)


def _k_qr(Xb, Yb, Vb, state, cols, y_mean, split):
    r"""Per-chunk R factors of :math:`[A_c, Y - \bar y]`: training rows and validation rows.

    Returns a (2L, L) block (``split``) or (L, L), ``L = len(cols) + k``.
    """
    A = state.features(Xb, cols)
    M = np.hstack([A, np.asarray(Yb, dtype=np.float64) - y_mean])
    L = M.shape[1]
    if not split:
        return _qr_r(M, L)
    v = Vb[:, 0]
    return np.vstack([_qr_r(M[~v], L), _qr_r(M[v], L)])


def _k_qr_combine(block, L, parts):
    """Merge the stacked R factors of a group of chunks (TSQR tree step)."""
    g = block.shape[0] // (parts * L)
    B = block.reshape(g, parts, L, L)
    return np.vstack([_qr_r(B[:, p].reshape(g * L, L), L) for p in range(parts)])


def _tsqr(X, Y, V, state_node, cols, y_mean, split, split_every=SPLIT_EVERY):
    r"""R factors of :math:`[A_{:, cols} - \bar a, Y - \bar y]` over the rows, by a TSQR tree.

    Each chunk's features are factorised on its worker (Householder QR,
    ``mode="r"``); only the L x L factors travel, merged ``split_every`` at a
    time (Benson, Gleich and Demmel 2013, "Direct QR factorizations for
    tall-and-skinny matrices in MapReduce architectures").  With ``split``
    the training rows (``V`` false) and the validation rows (``V`` true) get
    separate factors.  Returns one (L, L) or two upper-triangular factors.
    """
    import dask.array as da

    parts = 2 if split else 1
    L = cols.size + Y.shape[1]
    nb = X.numblocks[0]
    Rs = da.map_blocks(_k_qr, X, Y, V, state_node, cols=cols, y_mean=y_mean, split=split,
                       chunks=((parts * L,) * nb, (L,)), dtype=np.float64,
                       meta=np.empty((0, 0)), token="rflite-tsqr")
    while Rs.numblocks[0] > 1:
        nb = Rs.numblocks[0]
        groups = [min(split_every, nb - i) for i in range(0, nb, split_every)]
        Rs = Rs.rechunk((tuple(parts * L * g for g in groups), (L,)))
        Rs = Rs.map_blocks(_k_qr_combine, L=L, parts=parts,
                           chunks=((parts * L,) * len(groups), (L,)), dtype=np.float64,
                           meta=np.empty((0, 0)), token="rflite-tsqr-combine")
    R = np.asarray(Rs.compute())
    return (R[:L], R[L:]) if split else R


def fit_shrimp(est, X, y, sample_weight=None):
    r""":meth:`rflite.imp.SHRIMPRegressor.fit` on a Dask ``X``: one TSQR, then the path on the client.

    For the training rows (a permutation of the m rows drawn from the
    in-memory fit's split stream: the in-memory split when the rows are
    distinct and in ``np.unique`` order, see the module notes) and
    the validation rows, one distributed TSQR (:func:`_tsqr`) gives the
    upper-triangular factors :math:`R` of :math:`[A_c,\ y_c]` (centred
    features and targets), L x L with ``L = n_columns + n_targets``.  Since
    :math:`\|A c - y\|_2 = \|R_{:, :n} c - R_{:, n}\|_2` for every ``c``
    (``Q`` is orthogonal), :func:`rflite.imp.shrimp_path` run on the L x n
    matrix :math:`R_{:, :n}` and target :math:`R_{:, n}` (with the validation
    pair likewise) has the same minimisers at every step as the path on the
    m x n data: for m >= n the minimum-norm path *is* a least-squares path,
    solved here by the path's under-parameterised QR route, with no further
    pass over the data.  The mean squared errors are rescaled from L rows to
    the true row counts (the best step is unchanged: the path's rounding
    floor scales the same way).  The refit on all rows is one more TSQR
    over the kept columns only.  Two passes plus the refit in all; memory
    per task one chunk of features plus a few L x L factors, so this suits
    ``n_columns`` up to a few thousand.  ``sample_weight`` is refused.

    Defaults: ``n_features=None`` takes the in-memory rule's N on the m rows
    (10^4 weights once m >= 5000: a 2 x 10^4-column factor, so pass
    ``n_features`` for large m).  ``refit="auto"`` / ``"ridge"`` run the
    in-memory guarded choice (:func:`rflite.imp._guarded_step_scores`,
    :func:`rflite.imp._guarded_refit`) on the factors, which stand for the
    rows in every least-squares, ridge and norm quantity; the mean errors
    over the L rows of a factor are rescaled to the true row counts.  Only
    the power iterations for :math:`\sigma_{\max}` start from another
    vector (:math:`R^T 1` instead of :math:`A^T 1`), so the guard's ridge
    penalties agree with the in-memory ones to about 1e-3 (tests).

    Accuracy: the factors are backward stable (Householder QR), so on
    well-conditioned dictionaries the path agrees with the in-memory one
    (the same supports; coefficients to about 1e-9 relative in the tests);
    SHRIMP's ill-conditioned q = 1 Fourier dictionaries (condition 1e12) are
    determined only to that condition times the rounding, in memory too, and
    the two paths may then prune differently.
    """
    import dask.array as da

    from rflite._numerics import check_choice, min_norm_solve, spawn_streams
    from rflite.imp import (_auto_n_features, _blas_threads, _check_refit, _guarded_refit,
                            _guarded_step_scores, _holdout_ridge_errors, _warn_magnitude,
                            shrimp_path)

    X, Y, one_d = _prepare(est, X, y, sample_weight)
    m, d = X.shape
    if est.n_features is not None:
        check_int(est.n_features, "n_features", minimum=1)
    if est.q is not None:
        check_int(est.q, "q", minimum=1)
    check_choice(est.subsets, "subsets", ("auto", "all", "random"))
    refit = _check_refit(est.refit)
    frac = check_real(est.validation_fraction, "validation_fraction", minimum=0.0, strict=True)
    if not frac < 1.0:
        raise ValueError(f"validation_fraction must be in (0, 1), got {frac}")
    if m < 2:
        raise ValueError(f"X must have at least 2 samples for SHRIMPRegressor's validation "
                         f"split, got n_samples={m}")
    # imp._distinct_row_split's count: the prefix of the shuffled rows closest to frac * m
    n_val = int(np.argmin(np.abs(np.arange(1, m) - frac * m))) + 1
    fit_intercept = check_bool(est.fit_intercept, "fit_intercept")
    # n_features=None: the in-memory rule on the m rows (in memory: the distinct rows)
    est._n_weights = (est.n_features if est.n_features is not None
                      else _auto_n_features(m, d, est.q))
    split_rng, feat_rng, path_rng = spawn_streams(est._rng(), 3)
    perm = split_rng.permutation(m)
    is_val = np.zeros(m, dtype=bool)
    is_val[perm[:n_val]] = True
    val, tr = np.sort(perm[:n_val]), np.sort(perm[n_val:])
    V = da.from_array(is_val.reshape(m, 1), chunks=(X.chunks[0], (1,)))
    fmap = est._draw_features(d, feat_rng)
    n, k = fmap.n_columns, Y.shape[1]
    t0 = time.perf_counter()
    op = DaskFeatureOperator(fmap, X)
    sums = op._reduce(_k_split_sums, [Y, V], 2 + 2 * k + 2 * n, np.float64)
    if sums[0]:
        raise ValueError(f"X contains NaN, infinity or a value too large (|x| > {MAX_ABS:g}) "
                         f"in {int(sums[0])} entries")
    if sums[1]:
        raise ValueError(f"y contains NaN, infinity or a value too large (|y| > {MAX_ABS:g}) "
                         f"in {int(sums[1])} entries")
    m_tr = m - n_val
    if fit_intercept:
        y_mean = sums[2:2 + k] / m_tr
        a_mean = sums[2 + 2 * k:2 + 2 * k + n] / m_tr
        y_mean_all = sums[2 + k:2 + 2 * k] / m
        a_mean_all = sums[2 + 2 * k + n:] / m
    else:
        y_mean = y_mean_all = np.zeros(k)
        a_mean = a_mean_all = None
    op_tr = DaskFeatureOperator(fmap, X, col_mean=a_mean)
    passes = list(op.pass_seconds)
    t1 = time.perf_counter()
    R_tr, R_val = _tsqr(X, Y, V, op_tr._state_node(), np.arange(n), y_mean, True)
    passes.append(("tsqr", time.perf_counter() - t1))
    L = n + k
    paths, bests, supports, coefs = [], [], [], []
    path_state = path_rng.bit_generator.state
    with _blas_threads(L):
        for j in range(k):
            path_rng.bit_generator.state = path_state
            path = shrimp_path(
                R_tr[:, :n], R_tr[:, n + j], A_val=R_val[:, :n], y_val=R_val[:, n + j],
                prune_rate=est.prune_rate, n_steps=est.n_steps, min_features=est.min_features,
                schedule=est.schedule, method=est.method, track_spectrum=False, rng=path_rng)
            # mean squared errors over the true row counts, not the L rows of R
            path = path._replace(train_mse=path.train_mse * L / m_tr,
                                 val_mse=path.val_mse * L / n_val)
            paths.append(path)
            bests.append(path.best_step)
            supports.append(path.supports[path.best_step])
            coefs.append(path.coefs[path.best_step])
    # the guarded choice of refit="auto" / "ridge" (imp.SHRIMPRegressor._fit) on the
    # R factors: every least-squares and ridge quantity of [A_c, y_c] (norms, Gram
    # matrices, residuals) is that of R, whose L rows stand for the m_tr (n_val)
    # rows; mean errors over L rows are rescaled by L / n_val
    if fit_intercept:
        target = np.asarray(abs(Y - y_mean_all).max(axis=0).compute(), dtype=np.float64)
    else:
        target = np.asarray(abs(Y).max(axis=0).compute(), dtype=np.float64)
    target = target.reshape(-1)
    est.target_scale_ = target
    val_scale = L / n_val
    step_lams = [None] * k
    use_mean = [False] * k
    mses = [float(p.val_mse[b]) for p, b in zip(paths, bests)]
    if refit in ("auto", "ridge"):
        with _blas_threads(L):
            for j, path in enumerate(paths):
                scores, lam_at = _guarded_step_scores(
                    R_tr[:, :n], R_tr[:, n + j], R_val[:, :n], R_val[:, n + j], path._replace(
                        val_mse=path.val_mse), a_mean, target[j], est.activation, refit,
                    val_scale)
                if np.isfinite(scores).any():
                    bests[j] = int(np.argmin(scores))
                    step_lams[j] = lam_at[bests[j]]
                    mses[j] = float(scores[bests[j]])
                baseline = float(np.sum(R_val[:, n + j] ** 2)) / n_val
                if fit_intercept and not mses[j] < baseline:
                    use_mean[j], mses[j] = True, baseline
    supports = [np.zeros(0, np.int64) if e else p.supports[b]
                for p, b, e in zip(paths, bests, use_mean)]
    coefs = [np.zeros(0) if e else p.coefs[b] for p, b, e in zip(paths, bests, use_mean)]
    used = ["mean" if e else "none" for e in use_mean]
    lams = [None] * k
    if refit != "none" and not all(use_mean):
        union = np.unique(np.concatenate(supports))
        held = [(R_tr[:, S], R_tr[:, n + j], R_val[:, S], R_val[:, n + j],
                 None if a_mean is None else a_mean[S], target[j])
                for j, S in enumerate(supports)]
        op_all = DaskFeatureOperator(fmap, X, col_mean=a_mean_all)
        t1 = time.perf_counter()
        R = _tsqr(X, Y, V, op_all._state_node(), union, y_mean_all, False)
        passes.append(("tsqr", time.perf_counter() - t1))
        u = union.size
        a_mean = None
        if fit_intercept:
            a_mean = np.zeros(n)
            a_mean[union] = a_mean_all[union]
        with _blas_threads(u + k):
            for j, S in enumerate(supports):
                if use_mean[j]:
                    continue
                A_S, y_S = R[:, np.searchsorted(union, S)], R[:, u + j]
                am = None if a_mean is None else a_mean[S]
                if step_lams[j] is not None:
                    lam = step_lams[j] * m / m_tr
                    coefs[j], used[j], lams[j] = ridge_fit(A_S, y_S, lam), "ridge", lam / m
                    continue
                if refit == "min_norm":
                    coefs[j], used[j] = min_norm_solve(A_S, y_S), "min_norm"
                    continue
                c, used[j], lam = _guarded_refit(
                    A_S, y_S, am, refit, target[j], est.activation,
                    lambda lam_grid, j=j: _holdout_ridge_errors(held[j], lam_grid, m_tr / m,
                                                                val_scale))
                coefs[j] = c
                lams[j] = None if lam is None else lam / m
        y_mean = y_mean_all
    elif all(use_mean):
        a_mean, y_mean = None, y_mean_all
    est.refit_ = used[0] if one_d else used
    est.ridge_lam_ = lams[0] if one_d else lams
    est.path_ = paths[0] if one_d else paths
    est.best_step_ = bests[0] if one_d else bests
    est.validation_mse_ = mses[0] if one_d else mses
    est.train_indices_, est.validation_indices_ = tr, val
    est.dask_passes_ = passes
    est.dask_fit_seconds_ = time.perf_counter() - t0
    est._finish(fmap, supports, coefs, a_mean, y_mean)
    _warn_magnitude(est)
    return est
