"""Cross-validation machinery shared by the self-tuning estimators.

scikit-learn's conventions without importing scikit-learn: ``cv`` is an int
(K-fold, unshuffled, exactly :class:`sklearn.model_selection.KFold`'s folds),
``None`` (5 folds) or any object with a ``split(X, y)`` method yielding
``(train, test)`` index arrays, so that scikit-learn's splitters work as they
are.  Each estimator's fold work is a function ``fold_scores(train, test)``
returning the validation errors of its whole grid (a path solver scores every
grid point from one path per fold); :func:`cross_validate_grid` runs the folds,
possibly on an executor, and :func:`choose` applies the selection rule.

The rules, stated once here and cited by the estimators:

* ``"min"``: the grid point with the lowest mean validation MSE over folds
  (the first one on ties, so order the grid from the simplest model);
* ``"1se"``: the *simplest* grid point whose mean error is within one standard
  error of the best (Hastie, Tibshirani & Friedman, *The Elements of
  Statistical Learning*, 2nd ed., Sec. 7.10), where "simplest" is the grid
  order given by the estimator.

A grid point whose error on any fold exceeds ``mean_factor`` times the error
of predicting the training mean on that fold is never chosen (it fits some
fold catastrophically), unless every point does, in which case the rule falls
back to the lowest mean error and says so through ``choice.guarded``.

The default estimators then ask whether the chosen point is worth more than
the training mean at all (:func:`beats_mean`, the paired rule below), and
choose on K folds rather than one hold-out when the hold-out would be small
(:data:`MIN_HOLDOUT_ROWS`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def weighted_mse(y, pred, w=None) -> float:
    """Mean squared error, weighted by ``w`` (rows) and averaged over outputs.

    Complex predictions of real targets are scored by the modulus
    :math:`|f(x) - y|^2`.
    """
    r = np.abs(np.asarray(pred) - np.asarray(y)) ** 2
    if r.ndim == 2:
        r = r.mean(axis=1)
    if w is None:
        return float(r.mean())
    return float(np.dot(w, r) / np.sum(w))


#: The default estimators choose on one hold-out only when it holds at least
#: this many rows; below it they use :data:`rflite._core.folds.DEFAULT_FOLDS`
#: folds (every row validates once).  A validation error over a few rows has
#: a standard error comparable to the differences between the candidates,
#: so the minimum over a grid is mostly the luck of those rows.
MIN_HOLDOUT_ROWS = 100


def paired_difference(model_errors, mean_errors, weights=None, groups=None):
    r"""Mean and standard error of the paired differences of two error samples.

    With :math:`d_i = e_i - b_i` (``model_errors`` minus ``mean_errors``, the
    same rows or folds) and weights :math:`w_i` (1 when ``None``):
    :math:`\bar d = \sum w_i d_i / \sum w_i`,
    :math:`v = \sum w_i (d_i - \bar d)^2 / \sum w_i` and, with Kish's
    effective count :math:`n = (\sum w_i)^2 / \sum w_i^2`,
    :math:`\mathrm{se} = \sqrt{v / (n - 1)}`: ``std(d, ddof=1) / sqrt(n)``
    for unit weights, ``inf`` below two effective samples.  ``groups``
    (labels of identical rows, :func:`rflite._core.folds.distinct_labels`)
    first merges each group into one sample of its total weight and weighted
    mean difference.

    Why Kish's count over merged rows: the decision must depend on the
    relative weights only (``c * sample_weight`` is the same fit; a count of
    :math:`\sum w_i` would call weights summing to 1 a single sample), and
    a row of integer weight k must count as its k copies do, which merging
    identical rows makes one sample either way.  Non-finite differences give
    ``(inf, inf)``.

    Returns
    -------
    (mean, se) : tuple of float
    """
    d = np.asarray(model_errors, dtype=float).ravel() - np.asarray(mean_errors,
                                                                    dtype=float).ravel()
    if d.size == 0 or not np.all(np.isfinite(d)):
        return np.inf, np.inf
    w = np.ones_like(d) if weights is None else np.asarray(weights, dtype=float).ravel()
    if groups is not None:
        groups = np.asarray(groups).ravel()
        wg = np.bincount(groups, weights=w)
        keep = wg > 0
        d = np.bincount(groups, weights=w * d)[keep] / wg[keep]
        w = wg[keep]
    total = float(w.sum())
    if not total > 0.0:
        return np.inf, np.inf
    mu = float(w @ d) / total
    n = total ** 2 / float(w @ w)
    if not n > 1.0:
        return mu, np.inf
    return mu, standard_error(float(w @ (d - mu) ** 2) / total, n)


def standard_error(variance: float, n: float) -> float:
    r"""Standard error of a mean of ``n`` (effective) samples of population variance
    ``variance``: :math:`\sqrt{v / (n - 1)}`, ``inf`` below two samples.

    The one formula behind :func:`paired_difference`, for callers that hold
    only the moments of the differences (a Dask fit sums them on the
    workers).
    """
    return float(np.sqrt(variance / (n - 1.0))) if n > 1.0 else np.inf


def beats_mean(model_errors, mean_errors, weights=None, groups=None) -> bool:
    r"""Is a chosen model better than predicting the training mean?  The paired rule.

    ``model_errors`` and ``mean_errors`` are the out-of-sample errors of the
    chosen model and of the training mean *on the same samples*: the squared
    errors of the validation rows of one hold-out (``weights`` the row
    weights), or the validation MSEs of the K folds.  The model is kept when
    its mean error is below the mean predictor's by more than one standard
    error of the paired difference (:func:`paired_difference`):

    .. math::

        \bar d + \mathrm{se}(\bar d) < 0, \qquad d_i = e_i - b_i .

    Why paired and why a margin: the two errors share their rows, so the
    noise of the rows cancels in :math:`d_i` and its standard error measures
    only how much the two predictors disagree; and the chosen model's error
    is the lowest of a grid of candidates scored on those same samples, an
    optimistic estimate, while the mean predictor is a single candidate.  A
    model that cannot show an advantage of one standard error has not shown
    one at all (the one-standard-error rule of Hastie, Tibshirani & Friedman,
    *The Elements of Statistical Learning*, 2nd ed., Sec. 7.10, applied to
    the simplest model there is).  With fewer than two effective samples the
    standard error is infinite and the mean is kept.

    Examples
    --------
    >>> beats_mean([0.2, 0.3, 0.1, 0.2], [1.0, 1.2, 0.8, 1.1])
    True
    >>> beats_mean([0.9, 1.3, 0.7, 1.0], [1.0, 1.2, 0.8, 1.1])
    False
    """
    mu, se = paired_difference(model_errors, mean_errors, weights, groups)
    return bool(mu + se < 0.0)


def out_of_fold_errors(fit_predict, Y, w, splits):
    r"""Per-row out-of-sample squared errors of a fitting procedure and of the training mean.

    For every fold ``(train, test)`` of ``splits``, ``fit_predict(train,
    test)`` fits on the rows ``train`` and returns predictions of the rows
    ``test`` (shape ``(len(test), n_outputs)`` or ``(len(test),)``); the
    mean predictor is the (weighted) mean of ``Y[train]``.  Returns
    ``(model, mean)``, each ``(n_rows, n_outputs)``: :math:`|\hat y_i -
    y_i|^2` for the fold in which row i is a test row (NaN for rows in no
    test part), the inputs of :func:`beats_mean` row by row.  When
    ``fit_predict`` runs a whole automatic choice (its grid search included)
    on each fold, the errors are honest estimates of that procedure's error
    on new rows, the choice being made without the row (nested
    cross-validation).
    """
    Y = np.asarray(Y)
    Y2 = Y.reshape(Y.shape[0], -1)
    model = np.full(Y2.shape, np.nan)
    mean = np.full(Y2.shape, np.nan)
    for train, test in splits:
        pred = np.asarray(fit_predict(train, test)).reshape(test.size, -1)
        mu = np.average(Y2[train], axis=0, weights=None if w is None else w[train])
        model[test] = np.abs(pred - Y2[test]) ** 2
        mean[test] = np.abs(mu - Y2[test]) ** 2
    return model, mean


def nested_loses_to_mean(est, X, Y, w, rng):
    r"""Which outputs of the default fit ``est`` lose to the training mean, by nested CV.

    The estimator's whole fit (``type(est)(**est.get_params())``, its
    automatic choice included, with ``_skip_mean_check`` set so that it does
    not check itself again and ``verbose=0``) runs on each of
    :data:`~rflite._core.folds.DEFAULT_FOLDS` folds over the distinct rows
    of ``X`` (:func:`~rflite._core.folds.grouped_splits`, drawn from
    ``rng``) and predicts the left-out rows; output k loses when these
    out-of-sample errors do not beat those of the folds' training means by
    one standard error of the paired difference, every row counted once
    (:func:`out_of_fold_errors`, :func:`beats_mean`).  The choice is made
    afresh without the rows it is judged on, so the comparison is between
    what the procedure would give on new rows and what the mean would.

    ``X``, ``Y`` (2-d) and ``w`` are the validated training data (zero
    weights dropped).  Returns a boolean array (n_outputs,), or ``None``
    when there are too few distinct rows for the folds or a fold is too
    small for the fit (nothing is said then).
    """
    from rflite._core.folds import DEFAULT_FOLDS, distinct_labels, grouped_splits

    try:
        splits = grouped_splits(X, DEFAULT_FOLDS, rng)
    except ValueError:
        return None
    params = est.get_params(deep=False)
    if "verbose" in params:
        params["verbose"] = 0
    one = getattr(est, "_one_d", True)
    y_fit = Y[:, 0] if one else Y

    def fit_predict(train, test):
        import warnings

        inner = type(est)(**params)
        inner._skip_mean_check = True
        with warnings.catch_warnings():
            # the fit's own warnings were given by the fit on all rows
            warnings.simplefilter("ignore")
            inner.fit(X[train], y_fit[train], None if w is None else w[train])
            return np.real(inner.predict(X[test]))

    try:
        model, mean = out_of_fold_errors(fit_predict, Y, w, splits)
    except ValueError:
        return None
    groups = distinct_labels(X)
    return np.array([not beats_mean(model[:, k], mean[:, k], w, groups)
                     for k in range(Y.shape[1])])


@dataclass
class CVChoice:
    """The outcome of :func:`choose`.

    Attributes
    ----------
    index : int
        Chosen grid position.
    mean, se : ndarray (n_grid,)
        Mean validation MSE over folds and its standard error
        (``std(ddof=1) / sqrt(K)``; zero for one fold).
    best : int
        Position of the lowest mean error (equals ``index`` for ``"min"``).
    guarded : bool
        True when every grid point failed the ``mean_factor`` guard and the
        rule fell back to the lowest mean.
    ok : ndarray of bool (n_grid,) or None
        The grid points the rule could choose from (finite mean error, and
        within the guard unless ``guarded``).
    use_mean : bool
        True when the chosen point failed :func:`beats_mean` against the
        baseline (only asked for by ``choose(..., against_mean=True)``): the
        model should be the training mean.
    """

    index: int
    mean: np.ndarray
    se: np.ndarray
    best: int
    guarded: bool = False
    ok: np.ndarray | None = None
    use_mean: bool = False


def choose(scores, *, rule: str = "min", baseline=None, mean_factor: float = 10.0,
           against_mean: bool = False) -> CVChoice:
    """Apply a selection rule to ``scores`` (n_folds x n_grid validation MSEs).

    Parameters
    ----------
    scores : array (n_folds, n_grid)
        Validation errors; non-finite entries count as infinitely bad.
    rule : {"min", "1se"}
        See the module notes; grid order is simplest first.
    baseline : array (n_folds,) or None
        Error of predicting the training mean on each fold; a grid point with
        an error above ``mean_factor * baseline`` on some fold is excluded.
    mean_factor : float
        The guard's factor.
    against_mean : bool
        Also test the chosen point against the baseline with
        :func:`beats_mean` on the per-fold errors (``choice.use_mean``).
        One fold has no standard error: the plain comparison of the two
        errors decides then.
    """
    S = np.asarray(scores, dtype=float)
    if S.ndim != 2 or S.size == 0:
        raise ValueError(f"scores must be a non-empty (n_folds, n_grid) array, got {S.shape}")
    S = np.where(np.isfinite(S), S, np.inf)
    k = S.shape[0]
    mean = S.mean(axis=0)
    with np.errstate(invalid="ignore"):
        se = S.std(axis=0, ddof=1) / np.sqrt(k) if k > 1 else np.zeros(S.shape[1])
    ok = np.isfinite(mean)
    if baseline is not None:
        base = np.asarray(baseline, dtype=float).reshape(-1, 1)
        ok &= np.all(S <= mean_factor * base, axis=0)
    choice = _choose(mean, se, ok, rule)
    if against_mean:
        if baseline is None:
            raise ValueError("against_mean=True needs the baseline errors")
        base = np.asarray(baseline, dtype=float).ravel()
        if k > 1:
            choice.use_mean = not beats_mean(S[:, choice.index], base)
        else:
            choice.use_mean = not float(S[0, choice.index]) < float(base[0])
    return choice


def choose_stats(mean, se, *, rule: str = "min") -> CVChoice:
    """:func:`choose` (no baseline) from the grid's mean errors and standard errors.

    For scores whose per-fold matrix is too large to gather (the validation
    rows of a distributed fit, :mod:`rflite._dask.arff`): the same choice as
    :func:`choose` on a matrix with that mean and standard error.
    """
    mean = np.asarray(mean, dtype=float)
    mean = np.where(np.isfinite(mean), mean, np.inf)
    return _choose(mean, np.asarray(se, dtype=float), np.isfinite(mean), rule)


def _choose(mean, se, ok, rule) -> CVChoice:
    """The rule on the grid's means and standard errors among the points ``ok``."""
    se = np.where(np.isfinite(se), se, np.inf)
    guarded = not ok.any()
    if guarded:
        ok = np.isfinite(mean) if np.isfinite(mean).any() else np.ones_like(ok)
    masked = np.where(ok, mean, np.inf)
    best = int(np.argmin(masked))
    if rule == "min":
        index = best
    elif rule == "1se":
        within = ok & (mean <= mean[best] + se[best])
        index = int(np.flatnonzero(within)[0])
    else:
        raise ValueError(f"rule must be 'min' or '1se', got {rule!r}")
    return CVChoice(index=index, mean=mean, se=se, best=best, guarded=guarded, ok=ok)


def _run_fold(task):
    func, train, test = task
    return np.asarray(func(train, test), dtype=float)


def cross_validate_grid(fold_scores, splits, *, n_jobs=None, progress=None) -> np.ndarray:
    """``(n_folds, n_grid)`` array of ``fold_scores(train, test)`` over ``splits``.

    ``fold_scores`` returns the validation MSE of every grid point on one
    fold.  ``n_jobs`` (None/1 serial, an int for a process pool, -1 one per
    CPU, or any executor, see :mod:`rflite._core.parallel`) runs the folds in
    parallel; ``fold_scores`` must then be picklable (a module-level function
    or a :func:`functools.partial` of one).  ``progress`` (a :class:`Progress`)
    prints one line per fold.
    """
    from rflite._core.parallel import check_executor, map_tasks

    n_jobs = check_executor(n_jobs, "n_jobs")
    tasks = [(fold_scores, tr, te) for tr, te in splits]
    if n_jobs is None or n_jobs == 1:
        rows = []
        for k, task in enumerate(tasks):
            rows.append(_run_fold(task))
            if progress is not None:
                progress.line(f"fold {k + 1}/{len(tasks)}", error=float(np.min(rows[-1])))
        return np.vstack(rows)
    rows = map_tasks(_run_fold, tasks, executor=n_jobs)
    if progress is not None:
        for k, r in enumerate(rows):
            progress.line(f"fold {k + 1}/{len(tasks)}", error=float(np.min(r)))
    return np.vstack(rows)

#: Share of the distinct rows the default estimators' automatic choice holds out.
HOLDOUT_FRACTION = 0.2


def auto_fold_ids(test_rows) -> list:
    """The folds a default estimator's choice validates on, from each fold's test-row count.

    Fold 0 alone when it holds at least :data:`MIN_HOLDOUT_ROWS` rows;
    otherwise every fold with a row, so that every row validates once.  The
    rule of :class:`AutoChoice`, shared with the Dask backend.
    """
    if test_rows[0] >= MIN_HOLDOUT_ROWS:
        return [0]
    return [f for f in range(len(test_rows)) if test_rows[f] > 0]


class AutoChoice:
    """``_splits`` / ``_rule`` / ``_n_jobs`` of a default estimator's automatic choice.

    One hold-out, :data:`HOLDOUT_FRACTION` of the *distinct* rows of ``X``
    (:func:`rflite.ridge.row_folds`, so that integer weights equal repeated
    rows), when it holds at least :data:`MIN_HOLDOUT_ROWS` rows; otherwise
    :data:`~rflite._core.folds.DEFAULT_FOLDS` folds of the same labels (the
    hold-out is their first fold), so that every row validates once.  The
    ``"min"`` rule, serial, and the chosen point must beat the training mean
    (``_compare_with_mean``, :func:`beats_mean`).  ``_auto_hint`` says which
    parameters to pass instead when there are too few distinct rows.
    """

    def _check_choice_against_mean(self, X, y, sample_weight):
        """After an automatic choice on few rows, cross-validate it against the mean.

        Runs :meth:`rflite._base.RandomFeatureModel._check_against_mean` when
        the fit chose its parameters itself (``cv_results_``), fits an
        intercept and kept a model; returns ``self``.
        """
        if (self._compare_with_mean and getattr(self, "cv_results_", None) is not None
                and self.fit_intercept and not np.all(getattr(self, "mean_model_", True))):
            self._check_against_mean(X, y, sample_weight, HOLDOUT_FRACTION)
        return self

    _auto_hint = "pass the parameters explicitly"
    _compare_with_mean = True

    def _splits(self, X, Y, rng):
        from rflite._core.folds import row_folds

        n_folds = int(round(1.0 / HOLDOUT_FRACTION))
        labels = row_folds(X, n_folds, rng)
        test = np.flatnonzero(labels == 0)
        train = np.flatnonzero(labels != 0)
        if test.size == 0 or train.size == 0:
            raise ValueError("the automatic choice needs at least 2 distinct rows of X (got "
                             f"n_samples={len(X)}); {self._auto_hint}")
        folds = auto_fold_ids(np.bincount(labels, minlength=n_folds))
        return [(np.flatnonzero(labels != k), np.flatnonzero(labels == k)) for k in folds]

    def _rule(self):
        return "min"

    def _n_jobs(self):
        return None


class CVSearch:
    """``_splits`` / ``_rule`` / ``_n_jobs`` of the CV estimators: their ``cv``, ``rule``, ``n_jobs``.

    ``cv=None`` is 5 folds over distinct rows (:func:`rflite.ridge.resolve_splits`);
    explicit pairs follow the zero-weight rows ``fit`` dropped (``self._kept``).
    The chosen point is the model whatever the mean predictor scores
    (``_compare_with_mean`` is False: the ``mean_factor`` guard only).
    """

    _compare_with_mean = False

    def _splits(self, X, Y, rng):
        from rflite._core.folds import resolve_splits

        return resolve_splits(self.cv, X, Y, rng, kept=getattr(self, "_kept", None))

    def _rule(self):
        if self.rule not in ("min", "1se"):
            raise ValueError(f"rule must be 'min' or '1se', got {self.rule!r}")
        return self.rule

    def _n_jobs(self):
        return self.n_jobs


def fold_baseline(Y, w, train, test) -> float:
    """Validation MSE of predicting the (weighted) training mean on one fold."""
    from rflite._core.selection import weighted_mse

    wt = None if w is None else w[train]
    mean = Y[train].mean(axis=0) if wt is None else (wt @ Y[train]) / wt.sum()
    return weighted_mse(Y[test], np.broadcast_to(mean, Y[test].shape),
                        None if w is None else w[test])


def check_grid(values, name, *, minimum=0.0, integer=False, order=None):
    """A non-empty 1-d grid of finite values ``>= minimum``; ``ValueError`` names ``name``.

    ``order`` (``"ascending"`` or ``"descending"``) sorts the grid for the
    selection rules, which read the grid from the simplest model on (ties and
    the ``"1se"`` rule go to the first point): a penalty grid is simplest
    first when descending, a feature-scale grid when ascending.  ``None``
    keeps the order given.
    """
    try:
        arr = np.asarray(values, dtype=float).ravel()
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a sequence of numbers, got {values!r}") from None
    if arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr < minimum):
        raise ValueError(f"{name} must be a non-empty sequence of finite values >= {minimum:g}, "
                         f"got {values!r}")
    if integer:
        if not np.all(arr == np.round(arr)):
            raise ValueError(f"{name} must hold integers, got {values!r}")
        arr = arr.astype(np.int64)
    if order == "ascending":
        return np.sort(arr)
    if order == "descending":
        return np.sort(arr)[::-1]
    if order is not None:
        raise ValueError(f"order must be 'ascending', 'descending' or None, got {order!r}")
    return arr
