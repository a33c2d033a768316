r"""Basis pursuit as a linear program (HiGHS), certified on the problem as given.

Private module of :mod:`rflite.bp`.  Real basis pursuit

.. math::

    \min_c \|c\|_1 \quad \text{s.t.} \quad A c = y

is the linear program :math:`\min 1^T(u + v)` s.t. :math:`A(u - v) = y`,
:math:`u, v \ge 0`, whose dual is :math:`\max y^T w` s.t.
:math:`\|A^T w\|_\infty \le 1` (e.g. Chen, Donoho and Saunders, SIAM Rev.
43(1), 2001, Sec. 3.1).  :func:`rflite.bp.bpdn` uses it for ``sigma = 0`` on
small dense problems when the homotopy cannot certify its end point: on
numerically rank-deficient matrices (a 20 x 80 ``cos(x w)`` dictionary has
numerical rank about 10) the path's support QR refuses columns
(``HOMOTOPY_RCOND``) and the SPGL1 fallback stops on a heuristic test, while
HiGHS's simplex solves the LP in milliseconds.  The answer is accepted only
when its residual is within the module's basis-pursuit tolerance and the
relative duality gap, computed from HiGHS's equality duals ``w`` scaled to
:math:`w / \max(1, \|A^T w\|_\infty)` (dual feasible by construction), is at
most ``tol``: the certificate does not rely on HiGHS's own tolerances.
"""

from __future__ import annotations

import numpy as np
import scipy.optimize

#: Largest ``m * N`` for which basis pursuit is handed to HiGHS: HiGHS's
#: simplex on the badly conditioned random-feature LPs took 4 s at 140 x 1,000
#: and did not finish in 10 minutes at 140 x 20,000 (measured, one core).
LP_MAX_ENTRIES = 50_000
#: HiGHS feasibility tolerances tried in turn: tight first (HiGHS's default
#: 1e-7 leaves residuals above ``BP_TOL``), then the default, at which HiGHS
#: does not stop with a numerical error on rank-deficient problems (the
#: residual is then cleaned by a least-squares solve on the support found).
LP_FEAS_TOL = (1e-10, 1e-7)


def _bp_linprog(A, y, *, feas, tol):
    r"""Solve real basis pursuit with HiGHS and certify the result.

    Parameters
    ----------
    A : (m, N) ndarray, real
    y : (m,) ndarray, real
    feas : float
        Largest residual accepted as :math:`Ac = y`.
    tol : float
        Largest relative duality gap accepted.

    Returns
    -------
    ``(coef, residual_norm, l1_norm, gap)`` of a certified point, or ``None``.
    """
    for ftol in LP_FEAS_TOL:
        out = _bp_linprog_once(A, y, feas=feas, tol=tol, ftol=ftol)
        if out is not None:
            return out
    return None


def _bp_linprog_once(A, y, *, feas, tol, ftol):
    """One HiGHS solve at feasibility tolerance ``ftol``; see :func:`_bp_linprog`."""
    m, n = A.shape
    res = scipy.optimize.linprog(
        np.ones(2 * n), A_eq=np.hstack([A, -A]), b_eq=y, bounds=(0, None), method="highs",
        options={"primal_feasibility_tolerance": ftol, "dual_feasibility_tolerance": ftol})
    if res.status != 0 or res.x is None:
        return None
    coef = res.x[:n] - res.x[n:]
    rnorm = float(np.linalg.norm(y - A @ coef))
    if rnorm > feas:
        # re-solve on the support found (a basis: at most m columns) to
        # remove the simplex's rounding from the residual
        S = np.flatnonzero(coef)
        if S.size == 0:
            return None
        c_S, *_ = np.linalg.lstsq(A[:, S], y, rcond=None)
        coef = np.zeros(n)
        coef[S] = c_S
        rnorm = float(np.linalg.norm(y - A @ coef))
        if rnorm > feas:
            return None
    l1 = float(np.abs(coef).sum())
    w = np.asarray(res.eqlin.marginals, dtype=np.float64)
    scale = max(1.0, float(np.abs(A.T @ w).max()))
    dual = float(y @ w) / scale
    gap = (l1 - dual) / max(l1, 1e-300)
    if not gap <= tol:
        return None
    return coef, rnorm, l1, max(gap, 0.0)
