r"""The solve driver behind :mod:`rflite.bp`: certified methods first, SPGL1 last.

Private module: :func:`rflite.bp.bpdn` and friends dispatch here
(:func:`_solve_path`) after the large-basis-pursuit LP route; this module
holds the path driver that tries the exact homotopy
(:mod:`rflite._bp.homotopy`), the small-LP route (:mod:`rflite._bp.lp`) and
the barrier method (:mod:`rflite._bp.socp`, :mod:`rflite._bp.continuation`)
before SPGL1's root finding (:mod:`rflite._bp.spg`: the loop, the
active-set polish and the l1-ball projection), and the certificates of
their points.  The solver constants and :class:`L1Result` are in
:mod:`rflite._bp.result` (imported here; re-exported by :mod:`rflite.bp`).
See the notes of :mod:`rflite.bp` for the maths and the references.
"""

from __future__ import annotations

import math

import numpy as np

from rflite._bp.homotopy import _columns, _homotopy_ws, _Products
from rflite._bp import lp as _lp
from rflite._bp.lp import _bp_linprog
from rflite._bp.nnls import _nnls_bpdn
from rflite._bp.result import (  # noqa: F401 - the constants and the result type, importable here
    BP_TOL,
    CERTIFIED,
    DEC_TOL,
    FEAS_TOL,
    GAMMA,
    HOMOTOPY_STEPS,
    LS_GRAM_MAX,
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
    _l1,
    _vdot,
)
from rflite._bp.continuation import _continuation
from rflite._bp.socp import _checked, _kkt_newton, _socp_bpdn  # noqa: F401
from rflite._bp.spg import (  # noqa: F401 - the SPG loop, its polish and the projection
    _grow,
    _l1_threshold,
    _polish,
    _project,
    _shrink_complex,
    _shrink_real,
    _spg_step,
    _spgl1,
    _spgl1_test,
)
from rflite._core.linalg import min_norm_solve, shifted_eigenvalues  # noqa: F401
from rflite._core.memory import check_memory


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
        # LAPACK's gelsd overwrites its input: the solve copies A
        check_memory(op.shape, op.dtype, "the least-squares copy of the feature matrix",
                     "pass a larger eta (sigma) or matrix_free=True")
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


def _solve_path(op, y, cplx, *, sigma, tau, tol, max_iter, x0, polish,
                method, resume=None) -> L1Result:
    """SPGL1 root finding (``tau is None``) or a single LASSO (``tau`` given).

    The steps: the trivial answers (:func:`_trivial_result`), the certified
    starts -- the barrier and the continuation path for complex BPDN
    (:func:`_complex_start`), the homotopy and its certified fallbacks for
    real data (:func:`_real_start`) -- then SPGL1 from the best point found
    (:func:`_spgl1`), whose result is compared with that point
    (:func:`_best_of`).

    ``resume``: a :class:`rflite._bp.continuation.PathPoint` shared by the solves of
    a decreasing ``sigma`` grid (complex BPDN's continuation resumes there).
    """
    P = _Products(op, cplx)
    single = tau is not None
    ynorm = float(np.linalg.norm(y))
    feas = sigma * (1.0 + FEAS_TOL) + BP_TOL * ynorm
    trivial, ls, h_y = _trivial_result(P, op, y, cplx, sigma, tau, ynorm, feas)
    if trivial is not None:
        return trivial
    n_hom = 0
    best_hom = None
    dual_lb = -math.inf  # best dual objective seen (a lower bound on the optimal l1)
    if cplx and not single and method == "auto" and x0 is None:
        start = _complex_start(P, op, y, sigma, tol, feas, h_y, resume)
        if isinstance(start, L1Result):
            return start
        if start is not None:
            x0, best_hom, dual_lb = start
    if method == "homotopy" or (method == "auto" and not cplx and x0 is None):
        if cplx:
            raise ValueError("method='homotopy' needs real A and y; use method='spgl1'")
        start = _real_start(P, op, y, sigma, tau, tol, feas, ls, ynorm, method)
        if isinstance(start, L1Result):
            return start
        x0, best_hom, n_hom, dual_lb = start
    res, it, stop = _spgl1(P, op, y, x0, sigma=sigma, tau=tau, tol=tol, max_iter=max_iter,
                           polish=polish, cplx=cplx, ynorm=ynorm)
    if stop is None:  # polished
        return res
    res = res._replace(n_iter=it + n_hom)
    if best_hom is not None:
        res = _best_of(res, best_hom, single, feas, tol, stop, it + n_hom, P.count)
    if not single and res.residual_norm <= feas and res.l1_norm > 0 and dual_lb > -math.inf:
        # any dual feasible point bounds the optimum: the barrier's may be the best
        gap_lb = (res.l1_norm - dual_lb) / res.l1_norm
        if gap_lb < res.duality_gap:
            res = res._replace(duality_gap=float(gap_lb),
                               stop_reason="optimal" if gap_lb <= tol else res.stop_reason)
    return res


def _trivial_result(P, op, y, cplx, sigma, tau, ynorm, feas):
    """``(result, ls, h_y)``: the answer when it needs no solve (``c = 0``, or the
    least-squares fit when sigma is unreachable), else None, with the
    least-squares point ``ls`` of a tall problem and the complex barrier's
    first product ``h_y = A^* y`` when they were computed."""
    m, n = op.shape
    single = tau is not None
    zero = np.zeros(n, dtype=np.complex128 if cplx else np.float64)
    if ynorm == 0.0 or (not single and sigma >= ynorm) or (single and tau == 0.0):
        return (L1Result(zero, ynorm, 0.0, 0.0, 0, 0, 0.0 if not single else tau,
                         "zero_solution"), None, None)
    ls = None
    if not single and m > n:
        # More rows than columns: whether sigma is reachable at all is decided
        # up front by the least-squares residual (one dense solve, O(m n^2),
        # or one Gram pass of an operator), instead of after a path that
        # ends dense at lambda = 0
        ls = _ls_point(op, P, y)
        if ls is not None and ls[1] > feas:
            c_ls = np.asarray(ls[0], dtype=zero.dtype)
            n_prod = 2 if isinstance(op, np.ndarray) else P.count
            return (L1Result(c_ls, ls[1], _l1(c_ls), math.inf, 0, n_prod, _l1(c_ls),
                             "sigma_unreachable"), ls, None)
    h_y = P.AH(y) if cplx and not single else None  # (the barrier's first product)
    if h_y is not None and float(np.abs(h_y).max(initial=0.0)) == 0.0:
        # y orthogonal to every column: c = 0 is a least-squares solution and
        # ||y|| > sigma its residual (the barrier would divide by A^* y = 0;
        # the real path reaches the same verdict through _certify)
        if ynorm <= feas:
            return L1Result(zero, ynorm, 0.0, 0.0, 0, P.count, 0.0, "zero_solution"), ls, h_y
        return (L1Result(zero, ynorm, 0.0, math.inf, 0, P.count, 0.0, "sigma_unreachable"),
                ls, h_y)
    return None, ls, h_y


def _complex_start(P, op, y, sigma, tol, feas, h_y, resume):
    """Complex BPDN by the dual barrier and the continuation path.

    A certified :class:`L1Result` (or, on a ``resume`` grid, the best point
    uncertified), else ``(x0, best_hom, dual_lb)``: SPGL1's start, the point
    to compare its result with and the best dual bound; None when neither
    method gave a point.
    """
    # complex BPDN is a second-order cone program: the dual barrier
    # method certifies it (SPGL1's root test stopped at gaps ~1e-3 and
    # its iterations at max_iter on complex exponential features)
    dual_lb = -math.inf
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
    if not cands:
        return None
    best = min(cands, key=lambda res: res.duality_gap)
    if resume is not None:
        # a grid point neither the path nor the barrier certifies is
        # scored at their best point: SPGL1's last resort can spend
        # 1,000 products there without closing the gap, a minute a
        # fold with a Dask operator
        return best._replace(stop_reason="max_iter", n_products=P.count)
    return best.coef, best._replace(stop_reason="max_iter"), dual_lb


def _real_start(P, op, y, sigma, tau, tol, feas, ls, ynorm, method):
    """Real data: the homotopy, then the small LP, the LASSO root search and the
    barrier where the homotopy cannot certify its end point.

    A certified :class:`L1Result` (or the uncertified end point for
    ``method="homotopy"``), else ``(x0, best_hom, n_hom, dual_lb)`` for SPGL1.
    """
    m, n = op.shape
    single = tau is not None
    dual_lb = -math.inf
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
            and m * n <= _lp.LP_MAX_ENTRIES):
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
        # path's support solves (SHRIMP f1 / f2, 126 x 20,000).  Wide
        # dictionaries only: its working sets are dense m x |J| blocks (a
        # tall Dask operator's would be gathered on the client)
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
        # condition ~1e13), or gives SPGL1 a far better start
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
    return coef, hom, n_hom, dual_lb


def _best_of(res, best_hom, single, feas, tol, stop, n_iter, n_products):
    """SPGL1's result, or the homotopy's end point when that is at least as good:
    feasible with no larger objective (LASSO: no larger residual; an
    infeasible BPDN point only against another infeasible one, by residual)."""
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
        return best_hom._replace(n_iter=n_iter, n_products=n_products, stop_reason=stop)
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


# =========================================================================
# numba kernels
# =========================================================================


