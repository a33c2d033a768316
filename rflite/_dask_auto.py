r"""The ``"auto"`` regularisation of the Dask fits (private; see :mod:`rflite._dask`).

Row labels by a hash of the row values (:class:`_RowSplit`), the operator of
a fold's training rows (:class:`_MaskedOperator`), ``lam="auto"`` for ridge
from one pass of per-fold sufficient statistics (:func:`choose_ridge_lam`)
and the ``s`` / ``lam`` choice of HARFE (:func:`choose_harfe`).  Split out of
:mod:`rflite._dask`, which re-exports the public names.
"""

from __future__ import annotations

import numpy as np

from rflite._dask import (DaskFeatureOperator, _broadcast, _client, _n_threads, _State,
                          harfe_dask)

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


