r"""Fits on data that lives in a Dask array, on a Dask cluster.

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
  :func:`rflite._core.linalg.ridge_solve` (fresh Cholesky each iteration).
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
  :mod:`rflite._dask.srfe`.
* :func:`predict` -- lazy predictions by ``map_blocks`` (a Dask array) for
  every estimator whose prediction is ``A(X)_{:, S} c_S + c_0``.

:func:`harfe_dask` and :func:`as_linear_operator` live in
:mod:`rflite._dask.htp`, the SHRIMP TSQR path in
:mod:`rflite._dask.shrimp`, folds and the choice of regularisation in
:mod:`rflite._dask.auto`; all are importable from here.

The Dask fits set ``dask_passes_`` (a list of ``(kind, seconds)``, one
per distributed pass) and ``dask_fit_seconds_`` on the estimator.

Self-tuning defaults
--------------------
The default estimators choose their regularisation from the data on Dask
input too, in the spirit of the in-memory choice:

* ``RandomFeatureRidge(lam="auto")`` (and ``RandomFeatureRidgeCV`` with
  ``cv=None``): 5-fold validation over the same grid with the same rule, from
  *one* extra pass of per-fold sufficient statistics per weight factor (:func:`choose_ridge`).
* ``HARFERegressor(s="auto", lam="auto")``: the in-memory grid (s as
  fractions of m, shifts / m), scored on a hold-out fifth of the rows,
  warm-started along the grid, one validation pass for the whole grid per
  fold (:func:`choose_harfe`); ``HARFECV`` with ``cv=None`` uses all five
  folds.  About 2 passes per HARFE iteration per grid point: pin ``s`` and
  ``lam`` for large m.
* ``SHRIMPRegressor``: ``n_features=None`` is resolved by the in-memory rule
  on the distinct rows, and the guarded ``refit="auto"`` / ``"ridge"``
  choice runs on the TSQR factors, or, when the training part has fewer
  distinct rows than the fit has columns, the in-memory fit on the rows
  computed to the client (:func:`fit_shrimp`).

With ``cv=None`` the folds are the in-memory ones,
:func:`rflite._core.folds.row_folds`: one pass gathers each distinct row's
hash and random projection (24 bytes a distinct row) on the client, which
deals them to the folds by the in-memory rule; every chunk then looks its
rows up (:func:`rflite._dask.split.distinct_row_folds`), so the same seed
chooses the same ``lam`` / ``s`` on both backends.  SHRIMP's, ARFF's and
GFC's hold-outs, subsamples and folds are drawn over the rows in the
in-memory fits' canonical order (:func:`rflite._dask.split.canonical_rows`:
one pass sends each chunk's distinct rows to the client, which merges
them); past its size limit a keyed bijection of the row indices, evaluated
chunk by chunk, replaces it.  The nested check against the training mean
of a default fit on few distinct rows runs on the client as in memory
(:func:`mean_check_arrays`).  ``lam="auto"`` with
complex features (``activation="exp"``) is refused with a ``ValueError``.

Cross-validation and weights
----------------------------
:class:`~rflite.htp.HARFECV` and :class:`~rflite.ridge.RandomFeatureRidgeCV`
with an int or splitter ``cv`` use the in-memory folds (an int K is
scikit-learn's unshuffled ``KFold(K)`` over the rows, i.e. contiguous
blocks, after dropping zero-weight rows as in memory), given to the
workers as per-row group labels (:mod:`rflite._dask.auto`; an int K's
are computed chunk by chunk from the row offsets, a splitter's on the
client); every fold's fits run on the cluster and choose the same
parameters as in memory (tests).  ``sample_weight`` (a NumPy vector, or a Dask vector with ``X``'s
row chunks; :func:`check_dask_weight`) works for HARFE, ridge and their CV
and ``"auto"`` choices: weighted means, rows scaled by :math:`\sqrt{w}`
inside each chunk task (:class:`DaskFeatureOperator`'s ``row_weight``),
penalty :math:`\lambda\sum_i w_i`, exactly as
:func:`rflite._core.linalg.center_and_weight` in memory (coefficients to
1e-10 of the in-memory weighted fit).

:class:`~rflite.bp.SRFERegressor` fits on Dask (:mod:`rflite._dask.srfe`:
the in-memory centring, weights and normalisation, the BPDN solve on
:func:`as_linear_operator`; same support and coefficients as in memory to
rounding with an explicit ``eta``).

:class:`~rflite.metropolis.ARFFRegressor` fits on Dask
(:mod:`rflite._dask.arff`: the Metropolis loop on the client, the Gram
matrices, right-hand sides, training errors and the early stopping's
validation scores as passes; the same chain as in memory, amplitudes to
rounding).

``sample_weight`` for SHRIMP on Dask: weighted means, :math:`\sqrt{w}`
rows in the TSQR, validation errors per unit weight and the in-memory
weighted split rule (:mod:`rflite._dask.shrimp`).

``eta="auto"`` and :class:`~rflite.bp.SRFECV` choose ``eta`` on Dask too
(:func:`rflite._dask.srfe._choose_eta`: one homotopy path per fold on the
training-rows operator, validation passes, the in-memory rule).

:class:`~rflite.metropolis.ARFFClassifier` fits on Dask through the same
chain (:func:`rflite._dask.arff.fit_arff_classifier`: the classes from one
pass over the labels, the one-hot targets built lazily per chunk); its
``predict`` is lazy.  :class:`~rflite.greedy.GFCRegressor` fits on Dask
through :mod:`rflite._dask.gfc` (each greedy descent a Dask task on its
subsample, the amplitudes from one pass of per-fold Gram sums).  A Dask
``y`` or ``sample_weight`` with a NumPy ``X`` is refused by name instead of
loaded (:func:`rflite._base.refuse_dask`).

:class:`~rflite.imp.SHRIMPCV` fits on Dask (:mod:`rflite._dask.shrimpcv`:
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

import time

import numpy as np

from rflite._dask.operator import (  # noqa: F401 - the operator, checks and kernels re-exported
    BLOCK_ENTRIES,
    SPLIT_EVERY,
    DaskFeatureOperator,
    _broadcast,
    _n_threads,
    _State,
    check_dask_weight,
    check_dask_X,
    check_dask_y,
    is_dask_array,
    reports_passes,
)
from rflite._core.validation import MAX_ABS, check_bool, check_int, check_real
from rflite._dask.prepare import (  # noqa: F401 - the first passes, used by the fits below
    _centring, _check_predict_X, _column_scale, _first_pass, _k_first, _prepare, _weighted_rows,
)
from rflite._core.linalg import ridge_solve



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
    "choose_ridge",
    "choose_harfe",
]


@reports_passes
def fit_harfe(est, X, y, sample_weight=None):
    """:meth:`rflite.htp.HARFERegressor.fit` on a Dask ``X`` (and ``y``).

    The in-memory fit's steps, distributed: one pass validates ``X`` and
    ``y`` and gives the (weighted) column means and ``y``'s mean
    (``fit_intercept``), one gives the centred column norms (``normalize``),
    then :func:`harfe_dask` per output.  ``sample_weight`` (NumPy or Dask,
    :func:`check_dask_weight`) centres with weighted means, scales the rows
    by :math:`\\sqrt{w}` inside every chunk task and makes the penalty
    :math:`\\lambda` times the distinct kept rows
    (:func:`rflite._dask.split.distinct_rows`), exactly as in memory.  ``matrix_free`` is
    irrelevant (Dask fits are always matrix-free).  With ``s`` / ``lam``
    ``"auto"`` (the defaults) or in :class:`rflite.htp.HARFECV` they are
    first chosen by :func:`rflite._dask.auto.choose_harfe` on the in-memory
    folds (:func:`rflite._core.folds.row_folds` over the distinct rows for
    ``cv=None``, :func:`rflite._dask.auto.default_fold_ids`; those of an int or splitter
    ``cv``); ``s_``, ``lam_`` and ``cv_results_`` are set as in memory (per
    output for a 2-d ``y``).
    """
    from rflite._htp.solver import _check_shift

    from rflite._dask.split import distinct_rows

    X, Y, one_d, W, total = _prepare(est, X, y, sample_weight, weights=True)
    m = X.shape[0]
    n_features = check_int(est.n_features, "n_features", minimum=1)
    n_columns = n_features * (2 if est.activation == "fourier" else 1)
    search = est._search()
    # checked against m, an upper bound of the distinct rows, before any pass
    est._check_s_lam(n_columns, m, search)
    check_real(est.mu, "mu", minimum=0.0, strict=True)
    check_int(est.max_iter, "max_iter", minimum=1)
    check_real(est.tol, "tol", minimum=0.0)
    normalize = check_bool(est.normalize, "normalize")
    check_bool(est.matrix_free, "matrix_free")
    fit_intercept = check_bool(est.fit_intercept, "fit_intercept")
    rng = est._rng()
    fmap = est._draw_features(X.shape[1], rng)
    t0 = time.perf_counter()
    # the m of m * lam and of the s fractions: distinct kept rows, as in memory;
    # the default folds count them in the pass that labels the rows
    if search is not None:
        from rflite._core.parallel import check_executor

        # validated as in memory; on Dask the folds' tasks run on the scheduler's workers
        check_executor(est._n_jobs(), "n_jobs")
        folds = make_folds(getattr(est, "cv", None), X, y, W, rng, est)
        counts = folds.fold_counts()
        if counts is None:
            n_rows, train_rows = distinct_rows(X, W, folds)
            fold_ids = list(range(folds.n_folds))
        else:
            n_rows, train_rows, _ = counts
            fold_ids = default_fold_ids(est, folds)
        points, _, lams = est._grid_points(search, n_rows, n_columns)
        for lam0 in lams[:1]:
            _check_shift(n_rows, lam0, est.mu)
    else:
        n_rows = distinct_rows(X, W)
    y_mean, a_mean, scale, first = _centring(fmap, X, Y, W, total, fit_intercept, normalize)
    passes = []
    if search is not None:
        chosen, use_mean, passes = choose_harfe(est, fmap, X, Y, W, folds, fold_ids,
                                                train_rows, points, est._rule(),
                                                fit_intercept, normalize)
    else:
        use_mean = [False] * Y.shape[1]
        chosen = [(int(est.s), float(est.lam))] * Y.shape[1]
        if hasattr(est, "cv_results_"):
            del est.cv_results_
    est.s_ = chosen[0][0] if one_d else np.array([c[0] for c in chosen])
    est.lam_ = chosen[0][1] if one_d else np.array([c[1] for c in chosen])
    for _, lam in chosen:
        _check_shift(n_rows, lam, est.mu)
    passes = first.pass_seconds + passes
    op = DaskFeatureOperator(fmap, X, col_mean=a_mean, col_scale=scale, row_weight=W)
    Yc = _weighted_rows(Y - y_mean if fit_intercept else Y, W)
    supports, coefs, results = [], [], []
    for k in range(Y.shape[1]):
        s, lam = chosen[k]
        # the solver's penalty is m * lam: make it lam * (distinct kept rows)
        res = harfe_dask(op, Yc[:, k], s=s, lam=lam * n_rows / m, mu=est.mu,
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
    # an output whose choice lost to the training mean is that mean, as in memory
    coefs = [np.zeros_like(c) if u else c for c, u in zip(coefs, use_mean)]
    est.mean_model_ = use_mean[0] if one_d else np.array(use_mean)
    return est._finish(fmap, supports, coefs, a_mean, y_mean)


@reports_passes
def fit_ridge(est, X, y, sample_weight=None):
    """:meth:`rflite.ridge.RandomFeatureRidge.fit` on a Dask ``X`` (and ``y``).

    One pass validates the data and gives the (weighted) column means
    (``fit_intercept``); one more pass accumulates the centred Gram matrix
    :math:`A_c^* W A_c` (N x N) and :math:`A_c^* W Y_c` by tree sums, and
    the primal system :math:`(A_c^* W A_c + \\lambda \\sum_i w_i I) C =
    A_c^* W Y_c` is solved on the client (:func:`rflite._core.linalg.ridge_solve`;
    ``W`` the ``sample_weight``, identity without).  Every task holds an
    N x N partial Gram matrix, so this suits N up to a few thousand.
    ``lam="auto"`` (the default) and :class:`rflite.ridge.RandomFeatureRidgeCV`
    first choose ``scale_`` and ``lam_`` by
    :func:`rflite._dask.auto.choose_ridge` (one more pass of per-fold Gram
    matrices per weight factor, and one for the means of the chosen
    factor's columns; the in-memory folds: :func:`rflite._core.folds.row_folds`
    for ``cv=None``, those of an int or splitter ``cv``), with the
    in-memory test against the training mean (``mean_model_``).
    """
    from rflite._core.selection import check_grid
    from rflite.ridge import scaled_map, stacked_map

    X, Y, one_d, W, total = _prepare(est, X, y, sample_weight, weights=True)
    check_int(est.n_features, "n_features", minimum=1)
    grid = est._grid()
    if grid is not None:
        from rflite._core.parallel import check_executor

        grid = check_grid(grid, "lams", order="descending")
        rule = est._rule()
        check_executor(est._n_jobs(), "n_jobs")  # validated as in memory; unused on Dask
        lam = float(grid.max())
    else:
        lam = est._check_lam()
    if not np.isfinite(total * lam):
        raise ValueError(f"lam={lam:g} overflows float64 in the penalty m * lam "
                         f"(m={total:g}); lam must be far smaller")
    fit_intercept = check_bool(est.fit_intercept, "fit_intercept")
    scales = est._checked_scales()
    rng = est._rng()
    base = est._draw_features(X.shape[1], rng)
    t0 = time.perf_counter()
    # validation (NaN / inf named) before anything else, then the means of all rows
    fmap = scaled_map(base, scales) if isinstance(scales, float) else base
    y_mean, a_mean, first = _first_pass(fmap, X, Y, fit_intercept, W)
    passes = list(first.pass_seconds)
    lams = [lam] * Y.shape[1]
    factors = [scales] * Y.shape[1]
    use_mean = [False] * Y.shape[1]
    if grid is not None:
        folds = make_folds(est._cv(), X, y, W, rng, est)
        factors, lams, use_mean, more = choose_ridge(est, base, X, Y, W, folds, grid, scales,
                                                     rule, fit_intercept)
        passes += more
    elif hasattr(est, "cv_results_"):
        del est.cv_results_
    est.lam_ = lams[0] if one_d else np.array(lams)
    est.scale_ = factors[0] if one_d else np.array(factors)
    est.mean_model_ = use_mean[0] if one_d else np.array(use_mean)
    out_cols = None
    if not isinstance(scales, float):
        # outputs choosing different factors: one map with a block per factor
        distinct = sorted(set(factors))
        fmap, blocks = stacked_map(base, distinct)
        out_cols = [blocks[distinct.index(f)] for f in factors]
        if distinct != [1.0]:
            # the means of the chosen map's columns: one more pass
            y_mean, a_mean, again = _first_pass(fmap, X, Y, fit_intercept, W)
            passes += again.pass_seconds
    if not fit_intercept:
        y_mean = np.zeros(Y.shape[1])
    op = DaskFeatureOperator(fmap, X, col_mean=a_mean, row_weight=W)
    G, B = op.full_gram(_weighted_rows(Y - y_mean if fit_intercept else Y, W))
    cols = [np.arange(fmap.n_columns)] * Y.shape[1] if out_cols is None else out_cols
    # one Gram for every output; one solve per output on its columns
    C = [np.zeros(cols[t].size) if use_mean[t] else
         ridge_solve(G[np.ix_(cols[t], cols[t])], B[cols[t]][:, [t]], total * lams[t]).ravel()
         for t in range(B.shape[1])]
    est.dask_passes_ = passes + op.pass_seconds
    est.dask_fit_seconds_ = time.perf_counter() - t0
    return est._finish(fmap, cols, C, a_mean, y_mean)


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


# private machinery in modules of their own, re-exported for the tests
from rflite._dask.htp import (  # noqa: E402
    _GramCache, _y_stats, as_linear_operator, harfe_dask)
from rflite._dask.auto import (  # noqa: E402
    _Folds, choose_harfe, choose_ridge, default_fold_ids, group_stats, make_folds)
from rflite._dask.shrimp import (  # noqa: E402
    _k_qr, _k_qr_combine, _k_split_sums, _qr_r, _tsqr, fit_shrimp)


def _fits():
    """Each estimator class with a distributed fit, and that fit (subclasses first)."""
    from rflite._dask.arff import fit_arff, fit_arff_classifier
    from rflite._dask.gfc import fit_gfc
    from rflite._dask.shrimpcv import fit_shrimpcv
    from rflite._dask.srfe import fit_srfe
    from rflite.bp import SRFERegressor
    from rflite.greedy import GFCRegressor
    from rflite.htp import HARFERegressor
    from rflite.imp import SHRIMPCV, SHRIMPRegressor
    from rflite.metropolis import ARFFClassifier, ARFFRegressor
    from rflite.ridge import RandomFeatureRidge

    return {HARFERegressor: fit_harfe, RandomFeatureRidge: fit_ridge, SHRIMPCV: fit_shrimpcv,
            SHRIMPRegressor: fit_shrimp, SRFERegressor: fit_srfe, GFCRegressor: fit_gfc,
            ARFFClassifier: fit_arff_classifier, ARFFRegressor: fit_arff}


def mean_check_arrays(X, y, sample_weight, share):
    """``(X, y, sample_weight)`` on the client for the nested check against the mean, or None.

    The in-memory fits cross-validate their whole automatic choice against
    the training mean when the hold-out it used, ``share`` of the distinct
    rows, is smaller than :data:`~rflite._core.selection.MIN_HOLDOUT_ROWS`
    (:meth:`rflite._base.RandomFeatureModel._check_against_mean`): five
    in-memory fits on folds of the rows.  One pass counts the distinct kept
    rows (:func:`rflite._dask.split.distinct_rows`); when the check applies
    the arrays are computed to the client, where it runs as in memory, so a
    Dask fit makes the same decision.  Past
    :data:`rflite._dask.split.CANONICAL_MAX_BYTES` of rows (millions of
    copies of fewer than ``MIN_HOLDOUT_ROWS / share`` distinct rows) the
    check is not made and None is returned.
    """
    import dask
    import dask.array as da

    from rflite._core.backend import is_dask_array
    from rflite._core.selection import MIN_HOLDOUT_ROWS
    from rflite._dask.split import CANONICAL_MAX_BYTES, distinct_rows

    W = None
    if sample_weight is not None:
        W = da.asarray(sample_weight, chunks=(X.chunks[0],)).reshape(-1, 1)
        W = W.rechunk({0: X.chunks[0]})
    if distinct_rows(X, W) * share >= MIN_HOLDOUT_ROWS:
        return None
    m, d = X.shape
    k = 1 if len(y.shape) == 1 else y.shape[1]
    if m * (d + k + 1) * 8 > CANONICAL_MAX_BYTES:
        return None
    parts = [a for a in (X, y, sample_weight) if is_dask_array(a)]
    computed = iter(dask.compute(*parts))
    return tuple(next(computed) if is_dask_array(a) else a for a in (X, y, sample_weight))


def fit(est, X, y, sample_weight=None, **kwargs):
    """Fit ``est`` on Dask arrays with its class's distributed fit; returns ``est``.

    The entry point of :meth:`rflite._base.RandomFeatureModel._fit_dask`: the
    fit is found along the estimator's class hierarchy, so ``HARFECV`` runs
    HARFE's and a user's subclass runs its parent's.
    """
    table = _fits()
    for cls in type(est).__mro__:
        if cls in table:
            return table[cls](est, X, y, sample_weight, **kwargs)
    raise TypeError(f"{type(est).__name__} has no distributed fit")
