r"""SHRIMP: sparser random feature models by iterative magnitude pruning.

Starting from the minimum-norm interpolant on all columns of a random-feature
matrix, SHRIMP repeatedly removes the fraction ``p`` of the surviving columns
with the smallest coefficients and refits the minimum-norm solution on the
rest (Xie, Shi, Schaeffer and Ward 2022, Algorithm 1):

.. math::

    c_0 = A^{+} y, \qquad
    P_t = P_{t-1} \setminus \{N_{t-1} - N_t
          \text{ indices of smallest } |c_{t-1, i}|\}, \qquad
    c_t = A_{P_t}^{+} y .

The step with the lowest validation error is the model (Sec. 3, App. A).

Pruning schedule
----------------
The paper states the sizes in closed form, :math:`N_t = N (1-p)^t` (Sec. 3,
complexity discussion), and its Fig. 4 prints :math:`N_t = 20000, 8192, 879,
38, 12` at :math:`t = 0, 4, 14, 28, 33` for :math:`N_0 = 20000` columns
(N = 10000 weights, ``[cos, sin]``) and p = 0.2, i.e.
:math:`N_t = \lfloor N_0 (1-p)^t \rfloor`: ``schedule="paper"``, the default.
Algorithm 1's wording, "prune :math:`p |P_{t-1}|` features", read as
:math:`N_t = N_{t-1} - \lfloor p N_{t-1} \rfloor` compounds the rounding and
keeps more columns (881, 40, 14 at the same steps): ``schedule="recursive"``
(this module's schedule up to rflite 0.1.0).  Both remove at least one column
per step and never go below ``min_features`` (:func:`prune_counts`).

Ranking
-------
Which columns are removed is decided on magnitudes rounded to a binary grid
of spacing :math:`h = ` :data:`TIE_RTOL` :math:`\cdot 2^e`, :math:`2^e` the
power of two just above :math:`\max|c|`; magnitudes in the same grid cell are ties, removed in
increasing column order.  The coefficients carry rounding errors that depend
on the BLAS build and thread count, and an exact sort turns a last-bit
difference between two nearly equal magnitudes into a different support
(:func:`_prune_order`).

Numerics of the path
--------------------
The published code recomputes a pseudo-inverse (an SVD of the m x N_t matrix)
and all Gram eigenvalues at every step.  The random Fourier dictionaries are
smooth, hence numerically low rank: with q = 1 (f1, f2) the condition number
of the m x N matrix is about 1e12, so the normal equations (condition 1e24)
cannot give the ~16 digits that the paper's exactly representable targets
need (test MSE 1e-22 and below).  The path therefore updates triangular
factors as columns are removed, using the Gram matrix only where that is safe
and orthogonal factors elsewhere:

* **over-parameterised steps** (:math:`N_t \ge m`), a triangular factor
  ``U`` with :math:`A_P A_P^T = U^T U`, kept in one of two modes:

  - *well conditioned* (:math:`\kappa(A_P) \lesssim 10^5`, ``dpocon``
    estimate against :data:`GRAM_RCOND`): ``U`` is the Cholesky factor of the
    m x m Gram matrix, which is *downdated* by the removed columns,
    :math:`G_t = G_{t-1} - A_R A_R^T` (one ``dsyrk``: the whole path costs
    :math:`O(m^2 N)` instead of :math:`O(m^2 N / p)`), labels ``"gram"`` /
    ``"gram-downdate"``;
  - *ill conditioned*: ``U`` is the R factor of a Householder QR of
    :math:`A_P^T` (LQ of :math:`A_P`), solved in factored form (``dgeqrf`` +
    ``dormqr``, backward stable whatever :math:`\kappa`, label ``"lq"``) and
    then downdated in *orthogonal coordinates*: with
    :math:`Q_R = A_R^T U^{-1}`, :math:`I - Q_R^T Q_R = S^T S` (Cholesky of a
    well-conditioned m x m matrix) and the new factor is :math:`S U`
    (:func:`_lq_downdate`; the Gram matrix, whose condition is
    :math:`\kappa^2`, is never formed), label ``"lq-downdate"``.

  Downdated factors are used through the semi-normal equations
  :math:`c = A_P^T U^{-1} U^{-T} y` followed by **iterative refinement
  against** :math:`A_P` (the residual :math:`y - A_P c` is computed with the
  matrix itself; corrected semi-normal equations, Björck 1996, Sec. 6.6).
  Refinement contracts by about :math:`u\,\kappa(A_P)^2` (plus the
  downdating error); when it does not reach :data:`REFINE_ACCEPT` the factor is
  recomputed (Gram if still well conditioned, else Householder);
* **under-parameterised steps** (:math:`N_t < m`): the least-squares QR
  :math:`A_P = Q R` with :math:`Q^T y` kept; deleting columns re-triangularises
  :math:`R_{:, K}` (an :math:`O(N_t^3)` update, :func:`_qr_delete_columns`,
  label ``"qr-ls"``), backward stable;
* a factor with a diagonal ratio below :data:`RANK_RTOL` (numerically rank
  deficient) falls back to LAPACK ``gelsd`` on :math:`A_P` (wide ``"svd"``,
  tall ``"qr-pivoted"``, :func:`rflite._numerics.min_norm_solve`), which
  truncates small singular values like ``pinv``.

The factorisations live in :mod:`rflite._imp_factor`.

Accuracy (measured on the Table 2 problems, m = 126, 20000 columns): on
well-conditioned steps the coefficients agree with ``numpy.linalg.pinv`` to
1e-12 ... 1e-14 relative (the tests require 1e-8); on steps with
:math:`\kappa \approx 10^{12}` any two backward-stable solvers differ by about
:math:`u \kappa`, pinv included.  f2 reaches test MSE ~1e-31 and f3 ~1e-20.
The solver used at each step is recorded in :attr:`SHRIMPPath.solver`.

Memory: the matrix is held transposed (columns of ``A`` contiguous) and
compacted in place as columns are removed (:func:`_compact_rows`, the only
jitted kernel: everything else is BLAS / LAPACK bound), so a path needs the
m x N matrix once plus O(m^2).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from rflite import _dask
from rflite._base import RandomFeatureModel
from rflite._imp_factor import (  # noqa: F401 - the constants are public here
    GRAM_RCOND,
    MAX_REFINE,
    DOWNDATE_RTOL,
    RANK_RTOL,
    REFINE_ACCEPT,
    REFINE_RTOL,
    _compact_rows,
    _MinNormSolver,
)
from rflite._numerics import (
    blas_threads,
    check_array,
    check_bool,
    check_choice,
    check_int,
    check_real,
    check_rng,
    check_X_y,
    min_norm_solve,
    spawn_streams,
)
from rflite._parallel import map_tasks
from rflite.features import FeatureOperator, Normal

__all__ = [
    "METHODS",
    "MAX_REFINE",
    "REFINE_RTOL",
    "REFINE_ACCEPT",
    "RANK_RTOL",
    "DOWNDATE_RTOL",
    "BLAS_THREAD_MIN_ROWS",
    "BLAS_THREADS",
    "GRAM_RCOND",
    "SCHEDULES",
    "MAX_PRUNE_STEPS",
    "TIE_RTOL",
    "SHRIMPPath",
    "shrimp_path",
    "prune_counts",
    "SHRIMPRegressor",
    "SHRIMPSelection",
    "select_shrimp",
]

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

#: Paths on fewer training rows than this run with single-threaded BLAS
#: (see :func:`_blas_threads`).
BLAS_THREAD_MIN_ROWS = 1000

#: BLAS threads for larger paths (``None``: the library default).  One thread,
#: because on the shared 2-core machine this was written on, OpenBLAS's two
#: threads made the high-dimensional f7 path 6x *slower* (45 s against 7.8 s:
#: a 1260 x 1260 Cholesky took 2 s instead of 0.08 s when the other core was
#: busy).  Set to ``None`` on a dedicated machine.
BLAS_THREADS = 1



class SHRIMPPath(NamedTuple):
    r"""The whole pruning path of :func:`shrimp_path` (steps ``t = 0 .. T``).

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
        ``"qr-ls"`` (updated least-squares QR, :math:`N_t < m`), ``"svd"`` /
        ``"qr-pivoted"`` (rank-deficient fallbacks, ``gelsd`` on the wide /
        tall :math:`A_P`) or
        ``"none"`` (naive pruning).
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


def shrimp_path(
    A,
    y,
    *,
    prune_rate: float = 0.2,
    n_steps: int | None = None,
    min_features: int = 1,
    schedule: str = "paper",
    method: str = "magnitude",
    A_val=None,
    y_val=None,
    track_spectrum: bool = False,
    rng=None,
) -> SHRIMPPath:
    r"""SHRIMP pruning path on a fixed feature matrix (Xie et al. 2022, Algorithm 1).

    .. math::

        c_t = A_{P_t}^{+} y = \arg\min \{\|c\|_2 : c \in
        \arg\min_{c'} \|A_{P_t} c' - y\|_2\},

        P_t = P_{t-1} \setminus \text{(the } N_{t-1} - N_t
        \text{ indices with smallest } |c_{t-1,i}|),

    with :math:`N_t` from :func:`prune_counts` (by default the paper's
    :math:`\lfloor N_0 (1-p)^t \rfloor`).  Magnitudes within the grid spacing
    :data:`TIE_RTOL` :math:`\cdot \max|c|` (same grid cell) are ties, removed
    lowest column index first, so that last-bit differences in ``c`` (another
    BLAS, another thread count) do not change the support
    (:func:`_prune_order`).  See the module notes for how the minimum-norm
    solves are done (downdated Gram, Cholesky, iterative refinement against
    :math:`A_{P_t}`, ``gelsd`` fallback).

    Parameters
    ----------
    A : (m, n) array_like or FeatureOperator
        Real feature matrix (columns are pruned), e.g. the ``[cos, sin]``
        dictionary of SHRIMP; a :class:`~rflite.features.FeatureOperator` is
        materialised column block by column block.  Not modified.
    y : (m,) array_like
        Training targets.
    prune_rate : float in (0, 1)
        Fraction ``p`` of the surviving columns removed per step (paper: 0.2).
    n_steps : int, optional
        Maximum number of pruning steps ``T``; default: until ``min_features``.
    min_features : int >= 1
        Never prune below this many columns.
    schedule : {"paper", "recursive"}
        How many columns survive each step (:func:`prune_counts`): the paper's
        :math:`\lfloor N_0 (1-p)^t \rfloor` (default, SHRIMP Fig. 4) or
        :math:`N_{t-1} - \lfloor p N_{t-1} \rfloor`.
    method : {"magnitude", "random", "naive", "subset"}
        See :data:`METHODS`.  ``"random"`` and ``"subset"`` use ``rng``.
    A_val : (m_val, n) array_like or FeatureOperator, optional
    y_val : (m_val,) array_like, optional
        Validation data (both or neither): adds ``val_mse`` and ``best_step``.
    track_spectrum : bool
        Also record the extreme eigenvalues of the scaled Gram matrix (Fig. 6);
        costs an eigenvalue decomposition of a ``min(m, N_t)`` square matrix
        per step.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    SHRIMPPath

    Raises
    ------
    ValueError
        Naming the parameter: ``prune_rate`` outside (0, 1), shape mismatch,
        NaN / inf, complex ``A``, unknown ``method`` or ``schedule``,
        ``A_val`` without ``y_val``, a schedule longer than
        :data:`MAX_PRUNE_STEPS`.

    References
    ----------
    Y. Xie, B. Shi, H. Schaeffer, R. Ward, "SHRIMP: Sparser Random Feature
    Models via Iterative Magnitude Pruning", MSML 2022, Algorithm 1 and
    Sec. 4.4; Å. Björck, *Numerical Methods for Least Squares Problems*, 1996,
    Sec. 6.6 (corrected semi-normal equations).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> A = rng.standard_normal((20, 200))
    >>> y = A[:, :3] @ np.array([1.0, -2.0, 3.0])
    >>> path = shrimp_path(A, y, prune_rate=0.2)
    >>> path.n_kept[:4].tolist()
    [200, 160, 128, 102]
    """
    prune_rate, n_steps, min_features = _check_schedule(prune_rate, n_steps, min_features,
                                                        schedule)
    check_choice(method, "method", METHODS)
    track_spectrum = check_bool(track_spectrum, "track_spectrum")
    rng = check_rng(rng)

    At = _transposed_copy(A, "A")
    check_int(min_features, "min_features", minimum=1, maximum=At.shape[0])
    # refuses over-long schedules before any work is done
    counts = prune_counts(At.shape[0], prune_rate, n_steps=n_steps,
                          min_features=min_features, schedule=schedule)
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
    with _blas_threads(At.shape[1]):
        return _path(At, y, Vt, y_val, counts, method, bool(track_spectrum), rng)


# ---------------------------------------------------------------------- model
class SHRIMPRegressor(RandomFeatureModel):
    r"""SHRIMP regressor: q-sparse random Fourier features pruned by IMP.

    Stage I draws the Def. 3 dictionary (``N // C(d, q)`` weights on every
    q-subset of the inputs, :math:`\rho = N(0, I_q / q)`, columns
    :math:`[\cos(XW^T), \sin(XW^T)]`, no bias); Stage II holds out a seeded
    ``validation_fraction`` of the training rows, runs :func:`shrimp_path` on
    the rest, picks the step with the lowest validation MSE and (``refit``)
    recomputes the minimum-norm coefficients on that support using all
    training rows, as the published code does (Xie et al. 2022, Algorithm 1,
    Sec. 4.2, App. A).

    .. math::

        \hat f(x) = \sum_{j \in P_{t^*}} c_j\, \phi_j(x), \qquad
        t^* = \arg\min_t \mathrm{MSE}_{\rm val}(c_t).

    Parameters
    ----------
    n_features : int
        Number of weight vectors N (2N columns with ``"fourier"``); paper 10000.
    q : int
        Variables per feature (the paper's order q*).
    prune_rate : float in (0, 1)
        Fraction pruned per step (paper 0.2).
    n_steps, min_features, schedule, method
        See :func:`shrimp_path`; ``schedule="paper"`` (default) keeps
        :math:`\lfloor N_0 (1-p)^t \rfloor` columns at step t, as in the
        paper's experiments.
    validation_fraction : float in (0, 1)
        Share of the training rows held out to choose the step (paper 0.1).
    refit : bool
        Refit the chosen support on all training rows (default), or keep the
        path coefficients fitted without the validation rows.
    distribution : None, "normal", "uniform", Normal or Uniform
        ``None``: ``Normal(scale=1/sqrt(q))``, the paper's :math:`N(0, I/q)`.
    subsets, bias, activation
        Feature options (:func:`rflite.features.random_feature_map`); the
        paper's are ``"all"``, ``"none"``, ``"fourier"``.
    track_spectrum : bool
        Record the Gram spectrum along the path (``path_.eig_min/eig_max``).
    fit_intercept : bool, default True
        Centre ``y`` and the feature columns with the (weighted) means of the
        rows the coefficients are fitted on (the training part for the path
        and the validation error, all rows for the refit), and recover
        :math:`c_0 = \bar y - \bar a_S^T c_S` exactly.  ``False``: the
        paper's model (no intercept).
    random_state : None, int or numpy.random.Generator
        Seeds the validation split, the features and random pruning (three
        independent streams).

    Notes
    -----
    ``sample_weight`` scales the rows by :math:`\sqrt{w_i}` in the path's
    minimum-norm solves, in the validation error (a weighted MSE) and in the
    refit; zero-weight rows are dropped before anything else.  The random
    validation split is drawn over the distinct rows, so integer weights are
    *not* the same as repeated rows (a repeated row can land on both sides of
    the split); with ``validation_fraction`` fixed, a row of weight k counts
    k times in every solve and in the validation error.

    With ``subsets="all"`` the map has ``C(d, q) * (n_features // C(d, q))``
    weight vectors (Def. 3), fewer than ``n_features`` unless ``C(d, q)``
    divides it: the effective number is ``n_features_`` and an
    :class:`~rflite._base.EffectiveFeaturesWarning` says so.  A ``q`` above d
    is clipped to d (``q_``).

    For a 2-d ``y`` each output is an independent fit (own path and step, on
    the same features and split); ``support_`` is the union of the supports
    and ``coef_`` has shape (len(support_), n_targets); ``path_``,
    ``best_step_`` and ``validation_mse_`` are lists over outputs.

    The whole fit (features, path, refit) runs with BLAS limited to the
    threads of :func:`_blas_threads` (one, with the default
    :data:`BLAS_THREADS`), so a seed gives the same model whatever
    ``OPENBLAS_NUM_THREADS`` / ``OMP_NUM_THREADS`` say: BLAS reductions round
    differently with the thread count, and the minimum-norm refit of a
    numerically rank-deficient support (whose coefficients can reach 1e12)
    amplified that to prediction differences of 1e-2.  The pruning decisions
    are also protected by the tie rule of :func:`_prune_order`.

    Attributes
    ----------
    path_ : SHRIMPPath
        The path on the training part (with validation MSEs).
    best_step_ : int
    validation_mse_ : float
    feature_map_, support_, coef_, intercept_
        See :class:`rflite._base.RandomFeatureModel` (intercept is 0).

    Examples
    --------
    >>> from rflite.datasets import make_shrimp2
    >>> X, y = make_shrimp2(140, d=10, rng=0)
    >>> model = SHRIMPRegressor(n_features=2000, q=1, random_state=0).fit(X, y)
    >>> model.n_nonzero_ < 200
    True
    """

    def __init__(self, n_features=10000, *, q=1, prune_rate=0.2, n_steps=None,
                 min_features=1, schedule="paper", method="magnitude",
                 validation_fraction=0.1, refit=True,
                 distribution=None, subsets="all", bias="none", activation="fourier",
                 track_spectrum=False, fit_intercept=True, random_state=None):
        self.n_features = n_features
        self.q = q
        self.prune_rate = prune_rate
        self.n_steps = n_steps
        self.min_features = min_features
        self.schedule = schedule
        self.method = method
        self.validation_fraction = validation_fraction
        self.refit = refit
        self.distribution = distribution
        self.subsets = subsets
        self.bias = bias
        self.activation = activation
        self.track_spectrum = track_spectrum
        self.fit_intercept = fit_intercept
        self.random_state = random_state

    def _fit_workspace(self, m, n_columns, itemsize, dense):
        """Bytes a fit needs beyond the feature matrix (for ``_check_feature_memory``).

        Measured peak 4.0x the ``m x n_columns`` matrix (m = 1000, 10000
        columns): the training and validation matrices, their centred and
        weighted versions and the path's transposed working copy
        (:func:`shrimp_path` owns one), plus the ``m x m`` factors of the
        over-parameterised steps.
        """
        return 3 * m * n_columns * itemsize + 3 * m * m * 8

    def _default_distribution(self, d):
        # the SHRIMP paper's N(0, 1/q) weights (q = d for dense weights; a q
        # above d is clipped to d, as the map's supports are)
        return Normal(scale=1.0 / math.sqrt(min(self.q, d) if self.q is not None else d))

    def fit(self, X, y, sample_weight=None):
        """Draw the features, run the path, select the step, refit; returns ``self``."""
        if _dask.is_dask_array(X):  # distributed fit (issue 16): all logic in rflite._dask
            return _dask.fit_shrimp(self, X, y, sample_weight)
        X, Y, w = self._validate_fit(X, y, sample_weight)
        m, d = X.shape
        check_int(self.n_features, "n_features", minimum=1)
        if self.q is not None:
            check_int(self.q, "q", minimum=1)
        frac = check_real(self.validation_fraction, "validation_fraction", minimum=0.0,
                          strict=True)
        if not frac < 1.0:
            raise ValueError(f"validation_fraction must be in (0, 1), got {frac}")
        n_val = int(round(frac * m))
        if n_val < 1 or m - n_val < 1:
            raise ValueError(
                f"validation_fraction={frac} leaves no validation or no training rows "
                f"for m={m} samples"
            )
        # the path materialises the (n_columns x m) training matrix
        self._check_feature_memory(m, d)
        # one BLAS thread setting for every step of the fit, whatever the
        # environment asks for: the model must not depend on the thread count
        with _blas_threads(m):
            return self._fit(X, Y, w, m, d, n_val)

    def _fit(self, X, Y, w, m, d, n_val):
        import warnings

        from rflite._base import EffectiveFeaturesWarning

        split_rng, feat_rng, path_rng = spawn_streams(self._rng(), 3)
        perm = split_rng.permutation(m)
        val, tr = np.sort(perm[:n_val]), np.sort(perm[n_val:])
        fmap = self._draw_features(d, feat_rng)
        if fmap.is_complex:
            raise ValueError(f"activation must give real features, got {self.activation!r}")
        self.n_features_ = fmap.n_features
        if fmap.n_features != self.n_features:
            warnings.warn(
                f"subsets={self.subsets!r} with q={self.q_} on d={d} inputs keeps "
                f"{fmap.n_features} weight vectors instead of n_features={self.n_features} "
                "(n_features // C(d, q) per subset, Def. 3); recorded in n_features_",
                EffectiveFeaturesWarning, stacklevel=3,
            )
        w_tr = None if w is None else w[tr]
        w_val = None if w is None else w[val]
        A_tr, Y_tr, a_mean, y_mean = self._center_and_weight(fmap.transform(X[tr]), Y[tr], w_tr)
        A_val = fmap.transform(X[val])
        Y_val = Y[val] - y_mean
        if a_mean is not None:
            A_val -= a_mean
        if w_val is not None:
            A_val *= np.sqrt(w_val)[:, None]
            Y_val = Y_val * np.sqrt(w_val)[:, None]
        paths, bests, supports, coefs = [], [], [], []
        path_state = path_rng.bit_generator.state
        for k in range(Y.shape[1]):
            # every output starts from the same pruning stream: output k of a
            # 2-d fit is the 1-d fit of column k
            path_rng.bit_generator.state = path_state
            path = shrimp_path(
                A_tr, Y_tr[:, k], A_val=A_val, y_val=Y_val[:, k],
                prune_rate=self.prune_rate, n_steps=self.n_steps,
                min_features=self.min_features, schedule=self.schedule, method=self.method,
                track_spectrum=self.track_spectrum, rng=path_rng,
            )
            best = path.best_step
            paths.append(path)
            bests.append(best)
            supports.append(path.supports[best])
            coefs.append(path.coefs[best])
        del A_tr, A_val
        if self.refit:
            # refit on all rows, centred with the means of all rows: only the
            # kept columns are evaluated (never a second m x n_columns matrix)
            union = np.unique(np.concatenate(supports))
            A_U, Y_all, u_mean, y_mean = self._center_and_weight(
                fmap.columns(X, union), Y, w)
            a_mean = None
            if u_mean is not None:
                a_mean = np.zeros(fmap.n_columns, dtype=u_mean.dtype)
                a_mean[union] = u_mean
            coefs = [min_norm_solve(A_U[:, np.searchsorted(union, S)], Y_all[:, k])
                     for k, S in enumerate(supports)]
        one = getattr(self, "_one_d", True)
        self.path_ = paths[0] if one else paths
        self.best_step_ = bests[0] if one else bests
        mses = [float(p.val_mse[b]) for p, b in zip(paths, bests)]
        self.validation_mse_ = mses[0] if one else mses
        self.train_indices_, self.validation_indices_ = tr, val
        return self._finish(fmap, supports, coefs, a_mean, y_mean)


class SHRIMPSelection(NamedTuple):
    """Result of :func:`select_shrimp`.

    Attributes
    ----------
    model : SHRIMPRegressor
        Fitted with the chosen ``q`` and ``prune_rate`` (refit on all rows).
    q : int
    prune_rate : float
    val_mse : (len(qs), len(prune_rates)) ndarray
        Best validation MSE of every candidate.
    qs : tuple of int
    prune_rates : tuple of float
    """

    model: SHRIMPRegressor
    q: int
    prune_rate: float
    val_mse: np.ndarray
    qs: tuple
    prune_rates: tuple


def select_shrimp(X, y, *, qs=None, prune_rates=(0.15, 0.25, 0.35), n_features=10000,
                  validation_fraction=0.1, random_state=None, callback=None, executor=None,
                  **params) -> SHRIMPSelection:
    r"""Choose ``q`` and the prune rate on a validation split (SHRIMP Sec. 4.2).

    Every candidate :math:`(q, p)` is a :class:`SHRIMPRegressor` fitted with the
    *same* seed, hence the same 90 / 10 split; the one with the lowest
    validation MSE (at its best step) is returned, refit on all rows.  The
    paper searches :math:`q \in \{1, \dots, \min(10, d)\}` and
    :math:`p \in \{15\%, 25\%, 35\%\}`.

    Parameters
    ----------
    X, y : training data
    qs : iterable of int, optional
        Default ``1 .. min(10, d)``.
    prune_rates : iterable of float
    n_features, validation_fraction
        Passed to :class:`SHRIMPRegressor`.
    random_state : None, int or numpy.random.Generator
        One seed is drawn from it and shared by all candidates.
    callback : callable, optional
        ``callback(q, prune_rate, val_mse)`` after each candidate (progress).
    executor : None, int or Executor
        Where the candidate fits run (:func:`rflite._parallel.map_tasks`:
        serial, a local process pool, Dask, MPI); the result is the same.
    **params
        Other :class:`SHRIMPRegressor` parameters.

    Returns
    -------
    SHRIMPSelection
    """
    X, y = check_X_y(X, y)
    d = X.shape[1]
    qs = tuple(range(1, min(10, d) + 1)) if qs is None else tuple(
        check_int(q, "qs", minimum=1, maximum=d) for q in qs)
    if not qs:
        raise ValueError("qs must not be empty")
    prune_rates = tuple(check_real(p, "prune_rates", minimum=0.0, strict=True)
                        for p in prune_rates)
    if not prune_rates or any(p >= 1.0 for p in prune_rates):
        raise ValueError(f"prune_rates must be a non-empty list of values in (0, 1), "
                         f"got {prune_rates}")
    seed = int(check_rng(random_state).integers(0, 2**63 - 1))
    scores = np.full((len(qs), len(prune_rates)), np.inf)
    best = None
    grid = [(i, j) for i in range(len(qs)) for j in range(len(prune_rates))]
    tasks = [(X, y, dict(n_features=n_features, q=qs[i], prune_rate=prune_rates[j],
                         validation_fraction=validation_fraction, random_state=seed, **params))
             for i, j in grid]
    # candidates share one seed, so the choice does not depend on where they run
    for (i, j), model in zip(grid, map_tasks(_fit_candidate, tasks, executor=executor)):
        scores[i, j] = model.validation_mse_
        if callback is not None:
            callback(qs[i], prune_rates[j], model.validation_mse_)
        if best is None or model.validation_mse_ < best.validation_mse_:
            best = model
    i, j = np.unravel_index(np.argmin(scores), scores.shape)
    return SHRIMPSelection(best, qs[i], prune_rates[j], scores, qs, prune_rates)


# ------------------------------------------------------------------ internals
def _fit_candidate(task):
    """One :func:`select_shrimp` candidate, fitted independently (the reference for tests)."""
    X, y, params = task
    return SHRIMPRegressor(**params).fit(X, y)



def _blas_threads(m: int):
    """Limit BLAS to :data:`BLAS_THREADS` threads for a path on ``m`` rows.

    Paths with fewer than :data:`BLAS_THREAD_MIN_ROWS` rows always run
    single-threaded: their factorisations are a few hundred columns wide, where
    OpenBLAS's threads cost more than they give (see
    :func:`rflite._numerics.blas_threads`).
    """
    return blas_threads(1 if m < BLAS_THREAD_MIN_ROWS else BLAS_THREADS)


def _transposed_copy(A, name: str) -> np.ndarray:
    """A private C-contiguous copy of ``A.T`` (n x m): columns of ``A`` as rows."""
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


def _path(At, y, Vt, y_val, counts, method, track_spectrum, rng):
    """Run the path on the owned working copy ``At`` (n x m, overwritten), sizes ``counts``."""
    n_all, m = At.shape
    full_At = At.copy() if method == "subset" else None
    Vt_full = Vt.copy() if method == "subset" and Vt is not None else None
    idx = np.arange(n_all, dtype=np.int64)  # column of A held in At[i]
    solver = _MinNormSolver(m)
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
