r"""Model selection for SHRIMP (private machinery of :mod:`rflite.imp`).

:func:`select_shrimp` (the (q, p, step) search of Xie et al. 2022, Sec. 4.2,
by K-fold through :class:`~rflite.imp.SHRIMPCV` or by the paper's hold-out
split) and the fold function of :class:`~rflite.imp.SHRIMPCV`.  Everything
that depends only on q is computed once per q (and fold) and shared by the
prune rates: the feature matrices, their transposed working copies and the
t = 0 minimum-norm solve with its factorisation (every path starts from all
columns, :func:`rflite._imp.path._shared_paths`).  The results are bit for bit
those of one independent fit per grid point (tests/test_imp_select.py).
Also here: the data-driven defaults of the estimators (``n_features=None``,
``subsets="auto"``: :func:`_auto_n_features`, :func:`_shrimp_map`) and the
checks of :class:`~rflite.imp.SHRIMPCV`'s grid and folds.

The public names are importable from :mod:`rflite.imp`.  The estimator
classes of :mod:`rflite.imp` that the selection fits are passed in by
:func:`~rflite.imp.select_shrimp` (this module is below them).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from rflite._base import RandomFeatureModel
from rflite._core.parallel import map_tasks

from rflite._imp.guard import (_center_weight_like, _center_weight_rows, _collapse_rows,
                               _step_penalty_scores)
from rflite._imp.path import _shared_paths
from rflite._core.validation import check_int, check_real
from rflite.features import Normal, random_feature_map

__all__ = ["MEAN_FACTOR"]

#: Default guard factor of the K-fold selection (:func:`rflite._core.selection.choose`):
#: a candidate whose error on some fold exceeds ``MEAN_FACTOR`` times the
#: error of predicting the training mean on that fold is never chosen.
MEAN_FACTOR = 2.0


def _cv_fold_scores(train, test, *, X, Y, w, fmaps, rates, n_steps, min_features, schedule,
                    fit_intercept, refit):
    """Validation MSE of every (map, rate, step) on one fold (module level: picklable)."""

    Xt, Ytr, wt = _collapse_rows(X[train], Y[train], None if w is None else w[train])
    Xe, Yte, we = _collapse_rows(X[test], Y[test], None if w is None else w[test])
    denom = float(np.sum(we)) if we is not None else float(Xe.shape[0])
    out = []
    for fm in fmaps:
        A, Yt, am, ym = _center_weight_rows(fm.transform(Xt), Ytr, wt, fit_intercept)
        Av, Yv = _center_weight_like(fm.transform(Xe), Yte, am, ym, we)
        tables = [[] for _ in rates]
        for k in range(Y.shape[1]):
            # the rates share the transposed matrices and the t = 0 solve
            paths = _shared_paths(A, Yt[:, k], rates, A_val=Av, y_val=Yv[:, k],
                                  n_steps=n_steps, min_features=min(min_features, fm.n_columns),
                                  schedule=schedule)
            scale = Yv.shape[0] / denom
            for i, path in enumerate(paths):
                path = path._replace(val_mse=path.val_mse * scale)
                # (steps x penalties): the penalty is a grid dimension, chosen
                # across folds, never on the fold's own held-out rows
                table = _step_penalty_scores(A, Yt[:, k], Av, Yv[:, k], path, am, refit, scale)
                tables[i].append(table.ravel())
        out += [np.mean(t, axis=0) for t in tables]
    return np.concatenate(out)


def _fold_model(train, *, X, Y, w, fmap, rate, step, penalty, min_features, schedule,
                fit_intercept):
    r"""One fold's model at a grid point: ``[(support, coef, intercept)]`` per output.

    The model the fold scored for (q, p, t, penalty) in :func:`_cv_fold_scores`
    (:func:`_point_model` on the fold's centred, weighted training rows).
    Module level: picklable for an executor.
    """
    Xt, Yt, wt = _collapse_rows(X[train], Y[train], None if w is None else w[train])
    A, Yc, am, ym = _center_weight_rows(fmap.transform(Xt), Yt, wt, fit_intercept)
    return _point_model(A, Yc, am, ym, rate, step, penalty,
                        min(min_features, fmap.n_columns), schedule)


def _point_model(A, Yc, a_mean, y_mean, rate, step, penalty, min_features, schedule):
    r"""The model of grid point (rate, step, penalty) on centred, weighted rows ``A``, ``Yc``.

    Per output: the pruning path of prune rate ``rate`` to step ``step``,
    then the minimum-norm coefficients on its support (``penalty`` 0) or
    ridge with :math:`\sigma_{\max}(A_S)^2 10^{-e_k}` (``penalty`` k, e_k in
    :data:`RIDGE_EXPONENTS`), and the intercept
    :math:`\bar y - \bar a_S^\top c`; ``[(support, coef, intercept)]``.
    ``A`` may be a triangular factor of the rows (the Dask fit).
    """
    from rflite._imp.guard import RIDGE_EXPONENTS, _sigma_max
    from rflite._core.linalg import ridge_fit

    out = []
    for k in range(Yc.shape[1]):
        path = _shared_paths(A, Yc[:, k], (rate,), n_steps=step, min_features=min_features,
                             schedule=schedule)[0]
        S = path.supports[-1]
        if penalty:
            lam = _sigma_max(A[:, S]) ** 2 * 10.0 ** -RIDGE_EXPONENTS[penalty - 1]
            c = ridge_fit(A[:, S], Yc[:, k], lam)
        else:
            c = path.coefs[-1]
        b = y_mean[k] - a_mean[S] @ c if a_mean is not None and S.size else y_mean[k]
        out.append((S, c, b))
    return out


def _run_fold_model(task):
    func, train = task
    return func(train)


#: ``subsets="auto"`` uses Def. 3 (every q-subset) only when each subset gets
#: at least this many weights, ``n_features // C(d, q) >= 5``; otherwise one
#: random q-subset per weight, with an
#: :class:`~rflite._core.exceptions.EffectiveFeaturesWarning`.  One weight per subset (C(20,
#: 3) = 1140 subsets at N = 2000) missed the paper's error by 22x on a real set
#: where N = 10000 (9 per subset) matched it.
MIN_WEIGHTS_PER_SUBSET = 5


#: ``n_features=None`` (the default) takes
#: :math:`N = \min(` ``N_FEATURES_MAX`` :math:`, \max(2m,`
#: :data:`MIN_WEIGHTS_PER_SUBSET` :math:`\binom{d}{q}))` weights (4m columns
#: for m distinct training rows): over-parameterised, as SHRIMP needs, but not
#: so far that the minimum-norm interpolants of noisy data, whose magnitudes
#: decide the pruning, are dominated by rounding (with 2N = 22 m on a noisy
#: 200-row linear problem every step validated worse than the mean; with
#: 2N <= 5 m, R^2 0.75-0.85).  The paper's N = 10000 is ``n_features=10000``.
N_FEATURES_MAX = 10_000


def _auto_n_features(m: int, d: int, q) -> int:
    """The data-driven N of ``n_features=None`` (see :data:`N_FEATURES_MAX`)."""
    qq = d if q is None else min(q, d)
    return int(min(N_FEATURES_MAX, max(2 * m, MIN_WEIGHTS_PER_SUBSET * math.comb(d, qq), 1)))


def _check_qs(qs, d):
    """Candidate q's clipped to d, duplicates dropped, order kept; ``ValueError`` naming ``qs``."""
    try:
        qs = tuple(qs)
    except TypeError:
        qs = (qs,)
    if not qs:
        raise ValueError("qs must not be empty")
    out = []
    for q in qs:
        q = min(check_int(q, "qs", minimum=1), d)
        if q not in out:
            out.append(q)
    return tuple(out)


def _check_rates(rates):
    try:
        rates = tuple(rates)
    except TypeError:
        rates = (rates,)
    rates = tuple(check_real(p, "prune_rates", minimum=0.0, strict=True) for p in rates)
    if not rates or any(p >= 1.0 for p in rates):
        raise ValueError(f"prune_rates must be a non-empty list of values in (0, 1), "
                         f"got {rates}")
    return rates


def _as_splitter(cv):
    """``cv`` for :func:`rflite._core.folds.cv_splits`; an iterable of splits is wrapped."""
    if cv is None or isinstance(cv, (int, np.integer, str, bytes)) \
            or callable(getattr(cv, "split", None)):
        return cv
    try:
        from rflite._core.folds import SplitList

        return SplitList(list(cv))
    except TypeError:
        return cv


def _check_memory_for(est, m, d, n_weights):
    """:meth:`RandomFeatureModel._check_feature_memory` for ``n_weights`` weights."""
    saved = est.n_features
    try:
        est.n_features = n_weights
        est._check_feature_memory(m, d)
    finally:
        est.n_features = saved


def _n_rows(X):
    """Rows of ``X`` as passed (before zero-weight rows are dropped), or None.

    ``len`` of a SciPy sparse matrix raises ``TypeError``: None then, and the
    fit's own validation refuses the sparse input with its clear message.
    """
    try:
        return len(X)
    except TypeError:
        return None


def _fold_splits(cv, X, Y, sample_weight, n_rows, rng):
    """The folds on the fitted rows.

    ``None``: :func:`rflite.ridge.grouped_splits`, 5 folds over the distinct
    rows drawn from ``rng`` (as every CV estimator's ``cv=None``), so that a
    row of integer weight k and k repeated rows fall in the same fold.  An
    int is K-fold over the rows kept after dropping zero weights (a zero
    weight is a dropped row).  A splitter or a list of splits indexes the
    rows the caller passed, as in scikit-learn: its folds are mapped to the
    kept rows, and folds left without test or training rows are skipped.
    """
    from rflite._core.folds import cv_splits
    from rflite._core.validation import check_sample_weight
    from rflite._core.folds import DEFAULT_FOLDS, grouped_splits

    if cv is None:
        return grouped_splits(X, DEFAULT_FOLDS, rng)
    y1 = Y[:, 0] if Y.shape[1] == 1 else Y
    cv = _as_splitter(cv)
    if isinstance(cv, (int, np.integer)) or sample_weight is None \
            or n_rows is None or n_rows == X.shape[0]:
        return cv_splits(cv, X, y1)
    keep = check_sample_weight(sample_weight, n_rows) > 0
    new_index = np.cumsum(keep) - 1
    dummy = np.zeros((n_rows, 1))
    out = []
    for tr, te in cv_splits(cv, dummy, None):
        tr, te = new_index[tr[keep[tr]]], new_index[te[keep[te]]]
        if tr.size and te.size:
            out.append((tr, te))
    if not out:
        raise ValueError("cv: every fold lost its training or test rows to zero weights")
    return out


def _shrimp_map(est, d, q, rng):
    """SHRIMP's feature map for ``q`` (clipped to d), with ``subsets="auto"`` resolved."""
    from rflite._core.exceptions import EffectiveFeaturesWarning, warn

    if q is not None:
        q = min(q, d)
    dist = est.distribution if est.distribution is not None else Normal(
        scale=1.0 / math.sqrt(q if q is not None else d))
    subsets = est.subsets
    qq = d if q is None else q
    n = est._n_weights
    if subsets == "auto":
        n_sub = math.comb(d, qq)
        if n // n_sub >= MIN_WEIGHTS_PER_SUBSET:
            subsets = "all"
        else:
            subsets = "random"
            warn(
                f"n_features={n} gives fewer than MIN_WEIGHTS_PER_SUBSET="
                f"{MIN_WEIGHTS_PER_SUBSET} weights to each of the C({d}, {qq}) = {n_sub} "
                f"q-subsets (Def. 3); using one random q-subset per weight instead "
                f"(n_features >= {MIN_WEIGHTS_PER_SUBSET * n_sub} keeps Def. 3)",
                EffectiveFeaturesWarning,
            )
    fmap = random_feature_map(d, n, q=q, subsets=subsets, distribution=dist, bias=est.bias,
                              activation=est.activation, rng=rng)
    if fmap.is_complex:
        raise ValueError(f"activation must give real features, got {est.activation!r}")
    est.n_features_ = fmap.n_features
    if fmap.n_features != n and est.n_features is not None:
        warn(
            f"subsets={est.subsets!r} with q={qq} on d={d} inputs keeps "
            f"{fmap.n_features} weight vectors instead of n_features={n} "
            "(n_features // C(d, q) per subset, Def. 3); recorded in n_features_",
            EffectiveFeaturesWarning,
        )
    return fmap


# ------------------------------------------------------------ selection of q
class SHRIMPSelection(NamedTuple):
    """Result of :func:`select_shrimp`.

    Attributes
    ----------
    model : SHRIMPCV or SHRIMPRegressor
        The chosen model, refitted on all rows (a :class:`SHRIMPCV` for
        K-fold selection, a :class:`SHRIMPRegressor` for ``cv="holdout"``).
    q : int
    prune_rate : float
    val_mse : (len(qs), len(prune_rates)) ndarray
        Best validation MSE of every candidate (for K-fold, the lowest mean
        fold error over its steps).
    qs : tuple of int
    prune_rates : tuple of float
    """

    model: RandomFeatureModel
    q: int
    prune_rate: float
    val_mse: np.ndarray
    qs: tuple
    prune_rates: tuple


def _select_kfold(X, y, qs, prune_rates, n_features, cv, rule, mean_factor, seed, callback,
                  executor, params, shrimp_cv):
    """K-fold selection: one ``shrimp_cv`` (:class:`~rflite.imp.SHRIMPCV`) over the grid.

    The score of a candidate (q, p) is the lowest mean fold error over its
    steps and penalties.
    """
    d = X.shape[1]
    model = shrimp_cv(n_features=n_features, qs=qs, prune_rates=prune_rates, cv=cv, rule=rule,
                      mean_factor=mean_factor, n_jobs=executor, random_state=seed,
                      **params).fit(X, y)
    res = model.cv_results_
    scores = np.full((len(qs), len(prune_rates)), np.inf)
    for a, q in enumerate(qs):
        for b, p in enumerate(prune_rates):
            sel = (res["q"] == min(q, d)) & (res["prune_rate"] == p)
            if sel.any():
                scores[a, b] = float(np.min(res["mean_test_mse"][sel]))
            if callback is not None:
                callback(q, p, scores[a, b])
    return SHRIMPSelection(model, model.q_, model.prune_rate_, scores, qs, prune_rates)


def _select_holdout(X, y, qs, prune_rates, n_features, validation_fraction, seed, callback,
                    executor, params, regressor):
    """The paper's protocol: one seeded validation split shared by every candidate.

    Every candidate (q, p) is scored as the independent fit
    ``regressor(q=q, prune_rate=p, random_state=seed, ...)``
    (:class:`~rflite.imp.SHRIMPRegressor`) would score it
    (:func:`rflite.imp._fit_candidate`, the reference), but one task per q
    (:func:`_holdout_q_task`) shares what depends only on q between the
    prune rates: the split, the feature matrices, their transposed copies and
    the t = 0 minimum-norm solve with its factorisation; and only the best
    rate of each q is refitted on all rows.  The q tasks run on ``executor``.
    """
    scores = np.full((len(qs), len(prune_rates)), np.inf)
    tasks = [(regressor, X, y,
              dict(n_features=n_features, q=q, prune_rate=prune_rates[0],
                   validation_fraction=validation_fraction, random_state=seed, **params),
              prune_rates) for q in qs]
    models, local = [], []
    # candidates share one seed, so the choice does not depend on where they run
    for i, (row, model) in enumerate(map_tasks(_holdout_q_task, tasks, executor=executor)):
        models.append(model)
        local.append(prune_rates.index(model.prune_rate))
        for j, v in enumerate(row):
            scores[i, j] = v
            if callback is not None:
                callback(qs[i], prune_rates[j], v)
    # the winner of the sequential scan over the (q, p) grid (strictly lower wins)
    bi, bj = 0, 0
    for i in range(len(qs)):
        for j in range(len(prune_rates)):
            if scores[i, j] < scores[bi, bj]:
                bi, bj = i, j
    best = models[bi]
    if local[bi] != bj:  # only with NaN scores: the q task kept another rate
        best = regressor(**dict(tasks[bi][3], prune_rate=prune_rates[bj])).fit(X, y)
    i, j = np.unravel_index(np.argmin(scores), scores.shape)
    return SHRIMPSelection(best, qs[i], prune_rates[j], scores, qs, prune_rates)


def _holdout_q_task(task):
    """The hold-out scores of every prune rate for one q, and the best rate's model."""
    regressor, X, y, params, rates = task
    model = regressor(**params)
    scores = model._fit_rates(X, y, rates)
    return scores, model
