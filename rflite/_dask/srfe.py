r"""SRFE (:class:`rflite.bp.SRFERegressor`) fitted on a Dask ``X`` (private).

Split out of :mod:`rflite._dask.backend` like the SHRIMP and HARFE machinery.  The
fit is the in-memory one with the feature matrix replaced by the distributed
operator: one pass validates ``X`` and ``y`` and gives the (weighted) column
means and sums of squares (centring, ``normalize``), then
:func:`rflite.bp._srfe` solves

.. math::

    \min_c \|c\|_1 \quad \text{s.t.} \quad \|\sqrt{W}(A_c D c - y_c)\|_2
    \le \eta \sqrt{\textstyle\sum_i w_i}

(Def. 4 of Xie, Shi, Schaeffer and Ward 2022; Hashemi et al. 2023 for SRFE;
:math:`A_c` the centred features, :math:`D` the column scaling, ``W`` the
``sample_weight``) on :func:`rflite._dask.backend.as_linear_operator`, whose every
product is one pass over the data.  The BPDN solvers were written for
underdetermined systems: they keep length-m vectors (the residual, ``A c``,
the support columns) on the client, so this suits m up to what the client
holds as a few vectors and N columns, not the m = 10^8 of HARFE on Dask.

``eta="auto"`` (the default) and :class:`rflite.bp.SRFECV` choose ``eta``
as in memory (:func:`_choose_eta`): one homotopy path per output and fold
(:func:`rflite.bp.bpdn_path` on the fold's training-rows operator, row
weights ``w`` x 0/1), every grid point reached scored on the fold's
validation rows by one pass, the in-memory rule and guard, and the final
fit by the same path on all rows (:func:`rflite.bp._srfe_by_path`).  The
folds of ``SRFECV(cv=...)`` are the in-memory ones, and so is ``SRFERegressor``'s
hold-out: a fifth of the distinct rows (:func:`rflite._core.folds.row_folds`,
all five fifths on few rows; :func:`rflite._dask.auto.default_fold_ids`),
as HARFE's default.  Each homotopy breakpoint is a pass: pass
``eta`` on large data.
"""

from __future__ import annotations

import math
import time

import numpy as np

from rflite._dask.htp import as_linear_operator
from rflite._dask.operator import DaskFeatureOperator
from rflite._dask.prepare import _centring, _prepare, _weighted_rows
from rflite._dask.operator import reports_passes
from rflite._core.validation import check_bool


@reports_passes
def fit_srfe(est, X, y, sample_weight=None):
    """:meth:`rflite.bp.SRFERegressor.fit` on a Dask ``X`` (and ``y``, ``sample_weight``).

    Same centring, row weighting (:math:`\\sqrt{w}` inside the chunk tasks),
    column normalisation and noise level :math:`\\sigma = \\eta\\sqrt{\\sum_i
    w_i}` as the dense in-memory fit, so the same BPDN problem up to the
    order of the sums over rows.  Sets what the in-memory fit sets, plus
    ``dask_passes_`` and ``dask_fit_seconds_``.
    """
    from rflite.bp import _srfe, _srfe_by_path, _warn_uncertified, _warn_unreachable

    X, Y, one_d, W, total = _prepare(est, X, y, sample_weight, weights=True)
    m = X.shape[0]
    eta, search = est._check_fit()
    if search is not None:
        grid, is_fraction, s_grid, rule = search
    normalize = check_bool(est.normalize, "normalize")
    check_bool(est.matrix_free, "matrix_free")  # Dask fits are always matrix-free
    fit_intercept = check_bool(est.fit_intercept, "fit_intercept")
    rng = est._rng()
    fmap = est._draw_features(X.shape[1], rng)
    t0 = time.perf_counter()
    y_mean, a_mean, scale, first = _centring(fmap, X, Y, W, total, fit_intercept, normalize)
    passes = list(first.pass_seconds)
    use_mean = [False] * Y.shape[1]
    if search is not None:
        chosen, use_mean = _choose_eta(est, fmap, X, y, Y, W, rng, grid, is_fraction, s_grid,
                                       rule, fit_intercept, normalize, passes)
    else:
        chosen = [(eta, est.s)] * Y.shape[1]
        if hasattr(est, "cv_results_"):
            del est.cv_results_
    op = DaskFeatureOperator(fmap, X, col_mean=a_mean, col_scale=scale, row_weight=W)
    A = as_linear_operator(op)
    # the solvers keep length-m vectors on the client (module notes)
    Yc = np.asarray(_weighted_rows(Y - y_mean if fit_intercept else Y, W).compute())
    supports, coefs, results = [], [], []
    for k in range(Yc.shape[1]):
        eta, s_k = chosen[k]
        # sigma = eta * sqrt(rows) in the solver: make it eta * sqrt(sum w)
        eta_eff = eta * math.sqrt(total / m)
        if search is not None and not fmap.is_complex:  # the same path's point, as in memory
            res = _srfe_by_path(A, Yc[:, k], eta_eff, s_k, est.refit, est.lam)
        else:
            res = _srfe(A, Yc[:, k], eta=eta_eff, s=s_k, refit=est.refit, lam=est.lam,
                        tol=est.tol, max_iter=est.max_iter, polish=True)
        # the user's fit call: SRFERegressor.fit -> reports_passes -> fit_srfe -> _warn_*
        _warn_unreachable(res.bpdn, eta * math.sqrt(total), total)
        _warn_uncertified(est, res.bpdn, eta_eff * math.sqrt(m))
        coef = res.coef * scale
        support = np.flatnonzero(coef)
        results.append(res)
        supports.append(support)
        coefs.append(coef[support])
    est.eta_ = chosen[0][0] if one_d else np.array([c[0] for c in chosen])
    est.s_ = chosen[0][1] if one_d else [c[1] for c in chosen]
    est.result_ = results[0] if one_d else results
    est.n_iter_ = results[0].bpdn.n_iter if one_d else [r.bpdn.n_iter for r in results]
    est.dask_passes_ = passes + op.pass_seconds
    est.dask_fit_seconds_ = time.perf_counter() - t0
    # an output whose choice lost to the training mean is that mean, as in memory
    coefs = [np.zeros_like(c) if u else c for c, u in zip(coefs, use_mean)]
    est.mean_model_ = use_mean[0] if one_d else np.array(use_mean)
    return est._finish(fmap, supports, coefs, a_mean, y_mean)


def _choose_eta(est, fmap, X, y, Y, W, rng, grid, is_fraction, s_grid, rule, fit_intercept,
                normalize, passes):
    """``([(eta, s)], use_mean)`` per output by the in-memory fold scores, distributed (module notes).

    ``use_mean[t]``: output t's choice lost to the training mean (tested as
    in memory when the estimator compares with the mean and fits an intercept).

    Sets ``cv_results_`` as :meth:`rflite.bp.SRFERegressor._choose`; appends
    the passes' ``(kind, seconds)`` to ``passes``.
    """
    import dask.array as da

    from rflite._core.selection import choose
    from rflite._dask.auto import (
        _against_mean, _baselines, _usable_folds, default_fold_ids, fold_setup, group_stats,
        make_folds)
    from rflite.bp import _path_scores
    from rflite.ridge import cv_results_per_output

    k = Y.shape[1]
    folds = make_folds(getattr(est, "cv", None), X, y, W, rng, est)
    st, op0 = group_stats(fmap, X, Y, W, folds, with_features=fit_intercept)
    passes += op0.pass_seconds
    fold_ids = _usable_folds(folds, st, default_fold_ids(est, folds))
    if not fold_ids:
        raise ValueError("the automatic choice of eta needs at least 2 distinct rows of X; "
                         "pass eta explicitly")
    if is_fraction:
        # per output: the grid relative to the (weighted) standard deviation of y
        w_sum = st["w"].sum()
        mean = st["y"].sum(axis=0) / w_sum
        sd = np.sqrt(np.maximum(st["yy"].sum(axis=0) / w_sum - mean ** 2, 0.0))
        etas = np.outer(grid, np.where(sd > 0, sd, 1.0))
    else:
        etas = np.repeat(grid[:, None], k, axis=1)
    points = [(i, s) for i in range(len(etas)) for s in s_grid]
    scores = []
    for f in fold_ids:
        n_t, n_v, W_t, W_v, a_mean, y_mean, scale, op = fold_setup(
            fmap, X, W, folds, st, f, k, fit_intercept, normalize, passes)
        Yc = np.asarray(((Y - y_mean) * da.sqrt(W_t)).compute())
        plain = DaskFeatureOperator(fmap, X, col_mean=a_mean, col_scale=scale)

        def val_error(t, c, plain=plain, y_mean=y_mean, W_v=W_v, n_v=n_v):
            r = plain.matvec(c).real + (y_mean[t] - Y[:, t])  # predict's real part
            return float((da.sum(W_v[:, 0] * r * r) / n_v).compute())

        scores.append(_path_scores(as_linear_operator(op), Yc, n_t, etas, s_grid, est.refit,
                                   est.lam, val_error))
        passes += op.pass_seconds
    S = np.asarray(scores, dtype=float).reshape(len(fold_ids), len(points), k)
    base = _baselines(folds, st, fold_ids)
    against = _against_mean(est, fit_intercept)
    choices = [choose(S[:, :, t], rule=rule, baseline=base[:, t], against_mean=against)
               for t in range(k)]
    eta_col = np.array([etas[p[0]] for p in points])
    res_grid = {"eta": eta_col[:, 0] if eta_col.shape[1] == 1 else eta_col}
    if any(s is not None for s in s_grid):
        res_grid["s"] = np.array([-1 if p[1] is None else p[1] for p in points])
    est.cv_results_ = cv_results_per_output(res_grid, S, choices)
    return ([(float(etas[points[c.index][0], t]), points[c.index][1])
             for t, c in enumerate(choices)], [bool(c.use_mean) for c in choices])
