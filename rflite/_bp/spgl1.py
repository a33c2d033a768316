r"""The SPGL1 path behind :mod:`rflite.bp`: spectral projected gradient, polish, result type.

Private module: :func:`rflite.bp.bpdn` and friends dispatch here
(:func:`_solve_path`) after the large-basis-pursuit LP route; this module
holds the solver constants, :class:`L1Result` (re-exported by
:mod:`rflite.bp`), the path driver that tries the exact homotopy
(:mod:`rflite._bp.homotopy`), the small-LP route (:mod:`rflite._bp.lp`) and
the barrier method (:mod:`rflite._bp.socp`) before SPGL1's root finding,
the active-set polish, and the numba kernels of the l1-ball projection.
See the notes of :mod:`rflite.bp` for the maths and the references.

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
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import scipy.linalg
from numba import njit

from rflite._bp.homotopy import _columns, _homotopy_ws, _Products
from rflite._bp.lp import LP_MAX_ENTRIES, _bp_linprog
from rflite._bp.nnls import _nnls_bpdn
from rflite._bp.socp import _checked, _continuation, _kkt_newton, _socp_bpdn
from rflite._core.linalg import min_norm_solve, shifted_eigenvalues

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
    """

    coef: np.ndarray
    residual_norm: float
    l1_norm: float
    duality_gap: float
    n_iter: int
    n_products: int
    tau: float
    stop_reason: str

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


def _project(x, tau):
    """Projection onto the l1 ball of radius ``tau`` (real or complex ``x``)."""
    out = np.empty_like(x)
    if np.iscomplexobj(x):
        mod = np.abs(x)
        theta = _l1_threshold(mod, tau) if mod.sum() > tau else 0.0
        _shrink_complex(x, mod, theta, out)
    else:
        mod = np.abs(x)
        theta = _l1_threshold(mod, tau) if mod.sum() > tau else 0.0
        _shrink_real(x, theta, out)
    return out


def _reachable(P, op, y, sigma, ynorm, ls=None) -> bool:
    """Whether the least-squares residual of ``A`` is within ``sigma``.

    The homotopy can end above ``sigma`` although the level is attainable
    (exact ties such as duplicate columns make the path degenerate: a 4 x 5
    basis pursuit with one duplicated column stopped at 13% of ``||y||``); then
    the SPGL1 path takes over instead of reporting ``"sigma_unreachable"``.
    For an operator without a dense matrix or a Gram (:func:`_ls_point`) the
    least-squares residual is not computed and the homotopy's verdict stands.
    ``ls``: :func:`_ls_point`'s result when the caller has it (tall problems
    compute it up front; not recomputed).
    """
    if ls is None:
        ls = _ls_point(op, P, y)
    if ls is None:
        return False
    return ls[1] <= sigma * (1.0 + FEAS_TOL) + BP_TOL * ynorm


def _ls_point(op, P, y):
    r"""``(c, ‖y - A c‖)`` for a least-squares ``c``, or ``None`` when not computable here.

    A dense ``A``: :func:`rflite._core.linalg.min_norm_solve`.  A tall operator
    (``m > N``, ``N <= LS_GRAM_MAX``) with ``full_gram`` (the Dask operator:
    :math:`A^* A` and :math:`A^* y` in one pass): the pseudo-inverse of the
    Gram by its eigendecomposition, refined once by the same solve on
    :math:`A^* r` (the Gram squares the condition number); the residual
    reported is that of the returned ``c`` (one more product), not the
    Gram's estimate of it.  Without this test a Dask fit with an unreachable
    ``sigma`` ran SPGL1 to ``max_iter`` (2-3 minutes a fit for 240 x 60
    complex features) before saying so.
    """
    m, n = op.shape
    if isinstance(op, np.ndarray):
        c = min_norm_solve(op, y)
        return c, float(np.linalg.norm(y - op @ c))
    if not (m > n and n <= LS_GRAM_MAX and hasattr(op, "full_gram")):
        return None
    G, b = op.full_gram(y)
    e, V = np.linalg.eigh(G)
    d = shifted_eigenvalues(np.maximum(e, 0.0), 0.0)

    def pinv(v):
        return V @ ((V.conj().T @ v) / d)

    c = pinv(b)
    r = y - P.A(c)
    c = c + pinv(P.AH(r))
    return c, float(np.linalg.norm(y - P.A(c)))


def _bpdn_gap(y, r, AHr_inf, l1, sigma, lam_hint=0.0):
    """Relative BPDN duality gap with the dual point ``w = r / max(lam_hint, ‖A^* r‖_inf)``."""
    scale = max(lam_hint, AHr_inf)
    if scale <= 0.0:
        return 0.0 if l1 == 0.0 else math.inf
    dual = (_vdot(y, r) - sigma * float(np.linalg.norm(r))) / scale
    return (l1 - dual) / max(l1, 1e-300)



def _solve_path(op, y, cplx, *, sigma, tau, tol, max_iter, x0, polish,
                method, resume=None) -> L1Result:
    """SPGL1 root finding (``tau is None``) or a single LASSO (``tau`` given).

    ``resume``: a :class:`rflite._bp.socp.PathPoint` shared by the solves of
    a decreasing ``sigma`` grid (complex BPDN's continuation resumes there).
    """
    m, n = op.shape
    P = _Products(op, cplx)
    dtype = np.complex128 if cplx else np.float64
    ynorm = float(np.linalg.norm(y))
    single = tau is not None
    zero = np.zeros(n, dtype=dtype)
    if ynorm == 0.0 or (not single and sigma >= ynorm) or (single and tau == 0.0):
        return L1Result(zero, ynorm, 0.0, 0.0, 0, 0, 0.0 if not single else tau, "zero_solution")

    feas = sigma * (1.0 + FEAS_TOL) + BP_TOL * ynorm
    ls = None
    if not single and m > n:
        # More rows than columns: whether sigma is reachable at all is decided
        # up front by the least-squares residual (one dense solve, O(m n^2),
        # or one Gram pass of an operator), instead of after a path that
        # ends dense at lambda = 0
        ls = _ls_point(op, P, y)
        if ls is not None and ls[1] > feas:
            c_ls = np.asarray(ls[0], dtype=dtype)
            n_prod = 2 if isinstance(op, np.ndarray) else P.count
            return L1Result(c_ls, ls[1], _l1(c_ls), math.inf, 0, n_prod, _l1(c_ls),
                            "sigma_unreachable")

    n_hom = 0
    best_hom = None
    dual_lb = -math.inf  # best dual objective seen (a lower bound on the optimal l1)
    h_y = P.AH(y) if cplx and not single else None  # (the barrier's first product)
    if h_y is not None and float(np.abs(h_y).max(initial=0.0)) == 0.0:
        # y orthogonal to every column: c = 0 is a least-squares solution and
        # ||y|| > sigma its residual (the barrier would divide by A^* y = 0;
        # the real path reaches the same verdict through _certify)
        if ynorm <= feas:
            return L1Result(zero, ynorm, 0.0, 0.0, 0, P.count, 0.0, "zero_solution")
        return L1Result(zero, ynorm, 0.0, math.inf, 0, P.count, 0.0, "sigma_unreachable")
    if cplx and not single and method == "auto" and x0 is None:
        # complex BPDN is a second-order cone program: the dual barrier
        # method certifies it (SPGL1's root test stopped at gaps ~1e-3 and
        # its iterations at max_iter on complex exponential features)
        info = {}
        if resume is not None:
            # a decreasing grid of sigma: one solution path for the whole grid,
            # resumed from the previous point (the barrier only if it fails;
            # from scratch at every point the barrier cost 8 of a 17 s fit)
            sol, info["gave_up"] = None, True
        else:
            sol = _socp_bpdn(P, op, y, sigma=sigma, tol=tol, feas=feas, columns=_columns,
                             h_full=h_y, info=info)
        if sol is not None and sol[3] <= tol:
            return _barrier_result(sol, P.count)
        cands = [] if sol is None else [_barrier_result(sol, P.count)]
        if sigma > 0.0:
            # the barrier stalled or stopped short (ill-conditioned dictionary,
            # large l1 norm): follow the solution path down from ||y||
            if cands:
                dual_lb = cands[0].l1_norm * (1.0 - cands[0].duality_gap)
            res_c = _certified_point(
                P, y, _continuation(P, op, y, sigma, _columns, h_y, resume=resume),
                sigma, feas, dual_lb, "homotopy")
            if res_c is not None and res_c.duality_gap <= tol:
                return res_c
            cands += [] if res_c is None else [res_c]
            if info.get("gave_up"):
                # the path did not certify either: the barrier's longer run
                # gives SPGL1 a better start (gap 0.92 instead of 0.9998 on
                # 300 x 1000 exponential features at eta = 0.1)
                sol = _socp_bpdn(P, op, y, sigma=sigma, tol=tol, feas=feas, columns=_columns,
                                 h_full=h_y, patient=True)
                if sol is not None:
                    res_b = _barrier_result(sol, P.count)
                    if res_b.duality_gap <= tol:
                        return res_b
                    cands.append(res_b)
        for res in cands:
            if res.l1_norm > 0.0:
                dual_lb = max(dual_lb, res.l1_norm * (1.0 - res.duality_gap))
        if cands:
            best = min(cands, key=lambda res: res.duality_gap)
            if resume is not None:
                # a grid point neither the path nor the barrier certifies is
                # scored at their best point: SPGL1's last resort can spend
                # 1,000 products there without closing the gap, a minute a
                # fold with a Dask operator
                return best._replace(stop_reason="max_iter", n_products=P.count)
            x0 = best.coef
            best_hom = best._replace(stop_reason="max_iter")
    if method == "homotopy" or (method == "auto" and not cplx and x0 is None):
        if cplx:
            raise ValueError("method='homotopy' needs real A and y; use method='spgl1'")
        coef, w, n_hom, status = _homotopy_ws(P, op, y, sigma=sigma, tau=tau,
                                              max_steps=HOMOTOPY_STEPS * m + 100,
                                              tol=tol, feas=feas)
        hom = None
        if status in ("done", "feasible"):
            hom = _certify(P, y, coef, w, sigma, tau)
            if status == "done" and hom.duality_gap <= tol:
                return hom._replace(n_iter=n_hom, n_products=P.count)
            if (not single and hom.residual_norm > sigma * (1.0 + FEAS_TOL) + BP_TOL * ynorm
                    and not _reachable(P, op, y, sigma, ynorm, ls)):
                # the path reached lambda = 0 above sigma and least squares
                # confirms that no coefficient vector gets below sigma
                return hom._replace(n_iter=n_hom, n_products=P.count,
                                    stop_reason="sigma_unreachable")
        if (not single and sigma == 0.0 and isinstance(op, np.ndarray)
                and m * n <= LP_MAX_ENTRIES):
            # basis pursuit is a linear program: on small problems HiGHS
            # gives a certified answer where the path could not (rank deficiency)
            lp = _bp_linprog(op, y, feas=feas, tol=tol)
            P.count += 2
            if lp is not None:
                c_lp, rn_lp, l1_lp, gap_lp = lp
                return L1Result(c_lp, rn_lp, l1_lp, gap_lp, n_hom, P.count, l1_lp, "linprog")
        if method == "auto" and not single and 0.0 < sigma < ynorm and m < n:
            # the LASSO at the penalty whose residual is sigma, each LASSO a
            # non-negative least-squares problem on a working set: certifies
            # the q = 1 dictionaries whose near-duplicate columns break the
            # path's support solves (SHRIMP f1 / f2, 126 x 20,000: gaps
            # 1e-8 .. 1e-11 in 2-8 s).  Wide dictionaries only: its working
            # sets are dense m x |J| blocks (a tall Dask operator's would be
            # gathered on the client)
            sol = _nnls_bpdn(P, op, y, sigma=sigma, tol=tol, feas=feas, columns=_columns,
                             z0=y.copy())
            if sol is not None:
                c_n, rn_n, l1_n, gap_n, rounds_n, solves_n = sol
                res_n = L1Result(c_n, rn_n, l1_n, float(gap_n), n_hom + solves_n, P.count, l1_n,
                                 "lasso_nnls")
                if gap_n <= tol:
                    return res_n
                dual_lb = max(dual_lb, l1_n * (1.0 - gap_n))
                if hom is None or hom.residual_norm > feas or l1_n < hom.l1_norm:
                    coef, hom = c_n, res_n._replace(stop_reason="max_iter")
        if method == "auto" and not single and sigma > 0.0:
            # the dual barrier method of the complex case, on the real dual
            # (R^m): certifies what the path could not (SHRIMP f1, q = 1,
            # condition ~1e13: gap <= 3e-7 where the path's end point had
            # l1 196, gap 0.93), or gives SPGL1 a far better start
            sol = _socp_bpdn(P, op, y, sigma=sigma, tol=tol, feas=feas, columns=_columns)
            if sol is not None:
                c_b, rn_b, l1_b, gap_b, rounds_b, newton_b = sol
                res_b = L1Result(c_b, rn_b, l1_b, float(gap_b), n_hom + newton_b, P.count,
                                 l1_b, "barrier")
                if gap_b <= tol:
                    return res_b
                dual_lb = max(dual_lb, l1_b * (1.0 - gap_b))
                if hom is None or hom.residual_norm > feas or l1_b < hom.l1_norm:
                    coef, hom = c_b, res_b._replace(stop_reason="max_iter")
        if method == "homotopy":
            r = y - P.A(coef)
            return L1Result(coef, float(np.linalg.norm(r)), _l1(coef), math.inf, n_hom,
                            P.count, _l1(coef), "max_iter")
        x0 = coef
        best_hom = hom
    if single:
        x = zero if x0 is None else np.asarray(x0, dtype=dtype)
    else:
        x = zero if x0 is None else np.asarray(x0, dtype=dtype)
        tau = _l1(x)
    x = _project(x, tau)
    r = y - P.A(x)
    g = -P.AH(r)
    f = 0.5 * _vdot(r, r)
    fold = f
    dx = _project(x - g, tau) - x
    dxnorm = float(np.abs(dx).max()) if n else 0.0
    gstep = STEP_MAX if dxnorm < 1.0 / STEP_MAX else min(STEP_MAX, max(STEP_MIN, 1.0 / dxnorm))
    last_fv = np.full(N_PREV, -np.inf)
    last_fv[0] = f
    best = (math.inf, x)
    line_errors = 0
    step_max = STEP_MAX

    support = x != 0
    stable = 0
    patience = POLISH_PATIENCE
    next_polish = POLISH_EVERY
    polished_key = None
    stop = None
    gap = math.inf
    it = 0
    while True:
        gnorm = float(np.abs(g).max())
        rnorm = math.sqrt(2.0 * f)
        lgap = 2.0 * f - _vdot(r, y) + tau * gnorm  # LASSO gap, SPGL1's `gap`
        rgap = abs(lgap) / max(1.0, f)
        aerr1 = rnorm - sigma
        rerr1 = abs(aerr1) / max(1.0, rnorm)
        rerr2 = abs(f - 0.5 * sigma**2) / max(1.0, f)

        # -- polish on a stable support -----------------------------------
        new_support = x != 0
        if np.array_equal(new_support, support):
            stable += 1
        else:
            stable = 0
            support = new_support
        nnz = int(support.sum())
        if polish and nnz > 0 and (stable >= patience or it >= next_polish):
            key = (nnz, int(np.flatnonzero(support).sum()))
            if key != polished_key:
                polished_key = key
                cand = _polish(P, op, y, x, sigma, tau, single, tol)
                if cand is not None:
                    return cand._replace(n_iter=it, n_products=P.count)
                patience *= 2
            next_polish = 2 * max(it, POLISH_EVERY)

        if single:
            gap = rgap
            if rgap <= tol:
                stop = "optimal"
            elif rnorm < tol * ynorm:
                # (almost) interpolation: the dual point 0 bounds the optimum
                # below by 0, a gap of f itself; certified only when that is
                # within tol (the label said "optimal" with gaps of 3e-5)
                gap = min(rgap, f / max(1.0, f))
                stop = "optimal" if gap <= tol else "bp_solution"
        else:
            if rnorm <= sigma * (1.0 + FEAS_TOL) + BP_TOL * ynorm:
                gap = _bpdn_gap(y, r, gnorm, _l1(x), sigma)
                if gap <= tol:
                    stop = "optimal"
            if stop is None and (rgap <= max(tol, rerr2) or rerr1 <= tol):
                # SPGL1's root test is not a certificate (its gap was ~1e-3
                # on complex problems); real data reach here only as the
                # homotopy's fallback, complex data keep iterating until
                # the BPDN gap above certifies the point ("optimal")
                if rerr1 <= tol and not cplx:
                    stop = "root_found"
                if rnorm <= BP_TOL * ynorm:
                    stop = "bp_solution"
            if stop is None:
                fchange = abs(f - fold)
                upd = (fchange <= DEC_TOL * f and rnorm > 2 * sigma) or (
                    fchange <= 0.1 * f * abs(rnorm - sigma) and rnorm <= 2 * sigma
                )
                if upd and gnorm > 0:
                    tau_old = tau
                    tau = max(0.0, tau + rnorm * aerr1 / gnorm)
                    if tau < tau_old:
                        x = _project(x, tau)
                        r = y - P.A(x)
                        g = -P.AH(r)
                        f = 0.5 * _vdot(r, r)
                        last_fv[:] = -np.inf
                        last_fv[0] = f
        if stop is None and it >= max_iter:
            stop = "max_iter"
        if stop is None and line_errors > 10:
            stop = "line_search"
        if stop is not None:
            break

        # -- one spectral projected-gradient step ---------------------------
        it += 1
        xold, gold, fold = x, g, f
        fmax = float(last_fv.max())
        d = _project(x - gstep * g, tau) - x
        gtd = _vdot(g, d)
        ok = False
        if gtd < 0:
            Ad = P.A(d)
            Ax_r = r  # r = y - A x
            step = 1.0
            for _ in range(10):
                r_new = Ax_r - step * Ad
                f_new = 0.5 * _vdot(r_new, r_new)
                if f_new < fmax + GAMMA * step * gtd:
                    ok = True
                    break
                if step <= 0.1:
                    step *= 0.5
                else:
                    tmp = -gtd * step**2 / (2.0 * (f_new - f - step * gtd))
                    step = tmp if 0.1 <= tmp <= 0.9 * step else 0.5 * step
            if ok:
                x = x + step * d
                r, f = r_new, f_new
        if not ok:  # projected-arc search (SPG2), one product per trial
            step = 1.0
            for _ in range(10):
                x_new = _project(x - step * gstep * g, tau)
                r_new = y - P.A(x_new)
                f_new = 0.5 * _vdot(r_new, r_new)
                if f_new < fmax + GAMMA * _vdot(g, x_new - x):
                    ok = True
                    break
                step *= 0.5
            if ok:
                x, r, f = x_new, r_new, f_new
        if not ok:
            line_errors += 1
            step_max /= 10.0
            gstep = min(gstep, step_max)
            x, g, f = xold, gold, fold
            continue
        g = -P.AH(r)
        s_ = x - xold
        y_ = g - gold
        sty = _vdot(s_, y_)
        gstep = step_max if sty <= 0 else min(step_max, max(STEP_MIN, _vdot(s_, s_) / sty))
        if single or f > 0.5 * sigma**2:
            last_fv[it % N_PREV] = f
        if single and f < best[0]:
            best = (f, x)

    if single and best[0] < f:
        x = best[1]
        r = y - P.A(x)
        f = 0.5 * _vdot(r, r)
        g = -P.AH(r)
        gnorm = float(np.abs(g).max())
        gap = abs(2.0 * f - _vdot(r, y) + tau * gnorm) / max(1.0, f)
    # a last polish on whatever support we have
    nnz = int((x != 0).sum())
    if polish and stop in ("max_iter", "root_found", "line_search", "bp_solution") and nnz > 0:
        cand = _polish(P, op, y, x, sigma, tau, single, tol)
        if cand is not None:
            return cand._replace(n_iter=it, n_products=P.count)
    if not single and stop != "optimal":
        gnorm = float(np.abs(g).max())
        rn = math.sqrt(2.0 * f)
        feasible = rn <= sigma * (1.0 + FEAS_TOL) + BP_TOL * ynorm
        gap = _bpdn_gap(y, r, gnorm, _l1(x), sigma) if feasible else math.inf
    res = L1Result(x, math.sqrt(2.0 * f), _l1(x), float(gap), it + n_hom, P.count, float(tau),
                   stop)
    if best_hom is not None:
        # keep the homotopy end point when it is at least as good: feasible
        # with no larger objective (LASSO: no larger residual; an infeasible
        # BPDN point only against another infeasible one, by residual)
        if single:
            better = best_hom.residual_norm <= res.residual_norm
        else:
            hom_ok = best_hom.residual_norm <= feas
            res_ok = res.residual_norm <= feas
            if hom_ok != res_ok:
                better = hom_ok
            elif hom_ok:
                better = best_hom.l1_norm <= res.l1_norm
            else:
                better = best_hom.residual_norm <= res.residual_norm
        if better and not res.duality_gap <= tol:
            # The homotopy's point, but not its label: it was not certified
            # (else it had been returned above), so the reason is the one
            # SPGL1 stopped with and the gap is the homotopy point's own.
            res = best_hom._replace(n_iter=it + n_hom, n_products=P.count, stop_reason=stop)
    if not single and res.residual_norm <= feas and res.l1_norm > 0 and dual_lb > -math.inf:
        # any dual feasible point bounds the optimum: the barrier's may be the best
        gap_lb = (res.l1_norm - dual_lb) / res.l1_norm
        if gap_lb < res.duality_gap:
            res = res._replace(duality_gap=float(gap_lb),
                               stop_reason="optimal" if gap_lb <= tol else res.stop_reason)
    return res


def _barrier_result(sol, n_products):
    """:class:`L1Result` of a :func:`rflite._bp.socp._socp_bpdn` tuple (uncertified or not)."""
    coef, rnorm, l1, gap, _, newton = sol
    return L1Result(coef, rnorm, l1, float(gap), newton, n_products, l1, "barrier")


def _certified_point(P, y, coef, sigma, feas, dual_lb, reason):
    """:class:`L1Result` of a BPDN point (:func:`rflite._bp.socp._checked`: its gap
    from the better of its own dual point and ``dual_lb``); ``None`` for no point
    or an infeasible one."""
    chk = None if coef is None else _checked(P, y, coef, sigma, feas, dual_lb)
    if chk is None:
        return None
    coef, rn, l1, gap = chk
    return L1Result(coef, rn, l1, float(gap), 0, P.count, l1, reason)


def _certify(P, y, coef, w, sigma, tau):
    """Residual, l1 norm and relative duality gap of a homotopy solution."""
    r = y - P.A(coef)
    rnorm = float(np.linalg.norm(r))
    l1 = _l1(coef)
    if tau is not None:
        g = P.AH(r)
        f = 0.5 * rnorm**2
        gap = abs(2.0 * f - _vdot(r, y) + tau * float(np.abs(g).max())) / max(1.0, f)
        return L1Result(coef, rnorm, l1, float(gap), 0, 0, float(tau), "homotopy")
    feasible = rnorm <= sigma * (1.0 + FEAS_TOL) + BP_TOL * float(np.linalg.norm(y))
    if l1 == 0.0:
        # c = 0 is the answer only when it meets the bound; the path also
        # ends at 0 when A^T y = 0 (y orthogonal to every column), where
        # least squares cannot get below ||y|| either
        return L1Result(coef, rnorm, 0.0, 0.0 if feasible else math.inf, 0, 0, 0.0,
                        "zero_solution" if feasible else "homotopy")
    h = P.AH(w)
    scale = max(1.0, float(np.abs(h).max()))
    dual = (_vdot(y, w) - sigma * float(np.linalg.norm(w))) / scale
    gap = (l1 - dual) / l1
    if not feasible:
        gap = math.inf
    return L1Result(coef, rnorm, l1, float(gap), 0, 0, l1, "homotopy")


def _polish(P, op, y, x, sigma, tau, single, tol):
    r"""Active-set finish: exact KKT solves on a support grown/shrunk from ``x``.

    BPDN: :math:`A_S^*(y - A_S c_S) = \lambda z`, :math:`\|y - A_S c_S\| = \sigma`.
    With :math:`A_S = QR`, :math:`u = R^{-*} z`, :math:`r_0 = y - QQ^*y`:
    :math:`c_S = R^{-1}(Q^* y - \lambda u)`, :math:`r = r_0 + \lambda Q u`
    (orthogonal parts), so :math:`\lambda = \sqrt{\sigma^2 - \|r_0\|^2} / \|u\|`.
    LASSO: :math:`\lambda = (\mathrm{Re}\, u^* Q^* y - \tau) / \|u\|^2`
    (so that :math:`z^* c_S = \tau`).  Complex signs are refined by the
    fixed-point iteration :math:`z \leftarrow c_S / |c_S|`.

    Each round either drops the columns whose sign disagrees with :math:`z`,
    or checks dual feasibility of :math:`w = r / \lambda` (for basis pursuit,
    :math:`w = Q u`, so that :math:`A_S^* w = z`) with one product
    :math:`A^* w` and adds the most violating columns with the sign of
    :math:`(A^* w)_j`, like a primal active-set method.  A candidate is
    returned only when it is feasible with relative duality gap ``<= tol``;
    otherwise ``None`` (the caller keeps iterating).
    """
    m, n = op.shape
    ynorm = float(np.linalg.norm(y))
    cplx = np.iscomplexobj(y)
    S = np.flatnonzero(x)
    if S.size > m:
        S = np.sort(S[np.argpartition(-np.abs(x[S]), m - 1)[:m]])
    z = x[S] / np.abs(x[S])
    for _ in range(POLISH_ROUNDS):
        if S.size == 0:
            return None
        A_S = _columns(op, S)
        if A_S.dtype != y.dtype:
            A_S = A_S.astype(y.dtype)
        Q, R = scipy.linalg.qr(A_S, mode="economic", check_finite=False)
        dR = np.abs(np.diag(R))
        if dR.min() <= 1e-13 * dR.max():
            return None
        qy = Q.conj().T @ y
        r0 = y - Q @ qy
        r0n2 = _vdot(r0, r0)
        if not single and r0n2 > sigma**2 * (1 + 2 * FEAS_TOL) + (BP_TOL * ynorm) ** 2:
            # the support cannot reach the residual level: grow it
            if S.size >= m:
                return None
            h = P.AH(r0)
            S, z = _grow(S, z, h, np.inf, m)
            continue
        newton = cplx and (single or sigma > 0.0)
        for _ in range(30 if cplx and not newton else 1):
            u = scipy.linalg.solve_triangular(R, z, trans="C", check_finite=False)
            un2 = _vdot(u, u)
            if single:
                lam = max((_vdot(u, qy) - tau) / un2, 0.0)
            else:
                lam = math.sqrt(max(sigma**2 - r0n2, 0.0) / un2)
            c = scipy.linalg.solve_triangular(R, qy - lam * u, check_finite=False)
            if not cplx:
                break
            znew = c / np.where(c == 0, 1.0, np.abs(c))
            if np.abs(znew - z).max() <= 1e-14:
                break
            z = znew
        if newton and np.all(c != 0):
            # the phase fixed point above diverges on ill-conditioned
            # supports: Newton on the support's KKT system instead
            c_new = _kkt_newton(A_S, y, c, sigma=None if single else sigma, tau=tau)
            if c_new is not None:
                c = c_new
                z = c / np.abs(c)
                lam = float(np.abs(A_S.conj().T @ (y - A_S @ c)).mean())
        bad = (np.conj(z) * c).real <= 0 if cplx else np.sign(c) != z
        bad |= np.abs(c) <= 1e-12 * np.abs(c).max()  # zero up to rounding: drop
        if bad.any():
            S, z = S[~bad], z[~bad]
            continue
        r = y - A_S @ c
        if lam > 0:
            w = r / lam
        else:
            w = Q @ u
        h = P.AH(w)
        hS = np.abs(h[S])
        h[S] = 0.0
        hmax = float(np.abs(h).max())
        if hmax > 1.0 + 1e-9:
            if S.size < m:
                S, z = _grow(S, z, h, 1.0 + 1e-9, m)
                continue
            if cplx:
                return None
            # full support: a simplex-style exchange.  Column j enters with the
            # sign of h_j; moving along c_S(t) = c_S - t sgn A_S^{-1} a_j keeps
            # A_S c_S + t sgn a_j fixed, and the first coefficient to reach 0 leaves.
            j = int(np.argmax(np.abs(h)))
            sgn = 1.0 if h[j] > 0 else -1.0
            a_j = _columns(op, np.array([j]))[:, 0]
            dvec = sgn * scipy.linalg.solve_triangular(R, Q.T @ a_j, check_finite=False)
            with np.errstate(divide="ignore", invalid="ignore"):
                t = np.where(dvec * c > 0, c / dvec, np.inf)
            k = int(np.argmin(t))
            if not np.isfinite(t[k]):
                return None
            S = np.concatenate([np.delete(S, k), [j]])
            z = np.concatenate([np.delete(z, k), [sgn]])
            order = np.argsort(S)
            S, z = S[order], z[order]
            continue
        coef = np.zeros(n, dtype=y.dtype)
        coef[S] = c
        rnorm = float(np.linalg.norm(r))
        l1 = _l1(c)
        scale = max(1.0, hmax, float(hS.max()))
        if single:
            f = 0.5 * rnorm**2
            gap = abs(2.0 * f - _vdot(r, y) + tau * lam * scale) / max(1.0, f)
            if l1 > tau * (1 + 1e-12) + 1e-300 or gap > tol:
                return None
            return L1Result(coef, rnorm, l1, float(gap), 0, 0, float(tau), "polished")
        if rnorm > sigma * (1.0 + FEAS_TOL) + BP_TOL * ynorm:
            return None
        dual = (_vdot(y, w) - sigma * float(np.linalg.norm(w))) / scale
        gap = (l1 - dual) / max(l1, 1e-300)
        if gap > tol:
            return None
        return L1Result(coef, rnorm, l1, float(gap), 0, 0, l1, "polished")
    return None


def _grow(S, z, h, level, m):
    """Add the off-support columns with the largest ``|h_j|`` (above ``level``) to ``S``."""
    h = h.copy()
    h[S] = 0.0
    a = np.abs(h)
    cand = np.flatnonzero(a > (0.0 if level == np.inf else level))
    k = min(cand.size, m - S.size, max(5, S.size // 5))
    if k <= 0:
        return S, z
    add = cand[np.argpartition(-a[cand], k - 1)[:k]]
    S2 = np.concatenate([S, add])
    z2 = np.concatenate([z, h[add] / a[add]])
    order = np.argsort(S2)
    return S2[order], z2[order]


# =========================================================================
# numba kernels
# =========================================================================
@njit(cache=True)
def _l1_threshold(a, tau):  # pragma: no cover - jitted
    r"""Threshold :math:`\theta` of the projection of ``a >= 0`` onto the simplex.

    The simplex is :math:`\{x \ge 0 : \sum_i x_i = \tau\}`.

    Condat (2016), Fig. 2: one pass keeps a running estimate
    :math:`\rho` of :math:`\theta` over a candidate set ``v`` (entries that
    can still be above the threshold), a second pass re-admits skipped
    entries, and a final loop removes entries below :math:`\rho` until none
    changes.  Expected :math:`O(N)`.  The caller ensures
    :math:`\sum_i a_i > \tau` (otherwise no shrinking is needed); the result
    is clipped at 0.
    """
    n = a.size
    v = np.empty(n)
    vt = np.empty(n)
    v[0] = a[0]
    nv = 1
    nvt = 0
    rho = a[0] - tau
    for i in range(1, n):
        yi = a[i]
        if yi > rho:
            rho += (yi - rho) / (nv + 1)
            if rho > yi - tau:
                v[nv] = yi
                nv += 1
            else:
                for k in range(nv):
                    vt[nvt] = v[k]
                    nvt += 1
                v[0] = yi
                nv = 1
                rho = yi - tau
    for k in range(nvt):
        yk = vt[k]
        if yk > rho:
            v[nv] = yk
            nv += 1
            rho += (yk - rho) / nv
    while True:
        size = nv
        j = 0
        for k in range(nv):
            yk = v[k]
            if yk > rho:
                v[j] = yk
                j += 1
            else:
                size -= 1
                if size > 0:
                    rho += (rho - yk) / size
        if j == nv:
            break
        nv = j
    return max(rho, 0.0)


@njit(cache=True)
def _shrink_real(x, theta, out):  # pragma: no cover - jitted
    r"""Soft thresholding :math:`\operatorname{sign}(x) \max(|x| - \theta, 0)` into ``out``."""
    for i in range(x.size):
        xi = x[i]
        if xi > theta:
            out[i] = xi - theta
        elif xi < -theta:
            out[i] = xi + theta
        else:
            out[i] = 0.0


@njit(cache=True)
def _shrink_complex(x, mod, theta, out):  # pragma: no cover - jitted
    r"""Complex soft thresholding :math:`x \max(|x| - \theta, 0) / |x|` (``mod = |x|``)."""
    for i in range(x.size):
        mi = mod[i]
        if mi > theta:
            out[i] = x[i] * ((mi - theta) / mi)
        else:
            out[i] = 0.0
