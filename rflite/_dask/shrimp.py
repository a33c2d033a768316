r"""SHRIMP on Dask arrays: one TSQR, then the pruning path on the client (private).

See :func:`fit_shrimp` and the notes of :mod:`rflite._dask.backend`, which re-exports
:func:`fit_shrimp`.  Split out of :mod:`rflite._dask.backend`.
"""

from __future__ import annotations

import math
import time

import numpy as np

from rflite._dask.operator import SPLIT_EVERY, DaskFeatureOperator, reports_passes
from rflite._core.validation import MAX_ABS, check_bool
from rflite._core.linalg import ridge_fit

def _qr_r(M, L):
    """R factor of ``M`` (rows x L) padded with zero rows to L x L.

    One BLAS thread: a task is one core's work, and threaded OpenBLAS on
    these small factorisations is many times slower on a busy machine.
    """
    from rflite._core.blas import blas_threads

    out = np.zeros((L, L))
    if M.shape[0]:
        with blas_threads(1):
            R = np.linalg.qr(M, mode="r")
        out[: R.shape[0]] = R[:L]
    return out


def _k_split_sums(Xb, Yb, Vb, Wb, state):
    """First SHRIMP pass: validation, and weighted column / y sums over training and all rows.

    Returns ``[bad_X, bad_y, weight train, weight all, y sums train (k), y sums
    all (k), columns train (N), columns all (N)]`` (weights 1 without
    ``sample_weight``: the products by 1.0 are exact, the sums the unweighted ones).
    """
    Xf = np.asarray(Xb, dtype=np.float64)
    Yb = np.asarray(Yb, dtype=np.float64)
    w = np.asarray(Wb, dtype=np.float64)
    tr = ~Vb[:, 0]
    bad_x = float(np.count_nonzero(~(np.abs(Xf) <= MAX_ABS)))
    bad_y = float(np.count_nonzero(~(np.abs(Yb) <= MAX_ABS)))
    n = state.fmap.n_columns
    if bad_x:
        A_tr = A_all = np.zeros(n)
    else:
        A = w * state.features(Xf)
        A_tr, A_all = A[tr].sum(axis=0), A.sum(axis=0)
    Yw = w * Yb
    return np.concatenate([[bad_x, bad_y, w[tr].sum(), w.sum()], Yw[tr].sum(axis=0),
                           Yw.sum(axis=0), A_tr, A_all]).reshape(1, -1)


def _k_val_error_moments(Xb, Yb, Vb, Wb, state, cols, coef, y_mean, j):
    r"""Row moments of one model's validation errors (:func:`rflite._imp.guard._row_error_moments`).

    The model is ``coef`` on the centred columns ``cols``; the error of a
    validation row is :math:`e_i = (a_i^T c - (y_{ij} - \bar y_j))^2`.  Returns
    ``[sum w, sum w e, sum w e^2, sum w^2]`` over the chunk's validation rows.
    """
    from rflite._imp.guard import _row_error_moments

    # validation rows of positive weight (a zero weight drops the row, as in memory)
    v = Vb[:, 0] & (np.asarray(Wb, dtype=np.float64)[:, 0] > 0)
    w = np.asarray(Wb, dtype=np.float64)[v, 0]
    r = state.features(Xb[v], cols) @ coef - (np.asarray(Yb, dtype=np.float64)[v, j]
                                              - y_mean[j])
    # the in-memory moments take sqrt(w)-scaled residuals
    return np.array([_row_error_moments(np.sqrt(w) * r, w)])


def _k_paired_moments(Xb, Yb, Vb, Wb, state, cols, coef, y_mean, j):
    r"""Moments of the paired differences of one model's and the training mean's
    validation errors (:func:`rflite._core.selection.paired_difference`).

    :math:`d_i = (a_i^T c - (y_{ij} - \bar y_j))^2 - (y_{ij} - \bar y_j)^2`
    for the chunk's validation rows of positive weight; returns
    ``[sum w, sum w d, sum w d^2]``.
    """
    v = Vb[:, 0] & (np.asarray(Wb, dtype=np.float64)[:, 0] > 0)
    w = np.asarray(Wb, dtype=np.float64)[v, 0]
    yc = np.asarray(Yb, dtype=np.float64)[v, j] - y_mean[j]
    d = (state.features(Xb[v], cols) @ coef - yc) ** 2 - yc ** 2
    return np.array([[w.sum(), w @ d, w @ d ** 2]])


def _k_qr(Xb, Yb, Vb, Wb, state, cols, y_mean, split):
    r"""Per-chunk R factors of :math:`\sqrt{w}\,[A_c, Y - \bar y]`: training rows and
    validation rows.

    Returns a (2L, L) block (``split``) or (L, L), ``L = len(cols) + k``.
    """
    A = state.features(Xb, cols)
    M = np.hstack([A, np.asarray(Yb, dtype=np.float64) - y_mean])
    M *= np.sqrt(np.asarray(Wb, dtype=np.float64))  # center_and_weight's row scaling
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


def _tsqr(X, Y, V, W, state_node, cols, y_mean, split, split_every=SPLIT_EVERY):
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
    Rs = da.map_blocks(_k_qr, X, Y, V, W, state_node, cols=cols, y_mean=y_mean, split=split,
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


def _underdetermined(est, canon, frac, d) -> bool:
    """Does the training part have fewer distinct rows than the fit has columns?

    Then the in-memory path solves minimum-norm systems whose rows are the
    training rows, and the ``L x L`` factors of the TSQR route (``L`` = the
    columns) are larger than those rows themselves: fewer than L distinct
    rows of ``d + 2`` numbers against :math:`L^2`.  The minimum-norm
    solutions of such systems are as sensitive as their condition number
    (SHRIMP's dictionaries reach 1e12), so solving them from the factors
    would also change the path's pruning.  (The column count does not
    depend on the draw: any generator gives it.)
    """
    n_train = canon.n_groups - max(1, int(round(frac * canon.n_groups)))
    return n_train < est._draw_features(d, np.random.default_rng(0)).n_columns


def _fit_on_client(est, X, Y, W, one_d, fit, t0=None):
    """``fit(est, X, y, sample_weight)``, an in-memory fit, on the rows computed to the
    client; returns ``est``.

    The route of SHRIMP's Dask fits when the rows are smaller than the
    factors (:func:`_underdetermined`, and SHRIMPCV's folds): the same model
    bit for bit.  ``dask_passes_`` records the one pass.
    """
    import dask

    t0 = time.perf_counter() if t0 is None else t0
    Xl, Yl, Wl = dask.compute(X, Y, W)
    seconds = time.perf_counter() - t0
    fit(est, Xl, Yl[:, 0] if one_d else Yl, None if Wl is None else Wl[:, 0])
    est.dask_passes_ = [("rows to the client", seconds)]
    est.dask_fit_seconds_ = time.perf_counter() - t0
    return est


def _fit_in_memory(est, X, y, sample_weight):
    """:meth:`rflite.imp.SHRIMPRegressor.fit` on NumPy input, without its nested check
    against the mean (the Dask fit's caller makes it)."""
    from rflite._imp.fit import _fit_one, _fit_setup
    from rflite._imp.guard import _distinct_row_split
    from rflite.imp import _blas_threads

    Xv, Yv, w, frac, refit = _fit_setup(est, X, y, sample_weight)
    with _blas_threads(Xv.shape[0]):
        _fit_one(est, Xv, Yv, w, frac, refit, _distinct_row_split)


def _step_coef(R_tr, col, path, t, lam):
    """Coefficients of step ``t``'s chosen model on its support: the path's (``lam``
    None) or the ridge fit on the training factor
    (:func:`rflite._imp.fit._validation_row_errors`' model)."""
    from rflite._imp.guard import _ridge_family

    S = path.supports[t]
    if lam is None:
        return path.coefs[t]
    return _ridge_family(R_tr[:, S], R_tr[:, col], R_tr[:0, S], [lam])[1][:, 0]


class _ValidationPasses:
    """The passes over the validation rows that the guarded choice needs beyond the
    factors: one chosen model's errors, row by row, summarised as moments.

    ``passes`` (the fit's list of ``(kind, seconds)``) gets one entry a pass.
    """

    def __init__(self, op, Y, V, W, y_mean, split, passes):
        self.op, self.Y, self.V, self.W = op, Y, V, W
        self.y_mean, self.split, self.passes = y_mean, split, passes

    def _reduce(self, kernel, width, S, c, j):
        out = self.op._reduce(kernel, [self.Y, self.V, self.W], width, np.float64, cols=S,
                              coef=c, y_mean=self.y_mean, j=j)
        self.passes.append(self.op.pass_seconds[-1])
        return out

    def error_moments(self, S, c, j):
        """:func:`rflite._imp.guard._row_error_moments` of the model ``c`` on columns ``S``
        (output ``j``): the standard error of the 1se rule, which the factors do not
        carry."""
        moments = self._reduce(_k_val_error_moments, 4, S, c, j)
        if self.split.val_w2 is not None:
            # the in-memory sum of w^2 runs over distinct rows (copies merged)
            moments = np.array([*moments[:3], self.split.val_w2])
        return moments

    def beats_mean(self, S, c, j) -> bool:
        """:func:`rflite._core.selection.beats_mean` of the model against the training
        mean on the validation rows, from the moments of the paired differences; the
        effective count merges copies of a row, as in memory."""
        from rflite._core.selection import standard_error

        s_w, s_wd, s_wd2 = self._reduce(_k_paired_moments, 3, S, c, j)
        if not s_w > 0.0:
            return False
        mu = s_wd / s_w
        split = self.split
        n_eff = s_w ** 2 / (split.val_w2 if split.val_w2 is not None else split.n_val)
        return bool(mu + standard_error(max(s_wd2 / s_w - mu * mu, 0.0), n_eff) < 0.0)


class _Split:
    r"""SHRIMP's hold-out on Dask (:func:`_validation_split`).

    ``V``: the (m, 1) bool validation mask with ``X``'s row chunks; ``n_val``
    and ``n_train``: validation and training rows of positive weight;
    ``train`` and ``val``: their indices; ``val_w2``: the sum over the
    distinct validation rows of their squared total weight (the in-memory
    fit's :math:`\sum w^2` of its collapsed rows), or None when the rows are
    not grouped (then each row counts alone).
    """

    def __init__(self, V, n_val, n_train, train, val, val_w2=None):
        self.V, self.n_val, self.n_train = V, n_val, n_train
        self.train, self.val, self.val_w2 = train, val, val_w2


def _validation_split(X, Y, W, frac, rng, canon):
    """SHRIMP's hold-out rows on Dask: a :class:`_Split`.

    With ``canon`` (:func:`rflite._dask.split.canonical_rows` of the kept
    rows) the in-memory rule exactly: the distinct rows of ``(X, y)`` in
    :func:`numpy.unique` order, their total weights summed in row order,
    shuffled and held out by :func:`rflite._imp.guard._held_groups`; copies of
    a row go to the same side.  Without it (past the sorting limit) the rows
    themselves are shuffled by a keyed bijection evaluated chunk by chunk
    (:mod:`rflite._dask.split`): no m-long array on the client, index arrays
    that are lazy Dask arrays, and a split that is not the in-memory one.
    """
    import dask.array as da

    from rflite._dask.split import FeistelPermutation, validation_mask, weighted_prefix
    from rflite._imp.guard import _held_groups

    row_chunks = X.chunks[0]
    m = X.shape[0]
    if canon is not None:
        groups = canon.groups
        kept = groups >= 0
        w = None if W is None else np.asarray(W[:, 0].compute(), dtype=np.float64)[kept]
        gw = np.bincount(groups[kept], weights=w, minlength=canon.n_groups)
        held = _held_groups(gw, frac, rng)
        is_val = kept & held[np.maximum(groups, 0)]
        V = da.from_array(is_val.reshape(m, 1), chunks=(row_chunks, (1,)))
        train, val = np.flatnonzero(kept & ~is_val), np.flatnonzero(is_val)
        return _Split(V, val.size, train.size, train, val, float(np.sum(gw[held] ** 2)))
    perm = FeistelPermutation(m, rng)
    if W is None:  # the count closest to frac * m, ties to the smaller
        n_val = min(max(math.ceil(frac * m - 0.5), 1), m - 1)
    else:
        n_val = weighted_prefix(W, perm, frac)
    V = validation_mask(row_chunks, perm, n_val)
    return _Split(V, n_val, m - n_val, da.flatnonzero(~V[:, 0]), da.flatnonzero(V[:, 0]))


@reports_passes
def fit_shrimp(est, X, y, sample_weight=None):
    r""":meth:`rflite.imp.SHRIMPRegressor.fit` on a Dask ``X``: one TSQR, then the path on the client.

    The validation rows are the in-memory fit's (:func:`_validation_split`:
    the distinct rows of ``(X, y)`` sorted and dealt by the in-memory rule,
    one pass sending each chunk's distinct rows to the client).  When the
    training part has fewer distinct rows than the fit has columns
    (:func:`_underdetermined`, SHRIMP's default below about 25,000 rows)
    the rows are computed to the client and the in-memory fit runs on them
    (:func:`_fit_on_client`): the same model bit for bit.  Otherwise, for
    the training and the validation rows one distributed TSQR (:func:`_tsqr`) gives the
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
    over the kept columns only.  Two passes plus the refit in all, and with
    ``rule="1se_ridge"`` (the guarded default) one pass over the validation
    rows' chosen columns for the standard error of their errors, which the
    factors do not carry (:func:`_k_val_error_moments`); memory
    per task one chunk of features plus a few L x L factors, so this suits
    ``n_columns`` up to a few thousand.  ``sample_weight`` (NumPy, or Dask with
    X's row chunks) scales the rows by :math:`\sqrt{w}` inside the TSQR tasks,
    centres with weighted means and makes the validation error per unit
    weight, as in memory; zero-weight rows take no part in the split.  The
    choice against the training mean is the in-memory paired rule
    (:func:`rflite._core.selection.beats_mean`) from the moments of the
    validation rows' paired differences, one pass (:func:`_k_paired_moments`).

    Defaults: ``n_features=None`` takes the in-memory rule's N on the
    distinct rows (10^4 weights once m >= 5000: a 2 x 10^4-column factor, so pass
    ``n_features`` for large m).  ``refit="auto"`` / ``"ridge"`` run the
    in-memory guarded choice (:func:`rflite._imp.guard._guarded_step_scores`,
    :func:`rflite._imp.guard._guarded_refit`) on the factors, which stand for the
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

    Past the sorting limit of :func:`rflite._dask.split.canonical_rows`
    (4 million rows or :data:`rflite._dask.split.CANONICAL_MAX_BYTES` of
    distinct rows) the validation rows come from a keyed bijection of the
    row indices evaluated chunk by chunk (:func:`_validation_split`): no
    m-long array on the client or in the graph; ``train_indices_`` and
    ``validation_indices_`` are then lazy Dask arrays, and the split is no
    longer the in-memory one.
    """
    import dask.array as da

    from rflite._dask.prepare import _prepare
    from rflite._dask.split import canonical_rows

    from rflite._core.random import spawn_streams
    from rflite._imp.guard import _warn_magnitude
    from rflite.imp import _auto_n_features

    X, Y, one_d, W, _ = _prepare(est, X, y, sample_weight, weights=True)
    m, d = X.shape
    frac, refit = est._check_params()
    if m < 2:
        raise ValueError(f"X must have at least 2 samples for SHRIMPRegressor's validation "
                         f"split, got n_samples={m}")
    fit_intercept = check_bool(est.fit_intercept, "fit_intercept")
    # the distinct rows of (X, y), which the in-memory fit works on
    canon = canonical_rows(X, Y, W)
    if canon is not None and canon.n_groups < 2:
        raise ValueError(f"X must have at least 2 distinct samples for SHRIMPRegressor's "
                         f"validation split, got n_samples={canon.n_groups}")
    # n_features=None: the in-memory rule on the distinct rows
    est._n_weights = (est.n_features if est.n_features is not None
                      else _auto_n_features(m if canon is None else canon.n_groups, d, est.q))
    if canon is not None and _underdetermined(est, canon, frac, d):
        return _fit_on_client(est, X, Y, W, one_d, _fit_in_memory)
    split_rng, feat_rng, path_rng = spawn_streams(est._rng(), 3)
    split = _validation_split(X, Y, W, frac, split_rng, canon)
    V = split.V
    # weights 1 without sample_weight (exact: the unweighted arithmetic)
    W = da.ones((m, 1), chunks=(X.chunks[0], (1,))) if W is None else W
    fmap = est._draw_features(d, feat_rng)
    n, k = fmap.n_columns, Y.shape[1]
    t0 = time.perf_counter()
    op = DaskFeatureOperator(fmap, X)
    sums = _split_sums(op, Y, V, W, fit_intercept)
    op_tr = DaskFeatureOperator(fmap, X, col_mean=sums.a_mean)
    passes = list(op.pass_seconds)
    t1 = time.perf_counter()
    R_tr, R_val = _tsqr(X, Y, V, W, op_tr._state_node(), np.arange(n), sums.y_mean, True)
    passes.append(("tsqr", time.perf_counter() - t1))
    paths = _factor_paths(est, R_tr, R_val, n, split.n_train, sums.w_val, path_rng)
    # the target scale and mean of the guard and of the magnitude warning
    centred = abs(Y - sums.y_mean_all) if fit_intercept else abs(Y)
    target = np.asarray(centred.max(axis=0).compute(), dtype=np.float64).reshape(-1)
    est.target_scale_ = target
    est.target_mean_ = np.asarray(sums.y_mean_all, dtype=np.float64).reshape(-1)
    rows = _ValidationPasses(op_tr, Y, V, W, sums.y_mean, split, passes)
    bests, step_lams, mses, use_mean = _guarded_steps(
        est, paths, R_tr, R_val, sums, target, refit, rows, fit_intercept)
    supports = [np.zeros(0, np.int64) if e else p.supports[b]
                for p, b, e in zip(paths, bests, use_mean)]
    if refit != "none" and not all(use_mean):
        coefs, used, lams, a_mean = _refit_all_rows(
            est, X, Y, V, W, fmap, sums, (R_tr, R_val), supports, step_lams, use_mean, target,
            refit, passes)
        y_mean = sums.y_mean_all
    else:
        coefs = [np.zeros(0) if e else p.coefs[b] for p, b, e in zip(paths, bests, use_mean)]
        used, lams = ["mean" if e else "none" for e in use_mean], [None] * k
        a_mean, y_mean = ((None, sums.y_mean_all) if all(use_mean)
                          else (sums.a_mean, sums.y_mean))
    est.refit_ = used[0] if one_d else used
    est.ridge_lam_ = lams[0] if one_d else lams
    est.path_ = paths[0] if one_d else paths
    est.best_step_ = bests[0] if one_d else bests
    est.validation_mse_ = mses[0] if one_d else mses
    est.train_indices_, est.validation_indices_ = split.train, split.val
    est.dask_passes_ = passes
    est.dask_fit_seconds_ = time.perf_counter() - t0
    est._finish(fmap, supports, coefs, a_mean, y_mean)
    _warn_magnitude(est, a_mean)
    return est


class _SplitSums:
    """The weights and (weighted) means of the training part and of all rows.

    ``w_train``, ``w_all``: total weights (row counts without
    ``sample_weight``); ``y_mean``, ``a_mean``: the training part's means of
    ``y`` and of the feature columns, ``y_mean_all``, ``a_mean_all``: all
    rows' (zeros and None without ``fit_intercept``).
    """

    def __init__(self, w_train, w_all, y_mean, a_mean, y_mean_all, a_mean_all):
        self.w_train, self.w_all = w_train, w_all
        self.y_mean, self.a_mean = y_mean, a_mean
        self.y_mean_all, self.a_mean_all = y_mean_all, a_mean_all

    @property
    def w_val(self) -> float:
        """The validation part's weight: the errors there are per unit of it."""
        return self.w_all - self.w_train


def _split_sums(op, Y, V, W, fit_intercept) -> _SplitSums:
    """SHRIMP's first pass (:func:`_k_split_sums`): checks ``X`` and ``y``, and the
    weights and means of the training part and of all rows."""
    n, k = op.shape[1], Y.shape[1]
    sums = op._reduce(_k_split_sums, [Y, V, W], 4 + 2 * k + 2 * n, np.float64)
    if sums[0]:
        raise ValueError(f"X contains NaN, infinity or a value too large (|x| > {MAX_ABS:g}) "
                         f"in {int(sums[0])} entries")
    if sums[1]:
        raise ValueError(f"y contains NaN, infinity or a value too large (|y| > {MAX_ABS:g}) "
                         f"in {int(sums[1])} entries")
    w_trs, w_all = float(sums[2]), float(sums[3])
    w_val = w_all - w_trs
    if not (w_trs > 0 and w_val > 0):
        raise ValueError(f"sample_weight must give the training and the validation rows a "
                         f"positive weight, got {w_trs:g} and {w_val:g}")
    sums = sums[2:]
    if not fit_intercept:
        return _SplitSums(w_trs, w_all, np.zeros(k), None, np.zeros(k), None)
    return _SplitSums(w_trs, w_all, sums[2:2 + k] / w_trs, sums[2 + 2 * k:2 + 2 * k + n] / w_trs,
                      sums[2 + k:2 + 2 * k] / w_all, sums[2 + 2 * k + n:] / w_all)


def _factor_paths(est, R_tr, R_val, n, m_tr, w_val, path_rng):
    r"""SHRIMP's path per output on the TSQR factors (:func:`rflite.imp.shrimp_path`).

    ``R_tr[:, :n]`` and ``R_tr[:, n + j]`` stand for the training features and
    output ``j`` (the same minimisers at every step); every output's path
    starts from the same state of ``path_rng``, as in memory.  The mean
    squared errors are rescaled from the L rows of a factor to the true row
    counts ``m_tr`` and ``w_val``.
    """
    from rflite.imp import _blas_threads, shrimp_path

    L = R_tr.shape[1]
    paths = []
    path_state = path_rng.bit_generator.state
    with _blas_threads(L):
        for j in range(L - n):
            path_rng.bit_generator.state = path_state
            path = shrimp_path(
                R_tr[:, :n], R_tr[:, n + j], A_val=R_val[:, :n], y_val=R_val[:, n + j],
                prune_rate=est.prune_rate, n_steps=est.n_steps, min_features=est.min_features,
                schedule=est.schedule, method=est.method, track_spectrum=False, rng=path_rng,
                verbose=getattr(est, "verbose", 0))
            paths.append(path._replace(train_mse=path.train_mse * L / m_tr,
                                       val_mse=path.val_mse * L / w_val))
    return paths


def _guarded_steps(est, paths, R_tr, R_val, sums, target, refit, rows, fit_intercept):
    """The step of each output's path, and whether it loses to the training mean.

    ``refit="auto"`` / ``"ridge"``: the in-memory guarded choice
    (:func:`rflite._imp.guard._guarded_step_scores`,
    :func:`rflite._imp.guard._guarded_choice`) on the factors, whose L rows
    stand for the training (validation) rows in every least-squares, ridge
    and norm quantity; the standard errors and the paired test against the
    mean take passes over the validation rows (``rows``).  Otherwise each
    path's best step.  Returns ``(bests, step_lams, mses, use_mean)``.
    """
    from rflite._imp.guard import _guarded_choice, _guarded_step_scores
    from rflite.imp import _blas_threads

    bests = [p.best_step for p in paths]
    k, n = len(paths), R_tr.shape[1] - len(paths)
    step_lams, use_mean = [None] * k, [False] * k
    mses = [float(p.val_mse[b]) for p, b in zip(paths, bests)]
    if refit not in ("auto", "ridge"):
        return bests, step_lams, mses, use_mean
    val_scale = R_tr.shape[1] / sums.w_val
    with _blas_threads(R_tr.shape[1]):
        for j, path in enumerate(paths):
            scores, lam_at, families = _guarded_step_scores(
                R_tr[:, :n], R_tr[:, n + j], R_val[:, :n], R_val[:, n + j], path,
                sums.a_mean, target[j], est.activation, refit, val_scale)
            chosen = _guarded_choice(scores, lam_at, families, path, est.rule,
                                     lambda S, c, j=j: rows.error_moments(S, c, j))
            if chosen is not None:
                bests[j], step_lams[j], mses[j] = chosen
            baseline = float(np.sum(R_val[:, n + j] ** 2)) / sums.w_val
            if fit_intercept and (chosen is None or not rows.beats_mean(
                    path.supports[bests[j]],
                    _step_coef(R_tr, n + j, path, bests[j], step_lams[j]), j)):
                use_mean[j], mses[j] = True, baseline
    return bests, step_lams, mses, use_mean


def _refit_all_rows(est, X, Y, V, W, fmap, sums, factors, supports, step_lams, use_mean,
                    target, refit, passes):
    """The refit of every output's chosen columns on all rows: one TSQR over their union.

    A step chosen with a ridge penalty is refitted with it (rescaled to all
    rows); ``refit="min_norm"`` takes the minimum-norm least squares;
    otherwise the in-memory guarded refit
    (:func:`rflite._imp.guard._guarded_refit`) chooses between them on the
    hold-out factors.  An output that lost to the training mean keeps no
    column.  Returns ``(coefs, used, lams, a_mean)``: per output the
    coefficients, the refit kind and the ridge ``lam`` (None without one),
    and the column means of the fit (zeros off the union; None without
    ``fit_intercept``).
    """
    from rflite._imp.factor import min_norm_lstsq
    from rflite._imp.guard import _guarded_refit, _holdout_ridge_errors
    from rflite.imp import _blas_threads

    R_tr, R_val = factors
    n, k = fmap.n_columns, Y.shape[1]
    coefs, used, lams = [np.zeros(0)] * k, ["mean"] * k, [None] * k
    val_scale = (n + k) / sums.w_val
    held = [(R_tr[:, S], R_tr[:, n + j], R_val[:, S], R_val[:, n + j],
             None if sums.a_mean is None else sums.a_mean[S], target[j])
            for j, S in enumerate(supports)]
    union = np.unique(np.concatenate(supports))
    op_all = DaskFeatureOperator(fmap, X, col_mean=sums.a_mean_all)
    t1 = time.perf_counter()
    R = _tsqr(X, Y, V, W, op_all._state_node(), union, sums.y_mean_all, False)
    passes.append(("tsqr", time.perf_counter() - t1))
    u = union.size
    a_mean = None
    if sums.a_mean_all is not None:
        a_mean = np.zeros(n)
        a_mean[union] = sums.a_mean_all[union]
    w_trs, w_all = sums.w_train, sums.w_all
    with _blas_threads(u + k):
        for j, S in enumerate(supports):
            if use_mean[j]:
                continue
            A_S, y_S = R[:, np.searchsorted(union, S)], R[:, u + j]
            am = None if a_mean is None else a_mean[S]
            if step_lams[j] is not None:
                lam = step_lams[j] * w_all / w_trs
                coefs[j], used[j], lams[j] = ridge_fit(A_S, y_S, lam), "ridge", lam / w_all
                continue
            if refit == "min_norm":
                coefs[j], used[j] = min_norm_lstsq(A_S, y_S), "min_norm"
                continue
            c, used[j], lam = _guarded_refit(
                A_S, y_S, am, refit, target[j], est.activation,
                lambda lam_grid, j=j: _holdout_ridge_errors(held[j], lam_grid,
                                                            w_trs / w_all, val_scale))
            coefs[j] = c
            lams[j] = None if lam is None else lam / w_all
    return coefs, used, lams, a_mean
