r"""SRFE: basis pursuit denoising on random features, with its own l1 solver.

The sparse random feature expansion (SRFE, Hashemi, Schaeffer, Shi, Topcu,
Tran and Ward 2023; "SRFE-S", Def. 4 of Xie, Shi, Schaeffer and Ward 2022)
fits the coefficients of a random-feature model by basis pursuit denoising

.. math::

    c^\sharp = \arg\min_c \|c\|_1 \quad \text{s.t.} \quad \|A c - y\|_2 \le \eta \sqrt{m},

and optionally keeps only the ``s`` largest :math:`|c^\sharp_j|` (thresholded
basis pursuit, the estimator of SHRIMP's Theorem 5).

The solver
----------
:func:`bpdn`, :func:`lasso` and :func:`basis_pursuit` take ``method``:

* ``"homotopy"`` (the default for real data, ``method="auto"``): the exact
  LASSO solution path (Osborne, Presnell and Turlach 2000; the LASSO variant
  of LARS, Efron et al. 2004), followed from :math:`\lambda = \|A^T y\|_\infty`
  down to the breakpoint segment where :math:`\|Ac - y\| = \sigma`
  (or :math:`\|c\|_1 = \tau`, or :math:`\lambda = 0` for basis pursuit),
  where the end point is found in closed form.  Each breakpoint costs one
  product with :math:`A^T` plus :math:`O(m |S|)` for the QR update of the
  support columns; the support of a BPDN solution has at most ``m`` columns,
  so the whole solve is a few hundred to a few thousand products and the
  answer is exact to rounding (duality gap ~1e-12).  The solution is
  certified by its duality gap before it is returned.
* ``"spgl1"``: the SPGL1 design of van den Berg and Friedlander (SIAM J.
  Sci. Comput. 31(2), 2008): Newton root finding on the Pareto curve
  :math:`\phi(\tau) = \min\{\|A c - y\|_2 : \|c\|_1 \le \tau\}` (Sec. 2.2,
  :math:`\phi'(\tau) = -\|A^* r\|_\infty / \|r\|`), each LASSO subproblem
  solved by spectral projected gradient with a non-monotone line search
  (Algorithm 1), exact projection onto the l1 ball.  Used as the fallback
  when the homotopy (real data) or the barrier method (complex data) cannot
  certify its result.
* complex data (``method="auto"``): complex BPDN is a second-order cone
  program (the l1 norm of complex entries is a group norm), so the LASSO
  homotopy and HiGHS do not apply; its dual
  :math:`\max \mathrm{Re}\,y^*z - \sigma\|z\|` s.t. :math:`|a_j^*z| \le 1`
  (``2m`` reals) is solved by a log-barrier Newton method with column
  generation (``rflite._bp.socp``), whose central path gives a feasible
  primal point; Newton's method on the KKT system of that point's support
  (``rflite._bp.socp._kkt_newton``) then gives the support's exact
  solution, so the coefficients do not depend on ``tol`` or on the path
  that found them (a Dask operator and a dense matrix agree to 1e-14, where
  the central-path point alone agreed to ``tol``); certified by the duality
  gap on the whole dictionary (``stop_reason="barrier"``).  On
  ill-conditioned dictionaries with a small ``sigma``, whose solutions have
  large l1 norms (240 x 60 exponential features, condition 9e3, at ``eta``
  = 0.5 .. 1: l1 norms 1,400-4,100 against ``‖y‖`` = 78), the dual
  barrier's Newton steps stall (SPGL1 then stopped uncertified, 25% above
  the optimum, after 20-35 s); the barrier gives up after two uncentred
  steps and the solution path is followed down from :math:`\|y\|`
  (``rflite._bp.continuation._continuation``: each piece the KKT system of a fixed
  support solved by Newton, columns joining and leaving where the dual
  conditions say; each step starts from the path's tangent, and a
  coefficient the tangent takes through 0 leaves at once), certified by the
  same gap (``stop_reason="homotopy"``; gaps 1e-13 .. 1e-12; 299 Newton
  solves and about 1.2 s on 240 x 60 at ``eta`` = 0.5, 1,419 and 2.6 s with
  zero-order steps; supports up to ``CONT_MAX_SUPPORT`` = 300 columns).
  A decreasing grid of ``sigma`` (SRFE's ``eta="auto"`` and ``SRFECV``
  with complex features) follows one such path through all its points.
  Where the path does not certify either (e.g. 300 x 1000 features at
  ``eta`` = 0.1, support beyond 300), the barrier is rerun without giving
  up and SPGL1 starts from the best point, as before (gap 0.92 there,
  ``"max_iter"``; 190 s on a loaded machine, 120 s before the path was
  tried).

Why the homotopy is the default: random-feature matrices are very badly
conditioned (condition numbers of 1e8 and more on the SHRIMP problems), and
first-order methods crawl there -- the ``spgl1`` package stops at its
iteration limit without converging on every SHRIMP problem (spec), and so does
our SPG.  On the 500 x 10000 benchmark the homotopy reaches the exact optimum
in a fraction of the time spgl1 needs to stop unconverged (``benchmarks/bench_bp.py``).
Its cost grows with the number of breakpoints, which is small when ``m``
(hence the support) is small, the regime of these papers.

The SPGL1 path's differences from the ``spgl1`` package (Condat's projection,
one product with ``A`` per iteration, the support polish) are described in
``rflite._bp.spg``.

All products go through ``A @ x`` and ``A^* r`` only (``matvec`` /
``rmatvec``), so any :class:`scipy.sparse.linalg.LinearOperator` works,
including the matrix-free :class:`rflite.features.FeatureOperator`; the
homotopy and the polish additionally take the (at most ``m``) support
columns, via ``A.columns(S)`` when the operator has it, else ``A @ E_S``.

On dictionaries with many columns the path runs on a working set of columns,
grown by column generation until the full problem's gap is within ``tol``
(``rflite._bp.homotopy._homotopy_ws``).

Basis pursuit on small dense problems (``m * N <= LP_MAX_ENTRIES``) that the
path cannot certify (numerically rank-deficient matrices) is solved as the
linear program it is, by HiGHS (``rflite._bp.lp``), and accepted only with a
residual within :data:`BP_TOL` and a duality gap within ``tol`` computed
here from HiGHS's duals (``stop_reason="linprog"``).

Large basis pursuit (real, ``m * N > LP_MAX_ENTRIES``, dense or an operator
with ``columns`` and ``column_norms``) is solved by column generation, with
rigorous rounding bounds on its certificate (``rflite._bp.lp._bp_colgen``).

Real BPDN (``sigma > 0``) that the homotopy cannot certify (SHRIMP's q = 1
dictionaries of f1 and f2, condition ~1e13, thousands of near-duplicate
columns) goes next to ``rflite._bp.nnls`` (``stop_reason="lasso_nnls"``):
the LASSO at the penalty whose residual norm is sigma, found by a secant
search on the penalty, each LASSO a non-negative least-squares problem
(Lawson-Hanson) on a working set of columns grown by column generation,
certified by the duality gap of its residual on the whole dictionary.  On the
126 x 20,000 SRFE-S problems of ``srfe-tables`` it certifies every f1 and f2
run that the path does not (gaps 1e-8 .. 1e-11; f1 the slowest).  Then the barrier
method of the complex case, on the real dual in :math:`\mathbb{R}^m`, then
SPGL1 from the best point, the best dual bound seen being the reported gap.

Modules: the SPGL1 loop, the path driver, :class:`L1Result` and the
constants are in ``rflite._bp.spgl1``; the homotopy in
``rflite._bp.homotopy``; the LPs in ``rflite._bp.lp``; the LASSO root
search in ``rflite._bp.nnls``; the barrier method in ``rflite._bp.socp`` (all
re-exported here where public).

Honest results: a result is certified (:attr:`L1Result.certified`) only when
a feasible point's gap was checked; anything else keeps the stop reason of the
solver that stopped (``"max_iter"``, ``"root_found"``, ...) and the point's own
gap (``inf`` if infeasible).  When ``sigma`` is below the least-squares
residual (decided up front for a tall dense ``A``, where it is one solve,
or a tall operator with ``full_gram`` -- the Dask operator, one Gram pass --
and after the path otherwise), the least-squares fit is returned with
``stop_reason="sigma_unreachable"`` and a :class:`SigmaUnreachableWarning`.

Numerical limits: columns that are (numerically) in the span of the current
support -- near-duplicate random features -- are kept out of the path
(:data:`HOMOTOPY_RCOND`); if the path then reaches :math:`\lambda = 0` with
:math:`\|r\| > \sigma` the result says ``"sigma_unreachable"`` (e.g. an
additive q = 1 model of a non-additive target with a small ``eta``).

References
----------
E. van den Berg, M. P. Friedlander, Probing the Pareto frontier for basis
pursuit solutions, SIAM J. Sci. Comput. 31(2):890-912, 2008.
M. R. Osborne, B. Presnell, B. A. Turlach, A new approach to variable
selection in least squares problems, IMA J. Numer. Anal. 20:389-403, 2000.
B. Efron, T. Hastie, I. Johnstone, R. Tibshirani, Least angle regression,
Ann. Statist. 32(2):407-499, 2004.
L. Condat, Fast projection onto the simplex and the l1 ball, Math. Program.
158:575-585, 2016.
A. Hashemi, H. Schaeffer, R. Shi, U. Topcu, G. Tran, R. Ward, Generalization
bounds for sparse random feature expansions, Appl. Comput. Harmon. Anal. 2023.
Y. Xie, B. Shi, H. Schaeffer, R. Ward, SHRIMP: Sparser random feature models
via iterative magnitude pruning, 2022, Def. 4 and Theorem 5.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from rflite._core.backend import is_dask_array
from rflite._base import RandomFeatureModel
from rflite._core.selection import HOLDOUT_FRACTION, AutoChoice, CVSearch  # noqa: F401
from rflite._bp.homotopy import (  # noqa: F401 - constants and kernels re-exported
    HOMOTOPY_RCOND,
    HOMOTOPY_REFRESH,
    WS_ADD,
    WS_ROUNDS,
    WS_SIZE,
    _columns,
    _homotopy,
    _homotopy_ws,
    _lasso_segments,
    _next_join,
    _Products,
)
from rflite._bp.lp import LP_MAX_ENTRIES, _bp_colgen  # noqa: F401 - re-exported
from rflite._bp.path import (  # noqa: F401 - the path, its result type and constants re-exported
    PATH_PATIENCE,
    PATH_STOP_FACTOR,
    BPDNPath,
    _path_scores,
    _prepare,
    _srfe_fold_scores,
    _threshold_refit,
    bpdn_path,
)
from rflite._bp.spgl1 import (  # noqa: F401 - the result type, constants and kernels re-exported
    BP_TOL,
    CERTIFIED,
    DEC_TOL,
    FEAS_TOL,
    GAMMA,
    HOMOTOPY_STEPS,
    MAX_ITER_FACTOR,
    N_PREV,
    OPT_TOL,
    POLISH_EVERY,
    POLISH_PATIENCE,
    POLISH_ROUNDS,
    STEP_MAX,
    STEP_MIN,
    L1Result,
    _bpdn_gap,
    _certify,
    _grow,
    _l1,
    _l1_threshold,
    _polish,
    _project,
    _reachable,
    _shrink_complex,
    _shrink_real,
    _solve_path,
    _vdot,
)
from rflite._bp.srfe import (  # noqa: F401 - public here; the solves stay importable
    _check_eta,
    _check_post,
    _eta_grids,
    _final_fits,
    ETA_FRACTIONS,
    VALIDATION_FRACTION,
    SRFEResult,
    _srfe,
    _srfe_by_path,
)
from rflite._bp.warn import (  # noqa: F401 - public here; the checks stay importable
    UNCERTIFIED_STOPS,
    InfeasibleResultWarning,
    SigmaUnreachableWarning,
    UncertifiedResultWarning,
    _warn_uncertified,
    _warn_unreachable,
)
from rflite._core.validation import check_array, check_bool, check_choice, check_int, check_real  # noqa: F401
from rflite._core.linalg import min_norm_solve, ridge_on_columns  # noqa: F401
from rflite._core.naming import publish
from rflite._bp.solve import _check_problem, _options, _solve  # noqa: F401 - used by the estimators and tests
from rflite._bp.solve import _warmup  # noqa: F401 - the solvers' kernels, for rflite.warmup()

publish(
    __name__,
    BPDNPath, bpdn_path, L1Result, SRFEResult, SigmaUnreachableWarning,
            InfeasibleResultWarning, UncertifiedResultWarning,
)

__all__ = [
    "L1Result",
    "SRFEResult",
    "OPT_TOL",
    "BP_TOL",
    "CERTIFIED",
    "SigmaUnreachableWarning",
    "InfeasibleResultWarning",
    "UncertifiedResultWarning",
    "bpdn",
    "lasso",
    "basis_pursuit",
    "project_l1_ball",
    "srfe",
    "SRFERegressor",
    "SRFECV",
    "BPDNPath",
    "bpdn_path",
]


# =========================================================================
# public solvers
# =========================================================================
def bpdn(A, y, sigma, *, tol=OPT_TOL, max_iter=None, x0=None, polish=True,
         method="auto") -> L1Result:
    r"""Basis pursuit denoising (exact homotopy, or SPGL1 root finding).

    .. math::

        \min_c \|c\|_1 \quad \text{s.t.} \quad \|A c - y\|_2 \le \sigma

    Parameters
    ----------
    A : (m, N) array_like (real or complex) or scipy.sparse.linalg.LinearOperator
        Only ``A @ x`` and ``A^* r`` are used, plus the (at most ``m``)
        support columns.
    y : (m,) array_like, real or complex
    sigma : float >= 0
        Residual bound; 0 gives basis pursuit.
    tol : float in (0, 1]
        Relative duality gap to reach (default :data:`OPT_TOL`).
    max_iter : int, optional
        Projected-gradient iterations of the SPGL1 path; default
        ``max(1000, MAX_ITER_FACTOR * m)``.  (The homotopy is capped at
        ``HOMOTOPY_STEPS * m + 100`` breakpoints.)
    x0 : (N,) array_like, optional
        Warm start of the SPGL1 path (the first l1 radius is ``‖x0‖_1``);
        with ``method="auto"`` it selects the SPGL1 path.
    polish : bool
        Try the exact support polish in the SPGL1 path (module notes).
    method : {"auto", "homotopy", "spgl1"}
        ``"auto"``: the homotopy for real data (falling back to SPGL1 warm
        started at its end point if it cannot certify it), SPGL1 for
        complex data.

    Returns
    -------
    L1Result

    References
    ----------
    Osborne, Presnell and Turlach (2000) and Efron et al. (2004), Sec. 3.1
    (the LASSO path); van den Berg and Friedlander (2008), Sec. 2 (Pareto
    curve, Theorem 2.1 for :math:`\phi'`) and Algorithm 1 (SPG with
    non-monotone line search).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> A = rng.standard_normal((40, 120)); c = np.zeros(120); c[[3, 50]] = [1., -2.]
    >>> res = bpdn(A, A @ c, 0.0)
    >>> np.flatnonzero(np.abs(res.coef) > 1e-8).tolist(), res.stop_reason
    ([3, 50], 'homotopy')
    """
    op, y, cplx = _check_problem(A, y)
    sigma = check_real(sigma, "sigma", minimum=0.0)
    opts = _options(op, tol, max_iter, x0, polish, method)
    res = _solve(op, y, cplx, sigma=sigma, tau=None, **opts)._replace(sigma=sigma)
    _warn_unreachable(res, sigma, op.shape[0])
    return res


def lasso(A, y, tau, *, tol=OPT_TOL, max_iter=None, x0=None, polish=True,
          method="auto") -> L1Result:
    r"""The LASSO in constrained form (exact homotopy, or spectral projected gradient).

    .. math::

        \min_c \|A c - y\|_2 \quad \text{s.t.} \quad \|c\|_1 \le \tau

    Parameters are those of :func:`bpdn`, with the l1 radius ``tau >= 0`` in
    place of ``sigma``; ``tol`` bounds SPGL1's relative gap ``rGap``.

    References
    ----------
    Osborne, Presnell and Turlach (2000); van den Berg and Friedlander (2008),
    Algorithm 1; the projection is Condat (2016).
    """
    op, y, cplx = _check_problem(A, y)
    tau = check_real(tau, "tau", minimum=0.0)
    opts = _options(op, tol, max_iter, x0, polish, method)
    return _solve(op, y, cplx, sigma=0.0, tau=tau, **opts)


def basis_pursuit(A, y, *, tol=OPT_TOL, max_iter=None, x0=None, polish=True,
                  method="auto") -> L1Result:
    r"""Basis pursuit :math:`\min \|c\|_1` s.t. :math:`A c = y` (``bpdn`` with ``sigma = 0``)."""
    op, y, cplx = _check_problem(A, y)
    opts = _options(op, tol, max_iter, x0, polish, method)
    res = _solve(op, y, cplx, sigma=0.0, tau=None, **opts)
    _warn_unreachable(res, 0.0, op.shape[0])
    return res


def project_l1_ball(x, tau) -> np.ndarray:
    r"""Euclidean projection onto the l1 ball :math:`\{c : \|c\|_1 \le \tau\}`.

    .. math::

        P_\tau(x) = \arg\min_{\|c\|_1 \le \tau} \|c - x\|_2
        = \operatorname{sign}(x) \max(|x| - \theta, 0),

    with the threshold :math:`\theta` found by Condat's algorithm (expected
    :math:`O(N)`); for complex ``x`` the moduli are projected and the phases
    kept.

    Parameters
    ----------
    x : (N,) array_like, real or complex
    tau : float >= 0

    References
    ----------
    L. Condat, Fast projection onto the simplex and the l1 ball, Math.
    Program. 158:575-585, 2016, Fig. 2.
    """
    x = check_array(x, "x", ndim=1, allow_complex=True, min_rows=0)
    tau = check_real(tau, "tau", minimum=0.0)
    return _project(x, tau)


# =========================================================================
# SRFE
# =========================================================================
def srfe(A, y, *, eta, s=None, refit=None, lam=0.0, tol=OPT_TOL, max_iter=None,
         polish=True) -> SRFEResult:
    r"""Sparse random feature expansion (SRFE / SRFE-S) on a feature matrix.

    Solves basis pursuit denoising with :math:`\sigma = \eta \sqrt{m}`

    .. math::

        c^\sharp = \arg\min_c \|c\|_1 \quad \text{s.t.} \quad \|A c - y\|_2 \le \eta \sqrt{m},

    then, when ``s`` is given, keeps the ``s`` entries of largest modulus
    (thresholded basis pursuit: SHRIMP's Def. 4 "SRFE-S" and Theorem 5).  The
    papers do **not** refit after thresholding; ``refit="lstsq"`` (minimum-norm
    least squares on the kept columns) or ``refit="ridge"``
    (:math:`(A_S^* A_S + \text{lam}\, I) c_S = A_S^* y`) are extensions.

    Parameters
    ----------
    A : (m, N) array_like or LinearOperator
    y : (m,) array_like
    eta : float >= 0
        Stability parameter: residual RMS allowed (:math:`\sigma = \eta\sqrt m`).
    s : int, optional
        Number of coefficients kept (``None``: no thresholding).
    refit : {None, "lstsq", "ridge"}
    lam : float >= 0
        Shift of the ridge refit (the coefficient of :math:`I`).
    tol, max_iter, polish
        Passed to :func:`bpdn`.

    Returns
    -------
    SRFEResult

    References
    ----------
    Xie, Shi, Schaeffer, Ward (2022), Def. 4; Hashemi et al. (2023), the
    SRFE estimator (BPDN on a random feature matrix).
    """
    res = _srfe(A, y, eta=eta, s=s, refit=refit, lam=lam, tol=tol, max_iter=max_iter,
                polish=polish)
    m = np.shape(y)[0]
    _warn_unreachable(res.bpdn, float(eta) * math.sqrt(m), m)
    return res


class SRFERegressor(AutoChoice, RandomFeatureModel):
    r"""SRFE: random features with coefficients from basis pursuit denoising.

    Fits :func:`srfe` on the feature matrix of a random feature map (dense or
    q-sparse weights), optionally thresholding to ``s`` coefficients (SRFE-S)
    and refitting.

    Parameters
    ----------
    n_features : int, default 1000
        Number of random features N (``2N`` columns for ``"fourier"``).
    eta : float or "auto", default "auto"
        Stability parameter; :math:`\sigma = \eta \sqrt{m}` (Def. 4).  With a
        noisy target, the noise standard deviation is the natural value.
        ``"auto"``: chosen from the data, see "The default" below.
    s : int, optional
        Keep the ``s`` largest coefficients (SRFE-S); ``None`` keeps all.
    refit : {None, "lstsq", "ridge"}
        Refit on the kept columns (not done in the papers).
    lam : float
        Ridge shift of ``refit="ridge"``.
    normalize : bool
        Divide the columns by their training norms before the solve (the
        scaling is folded into the coefficients, so ``predict`` is unchanged).
    matrix_free : bool
        Use the matrix-free :class:`~rflite.features.FeatureOperator` instead
        of the dense m x N matrix (slower per product, O(m + N) memory).
        Needs an explicit ``eta``.
    tol, max_iter
        Solver options of :func:`bpdn`.
    q : int or None, default 2
        Nonzeros per weight vector (``None``: dense), clipped to d.  Dense
        N(0, 1) weights on more than a few standardised inputs give features
        of very high frequency, hence the default 2.
    distribution, bias, activation, subsets, random_state
        See :func:`rflite.features.random_feature_map`.
    fit_intercept : bool, default True
        Dense fits centre ``y`` and the feature columns (weighted means)
        before the l1 solve and recover :math:`c_0 = \bar y - \bar a_S^T c_S`
        exactly (the intercept is not penalised); matrix-free fits centre
        through an operator :math:`(A - 1\bar a^T)` (the same fit up to
        rounding).  ``False``: the paper's model.
    clip_inputs : bool, default False
        Clip each input column of ``predict``'s ``X`` to the training box
        ``[input_min_, input_max_]`` (see ``RandomFeatureModel._clip_inputs``:
        far outside the training data a random-feature model extrapolates in
        no particular way).  Off by default, so that predictions are the model's.
    verbose : bool or int, default False
        ``eta="auto"``: lines for the hold-out path and the choice on stderr
        (:class:`rflite._core.progress.Progress`).

    The default
    -----------
    ``eta="auto"`` holds out a fifth of the distinct rows
    (:func:`rflite.ridge.row_folds`, drawn from ``random_state`` after the
    features; integer ``sample_weight`` equals repeated rows; when that
    fifth is under :data:`~rflite._core.selection.MIN_HOLDOUT_ROWS` rows,
    each of the five fifths in turn, :class:`~rflite._core.selection.AutoChoice`), follows one
    homotopy path on the rest (:func:`bpdn_path`), which gives the BPDN
    solution at every ``eta`` of the grid :data:`ETA_FRACTIONS` x the
    standard deviation of ``y`` (0.95 ... 1/1000 of it), takes the lowest
    validation MSE (:func:`rflite._core.selection.choose`, rule ``"min"``) and refits on
    all rows by the same path, stopped at ``eta_`` (:func:`_srfe_by_path`:
    the exact homotopy point, certified by its duality gap against ``tol``,
    ``result_.bpdn.stop_reason == "homotopy"``; when the path's point fails
    that check the certified :func:`bpdn` refits at ``eta_`` instead; on
    Dask arrays the point is not checked, ``stop_reason == "path"``);
    :class:`SRFECV` is the K-fold version.  With ``fit_intercept`` the
    chosen ``eta`` must beat predicting the training mean by more than one
    standard error of the paired difference of their validation errors
    (:func:`rflite._core.selection.beats_mean` over the folds), else the
    model is that mean (``mean_model_``).  A
    fold's path stops once its validation error has risen clearly past its
    minimum (:data:`PATH_STOP_FACTOR`), so small ``eta`` values that only
    fit noise cost nothing.  Complex features (``activation="exp"``) have
    no piecewise-linear path: each fold follows the certified solution
    path of complex BPDN through the grid points, largest ``eta`` first,
    with the same early stop (``rflite._bp.path._solve_grid``), and the
    final fit is :func:`bpdn` at ``eta_``.  Warm-started path steps cost
    a fraction of a solve from scratch per grid point, most where the
    small-``eta`` points lie near the rows' limit, in memory and on Dask
    alike; pass ``eta`` to skip the choice.  The papers'
    settings are explicit values: the
    HARFE Table 2 SRFE row is ``SRFERegressor(N, eta=noise_sd, q=2,
    distribution=Uniform(-1, 1), bias="weights", normalize=True,
    fit_intercept=False)``.

    Attributes
    ----------
    result_ : SRFEResult
        The full solver output (``result_.bpdn.n_iter``, ``stop_reason`` ...);
        a list over outputs for a 2-d ``y`` (each output an independent fit;
        ``support_`` is the union, ``coef_`` ``(len(support_), n_targets)``).
    eta_ : float or ndarray (n_targets,)
        The ``eta`` used (chosen for ``"auto"``; one per output of a 2-d
        ``y``, each output being an independent fit with its own choice).
    cv_results_ : dict
        ``eta="auto"`` only: the grid and hold-out errors (see :class:`SRFECV`).
    mean_model_ : bool or ndarray of bool (n_targets,)
        True for an output whose automatic choice lost to the training mean
        (the model of that output is the mean, no columns).
    n_features_in_, feature_names_in_, q_
        Input width, data-frame column names, ``q`` clipped to d.

    Notes
    -----
    ``sample_weight`` (dense fits) scales the rows by :math:`\sqrt{w_i}` and
    the noise level :math:`\sigma = \eta \sqrt{\sum_i w_i}` (in place of
    :math:`\eta\sqrt m`), so integer weights equal repeated rows and zero
    weights dropped rows.  Matrix-free fits accept 0/1 weights only.

    Examples
    --------
    >>> from rflite.datasets import make_shrimp2
    >>> X, y = make_shrimp2(100, rng=0)
    >>> model = SRFERegressor(n_features=500, eta=1e-3, q=1, random_state=0).fit(X, y)
    >>> model.n_nonzero_ <= 100
    True
    """

    _auto_hint = "pass eta"

    def __init__(self, n_features=1000, *, eta="auto", s=None, refit=None, lam=0.0,
                 normalize=False, matrix_free=False, tol=OPT_TOL, max_iter=None, q=2,
                 distribution="normal", bias="uniform", activation="sin", subsets="random",
                 fit_intercept=True, random_state=None, verbose=False, clip_inputs=False):
        self.clip_inputs = clip_inputs
        self.n_features = n_features
        self.eta = eta
        self.s = s
        self.refit = refit
        self.lam = lam
        self.normalize = normalize
        self.matrix_free = matrix_free
        self.tol = tol
        self.max_iter = max_iter
        self.q = q
        self.distribution = distribution
        self.bias = bias
        self.activation = activation
        self.subsets = subsets
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.verbose = verbose

    # -- the automatic choice (SRFECV overrides these) --------------------------
    def _search(self):
        """``(eta_grid, eta_is_fraction, s_grid)`` or None for a fixed ``eta``."""
        if isinstance(self.eta, str) and self.eta == "auto":
            return ETA_FRACTIONS, True, [self.s]
        return None

    def _check_fit(self):
        """All of ``fit``'s parameter checks: ``(eta, search)`` of :meth:`_check_eta`."""
        n_features = check_int(self.n_features, "n_features", minimum=1)
        n_columns = n_features * (2 if self.activation == "fourier" else 1)
        out = self._check_eta(n_columns)
        self._check_post(n_columns)
        return out

    def _check_eta(self, n_columns):
        return _check_eta(self, n_columns)

    def _check_post(self, n_columns):
        _check_post(self, n_columns)

    def _fit_workspace(self, m, n_columns, itemsize, dense):
        """Bytes a fit needs beyond the feature matrix (for ``_check_feature_memory``).

        Dense and tall (``m > n_columns``): a copy of the matrix, made by the
        least-squares solve that tests up front whether ``sigma`` is reachable
        (LAPACK's ``gelsd`` overwrites its input); the matrix itself is centred
        in place.  Dense and square or wide: nothing of the matrix's size (the
        least-squares residual of a full-row-rank matrix is zero, so the test
        runs only when the homotopy stalls, and checks its own copy).
        Choosing ``eta``: a fold's centred training copy and test rows (the
        matrix's size together), tall folds also the least-squares copy.
        Matrix-free: one row block of the operator (about ``2**22`` entries).
        """
        if not dense:
            return (1 << 22) * itemsize
        matrix = m * n_columns * itemsize
        tall = m > n_columns
        if self._check_fit()[1] is None:
            return matrix if tall else 0
        return 2 * matrix if tall else matrix

    def fit(self, X, y, sample_weight=None):
        """Draw the features, centre, choose ``eta`` if asked, solve SRFE; returns ``self``."""
        self._fit_once(X, y, sample_weight)
        return self._check_choice_against_mean(X, y, sample_weight)

    def _fit_once(self, X, y, sample_weight=None):
        """The fit of :meth:`fit` without the nested check against the mean."""
        from rflite._core.progress import Progress

        from rflite._core.folds import kept_rows

        if is_dask_array(X):
            return self._fit_dask(X, y, sample_weight)

        self._kept = kept_rows(sample_weight)
        X, Y, w = self._validate_fit(X, y, sample_weight)
        m = X.shape[0]
        eta, search = self._check_fit()
        if search is not None:
            grid, is_fraction, s_grid, rule = search
        matrix_free = check_bool(self.matrix_free, "matrix_free")
        if matrix_free and w is not None:
            raise ValueError("sample_weight other than 0/1 is not supported with "
                             "matrix_free=True (the operator cannot scale rows)")
        total = m if w is None else float(w.sum())
        normalize = check_bool(self.normalize, "normalize")
        fit_intercept = check_bool(self.fit_intercept, "fit_intercept")
        progress = Progress(getattr(self, "verbose", False), type(self).__name__)
        self._check_feature_memory(*X.shape, dense=not matrix_free)
        if matrix_free and search is not None:
            raise ValueError("matrix_free=True needs an explicit eta (the automatic "
                             "choice uses the dense feature matrix)")
        rng = self._rng()
        fmap = self._draw_features(X.shape[1], rng)
        s_final = self.s
        if search is not None:
            grid = _eta_grids(grid, is_fraction, Y, w)
            chosen = self._choose(fmap, X, Y, w, rng, grid, s_grid, rule,
                                  fit_intercept, normalize, progress)
            use_mean = self.__dict__.pop("_use_mean")
        else:
            use_mean = [False] * Y.shape[1]
            chosen = [(eta, s_final)] * Y.shape[1]
            if hasattr(self, "cv_results_"):
                del self.cv_results_
        del self._kept
        one = getattr(self, "_one_d", True)
        self.eta_ = chosen[0][0] if one else np.array([c[0] for c in chosen])
        if matrix_free and fit_intercept:
            # the centred operator: the same centring as the dense route
            from rflite._base import _centered_operator

            A, a_mean, scale = _centered_operator(fmap, X, normalize=normalize)
            _, Yc, _, y_mean = self._center_and_weight(None, Y, None)
        elif matrix_free:
            _, Yc, a_mean, y_mean = self._center_and_weight(None, Y, None)
            scale = None
            if normalize:
                norms = fmap.operator(X).column_norms()
                scale = 1.0 / np.where(norms > 0, norms, 1.0)
            A = fmap.operator(X, col_scale=scale)
        else:
            A, Yc, a_mean, y_mean, scale = _prepare(
                fmap.transform(X), Y, w, fit_intercept=fit_intercept, normalize=normalize)
        supports, coefs, results = _final_fits(self, A, Yc, chosen, total, scale,
                                               search is not None and not fmap.is_complex,
                                               progress)
        self.s_ = chosen[0][1] if one else [c[1] for c in chosen]
        self.result_ = results[0] if one else results
        self.n_iter_ = results[0].bpdn.n_iter if one else [r.bpdn.n_iter for r in results]
        # an output whose choice lost to the training mean is that mean
        coefs = [np.zeros_like(c) if u else c for c, u in zip(coefs, use_mean)]
        self.mean_model_ = use_mean[0] if one else np.array(use_mean)
        return self._finish(fmap, supports, coefs, a_mean, y_mean)

    def _choose(self, fmap, X, Y, w, rng, etas, s_grid, rule, fit_intercept, normalize,
                progress):
        """Score the ``(eta, s)`` grid from one path per split; set ``cv_results_``."""
        import functools

        from rflite._core.selection import cross_validate_grid
        from rflite.ridge import choose_per_output, cv_results_per_output

        A = fmap.transform(X)
        splits = self._splits(X, Y, rng)
        func = functools.partial(
            _srfe_fold_scores, A=A, Y=Y, w=w, etas=np.asarray(etas), ss=list(s_grid),
            fit_intercept=fit_intercept, normalize=normalize, refit=self.refit, lam=self.lam)
        with warnings.catch_warnings():
            # IllConditionedWarning of the refits is reported by the final fit
            warnings.simplefilter("ignore", RuntimeWarning)
            scores = cross_validate_grid(func, splits, n_jobs=self._n_jobs(),
                                         progress=progress if progress else None)
        # etas: (n_eta, n_targets); a point is (row of etas, s)
        points = [(i, s) for i in range(len(etas)) for s in s_grid]
        S, choices = choose_per_output(scores, len(points), Y, w, splits, rule,
                                       against_mean=self._compare_with_mean and fit_intercept)
        self._use_mean = [c.use_mean for c in choices]
        if progress:
            for i, (e, s) in enumerate(points):
                progress.line(f"eta={etas[e, 0]:.3g}" + ("" if s is None else f" s={s}"),
                              error=float(np.mean([c.mean[i] for c in choices])))
        eta_col = np.array([etas[p[0]] for p in points])
        grid = {"eta": eta_col[:, 0] if eta_col.shape[1] == 1 else eta_col}
        if any(s is not None for s in s_grid):
            grid["s"] = np.array([-1 if p[1] is None else p[1] for p in points])
        self.cv_results_ = cv_results_per_output(grid, S, choices)
        out = []
        for t, c in enumerate(choices):
            row, s = points[c.index]
            eta = float(etas[row, t])
            out.append((eta, s))
            progress.line(f"chose eta={eta:.3g}" + ("" if s is None else f" s={s}")
                          + (f" for output {t}" if len(choices) > 1 else ""),
                          error=float(c.mean[c.index]))
        return out


class SRFECV(CVSearch, SRFERegressor):
    r"""SRFE with ``eta`` (and optionally ``s``) chosen by K-fold cross-validation.

    One feature map is drawn and shared by the folds.  On each fold (training
    rows centred, weighted and optionally normalised as in
    :class:`SRFERegressor`) **one homotopy path** (:func:`bpdn_path`) gives
    the BPDN solution at every ``eta`` of the grid at once, since the path's
    residual decreases through every :math:`\sigma = \eta\sqrt{m}` (complex
    features: one certified solve per grid point instead, see
    :class:`SRFERegressor`); each is
    thresholded to every ``s`` of ``ss`` (and refitted if ``refit``) and
    scored on the fold's validation rows.  :func:`rflite._core.selection.choose` picks
    ``eta_`` (and ``s_``), and the model is refitted on all rows by the path
    stopped at ``eta_`` (as ``SRFERegressor(eta="auto")``, see there).

    Parameters
    ----------
    n_features, refit, lam, normalize, tol, max_iter, q, distribution, bias, activation, subsets, fit_intercept, random_state
        As :class:`SRFERegressor` (real activations only).
    etas : sequence of float, optional
        ``eta`` values in ``y``'s units.  Default: :data:`ETA_FRACTIONS` times
        the (weighted) standard deviation of ``y``.
    ss : sequence of int or None, optional
        Thresholding levels to try (``None`` in the list: no thresholding);
        default ``[None]`` (plain SRFE).
    cv : None, int or splitter, default None
        ``None``: 5 folds over the distinct rows (:func:`rflite.ridge.row_folds`,
        seeded by ``random_state``); an int K is scikit-learn's unshuffled
        ``KFold(K)``; any object with ``split(X, y)`` is used as is.
    rule : {"min", "1se"}, default "min"
        Grid order is largest ``eta`` first (then ``ss`` as given).
    n_jobs : None, int or executor
        Folds in parallel.
    verbose : bool or int, default False
        One line per fold and per grid point on stderr.

    Attributes
    ----------
    eta_, s_
        The chosen values (``s_`` None without thresholding).
    cv_results_ : dict
        ``eta`` (and ``s``, -1 for None), ``mean_test_mse``, ``std_test_mse``,
        ``se_test_mse``, ``split<k>_test_mse``, ``rank_test_mse``.
    feature_map_, support_, coef_, intercept_, result_
        Of the final fit on all rows.
    """

    def __init__(self, n_features=1000, *, etas=None, ss=None, cv=None, rule="min",
                 refit=None, lam=0.0, normalize=False, tol=OPT_TOL, max_iter=None, q=2,
                 distribution="normal", bias="uniform", activation="sin", subsets="random",
                 fit_intercept=True, n_jobs=None, verbose=False, random_state=None,
                 clip_inputs=False):
        self.clip_inputs = clip_inputs
        self.n_features = n_features
        self.etas = etas
        self.ss = ss
        self.cv = cv
        self.rule = rule
        self.refit = refit
        self.lam = lam
        self.normalize = normalize
        self.tol = tol
        self.max_iter = max_iter
        self.q = q
        self.distribution = distribution
        self.bias = bias
        self.activation = activation
        self.subsets = subsets
        self.fit_intercept = fit_intercept
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.random_state = random_state

    # SRFERegressor's code reads these; SRFECV always searches, never matrix-free
    matrix_free = False
    eta = "auto"
    s = None

    def _search(self):
        if self.ss is None:
            s_grid = [None]
        elif isinstance(self.ss, (str, bytes)) or not hasattr(self.ss, "__iter__"):
            raise ValueError(f"ss must be a sequence of ints (or None entries), got {self.ss!r}")
        else:
            s_grid = list(self.ss)
            if not s_grid:
                raise ValueError("ss must not be empty")
        if self.etas is None:
            return ETA_FRACTIONS, True, s_grid
        return self.etas, False, s_grid
