r"""SPGL1's spectral projected-gradient loop, its support polish and the l1-ball projection.

Private module of :mod:`rflite.bp`: :func:`rflite._bp.spgl1._solve_path`
runs :func:`_spgl1` from the best point its certified methods found.  The
loop alternates SPGL1's stopping test and Newton update of the l1 radius
(:func:`_spgl1_test`) with one spectral projected-gradient step
(:func:`_spg_step`), and tries the exact polish (:func:`_polish`) on a
stable support; :func:`_project` is Condat's projection onto the l1 ball,
in numba kernels.

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

import numpy as np
import scipy.linalg
from numba import njit

from rflite._bp.homotopy import _columns
from rflite._bp.result import (
    BP_TOL,
    DEC_TOL,
    FEAS_TOL,
    GAMMA,
    N_PREV,
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
from rflite._bp.socp import _kkt_newton


def _spgl1(P, op, y, x0, *, sigma, tau, tol, max_iter, polish, cplx, ynorm):
    """SPGL1 from ``x0``: spectral projected gradient on the LASSO of radius
    ``tau`` (or, for BPDN, ``‖x0‖_1`` updated by Newton's root finding on the
    Pareto curve), with the support polish.

    Returns ``(result, it, stop)``; ``stop`` is None when a polish certified
    the result (then final), else the stop reason, and the result's
    ``n_iter`` is ``it``.
    """
    n = op.shape[1]
    single = tau is not None
    zero = np.zeros(n, dtype=np.complex128 if cplx else np.float64)
    x = zero if x0 is None else np.asarray(x0, dtype=zero.dtype)
    if not single:
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
                    return cand._replace(n_iter=it, n_products=P.count), it, None
                patience *= 2
            next_polish = 2 * max(it, POLISH_EVERY)

        stop, gap, x, r, g, f, tau = _spgl1_test(P, y, x, r, g, f, fold, tau, last_fv,
                                                 sigma=sigma, tol=tol, single=single,
                                                 cplx=cplx, ynorm=ynorm)
        if stop is None and it >= max_iter:
            stop = "max_iter"
        if stop is None and line_errors > 10:
            stop = "line_search"
        if stop is not None:
            break

        # -- one spectral projected-gradient step ---------------------------
        it += 1
        xold, gold, fold = x, g, f
        ok, x, r, f = _spg_step(P, y, x, r, g, f, gstep, tau, float(last_fv.max()))
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
            return cand._replace(n_iter=it, n_products=P.count), it, None
    if not single and stop != "optimal":
        gnorm = float(np.abs(g).max())
        rn = math.sqrt(2.0 * f)
        feasible = rn <= sigma * (1.0 + FEAS_TOL) + BP_TOL * ynorm
        gap = _bpdn_gap(y, r, gnorm, _l1(x), sigma) if feasible else math.inf
    return (L1Result(x, math.sqrt(2.0 * f), _l1(x), float(gap), it, P.count, float(tau), stop),
            it, stop)


def _spgl1_test(P, y, x, r, g, f, fold, tau, last_fv, *, sigma, tol, single, cplx, ynorm):
    """SPGL1's stopping test at the current iterate, and for BPDN the Newton update
    of ``tau`` on the Pareto curve (which moves the iterate and resets
    ``last_fv`` in place).  Returns ``(stop, gap, x, r, g, f, tau)``."""
    stop = None
    gap = math.inf
    gnorm = float(np.abs(g).max())
    rnorm = math.sqrt(2.0 * f)
    lgap = 2.0 * f - _vdot(r, y) + tau * gnorm  # LASSO gap, SPGL1's `gap`
    rgap = abs(lgap) / max(1.0, f)
    aerr1 = rnorm - sigma
    rerr1 = abs(aerr1) / max(1.0, rnorm)
    rerr2 = abs(f - 0.5 * sigma**2) / max(1.0, f)
    if single:
        gap = rgap
        if rgap <= tol:
            stop = "optimal"
        elif rnorm < tol * ynorm:
            # (almost) interpolation: the dual point 0 bounds the optimum
            # below by 0, a gap of f itself; certified only when that is
            # within tol
            gap = min(rgap, f / max(1.0, f))
            stop = "optimal" if gap <= tol else "bp_solution"
        return stop, gap, x, r, g, f, tau
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
    return stop, gap, x, r, g, f, tau


def _spg_step(P, y, x, r, g, f, gstep, tau, fmax):
    """One spectral projected-gradient step with SPGL1's non-monotone line search:
    along the projected direction (one product with ``A``), else the projected
    arc (SPG2, one product per trial).  Returns ``(ok, x, r, f)``."""
    d = _project(x - gstep * g, tau) - x
    gtd = _vdot(g, d)
    if gtd < 0:
        Ad = P.A(d)
        step = 1.0
        for _ in range(10):
            r_new = r - step * Ad  # r = y - A x
            f_new = 0.5 * _vdot(r_new, r_new)
            if f_new < fmax + GAMMA * step * gtd:
                return True, x + step * d, r_new, f_new
            if step <= 0.1:
                step *= 0.5
            else:
                tmp = -gtd * step**2 / (2.0 * (f_new - f - step * gtd))
                step = tmp if 0.1 <= tmp <= 0.9 * step else 0.5 * step
    step = 1.0
    for _ in range(10):
        x_new = _project(x - step * gstep * g, tau)
        r_new = y - P.A(x_new)
        f_new = 0.5 * _vdot(r_new, r_new)
        if f_new < fmax + GAMMA * _vdot(g, x_new - x):
            return True, x_new, r_new, f_new
        step *= 0.5
    return False, x, r, f


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


def _warmup():
    """Compile the l1-ball projection kernels (real and complex iterates)."""
    x = np.array([1.0, -2.0])
    _shrink_real(x, _l1_threshold(np.abs(x), 1.0), np.empty(2))
    xc = x + 0.5j
    _shrink_complex(xc, np.abs(xc), 0.5, np.empty(2, dtype=np.complex128))
