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

A task evaluates its chunk's features in row blocks of about
:data:`BLOCK_ENTRIES` numbers (32 MB, one buffer reused, as the in-memory
:class:`~rflite.features.FeatureOperator`), so per-worker memory is one
chunk of ``X`` plus one block whatever the chunk size; length-m vectors (``y``, residuals, predictions) stay Dask arrays with the
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
* :func:`fit_harfe` / :func:`fit_ridge` -- the estimators' (and their CV
  estimators') ``fit`` on Dask input, with the same weighted centring, row
  weighting and column normalisation as the in-memory path (column means
  and sums of squares from the first pass, so the centred norms cost no
  pass of their own; the centred Gram from the second for ridge).
* :func:`fit_shrimp` -- SHRIMP (Xie, Shi, Schaeffer and Ward 2022) for
  m >> N: one distributed TSQR of the centred ``[A, y]`` (training and
  validation rows apart) and the whole pruning path on the client from the
  small triangular factors, a least-squares path, with no further pass
  except the refit's TSQR over the kept columns.
* :func:`as_linear_operator` -- a SciPy ``LinearOperator`` view for BPDN /
  basis pursuit / SRFE (:mod:`rflite.bp`): ``A^* r`` distributed, ``A c``
  and support columns computed to the client (m-length vectors); the
  estimator :class:`~rflite.bp.SRFERegressor` on it in
  :mod:`rflite._dask_srfe`.
* :func:`predict` -- lazy predictions by ``map_blocks`` (a Dask array) for
  every estimator whose prediction is ``A(X)_{:, S} c_S + c_0``.

:func:`harfe_dask` and :func:`as_linear_operator` live in
:mod:`rflite._dask_solvers`, the SHRIMP TSQR path in
:mod:`rflite._dask_shrimp`, folds and the choice of regularisation in
:mod:`rflite._dask_auto`; all are importable from here.

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

With ``cv=None`` the folds are not the in-memory ones:
:func:`rflite.ridge.row_folds` needs a global ``unique`` over the m rows,
so on Dask each row's fold is a hash of its values (:class:`_RowSplit`:
equal rows share a fold, independent of the chunking and the row order).
With those folds passed to the in-memory CV estimator the choices are
identical (tests).  SHRIMP's split is the in-memory one when the rows are
distinct and sorted (the in-memory fit sorts its distinct rows first; on
Dask the client draws a permutation of the m rows).  ``lam="auto"`` with
complex features (``activation="exp"``) is refused with a ``ValueError``.

Cross-validation and weights
----------------------------
:class:`~rflite.htp.HARFECV` and :class:`~rflite.ridge.RandomFeatureRidgeCV`
with an int or splitter ``cv`` use the in-memory folds (an int K is
scikit-learn's unshuffled ``KFold(K)`` over the rows, i.e. contiguous
blocks, after dropping zero-weight rows as in memory), given to the
workers as per-row group labels (:mod:`rflite._dask_auto`; an int K's
are computed chunk by chunk from the row offsets, a splitter's on the
client); every fold's fits run on the cluster and choose the same
parameters as in memory (tests).  ``sample_weight`` (a NumPy vector, or a Dask vector with ``X``'s
row chunks; :func:`check_dask_weight`) works for HARFE, ridge and their CV
and ``"auto"`` choices: weighted means, rows scaled by :math:`\sqrt{w}`
inside each chunk task (:class:`DaskFeatureOperator`'s ``row_weight``),
penalty :math:`\lambda\sum_i w_i`, exactly as
:func:`rflite._numerics.center_and_weight` in memory (coefficients to
1e-10 of the in-memory weighted fit).

:class:`~rflite.bp.SRFERegressor` fits on Dask (:mod:`rflite._dask_srfe`:
the in-memory centring, weights and normalisation, the BPDN solve on
:func:`as_linear_operator`; same support and coefficients as in memory to
rounding, 6e-13 measured with an explicit ``eta``).

:class:`~rflite.metropolis.ARFFRegressor` fits on Dask
(:mod:`rflite._dask_arff`: the Metropolis loop on the client, the Gram
matrices, right-hand sides, training errors and the early stopping's
validation scores as passes; the same chain as in memory, amplitudes to
rounding).

``sample_weight`` for SHRIMP on Dask: weighted means, :math:`\sqrt{w}`
rows in the TSQR, validation errors per unit weight and the in-memory
weighted split rule (:mod:`rflite._dask_shrimp`).

``eta="auto"`` and :class:`~rflite.bp.SRFECV` choose ``eta`` on Dask too
(:func:`rflite._dask_srfe._choose_eta`: one homotopy path per fold on the
training-rows operator, validation passes, the in-memory rule).

:class:`~rflite.metropolis.ARFFClassifier` fits on Dask through the same
chain (:func:`rflite._dask_arff.fit_arff_classifier`: the classes from one
pass over the labels, the one-hot targets built lazily per chunk); its
``predict`` is lazy.  GFC, the one fit without a distributed path, refuses
Dask input by name instead of loading it (:func:`rflite._base.refuse_dask`).

:class:`~rflite.imp.SHRIMPCV` fits on Dask (:mod:`rflite._dask_shrimpcv`:
the in-memory folds, per fold the TSQR factors of its training and test
rows, the in-memory choice, a TSQR refit).

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

import copy
import math
import sys
import time

import numpy as np

from rflite._numerics import MAX_ABS, check_array, check_bool, check_int, check_real, ridge_solve

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

#: Feature entries per row block inside a chunk task (:meth:`_State.blocks`).
BLOCK_ENTRIES = 1 << 22


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


def _k_first(Xb, Yb, *rest, with_features, with_sq=False):
    """Validation of a chunk of X and y, plus (weighted) column sums and y sums (first pass).

    ``rest`` is ``(state,)`` or ``(weights, state)``.  Returns ``[bad_X,
    bad_y, sum w, sum w y (k), sum w |y|^2 (k), sum w a (N), sum w |a|^2
    (N)]`` (w = 1 without weights; the last with ``with_sq`` only).  Non-finite or too large entries are counted rather
    than raised here, so that the client raises one clear ``ValueError``
    naming the argument and the rows.
    """
    state = rest[-1]
    w = np.asarray(rest[0], dtype=np.float64)[:, 0] if len(rest) == 2 else None
    Xf = np.asarray(Xb, dtype=np.float64)
    if not np.iscomplexobj(Yb):
        Yb = np.asarray(Yb, dtype=np.float64)
    bad_x = float(np.count_nonzero(~(np.abs(Xf) <= MAX_ABS)))
    bad_y = float(np.count_nonzero(~(np.abs(Yb) <= MAX_ABS)))
    Ya = Yb.real * Yb.real + (Yb.imag * Yb.imag if np.iscomplexobj(Yb) else 0.0)
    if w is None:
        total, sums, sq = float(Xf.shape[0]), Yb.sum(axis=0), Ya.sum(axis=0)
    else:
        total, sums, sq = float(w.sum()), w @ Yb, w @ Ya
    dtype = np.result_type(Yb.dtype, state.fmap.is_complex and np.complex128 or np.float64)
    parts = [np.array([bad_x, bad_y, total]), sums, sq]
    if with_features:
        col = np.zeros(state.fmap.n_columns, dtype=dtype)
        col_sq = np.zeros(state.fmap.n_columns)
        if not bad_x:
            for r0, r1, A in state.blocks(Xf):
                # BLAS products and einsum: no temporary of the block's size
                wb = np.ones(r1 - r0) if w is None else w[r0:r1]
                col += wb @ A
                if with_sq:
                    col_sq += np.einsum("i,ij,ij->j", wb, A.real, A.real)
                    if np.iscomplexobj(A):
                        col_sq += np.einsum("i,ij,ij->j", wb, A.imag, A.imag)
        parts.append(col)
        if with_sq:
            parts.append(col_sq)
    return np.concatenate([p.astype(dtype) for p in parts]).reshape(1, -1)


def _check_predict_X(est, X):
    """A Dask ``X`` for a fitted ``est``'s predict / transform: chunks, dtype and width."""
    X = check_dask_X(X)
    n = getattr(est, "n_features_in_", X.shape[1])
    if X.shape[1] != n:
        raise ValueError(
            f"X has {X.shape[1]} features, but {type(est).__name__} is expecting "
            f"{n} features as input (X must have {n} columns, got shape {X.shape})")
    return X


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
    row_weight : (m,) or (m, 1) array, optional
        Row weights :math:`w \ge 0` (NumPy, or Dask with ``X``'s row
        chunks): the reductions see the rows scaled by :math:`\sqrt{w}`
        after the centring, :math:`D(A - 1\bar a^T)\,\mathrm{diag}(s)` as
        :func:`rflite._numerics.center_and_weight` (zero weights are rows
        that count for nothing: a cross-validation fold's training rows are
        its 0/1 weights).  ``matvec``, ``columns`` and predictions are
        unweighted.
    split_every : int, default :data:`SPLIT_EVERY`
        Fan-in of the tree sums.
    """

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
        self.pass_seconds.append((name[3:], time.perf_counter() - t0))
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


# ---------------------------------------------------------------- estimators
def check_dask_weight(sample_weight, X, name: str = "sample_weight"):
    r"""``sample_weight`` for a Dask ``X``: ``(W, total)``, W an (m, 1) Dask array or None.

    ``None`` gives ``(None, m)``.  A scalar or a NumPy vector is validated on
    the client exactly as in memory (:func:`rflite._numerics.check_sample_weight`:
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
        from rflite._numerics import check_sample_weight

        w = check_sample_weight(sample_weight, m)
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
    lo, finite, total = dask.compute(W.min(), da.isfinite(W).all(), W.sum())
    if not finite:
        raise ValueError(f"{name} contains NaN or infinite values")
    if lo < 0:
        raise ValueError(f"Negative values in data passed to {name} (min {float(lo):g})")
    if not total > 0:
        raise ValueError(f"{name} must have a positive sum, got all zero weights")
    return W, float(total)


def _first_pass(fmap, X, Y, with_features, W=None, with_sq=False):
    """Validate X and y (NaN / inf / too large) and get the (weighted) means, in one pass.

    Returns ``(y_mean (k,), col_mean (N,) or None, op)``; raises
    ``ValueError`` naming ``X`` or ``y``.  With weights ``W`` the means are
    :math:`\\sum_i w_i a_i / \\sum_i w_i` (:func:`rflite._numerics.weighted_mean`).
    """
    op = DaskFeatureOperator(fmap, X)
    k, n = Y.shape[1], fmap.n_columns
    with_sq = with_sq and with_features
    length = 3 + 2 * k + (n if with_features else 0) + (n if with_sq else 0)
    dtype = np.result_type(Y.dtype, np.complex128 if fmap.is_complex else np.float64)
    arrays = [Y] if W is None else [Y, W]
    out = op._reduce(_k_first, arrays, length, dtype, with_features=with_features,
                     with_sq=with_sq)
    if out[0].real:
        raise ValueError(f"X contains NaN, infinity or a value too large (|x| > {MAX_ABS:g}) "
                         f"in {int(out[0].real)} entries")
    if out[1].real:
        raise ValueError(f"y contains NaN, infinity or a value too large (|y| > {MAX_ABS:g}) "
                         f"in {int(out[1].real)} entries")
    total = out[2].real
    y_mean = out[3:3 + k] / total
    if not np.iscomplexobj(Y.dtype.type(0)):
        y_mean = y_mean.real
    col_mean = out[3 + 2 * k:3 + 2 * k + n] / total if with_features else None
    # the (weighted) sums of squares of the columns (centred norms without a pass)
    op.col_sq = out[3 + 2 * k + n:].real if with_sq else None
    if col_mean is not None and not fmap.is_complex:
        col_mean = col_mean.real
    return y_mean, col_mean, op


def _prepare(est, X, y, sample_weight, *, weights=False):
    """Checks common to the Dask fits; returns ``(X, Y, one_d)`` (and ``(W, total)``).

    ``weights`` False refuses ``sample_weight`` (fits that cannot weight
    rows); True validates it (:func:`check_dask_weight`) and returns
    ``(X, Y, one_d, W, total)``.
    """
    check_dask_X(X)
    if sample_weight is not None and not weights:
        raise ValueError(f"sample_weight is not supported for Dask input by "
                         f"{type(est).__name__} (pass sample_weight=None, or fit in memory)")
    Y, one_d = check_dask_y(y, X)
    if np.dtype(Y.dtype).kind == "c":
        raise ValueError(f"y must be real (Complex data not supported), got dtype {Y.dtype}")
    if weights:
        W, total = check_dask_weight(sample_weight, X)
    est.n_features_in_ = int(X.shape[1])
    if hasattr(est, "feature_names_in_"):
        del est.feature_names_in_
    est._one_d = one_d
    return (X, Y, one_d, W, total) if weights else (X, Y, one_d)


def _weighted_rows(Yc, W):
    r""":math:`\sqrt{w}\,Y_c` (lazy; ``Yc`` itself without weights), as ``center_and_weight``."""
    import dask.array as da

    return Yc if W is None else Yc * da.sqrt(W)


def _centring(fmap, X, Y, W, total, fit_intercept, normalize):
    """The first pass of HARFE's and SRFE's Dask fits: ``(y_mean, a_mean, scale, first)``.

    Validation (NaN / inf named) before anything else, then the (weighted)
    means of all rows (zero and None without ``fit_intercept``) and the
    column factors of ``normalize`` (:func:`_column_scale`); ``first`` is the
    pass's operator (its ``pass_seconds``).
    """
    y_mean, a_mean, first = _first_pass(fmap, X, Y, fit_intercept or normalize, W,
                                        with_sq=normalize)
    if not fit_intercept:
        a_mean, y_mean = None, np.zeros(Y.shape[1])
    return y_mean, a_mean, _column_scale(first, a_mean, total, normalize), first


def _column_scale(first, a_mean, total, normalize):
    r"""Column factors: 1, or 1 / the centred (weighted) training norms (``normalize``).

    The norms come from :func:`_first_pass`'s sums of squares without a pass
    of their own: :math:`\sum_i w_i |a_{ij} - \bar a_j|^2 = \sum_i w_i |a_{ij}|^2
    - (\sum_i w_i) |\bar a_j|^2` (as the in-memory matrix-free fits; relative
    rounding ~1e-16 of :math:`\sum_i w_i |a_{ij}|^2`).
    """
    scale = np.ones(first.fmap.n_columns)
    if normalize:
        sq = first.col_sq if a_mean is None else first.col_sq - total * np.abs(a_mean) ** 2
        norms = np.sqrt(np.maximum(sq, 0.0))
        nz = norms > 0
        scale[nz] = 1.0 / norms[nz]
    return scale


def fit_harfe(est, X, y, sample_weight=None):
    """:meth:`rflite.htp.HARFERegressor.fit` on a Dask ``X`` (and ``y``).

    The in-memory fit's steps, distributed: one pass validates ``X`` and
    ``y`` and gives the (weighted) column means and ``y``'s mean
    (``fit_intercept``), one gives the centred column norms (``normalize``),
    then :func:`harfe_dask` per output.  ``sample_weight`` (NumPy or Dask,
    :func:`check_dask_weight`) centres with weighted means, scales the rows
    by :math:`\\sqrt{w}` inside every chunk task and makes the penalty
    :math:`\\lambda \\sum_i w_i`, exactly as in memory.  ``matrix_free`` is
    irrelevant (Dask fits are always matrix-free).  With ``s`` / ``lam``
    ``"auto"`` (the defaults) or in :class:`rflite.htp.HARFECV` they are
    first chosen by :func:`rflite._dask_auto.choose_harfe` (hash folds of
    the rows for ``cv=None``, the in-memory folds of an int or splitter
    ``cv``); ``s_``, ``lam_`` and ``cv_results_`` are set as in memory (per
    output for a 2-d ``y``).
    """
    from rflite.htp import _check_shift

    X, Y, one_d, W, total = _prepare(est, X, y, sample_weight, weights=True)
    m = X.shape[0]
    n_features = check_int(est.n_features, "n_features", minimum=1)
    n_columns = n_features * (2 if est.activation == "fourier" else 1)
    search = est._search()
    est._check_s_lam(n_columns, total, search)
    check_real(est.mu, "mu", minimum=0.0, strict=True)
    check_int(est.max_iter, "max_iter", minimum=1)
    check_real(est.tol, "tol", minimum=0.0)
    normalize = check_bool(est.normalize, "normalize")
    check_bool(est.matrix_free, "matrix_free")
    fit_intercept = check_bool(est.fit_intercept, "fit_intercept")
    if search is not None:
        # relative grids scale with the weighted row count, as in memory
        from rflite._parallel import check_executor

        points, _, lams = est._grid_points(search, total, n_columns)
        rule = est._rule()
        # validated as in memory; on Dask the folds' tasks run on the scheduler's workers
        check_executor(est._n_jobs())
        for lam0 in lams[:1]:
            _check_shift(total, lam0, est.mu)
        cv = getattr(est, "cv", None)
    rng = est._rng()
    fmap = est._draw_features(X.shape[1], rng)
    t0 = time.perf_counter()
    y_mean, a_mean, scale, first = _centring(fmap, X, Y, W, total, fit_intercept, normalize)
    passes = []
    if search is not None:
        # HARFECV: every fold; HARFERegressor: the hold-out (hash label 0, a fifth)
        folds = make_folds(cv, X, y, W, rng, est)
        fold_ids = list(range(folds.n_folds)) if hasattr(est, "cv") else [0]
        chosen, passes = choose_harfe(est, fmap, X, Y, W, folds, fold_ids, points, rule,
                                      fit_intercept, normalize)
    else:
        chosen = [(int(est.s), float(est.lam))] * Y.shape[1]
        if hasattr(est, "cv_results_"):
            del est.cv_results_
    est.s_ = chosen[0][0] if one_d else np.array([c[0] for c in chosen])
    est.lam_ = chosen[0][1] if one_d else np.array([c[1] for c in chosen])
    for _, lam in chosen:
        _check_shift(total, lam, est.mu)
    passes = first.pass_seconds + passes
    op = DaskFeatureOperator(fmap, X, col_mean=a_mean, col_scale=scale, row_weight=W)
    Yc = _weighted_rows(Y - y_mean if fit_intercept else Y, W)
    supports, coefs, results = [], [], []
    for k in range(Y.shape[1]):
        s, lam = chosen[k]
        # the solver's penalty is m * lam: make it lam * sum(w)
        res = harfe_dask(op, Yc[:, k], s=s, lam=lam * total / m, mu=est.mu,
                         max_iter=est.max_iter, tol=est.tol)
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

    One pass validates the data and gives the (weighted) column means
    (``fit_intercept``); one more pass accumulates the centred Gram matrix
    :math:`A_c^* W A_c` (N x N) and :math:`A_c^* W Y_c` by tree sums, and
    the primal system :math:`(A_c^* W A_c + \\lambda \\sum_i w_i I) C =
    A_c^* W Y_c` is solved on the client (:func:`rflite._numerics.ridge_solve`;
    ``W`` the ``sample_weight``, identity without).  Every task holds an
    N x N partial Gram matrix, so this suits N up to a few thousand.
    ``lam="auto"`` (the default) and :class:`rflite.ridge.RandomFeatureRidgeCV`
    first choose ``lam_`` by :func:`rflite._dask_auto.choose_ridge_lam` (one
    more pass of per-fold Gram matrices; hash folds for ``cv=None``, the
    in-memory folds of an int or splitter ``cv``).
    """
    from rflite.ridge import check_grid

    X, Y, one_d, W, total = _prepare(est, X, y, sample_weight, weights=True)
    check_int(est.n_features, "n_features", minimum=1)
    grid = est._grid()
    if grid is not None:
        from rflite._parallel import check_executor

        grid = check_grid(grid, "lams")
        rule = est._rule()
        check_executor(est._n_jobs())  # validated as in memory; unused on Dask
        lam = float(grid.max())
    else:
        lam = est._check_lam()
    if not np.isfinite(total * lam):
        raise ValueError(f"lam={lam:g} overflows float64 in the penalty m * lam "
                         f"(m={total:g}); lam must be far smaller")
    fit_intercept = check_bool(est.fit_intercept, "fit_intercept")
    factor = _dask_weight_scale(est)
    rng = est._rng()
    fmap = est._draw_features(X.shape[1], rng)
    if factor != 1.0:
        from rflite.ridge import scaled_map

        fmap = scaled_map(fmap, factor)
    t0 = time.perf_counter()
    # validation (NaN / inf named) before anything else, then the means of all rows
    y_mean, a_mean, first = _first_pass(fmap, X, Y, fit_intercept, W)
    passes = []
    lams = [lam] * Y.shape[1]
    if grid is not None:
        folds = make_folds(est._cv(), X, y, W, rng, est)
        lams, passes = choose_ridge_lam(est, fmap, X, Y, W, folds, grid, rule, fit_intercept)
    elif hasattr(est, "cv_results_"):
        del est.cv_results_
    est.lam_ = lams[0] if one_d else np.array(lams)
    est.scale_ = factor if one_d else np.full(len(lams), factor)
    if not fit_intercept:
        y_mean = np.zeros(Y.shape[1])
    op = DaskFeatureOperator(fmap, X, col_mean=a_mean, row_weight=W)
    G, B = op.full_gram(_weighted_rows(Y - y_mean if fit_intercept else Y, W))
    # one Gram for every output; one solve per distinct lam
    C = np.column_stack([ridge_solve(G, B[:, [t]], total * lams[t]).ravel()
                         for t in range(B.shape[1])])
    est.dask_passes_ = first.pass_seconds + passes + op.pass_seconds
    est.dask_fit_seconds_ = time.perf_counter() - t0
    cols = np.arange(fmap.n_columns)
    return est._finish(fmap, [cols] * C.shape[1], list(C.T), a_mean, y_mean)


def _dask_weight_scale(est) -> float:
    """The weight factor of a ridge fit on Dask: a float ``scale``, else 1.

    The in-memory ``scale="auto"`` / ``scales`` search is not implemented on
    Dask: ``"auto"`` (the default) uses the weights as drawn, documented; an
    explicit grid other than ``[1.0]`` is refused rather than ignored.
    """
    scale = getattr(est, "scale", "auto")
    if hasattr(est, "scales"):
        if est.scales is None:
            return 1.0
        grid = np.asarray(est.scales, dtype=float).ravel()
        if grid.size == 1 and grid[0] > 0:
            return float(grid[0])
        raise ValueError(f"scales={est.scales!r}: the weight-scale search is not available on "
                         "Dask arrays yet; pass one factor, e.g. scales=[1.0]")
    if isinstance(scale, str):
        est._scales()  # validates the string ("auto")
        return 1.0
    return float(est._scales())


# ---------------------------------------------------------------- prediction
def predict(est, X, *, real=True):
    r"""Lazy predictions :math:`\mathrm{Re}(A(X)_{:, S} c_S + c_0)` on a Dask ``X``.

    Returns a Dask array with ``X``'s row chunks ((m,) for a 1-d fit, else
    (m, n_targets)); each chunk evaluates only the kept columns.  ``real``
    False keeps the complex model (``"exp"``).
    """
    est._check_fitted()
    X = _check_predict_X(est, X)
    support = getattr(est, "support_", None)
    fmap = est.feature_map_
    if support is None:
        support = np.arange(fmap.n_columns)
    coef = np.asarray(est.coef_)
    one_d = coef.ndim == 1
    # (not reshape(n, -1): an intercept-only model has n = 0 coefficients)
    C = coef.reshape(coef.shape[0], 1) if one_d else coef
    intercept = np.asarray(est.intercept_).reshape(-1)
    op = DaskFeatureOperator(fmap, X)
    out = op._lazy(np.asarray(support, dtype=np.int64), C, intercept, real)
    return out[:, 0] if one_d else out


def _k_transform(Xb, est, n_threads):
    return est._transform_chunk(Xb, n_threads)


def transform(est, X, n_cols, dtype=np.float64):
    r"""Lazy ``est.transform`` (:class:`~rflite.features.RandomFeatures`,
    :class:`~rflite.greedy.GFCRegressor`) on a Dask ``X``.

    Returns an (m, ``n_cols``) Dask array with ``X``'s row chunks and one
    column chunk; each chunk is the in-memory transform of its rows (same
    bits; on the dense-weight BLAS path the transform of all m rows at once
    may differ from it in the last bit of a pre-activation), computed on its
    worker by ``est._transform_chunk`` from the fitted estimator, broadcast
    once.  ``X`` is checked (chunks, columns, dtype, feature count) before
    anything is computed; NaN or inf inside a chunk raises, naming ``X``,
    when that chunk is computed.
    """
    import dask.array as da

    X = _check_predict_X(est, X)
    node, _ = _broadcast(est)
    dtype = np.dtype(dtype)
    return da.map_blocks(
        _k_transform, X, node, n_threads=_n_threads(), chunks=(X.chunks[0], (n_cols,)),
        dtype=dtype, meta=np.empty((0, 0), dtype), token="rflite-transform")


# private machinery in modules of their own, re-exported here (imported last:
# they import this module's operator and plumbing)
from rflite._dask_solvers import (  # noqa: E402
    _GramCache, _y_stats, as_linear_operator, harfe_dask)
from rflite._dask_auto import (  # noqa: E402
    _Folds, _RowSplit, choose_harfe, choose_ridge_lam, group_stats, make_folds)
from rflite._dask_shrimp import (  # noqa: E402
    _k_qr, _k_qr_combine, _k_split_sums, _qr_r, _tsqr, fit_shrimp)
