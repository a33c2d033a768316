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
  (``rflite._bp.socp._continuation``: each piece the KKT system of a fixed
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

Details of the SPGL1 path (differences from the ``spgl1`` package):

* **Projection** by Condat's algorithm (Math. Program. 158, 2016, "Fast
  projection onto the simplex and the l1 ball", Fig. 2): expected
  :math:`O(N)` in a numba kernel instead of an :math:`O(N \log N)` sort.
  Complex vectors are projected through their moduli.
* **One product with A per iteration**: the line search backtracks along the
  projected direction :math:`d` (SPG1), so :math:`A(x + t d) = Ax + t\,Ad`
  reuses a single :math:`Ad`; ``spgl1`` recomputes :math:`A x` at every
  backtracking step.  The projected-arc search (SPG2) is kept as fallback.
* **Support polish** (an active-set finish, exact where SPGL1's optional
  subspace minimisation is approximate): once the support :math:`S` of the
  iterate has been stable for a few iterations (or on a doubling schedule),
  the KKT system of BPDN restricted to :math:`S` with the current signs
  :math:`z` is solved in closed form from a QR factorisation
  :math:`A_S = QR`: :math:`c_S = R^{-1}(Q^* y - \lambda R^{-*} z)` with
  :math:`\lambda = \sqrt{\sigma^2 - \|r_0\|^2} / \|R^{-*} z\|`; columns
  are added or dropped a few times, and the candidate is accepted only if it
  is feasible with relative *duality gap* below ``tol``.  This works when
  :math:`|S| \le m`, always true for real data (LP vertices), not always for
  complex data, whose solutions can have more than ``m`` nonzeros; then SPG's
  own stopping rule (SPGL1's root test) applies and the gap is reported.

All products go through ``A @ x`` and ``A^* r`` only (``matvec`` /
``rmatvec``), so any :class:`scipy.sparse.linalg.LinearOperator` works,
including the matrix-free :class:`rflite.features.FeatureOperator`; the
homotopy and the polish additionally take the (at most ``m``) support
columns, via ``A.columns(S)`` when the operator has it, else ``A @ E_S``.

Working set (``rflite._bp.homotopy._homotopy_ws``): on dictionaries with
more than ``2 * WS_SIZE * m`` columns, BPDN's path is first run on an evenly
spread subset of ``WS_SIZE * m`` columns; its dual point is checked against
the whole dictionary with one product, the violated columns are added and the
path is rerun until the relative duality gap **of the full problem** is below
``tol`` (column generation).  On the SHRIMP q = 1 fourier dictionaries, which
sample each input's frequencies finely, the full path crawls from grid point
to grid point (3,000 breakpoints on the 140 x 20,000 f2 problem); the working
set certifies the same optimum 10-20x faster (``benchmarks/bench_bp.py``).

Basis pursuit on small dense problems (``m * N <= LP_MAX_ENTRIES``) that the
path cannot certify (numerically rank-deficient matrices) is solved as the
linear program it is, by HiGHS (``rflite._bp.lp``), and accepted only with a
residual within :data:`BP_TOL` and a duality gap within ``tol`` computed
here from HiGHS's duals (``stop_reason="linprog"``).

Large basis pursuit (real, ``m * N > LP_MAX_ENTRIES``, dense or an operator
with ``columns`` and ``column_norms``) is solved by column generation
(``rflite._bp.lp._bp_colgen``).  For a dense ``A`` the restricted LPs are
posed on the row-preconditioned system :math:`MAc = My`,
:math:`M = \Sigma^{-1}U^T` from the SVD of ``A``, with :math:`MA_W` and
:math:`My` formed by compensated dot products (exact to one rounding, where
float64 products are off by :math:`u s_{max}/s_i`, 1e-2 on the q = 1
dictionaries with condition numbers ~1e14), solved by HiGHS in the first
round and by a primal simplex warm-started at the previous optimal basis
afterwards; the dual point :math:`z = M^T\zeta` is formed in double-double and
the certificate (``rflite._bp.lp._dual_bound``'s guarded bound) evaluated with
compensated products on the original ``A`` and ``y``, with rigorous rounding
bounds (``"linprog"`` when the gap is within ``tol``).  140 x 20,000 SHRIMP
q = 1: certified, gap 7e-14, ``||c||_1 = 2.000180``, residual 3e-15, 2.4 s
CPU (``benchmarks/bench_bp.py``).  Operators without a dense matrix use the
unpreconditioned rounds (SVD form of each restricted matrix, HiGHS), whose
best feasible point is returned as ``"lp_inexact"`` with its finite gap when
it cannot be certified on numerically rank-deficient dictionaries.

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
from typing import NamedTuple

import numpy as np
from scipy.sparse.linalg import LinearOperator

from rflite._bp import homotopy as _bp_homotopy
from rflite._bp import lp as _bp_lp
from rflite._bp import path as _bp_path
from rflite._bp import solve as _bp_solve
from rflite._bp import spgl1 as _bp_spgl1
from rflite._core.backend import is_dask_array
from rflite._base import RandomFeatureModel
from rflite._core.selection import HOLDOUT_FRACTION, AutoChoice, CVSearch
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
from rflite._bp.lp import LP_MAX_ENTRIES, _bp_colgen
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
from rflite._core.validation import check_array, check_bool, check_choice, check_int, check_real
from rflite._core.linalg import min_norm_solve, ridge_on_columns
from rflite._reexport import reexport
from rflite._bp.solve import _check_problem, _options, _solve  # noqa: F401 - used by the estimators and tests

# setting a constant here (rflite.bp.WS_SIZE = ...) sets it where it is read
reexport(__name__, (_bp_homotopy, _bp_spgl1, _bp_lp, _bp_path, _bp_solve), public=(BPDNPath, bpdn_path))

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

class SigmaUnreachableWarning(RuntimeWarning):
    """BPDN's constraint ``‖A c - y‖ <= sigma`` cannot be met by any ``c``.

    Issued by :func:`bpdn`, :func:`basis_pursuit`, :func:`srfe` and
    :class:`SRFERegressor` when the least-squares residual of ``A`` is above
    ``sigma``; the result (``stop_reason="sigma_unreachable"``) then holds the
    least-squares fit, which is generally dense.
    """


class InfeasibleResultWarning(RuntimeWarning):
    """A BPDN solve stopped, uncertified, at a point that misses ``‖A c - y‖ <= sigma``.

    E.g. ``max_iter`` on a wide matrix-free operator, where the
    least-squares test that would say ``"sigma_unreachable"`` is not run
    (it is run for dense matrices and for tall operators with a Gram, such
    as the Dask operator): sigma may be unreachable, or the solver may need
    more iterations.
    """


class UncertifiedResultWarning(RuntimeWarning):
    """An estimator's BPDN solve stopped at a feasible point it could not certify.

    Issued by :class:`SRFERegressor` and :class:`SRFECV` (in memory and on
    Dask) when the final solve ends with one of :data:`UNCERTIFIED_STOPS`:
    the coefficients meet ``‖A c - y‖ <= sigma`` but their relative duality
    gap (``result_.bpdn.duality_gap``) is above ``tol``, so they may be far
    from l1-optimal.  Seen on numerically rank-deficient dictionaries with a
    small ``eta`` (200 rows of 300 centred sin features, condition 1e14, at
    ``eta`` = 0.01: l1 norm 3e7, gap 0.69).  The functions (:func:`bpdn`,
    :func:`srfe`) do not warn: their result's ``stop_reason`` and
    :attr:`L1Result.certified` say it.
    """


#: Stop reasons of a solver that ran out of iterations or stopped on a
#: heuristic test (``"path"``, the Dask search's exact homotopy point whose
#: gap is not computed, and ``"sigma_unreachable"`` have warnings of their own
#: or none).
UNCERTIFIED_STOPS = frozenset({"max_iter", "line_search", "lp_inexact", "root_found",
                               "bp_solution"})


def _warn_uncertified(est, res, sigma, stacklevel=3):
    """:class:`UncertifiedResultWarning` for an estimator's feasible, uncertified BPDN result
    (``stacklevel`` 3: the caller of the function that calls this)."""
    if res.stop_reason in UNCERTIFIED_STOPS and res.residual_norm <= sigma * (1.0 + 1e-3):
        warnings.warn(
            f"{type(est).__name__}: BPDN stopped ({res.stop_reason!r}) at a feasible point "
            f"with relative duality gap {res.duality_gap:.3g} above tol = {est.tol:g}: the "
            "coefficients meet the constraint but are not certified l1-optimal "
            "(result_.bpdn); a larger eta, fewer features or a larger max_iter may help",
            UncertifiedResultWarning, stacklevel=stacklevel)


def _warn_unreachable(res, sigma, m, stacklevel=3):
    """Issue :class:`SigmaUnreachableWarning` for a ``"sigma_unreachable"`` result,
    :class:`InfeasibleResultWarning` for an uncertified point clearly above sigma."""
    if (res.stop_reason != "sigma_unreachable" and not res.certified and sigma > 0
            and res.residual_norm > sigma * (1.0 + 1e-3)):
        warnings.warn(
            f"BPDN stopped ({res.stop_reason!r}, not certified) at residual "
            f"{res.residual_norm:.6g} above sigma = {sigma:.6g}: the coefficients do not "
            "meet the constraint; sigma may be below the least-squares residual "
            "(not tested on a wide operator) or the solve needs a larger max_iter",
            InfeasibleResultWarning, stacklevel=stacklevel)
    if res.stop_reason == "sigma_unreachable":
        warnings.warn(
            f"sigma = {sigma:.6g} is below the least-squares residual "
            f"{res.residual_norm:.6g} of A: no coefficient vector meets the constraint, "
            f"so the least-squares fit ({int(np.count_nonzero(res.coef))} nonzero "
            f"coefficients) was returned; use sigma >= {res.residual_norm:.6g} "
            f"(eta >= {res.residual_norm / math.sqrt(m):.6g}) for a sparse solution",
            SigmaUnreachableWarning, stacklevel=stacklevel)


class SRFEResult(NamedTuple):
    """Result of :func:`srfe`.

    Attributes
    ----------
    coef : ndarray (N,)
        Final coefficients: the BPDN solution, thresholded to its ``s`` largest
        entries and refitted when asked.
    support : ndarray of int
        Sorted indices of the kept columns.
    bpdn : L1Result
        The basis pursuit denoising solve before thresholding.
    """

    coef: np.ndarray
    support: np.ndarray
    bpdn: L1Result


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
    res = _solve(op, y, cplx, sigma=sigma, tau=None, **opts)
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


def _srfe(A, y, *, eta, s, refit, lam, tol, max_iter, polish) -> SRFEResult:
    """:func:`srfe` without the warning (shared with :class:`SRFERegressor`)."""
    op, yv, cplx = _check_problem(A, y)
    eta = check_real(eta, "eta", minimum=0.0)
    if refit not in (None, "lstsq", "ridge"):
        raise ValueError(f"refit must be None, 'lstsq' or 'ridge', got {refit!r}")
    lam = check_real(lam, "lam", minimum=0.0)
    m, n = op.shape
    if s is not None:
        s = check_int(s, "s", minimum=1, maximum=n)
    res = _solve(op, yv, cplx, sigma=eta * math.sqrt(m), tau=None,
                 **_options(op, tol, max_iter, None, polish))
    coef = res.coef.copy()
    support = np.flatnonzero(coef)
    if s is not None and support.size > s:
        keep = np.argpartition(-np.abs(coef[support]), s - 1)[:s]
        support = np.sort(support[keep])
        coef = np.zeros_like(coef)
        coef[support] = res.coef[support]
    if refit is not None and support.size:
        A_S = _columns(op, support)
        coef = np.zeros_like(coef)
        if refit == "lstsq":
            coef[support] = min_norm_solve(A_S, yv)
        else:
            coef[support] = ridge_on_columns(A_S, yv, lam)
    return SRFEResult(coef, support, res)


#: Default ``eta`` grid of the automatic choice, as fractions of the (weighted)
#: standard deviation of the training targets, largest (simplest) first.
#: Finer near the top, where the noisy real sets choose (their noise is a
#: large share of the variance of y); 1.0 itself would give c = 0.
ETA_FRACTIONS = tuple(np.concatenate([np.linspace(0.95, 0.5, 10),
                                      np.logspace(np.log10(0.4), -3, 11)]))

#: Share of the distinct rows held out by ``SRFERegressor(eta="auto")``.
VALIDATION_FRACTION = HOLDOUT_FRACTION


def _srfe_by_path(A, y, eta, s, refit, lam, *, certify=None) -> SRFEResult:
    """SRFE at one ``eta`` by :func:`bpdn_path` (the final fit of the automatic choice).

    The same homotopy point the choice scored, without :func:`bpdn`'s SPGL1
    fallback (which can run ``max_iter`` iterations on tall, badly
    conditioned matrices: 220 s on a 2000 x 1000 fold of ccpp).

    ``certify`` (a dict of :func:`_srfe`'s ``tol`` and ``max_iter``; the
    in-memory estimator passes it): the point's relative duality gap is
    computed (one product with :math:`A^T`); within ``tol`` the result is
    certified (``stop_reason="homotopy"``), otherwise -- the path ended
    before ``sigma`` or its point is not optimal -- the certified solver
    :func:`_srfe` refits at this ``eta``.  ``None`` (the Dask fit, where the
    product is one more pass): ``stop_reason`` is ``"path"`` (or
    ``"sigma_unreachable"`` when the path ended above ``sigma``),
    ``duality_gap`` NaN, not certified.
    """
    m = A.shape[0]
    sigma = eta * math.sqrt(m)
    path = bpdn_path(A, y, [sigma])
    coef = path.coefs[:, 0]
    r = y - A @ coef
    rnorm = float(np.linalg.norm(r))
    l1 = _l1(coef)
    if certify is not None:
        feasible = rnorm <= sigma * (1.0 + FEAS_TOL) + BP_TOL * float(np.linalg.norm(y))
        gap = _bpdn_gap(y, r, float(np.abs(A.T @ r).max(initial=0.0)), l1, sigma)
        if not (path.reached[0] and feasible and gap <= certify["tol"]):
            return _srfe(A, y, eta=eta, s=s, refit=refit, lam=lam, tol=certify["tol"],
                         max_iter=certify["max_iter"], polish=True)
        res = L1Result(coef, rnorm, l1, float(gap), path.n_steps, 2 * path.n_steps + 2, l1,
                       "homotopy")
    else:
        reason = "path" if path.reached[0] else "sigma_unreachable"
        res = L1Result(coef, rnorm, l1, math.nan, path.n_steps, 2 * path.n_steps + 1, l1,
                       reason)
    final = _threshold_refit(A, y, coef, s, refit, lam)
    return SRFEResult(final, np.flatnonzero(final), res)


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
    features; integer ``sample_weight`` equals repeated rows), follows one
    homotopy path on the rest (:func:`bpdn_path`), which gives the BPDN
    solution at every ``eta`` of the grid :data:`ETA_FRACTIONS` x the
    standard deviation of ``y`` (0.95 ... 1/1000 of it), takes the lowest
    validation MSE (:func:`rflite._core.selection.choose`, rule ``"min"``) and refits on
    all rows by the same path, stopped at ``eta_`` (:func:`_srfe_by_path`:
    the exact homotopy point, certified by its duality gap against ``tol``,
    ``result_.bpdn.stop_reason == "homotopy"``; when the path's point fails
    that check the certified :func:`bpdn` refits at ``eta_`` instead; on
    Dask arrays the point is not checked, ``stop_reason == "path"``);
    :class:`SRFECV` is the K-fold version.  A
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
        """``(eta, search)``: a fixed ``eta`` (``search`` None) or the validated
        search ``(eta grid, is_fraction, s grid, rule)`` (``eta`` None)."""
        search = self._search()
        if search is None:
            if isinstance(self.eta, str):
                raise ValueError(f"eta must be a float >= 0 or 'auto', got {self.eta!r}")
            return check_real(self.eta, "eta", minimum=0.0), None
        from rflite._core.parallel import check_executor
        from rflite._core.selection import check_grid

        grid, is_fraction, s_grid = search
        grid = np.sort(check_grid(grid, "etas"))[::-1].astype(float)
        s_grid = [None if s is None else check_int(s, "s", minimum=1, maximum=n_columns)
                  for s in s_grid]
        rule = self._rule()
        check_executor(self._n_jobs(), "n_jobs")  # (on Dask: validated, unused)
        return None, (grid, is_fraction, s_grid, rule)

    def _check_post(self, n_columns):
        """Validate the thresholding and refit parameters (``s``, ``refit``, ``lam``)."""
        if self.s is not None and not isinstance(self.s, (list, tuple, np.ndarray)):
            check_int(self.s, "s", minimum=1, maximum=n_columns)
        if self.refit not in (None, "lstsq", "ridge"):
            raise ValueError(f"refit must be None, 'lstsq' or 'ridge', got {self.refit!r}")
        check_real(self.lam, "lam", minimum=0.0)

    def fit(self, X, y, sample_weight=None):
        """Draw the features, centre, choose ``eta`` if asked, solve SRFE; returns ``self``."""
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
        if self.matrix_free and w is not None:
            raise ValueError("sample_weight other than 0/1 is not supported with "
                             "matrix_free=True (the operator cannot scale rows)")
        total = m if w is None else float(w.sum())
        normalize = check_bool(self.normalize, "normalize")
        fit_intercept = check_bool(self.fit_intercept, "fit_intercept")
        progress = Progress(getattr(self, "verbose", False), type(self).__name__)
        self._check_feature_memory(*X.shape, dense=not self.matrix_free)
        if self.matrix_free and search is not None:
            raise ValueError("matrix_free=True needs an explicit eta (the automatic "
                             "choice uses the dense feature matrix)")
        rng = self._rng()
        fmap = self._draw_features(X.shape[1], rng)
        s_final = self.s
        if search is not None:
            if is_fraction:
                # per output: each output's grid is relative to its own spread
                yc = Y - (Y.mean(axis=0) if w is None else (w @ Y) / w.sum())
                sd = np.sqrt(np.mean(yc ** 2 if w is None
                                     else (w[:, None] * yc ** 2) / w.mean(), axis=0))
                grid = np.outer(grid, np.where(sd > 0, sd, 1.0))
            else:
                grid = np.repeat(grid[:, None], Y.shape[1], axis=1)
            chosen = self._choose(fmap, X, Y, w, rng, grid, s_grid, rule,
                                  fit_intercept, normalize, progress)
        else:
            chosen = [(eta, s_final)] * Y.shape[1]
            if hasattr(self, "cv_results_"):
                del self.cv_results_
        del self._kept
        one = getattr(self, "_one_d", True)
        self.eta_ = chosen[0][0] if one else np.array([c[0] for c in chosen])
        if self.matrix_free and fit_intercept:
            # the centred operator: the same centring as the dense route
            from rflite._base import _centered_operator

            A, a_mean, scale = _centered_operator(fmap, X, normalize=normalize)
            _, Yc, _, y_mean = self._center_and_weight(None, Y, None)
        elif self.matrix_free:
            _, Yc, a_mean, y_mean = self._center_and_weight(None, Y, None)
            scale = None
            if normalize:
                norms = fmap.operator(X).column_norms()
                scale = 1.0 / np.where(norms > 0, norms, 1.0)
            A = fmap.operator(X, col_scale=scale)
        else:
            A, Yc, a_mean, y_mean, scale = _prepare(
                fmap.transform(X), Y, w, fit_intercept=fit_intercept, normalize=normalize)
        supports, coefs, results = [], [], []
        for k in range(Yc.shape[1]):
            eta, s_final = chosen[k]
            # sigma = eta * sqrt(rows) in the solver: make it eta * sqrt(sum w)
            eta_eff = eta * math.sqrt(total / m)
            if search is not None and not fmap.is_complex:
                res = _srfe_by_path(A, Yc[:, k], eta_eff, s_final, self.refit, self.lam,
                                    certify=dict(tol=self.tol, max_iter=self.max_iter))
            else:
                res = _srfe(A, Yc[:, k], eta=eta_eff, s=s_final, refit=self.refit,
                            lam=self.lam, tol=self.tol, max_iter=self.max_iter, polish=True)
            _warn_unreachable(res.bpdn, eta * math.sqrt(total), total)
            _warn_uncertified(self, res.bpdn, eta_eff * math.sqrt(m))
            coef = res.coef if scale is None else res.coef * scale
            support = np.flatnonzero(coef)
            results.append(res)
            supports.append(support)
            coefs.append(coef[support])
            progress.line(f"final fit, output {k + 1}/{Yc.shape[1]}: "
                          f"{res.bpdn.stop_reason}, {support.size} nonzero", level=2)
        self.s_ = chosen[0][1] if one else [c[1] for c in chosen]
        self.result_ = results[0] if one else results
        self.n_iter_ = results[0].bpdn.n_iter if one else [r.bpdn.n_iter for r in results]
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
        S, choices = choose_per_output(scores, len(points), Y, w, splits, rule)
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

