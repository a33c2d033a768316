r"""The result type of the l1 solvers of :mod:`rflite.bp`, their tolerances, and the
quantities a result reports (l1 norm, duality gap).

Below every solver module: :mod:`rflite._bp.spgl1`, :mod:`rflite._bp.spg`
and the others import from here, and :mod:`rflite.bp` re-exports the
constants.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np


#: Stop reasons that come with a checked duality gap (:attr:`L1Result.certified`).
CERTIFIED = frozenset({"homotopy", "linprog", "lasso_nnls", "barrier", "polished", "optimal",
                       "zero_solution"})
#: Default optimality tolerance: relative duality gap (and, before the polish
#: succeeds, SPGL1's relative root error ``|‖r‖ - sigma| / max(1, ‖r‖)``).
OPT_TOL = 1e-6
#: Basis pursuit is considered solved when ``‖r‖ <= BP_TOL * ‖y‖``.
BP_TOL = 1e-9
#: SPGL1's tau-update test on the relative change of the objective.
DEC_TOL = 1e-4
#: Length of the non-monotone line-search memory (SPGL1: 10 previous values).
N_PREV = 10
#: Armijo constant and safeguards of the Barzilai-Borwein step.
GAMMA = 1e-4
STEP_MIN = 1e-16
STEP_MAX = 1e5
#: Iterations with an unchanged support before the first polish attempt;
#: doubled after every failed attempt.
POLISH_PATIENCE = 3
#: Cap on homotopy breakpoints: ``HOMOTOPY_STEPS * m + 100``.
HOMOTOPY_STEPS = 20
#: Iteration of the first unconditional polish attempt; then at 2x, 4x, ...
POLISH_EVERY = 10
#: Add/drop rounds of one polish attempt (each: one QR of the m x |S| support
#: columns and at most one product with A^*).
POLISH_ROUNDS = 20
#: Relative primal feasibility slack accepted from the polish
#: (``‖r‖ <= sigma (1 + FEAS_TOL) + BP_TOL ‖y‖``).
FEAS_TOL = 1e-10
#: Default iteration cap is ``MAX_ITER_FACTOR * m`` (spgl1: ``10 m``), at least 1000.
MAX_ITER_FACTOR = 10
#: Largest ``N`` for which a tall operator's least-squares residual is
#: computed from its N x N Gram (:func:`_ls_point`; 64 MB complex per task).
LS_GRAM_MAX = 2000


class L1Result(NamedTuple):
    """Result of :func:`bpdn`, :func:`lasso` and :func:`basis_pursuit`.

    Attributes
    ----------
    coef : ndarray (N,)
        The solution :math:`c`.
    residual_norm : float
        :math:`\\|A c - y\\|_2`.
    l1_norm : float
        :math:`\\|c\\|_1` (sum of moduli for complex ``c``).
    duality_gap : float
        Relative duality gap of the problem solved: for BPDN / BP
        ``(‖c‖_1 - D(w)) / max(‖c‖_1, tiny)`` with the dual
        :math:`D(w) = \\mathrm{Re}\\, y^* w - \\sigma \\|w\\|`,
        :math:`\\|A^* w\\|_\\infty \\le 1`, built from the residual; for the LASSO
        ``(‖r‖^2 - Re y^* r + tau ‖A^* r‖_inf) / max(1, ‖r‖^2 / 2)`` (SPGL1's
        ``rGap``).  Meaningful for BPDN only when the residual is feasible.
    n_iter : int
        Spectral projected-gradient iterations.
    n_products : int
        Products with :math:`A` plus products with :math:`A^*`.
    tau : float
        Final l1 radius (the root of :math:`\\phi(\\tau) = \\sigma` for BPDN).
    stop_reason : str
        Certified (feasible, relative duality gap <= tol on the problem as
        given; :attr:`certified` is True): ``"homotopy"`` (exact path end
        point), ``"linprog"`` (basis pursuit solved as a linear program by
        HiGHS, directly or by column generation), ``"lasso_nnls"`` (real
        BPDN as the LASSO at the penalty whose residual is sigma, each LASSO
        by non-negative least squares on a working set, :mod:`rflite._bp.nnls`),
        ``"barrier"`` (complex
        BPDN / basis pursuit, a second-order cone program, solved by the dual
        log-barrier Newton method of :mod:`rflite._bp.socp`),
        ``"polished"`` (SPG + exact KKT point on the support),
        ``"optimal"`` (gap <= tol without polish), ``"zero_solution"``
        (``c = 0`` is optimal).  Not certified (``duality_gap`` is whatever
        the returned point has, ``inf`` when it is infeasible):
        ``"root_found"`` (SPGL1's root test), ``"bp_solution"``
        (``‖r‖ <= BP_TOL ‖y‖``), ``"max_iter"``, ``"line_search"``
        (repeated line-search failure), ``"lp_inexact"`` (large basis
        pursuit by column generation: feasible, but the rounds ended with a
        gap above ``tol``) and ``"sigma_unreachable"`` (the
        least-squares residual is above sigma: no coefficient vector meets
        the constraint; ``coef`` is a least-squares fit, and
        :func:`bpdn` and :func:`srfe` warn with
        :class:`SigmaUnreachableWarning`).  Whatever the reason, the point
        returned is the best one found: feasible if any was.
    sigma : float
        The BPDN constraint's sigma (``nan`` for the LASSO and basis
        pursuit); :attr:`feasible` and :attr:`constraint_excess` measure the
        residual against it.
    """

    coef: np.ndarray
    residual_norm: float
    l1_norm: float
    duality_gap: float
    n_iter: int
    n_products: int
    tau: float
    stop_reason: str
    sigma: float = math.nan

    @property
    def constraint_excess(self) -> float:
        r""":math:`\|A c - y\|_2 / \sigma - 1`: by how much the point misses the
        constraint relative to sigma (``<= 0`` when it holds); ``nan`` without a
        sigma constraint (LASSO, basis pursuit)."""
        if not self.sigma > 0.0:
            return math.nan
        return self.residual_norm / self.sigma - 1.0

    @property
    def feasible(self):
        r"""Whether :math:`\|A c - y\|_2 \le \sigma (1 + \mathrm{FEAS\_TOL})`, relative to sigma.

        A solver accepts a residual up to ``sigma (1 + FEAS_TOL) + BP_TOL ‖y‖``:
        the absolute ``BP_TOL ‖y‖`` is the rounding floor a residual can be
        computed to, and it dominates when sigma is below about
        ``1e-8 ‖y‖``, where a certified point may exceed sigma itself (see
        :attr:`constraint_excess`).  ``None`` without a sigma constraint.
        """
        if not self.sigma > 0.0:
            return None
        return self.residual_norm <= self.sigma * (1.0 + FEAS_TOL)

    @property
    def certified(self) -> bool:
        """Whether the result carries an optimality certificate.

        True for the stop reasons returned only after a feasible point's
        relative duality gap was checked against ``tol`` on the problem as
        given (``"homotopy"``, ``"linprog"``, ``"lasso_nnls"``, ``"barrier"``,
        ``"polished"``, ``"optimal"``) and for
        ``"zero_solution"``; False for SPGL1's heuristic stops
        (``"root_found"``, ``"bp_solution"``), ``"max_iter"``,
        ``"line_search"`` and ``"sigma_unreachable"``.
        """
        return self.stop_reason in CERTIFIED and math.isfinite(self.duality_gap)


def _l1(x):
    return float(np.abs(x).sum())


def _vdot(a, b):
    """Real part of :math:`a^* b`."""
    return float(np.vdot(a, b).real)


def _bpdn_gap(y, r, AHr_inf, l1, sigma, lam_hint=0.0):
    """Relative BPDN duality gap with the dual point ``w = r / max(lam_hint, ‖A^* r‖_inf)``."""
    scale = max(lam_hint, AHr_inf)
    if scale <= 0.0:
        return 0.0 if l1 == 0.0 else math.inf
    dual = (_vdot(y, r) - sigma * float(np.linalg.norm(r))) / scale
    return (l1 - dual) / max(l1, 1e-300)
