r"""Regularisation chosen from the data on Dask input: folds, fold statistics, choices (private).

Used by :func:`rflite._dask.backend.fit_harfe` and :func:`rflite._dask.backend.fit_ridge`
(:mod:`rflite._dask.backend` re-exports the public names) for the ``"auto"``
defaults and for the CV estimators :class:`rflite.htp.HARFECV` and
:class:`rflite.ridge.RandomFeatureRidgeCV` on Dask arrays.

Folds (:func:`make_folds`, :class:`_Folds`)
    Every row carries a *group* label (a Dask int array with ``X``'s row
    chunks) and a small table says, per group and fold, whether its rows are
    training rows, validation rows or neither.  ``cv=None`` (the ``"auto"``
    choices): the in-memory :func:`rflite._core.folds.row_folds` of the
    distinct kept rows (:func:`rflite._dask.split.distinct_row_folds`), group
    f validating fold f (a row of zero weight takes the fold of the kept row
    it equals, else group 5, in no fold: its weight makes it count for
    nothing either way).  An int or a splitter ``cv`` (the CV
    estimators): the in-memory folds -- :func:`rflite.ridge.resolve_splits`
    on the row count (an int K is scikit-learn's unshuffled ``KFold(K)``,
    contiguous blocks of rows), after dropping the zero-weight rows exactly
    as the in-memory ``fit`` does -- so the folds *are* the in-memory ones.
    An int K (and an unshuffled :class:`rflite._core.folds.KFold`) is labelled
    chunk by chunk from each row's rank among the kept rows
    (:func:`_kfold_folds`: O(chunks) numbers on the client); the (m,) group
    labels of any other splitter are built on the client (8 bytes a row,
    like the folds' index arrays themselves) and sent with ``X``'s chunks.
A fold's training rows
    are the operator with 0/1 (or ``w`` x 0/1) row weights
    (:class:`rflite._dask.backend.DaskFeatureOperator`'s ``row_weight``): the
    validation rows' features are scaled by zero, which is what dropping
    them does to every sum.
Fold statistics
    :func:`group_stats`: one pass giving, per group, the weighted row count,
    the sums of ``y`` and ``y^2``, the feature column sums and (ridge) the
    Gram matrices; a fold's training (validation) statistics are the sums
    over its training (validation) groups.
"""

from __future__ import annotations

import numbers

import numpy as np

from rflite._dask.operator import DaskFeatureOperator
from rflite._dask.split import distinct_row_folds, fold_label_array
from rflite._dask.htp import harfe_dask
from rflite._core.linalg import shifted_eigenvalues


def _k_lookup(Lb, table):
    """``table[label]`` for every row of a chunk of group labels: an (rows, 1) float array."""
    return table[np.asarray(Lb)[:, 0]].reshape(-1, 1)


class _Folds:
    """Group labels of the rows (Dask, ``X``'s row chunks) and each group's part in each fold.

    ``member[g, f]`` is 1 when group g's rows train fold f, 2 when they
    validate it, 0 when fold f does not use them.
    """

    def __init__(self, labels, member, distinct=None):
        self.labels = labels
        self.member = np.asarray(member, dtype=np.int8)
        self.n_groups, self.n_folds = self.member.shape
        #: for the default folds, ``(DistinctRows, group of each)``: the counts
        #: HARFE's penalty needs come without another pass
        self.distinct = distinct

    def fold_counts(self):
        """``(distinct rows, distinct training rows per fold, test rows per fold)``.

        The first two count distinct kept rows (HARFE's penalty); the test
        rows count copies (the hold-out rule of :func:`default_fold_ids`).
        Only for the default folds (``distinct`` set); ``None`` otherwise.
        """
        if self.distinct is None:
            return None
        rows, groups = self.distinct
        test = self.member[groups] == 2  # (distinct rows, folds)
        train_distinct = (self.member[groups] == 1).sum(axis=0)
        test_rows = (test * rows.copies[:, None]).sum(axis=0)
        return rows.size, train_distinct.astype(np.int64), test_rows.astype(np.int64)

    def weight(self, W, fold, part):
        """Row weights of fold ``fold``'s training (``part=1``) or validation (2) rows (lazy)."""
        import dask.array as da

        table = (self.member[:, fold] == part).astype(np.float64)
        mask = da.map_blocks(_k_lookup, self.labels, table=table, dtype=np.float64,
                             meta=np.empty((0, 0)), token="rflite-fold-mask")
        return mask if W is None else W * mask

    def sums(self, values, fold, part):
        """Sum over the groups of ``fold``'s training (1) or validation (2) rows."""
        return values[self.member[:, fold] == part].sum(axis=0)


def make_folds(cv, X, y, W, rng, est, n_folds=None):
    """The :class:`_Folds` of ``cv`` for a Dask ``X`` (module notes).

    ``cv=None``: the in-memory default, :func:`rflite._core.folds.row_folds`
    over the kept rows (drawn from ``rng``, the estimator's stream after the
    features, as in memory), found by
    :func:`rflite._dask.split.distinct_row_folds`; a row of zero weight
    belongs to no fold.  Otherwise the
    in-memory folds of ``cv`` over the rows with positive weight
    (:func:`rflite.ridge.resolve_splits`); a splitter sees an all-zero
    stand-in of ``X`` with the right shape (the in-memory splitters read
    only its length) and the computed ``y``.
    """
    import dask.array as da

    from rflite._core.backend import is_dask_array
    from rflite._core.folds import DEFAULT_FOLDS, resolve_splits

    m, d = X.shape
    if cv is None:
        K = DEFAULT_FOLDS if n_folds is None else n_folds
        rows, groups = distinct_row_folds(X, W, K, rng)
        member = np.where(np.eye(K, dtype=bool), 2, 1)
        if W is not None:  # group K: rows of zero weight equal to no kept row
            member = np.vstack([member, np.zeros((1, K))])
        return _Folds(fold_label_array(X, rows, groups, missing=K), member, (rows, groups))
    kfold = _contiguous_kfold(cv)
    if kfold is not None:
        return _kfold_folds(kfold, X, W)
    kept = None
    if W is not None:
        w = np.asarray(W[:, 0].compute())
        kept = w > 0
        if kept.all():
            kept = None
    idx = np.arange(m) if kept is None else np.flatnonzero(kept)
    if isinstance(cv, numbers.Integral):  # KFold reads only the row count
        yy = np.zeros(idx.size)
    else:  # a splitter may read y (stratification): computed to the client
        yy = np.asarray(y.compute() if is_dask_array(y) else y)
        if kept is not None:
            yy = yy[kept]
    stand_in = np.broadcast_to(np.zeros((1, d)), (idx.size, d))
    splits = resolve_splits(cv, stand_in, yy.reshape(idx.size, -1), rng, kept=kept)
    K = len(splits)
    if K <= 39:  # base-3 codes of (neither, train, test) per fold fit in int64
        codes = np.zeros(m, dtype=np.int64)
        for f, (tr, te) in enumerate(splits):
            codes[idx[tr]] += 3 ** f
            codes[idx[te]] += 2 * 3 ** f
        uniq, inv = np.unique(codes, return_inverse=True)
        member = (uniq[:, None] // 3 ** np.arange(K, dtype=np.int64)) % 3
    else:
        M = np.zeros((m, K), dtype=np.int8)
        for f, (tr, te) in enumerate(splits):
            M[idx[tr], f], M[idx[te], f] = 1, 2
        member, inv = np.unique(M, axis=0, return_inverse=True)
    labels = da.from_array(inv.reshape(m, 1).astype(np.int64), chunks=(X.chunks[0], (1,)))
    return _Folds(labels, member)


def default_fold_ids(est, folds):
    """The folds a choice validates on, as :class:`rflite._core.selection.AutoChoice` does.

    A CV estimator (it has ``cv``): every fold.  A default estimator on the
    default folds: :func:`rflite._core.selection.auto_fold_ids` of their
    test-row counts.
    """
    from rflite._core.selection import auto_fold_ids

    counts = folds.fold_counts()
    if hasattr(est, "cv") or counts is None:
        return list(range(folds.n_folds))
    return auto_fold_ids(counts[2])


def _contiguous_kfold(cv):
    """The :class:`rflite._core.folds.KFold` of an int ``cv`` or an unshuffled rflite ``KFold``, else None.

    Those folds are contiguous ranges of the kept rows, which
    :func:`_kfold_folds` labels chunk by chunk.
    """
    from rflite._core.folds import KFold, check_cv

    if isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
        return check_cv(cv)
    if type(cv) is KFold and not cv.shuffle:
        return cv
    return None


def _k_kept_count(Wb):
    """Rows of positive weight in a chunk of ``W``: a (1, 1) array."""
    return np.array([[np.count_nonzero(np.asarray(Wb)[:, 0] > 0)]], dtype=np.int64)


def _k_kfold_labels(Bb, bounds, offsets, weighted, block_info=None):
    """Fold of every row of a chunk from its rank among the kept rows (K: a dropped row)."""
    i = block_info[None]["chunk-location"][0]
    keep = (np.asarray(Bb)[:, 0] > 0) if weighted else np.ones(Bb.shape[0], dtype=bool)
    rank = offsets[i] + np.cumsum(keep) - 1
    lab = np.searchsorted(bounds, rank, side="right").astype(np.int64)
    lab[~keep] = bounds.size
    return lab.reshape(-1, 1)


def _kfold_folds(kfold, X, W):
    """:class:`_Folds` of an unshuffled K-fold over the rows of positive weight, chunk-local.

    The in-memory folds (:func:`rflite.ridge.resolve_splits`: scikit-learn's
    ``KFold(K)`` after the zero-weight rows are dropped) are contiguous
    ranges of the kept rows, so a row's fold follows from its rank among
    them: the chunk's offset (the kept rows of the earlier chunks, one small
    pass over ``W``; the chunk sizes without weights) plus a count inside the
    chunk.  Group f holds fold f's test rows, group K the dropped rows.  The
    client holds O(chunks) numbers and the graph no m-long array (the old
    route built (m,) labels on the client and embedded them in the graph).
    """
    import dask.array as da

    chunks = X.chunks[0]
    if W is None:
        counts = np.asarray(chunks, dtype=np.int64)
    else:
        counts = np.asarray(W.map_blocks(
            _k_kept_count, chunks=((1,) * len(chunks), (1,)), dtype=np.int64,
            meta=np.empty((0, 0), np.int64), token="rflite-kept-count").compute()).reshape(-1)
    n = int(counts.sum())
    sizes = kfold.fold_sizes(n)
    K = sizes.size
    offsets = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    labels = da.map_blocks(_k_kfold_labels, X if W is None else W, bounds=np.cumsum(sizes),
                           offsets=offsets, weighted=W is not None, chunks=(chunks, (1,)),
                           dtype=np.int64, meta=np.empty((0, 0), np.int64),
                           token="rflite-kfold-labels")
    member = np.where(np.eye(K, dtype=bool), 2, 1).astype(np.int8)
    if n < X.shape[0]:
        member = np.vstack([member, np.zeros((1, K), dtype=np.int8)])
    return _Folds(labels, member)


def _k_group_stats(Xb, Lb, Yb, *rest, n_groups, with_features, gram):
    """Per group: ``[sum w, sum w y (k), sum w y^2 (k), (sum w a (N)), (A^T W A, A^T W Y)]``.

    The features are evaluated in row blocks (:meth:`rflite._dask.backend._State.blocks`).
    """
    state = rest[-1]
    w = np.asarray(rest[0], dtype=np.float64)[:, 0] if len(rest) == 2 else None
    lab = np.asarray(Lb)[:, 0]
    Yb = np.asarray(Yb, dtype=np.float64)
    feats = with_features or gram
    dtype = np.complex128 if (feats and state.fmap.is_complex) else np.float64
    n, k = state.fmap.n_columns, Yb.shape[1]
    sw = np.zeros(n_groups)
    sy, syy = np.zeros((n_groups, k)), np.zeros((n_groups, k))
    sa = np.zeros((n_groups, n), dtype=dtype) if feats else None
    G = np.zeros((n_groups, n, n), dtype=dtype) if gram else None
    B = np.zeros((n_groups, n, k), dtype=dtype) if gram else None
    for g in range(n_groups):
        r = lab == g
        Yg = Yb[r]
        wg = np.ones(Yg.shape[0]) if w is None else w[r]
        sw[g], sy[g], syy[g] = wg.sum(), wg @ Yg, wg @ (Yg * Yg)
    if feats:
        for r0, r1, A in state.blocks(Xb):
            lb = lab[r0:r1]
            wb = np.ones(r1 - r0) if w is None else w[r0:r1]
            for g in range(n_groups):
                r = lb == g
                if not r.any():
                    continue
                Ag, wg = A[r], wb[r]
                sa[g] += wg @ Ag
                if gram:
                    Yg = Yb[r0:r1][r]
                    if w is not None:
                        sq = np.sqrt(wg)[:, None]
                        Ag, Yg = Ag * sq, Yg * sq
                    G[g] += Ag.T @ Ag
                    B[g] += Ag.T @ Yg
    parts = []
    for g in range(n_groups):
        parts += [[sw[g]], sy[g], syy[g]]
        if feats:
            parts.append(sa[g])
        if gram:
            parts += [G[g].ravel(), B[g].ravel()]
    return np.concatenate([np.asarray(p, dtype=dtype).ravel() for p in parts]).reshape(1, -1)


def group_stats(fmap, X, Y, W, folds, *, with_features, gram=False):
    """One pass of :func:`_k_group_stats`: a dict of per-group arrays and the operator."""
    op = DaskFeatureOperator(fmap, X)
    G, k, n = folds.n_groups, Y.shape[1], fmap.n_columns
    width = 1 + 2 * k + (n if (with_features or gram) else 0) + (n * n + n * k if gram else 0)
    dtype = np.complex128 if (fmap.is_complex and (with_features or gram)) else np.float64
    arrays = [folds.labels, Y] + ([] if W is None else [W])
    out = op._reduce(_k_group_stats, arrays, G * width, dtype, n_groups=G,
                     with_features=with_features, gram=gram).reshape(G, width)
    st = {"w": out[:, 0].real, "y": out[:, 1:1 + k].real, "yy": out[:, 1 + k:1 + 2 * k].real}
    j = 1 + 2 * k
    if with_features or gram:
        st["a"] = out[:, j:j + n] if fmap.is_complex else out[:, j:j + n].real
        j += n
    if gram:
        st["G"] = out[:, j:j + n * n].real.reshape(G, n, n)
        st["B"] = out[:, j + n * n:].real.reshape(G, n, k)
    return st, op


def check_finite_stats(st):
    """``ValueError`` naming ``y`` or ``X`` when a pass's sums are not finite.

    A NaN or infinite entry in a chunk makes every sum it enters NaN or
    infinite, so the sums of one pass tell, at no extra cost, what the
    in-memory checks would have refused (and which input held it).
    """
    if not (np.all(np.isfinite(st["y"])) and np.all(np.isfinite(st["yy"]))):
        raise ValueError("y contains NaN or infinite values (or values too large to square)")
    if "a" in st and not np.all(np.isfinite(st["a"])):
        raise ValueError("X contains NaN or infinite values (or values too large)")


def _usable_folds(folds, st, fold_ids):
    """Folds with positive training and validation weight (few distinct rows leave some empty)."""
    return [f for f in fold_ids
            if folds.sums(st["w"], f, 1) > 0 and folds.sums(st["w"], f, 2) > 0]


def _baselines(folds, st, fold_ids):
    """Validation MSE of predicting the (weighted) training mean, (n_folds, k) (``fold_baseline``)."""
    out = []
    for f in fold_ids:
        ym = folds.sums(st["y"], f, 1) / folds.sums(st["w"], f, 1)
        n_v = folds.sums(st["w"], f, 2)
        sse = folds.sums(st["yy"], f, 2) - 2 * ym * folds.sums(st["y"], f, 2) + n_v * ym ** 2
        out.append(np.maximum(sse, 0.0) / n_v)
    return np.array(out)


def _k_val_sse(Xb, Yb, Tb, state, U, a_mean, C, y_mean):
    """Weighted squared validation errors (rows of weight ``Tb > 0``) of ``(A_U - a_mean) C + y_mean``."""
    t = np.asarray(Tb, dtype=np.float64)[:, 0]
    r = t > 0
    if not r.any():
        return np.zeros((1, C.shape[1]))
    B = state.features(np.asarray(Xb)[r], U)
    if a_mean is not None:
        B -= a_mean
    E = (B @ C).real + y_mean - np.asarray(Yb, dtype=np.float64)[r][:, _target_index(C, Yb)]
    return (t[r] @ (E * E)).reshape(1, -1)


def _target_index(C, Yb):
    """Column ``j`` of ``C`` predicts target ``j % k`` (grid points outer, targets inner)."""
    k = np.shape(Yb)[1]
    return np.arange(C.shape[1]) % k


def _check_auto_input(est, fmap, what):
    if fmap.is_complex:
        fix = ("use RandomFeatureRidge with an explicit lam" if what.startswith("the ")
               else f"pass {what.split('=')[0]} explicitly")
        raise ValueError(f"{what} on Dask input needs real features, got activation="
                         f"{est.activation!r}; {fix}")


def _against_mean(est, fit_intercept) -> bool:
    """Whether a choice must also beat the training mean (``_compare_with_mean``, as in memory)."""
    return bool(getattr(est, "_compare_with_mean", False) and fit_intercept)


def _ridge_scores(st, folds, fold_ids, grid, fit_intercept):
    r"""Validation MSEs (len(fold_ids), len(grid), k) of ridge from a pass of group statistics.

    Fold f's training (validation) statistics are the sums over its training
    (validation) groups; they are centred with the training means by
    rank-one corrections, the centred training Gram is diagonalised once and
    the validation error of every ``lam`` (penalty :math:`\lambda
    \sum_{train} w`, as in memory) is :math:`\|\tilde Y\|_W^2 - 2\,
    \mathrm{tr}(C^T \tilde A^T W \tilde Y) + \mathrm{tr}(C^T \tilde A^T W
    \tilde A C)` with the validation rows centred by the training means,
    divided by the validation weight.
    """
    n, k = st["a"].shape[1], st["y"].shape[1]
    scores = np.empty((len(fold_ids), len(grid), k))
    for i, f in enumerate(fold_ids):
        n_t, n_v = folds.sums(st["w"], f, 1), folds.sums(st["w"], f, 2)
        sa_t, sy_t = folds.sums(st["a"], f, 1), folds.sums(st["y"], f, 1)
        G_t, B_t = folds.sums(st["G"], f, 1), folds.sums(st["B"], f, 1)
        sa_v, sy_v = folds.sums(st["a"], f, 2), folds.sums(st["y"], f, 2)
        G_v, B_v, syy_v = (folds.sums(st["G"], f, 2), folds.sums(st["B"], f, 2),
                           folds.sums(st["yy"], f, 2))
        mu = sa_t / n_t if fit_intercept else np.zeros(n)
        ym = sy_t / n_t if fit_intercept else np.zeros(k)
        Gc = G_t - n_t * np.outer(mu, mu)
        Bc = B_t - n_t * np.outer(mu, ym)
        # validation rows centred by the training means
        Gv = G_v - np.outer(mu, sa_v) - np.outer(sa_v, mu) + n_v * np.outer(mu, mu)
        Bv = B_v - np.outer(mu, sy_v) - np.outer(sa_v, ym) + n_v * np.outer(mu, ym)
        yy = syy_v - 2 * ym * sy_v + n_v * ym ** 2
        e, V = np.linalg.eigh((Gc + Gc.T) / 2)
        e = np.maximum(e, 0.0)
        b = V.T @ Bc
        H = V.T @ Gv @ V
        h = V.T @ Bv
        for j, lam in enumerate(grid):
            Z = b / shifted_eigenvalues(e, n_t * lam)[:, None]
            sse = yy - 2 * np.einsum("ij,ij->j", Z, h) + np.einsum("ij,ij->j", Z, H @ Z)
            scores[i, j] = np.maximum(sse, 0.0) / n_v
    return scores


def choose_ridge(est, fmap, X, Y, W, folds, grid, scales, rule, fit_intercept):
    r"""``scale_`` and ``lam_`` of ridge on Dask: the in-memory joint choice from group statistics.

    ``scales`` is a grid to search jointly with ``grid`` or one float factor.
    Per weight factor (:func:`rflite.ridge.scaled_map`) one
    pass (:func:`group_stats`) accumulates per group the weighted row count,
    the column sums, :math:`\sum w y`, :math:`\sum w y^2`, the uncentred
    Gram :math:`A_g^T W_g A_g` and :math:`A_g^T W_g Y_g` (G N x N partial
    Gram matrices per task); :func:`_ridge_scores` scores every ``lam``
    from them.  The grid is scale-major, as
    :func:`rflite.ridge.select_scale_and_lambda`'s, and the rule, the
    predict-the-mean guard and the test against the mean are
    :func:`rflite._core.selection.choose`'s, per output, as in memory.
    Errors computed as these differences lose about
    :math:`10^{-16}\|y\|^2` absolutely, which matters only for
    near-interpolating fits of noise-free data.  Returns ``(factors, lams,
    use_mean, passes)``, one of each per output.
    """
    from rflite._core.selection import choose
    from rflite.ridge import cv_results_per_output, scaled_map

    # the CV class has no lam (it searches lams): name what the user can change
    _check_auto_input(est, fmap, "the lams search" if hasattr(est, "lams") else "lam='auto'")
    searched = not isinstance(scales, float)
    scales = np.atleast_1d(np.asarray(scales, dtype=float))
    blocks, passes, fold_ids, base = [], [], None, None
    for factor in scales:
        st, op = group_stats(scaled_map(fmap, float(factor)), X, Y, W, folds,
                             with_features=True, gram=True)
        passes += op.pass_seconds
        if fold_ids is None:
            fold_ids = _usable_folds(folds, st, range(folds.n_folds))
            if not fold_ids:
                raise ValueError("lam='auto' needs at least 2 distinct rows of X "
                                 "(a validation split)")
            base = _baselines(folds, st, fold_ids)
        blocks.append(_ridge_scores(st, folds, fold_ids, grid, fit_intercept))
    scores = np.concatenate(blocks, axis=1)
    against = _against_mean(est, fit_intercept)
    choices = [choose(scores[:, :, t], rule=rule, baseline=base[:, t], against_mean=against)
               for t in range(Y.shape[1])]
    n_lam = len(grid)
    if not searched:
        est.cv_results_ = cv_results_per_output({"lam": np.asarray(grid)}, scores, choices)
    else:
        est.cv_results_ = cv_results_per_output(
            {"scale": np.repeat(scales, n_lam), "lam": np.tile(grid, len(scales))},
            scores, choices)
    factors = [float(scales[c.index // n_lam]) for c in choices]
    lams = [float(grid[c.index % n_lam]) for c in choices]
    return factors, lams, [bool(c.use_mean) for c in choices], passes


def fold_setup(fmap, X, W, folds, st, f, k, fit_intercept, normalize, passes):
    """Fold ``f``'s training problem on Dask, as the in-memory fold fits centre and scale it.

    Returns ``(n_t, n_v, W_t, W_v, a_mean, y_mean, scale, op)``: the training
    and validation weights (totals and lazy row weights), the training means
    (``None`` / zeros without ``fit_intercept``), the column factors (1 / the
    training-centred norms with ``normalize``: one pass, appended to
    ``passes``) and the training-rows operator (row weights ``w`` x 0/1).
    """
    n_t, n_v = folds.sums(st["w"], f, 1), folds.sums(st["w"], f, 2)
    W_t, W_v = folds.weight(W, f, 1), folds.weight(W, f, 2)
    a_mean, y_mean = None, np.zeros(k)
    if fit_intercept:
        y_mean = folds.sums(st["y"], f, 1) / n_t
        a_mean = folds.sums(st["a"], f, 1) / n_t
    scale = np.ones(fmap.n_columns)
    if normalize:
        opn = DaskFeatureOperator(fmap, X, col_mean=a_mean, row_weight=W_t)
        norms = opn.column_norms()
        passes += opn.pass_seconds
        nz = norms > 0
        scale[nz] = 1.0 / norms[nz]
    op = DaskFeatureOperator(fmap, X, col_mean=a_mean, col_scale=scale, row_weight=W_t)
    return n_t, n_v, W_t, W_v, a_mean, y_mean, scale, op


def choose_harfe(est, fmap, X, Y, W, folds, fold_ids, train_rows, points, rule, fit_intercept,
                 normalize):
    r"""``s_`` / ``lam_`` of HARFE on Dask: the in-memory fold scores, distributed.

    One pass of group statistics (:func:`group_stats`) gives every fold's
    (weighted) training means and the predict-the-mean baselines.  Then per
    validation fold: one pass for the training-centred column norms
    (``normalize``), HARFE (:func:`rflite._dask.backend.harfe_dask`) on the
    training-rows operator (row weights ``w`` x 0/1: the validation rows
    count for nothing) at every grid point, warm-started along the grid
    exactly like :func:`rflite.htp.harfe_grid` (penalty :math:`\lambda` times the
    fold's distinct training rows, ``train_rows[f]``), and *one* pass scoring every grid point
    on the validation rows (weighted squared errors; the union of the
    supports, all coefficient vectors at once).  The rule and guard are
    :func:`rflite._core.selection.choose`'s, per output, as in memory.  Every HARFE
    iteration is two passes, so the grid (20 points by default: 15 sparse
    and 5 ridge candidates keeping every column, each of those an N x N
    system on the client) costs about 20 x (iterations) x 2 passes per fold:
    on a cluster pass explicit ``s`` and ``lam`` when that is too slow.  Returns ``(chosen, use_mean,
    passes)`` with ``chosen`` one ``(s, lam)`` per output and ``use_mean``
    whether that output's choice lost to the training mean (tested as in
    memory when the estimator compares with the mean and fits an intercept).
    """
    from rflite._core.selection import choose
    from rflite.ridge import cv_results_per_output

    st, op0 = group_stats(fmap, X, Y, W, folds, with_features=fit_intercept)
    fold_ids = _usable_folds(folds, st, fold_ids)
    if not fold_ids:
        raise ValueError("the automatic choice of s / lam needs at least 2 distinct rows "
                         "of X; pass s and lam explicitly")
    m, k, n = X.shape[0], Y.shape[1], fmap.n_columns
    passes = list(op0.pass_seconds)
    scores = np.empty((len(fold_ids), len(points), k))
    for i, f in enumerate(fold_ids):
        n_t, n_v, W_t, W_v, a_mean, y_mean, scale, op = fold_setup(
            fmap, X, W, folds, st, f, k, fit_intercept, normalize, passes)
        import dask.array as da

        Yc = (Y - y_mean) * da.sqrt(W_t)
        # (n, n_points * k) coefficients of the raw features, column j * k + t
        C = np.zeros((n, len(points) * k), dtype=op.dtype)
        for t in range(k):
            prev = None
            for j, (s, lam) in enumerate(points):
                res = harfe_dask(op, Yc[:, t], s=int(s), lam=lam * train_rows[f] / m,
                                 mu=est.mu,
                                 max_iter=est.max_iter, tol=est.tol, c0=prev)
                prev = res.coef
                C[res.support, j * k + t] = res.coef[res.support] * scale[res.support]
        passes += op.pass_seconds
        U = np.flatnonzero(np.any(C != 0, axis=1))
        if U.size == 0:
            U = np.zeros(1, dtype=np.int64)
        plain = DaskFeatureOperator(fmap, X)
        sse = plain._reduce(_k_val_sse, [Y, W_v], C.shape[1], np.float64, U=U,
                            a_mean=None if a_mean is None else a_mean[U], C=C[U],
                            y_mean=np.tile(y_mean, len(points)))
        passes += plain.pass_seconds
        scores[i] = sse.reshape(len(points), k) / n_v
    base = _baselines(folds, st, fold_ids)
    against = _against_mean(est, fit_intercept)
    choices = [choose(scores[:, :, t], rule=rule, baseline=base[:, t], against_mean=against)
               for t in range(k)]
    est.cv_results_ = cv_results_per_output(
        {"s": np.array([p[0] for p in points]), "lam": np.array([p[1] for p in points])},
        scores, choices)
    chosen = [(int(points[c.index][0]), float(points[c.index][1])) for c in choices]
    return chosen, [bool(c.use_mean) for c in choices], passes
