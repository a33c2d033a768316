r"""The fit of :class:`~rflite.imp.SHRIMPCV` (private machinery of :mod:`rflite.imp`).

The (q, p, step, penalty) grid (:func:`_cv_grid`), scored on K folds by
:func:`rflite._imp.select._cv_fold_scores`; its choice by the rule with the
mean guard (:func:`_choose_grid`, for ``rule="1se_ridge"`` with
:func:`_strongest_penalty_within_se`); the refit of the choice on all rows
(:func:`_final_fit`) and the cross-validation committee of the refit and
the chosen point's fold models (:func:`_average_models`).
"""

from __future__ import annotations

import functools

import numpy as np

from rflite._core.backend import is_dask_array
from rflite._core.linalg import ridge_fit
from rflite._core.parallel import map_tasks
from rflite._core.progress import Progress
from rflite._core.random import spawn_streams
from rflite._core.validation import check_bool, check_choice, check_int, check_real
from rflite._imp.fit import _check_refit
from rflite._imp.guard import (RIDGE_EXPONENTS, _collapse_rows, _guarded_refit,
                               _kfold_ridge_errors, _mean_baseline, _sigma_max, _target_stats,
                               _warn_magnitude)
from rflite._imp.path import _blas_threads, _check_schedule, _shared_paths, prune_counts
from rflite._imp.select import (_auto_n_features, _check_memory_for, _check_qs, _check_rates,
                                _cv_fold_scores, _fold_model, _fold_splits, _n_rows,
                                _run_fold_model, _shrimp_map)


def _average_models(est, models):
    r"""Average ``est``'s fitted model with ``models`` (a cross-validation committee).

    ``models`` holds, per fold, ``[(support, coef, intercept)]`` per output
    (:func:`rflite._imp.select._fold_model`).  The result is the model whose
    prediction is the mean of the K + 1 predictions: coefficients averaged on
    the union of the supports, intercepts averaged; ``n_models_`` = K + 1.
    """
    one = getattr(est, "_one_d", True)
    C0 = est.coef_[:, None] if one else est.coef_
    b0 = np.atleast_1d(est.intercept_)
    n_out, n = C0.shape[1], len(models) + 1
    supports, coefs, intercepts = [], [], []
    for k in range(n_out):
        parts = [(est.support_, C0[:, k])] + [(fold[k][0], fold[k][1]) for fold in models]
        union = np.unique(np.concatenate([S for S, _ in parts]))
        c = np.zeros(union.size, dtype=np.result_type(*[v.dtype for _, v in parts]))
        for S, v in parts:
            np.add.at(c, np.searchsorted(union, S), v)
        supports.append(union)
        coefs.append(c / n)
        intercepts.append((b0[k] + sum(fold[k][2] for fold in models)) / n)
    est._finish(est.feature_map_, supports, coefs, None, np.array(intercepts))
    est.n_models_ = n


def _strongest_penalty_within_se(best, grid, choice, order):
    r"""Rule ``"1se_ridge"``'s second step: the strongest ridge penalty near ``best``.

    Among the grid points on the support of ``best`` (same map, rate and
    step) that refit with a ridge penalty, could be chosen by the rule
    (``choice.ok``: finite, within the mean guard) and have a mean fold error
    at most one standard error above ``best``'s, the one with the largest
    penalty; ``best`` itself when there is none.  This is the
    one-standard-error rule (Hastie, Tibshirani & Friedman 2009, Sec. 7.10;
    glmnet's ``lambda.1se``) over the refit's penalty only: the support stays
    the one of lowest error.  ``choice`` is :func:`rflite._core.selection.choose`'s
    outcome on the grid permuted by ``order``; ``grid`` holds the (map, rate,
    step, n_kept, penalty) points, penalty k >= 1 being
    :math:`\sigma_{\max}^2 10^{-e_k}` with e_k increasing in k.
    """
    at = np.empty(len(order), dtype=np.int64)
    at[order] = np.arange(len(order))  # grid position -> position in the choice
    limit = choice.mean[at[best]] + choice.se[at[best]]
    same = grid[best][:3]
    near = [g for g, point in enumerate(grid)
            if point[:3] == same and point[4] >= 1 and choice.ok[at[g]]
            and choice.mean[at[g]] <= limit]
    return min(near, key=lambda g: grid[g][4], default=best)


def _cv_fit(est, X, y, sample_weight=None):
    """Cross-validate the (q, p, step) grid, refit the choice on all rows; returns ``est``."""
    from rflite._core.selection import cross_validate_grid

    if is_dask_array(X):
        return est._fit_dask(X, y, sample_weight)
    n_rows = _n_rows(X)
    X, Y, w = est._validate_fit(X, y, sample_weight)
    m, d = X.shape
    qs, rates, mean_factor, refit = _check_cv_params(est, d)
    progress = Progress(est.verbose, "SHRIMPCV")
    n_distinct = _collapse_rows(X, Y, None)[0].shape[0]
    n_weights = [est.n_features if est.n_features is not None
                 else _auto_n_features(n_distinct, d, q) for q in qs]
    _check_memory_for(est, m, d, max(n_weights))
    est._record_input_range(X)
    rng = est._rng()
    streams = spawn_streams(rng, len(qs))
    fmaps = []
    for q, s_, n_w in zip(qs, streams, n_weights):
        est._n_weights = n_w
        fmaps.append(_shrimp_map(est, d, q, s_))
    # cv=None draws its folds from the stream after the features (as the
    # Dask fit and the other CV estimators do); other cv draw nothing
    splits = _fold_splits(est.cv, X, Y, sample_weight, n_rows, rng)
    grid = _cv_grid(est, fmaps, rates)
    fold = functools.partial(
        _cv_fold_scores, X=X, Y=Y, w=w, fmaps=fmaps, rates=rates, n_steps=est.n_steps,
        min_features=est.min_features, schedule=est.schedule,
        fit_intercept=check_bool(est.fit_intercept, "fit_intercept"), refit=refit)
    with _blas_threads(m):
        scores = cross_validate_grid(fold, splits, n_jobs=est.n_jobs, progress=progress)
    baseline = np.array([_mean_baseline(Y, w, tr, te) for tr, te in splits])
    best = _choose_grid(est, scores, baseline, grid, qs, rates, mean_factor)
    i, j, t, n_t, pen = grid[best]
    S = scores
    with _blas_threads(m):
        _final_fit(est, X, Y, w, fmaps[i], rates[j], t, pen, refit, splits)
    est.n_models_ = 1
    if est.fit_intercept and not S[:, best].mean() < baseline.mean():
        # no grid point beats predicting the training mean: the model is that mean
        est.refit_ = "mean" if getattr(est, "_one_d", True) else ["mean"] * Y.shape[1]
        est.ridge_lam_ = None if getattr(est, "_one_d", True) else [None] * Y.shape[1]
        est._finish(est.feature_map_, [np.zeros(0, np.int64)] * Y.shape[1],
                     [np.zeros(0)] * Y.shape[1], None, np.average(Y, axis=0, weights=w))
    elif est.average_folds:
        task = functools.partial(
            _fold_model, X=X, Y=Y, w=w, fmap=fmaps[i], rate=rates[j], step=t, penalty=pen,
            min_features=est.min_features, schedule=est.schedule,
            fit_intercept=check_bool(est.fit_intercept, "fit_intercept"))
        with _blas_threads(m):
            folds = map_tasks(_run_fold_model, [(task, tr) for tr, _ in splits],
                              executor=est.n_jobs)
        progress.line(f"{len(folds)} fold models of the chosen point averaged in")
        _average_models(est, folds)
        _warn_magnitude(est)
    progress.line(f"final fit q={qs[i]} p={rates[j]:g} step {t} ({n_t} columns, "
                  f"refit {est.refit_})",
                  error=float(S[:, best].mean()))
    return est


def _check_cv_params(est, d):
    """Validate the parameters for d inputs: ``(qs, rates, mean_factor, refit)``."""
    if est.n_features is not None:
        check_int(est.n_features, "n_features", minimum=1)
    qs = _check_qs(est.qs, d)
    rates = _check_rates(est.prune_rates)
    check_choice(est.rule, "rule", ("1se", "1se_ridge", "min"))
    mean_factor = check_real(est.mean_factor, "mean_factor", minimum=0.0, strict=True)
    refit = _check_refit(est.refit, allow_none=False)
    _check_schedule(rates[0], est.n_steps, est.min_features, est.schedule)
    check_choice(est.subsets, "subsets", ("auto", "all", "random"))
    check_bool(est.clip_inputs, "clip_inputs")
    check_bool(est.average_folds, "average_folds")
    return qs, rates, mean_factor, refit


def _cv_grid(est, fmaps, rates):
    r"""The (map, rate, step, n_kept, penalty) grid points, in the order of the scores.

    Penalty 0 is the minimum-norm fit, k >= 1 the ridge
    :math:`\sigma_{\max}^2 10^{-e_k}`, e_k in :data:`RIDGE_EXPONENTS`.
    """
    n_pen = 1 + len(RIDGE_EXPONENTS)
    grid = []
    for i, fm in enumerate(fmaps):
        for j, p in enumerate(rates):
            counts = prune_counts(fm.n_columns, p, n_steps=est.n_steps,
                                  min_features=min(est.min_features, fm.n_columns),
                                  schedule=est.schedule)
            grid += [(i, j, t, int(n), k) for t, n in enumerate(counts)
                     for k in range(n_pen)]
    return grid


def _choose_grid(est, scores, baseline, grid, qs, rates, mean_factor):
    """The grid point chosen from the fold scores; sets ``cv_results_`` and the choice."""
    from rflite._core.selection import choose

    n_pen = 1 + len(RIDGE_EXPONENTS)
    # simplest first: fewest columns, smaller q, smaller p, larger penalty
    # (the minimum-norm fit, penalty 0, is the least regularised)
    order = sorted(range(len(grid)), key=lambda g: (
        grid[g][3], qs[grid[g][0]], rates[grid[g][1]], grid[g][2],
        grid[g][4] if grid[g][4] else n_pen))
    base_rule = "min" if est.rule == "1se_ridge" else est.rule
    choice = choose(scores[:, order], rule=base_rule, baseline=baseline,
                    mean_factor=mean_factor)
    best = order[choice.index]
    if est.rule == "1se_ridge" and not choice.guarded:
        best = _strongest_penalty_within_se(best, grid, choice, order)
    i, j, t, n_t, pen = grid[best]
    # non-finite fold errors (exploded or skipped refits) count as infinitely
    # bad, as in the choice; their std is then nan, without numpy's warning
    S = np.where(np.isfinite(scores), scores, np.inf)
    with np.errstate(invalid="ignore"):
        std = S.std(axis=0)
        se = (S.std(axis=0, ddof=1) / np.sqrt(S.shape[0]) if S.shape[0] > 1
              else np.zeros(S.shape[1]))
    est.cv_results_ = {
        "q": np.array([qs[g[0]] for g in grid]),
        "prune_rate": np.array([rates[g[1]] for g in grid]),
        "step": np.array([g[2] for g in grid]),
        "n_kept": np.array([g[3] for g in grid]),
        "ridge_rel": np.array([10.0 ** -RIDGE_EXPONENTS[g[4] - 1] if g[4] else 0.0
                               for g in grid]),
        "mean_test_mse": S.mean(axis=0),
        "std_test_mse": std,
        "se_test_mse": se,
        "baseline_mse": baseline,
    }
    for k in range(S.shape[0]):
        est.cv_results_[f"split{k}_test_mse"] = S[k]
    est.best_index_ = int(best)
    est.cv_guarded_ = bool(choice.guarded)
    est.q_, est.prune_rate_, est.best_step_, est.n_kept_ = qs[i], rates[j], t, n_t
    return best


def _final_fit(est, X, Y, w, fmap, rate, t, pen, refit, splits):
    """The path of the chosen (map, rate) on all rows to step ``t``, refitted with
    penalty ``pen`` (0: the guarded minimum-norm refit, ridge chosen by ``splits``)."""
    Xu, Yu, wu = _collapse_rows(X, Y, w)
    A, Yc, a_mean, y_mean = est._center_and_weight(fmap.transform(Xu), Yu, wu)
    est.n_features_ = fmap.n_features
    est.target_mean_, est.target_scale_ = _target_stats(Y, w)
    paths, supports, coefs, used, lams = [], [], [], [], []
    w_all = float(np.sum(w)) if w is not None else float(X.shape[0])
    for k in range(Y.shape[1]):
        path = _shared_paths(A, Yc[:, k], (rate,), n_steps=t,
                             min_features=min(est.min_features, fmap.n_columns),
                             schedule=est.schedule)[0]
        S = path.supports[-1]
        am = None if a_mean is None else a_mean[S]
        c_mn = path.coefs[-1]
        if pen:
            # the cross-validated penalty, relative to sigma_max^2 of all rows
            lam = _sigma_max(A[:, S]) ** 2 * 10.0 ** -RIDGE_EXPONENTS[pen - 1]
            paths.append(path)
            supports.append(S)
            coefs.append(ridge_fit(A[:, S], Yc[:, k], lam))
            used.append("ridge")
            lams.append(lam / w_all)
            continue
        c, how, lam = _guarded_refit(
            A[:, S], Yc[:, k], am, refit, est.target_scale_[k], est.activation,
            lambda lam_grid, S=S, k=k: _kfold_ridge_errors(
                fmap, S, X, Y[:, k], w, splits, lam_grid, est.fit_intercept,
                est.target_scale_[k]),
            c_min_norm=c_mn)
        paths.append(path)
        supports.append(S)
        coefs.append(c)
        used.append(how)
        lams.append(None if lam is None else lam / w_all)
    one = getattr(est, "_one_d", True)
    est.path_ = paths[0] if one else paths
    est.refit_ = used[0] if one else used
    est.ridge_lam_ = lams[0] if one else lams
    est._finish(fmap, supports, coefs, a_mean, y_mean)
    _warn_magnitude(est, a_mean)
