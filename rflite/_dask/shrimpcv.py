r"""SHRIMPCV (:class:`rflite.imp.SHRIMPCV`) fitted on a Dask ``X`` (private).

The in-memory K-fold search over the (q, prune rate, step, ridge penalty)
grid, with every fold's matrices replaced by triangular factors, as in the
SHRIMP Dask fit (:func:`rflite._dask.shrimp.fit_shrimp`): for the folds of
``cv`` (the in-memory folds, :func:`rflite._dask.auto.make_folds`) and every
candidate feature map,

* one pass of per-group statistics (:func:`rflite._dask.auto.group_stats`)
  gives each fold's weighted training means (the centring) and the baseline
  of predicting them;
* one TSQR per fold (:func:`rflite._dask.shrimp._tsqr`) gives the factors
  :math:`R_{tr}, R_{te}` of the fold's centred, :math:`\sqrt{w}`-scaled
  training and test rows; since :math:`\|Ac - y\| = \|R_{:, :n} c -
  R_{:, n}\|` for every ``c``, the pruning paths and the (step, penalty)
  scores of :func:`rflite._imp.guard._step_penalty_scores` run on the factors with
  the errors rescaled from their L rows to the fold's test weight;
* the choice is :meth:`rflite.imp.SHRIMPCV._choose_grid`, the in-memory rule;
* the final fit is one more TSQR of all rows for the chosen map, the path to
  the chosen step on its factor, and the chosen ridge penalty or the guarded
  refit, whose K-fold ridge errors come from the fold factors kept; with
  ``average_folds`` the K fold models of the chosen point come from those
  factors too (:func:`rflite._imp.select._point_model`), no further pass.

``n_features=None`` takes the in-memory rule's N on the distinct rows of
``(X, y)`` (:func:`rflite._dask.split.canonical_rows`, one pass).  When the
folds' training parts have fewer distinct rows than a map has columns
(:func:`_folds_underdetermined`: the default below about 25,000 rows), the
rows are smaller than the factors and the in-memory fit runs on them on the
client (:func:`rflite._dask.shrimp._fit_on_client`), the same model bit for
bit; solving those minimum-norm systems from the factors changed the paths'
pruning on ill-conditioned dictionaries.

Passes: per candidate q one statistics pass and K TSQRs, then one TSQR;
memory per task one chunk of features and a few L x L factors
(``L = n_columns + n_targets``), so pass ``n_features`` (the default
N = 10^4 weights would make 2 x 10^4-column factors).  Agreement with the
in-memory fit: the same choice and supports on well-conditioned
dictionaries (coefficients to 1e-11 in the tests); the ridge penalties of
the grid come from power iterations started from another vector on the
factors (as in the SHRIMP Dask fit), so the scores with a ridge penalty
agree to a few times 1e-3.  q = 1 dictionaries (condition ~1e12)
are determined only to that condition times the rounding, here as in
memory, and their scores may differ more.
"""

from __future__ import annotations

import time

import numpy as np

from rflite._dask.operator import DaskFeatureOperator
from rflite._dask.prepare import _prepare
from rflite._dask.operator import reports_passes
from rflite._core.validation import check_bool
from rflite._core.linalg import ridge_fit
from rflite._core.random import spawn_streams

__all__ = ["fit_shrimpcv"]


def _fold_factors(fmap, X, Y, W, folds, f, st, fit_intercept):
    """Centred, weighted factors of fold ``f``'s training and test rows, and their weights."""
    from rflite._dask.shrimp import _tsqr

    n, k = fmap.n_columns, Y.shape[1]
    w_tr, w_te = folds.sums(st["w"], f, 1), folds.sums(st["w"], f, 2)
    if fit_intercept:
        y_mean = folds.sums(st["y"], f, 1) / w_tr
        a_mean = folds.sums(st["a"], f, 1) / w_tr
    else:
        y_mean, a_mean = np.zeros(k), None
    W_fold = folds.weight(W, f, 1) + folds.weight(W, f, 2)  # rows outside the fold: 0
    V = folds.weight(None, f, 2) > 0
    op = DaskFeatureOperator(fmap, X, col_mean=a_mean)
    R_tr, R_te = _tsqr(X, Y, V, W_fold, op._state_node(), np.arange(n), y_mean, True)
    return dict(R_tr=R_tr, R_te=R_te, w_tr=float(w_tr), w_te=float(w_te), a_mean=a_mean,
                y_mean=y_mean)


def _train_extent(Y, W, folds, fold_ids, y_means):
    """Per fold: the largest :math:`\\sqrt{w}|y - \\bar y|` over its training rows (per
    output) and the number of training rows, computed together (one pass over ``y``)."""
    import dask
    import dask.array as da

    todo = []
    for f, ym in zip(fold_ids, y_means):
        wt = folds.weight(W, f, 1)
        todo.append((da.max(da.sqrt(wt) * abs(Y - ym), axis=0), (wt > 0).sum()))
    return dask.compute(*todo)


def _fold_scores(fac, n, k, rates, est, refit, ys, n_rows):
    """One fold's scores of every (rate, step, penalty) for one map, averaged over outputs."""
    from rflite._imp.guard import _step_penalty_scores
    from rflite.imp import _shared_paths

    R_tr, R_te = fac["R_tr"], fac["R_te"]
    L = R_tr.shape[0]
    scale = L / fac["w_te"]  # mean over the factor's L rows -> per unit test weight
    tables = [[] for _ in rates]
    for kk in range(k):
        paths = _shared_paths(R_tr[:, :n], R_tr[:, n + kk], rates, A_val=R_te[:, :n],
                              y_val=R_te[:, n + kk], n_steps=est.n_steps,
                              min_features=min(est.min_features, n), schedule=est.schedule)
        for i, path in enumerate(paths):
            path = path._replace(val_mse=path.val_mse * scale)
            table = _step_penalty_scores(R_tr[:, :n], R_tr[:, n + kk], R_te[:, :n],
                                         R_te[:, n + kk], path, fac["a_mean"], refit, scale,
                                         ys=float(ys[kk]), n_rows=int(n_rows))
            tables[i].append(table.ravel())
    return [np.mean(t, axis=0) for t in tables]


def _kfold_ridge_errors(factors, S, n, kk, lams, w_all):
    """:func:`rflite._imp.guard._kfold_ridge_errors` from the fold factors of the chosen map."""
    from rflite._imp.guard import _in_proportion, _ridge_family, _spectral_norm

    rows, oks = [], []
    for fac in factors:
        A, yt = fac["R_tr"][:, S], fac["R_tr"][:, n + kk]
        pred, C = _ridge_family(A, yt, fac["R_te"][:, S], np.asarray(lams) * fac["w_tr"] / w_all)
        rows.append(np.sum((pred - fac["R_te"][:, n + kk][:, None]) ** 2, axis=0) / fac["w_te"])
        oks.append(_in_proportion(C, _spectral_norm(A), float(np.linalg.norm(yt))))
    return np.vstack(rows).mean(axis=0), np.all(np.vstack(oks), axis=0)


def _factor_fold_model(fac, n, k, rate, step, penalty, est):
    """:func:`rflite._imp.select._fold_model` on a fold's factor: ``[(S, c, b)]`` per output."""
    from rflite._imp.select import _point_model

    R = fac["R_tr"]
    return _point_model(R[:, :n], R[:, n:n + k], fac["a_mean"], fac["y_mean"], rate, step,
                        penalty, min(est.min_features, n), est.schedule)


def _folds_underdetermined(est, d, qs, n_weights, n_distinct) -> bool:
    """Do the folds' training parts have fewer distinct rows than some map has columns?

    Then the in-memory fit solves minimum-norm systems whose rows are the
    training rows, the TSQR factors (``L x L``, ``L`` the columns) are larger
    than the rows, and solving from them would change the paths' pruning on
    ill-conditioned dictionaries (:func:`rflite._dask.shrimp._underdetermined`).
    The column counts do not depend on the draw.
    """
    from rflite._core.folds import DEFAULT_FOLDS, check_cv
    from rflite.imp import _shrimp_map

    n_folds = DEFAULT_FOLDS if est.cv is None else check_cv(est.cv).get_n_splits()
    n_train = n_distinct - n_distinct // max(n_folds, 2)
    cols = 0
    for q, n_w in zip(qs, n_weights):
        est._n_weights = n_w
        cols = max(cols, _shrimp_map(est, d, q, np.random.default_rng(0)).n_columns)
    return n_train < cols


@reports_passes
def fit_shrimpcv(est, X, y, sample_weight=None):
    """:meth:`rflite.imp.SHRIMPCV.fit` on a Dask ``X`` (and ``y``, ``sample_weight``).

    Sets the in-memory fit's attributes (``q_``, ``prune_rate_``,
    ``best_step_``, ``cv_results_``, ``refit_``, ``ridge_lam_``, ``path_``
    ...) plus ``dask_passes_`` and ``dask_fit_seconds_``.
    """
    import dask
    import dask.array as da

    from rflite._dask.auto import (_baselines, _usable_folds, check_finite_stats, group_stats,
                                   make_folds)
    from rflite._dask.shrimp import _fit_on_client, _tsqr
    from rflite._dask.split import canonical_rows
    from rflite._imp.cv import _cv_fit
    from rflite._imp.guard import RIDGE_EXPONENTS, _guarded_refit, _sigma_max, _warn_magnitude
    from rflite.imp import (_auto_n_features, _average_models, _blas_threads, _shrimp_map,
                            shrimp_path)

    X, Y, one_d, W, _ = _prepare(est, X, y, sample_weight, weights=True)
    m, d = X.shape
    k = Y.shape[1]
    qs, rates, mean_factor, refit = est._check_params(d)
    fit_intercept = check_bool(est.fit_intercept, "fit_intercept")
    t0 = time.perf_counter()
    # n_features=None: the in-memory rule on the distinct rows of (X, y)
    canon = canonical_rows(X, Y, W)
    n_weights = [est.n_features if est.n_features is not None
                 else _auto_n_features(m if canon is None else canon.n_groups, d, q) for q in qs]
    if canon is not None and _folds_underdetermined(est, d, qs, n_weights, canon.n_groups):
        return _fit_on_client(est, X, Y, W, one_d, _cv_fit, t0)
    rng = est._rng()
    streams = spawn_streams(rng, len(qs))
    fmaps = []
    for q, s_, n_w in zip(qs, streams, n_weights):
        est._n_weights = n_w
        fmaps.append(_shrimp_map(est, d, q, s_))
    grid = est._grid(fmaps, rates)
    # the in-memory folds (None: row_folds of the distinct rows, drawn from
    # the stream after the features, as in memory)
    folds = make_folds(est.cv, X, y, W, rng, est)
    W1 = da.ones((m, 1), chunks=(X.chunks[0], (1,))) if W is None else W
    passes, per_map, stats = [], [], []
    fold_ids = None
    for fm in fmaps:
        st, op = group_stats(fm, X, Y, W, folds, with_features=True)
        check_finite_stats(st)
        passes += op.pass_seconds
        if fold_ids is None:
            fold_ids = _usable_folds(folds, st, range(folds.n_folds))
            if len(fold_ids) < 2:
                raise ValueError(f"cv={est.cv!r} leaves {len(fold_ids)} usable fold(s) with "
                                 "positive training and test weight; SHRIMPCV needs 2")
        facs = []
        for f in fold_ids:
            t1 = time.perf_counter()
            facs.append(_fold_factors(fm, X, Y, W1, folds, f, st, fit_intercept))
            passes.append(("tsqr", time.perf_counter() - t1))
        per_map.append(facs)
        stats.append(st)
    extents = _train_extent(Y, W1, folds, fold_ids, [fac["y_mean"] for fac in per_map[0]])
    scores = []
    for a, f in enumerate(fold_ids):
        ys, n_rows = extents[a]
        row = []
        for fm, facs in zip(fmaps, per_map):
            n = fm.n_columns
            with _blas_threads(n + k):
                row += _fold_scores(facs[a], n, k, rates, est, refit, np.atleast_1d(ys),
                                    n_rows)
        scores.append(np.concatenate(row))
    scores = np.array(scores)
    baseline = _baselines(folds, stats[0], fold_ids).mean(axis=1)
    best = est._choose_grid(scores, baseline, grid, qs, rates, mean_factor)
    i, j, t, n_t, pen = grid[best]
    # the final fit on all rows, centred with their (weighted) means
    fm, st, n = fmaps[i], stats[i], fmaps[i].n_columns
    w_all = float(st["w"].sum())
    if fit_intercept:
        y_mean, a_mean = st["y"].sum(axis=0) / w_all, st["a"].sum(axis=0) / w_all
    else:
        y_mean, a_mean = np.zeros(k), None
    op = DaskFeatureOperator(fm, X, col_mean=a_mean)
    V = da.zeros((m, 1), dtype=bool, chunks=(X.chunks[0], (1,)))
    t1 = time.perf_counter()
    R = _tsqr(X, Y, V, W1, op._state_node(), np.arange(n), y_mean, False)
    passes.append(("tsqr", time.perf_counter() - t1))
    target = np.asarray(dask.compute(da.max(da.where(W1 > 0, abs(Y - y_mean), 0.0),
                                            axis=0))[0], dtype=np.float64).reshape(-1)
    est.target_scale_ = target
    est.target_mean_ = np.asarray(y_mean, dtype=np.float64).reshape(-1)
    est.n_features_ = fm.n_features
    paths, supports, coefs, used, lams = [], [], [], [], []
    with _blas_threads(n + k):
        for kk in range(k):
            path = shrimp_path(R[:, :n], R[:, n + kk], prune_rate=rates[j], n_steps=t,
                               min_features=min(est.min_features, n), schedule=est.schedule)
            S = path.supports[-1]
            paths.append(path)
            supports.append(S)
            if pen:
                lam = _sigma_max(R[:, S]) ** 2 * 10.0 ** -RIDGE_EXPONENTS[pen - 1]
                coefs.append(ridge_fit(R[:, S], R[:, n + kk], lam))
                used.append("ridge")
                lams.append(lam / w_all)
                continue
            c, how, lam = _guarded_refit(
                R[:, S], R[:, n + kk], None if a_mean is None else a_mean[S], refit,
                target[kk], est.activation,
                lambda lam_grid, S=S, kk=kk: _kfold_ridge_errors(per_map[i], S, n, kk,
                                                                 lam_grid, w_all),
                c_min_norm=path.coefs[-1])
            coefs.append(c)
            used.append(how)
            lams.append(None if lam is None else lam / w_all)
    est.path_ = paths[0] if one_d else paths
    est.refit_ = used[0] if one_d else used
    est.ridge_lam_ = lams[0] if one_d else lams
    est._finish(fm, supports, coefs, a_mean, y_mean)
    _warn_magnitude(est, a_mean)
    est.n_models_ = 1
    if fit_intercept and not scores[:, best].mean() < baseline.mean():
        # no grid point beats predicting the training mean: the model is that mean
        est.refit_ = "mean" if one_d else ["mean"] * k
        est.ridge_lam_ = None if one_d else [None] * k
        est._finish(fm, [np.zeros(0, np.int64)] * k, [np.zeros(0)] * k, None, y_mean)
    elif est.average_folds:
        # the fold models of the chosen point, from the fold factors kept
        with _blas_threads(n + k):
            fold_models = [_factor_fold_model(fac, n, k, rates[j], t, pen, est)
                           for fac in per_map[i]]
        _average_models(est, fold_models)
        _warn_magnitude(est)
    est.dask_passes_ = passes
    est.dask_fit_seconds_ = time.perf_counter() - t0
    return est
