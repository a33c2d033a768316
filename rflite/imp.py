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
at every step; on the numerically low-rank random Fourier dictionaries that
loses the digits the paper's exactly representable targets need.  The path
instead updates triangular factors as columns are removed (downdated Gram
Cholesky factors while well conditioned, Householder LQ / QR factors
otherwise, iterative refinement against :math:`A_{P_t}`, a truncated SVD
and a reduced basis once rank deficient, as ``numpy.linalg.pinv`` truncates);
the notes of :mod:`rflite._imp.factor` say which factor is used when, how
accurate the solves are and what memory a path needs.
The solver used at each step is recorded in :attr:`SHRIMPPath.solver`.

The factorisations live in :mod:`rflite._imp.factor`, the path loop, its
schedule and ranking in :mod:`rflite._imp.path`, the refit guard and the
held-out scoring in :mod:`rflite._imp.guard`.
"""

from __future__ import annotations

import math

import numpy as np

from rflite._base import RandomFeatureModel
from rflite._core.backend import is_dask_array
from rflite._core.exceptions import MagnitudeWarning  # noqa: F401 - the warning of this module
from rflite._core.progress import Progress
from rflite._core.random import check_rng
from rflite._core.validation import check_real, check_X_y
from rflite._imp.cv import (  # noqa: F401 - the committee and the 1se rule re-exported
    _average_models, _check_cv_params, _choose_grid, _cv_fit, _cv_grid,
    _strongest_penalty_within_se,
)
from rflite._imp.factor import (  # noqa: F401 - the constants are public here
    BLOCKED_QR_MAX_COLS, BLOCKED_QR_ROWS, DOWNDATE_RTOL, GRAM_RCOND, LQ_REFINE_RTOL, MAX_REFINE,
    RANK_RTOL, REFINE_ACCEPT, REFINE_RTOL, SVD_RCOND,
)
from rflite._imp.fit import (  # noqa: F401 - the constants are public here
    AUTO_QS, REFITS, _check_against_mean, _check_refit, _check_regressor_params, _fit_auto_q,
    _fit_one, _fit_rates,
    _fit_setup, _shrimp_workspace,
)
from rflite._imp.guard import (  # noqa: F401 - the constants are public here
    AMPLIFICATION_MAX, GUARD_RATIO, MAGNITUDE_RATIO, RIDGE_EXPONENTS, _center_weight_like,
    _collapse_rows, _distinct_row_split, _guarded_choice, _guarded_refit, _guarded_step_scores,
    _holdout_ridge_errors, _kfold_ridge_errors, _mean_baseline, _predict_checked,
    _row_error_moments, _sigma_max, _target_stats, _warn_magnitude,
)
from rflite._imp.path import (  # noqa: F401 - the public names are public here
    BLAS_THREAD_MIN_ROWS, BLAS_THREADS, MAX_PRUNE_STEPS, METHODS, SCHEDULES, TIE_RTOL,
    VAL_TIE_RTOL, SHRIMPPath, _blas_threads, _check_schedule, _path, _path_start, _shared_paths,
    _transposed_copy, prune_counts,
)
from rflite._imp.select import (  # noqa: F401 - public here; the selection machinery
    MEAN_FACTOR, MIN_WEIGHTS_PER_SUBSET, N_FEATURES_MAX, SHRIMPSelection, _as_splitter,
    _auto_n_features, _check_memory_for, _check_qs, _check_rates, _cv_fold_scores, _fold_model,
    _fold_splits, _holdout_q_task, _n_rows, _run_fold_model, _select_holdout, _select_kfold,
    _shrimp_map,
)
from rflite._core.naming import publish
# _warmup compiles the path's row-compaction kernel for rflite.warmup()
from rflite._imp.factor import _warmup  # noqa: F401
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

publish(__name__, SHRIMPPath, prune_counts, SHRIMPSelection)


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
    (:func:`rflite._imp.path._prune_order`).  See :mod:`rflite._imp.factor` for how the minimum-norm
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
    * the chosen model must beat predicting the training mean on the
      validation rows by more than one standard error of the paired
      difference of their row errors
      (:func:`rflite._core.selection.beats_mean`), else the model is that
      mean (``refit_ == "mean"``, no columns);
    * when the validation rows are fewer than
      :data:`~rflite._core.selection.MIN_HOLDOUT_ROWS` (m below 1000 at the
      default ``validation_fraction``), the whole fit is also repeated on
      five folds over the distinct rows and must beat the folds' training
      means on the left-out rows by the same rule (nested cross-validation,
      :func:`rflite._imp.fit._check_against_mean`; five more fits).

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
    supports and ``coef_`` has shape ``(len(support_), n_targets)``; ``path_``,
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
        Rows of ``X`` as passed in the two parts (sorted).  The split deals
        the distinct rows of ``(X, y)``, so every copy of a repeated row lies
        on its side; rows of zero weight are in neither.
    input_min_, input_max_ : (d,) ndarray
        The training box.
    target_scale_ : float or ndarray
        :math:`\max_i |y_i - \bar y|` per output (the yardstick of
        :data:`GUARD_RATIO` and :data:`MAGNITUDE_RATIO`).
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

    _fit_workspace = _shrimp_workspace

    def _default_distribution(self, d):
        # the SHRIMP paper's N(0, 1/q) weights (q = d for dense weights; a q
        # above d is clipped to d, as the map's supports are)
        return Normal(scale=1.0 / math.sqrt(min(self.q, d) if self.q is not None else d))

    def _draw_features(self, d, rng):
        q = self._effective_q(d) if self.q is not None else None
        return _shrimp_map(self, d, q, rng)

    def fit(self, X, y, sample_weight=None):
        """Draw the features, run the path, select the step, refit; returns ``self``."""
        if is_dask_array(X) and not isinstance(self.q, str):
            self._fit_dask(X, y, sample_weight)
        elif isinstance(self.q, str):
            _fit_auto_q(self, X, y, sample_weight)
        else:
            Xv, Y, w, frac, refit = _fit_setup(self, X, y, sample_weight)
            # one BLAS thread setting for every step of the fit, whatever the
            # environment asks for: the model must not depend on the thread count
            with _blas_threads(Xv.shape[0]):
                _fit_one(self, Xv, Y, w, frac, refit, _distinct_row_split)
        if getattr(self, "_skip_mean_check", False):
            return self
        # a small hold-out: the fit's choice is checked against the mean by K folds
        return _check_against_mean(self, X, y, sample_weight)

    def _fit_rates(self, X, y, rates):
        """Fit with the best prune rate of ``rates``; the validation MSE of every rate
        (:func:`rflite._imp.fit._fit_rates`)."""
        return _fit_rates(self, X, y, rates, _distinct_row_split)

    def _check_params(self):
        """Validate the path's parameters (in memory and on Dask): ``(validation_fraction, refit)``."""
        return _check_regressor_params(self)

    def predict(self, X) -> np.ndarray:
        r"""Predictions :math:`c_0 + A(X)_{:, S} c_S` from the kept columns.

        Warns (:class:`~rflite._core.exceptions.MagnitudeWarning`) when a prediction
        deviates from the training targets' mean (``target_mean_``) by more
        than :data:`MAGNITUDE_RATIO` times their largest deviation from it
        (``target_scale_``); with ``clip_inputs=True`` the inputs are first
        clipped to the training box.
        """
        return _predict_checked(self, X)


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

    _fit_workspace = _shrimp_workspace

    def predict(self, X) -> np.ndarray:
        """Predictions of the refitted model (see :meth:`SHRIMPRegressor.predict`)."""
        return _predict_checked(self, X)

    def fit(self, X, y, sample_weight=None):
        """Cross-validate the (q, p, step) grid, refit the choice on all rows; returns ``self``."""
        return _cv_fit(self, X, y, sample_weight)

    def _check_params(self, d):
        """Validate the parameters for d inputs: ``(qs, rates, mean_factor, refit)``."""
        return _check_cv_params(self, d)

    def _grid(self, fmaps, rates):
        """The (map, rate, step, n_kept, penalty) grid points, in the order of the scores."""
        return _cv_grid(self, fmaps, rates)

    def _choose_grid(self, scores, baseline, grid, qs, rates, mean_factor):
        """The grid point chosen from the fold scores; sets ``cv_results_`` and the choice."""
        return _choose_grid(self, scores, baseline, grid, qs, rates, mean_factor)


# ------------------------------------------------------------ selection of q
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
    # checked whether or not cv="holdout" uses it: a bad value is a mistake either way
    fraction = check_real(validation_fraction, "validation_fraction", minimum=0.0, strict=True)
    if not fraction < 1.0:
        raise ValueError(f"validation_fraction must be in (0, 1), got {validation_fraction!r}")
    seed = int(check_rng(random_state).integers(0, 2**63 - 1))
    if isinstance(cv, str) and cv == "holdout":
        return _select_holdout(X, y, qs, prune_rates, n_features, validation_fraction, seed,
                               callback, executor, params, SHRIMPRegressor)
    return _select_kfold(X, y, qs, prune_rates, n_features, cv, rule, mean_factor, seed,
                         callback, executor, params, SHRIMPCV)


def _fit_candidate(task):
    """One :func:`select_shrimp` candidate, fitted independently (the reference for tests)."""
    X, y, params = task
    return SHRIMPRegressor(**params).fit(X, y)
