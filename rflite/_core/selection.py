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
    """

    index: int
    mean: np.ndarray
    se: np.ndarray
    best: int
    guarded: bool = False
    ok: np.ndarray | None = None


def choose(scores, *, rule: str = "min", baseline=None, mean_factor: float = 10.0) -> CVChoice:
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
    return _choose(mean, se, ok, rule)


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


class AutoChoice:
    """``_splits`` / ``_rule`` / ``_n_jobs`` of a default estimator's automatic choice.

    One hold-out: :data:`HOLDOUT_FRACTION` of the *distinct* rows of ``X``
    (:func:`rflite.ridge.row_folds`, so that integer weights equal repeated
    rows), the ``"min"`` rule, serial.  ``_auto_hint`` says which parameters
    to pass instead when there are too few distinct rows.
    """

    _auto_hint = "pass the parameters explicitly"

    def _splits(self, X, Y, rng):
        from rflite._core.folds import row_folds

        labels = row_folds(X, int(round(1.0 / HOLDOUT_FRACTION)), rng)
        test = np.flatnonzero(labels == 0)
        train = np.flatnonzero(labels != 0)
        if test.size == 0 or train.size == 0:
            raise ValueError("the automatic choice needs at least 2 distinct rows of X (got "
                             f"n_samples={len(X)}); {self._auto_hint}")
        return [(train, test)]

    def _rule(self):
        return "min"

    def _n_jobs(self):
        return None


class CVSearch:
    """``_splits`` / ``_rule`` / ``_n_jobs`` of the CV estimators: their ``cv``, ``rule``, ``n_jobs``.

    ``cv=None`` is 5 folds over distinct rows (:func:`rflite.ridge.resolve_splits`);
    explicit pairs follow the zero-weight rows ``fit`` dropped (``self._kept``).
    """

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
