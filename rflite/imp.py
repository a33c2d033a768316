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
(:func:`rflite._imp.path._prune_order`).

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
  deficient) is solved by an SVD of :math:`A_P` (label ``"svd"``; a
  Householder QR first when :math:`A_P` is wide), truncating singular values
  at most :math:`10^{-15}\sigma_{\max}` (:data:`rflite._imp.factor.SVD_RCOND`),
  ``numpy.linalg.pinv``'s cut and so the SHRIMP authors' definition of the
  minimum-norm solution.  LAPACK ``gelsd``'s default :math:`\epsilon\,
  \sigma_{\max}` would also keep the directions of
  singular values between :math:`2.2 \times 10^{-16}` and
  :math:`10^{-15}\sigma_{\max}`, which on exactly rank-deficient q = 1
  dictionaries (``insulin``'s SNP inputs take three values, so its 256 x 1000
  centred dictionary has 98 singular values down to 0.026
  :math:`\sigma_{\max}`, then 18 from rounding alone at 2.5e-16 .. 1e-14)
  would carry coefficients of 1e15.  With pinv's cut the Table 2 model sizes are
  the paper's (low-dim f1 / f3 / f4: 3230 / 147 / 172 columns against
  3100 / 147 / 172); the rounding directions above 1e-15 remain, as they do
  in the authors' code (the guarded refit handles them).  From
  then on the path runs in a **reduced basis**: removing columns cannot raise
  the rank and keeps :math:`A_{P'}` in the column space of :math:`A_P`, so
  with ``V`` (m x r) the kept left singular vectors every later step solves
  :math:`\min \|c\|` over the least-squares solutions of
  :math:`V^T A_{P'} c = V^T y` (r rows instead of m; ``V`` shrinks whenever
  the rank drops; label ``"svd-reduced"``,
  :meth:`rflite._imp.factor._MinNormSolver._solve_reduced`).  The
  directions dropped are those the solve discards at that step; on the q = 1
  paths, whose rank falls
  from m to a few dozen, this avoids a fresh m-row ``gelsd`` per step
  (high-dim f2, 1260 rows: a rank of about 1200 at the first rank-deficient
  step, about 400 ten steps later).

The factorisations live in :mod:`rflite._imp.factor`, the path loop, its
schedule and ranking in :mod:`rflite._imp.path`, the refit guard and the
held-out scoring in :mod:`rflite._imp.guard`.

Accuracy (on the Table 2 problems, m = 126, 20000 columns): on
well-conditioned steps the coefficients agree with ``numpy.linalg.pinv`` to
1e-12 ... 1e-14 relative (the tests require 1e-8); on steps with
:math:`\kappa \approx 10^{12}` any two backward-stable solvers differ by about
:math:`u \kappa`, pinv included.  f2 reaches test MSE ~1e-31 and f3 ~1e-20.
The solver used at each step is recorded in :attr:`SHRIMPPath.solver`.

Memory: the matrix is held transposed (columns of ``A`` contiguous) and
compacted in place as columns are removed (:func:`rflite._imp.factor._compact_rows`, the only
jitted kernel: everything else is BLAS / LAPACK bound), so a path needs the
m x N matrix once plus O(m^2), and from the first rank-deficient step on
the N_t x r projection of the surviving columns onto the reduced basis
(r the numerical rank, at most m).
"""

from __future__ import annotations

import functools
import math
import types
from typing import NamedTuple
import warnings

import numpy as np

from rflite._core.backend import is_dask_array
from rflite._imp import factor as _imp_factor
from rflite._imp import guard as _imp_guard
from rflite._imp import path as _imp_path
from rflite._imp import select as _imp_select
from rflite._core.exceptions import MagnitudeWarning
from rflite._base import RandomFeatureModel
from rflite._core.progress import Progress
from rflite._imp.factor import (  # noqa: F401 - the constants are public here
    BLOCKED_QR_MAX_COLS,
    BLOCKED_QR_ROWS,
    GRAM_RCOND,
    MAX_REFINE,
    DOWNDATE_RTOL,
    RANK_RTOL,
    REFINE_ACCEPT,
    REFINE_RTOL,
    LQ_REFINE_RTOL,
    SVD_RCOND,
)
from rflite._imp.guard import (  # noqa: F401 - the constants are public here
    AMPLIFICATION_MAX,
    GUARD_RATIO,
    MAGNITUDE_RATIO,
    RIDGE_EXPONENTS,
    _center_weight_like,
    _collapse_rows,
    _distinct_row_split,
    _guarded_refit,
    _guarded_choice,
    _guarded_step_scores,
    _holdout_ridge_errors,
    _kfold_ridge_errors,
    _mean_baseline,
    _row_error_moments,
    _sigma_max,
    _target_stats,
    _warn_magnitude,
)
from rflite._imp.path import (  # noqa: F401 - the public names are public here
    MAX_PRUNE_STEPS,
    METHODS,
    SCHEDULES,
    TIE_RTOL,
    BLAS_THREAD_MIN_ROWS,
    BLAS_THREADS,
    VAL_TIE_RTOL,
    SHRIMPPath,
    _blas_threads,
    _check_schedule,
    _path,
    _path_start,
    _shared_paths,
    _transposed_copy,
    prune_counts,
)
from rflite._imp.select import (  # noqa: F401 - public here; the selection machinery
    MEAN_FACTOR,
    MIN_WEIGHTS_PER_SUBSET,
    N_FEATURES_MAX,
    _as_splitter,
    _auto_n_features,
    _check_memory_for,
    _check_qs,
    _check_rates,
    _fold_splits,
    _n_rows,
    _shrimp_map,
    _cv_fold_scores,
    _fold_model,
    _run_fold_model,
)
from rflite._core.validation import check_X_y, check_bool, check_choice, check_int, check_real
from rflite._core.linalg import ridge_fit
from rflite._core.random import check_rng, spawn_streams
from rflite._core.parallel import map_tasks
from rflite._reexport import reexport
from rflite.features import Normal

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
    "SVD_RCOND",
    "LQ_REFINE_RTOL",
    "SCHEDULES",
    "MAX_PRUNE_STEPS",
    "TIE_RTOL",
    "SHRIMPPath",
    "shrimp_path",
    "prune_counts",
    "SHRIMPRegressor",
    "SHRIMPCV",
    "SHRIMPSelection",
    "select_shrimp",
    "REFITS",
    "AMPLIFICATION_MAX",
    "MAGNITUDE_RATIO",
    "GUARD_RATIO",
    "RIDGE_EXPONENTS",
    "MIN_WEIGHTS_PER_SUBSET",
    "MEAN_FACTOR",
    "AUTO_QS",
]

# setting a constant here sets it where it is read; the public names defined in
# the private modules report this module as their home (rflite._reexport)
reexport(__name__, (_imp_factor, _imp_guard, _imp_path, _imp_select),
         public=(SHRIMPPath, prune_counts))


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
    verbose=0,
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
    (:func:`rflite._imp.path._prune_order`).  See the module notes for how the minimum-norm
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
    verbose : int, default 0
        ``>= 1``: one line per step on stderr (step, columns kept, the solve
        used, elapsed seconds, the validation MSE, or the training MSE
        without ``A_val``).
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
    return _shared_paths(A, y, (prune_rate,), n_steps=n_steps, min_features=min_features,
                         schedule=schedule, method=method, A_val=A_val, y_val=y_val,
                         track_spectrum=track_spectrum, rng=rng,
                         progress=Progress(verbose, "shrimp_path"))[0]


# ---------------------------------------------------------------------- model
#: Refit rules of :class:`SHRIMPRegressor` / :class:`SHRIMPCV` (``refit=``):
#: ``"auto"`` (default: the paper's minimum-norm refit unless it is
#: numerically singular, :func:`_out_of_proportion`, then a ridge refit with
#: the penalty chosen on held-out rows), ``"min_norm"`` (the paper's refit,
#: always; truncated like the path's solves and the authors'
#: ``numpy.linalg.pinv`` at :math:`10^{-15}\sigma_{\max}`), ``"ridge"``
#: (always the held-out ridge refit) and ``"none"`` (keep
#: the path's coefficients, fitted without the validation rows; SHRIMPRegressor
#: only).  ``True`` / ``False`` (rflite <= 0.1's boolean ``refit``) mean
#: ``"min_norm"`` / ``"none"``.
REFITS = ("auto", "min_norm", "ridge", "none")

#: The orders that ``SHRIMPRegressor(q="auto")`` (the default) chooses between
#: on its validation rows: additive and pairwise features, the default grid of
#: :class:`SHRIMPCV`.  On the shared real sets (seeds 0-2) q = 2 validated
#: better on airfoil, ccpp and most propulsion, housing and speech splits, q = 1
#: on insulin (the paper's own choices: q = 2 there, q = 1 for insulin).
AUTO_QS = (1, 2)


def _check_refit(refit, *, allow_none: bool = True) -> str:
    """Normalise ``refit`` (True: "min_norm", False: "none"); ``ValueError`` naming it."""
    if refit is True or (isinstance(refit, np.bool_) and bool(refit)):
        return "min_norm"
    if refit is False or (isinstance(refit, np.bool_) and not bool(refit)):
        refit = "none"
    options = REFITS if allow_none else tuple(r for r in REFITS if r != "none")
    if not isinstance(refit, str) or refit not in options:
        raise ValueError(f"refit must be one of {options} (or a bool), got {refit!r}")
    return refit


class SHRIMPRegressor(RandomFeatureModel):
    r"""SHRIMP regressor: q-sparse random Fourier features pruned by IMP.

    Stage I draws the Def. 3 dictionary (``N // C(d, q)`` weights on every
    q-subset of the inputs, :math:`\rho = N(0, I_q / q)`, columns
    :math:`[\cos(XW^T), \sin(XW^T)]`, no bias); Stage II holds out a seeded
    ``validation_fraction`` of the training rows, runs :func:`shrimp_path` on
    the rest, picks the step with the lowest validation MSE and refits that
    support on all training rows (Xie et al. 2022, Algorithm 1, Sec. 4.2,
    App. A).

    .. math::

        \hat f(x) = c_0 + \sum_{j \in P_{t^*}} c_j\, \phi_j(x), \qquad
        t^* = \arg\min_t \mathrm{MSE}_{\rm val}(c_t).

    **What the default does.**  ``q="auto"`` fits q = 1 and q = 2 (below) on
    the same validation rows and keeps the better.  The pruning path is the paper's (minimum-norm
    coefficients, magnitude pruning) on ``N = min(10000, max(2m,
    5 C(d, q)))`` weights (``n_features=None``, :data:`N_FEATURES_MAX`).  The
    model a user gets is guarded (``refit="auto"``):

    * a minimum-norm solution counts as numerically singular when its
      amplification :math:`\|c\|_2 \sigma_{\max}(A_S) / \|y\|_2` exceeds
      :data:`AMPLIFICATION_MAX` or its worst-case size
      :math:`\sum_j |c_j|(1 + |\bar a_j|)` exceeds :data:`GUARD_RATIO`
      :math:`\max_i |y_i - \bar y|`;
    * every step t is scored on the validation rows by the better of its
      minimum-norm coefficients (when not singular) and the ridge fits
      :math:`\min_c \|A_{P_t} c - y\|^2 + \lambda \|c\|^2`,
      :math:`\lambda = \sigma_{\max}^2 10^{-k}`, k in :data:`RIDGE_EXPONENTS`,
      that are in proportion (on every step: steps with more columns than
      training rows through the dual Gram matrix); the lowest score chooses
      the step;
    * ``rule="1se_ridge"`` (default): on that step, the strongest ridge
      penalty whose validation error is within one standard error (over the
      validation rows) of the lowest, :class:`SHRIMPCV`'s rule on one split
      (``rule="min"``: the penalty of the lowest score);
    * the chosen support is refitted on all rows, by the minimum-norm solve
      (if not singular there, else a ridge chosen on the validation rows) or
      by the ridge with the chosen penalty scaled to all rows' weight;
    * when no step beats predicting the training mean on the validation
      rows, the model is that mean (``refit_ == "mean"``, no columns).

    The chosen step can be an early, wide one, even step 0 (the whole
    dictionary, a random-feature ridge regression) when its ridge fit
    validates best: on ``load_uci("insulin", rng=1)`` the default keeps all
    12250 columns (test MSE 0.911, the mean's 0.987).  ``refit="min_norm"``
    chooses among the path's minimum-norm models, as the paper does.

    On real data with heavy-tailed inputs the minimum-norm refit of q = 1
    dictionaries has condition numbers of 1e15 and coefficients of 1e13 that
    cancel on the training rows only (test MSE 1e22 on ``insulin``); the
    guarded model does not.  ``fit_intercept=True`` centres y and the
    features.  The validation split puts identical rows on the same side (see
    Notes).  ``subsets="auto"`` uses Def. 3 when every q-subset gets at least
    :data:`MIN_WEIGHTS_PER_SUBSET` weights, else random subsets.

    **The paper's settings exactly**: ``SHRIMPRegressor(n_features=10000, q=q,
    prune_rate=0.2, validation_fraction=0.1, refit="min_norm",
    subsets="all", fit_intercept=False)`` (what ``rflite.experiments.shrimp``
    uses).  For the K-fold choice of the step and of (q, p) use
    :class:`SHRIMPCV`.

    Parameters
    ----------
    n_features : int or None, default None
        Number of weight vectors N (2N columns with ``"fourier"``); paper
        10000.  ``None``: from the data, :func:`_auto_n_features`.
    q : int or "auto", default "auto"
        Variables per feature (the paper's order q*).  ``"auto"``: one fit
        for each q in :data:`AUTO_QS` (1 and 2, clipped to d) with the same
        seed and validation rows, the one with the lower validation MSE kept
        (``q_``; the scores in ``q_scores_``); the fit then equals
        ``SHRIMPRegressor(q=q_, random_state=seed)`` for an int seed.
    prune_rate : float in (0, 1)
        Fraction pruned per step (paper 0.2).
    n_steps, min_features, schedule, method
        See :func:`shrimp_path`; ``schedule="paper"`` (default) keeps
        :math:`\lfloor N_0 (1-p)^t \rfloor` columns at step t, as in the
        paper's experiments.
    validation_fraction : float in (0, 1)
        Share of the training rows (weight) held out to choose the step
        (paper 0.1).
    refit : {"auto", "min_norm", "ridge", "none"} or bool, default "auto"
        How the chosen support is refitted on all rows (:data:`REFITS`):
        guarded minimum-norm (default, above), the paper's minimum-norm
        (``"min_norm"``, or ``True``), always the validated ridge
        (``"ridge"``), or no refit: the path's coefficients fitted without
        the validation rows (``"none"``, or ``False``).
    rule : {"1se_ridge", "min"}, default "1se_ridge"
        With ``refit="auto"`` / ``"ridge"``: how the ridge penalty of the
        chosen step is picked (above).  On heavy-tailed inputs
        (``tests/test_shrimp_robust.py``) ``"1se_ridge"`` stays within 2x of
        RidgeCV's test MSE where ``"min"`` can pick a nearly unpenalised
        refit many times worse.
        Ignored by ``refit="min_norm"`` / ``"none"`` (the paper's choice of
        the step by the lowest validation MSE).
    distribution : None, "normal", "uniform", Normal or Uniform
        ``None``: ``Normal(scale=1/sqrt(q))``, the paper's :math:`N(0, I/q)`.
    subsets : {"auto", "all", "random"}, default "auto"
        ``"all"``: Def. 3 (``n_features // C(d, q)`` weights on each q-subset,
        one random subset per weight when ``C(d, q) > n_features``);
        ``"random"``: one random q-subset per weight; ``"auto"``: ``"all"``
        when every subset gets at least :data:`MIN_WEIGHTS_PER_SUBSET`
        weights, else ``"random"`` with an
        :class:`~rflite._core.exceptions.EffectiveFeaturesWarning` (raise ``n_features``
        to ``5 * C(d, q)`` for Def. 3).
    bias, activation
        Feature options (:func:`rflite.features.random_feature_map`); the
        paper's are ``"none"``, ``"fourier"``.
    track_spectrum : bool
        Record the Gram spectrum along the path (``path_.eig_min/eig_max``).
    fit_intercept : bool, default True
        Centre ``y`` and the feature columns with the (weighted) means of the
        rows the coefficients are fitted on (the training part for the path
        and the validation error, all rows for the refit), and recover
        :math:`c_0 = \bar y - \bar a_S^T c_S` exactly.  ``False``: the
        paper's model (no intercept).
    clip_inputs : bool, default False
        Clip every input column of ``predict``'s ``X`` to the training range
        ``[input_min_, input_max_]`` (see Notes).
    verbose : int, default 0
        ``>= 1``: one line per pruning step on stderr (step, columns kept,
        the solve used, elapsed seconds, validation MSE), one per candidate
        of ``q="auto"`` and one for the chosen step and refit.
    random_state : None, int or numpy.random.Generator
        Seeds the validation split, the features and random pruning (three
        independent streams).

    Notes
    -----
    ``sample_weight`` scales the rows by :math:`\sqrt{w_i}` in the path's
    minimum-norm solves, in the validation error (a weighted MSE) and in the
    refit; zero-weight rows are dropped before anything else.  The
    validation split is drawn over the *distinct* rows of ``(X, y)``: the
    distinct rows (sorted, so the row order does not matter) are shuffled by
    the seed and the first of them, with total weight closest to
    ``validation_fraction`` of the total, are held out.  Identical rows are
    therefore always on the same side (a repeated row in both parts would make
    an interpolant's validation error optimistic), and integer weights give
    the same model as repeated rows.

    **Far outside the training box.**  A random-feature model
    :math:`\sum_j c_j \phi(\omega_j^T x)` is determined by the data only
    where there are data.  Fourier features keep oscillating outside the
    training range, and a minimum-norm fit of a numerically singular
    dictionary combines them with huge coefficients that cancel on the
    training rows only: a test row with an input 20 standard deviations out
    can give predictions of 1e9.  For bounded features the fitted
    function can never exceed :math:`|c_0| + \sum_j |c_j|(1 + |\bar a_j|)`,
    which the guarded refit keeps within :data:`GUARD_RATIO` times the
    target range; a fitted model or a prediction beyond it raises a
    :class:`~rflite._core.exceptions.MagnitudeWarning`.  ``clip_inputs=True`` predicts
    an outside point as the nearest point of the training box (coordinate
    by coordinate), so that predictions stay within what was fitted.

    With ``subsets="all"`` the map has ``C(d, q) * (n_features // C(d, q))``
    weight vectors (Def. 3), fewer than ``n_features`` unless ``C(d, q)``
    divides it: the effective number is ``n_features_`` and an
    :class:`~rflite._core.exceptions.EffectiveFeaturesWarning` says so.  A ``q`` above d
    is clipped to d (``q_``).

    For a 2-d ``y`` each output is an independent fit (own path, step and
    refit, on the same features and split); ``support_`` is the union of the
    supports and ``coef_`` has shape (len(support_), n_targets); ``path_``,
    ``best_step_``, ``validation_mse_``, ``refit_`` and ``ridge_lam_`` are
    lists over outputs.

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
        The chosen step (by the guarded score; ``path_.best_step`` is the
        paper's choice, by the minimum-norm validation error alone).
    validation_mse_ : float
        Weighted validation MSE of the chosen step's guarded model.
    refit_ : str
        ``"min_norm"``, ``"ridge"``, ``"none"`` or ``"mean"`` (intercept only):
        what the final coefficients are.
    ridge_lam_ : float or None
        The ridge penalty of the refit (per unit row weight, i.e. divided by
        the total weight), ``None`` without ridge.
    q_ : int
        The order used (``q`` clipped to d, or the one ``"auto"`` chose).
    q_scores_ : dict
        With ``q="auto"``: the validation MSE of each candidate q (the mean
        over outputs for a 2-d ``y``).
    train_indices_, validation_indices_ : int ndarray
        Rows (after dropping zero weights) of the two parts.
    input_min_, input_max_ : (d,) ndarray
        The training box.
    target_scale_ : float or ndarray
        :math:`\max_i |y_i - \bar y|` per output (the yardstick of
        :data:`MAGNITUDE_RATIO`).
    target_mean_ : ndarray
        :math:`\bar y` per output, from which a prediction's deviation is
        measured (not the intercept: with centred features that is
        :math:`\bar y - \bar a^T c`, far from the targets when ``c`` is large).
    feature_map_, support_, coef_, intercept_
        See :class:`rflite._base.RandomFeatureModel`.

    Examples
    --------
    >>> from rflite.datasets import make_shrimp2
    >>> X, y = make_shrimp2(140, d=10, rng=0)
    >>> model = SHRIMPRegressor(n_features=2000, q=1, random_state=0).fit(X, y)
    >>> model.n_nonzero_ < 200
    True
    """

    def __init__(self, n_features=None, *, q="auto", prune_rate=0.2, n_steps=None,
                 min_features=1, schedule="paper", method="magnitude",
                 validation_fraction=0.1, refit="auto", rule="1se_ridge",
                 distribution=None, subsets="auto", bias="none", activation="fourier",
                 track_spectrum=False, fit_intercept=True, clip_inputs=False, verbose=0,
                 random_state=None):
        self.n_features = n_features
        self.q = q
        self.prune_rate = prune_rate
        self.n_steps = n_steps
        self.min_features = min_features
        self.schedule = schedule
        self.method = method
        self.validation_fraction = validation_fraction
        self.refit = refit
        self.rule = rule
        self.distribution = distribution
        self.subsets = subsets
        self.bias = bias
        self.activation = activation
        self.track_spectrum = track_spectrum
        self.fit_intercept = fit_intercept
        self.clip_inputs = clip_inputs
        self.verbose = verbose
        self.random_state = random_state

    def _fit_workspace(self, m, n_columns, itemsize, dense):
        """Bytes a fit needs beyond the feature matrix (for ``_check_feature_memory``).

        The peak is about 4x the ``m x n_columns`` matrix: the training and
        validation matrices, their centred and weighted versions and the
        path's transposed working copy
        (:func:`shrimp_path` owns one), plus the ``m x m`` factors of the
        over-parameterised steps.
        """
        return 3 * m * n_columns * itemsize + 3 * m * m * 8

    def _default_distribution(self, d):
        # the SHRIMP paper's N(0, 1/q) weights (q = d for dense weights; a q
        # above d is clipped to d, as the map's supports are)
        return Normal(scale=1.0 / math.sqrt(min(self.q, d) if self.q is not None else d))

    def _draw_features(self, d, rng):
        q = self._effective_q(d) if self.q is not None else None
        return _shrimp_map(self, d, q, rng)

    def fit(self, X, y, sample_weight=None):
        """Draw the features, run the path, select the step, refit; returns ``self``."""
        if isinstance(self.q, str):
            return self._fit_auto_q(X, y, sample_weight)
        if is_dask_array(X):
            return self._fit_dask(X, y, sample_weight)
        X, Y, w, frac, refit = self._fit_setup(X, y, sample_weight)
        # one BLAS thread setting for every step of the fit, whatever the
        # environment asks for: the model must not depend on the thread count
        with _blas_threads(X.shape[0]):
            return self._fit(X, Y, w, frac, refit)

    def _fit_auto_q(self, X, y, sample_weight):
        """``q="auto"``: one fit per order in :data:`AUTO_QS` (clipped to d), the
        lowest validation MSE kept (the smaller q on ties).

        Every candidate is ``SHRIMPRegressor(q=q, random_state=seed)`` with the
        other parameters unchanged and one seed for all (``random_state``
        itself when it is an int, else one integer drawn from it), so they
        share the validation rows and the kept fit is exactly that
        estimator's; only its warnings are re-emitted.  Works on Dask arrays
        too (each candidate is a distributed fit).
        """
        check_choice(self.q, "q", ("auto",))
        # (no np.shape: array-likes with __array__ only; a Dask X stays lazy)
        shape = X.shape if hasattr(X, "shape") else np.asarray(X).shape
        d = int(shape[1]) if len(shape) == 2 else 1
        qs = sorted({min(q, max(d, 1)) for q in AUTO_QS})
        seed = self.random_state
        if not (isinstance(seed, (int, np.integer)) and not isinstance(seed, bool)):
            seed = int(self._rng().integers(2**63))
        params = dict(self.get_params(deep=False), random_state=seed)
        progress = Progress(self.verbose, type(self).__name__)
        best, scores = None, []  # only the best fit so far is kept (paths are large)
        for q in qs:
            with warnings.catch_warnings(record=True) as record:
                warnings.simplefilter("always")
                fit = type(self)(**dict(params, q=q)).fit(X, y, sample_weight)
            score = float(np.mean(fit.validation_mse_))
            scores.append(score if np.isfinite(score) else np.inf)
            progress.line(f"q={q} candidate", error=scores[-1])
            if best is None or scores[-1] < min(scores[:-1]):
                best = (q, fit, record)
            del fit
        progress.line(f"q={best[0]} kept")
        for w in best[2]:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        state = dict(best[1].__dict__)
        state["q"], state["random_state"] = self.q, self.random_state
        # fitted attributes (scikit-learn's "name_") of an earlier fit that this
        # one does not set (feature_names_in_ after a DataFrame) must not
        # survive it; other attributes (set by a caller) stay
        for name in [k for k in vars(self) if k.endswith("_") and not k.startswith("__")
                     and k not in state]:
            delattr(self, name)
        self.__dict__.update(state)
        self.q_scores_ = dict(zip(qs, scores))
        return self

    def _fit_rates(self, X, y, rates):
        """Fit with the best prune rate of ``rates`` (:func:`select_shrimp`'s hold-out grid).

        Returns the validation MSE of every rate, each what
        ``SHRIMPRegressor(prune_rate=p, ...).fit(X, y).validation_mse_`` gives;
        ``self`` ends fitted as with ``prune_rate`` = the first rate of the
        lowest score (when every score is NaN: the first rate).  The split,
        features, transposed matrices and the t = 0 solve are shared by the
        rates, and only the chosen rate is refitted on all rows.
        """
        X, Y, w, frac, refit = self._fit_setup(X, y, None)
        with _blas_threads(X.shape[0]):
            st = self._fit_prepare(X, Y, w, frac)
            all_paths = self._fit_paths(st, tuple(rates))
            # the rates share the t = 0 solve: its scores are computed once
            memos = [{} for _ in range(st.Y.shape[1])]
            chosen = [self._fit_choose(st, paths, refit, memos) for paths in all_paths]
            one = getattr(self, "_one_d", True)
            scores = [c[2][0] if one else c[2] for c in chosen]
            best = 0
            for i, v in enumerate(scores):
                if v < scores[best]:
                    best = i
            self.prune_rate = rates[best]
            self._fit_finish(st, all_paths[best], refit, chosen[best])
        return scores

    def _check_params(self):
        """Validate the path's parameters (in memory and on Dask): ``(validation_fraction, refit)``."""
        if self.n_features is not None:
            check_int(self.n_features, "n_features", minimum=1)
        if self.q is not None:
            check_int(self.q, "q", minimum=1)
        check_choice(self.subsets, "subsets", ("auto", "all", "random"))
        check_choice(self.rule, "rule", ("1se_ridge", "min"))
        refit = _check_refit(self.refit)
        frac = check_real(self.validation_fraction, "validation_fraction", minimum=0.0,
                          strict=True)
        if not frac < 1.0:
            raise ValueError(f"validation_fraction must be in (0, 1), got {frac}")
        return frac, refit

    def _fit_setup(self, X, y, sample_weight):
        """Validation of :meth:`fit`: ``(X, Y, w, validation_fraction, refit)``, rows collapsed."""
        X, Y, w = self._validate_fit(X, y, sample_weight)
        # the model depends on the data only through its weighted distinct rows
        X, Y, w = _collapse_rows(X, Y, w)
        m, d = X.shape
        check_bool(self.clip_inputs, "clip_inputs")
        frac, refit = self._check_params()
        if m < 2:
            raise ValueError(f"X must have at least 2 distinct samples for SHRIMPRegressor's "
                             f"validation split, got n_samples={m}")
        # the path materialises the (n_columns x m) training matrix
        self._n_weights = (self.n_features if self.n_features is not None
                           else _auto_n_features(m, d, self.q))
        _check_memory_for(self, m, d, self._n_weights)
        self._record_input_range(X)
        return X, Y, w, frac, refit

    def _fit(self, X, Y, w, frac, refit):
        st = self._fit_prepare(X, Y, w, frac)
        paths = self._fit_paths(st, (self.prune_rate,))[0]
        return self._fit_finish(st, paths, refit)

    def _fit_prepare(self, X, Y, w, frac):
        """Split, features and the centred training / validation matrices (no prune rate)."""
        split_rng, feat_rng, path_rng = spawn_streams(self._rng(), 3)
        progress = Progress(self.verbose, type(self).__name__)
        tr, val = _distinct_row_split(X, Y, w, frac, split_rng)
        fmap = self._draw_features(X.shape[1], feat_rng)
        w_tr = None if w is None else w[tr]
        w_val = None if w is None else w[val]
        A_tr, Y_tr, a_mean, y_mean = self._center_and_weight(fmap.transform(X[tr]), Y[tr], w_tr)
        A_val, Y_val = _center_weight_like(fmap.transform(X[val]), Y[val], a_mean, y_mean, w_val)
        # the validation MSE per unit weight: integer weights = repeated rows
        val_scale = Y_val.shape[0] / (np.sum(w_val) if w_val is not None else Y_val.shape[0])
        self.target_mean_, self.target_scale_ = _target_stats(Y, w)
        return types.SimpleNamespace(
            X=X, Y=Y, w=w, tr=tr, val=val, fmap=fmap, w_tr=w_tr, w_val=w_val, A_tr=A_tr,
            Y_tr=Y_tr, a_mean=a_mean, y_mean=y_mean, A_val=A_val, Y_val=Y_val,
            val_scale=val_scale, path_rng=path_rng, path_state=path_rng.bit_generator.state,
            progress=progress)

    def _fit_paths(self, st, rates):
        """The paths of every prune rate in ``rates`` (one list over the outputs per rate).

        The rates share the t = 0 solve (:func:`_shared_paths`); each path is
        the one a fit with that ``prune_rate`` alone computes.
        """
        out = [[] for _ in rates]
        for k in range(st.Y.shape[1]):
            if st.Y.shape[1] > 1:
                st.progress.line(f"output {k + 1}/{st.Y.shape[1]}")
            # every output starts from the same pruning stream: output k of a
            # 2-d fit is the 1-d fit of column k
            st.path_rng.bit_generator.state = st.path_state
            paths = _shared_paths(
                st.A_tr, st.Y_tr[:, k], rates, A_val=st.A_val, y_val=st.Y_val[:, k],
                n_steps=self.n_steps, min_features=self.min_features, schedule=self.schedule,
                method=self.method, track_spectrum=self.track_spectrum, rng=st.path_rng,
                progress=st.progress,
            )
            for i, path in enumerate(paths):
                out[i].append(path._replace(val_mse=path.val_mse * st.val_scale))
        return out

    def _fit_choose(self, st, paths, refit, memos=None):
        """The step of every output: ``(bests, step_lams, mses, use_mean)``.

        ``memos``: one dict per output, shared by calls on paths that start
        from the same solve (:func:`rflite._imp.guard._guarded_step_scores`).
        """
        Y_tr, Y_val, val_scale = st.Y_tr, st.Y_val, st.val_scale
        A_tr, A_val, a_mean = st.A_tr, st.A_val, st.a_mean
        bests = [p.best_step for p in paths]
        step_lams = [None] * len(paths)
        mses = [float(p.val_mse[b]) for p, b in zip(paths, bests)]
        use_mean = [False] * len(paths)
        if refit in ("auto", "ridge"):
            # choose the step by the validation error of the model the user gets
            for k, path in enumerate(paths):
                scores, lam_at, families = _guarded_step_scores(
                    A_tr, Y_tr[:, k], A_val, Y_val[:, k], path, a_mean,
                    self.target_scale_[k], self.activation, refit, val_scale,
                    memo=None if memos is None else memos[k])
                chosen = _guarded_choice(
                    scores, lam_at, families, path, self.rule,
                    lambda S, c, k=k: _row_error_moments(A_val[:, S] @ c - Y_val[:, k],
                                                         st.w_val))
                if chosen is not None:
                    bests[k], step_lams[k], mses[k] = chosen
                # never worse than the mean: when no step beats predicting the
                # training mean on the validation rows, the model is that mean
                baseline = float(np.mean(Y_val[:, k] ** 2)) * val_scale
                if self.fit_intercept and not mses[k] < baseline:
                    use_mean[k], mses[k] = True, baseline
        return bests, step_lams, mses, use_mean

    def _fit_finish(self, st, paths, refit, chosen=None):
        """Choose the steps (or take ``chosen``), refit on all rows, set the attributes.

        Releases the full matrices of ``st``: call it once, last.
        """
        bests, step_lams, mses, use_mean = (chosen if chosen is not None
                                            else self._fit_choose(st, paths, refit))
        X, Y, w, fmap, tr = st.X, st.Y, st.w, st.fmap, st.tr
        A_tr, Y_tr, A_val, Y_val = st.A_tr, st.Y_tr, st.A_val, st.Y_val
        a_mean, y_mean, w_tr, val_scale = st.a_mean, st.y_mean, st.w_tr, st.val_scale
        val = st.val
        supports = [np.zeros(0, np.int64) if e else p.supports[b]
                    for p, b, e in zip(paths, bests, use_mean)]
        coefs = [np.zeros(0) if e else p.coefs[b] for p, b, e in zip(paths, bests, use_mean)]
        used = ["mean" if e else "none" for e in use_mean]
        lams = [None] * len(coefs)
        if refit != "none" and not all(use_mean):
            # the held-out pieces of the chosen columns, for the guard's penalty
            held = [(A_tr[:, S], Y_tr[:, k], A_val[:, S], Y_val[:, k],
                     None if a_mean is None else a_mean[S], self.target_scale_[k])
                    for k, S in enumerate(supports)]
            # the full matrices are no longer needed (st is spent)
            del A_tr, A_val
            st.A_tr = st.A_val = None
            # refit on all rows, centred with the means of all rows: only the
            # kept columns are evaluated (never a second m x n_columns matrix)
            union = np.unique(np.concatenate(supports))
            A_U, Y_all, u_mean, y_mean = self._center_and_weight(
                fmap.columns(X, union), Y, w)
            a_mean = None
            if u_mean is not None:
                a_mean = np.zeros(fmap.n_columns, dtype=u_mean.dtype)
                a_mean[union] = u_mean
            w_all = float(np.sum(w)) if w is not None else float(X.shape[0])
            w_trs = float(np.sum(w_tr)) if w_tr is not None else float(tr.size)
            for k, S in enumerate(supports):
                if use_mean[k]:
                    continue
                A_S = A_U[:, np.searchsorted(union, S)]
                am = None if a_mean is None else a_mean[S]
                if step_lams[k] is not None:
                    # the penalty chosen with the step, scaled from the training
                    # part's weight to all rows' (the same penalty per unit weight)
                    lam = step_lams[k] * w_all / w_trs
                    coefs[k], used[k], lams[k] = ridge_fit(A_S, Y_all[:, k], lam), "ridge", lam
                    lams[k] = lam / w_all
                    continue
                c, used[k], lams[k] = _guarded_refit(
                    A_S, Y_all[:, k], am, refit, self.target_scale_[k], self.activation,
                    lambda lam_grid, k=k: _holdout_ridge_errors(held[k], lam_grid, w_trs / w_all,
                                                                val_scale))
                coefs[k] = c
                if lams[k] is not None:
                    lams[k] = lams[k] / w_all
        else:
            del A_tr, A_val
            if all(use_mean):
                # the intercept-only model: the (weighted) mean of all rows
                a_mean, y_mean = None, np.average(Y, axis=0, weights=w)
        one = getattr(self, "_one_d", True)
        self.path_ = paths[0] if one else paths
        self.best_step_ = bests[0] if one else bests
        self.validation_mse_ = mses[0] if one else mses
        self.refit_ = used[0] if one else used
        self.ridge_lam_ = lams[0] if one else lams
        self.train_indices_, self.validation_indices_ = tr, val
        self._finish(fmap, supports, coefs, a_mean, y_mean)
        st.progress.line(
            f"chosen step {bests[0] if one else bests} refitted on all rows "
            f"({used[0] if one else ', '.join(used)})", error=float(np.mean(mses)))
        _warn_magnitude(self)
        return self

    def predict(self, X) -> np.ndarray:
        r"""Predictions :math:`c_0 + A(X)_{:, S} c_S` from the kept columns.

        Warns (:class:`~rflite._core.exceptions.MagnitudeWarning`) when a prediction
        deviates from the training targets' mean (``target_mean_``) by more
        than :data:`MAGNITUDE_RATIO` times their largest deviation from it
        (``target_scale_``); with ``clip_inputs=True`` the inputs are first
        clipped to the training box.
        """
        return _predict_checked(self, X)


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


def _predict_checked(est, X):
    """``RandomFeatureModel.predict`` plus the :class:`MagnitudeWarning` check.

    The check needs the values: it runs on in-memory predictions only; a
    Dask ``X`` gets its lazy predictions unchecked (checking them computed
    every chunk inside ``predict``, and again when the result was used).
    """
    pred = RandomFeatureModel.predict(est, X)
    scale = getattr(est, "target_scale_", None)
    if scale is not None and pred.size and isinstance(pred, np.ndarray):
        # from the training targets' mean, not the intercept (far from the
        # targets when large coefficients cancel against the feature means)
        centre = getattr(est, "target_mean_", None)
        centre = est.intercept_ if centre is None else (
            centre if pred.ndim == 2 else centre.reshape(-1)[0])
        dev = np.abs(pred - centre)
        dev = dev.max(axis=0) if dev.ndim == 2 else dev.max()
        limit = MAGNITUDE_RATIO * np.maximum(scale, np.finfo(float).tiny)
        if np.any(dev > limit):
            warnings.warn(
                f"{type(est).__name__} predicted values up to {float(np.max(dev)):.3g} "
                f"away from the training targets' mean, more than "
                f"MAGNITUDE_RATIO={MAGNITUDE_RATIO:g} "
                f"times the training targets' largest deviation "
                f"({float(np.max(scale)):.3g}); inputs far outside the training range? "
                "(clip_inputs=True predicts them at the edge of the training box)",
                MagnitudeWarning, stacklevel=3,
            )
    return pred


class SHRIMPCV(RandomFeatureModel):
    r"""SHRIMP with the pruning step, q and the prune rate chosen by K-fold cross-validation.

    For every candidate (q, p) of the grid one feature map is drawn (seeded,
    the same in every fold) and on each fold the pruning path of
    :func:`shrimp_path` is run on the training rows and scored, step by step,
    on the held-out rows.  A path of prune rate p on :math:`N_0` columns has
    the same sizes :math:`N_t` in every fold (:func:`prune_counts`), so every
    (q, p, t) is one grid point with one error per fold.  The rule
    (:func:`rflite._core.selection.choose`) is applied with the grid ordered from the
    smallest model (:math:`N_t`, then q, then p).  ``rule="1se_ridge"``
    (default) takes the (q, p, t) of lowest mean error and then, on that
    support, the strongest ridge penalty of the refit whose mean error is
    within one standard error of the lowest: the one-standard-error rule
    (Hastie, Tibshirani & Friedman 2009, Sec. 7.10; glmnet's ``lambda.1se``)
    over the penalty only.  ``"min"`` takes the lowest mean error (the
    smallest model on ties), ``"1se"`` the smallest model whose mean error is
    within one standard error of the best.  On the shared real sets the fold
    errors of heavy-tailed targets vary so much that one standard error over
    the model size admits models far worse than the best, while the lowest
    mean error can be a nearly unpenalised refit that is fragile on new rows.
    "1se_ridge" keeps the support of lowest mean error and guards only the
    penalty, so it avoids both failures.
    A grid point whose error on some fold exceeds
    ``mean_factor`` times the error of predicting the training mean on that
    fold is never chosen.  The final model reruns the path of the chosen
    (q, p) on all rows to the chosen step and refits as :class:`SHRIMPRegressor`
    does (``refit="auto"``: the minimum-norm coefficients unless numerically
    singular, then ridge with the penalty chosen by the same K folds on the
    chosen support).  With ``average_folds=True`` (default) the model is the
    mean of that refit and the K fold models of the chosen grid point (each
    the path on its fold's training rows to the chosen step with the chosen
    penalty: the very models whose held-out errors chose the point), a
    cross-validation committee (Krogh & Vedelsby, "Neural network ensembles,
    cross validation, and active learning", NIPS 1995): K more paths of one
    (q, p), and up to K + 1 supports in the model.  Averaging reduces the
    variance of a single refit, which on small or heavy-tailed sets
    dominates its test error; it rarely costs accuracy where the single
    refit is already good.
    ``average_folds=False`` is the single refit.

    Each fold scores a step by the model the user gets (``refit="auto"``:
    the better of its minimum-norm coefficients when not numerically
    singular and the validated ridge penalties in proportion, as
    :class:`SHRIMPRegressor`'s hold-out does, except that of the steps with
    more columns than the fold's training rows only step 0, the whole
    dictionary, gets ridge penalties: a random-feature ridge regression is
    always a candidate, and the other wide steps would each cost a dual
    eigendecomposition per fold);
    ``refit="min_norm"``: the minimum-norm coefficients, the paper's score).  When the chosen grid
    point does not beat predicting the training mean on average over the
    folds, the model is that mean (``refit_ == "mean"``).

    The paper (Xie et al. 2022, Sec. 4.2) chooses the step on one 10 %
    validation split and searches :math:`q \in \{1, \dots, \min(10, d)\}`,
    :math:`p \in \{15, 25, 35\}\,\%` (``qs=range(1, 11),
    prune_rates=(0.15, 0.25, 0.35)``; :func:`select_shrimp` with
    ``cv="holdout"`` is the paper's protocol).  The default grid is small,
    ``qs=(1, 2)``, ``prune_rates=(0.2,)``: each (q, p) costs one path per
    fold plus the final path.

    Parameters
    ----------
    n_features : int or None, default None
        Weight vectors N per map (2N columns); ``None``: from the data, for
        each q (:func:`_auto_n_features`).
    qs : sequence of int, default (1, 2)
        Candidate q (clipped to d, duplicates dropped).
    prune_rates : sequence of float in (0, 1), default (0.2,)
    cv : int, None or splitter, default 5
        Folds (:func:`rflite._core.folds.check_cv`: an int is unshuffled K-fold as in
        scikit-learn; any object with ``split(X, y)``, or an iterable of
        ``(train, test)`` index pairs); ``None``: 5 folds over the distinct
        rows drawn from ``random_state``, so that integer ``sample_weight``
        equals repeated rows.
    rule : {"1se_ridge", "min", "1se"}, default "1se_ridge"
    mean_factor : float, default :data:`MEAN_FACTOR`
    refit : {"auto", "min_norm", "ridge"}, default "auto"
        As :class:`SHRIMPRegressor`'s, the ridge penalty chosen by K-fold.
    average_folds : bool, default True
        Average the refit with the chosen grid point's K fold models (above).
    n_steps, min_features, schedule
        Path options (:func:`shrimp_path`).
    distribution, subsets, bias, activation, fit_intercept, clip_inputs
        As :class:`SHRIMPRegressor`.
    n_jobs : None, int or executor
        Runs the folds in parallel (:mod:`rflite._core.parallel`); the result is
        the same.
    verbose : bool or int
        One line per fold and for the final fit on stderr.
    random_state : None, int, Generator, RandomState or SeedSequence
        Seeds the feature maps.

    Attributes
    ----------
    q_, prune_rate_ : chosen q and prune rate
    best_step_ : int
        Chosen pruning step t (the final path's last step).
    n_kept_ : int
        :math:`N_t` of the chosen step.
    best_index_ : int
        Position of the choice in ``cv_results_``.
    cv_results_ : dict of ndarray
        ``q``, ``prune_rate``, ``step``, ``n_kept`` per grid point,
        ``mean_test_mse``, ``std_test_mse``, ``se_test_mse``,
        ``split{k}_test_mse``, and ``baseline_mse`` (predicting the training
        mean, per fold).
    refit_ : {"min_norm", "ridge", "mean"}
        How the all-rows refit was made.
    ridge_lam_ : float or None
        Penalty per unit row weight of a ridge refit.
    n_models_ : int
        Models averaged: K + 1 with ``average_folds``, else 1 (and 1 for
        the mean).
    path_ : SHRIMPPath (list for 2-d y)
        The final path on all rows.
    feature_map_, support_, coef_, intercept_, n_features_, input_min_,
    input_max_, target_scale_, target_mean_
        As :class:`SHRIMPRegressor` (``support_`` / ``coef_`` of the averaged
        model: the union of its supports).
    """

    def __init__(self, n_features=None, *, qs=(1, 2), prune_rates=(0.2,), cv=5,
                 rule="1se_ridge", mean_factor=MEAN_FACTOR, refit="auto",
                 average_folds=True, n_steps=None,
                 min_features=1, schedule="paper", distribution=None, subsets="auto",
                 bias="none", activation="fourier", fit_intercept=True, clip_inputs=False,
                 n_jobs=None, verbose=0, random_state=None):
        self.n_features = n_features
        self.qs = qs
        self.prune_rates = prune_rates
        self.cv = cv
        self.rule = rule
        self.mean_factor = mean_factor
        self.refit = refit
        self.average_folds = average_folds
        self.n_steps = n_steps
        self.min_features = min_features
        self.schedule = schedule
        self.distribution = distribution
        self.subsets = subsets
        self.bias = bias
        self.activation = activation
        self.fit_intercept = fit_intercept
        self.clip_inputs = clip_inputs
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.random_state = random_state

    _fit_workspace = SHRIMPRegressor._fit_workspace

    def predict(self, X) -> np.ndarray:
        """Predictions of the refitted model (see :meth:`SHRIMPRegressor.predict`)."""
        return _predict_checked(self, X)

    def fit(self, X, y, sample_weight=None):
        """Cross-validate the (q, p, step) grid, refit the choice on all rows; returns ``self``."""
        from rflite._core.progress import Progress
        from rflite._core.selection import cross_validate_grid

        if is_dask_array(X):
            return self._fit_dask(X, y, sample_weight)
        n_rows = _n_rows(X)
        X, Y, w = self._validate_fit(X, y, sample_weight)
        m, d = X.shape
        qs, rates, mean_factor, refit = self._check_params(d)
        progress = Progress(self.verbose, "SHRIMPCV")
        n_distinct = _collapse_rows(X, Y, None)[0].shape[0]
        n_weights = [self.n_features if self.n_features is not None
                     else _auto_n_features(n_distinct, d, q) for q in qs]
        _check_memory_for(self, m, d, max(n_weights))
        self._record_input_range(X)
        rng = self._rng()
        streams = spawn_streams(rng, len(qs))
        fmaps = []
        for q, s_, n_w in zip(qs, streams, n_weights):
            self._n_weights = n_w
            fmaps.append(_shrimp_map(self, d, q, s_))
        # cv=None draws its folds from the stream after the features (as the
        # Dask fit and the other CV estimators do); other cv draw nothing
        splits = _fold_splits(self.cv, X, Y, sample_weight, n_rows, rng)
        grid = self._grid(fmaps, rates)
        fold = functools.partial(
            _cv_fold_scores, X=X, Y=Y, w=w, fmaps=fmaps, rates=rates, n_steps=self.n_steps,
            min_features=self.min_features, schedule=self.schedule,
            fit_intercept=check_bool(self.fit_intercept, "fit_intercept"), refit=refit)
        with _blas_threads(m):
            scores = cross_validate_grid(fold, splits, n_jobs=self.n_jobs, progress=progress)
        baseline = np.array([_mean_baseline(Y, w, tr, te) for tr, te in splits])
        best = self._choose_grid(scores, baseline, grid, qs, rates, mean_factor)
        i, j, t, n_t, pen = grid[best]
        S = scores
        with _blas_threads(m):
            self._final_fit(X, Y, w, fmaps[i], rates[j], t, pen, refit, splits)
        self.n_models_ = 1
        if self.fit_intercept and not S[:, best].mean() < baseline.mean():
            # no grid point beats predicting the training mean: the model is that mean
            self.refit_ = "mean" if getattr(self, "_one_d", True) else ["mean"] * Y.shape[1]
            self.ridge_lam_ = None if getattr(self, "_one_d", True) else [None] * Y.shape[1]
            self._finish(self.feature_map_, [np.zeros(0, np.int64)] * Y.shape[1],
                         [np.zeros(0)] * Y.shape[1], None, np.average(Y, axis=0, weights=w))
        elif self.average_folds:
            task = functools.partial(
                _fold_model, X=X, Y=Y, w=w, fmap=fmaps[i], rate=rates[j], step=t, penalty=pen,
                min_features=self.min_features, schedule=self.schedule,
                fit_intercept=check_bool(self.fit_intercept, "fit_intercept"))
            with _blas_threads(m):
                folds = map_tasks(_run_fold_model, [(task, tr) for tr, _ in splits],
                                  executor=self.n_jobs)
            progress.line(f"{len(folds)} fold models of the chosen point averaged in")
            _average_models(self, folds)
            _warn_magnitude(self)
        progress.line(f"final fit q={qs[i]} p={rates[j]:g} step {t} ({n_t} columns, "
                      f"refit {self.refit_})",
                      error=float(S[:, best].mean()))
        return self

    def _check_params(self, d):
        """Validate the parameters for d inputs: ``(qs, rates, mean_factor, refit)``."""
        if self.n_features is not None:
            check_int(self.n_features, "n_features", minimum=1)
        qs = _check_qs(self.qs, d)
        rates = _check_rates(self.prune_rates)
        check_choice(self.rule, "rule", ("1se", "1se_ridge", "min"))
        mean_factor = check_real(self.mean_factor, "mean_factor", minimum=0.0, strict=True)
        refit = _check_refit(self.refit, allow_none=False)
        _check_schedule(rates[0], self.n_steps, self.min_features, self.schedule)
        check_choice(self.subsets, "subsets", ("auto", "all", "random"))
        check_bool(self.clip_inputs, "clip_inputs")
        check_bool(self.average_folds, "average_folds")
        return qs, rates, mean_factor, refit

    def _grid(self, fmaps, rates):
        r"""The (map, rate, step, n_kept, penalty) grid points, in the order of the scores.

        Penalty 0 is the minimum-norm fit, k >= 1 the ridge
        :math:`\sigma_{\max}^2 10^{-e_k}`, e_k in :data:`RIDGE_EXPONENTS`.
        """
        n_pen = 1 + len(RIDGE_EXPONENTS)
        grid = []
        for i, fm in enumerate(fmaps):
            for j, p in enumerate(rates):
                counts = prune_counts(fm.n_columns, p, n_steps=self.n_steps,
                                      min_features=min(self.min_features, fm.n_columns),
                                      schedule=self.schedule)
                grid += [(i, j, t, int(n), k) for t, n in enumerate(counts)
                         for k in range(n_pen)]
        return grid

    def _choose_grid(self, scores, baseline, grid, qs, rates, mean_factor):
        """The grid point chosen from the fold scores; sets ``cv_results_`` and the choice."""
        from rflite._core.selection import choose

        n_pen = 1 + len(RIDGE_EXPONENTS)
        # simplest first: fewest columns, smaller q, smaller p, larger penalty
        # (the minimum-norm fit, penalty 0, is the least regularised)
        order = sorted(range(len(grid)), key=lambda g: (
            grid[g][3], qs[grid[g][0]], rates[grid[g][1]], grid[g][2],
            grid[g][4] if grid[g][4] else n_pen))
        base_rule = "min" if self.rule == "1se_ridge" else self.rule
        choice = choose(scores[:, order], rule=base_rule, baseline=baseline,
                        mean_factor=mean_factor)
        best = order[choice.index]
        if self.rule == "1se_ridge" and not choice.guarded:
            best = _strongest_penalty_within_se(best, grid, choice, order)
        i, j, t, n_t, pen = grid[best]
        # non-finite fold errors (exploded or skipped refits) count as infinitely
        # bad, as in the choice; their std is then nan, without numpy's warning
        S = np.where(np.isfinite(scores), scores, np.inf)
        with np.errstate(invalid="ignore"):
            std = S.std(axis=0)
            se = (S.std(axis=0, ddof=1) / np.sqrt(S.shape[0]) if S.shape[0] > 1
                  else np.zeros(S.shape[1]))
        self.cv_results_ = {
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
            self.cv_results_[f"split{k}_test_mse"] = S[k]
        self.best_index_ = int(best)
        self.cv_guarded_ = bool(choice.guarded)
        self.q_, self.prune_rate_, self.best_step_, self.n_kept_ = qs[i], rates[j], t, n_t
        return best

    def _final_fit(self, X, Y, w, fmap, rate, t, pen, refit, splits):
        Xu, Yu, wu = _collapse_rows(X, Y, w)
        A, Yc, a_mean, y_mean = self._center_and_weight(fmap.transform(Xu), Yu, wu)
        self.n_features_ = fmap.n_features
        self.target_mean_, self.target_scale_ = _target_stats(Y, w)
        paths, supports, coefs, used, lams = [], [], [], [], []
        w_all = float(np.sum(w)) if w is not None else float(X.shape[0])
        for k in range(Y.shape[1]):
            path = shrimp_path(A, Yc[:, k], prune_rate=rate, n_steps=t,
                               min_features=min(self.min_features, fmap.n_columns),
                               schedule=self.schedule)
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
                A[:, S], Yc[:, k], am, refit, self.target_scale_[k], self.activation,
                lambda lam_grid, S=S, k=k: _kfold_ridge_errors(
                    fmap, S, X, Y[:, k], w, splits, lam_grid, self.fit_intercept,
                    self.target_scale_[k]),
                c_min_norm=c_mn)
            paths.append(path)
            supports.append(S)
            coefs.append(c)
            used.append(how)
            lams.append(None if lam is None else lam / w_all)
        one = getattr(self, "_one_d", True)
        self.path_ = paths[0] if one else paths
        self.refit_ = used[0] if one else used
        self.ridge_lam_ = lams[0] if one else lams
        self._finish(fmap, supports, coefs, a_mean, y_mean)
        _warn_magnitude(self)


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


def select_shrimp(X, y, *, qs=(1, 2), prune_rates=(0.2,), n_features=None,
                  cv=5, rule="1se_ridge", mean_factor=MEAN_FACTOR, validation_fraction=0.1,
                  random_state=None, callback=None, executor=None,
                  **params) -> SHRIMPSelection:
    r"""Choose ``q``, the prune rate and the pruning step (SHRIMP Sec. 4.2), robustly.

    By default (``cv=5``) every candidate (q, p, step) is scored by K-fold
    cross-validation and chosen by ``rule`` with the mean guard
    (:class:`SHRIMPCV`, which this calls: by default, ``"1se_ridge"``, the
    support of lowest mean error refitted with the strongest ridge penalty
    within one standard error of it; ``"min"`` the lowest mean error;
    ``"1se"`` the smallest model within one standard error of the best;
    never one that loses to predicting the mean by ``mean_factor`` on some
    fold; the model averages the all-rows refit with the chosen point's fold
    models unless ``average_folds=False`` is passed).  ``cv="holdout"`` is the paper's
    protocol: every candidate is a :class:`SHRIMPRegressor` fitted with the
    *same* seed, hence the same ``validation_fraction`` split, and the lowest
    validation MSE wins.  The paper searches
    :math:`q \in \{1, \dots, \min(10, d)\}` and
    :math:`p \in \{15\%, 25\%, 35\%\}` (``qs=None``,
    ``prune_rates=(0.15, 0.25, 0.35)``); the default grid is
    :class:`SHRIMPCV`'s small one, q in {1, 2} and p = 20 %, because every
    (q, p) costs one path per fold.

    Parameters
    ----------
    X, y : training data
    qs : iterable of int or None, default (1, 2)
        ``None``: the paper's ``1 .. min(10, d)``.
    prune_rates : iterable of float, default (0.2,)
    n_features : int
    cv : int, splitter, iterable of splits or "holdout"
    rule, mean_factor
        The K-fold rule (:class:`SHRIMPCV`).
    validation_fraction : float
        The hold-out share for ``cv="holdout"``.
    random_state : None, int or numpy.random.Generator
        One seed is drawn from it and shared by all candidates.
    callback : callable, optional
        ``callback(q, prune_rate, val_mse)`` for each candidate (progress).
    executor : None, int or Executor
        Where the q's (holdout: one task per q, whose prune rates share the
        split, the features and the first solve) or the folds (K-fold) run
        (:func:`rflite._core.parallel.map_tasks`); the result is the same.
    **params
        Other :class:`SHRIMPRegressor` / :class:`SHRIMPCV` parameters.

    Returns
    -------
    SHRIMPSelection
    """
    X, y = check_X_y(X, y)
    d = X.shape[1]
    qs = tuple(range(1, min(10, d) + 1)) if qs is None else _check_qs(qs, d)
    prune_rates = _check_rates(prune_rates)
    seed = int(check_rng(random_state).integers(0, 2**63 - 1))
    if isinstance(cv, str) and cv == "holdout":
        return _select_holdout(X, y, qs, prune_rates, n_features, validation_fraction, seed,
                               callback, executor, params)
    model = SHRIMPCV(n_features=n_features, qs=qs, prune_rates=prune_rates, cv=cv, rule=rule,
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
                    executor, params):
    """The paper's protocol: one seeded validation split shared by every candidate.

    Every candidate (q, p) is scored as the independent fit
    ``SHRIMPRegressor(q=q, prune_rate=p, random_state=seed, ...)`` would
    score it (:func:`_fit_candidate`, the reference), but one task per q
    (:func:`_holdout_q_task`) shares what depends only on q between the
    prune rates: the split, the feature matrices, their transposed copies and
    the t = 0 minimum-norm solve with its factorisation; and only the best
    rate of each q is refitted on all rows.  The q tasks run on ``executor``.
    """
    scores = np.full((len(qs), len(prune_rates)), np.inf)
    tasks = [(X, y, dict(n_features=n_features, q=q, prune_rate=prune_rates[0],
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
        best = _fit_candidate((X, y, dict(tasks[bi][2], prune_rate=prune_rates[bj])))
    i, j = np.unravel_index(np.argmin(scores), scores.shape)
    return SHRIMPSelection(best, qs[i], prune_rates[j], scores, qs, prune_rates)


def _holdout_q_task(task):
    """The hold-out scores of every prune rate for one q, and the best rate's model."""
    X, y, params, rates = task
    model = SHRIMPRegressor(**params)
    scores = model._fit_rates(X, y, rates)
    return scores, model


def _fit_candidate(task):
    """One :func:`select_shrimp` candidate, fitted independently (the reference for tests)."""
    X, y, params = task
    return SHRIMPRegressor(**params).fit(X, y)
