r"""The SHRIMP pruning path: schedule, ranking and the loop (private, for :mod:`rflite.imp`).

:func:`prune_counts` (how many columns survive each step), :func:`_prune_order`
(which columns go: magnitudes on a binary grid, ties by column index) and
:func:`_path` (the loop of Xie et al. 2022, Algorithm 1, over the
factorisations of :mod:`rflite._imp.factor`), with the result type
:class:`SHRIMPPath`.  Split out of :mod:`rflite.imp`, which re-exports the
public names and holds :func:`rflite.imp.shrimp_path` (input checks); the
prune rates that share one start (:func:`_shared_paths`) and the BLAS
thread rule (:func:`_blas_threads`) are here too; the module notes of
:mod:`rflite._imp.factor` describe the numerics.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from rflite._imp.factor import _compact_rows, _MinNormSolver
from rflite._core.blas import blas_threads
from rflite._core.validation import (
    check_array, check_bool, check_choice, check_int, check_real, refuse_plain_operator,
)
from rflite._core.random import check_rng
from rflite.features import FeatureOperator

__all__ = ["METHODS", "SCHEDULES", "MAX_PRUNE_STEPS", "TIE_RTOL", "VAL_TIE_RTOL",
           "SHRIMPPath", "prune_counts"]

#: Pruning rules: ``"magnitude"`` (SHRIMP: drop the smallest ``|c|``, refit),
#: ``"random"`` (drop a random subset, refit), ``"naive"`` (drop the smallest
#: ``|c_0|``, never refit: ``c_t = c_0`` restricted to ``P_t``), ``"subset"``
#: (plain minimum-norm fit on a fresh uniformly random set of ``N_t`` columns,
#: not nested).  The baselines of SHRIMP Figs. 5-8.
METHODS = ("magnitude", "random", "naive", "subset")

#: Pruning schedules of :func:`prune_counts`: ``"paper"``,
#: :math:`N_t = \lfloor N_0 (1-p)^t \rfloor` (SHRIMP Sec. 3 and Fig. 4: 879 /
#: 38 / 12 columns at t = 14 / 28 / 33 for :math:`N_0 = 20000`, p = 0.2), and
#: ``"recursive"``, :math:`N_t = N_{t-1} - \lfloor p N_{t-1} \rfloor` (881 /
#: 40 / 14).  Both remove at least one column per step.
SCHEDULES = ("paper", "recursive")

#: :func:`prune_counts` refuses schedules longer than this many steps (every
#: step is a refit; ``prune_counts(10**9, 1e-12)`` would take ~1e9 steps).
MAX_PRUNE_STEPS = 100_000

#: Relative grid spacing of the magnitude ranking, :math:`2^{-33} \approx
#: 1.2 \cdot 10^{-10}` of the power of two just above :math:`\max|c|`:
#: coefficients whose magnitudes fall in the same grid cell are ties, removed
#: lowest column index first (:func:`_prune_order`).  Far above the rounding
#: differences of a well-conditioned solve (~1e-15 relative), far below any
#: magnitude difference the ranking is meant to see; a power of two so that
#: the grid is exact (scaling by :math:`2^k` does not round).
TIE_RTOL = 2.0**-33
_TIE_BITS = 33  # -log2(TIE_RTOL)

#: Validation MSEs at or below ``VAL_TIE_RTOL**2 * mean(|y_val|^2)`` (a relative
#: RMS error of 1e-13, a few hundred ulp) are rounding noise of an interpolant:
#: on exactly representable targets a dozen steps score 1e-29 .. 1e-27 and which
#: one is lowest changes with the last bit of the features or the BLAS build.
#: Among such steps the sparsest (last) is the model (:func:`_best_step`).
VAL_TIE_RTOL = 1e-13


class SHRIMPPath(NamedTuple):
    r"""The whole pruning path of :func:`rflite.imp.shrimp_path` (steps ``t = 0 .. T``).

    Attributes
    ----------
    supports : tuple of (N_t,) int64 ndarray
        Surviving column indices of ``A`` at each step, increasing.
    coefs : tuple of (N_t,) ndarray
        Minimum-norm coefficients :math:`c_t = A_{P_t}^+ y` on ``supports[t]``
        (for ``method="naive"``: :math:`c_0` restricted to ``supports[t]``).
    n_kept : (T+1,) int64 ndarray
        :math:`N_t = |P_t|`.
    train_mse : (T+1,) ndarray
        :math:`\|A_{P_t} c_t - y\|^2 / m`.
    val_mse : (T+1,) ndarray
        Validation MSE per step; empty (shape (0,)) without validation data.
    best_step : int or None
        First step with the lowest validation MSE, or the last step whose
        validation MSE is at rounding level (:data:`VAL_TIE_RTOL`: the sparsest
        interpolant); ``None`` without validation.
    eig_max, eig_min : (T+1,) ndarray
        Largest and smallest eigenvalue of :math:`A_P A_P^T / N_t` (of
        :math:`A_P^T A_P / N_t` once :math:`N_t < m`), SHRIMP Fig. 6; empty
        unless ``track_spectrum=True``.
    solver : tuple of str
        How each step was solved (see the module notes): ``"gram"`` (fresh
        Cholesky factor of the m x m Gram matrix, refined), ``"lq"`` (fresh
        Householder LQ), ``"lq-downdate"`` (downdated factor, refined),
        ``"qr-ls"`` (updated least-squares QR, :math:`N_t < m`), ``"svd"``
        (the first numerically rank-deficient step: an SVD of :math:`A_P`),
        ``"svd-reduced"`` (every later step, in the basis of the column space
        found there) or ``"none"`` (naive pruning).
    n_columns : int
        Number of columns of ``A`` (to expand a step with :meth:`dense_coef`).
    method : str
    """

    supports: tuple
    coefs: tuple
    n_kept: np.ndarray
    train_mse: np.ndarray
    val_mse: np.ndarray
    best_step: int | None
    eig_max: np.ndarray
    eig_min: np.ndarray
    solver: tuple
    n_columns: int
    method: str

    @property
    def n_steps(self) -> int:
        """Number of pruning steps T (the path has T + 1 entries)."""
        return len(self.supports) - 1

    def dense_coef(self, t: int) -> np.ndarray:
        """Coefficients of step ``t`` as a full vector of length ``n_columns``."""
        c = np.zeros(self.n_columns, dtype=self.coefs[t].dtype)
        c[self.supports[t]] = self.coefs[t]
        return c


def _check_schedule(prune_rate, n_steps, min_features, schedule):
    """Validate the schedule parameters (naming each); returns the normalised three."""
    prune_rate = check_real(prune_rate, "prune_rate", minimum=0.0, strict=True)
    if not prune_rate < 1.0:
        raise ValueError(f"prune_rate must be in (0, 1), got {prune_rate}")
    if n_steps is not None:
        n_steps = check_int(n_steps, "n_steps", minimum=0)
    min_features = check_int(min_features, "min_features", minimum=1)
    check_choice(schedule, "schedule", SCHEDULES)
    return prune_rate, n_steps, min_features


def prune_counts(n_columns: int, prune_rate: float, *, n_steps=None, min_features=1,
                 schedule: str = "paper"):
    r"""Columns surviving each pruning step, :math:`N_0 = ` ``n_columns``, ..., :math:`N_T`.

    ``schedule="paper"`` (default), SHRIMP Sec. 3 and Fig. 4:

    .. math::

        N_t = \max\bigl(m_f,\ \min(N_{t-1} - 1,\ \lfloor N_0 (1-p)^t \rfloor)\bigr);

    ``schedule="recursive"``, Algorithm 1 read step by step:

    .. math::

        N_t = \max\bigl(m_f,\ N_{t-1} - \max(1, \lfloor p N_{t-1} \rfloor)\bigr),

    with :math:`m_f = ` ``min_features``.  At least one column is removed per
    step (the paper's formula repeats a size once :math:`p N_{t-1} < 1`, and a
    repeated support would only refit the same model); the schedule ends at
    ``min_features`` or after ``n_steps`` steps.  The paper's counts never
    exceed the recursive ones, step by step.

    :math:`\lfloor N_0 (1-p)^t \rfloor` is taken of the floating-point power,
    except that a value within its rounding error below an integer counts as
    that integer: ``20000 * 0.8**4`` is 8192 whether the binary ``0.8`` rounds
    the power up or down.

    Parameters
    ----------
    n_columns : int >= 1
        :math:`N_0`, the number of columns of the dictionary (2N for the
        ``[cos, sin]`` features of N weights).
    prune_rate : float in (0, 1)
        p.
    n_steps : int >= 0, optional
        Stop after this many steps.
    min_features : int >= 1
    schedule : {"paper", "recursive"}
        See :data:`SCHEDULES`.

    Returns
    -------
    (T+1,) int64 ndarray

    Raises
    ------
    ValueError
        Naming the parameter, for a value out of range; and, before any
        counting, when the schedule would take more than
        :data:`MAX_PRUNE_STEPS` steps.  The step count is computed in closed
        form from the paper's schedule (:func:`_paper_step_count`); it is exact
        for ``"paper"`` and a lower bound for ``"recursive"``, whose counts
        are never smaller.

    Examples
    --------
    >>> prune_counts(20000, 0.2)[[0, 4, 14, 28, 33]]   # SHRIMP Fig. 4
    array([20000,  8192,   879,    38,    12])
    >>> prune_counts(20000, 0.2, schedule="recursive")[[0, 4, 14, 28, 33]]
    array([20000,  8192,   881,    40,    14])
    """
    n_columns = check_int(n_columns, "n_columns", minimum=1)
    prune_rate, n_steps, min_features = _check_schedule(prune_rate, n_steps, min_features,
                                                        schedule)
    total = _paper_step_count(n_columns, prune_rate, min_features)
    if total > MAX_PRUNE_STEPS and (n_steps is None or n_steps > MAX_PRUNE_STEPS):
        raise ValueError(
            f"n_columns={n_columns}, prune_rate={prune_rate}, min_features={min_features} "
            f"would take {'at least ' if schedule == 'recursive' else ''}{total} pruning "
            f"steps (schedule={schedule!r}), more than MAX_PRUNE_STEPS={MAX_PRUNE_STEPS}; "
            f"use a larger prune_rate or min_features, or cap n_steps"
        )
    counts = [n_columns]
    n = n_columns
    t = 0
    while n > min_features and (n_steps is None or t < n_steps):
        t += 1
        if schedule == "paper":
            n_next = min(n - 1, _floor_power(n_columns, prune_rate, t))
        else:
            n_next = n - max(1, math.floor(prune_rate * n))
        n = max(min_features, n_next)
        counts.append(n)
    return np.asarray(counts, dtype=np.int64)


def _floor_power(n0: int, p: float, t: int) -> int:
    r""":math:`\lfloor N_0 (1-p)^t \rfloor`, robust to the rounding of ``1 - p`` and the power.

    The computed power has a relative error below
    :math:`(t + 2)(1 + p / (1-p))\,u` (``1 - p`` of the binary ``p`` is off by
    at most :math:`u\,p/(1-p)` relative from the decimal the caller meant, and
    the error compounds ``t`` times); a value that close below an integer is
    taken as that integer.
    """
    x = n0 * (1.0 - p) ** t
    k = math.floor(x)
    err = 4.0 * (t + 2) * (1.0 + p / (1.0 - p)) * np.finfo(float).eps * x
    return k + 1 if (k + 1) - x <= err else k


def _paper_step_count(n0: int, p: float, min_features: int) -> int:
    r"""Number of steps of the ``"paper"`` schedule down to ``min_features``, in closed form.

    With :math:`x_t = N_0 (1-p)^t` and :math:`L = -\log(1-p)`: while
    :math:`p\,x_{t-1} \ge 1` the formula removes at least one column,
    :math:`N_t = \lfloor x_t \rfloor` (phase 1, :math:`t \le t_1 =
    \lfloor \log(p N_0) / L \rfloor + 1`); afterwards it removes less than one
    per step and the at-least-one rule gives :math:`N_t = N_{t-1} - 1`
    (phase 2).  The schedule reaches ``min_features`` in phase 1 at the first
    :math:`t` with :math:`x_t < m_f + 1`, else after :math:`t_1 + N_{t_1} - m_f`
    steps.  Exact up to the rounding of the logarithms at phase boundaries
    (a step either way), which is all the :data:`MAX_PRUNE_STEPS` check needs.
    """
    if n0 <= min_features:
        return 0
    if p * n0 < 1.0:  # phase 2 from the start (and L may underflow: no logs)
        return n0 - min_features
    L = -math.log1p(-p)
    t1 = math.floor(math.log(p * n0) / L) + 1
    t_stop = max(1, math.ceil(math.log(n0 / (min_features + 1)) / L))
    if t_stop <= t1:
        return t_stop
    return t1 + max(0, math.floor(n0 * (1.0 - p) ** t1) - min_features)


def _transposed_copy(A, name: str) -> np.ndarray:
    """A private C-contiguous copy of ``A.T`` (n x m): columns of ``A`` as rows."""
    refuse_plain_operator(A, name, "SHRIMP's minimum-norm path")
    if isinstance(A, FeatureOperator):
        m, n = A.shape
        if A.fmap.is_complex:
            raise ValueError(f"{name} must be real, got a complex FeatureOperator")
        At = np.empty((n, m))
        block = max(1, (1 << 21) // max(1, m))
        for j0 in range(0, n, block):
            j1 = min(n, j0 + block)
            At[j0:j1] = A.columns(np.arange(j0, j1)).T
        return At
    A = check_array(A, name, ndim=2)
    if A.shape[1] < 1:
        raise ValueError(f"{name} must have at least one column, got shape {A.shape}")
    return np.ascontiguousarray(A.T) if not A.flags.f_contiguous else A.T.copy()


def _path_start(At, y):
    r"""The t = 0 minimum-norm solve on all columns: ``(solver, c_0, label)``.

    Depends on ``(A, y)`` only, not on the prune rate, so paths of several
    rates on the same matrix share it (:func:`_shared_paths`); run
    under :func:`_blas_threads` of ``At.shape[1]`` rows as
    :func:`rflite.imp.shrimp_path` does.
    """
    solver = _MinNormSolver(At.shape[1])
    c, label = solver.solve(At, y)
    return solver, c, label


def _path(At, y, Vt, y_val, counts, method, track_spectrum, rng, start=None, progress=None,
          tag=""):
    """Run the path on the owned working copy ``At`` (n x m, overwritten), sizes ``counts``.

    ``start``: a :func:`_path_start` result on the same ``(At, y)``, which
    replaces the t = 0 solve (its solver is updated in place: pass a copy
    to keep it).  ``progress``: one line per step (prefixed by ``tag``).
    """
    n_all, m = At.shape
    full_At = At.copy() if method == "subset" else None
    Vt_full = Vt.copy() if method == "subset" and Vt is not None else None
    idx = np.arange(n_all, dtype=np.int64)  # column of A held in At[i]
    solver = _MinNormSolver(m) if start is None else start[0]
    supports, coefs, train, val, emax, emin, how = [], [], [], [], [], [], []
    c = None
    for t, n_t in enumerate(counts):
        if t > 0:
            k = int(counts[t - 1] - n_t)
            if method == "subset":
                idx = np.sort(rng.choice(n_all, size=n_t, replace=False))
                At = full_At[idx]
                Vt = None if Vt is None else Vt_full[idx]
                solver.reset()
            else:
                if method == "random":
                    remove = rng.choice(idx.size, size=k, replace=False)
                else:  # magnitude, naive
                    remove = _prune_order(c, k)
                keep = np.ones(idx.size, dtype=np.bool_)
                keep[remove] = False
                keep_pos = np.flatnonzero(keep)
                removed_rows = At[np.sort(remove)] if method != "naive" else None
                _compact_rows(At, keep_pos)
                if Vt is not None:
                    _compact_rows(Vt, keep_pos)
                At, idx = At[:n_t], idx[keep_pos]
                if Vt is not None:
                    Vt = Vt[:n_t]
                if method == "naive":
                    c = c[keep_pos]
                else:
                    solver.prune(keep_pos, removed_rows)
        if method == "naive" and t > 0:
            label = "none"
        elif t == 0 and start is not None:
            c, label = start[1].copy(), start[2]
        else:
            c, label = solver.solve(At, y)
        resid = y - At.T @ c
        supports.append(idx.copy())
        coefs.append(c.copy())
        train.append(float(resid @ resid) / m)
        how.append(label)
        if Vt is not None:
            rv = y_val - Vt.T @ c
            val.append(float(rv @ rv) / y_val.shape[0])
        if track_spectrum:
            lo, hi = _extreme_eigs(At)
            emin.append(lo)
            emax.append(hi)
        if progress is not None:
            progress.line(f"{tag}step {t}/{len(counts) - 1}: {n_t} columns ({label})",
                          error=val[-1] if Vt is not None else train[-1])
    val = np.asarray(val)
    best = _best_step(val, y_val)
    return SHRIMPPath(
        supports=tuple(supports), coefs=tuple(coefs), n_kept=counts.copy(),
        train_mse=np.asarray(train), val_mse=val, best_step=best,
        eig_max=np.asarray(emax), eig_min=np.asarray(emin), solver=tuple(how),
        n_columns=n_all, method=method,
    )


def _best_step(val, y_val):
    """Step with the lowest validation MSE; the sparsest one below the rounding floor.

    See :data:`VAL_TIE_RTOL`; ``None`` without validation data.
    """
    if val.size == 0:
        return None
    floor = VAL_TIE_RTOL**2 * float(np.mean(np.abs(y_val) ** 2))
    tied = np.flatnonzero(val <= floor)
    return int(tied[-1]) if tied.size else int(np.argmin(val))


def _prune_order(c, k: int) -> np.ndarray:
    r"""Positions of the ``k`` coefficients to prune: smallest :math:`|c_i|`, near-ties by index.

    Magnitudes are compared on the grid :math:`h\,\mathbb{Z}`,
    :math:`h = ` :data:`TIE_RTOL` :math:`\cdot 2^e` with :math:`2^{e-1} \le
    \max_i |c_i| < 2^e`: the key of :math:`c_i` is :math:`\lfloor |c_i| / h
    \rfloor` (exact: a scaling by a power of two) and equal keys are ties,
    removed in increasing position.  The rule is a total order, deterministic,
    and a perturbation of relative size :math:`\delta \ll` :data:`TIE_RTOL`
    changes the outcome only if it moves a magnitude across a grid point,
    which happens with probability about :math:`\delta /` :data:`TIE_RTOL`
    per coefficient, where an exact sort flips whenever two magnitudes at the
    cut are closer than :math:`\delta`.  An all-zero ``c`` prunes by position.

    Parameters
    ----------
    c : (n,) ndarray
        Finite coefficients.
    k : int, 0 <= k <= n

    Returns
    -------
    (k,) int64 ndarray
        Positions in ``c``, in increasing key order.
    """
    a = np.abs(c)
    amax = float(a.max()) if a.size else 0.0
    if not amax > 0.0:
        return np.arange(k, dtype=np.int64)
    _, e = math.frexp(amax)  # amax < 2**e
    # |c_i| / h = |c_i| * 2**(33 - e): an exact scaling, then the cell index
    key = np.floor(np.ldexp(a, _TIE_BITS - e))
    return np.argsort(key, kind="stable")[:k].astype(np.int64)


def _extreme_eigs(At):
    r"""Smallest and largest eigenvalue of :math:`A_P A_P^T / N_t` (or :math:`A_P^T A_P / N_t`).

    Both are :math:`\sigma^2 / N_t` for the extreme singular values of
    :math:`A_P` (SHRIMP Fig. 6), computed from an SVD of :math:`A_P` rather
    than from the Gram matrix so that small eigenvalues keep their accuracy.
    """
    n_t = At.shape[0]
    s = np.linalg.svd(At, compute_uv=False)
    return s[-1] ** 2 / n_t, s[0] ** 2 / n_t


#: Paths on fewer training rows than this run with single-threaded BLAS
#: (see :func:`_blas_threads`).
BLAS_THREAD_MIN_ROWS = 1000


#: BLAS threads for larger paths (``None``: the library default).  One thread,
#: because on a shared 2-core machine OpenBLAS's two threads make the
#: high-dimensional f7 path several times *slower* (a 1260 x 1260 Cholesky
#: waits for its second thread whenever the other core is busy).  Set to
#: ``None`` on a dedicated machine.
BLAS_THREADS = 1


def _shared_paths(A, y, prune_rates, *, n_steps=None, min_features=1, schedule="paper",
                  method="magnitude", A_val=None, y_val=None, track_spectrum=False, rng=None,
                  progress=None):
    r"""``[shrimp_path(A, y, prune_rate=p, ...) for p in prune_rates]``, bit for bit, shared.

    Everything that does not depend on the prune rate is done once: the
    transposed working copies of ``A`` and ``A_val`` and the t = 0
    minimum-norm solve with its factorisation (every path starts from
    :math:`P_0` = all columns; :func:`rflite._imp.path._path_start`), which each path
    continues from a copy.  ``rng`` is rewound to its entry state before
    each path, so each one is the path a separate call would give.
    ``progress``: a :class:`rflite._core.progress.Progress` for one line per step.
    """
    schedules = [_check_schedule(p, n_steps, min_features, schedule) for p in prune_rates]
    _, n_steps, min_features = schedules[0]
    check_choice(method, "method", METHODS)
    track_spectrum = check_bool(track_spectrum, "track_spectrum")
    rng = check_rng(rng)

    At = _transposed_copy(A, "A")
    check_int(min_features, "min_features", minimum=1, maximum=At.shape[0])
    # refuses over-long schedules before any work is done
    counts_all = [prune_counts(At.shape[0], p, n_steps=n_steps, min_features=min_features,
                               schedule=schedule) for p, _, _ in schedules]
    y = check_array(y, "y", ndim=1)
    if y.shape[0] != At.shape[1]:
        raise ValueError(
            f"A and y must have the same number of rows, got A with {At.shape[1]} rows "
            f"and y {y.shape}"
        )
    Vt = None
    if (A_val is None) != (y_val is None):
        raise ValueError("A_val and y_val must be given together")
    if A_val is not None:
        Vt = _transposed_copy(A_val, "A_val")
        y_val = check_array(y_val, "y_val", ndim=1)
        if Vt.shape[0] != At.shape[0]:
            raise ValueError(
                f"A_val must have the same number of columns as A ({At.shape[0]}), "
                f"got {Vt.shape[0]}"
            )
        if y_val.shape[0] != Vt.shape[1]:
            raise ValueError(
                f"A_val and y_val must have the same number of rows, got {Vt.shape[1]} "
                f"and {y_val.shape[0]}"
            )
    state = rng.bit_generator.state
    paths = []
    with _blas_threads(At.shape[1]):
        solver, c0, label0 = _path_start(At, y)
        for i, counts in enumerate(counts_all):
            last = i == len(counts_all) - 1
            rng.bit_generator.state = state
            # the last path may overwrite the shared copies and factors
            paths.append(_path(
                At if last else At.copy(), y,
                Vt if last or Vt is None else Vt.copy(), y_val, counts, method,
                bool(track_spectrum), rng,
                start=(solver if last else solver.copy(), c0, label0),
                progress=progress if progress else None,
                tag=f"p={prune_rates[i]:g} " if len(counts_all) > 1 else ""))
    return paths


def _blas_threads(m: int):
    """Limit BLAS to :data:`BLAS_THREADS` threads for a path on ``m`` rows.

    Paths with fewer than :data:`BLAS_THREAD_MIN_ROWS` rows always run
    single-threaded: their factorisations are a few hundred columns wide, where
    OpenBLAS's threads cost more than they give (see
    :func:`rflite._core.blas.blas_threads`).
    """
    return blas_threads(1 if m < BLAS_THREAD_MIN_ROWS else BLAS_THREADS)
