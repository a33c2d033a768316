r"""The passes of a GFC fit (private machinery of :mod:`rflite.greedy`).

A fit (:func:`~rflite.greedy.gfc`, Algorithm 2) alternates passes of
greedy descents on subsamples (:mod:`rflite._gfc.descent`) with the
amplitude fit of all features (:mod:`rflite._gfc.amplitudes`).
:class:`_GFCRun` holds one fit between passes and :func:`_lock_step` runs
the passes of several fits (a bag) together, so that their descents share
one executor (also the Dask fit); :func:`_gfc_fits` is the in-memory
driver, with the result type :class:`GFCResult`.  :mod:`rflite.greedy`
re-exports the public names.
"""

from __future__ import annotations

import copy
from typing import NamedTuple

import numpy as np

from rflite._core.blas import shared_blas_limit
from rflite._core.folds import cv_splits
from rflite._core.parallel import check_executor, executor_scope, map_tasks, spawn_seeds
from rflite._core.progress import Progress
from rflite._core.random import check_rng, spawn_streams
from rflite._core.validation import check_array, check_choice, check_int, check_real, check_X_y
from rflite._gfc.amplitudes import NU_GRID, _amplitude_fit
from rflite._gfc.descent import _descent_task, _DescentTask, fold_ids

__all__ = ["STOPPINGS", "ETA_RELATIVE", "GFCResult"]

#: How many greedy steps of each descent the amplitude fit keeps: ``"eps"``
#: all of them (the paper: a descent stops when its training error improves
#: by less than ``eps``), ``"cv"`` the first s of every descent of the pass,
#: s chosen jointly with :math:`\nu` by the same folds
#: (:func:`_choose_steps_nu`; :class:`~rflite.greedy.GFCRegressor`'s default).
STOPPINGS = ("cv", "eps")

#: Default feature cut-off: ``eta = ETA_RELATIVE * (max(y) - min(y))`` (Appendix C.1).
ETA_RELATIVE = 1e-6


class GFCResult(NamedTuple):
    r"""Result of :func:`~rflite.greedy.gfc` (Algorithm 2).

    The model is ``intercept + cos(X W^T) @ coef_cos + sin(X W^T) @ coef_sin``.

    Attributes
    ----------
    weights : (L, d) ndarray
        Spectra of the kept features.
    intercept : float
        Amplitude of the bias feature.
    coef_cos, coef_sin : (L,) ndarray
        Amplitudes of :math:`\\cos(w_l^\\top x)` and :math:`\\sin(w_l^\\top x)`.
    nu : float
        Ridge parameter of the last amplitude fit (given or cross-validated).
    n_constructed : int
        Features constructed by all greedy descents (before pruning).
    n_pruned : int
        Features removed because their amplitude was below ``eta`` (those
        of the steps ``stopping="cv"`` did not keep are not counted).
    train_rmse : float
        Root mean squared training error of the final model.
    cv_mse : (n_folds, len(NU_GRID)) ndarray or None
        Validation MSE of every :data:`NU_GRID` value on every fold of the
        last pass's choice of :math:`\nu` (None when ``nu`` was given); with
        ``stopping="cv"``, on the kept steps' features.
    steps : int or None
        ``stopping="cv"``: the steps of every descent the last pass kept
        (None otherwise).
    """

    weights: np.ndarray
    intercept: float
    coef_cos: np.ndarray
    coef_sin: np.ndarray
    nu: float
    n_constructed: int
    n_pruned: int
    train_rmse: float
    cv_mse: np.ndarray | None = None
    steps: int | None = None


def _gfc_fits(X, y, rngs, *, n_passes=1, max_steps=20, n_workers=5, nu=None, eta=None,
              eps=0.01, n_folds=5, subsample=None, cv=None, nu_grid=NU_GRID, init_scale=1.0,
              stopping="eps", executor=None, verbose=0) -> list:
    """:func:`~rflite.greedy.gfc` once per generator of ``rngs`` (a bag), the fits in lock step.

    Pass k of every fit runs its descents as tasks of one
    :func:`~rflite._core.parallel.map_tasks`, so a bag of B fits keeps up to
    ``B * n_workers`` descents in flight; each fit draws only from its own
    generator, in the order :func:`~rflite.greedy.gfc` does, so fit j is exactly
    ``gfc(X, y, rng=rngs[j], ...)`` whatever runs the tasks.
    """
    X, y = check_X_y(X, y)
    m, d = X.shape
    n_passes = check_int(n_passes, "n_passes", minimum=1)
    max_steps = check_int(max_steps, "max_steps", minimum=1)
    n_workers = check_int(n_workers, "n_workers", minimum=1)
    n_folds = check_int(n_folds, "n_folds", minimum=2)
    eps = check_real(eps, "eps", minimum=0.0)
    if nu is not None:
        nu = check_real(nu, "nu", minimum=0.0, strict=True)
    if eta is None:
        eta = ETA_RELATIVE * float(y.max() - y.min())
    eta = check_real(eta, "eta", minimum=0.0)
    if subsample is None:
        size = m // n_workers
    else:
        size = check_int(subsample, "subsample", minimum=1, maximum=m)
    if size < 2:
        raise ValueError(
            f"subsample size {size} (n_samples={m}, n_workers={n_workers}, subsample={subsample}) "
            f"must be at least 2 (a descent needs two folds of one row)"
        )
    # small samples: fewer, smaller folds rather than an error
    descent_folds = n_folds if size >= 2 * n_folds else max(2, size // 2)
    executor = check_executor(executor)
    progress = Progress(verbose, "GFC")
    init_scale = check_real(init_scale, "init_scale", minimum=0.0, strict=True)
    nu_grid = check_array(nu_grid, "nu_grid", ndim=1)
    if nu_grid.size == 0 or np.any(nu_grid <= 0):
        raise ValueError(f"nu_grid must be a non-empty array of positive floats, got {nu_grid}")
    # ascending, as the choice of nu reads it (ties go to the larger, simpler nu)
    nu_grid = np.sort(nu_grid)
    X = np.ascontiguousarray(X)
    splits = None
    if nu is None and cv is not None:
        splits = _check_splits(cv, X, y)
    opts = dict(max_steps=max_steps, n_workers=n_workers, nu=nu, eta=eta, eps=eps,
                n_folds=descent_folds, subsample=subsample, size=size, splits=splits,
                nu_grid=nu_grid, init_scale=init_scale, cv_folds=n_folds,
                stopping=check_choice(stopping, "stopping", STOPPINGS))
    runs = [_GFCRun(X, y, check_rng(r), opts, progress if progress else None,
                    f"fit {j + 1}/{len(rngs)} " if len(rngs) > 1 else "")
            for j, r in enumerate(rngs)]
    with executor_scope(executor, n_workers * len(runs)) as pool:  # one pool for all passes
        _lock_step(runs, n_passes,
                   lambda tasks: map_tasks(_descent_task, tasks, executor=pool), progress)
    return [run.result() for run in runs]


def _lock_step(runs, n_passes, compute, progress):
    """Run the passes of every fit of ``runs`` together (also the Dask fit).

    Each run has ``pass_tasks()`` (its next pass's descents) and
    ``finish_pass(results)`` (the amplitude fit; returns nu's CV errors or
    None); ``compute(tasks)`` runs the tasks of all runs' pass as one batch and
    returns their results in order.  ``progress`` (or None) prints one line
    per fit and pass.
    """
    bag = len(runs) > 1
    for k in range(n_passes):
        tasks = [run.pass_tasks() for run in runs]
        results = compute([t for ts in tasks for t in ts])
        start = 0
        for j, (run, ts) in enumerate(zip(runs, tasks)):
            cv_mse = run.finish_pass(results[start:start + len(ts)])
            start += len(ts)
            if progress:
                progress.line(f"{f'fit {j + 1}/{len(runs)}: ' if bag else ''}pass "
                              f"{k + 1}/{n_passes}: {run.weights.shape[0]} features, "
                              f"nu {run.nu_used:.3g}"
                              + (f", the first {run.steps} steps of each descent kept"
                                 if run.steps is not None else ""),
                              error=float(cv_mse.mean(axis=0).min()) if cv_mse is not None
                              else None)


class _GFCRun:
    """The state of one GFC fit between passes (:func:`_gfc_fits`).

    Draws from ``rng`` in :func:`~rflite.greedy.gfc`'s order: the folds of nu (when
    cross-validated on random folds), then per pass the subsamples and the
    descents' seeds (:meth:`pass_tasks`).
    """

    def __init__(self, X, y, rng, opts, progress=None, label=""):
        m, d = X.shape
        self.X, self.y, self.rng, self.opts = X, y, rng, opts
        self.progress, self.label = progress, label
        self.weights = np.empty((0, d))
        self.f = np.full(m, y.mean())
        self.n_constructed = self.n_pruned = 0
        self.cv_folds = (fold_ids(m, min(opts["cv_folds"], m), rng)
                         if opts["nu"] is None and opts["splits"] is None else None)
        self.a = self.nu_used = self.cv_mse = self.steps = None

    def pass_tasks(self):
        """The descents of the next pass (Algorithm 2, lines 3-4), as tasks."""
        o, progress, label = self.opts, self.progress, self.label
        n = o["n_workers"]
        samples = _draw_samples(self.X.shape[0], self.rng, n, o["size"], o["subsample"])
        seeds = spawn_seeds(self.rng, n)
        return [
            _DescentTask(self.X[S], self.y[S], self.f[S], o["max_steps"], o["eps"],
                         o["n_folds"], seed,
                         None if progress is None else (progress, f"{label}worker {j + 1}/{n}"),
                         o["init_scale"])
            for j, (S, seed) in enumerate(zip(samples, seeds))
        ]

    def finish_pass(self, results):
        """Lines 5-7 from the pass's descents; returns the nu CV errors (or None)."""
        o = self.opts
        new = [r.weights for r in results]
        weights = np.vstack([self.weights, *new])
        with shared_blas_limit(1):
            (self.weights, self.a, self.f, self.nu_used, n_new, n_cut, self.cv_mse,
             self.steps) = _amplitude_fit(self.X, self.y, weights, new, o["nu"],
                                          self.cv_folds, o["splits"], o["nu_grid"], o["eta"],
                                          o["stopping"])
        self.n_constructed += n_new
        self.n_pruned += n_cut
        return self.cv_mse

    def result(self) -> GFCResult:
        L, a = self.weights.shape[0], self.a
        return GFCResult(
            weights=self.weights, intercept=float(a[0]), coef_cos=a[1:L + 1].copy(),
            coef_sin=a[L + 1:].copy(), nu=float(self.nu_used), n_constructed=self.n_constructed,
            n_pruned=self.n_pruned, train_rmse=float(np.sqrt(np.mean((self.f - self.y) ** 2))),
            cv_mse=self.cv_mse, steps=self.steps,
        )


def _check_splits(cv, X, y):
    """``cv`` as validated ``(train, test)`` pairs: an explicit list, or via :func:`cv_splits`."""
    if isinstance(cv, (list, tuple)):
        m = X.shape[0]
        out = []
        for k, pair in enumerate(cv):
            try:
                train, test = (np.asarray(part) for part in pair)
            except (TypeError, ValueError):
                raise ValueError(f"cv must be None, an int, a splitter or a list of "
                                 f"(train, test) index pairs; item {k} is {pair!r}") from None
            for part in (train, test):
                if part.size == 0 or part.min() < 0 or part.max() >= m:
                    raise ValueError(f"cv: fold {k} is empty or indexes rows outside 0..{m - 1}")
            out.append((train.astype(np.int64), test.astype(np.int64)))
        if not out:
            raise ValueError("cv produced no folds")
        return out
    return cv_splits(cv, X, y)


def _draw_samples(m, rng, n_workers, size, subsample):
    """Row indices of a pass's descents (line 3): disjoint parts of one shuffle, or
    independent draws of ``size`` rows without replacement (``subsample`` given)."""
    if subsample is None:
        perm = rng.permutation(m)
        return [np.sort(perm[j * size:(j + 1) * size]) for j in range(n_workers)]
    return [np.sort(rng.choice(m, size, replace=False)) for _ in range(n_workers)]


def _intercept_only(d, y) -> GFCResult:
    """The guard's model: no features, the mean of ``y`` as intercept."""
    empty = np.zeros(0)
    return GFCResult(weights=np.zeros((0, d)), intercept=float(y.mean()), coef_cos=empty,
                     coef_sin=empty, nu=float("nan"), n_constructed=0, n_pruned=0,
                     train_rmse=float(np.sqrt(np.mean((y - y.mean()) ** 2))), cv_mse=None)


def _bag_rngs(rng, n) -> list:
    """Generators of a bag's ``n`` fits: ``rng`` itself for the first (so one fit is
    :func:`~rflite.greedy.gfc` with ``rng``) and streams spawned from a copy of it for the others
    (``rng`` is not advanced by the spawning)."""
    if n == 1:
        return [rng]
    twin = np.random.Generator(copy.deepcopy(rng.bit_generator))
    return [rng] + spawn_streams(twin, n - 1)
