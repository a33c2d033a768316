r"""Algorithm 1 of greedy feature construction: the descent loop (private machinery of :mod:`rflite.greedy`).

Each greedy step draws a start spectrum, fits the spectrum :math:`w` and the
ridge parameter :math:`\lambda` of one new cosine-wave feature by L-BFGS-B
on the cross-validated hyper-objective (:func:`rflite._gfc.kernels._hyper_objective`,
Oglic and Gärtner, *Greedy feature construction*, NIPS 2016, Sec. 2), adds
the feature with its ridge amplitudes (:func:`rflite._gfc.kernels._ridge_step`)
and stops when the training error no longer falls by ``eps``.  The random
fold assignment, the result type and the task wrapper the executor runs are
here too.  Split out of :mod:`rflite.greedy`, which re-exports
:class:`DescentResult`, :func:`fold_ids` and the constants (setting them
there reaches this module) and holds the public :func:`rflite.greedy.greedy_descent`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import scipy.optimize

from rflite._gfc.kernels import _hyper_objective, _ridge_step
from rflite._core.validation import check_int
from rflite._core.random import check_rng
from rflite._core.blas import shared_blas_limit


#: Initial ridge parameter :math:`\lambda` of every greedy step.
LAM_INIT = 1e-4


#: Bounds of :math:`\lambda` in the L-BFGS-B search (optimised as log lambda).
LAM_BOUNDS = (1e-10, 1e2)


#: L-BFGS-B iterations per greedy step.
LBFGS_MAXITER = 100


class DescentResult(NamedTuple):
    """Result of :func:`greedy_descent` (Algorithm 1).

    Attributes
    ----------
    weights : (p, d) ndarray
        The spectra :math:`w_k` of the constructed features, in order.
    amplitudes : (p, 3) ndarray
        :math:`(c_0, c_1, c_2)` of each step (on the whole sample).
    lams : (p,) ndarray
        Ridge parameter chosen at each step.
    f : (s,) ndarray
        Final estimates :math:`f_p` at the sample points.
    errors : (p + 1,) ndarray
        Training MSE :math:`\\mathcal{E}_z(f_k)`, ``k = 0 .. p``.
    n_steps : int
        ``p``, the number of features constructed.
    """

    weights: np.ndarray
    amplitudes: np.ndarray
    lams: np.ndarray
    f: np.ndarray
    errors: np.ndarray
    n_steps: int


def fold_ids(n_samples, n_folds, rng=None) -> np.ndarray:
    """Random fold assignment: a permutation cut into ``n_folds`` near-equal folds."""
    n_samples = check_int(n_samples, "n_samples", minimum=1)
    n_folds = check_int(n_folds, "n_folds", minimum=2, maximum=n_samples)
    ids = np.empty(n_samples, dtype=np.int64)
    ids[check_rng(rng).permutation(n_samples)] = np.arange(n_samples) % n_folds
    return ids


def _check_folds(folds, s):
    folds = np.asarray(folds)
    if folds.ndim != 1 or folds.shape[0] != s or not np.issubdtype(folds.dtype, np.integer):
        raise ValueError(f"folds must be a 1-d integer array of length {s}, got {folds!r}")
    folds = np.ascontiguousarray(folds, dtype=np.int64)
    if folds.min() < 0:
        raise ValueError(f"folds must be non-negative fold ids, got min {folds.min()}")
    k = int(folds.max()) + 1
    counts = np.bincount(folds, minlength=k)
    if k < 2 or np.any(counts == 0):
        raise ValueError(f"folds must use ids 0..k-1 with k >= 2, all non-empty; got {counts}")
    return folds, k


class _DescentTask(NamedTuple):
    X: np.ndarray
    y: np.ndarray
    f: np.ndarray
    max_steps: int
    eps: float
    n_folds: int
    seed: np.random.SeedSequence
    progress: tuple | None = None  # (Progress, label) when verbose
    init_scale: float = 1.0


def _descent_task(task: _DescentTask) -> DescentResult:
    """One worker of Algorithm 2 (module level, so process and Dask pools can pickle it)."""
    return _greedy_descent(task.X, task.y, task.f, task.max_steps, task.eps, task.n_folds,
                           np.random.default_rng(task.seed), task.progress, task.init_scale)


def _greedy_descent(X, y, f, max_steps, eps, n_folds, rng, progress=None,
                    init_scale=1.0) -> DescentResult:
    r"""Algorithm 1 on clean input (C-contiguous float64 ``X``, a copy of ``f``).

    ``progress``: ``(Progress, label)`` to print one line per step.
    ``init_scale``: initial spectra :math:`w \sim N(0, s^2 I / d)` (the paper: 1).

    Runs with one BLAS thread: L-BFGS-B makes a few BLAS calls on (d + 1)-
    vectors per iteration, and with a multi-threaded OpenBLAS each of them
    pays the threads' start-up, which dwarfs the work (the numbers are the
    same: such short vectors are never split over threads).
    """
    X, y = kernel_input(X), kernel_input(y)
    with shared_blas_limit(1):
        return _greedy_descent_serial(X, y, f, max_steps, eps, n_folds, rng, progress,
                                      init_scale)


def kernel_input(a):
    """``a`` as the kernels take it: C-contiguous and writeable, copied only if not.

    numba compiles a separate copy of a kernel for read-only arrays (a memory
    map, a Dask block, a frozen view): about 5 s per process on first use for
    GFC's three kernels, for the same machine code.
    """
    return np.require(a, requirements=["C", "W"])


def _greedy_descent_serial(X, y, f, max_steps, eps, n_folds, rng, progress, init_scale):
    """:func:`_greedy_descent` under a one-thread BLAS limit."""
    s, d = X.shape
    folds = fold_ids(s, n_folds, rng)
    lo, hi = math.log(LAM_BOUNDS[0]), math.log(LAM_BOUNDS[1])
    bounds = [(None, None)] * d + [(lo, hi)]
    err = float(np.mean((f - y) ** 2))
    errors, weights, amps, lams = [err], [], [], []

    def fun(theta, scale):
        lam = math.exp(theta[d])
        value, grad = _hyper_objective(X, y, f, np.ascontiguousarray(theta[:d]), lam, folds,
                                       n_folds)
        grad[d] *= lam  # d/d(log lam)
        return value / scale, grad / scale

    for _ in range(max_steps):
        # L-BFGS-B's stopping tests are absolute for objectives below 1: scale
        # the objective to O(1) by the current training error (same minimiser).
        scale = err if err > 0.0 else 1.0
        theta0 = np.concatenate([init_scale * rng.standard_normal(d) / math.sqrt(d),
                                 [math.log(LAM_INIT)]])
        opt = scipy.optimize.minimize(fun, theta0, jac=True, method="L-BFGS-B", bounds=bounds,
                                      args=(scale,), options={"maxiter": LBFGS_MAXITER})
        w = np.ascontiguousarray(opt.x[:d])
        lam = math.exp(opt.x[d])
        c = _ridge_step(X, y, f, w, lam)  # updates f in place
        weights.append(w)
        amps.append(c)
        lams.append(lam)
        new_err = float(np.mean((f - y) ** 2))
        errors.append(new_err)
        if progress is not None:
            progress[0].line(f"{progress[1]} step {len(weights)}/{max_steps}  train "
                             f"{new_err:.4g}  validation {opt.fun * scale:.4g}")
        denom = max(new_err, err)
        done = denom == 0.0 or abs(new_err - err) / denom < eps
        err = new_err
        if done:
            break
    return DescentResult(np.array(weights).reshape(-1, d), np.array(amps).reshape(-1, 3),
                         np.array(lams), f, np.array(errors), len(weights))
