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

import numbers
import sys
import time
from dataclasses import dataclass

import numpy as np

from rflite._numerics import check_rng

__all__ = [
    "AutoChoice", "CVSearch", "KFold", "CVChoice", "Progress", "SplitList", "check_cv", "choose", "cross_validate_grid",
    "cv_splits", "holdout_split", "weighted_mse",
]


class KFold:
    """K consecutive folds, optionally after a shuffle: scikit-learn's ``KFold``.

    The first ``n % n_splits`` folds have one row more; with ``shuffle=True`` the
    rows are permuted by ``np.random.RandomState(random_state).shuffle`` (an int
    or None seed) exactly as scikit-learn does, so the same arguments give the
    same folds in both libraries.  A ``numpy.random.Generator`` is also
    accepted (then the permutation is the generator's).
    """

    def __init__(self, n_splits: int = 5, *, shuffle: bool = False, random_state=None):
        if not isinstance(n_splits, numbers.Integral) or isinstance(n_splits, bool) \
                or n_splits < 2:
            raise ValueError(f"n_splits must be an int >= 2, got {n_splits!r}")
        self.n_splits = int(n_splits)
        self.shuffle = bool(shuffle)
        self.random_state = random_state

    def __repr__(self):
        return (f"KFold(n_splits={self.n_splits}, random_state={self.random_state!r}, "
                f"shuffle={self.shuffle})")

    def get_n_splits(self, X=None, y=None, groups=None) -> int:
        return self.n_splits

    def fold_sizes(self, n: int) -> np.ndarray:
        """Test rows of each fold for ``n`` rows (the first ``n % n_splits`` get one more)."""
        if self.n_splits > n:
            raise ValueError(
                f"cannot have n_splits={self.n_splits} greater than the number of samples "
                f"n_samples={n}"
            )
        sizes = np.full(self.n_splits, n // self.n_splits)
        sizes[: n % self.n_splits] += 1
        return sizes

    def split(self, X, y=None, groups=None):
        n = len(X)
        sizes = self.fold_sizes(n)
        idx = np.arange(n)
        if self.shuffle:
            rs = self.random_state
            if isinstance(rs, np.random.Generator):
                rs.shuffle(idx)
            else:
                rs = rs if isinstance(rs, np.random.RandomState) else np.random.RandomState(rs)
                rs.shuffle(idx)
        start = 0
        for size in sizes:
            # scikit-learn returns both parts in increasing row order
            mask = np.zeros(n, dtype=bool)
            mask[idx[start:start + size]] = True
            yield np.flatnonzero(~mask), np.flatnonzero(mask)
            start += size


class SplitList:
    """An iterable of ``(train, test)`` pairs as a splitter (scikit-learn accepts these,
    and its estimator checks pass them)."""

    def __init__(self, splits):
        self.splits = [(np.asarray(a), np.asarray(b)) for a, b in splits]

    def split(self, X, y=None, groups=None):
        yield from self.splits

    def get_n_splits(self, X=None, y=None, groups=None):
        return len(self.splits)


def check_cv(cv, *, name: str = "cv"):
    """``cv`` as an object with ``split``: int K -> :class:`KFold` (K), None -> 5 folds,
    an iterable of ``(train, test)`` pairs -> :class:`SplitList`."""
    if cv is None:
        return KFold(5)
    if isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
        if cv < 2:
            raise ValueError(f"{name} must be an int >= 2 or a splitter, got {cv}")
        return KFold(int(cv))
    if callable(getattr(cv, "split", None)) and not isinstance(cv, (str, bytes)):
        return cv
    if hasattr(cv, "__iter__") and not isinstance(cv, (str, bytes)):
        try:
            return SplitList(cv)
        except (TypeError, ValueError):
            pass
    raise ValueError(
        f"{name} must be None, an int >= 2 or an object with a split(X, y) method "
        f"(e.g. sklearn.model_selection.KFold), got {cv!r}"
    )


def cv_splits(cv, X, y=None, *, name: str = "cv") -> list[tuple[np.ndarray, np.ndarray]]:
    """The ``(train, test)`` index pairs of ``cv`` on ``X``, validated.

    Raises ``ValueError`` naming ``cv`` when a fold is empty, repeats rows or
    indexes outside ``X``, or when fewer than one fold is produced.
    """
    n = len(X)
    splits = []
    for k, (train, test) in enumerate(check_cv(cv, name=name).split(X, y)):
        train = np.asarray(train)
        test = np.asarray(test)
        if train.dtype == bool:
            train = np.flatnonzero(train)
        if test.dtype == bool:
            test = np.flatnonzero(test)
        train = train.astype(np.int64)
        test = test.astype(np.int64)
        for part, idx in (("training", train), ("test", test)):
            if idx.size == 0:
                raise ValueError(f"{name}: fold {k} has an empty {part} part")
            if idx.min() < 0 or idx.max() >= n:
                raise ValueError(f"{name}: fold {k} indexes rows outside 0..{n - 1}")
        splits.append((train, test))
    if not splits:
        raise ValueError(f"{name} produced no folds")
    return splits


def holdout_split(n: int, fraction: float, rng) -> tuple[np.ndarray, np.ndarray]:
    """Sorted training and validation rows: ``max(1, round(fraction * n))`` held out.

    The single-split version of the CV rules, used by the default estimators
    to pick their regularisation from the data.  ``rng`` is a Generator.
    """
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"validation_fraction must be in (0, 1), got {fraction!r}")
    n_val = holdout_size(n, fraction)
    perm = check_rng(rng).permutation(n)
    return np.sort(perm[n_val:]), np.sort(perm[:n_val])


def holdout_size(n: int, fraction: float) -> int:
    """The validation count of :func:`holdout_split`: ``max(1, round(fraction * n))``, below n."""
    if n < 2:
        raise ValueError(f"a validation split needs at least 2 samples, got {n}")
    return min(n - 1, max(1, int(round(fraction * n))))


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
    rows of a distributed fit, :mod:`rflite._dask_arff`): the same choice as
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
    CPU, or any executor, see :mod:`rflite._parallel`) runs the folds in
    parallel; ``fold_scores`` must then be picklable (a module-level function
    or a :func:`functools.partial` of one).  ``progress`` (a :class:`Progress`)
    prints one line per fold.
    """
    from rflite._parallel import check_executor, map_tasks

    n_jobs = check_executor(n_jobs)
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


class Progress:
    """One line per iteration / fold / grid point on stderr, when ``verbose``.

    ``Progress(verbose, "HARFECV")`` then ``.line("fold 2/5", error=0.12)``
    prints ``[HARFECV] fold 2/5  1.3 s  error 0.12``.  ``verbose`` 0/False
    prints nothing; ints above 1 are for the estimator to print more detail.
    """

    def __init__(self, verbose, name: str, stream=None):
        if isinstance(verbose, bool) or not isinstance(verbose, numbers.Integral) \
                or verbose < 0:
            if not isinstance(verbose, bool):
                raise ValueError(f"verbose must be a bool or an int >= 0, got {verbose!r}")
        self.level = int(verbose)
        self.name = name
        self.stream = stream
        self.t0 = time.perf_counter()

    def __bool__(self):
        return self.level > 0

    def line(self, what: str, *, error: float | None = None, level: int = 1) -> None:
        if self.level < level:
            return
        msg = f"[{self.name}] {what}  {time.perf_counter() - self.t0:.1f} s"
        if error is not None:
            msg += f"  error {error:.4g}"
        print(msg, file=self.stream or sys.stderr, flush=True)


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
        from rflite.ridge import row_folds

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
        from rflite.ridge import resolve_splits

        return resolve_splits(self.cv, X, Y, rng, kept=getattr(self, "_kept", None))

    def _rule(self):
        if self.rule not in ("min", "1se"):
            raise ValueError(f"rule must be 'min' or '1se', got {self.rule!r}")
        return self.rule

    def _n_jobs(self):
        return self.n_jobs
