r"""Complex BPDN / basis pursuit by a dual log-barrier Newton method (certified).

Private module behind :func:`rflite.bp.bpdn` for complex data.  For complex
coefficients the l1 norm :math:`\sum_j |c_j|` (moduli) is a group norm over
the pairs :math:`(\mathrm{Re}\,c_j, \mathrm{Im}\,c_j)`, so

.. math::

    \min_c \sum_j |c_j| \quad \text{s.t.} \quad \|A c - y\|_2 \le \sigma

is a second-order cone program, not a linear program, and neither the LASSO
homotopy nor HiGHS applies.  Its dual,

.. math::

    \max_z \; D(z) = \mathrm{Re}\, y^* z - \sigma \|z\|_2
    \quad \text{s.t.} \quad |a_j^* z| \le 1 \;\; (j = 1..N),

lives in :math:`\mathbb{C}^m` (``2m`` reals, ``m`` small on random-feature
problems) with one 3-dimensional cone per column.  It is solved by the
barrier method (Boyd and Vandenberghe, Convex Optimization, Sec. 11.3):
Newton's method on

.. math::

    F_t(z) = t\,(\sigma\|z\| - \mathrm{Re}\, y^* z) - \sum_j \log(1 - |a_j^* z|^2)

for increasing ``t``, each Newton system ``2m x 2m`` (the Hessian
:math:`G W G^T` of the barrier, formed once per step with one BLAS product).
At a minimiser of :math:`F_t` the stationarity condition reads

.. math::

    A c(z) = y - \sigma z / \|z\|, \qquad c_j(z) = \frac{2\, a_j^* z}{t (1 - |a_j^* z|^2)},

so :math:`c(z)` is a primal point with :math:`\|A c - y\| = \sigma` exactly
and :math:`\|c\|_1 - D(z) = \sum_j |c_j| (1 - |a_j^* z|) \le N / t`
(the barrier's central path).  Away from the exact minimiser, the primal
point is made feasible by a minimum-norm correction on its support, and the
gap is then computed, as everywhere in :mod:`rflite.bp`, from the returned
feasible point and the dual point :math:`z / \max(1, \|A^* z\|_\infty)`
over the **whole** dictionary: a certificate that does not trust the solver.

Real data use the same method on the real dual (:math:`z \in \mathbb{R}^m`,
one 1-D cone :math:`|a_j^T z| \le 1` per column) as the second fallback of
the LASSO homotopy (``rflite._bp.spgl1._solve_path``; the first is the
LASSO root search of :mod:`rflite._bp.nnls`), with one more kind of
primal point: sign-constrained least squares on the columns the dual point
makes active (:func:`_active_nnls`).  On the numerically rank-deficient
q = 1 dictionaries of SHRIMP's f1 (126 x 20,000, condition ~1e13) the
barrier's dual is accurate but the central-path primal point, made
feasible, is not (gap 2e-5 at a dual value correct to 1e-8); the
least-squares points certify it (gaps 4e-9 .. 3e-7).  What can stop
these problems at gaps 5e-3 .. 2e-2 is the column generation: with
``2 m`` columns added per round the dual still violates columns of the
whole dictionary by 0.5-2 % after 20 rounds (``max |A^T z|`` 1.005-1.022;
its scaling alone is that gap); :data:`SOCP_ADD` and :data:`SOCP_ROUNDS`
are sized for them.

Large dictionaries are handled by column generation: the barrier runs on a
working set of columns (largest :math:`|a_j^* y|` first); columns whose dual
constraint the final ``z`` violates are added and the method is warm started
from ``z`` scaled back inside.

Complex data, two finishes (:func:`_kkt_newton`, and
:func:`rflite._bp.continuation._continuation`):
the barrier only has to find the support (it stops at a gap of
:data:`SOCP_REFINE_AT`), then Newton's method on that support's KKT system
gives its exact solution.  Where the barrier stalls (ill-conditioned
dictionaries whose solutions have large l1 norms: the dual optimum lies
far out along directions the barrier barely curves, and Newton steps of
full length stopped reducing the decrement), the solution path is followed
down from :math:`\sigma = \|y\|` instead, one fixed-support KKT system per
piece, columns joining and leaving where the dual conditions say.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import scipy.linalg

from rflite._core.blas import blas_threads

#: Working set used when the dictionary has more than ``SOCP_WS * m`` columns.
SOCP_WS = 6
#: ... or when it has at most this many columns (one round on all of them).
SOCP_FULL = 3000
#: Columns added per column-generation round (``SOCP_ADD * m`` most violated;
#: SHRIMP f1's q = 1 dictionaries need about 8,000 of 20,000 columns).
SOCP_ADD = 4
#: Column-generation rounds.
SOCP_ROUNDS = 40
#: Factor by which ``t`` grows between centring steps.
SOCP_MU = 12.0
#: Newton steps per centring (cap) and in all (cap).
SOCP_NEWTON = 60
SOCP_MAX_NEWTON = 3000
#: Largest barrier parameter (past it the Newton systems are rounding).
SOCP_T_MAX = 1e15
#: The smallest primal entries, together at most ``SOCP_DUST * tol`` of the
#: l1 norm, are set to 0 before the feasibility correction (central-path
#: dust: entries of size ~1/t on every inactive column).
SOCP_DUST = 0.1
#: ... after first trying only the columns with dual slack below these levels.
SOCP_ACTIVE = (1e-6, 1e-4, 1e-2)
#: Real data: primal points by sign-constrained least squares on the columns
#: with ``|a_j^T z| >= 1 - level`` (:func:`_active_nnls`) ...
SOCP_NNLS_ACTIVE = (1e-10, 1e-8, 1e-6, 1e-4)
#: ... fitted to ``y - sigma (1 - shrink) z / ||z||`` (room for the fit's rounding).
SOCP_NNLS_SHRINK = (1e-9, 1e-7)
#: ... on at most this many times ``m`` columns.
SOCP_NNLS_MAX = 20
#: Newton steps of :func:`kkt_newton` (quadratic convergence: 3-5 from a
#: barrier point with gap 1e-8).
KKT_STEPS = 12
#: ... and Newton stops once its scaled KKT residual is below this and two
#: steps in a row have not halved it (quadratic convergence is over: the
#: residual only wanders at its rounding floor, 1e-15 .. 1e-10; without
#: this test most runs of a complex ``SRFECV`` fit spend all 12 steps).
KKT_FLOOR = 1e-10
#: ... or after this many steps in a row that do not halve it at all (outside
#: Newton's basin: the continuation then shortens its step; 36,042 -> 20,233
#: Jacobian solves in that fit, the same choice and coefficients).
KKT_STALL = 4
#: Complex BPDN: the barrier's own gap target is at least this (then
#: :func:`_kkt_newton` on the support).
SOCP_REFINE_AT = 1e-9
#: Complex BPDN: the barrier stops after this many centring steps in a row
#: that spend their Newton budget (a stall: 20-30 s before it gave up, where
#: :func:`rflite._bp.continuation._continuation` certifies in 3.5-7 s).
SOCP_GIVE_UP = 2


def _realify(A):
    """``G = [[Re A, -Im A], [Im A, Re A]]`` (2m x 2N): ``G^T [Re z; Im z] = [Re h; Im h]``, ``h = A^* z``."""
    Ar, Ai = A.real, A.imag
    return np.block([[Ar, -Ai], [Ai, Ar]])


def _fix_feasible(A_S, c_S, y, sigma, feas):
    """Smallest-move correction ``c_S + alpha A_S^+ r`` that brings ``‖y - A_S c_S‖`` to ``<= sigma``.

    ``r = r_par + r_perp`` (range of ``A_S`` and its complement); moving by
    ``alpha A_S^+ r`` leaves ``r_perp + (1 - alpha) r_par``, so the smallest
    ``alpha`` in [0, 1] meeting the bound is a root of a quadratic.  Returns
    ``None`` when even ``alpha = 1`` (least squares on ``S``) is above ``feas``.
    """
    r = y - A_S @ c_S
    rn = float(np.linalg.norm(r))
    if rn <= feas:
        return c_S
    d = np.linalg.lstsq(A_S, r, rcond=None)[0]
    r_par = A_S @ d
    r_perp = r - r_par
    p2 = float(np.vdot(r_perp, r_perp).real)
    q2 = float(np.vdot(r_par, r_par).real)
    target = min(sigma, feas) if sigma > 0 else 0.0
    if p2 > target**2 or q2 == 0.0:
        alpha = 1.0
    else:
        # ||r_perp||^2 + (1 - alpha)^2 ||r_par||^2 = target^2 (cross term ~ 0)
        alpha = 1.0 - math.sqrt(max(target**2 - p2, 0.0) / q2)
    c_new = c_S + alpha * d
    if float(np.linalg.norm(y - A_S @ c_new)) > feas:
        c_new = c_S + d
        if float(np.linalg.norm(y - A_S @ c_new)) > feas:
            return None
    return c_new


def _kkt_newton(A_S, y, c_S, *, sigma=None, tau=None, max_steps=KKT_STEPS):
    r"""Complex BPDN / LASSO solution on a fixed support by Newton's method on its KKT system.

    On a support ``S`` with every :math:`c_j \ne 0` the optimality
    conditions of :math:`\min \sum_j |c_j|` s.t. :math:`\|y - A_S c\| \le
    \sigma` (``sigma`` given) or of the LASSO with :math:`\sum_j |c_j| =
    \tau` (``tau`` given) are the smooth system

    .. math::

        A_S^*(y - A_S c) = \lambda\, c / |c|, \qquad
        \|y - A_S c\|^2 = \sigma^2 \;\; \text{or} \;\; \textstyle\sum_j |c_j| = \tau,

    ``2|S| + 1`` real equations in :math:`(\mathrm{Re}\, c, \mathrm{Im}\, c,
    \lambda)`.  Unlike the real case, the phases make it nonlinear: the
    fixed point :math:`z \leftarrow c / |c|` of :func:`rflite._bp.spgl1._polish`
    diverges on ill-conditioned supports (its phases flipped by ~2 every
    step on a 120 x 200 exponential-feature problem), so a barrier or SPGL1
    point is only ``tol``-accurate.  Newton from such a point converges
    quadratically to the support's exact solution, which makes the result
    independent of the path that found it (a Dask operator and a dense
    matrix give the same point to rounding, not to ``tol``).  The Jacobian is

    .. math::

        \begin{pmatrix} -G^T G - \lambda D & -u \\ \partial_v (\cdot) & 0
        \end{pmatrix}, \quad D = \mathrm{blockdiag}_j \frac{I_2 - u_j u_j^T}{|c_j|},

    with :math:`G` the real form of :math:`A_S` and :math:`u_j` the unit
    vector of :math:`c_j` in :math:`\mathbb{R}^2`; the last row is
    :math:`-2 G^T r` (BPDN) or :math:`u^T` (LASSO).  Returns the refined
    ``c_S`` (the iterate with the smallest scaled KKT residual), or ``None``
    when a coefficient reaches 0 (the support was wrong).  Nothing is
    trusted: callers check feasibility and the duality gap on the whole
    dictionary.
    """
    k = c_S.size
    G = _realify(A_S)
    yv = np.concatenate([y.real, y.imag])
    v = np.concatenate([c_S.real, c_S.imag])
    M = G.T @ G
    best, best_err, lam = None, math.inf, None
    stalled = 0
    for _ in range(max_steps + 1):
        r = yv - G @ v
        g = G.T @ r
        mod = np.hypot(v[:k], v[k:])
        if mod.min() <= 1e-14 * mod.max():
            return best
        u = v / np.concatenate([mod, mod])
        if lam is None:  # least-squares multiplier of the first point
            lam = float(u @ g) / k
        F = np.empty(2 * k + 1)
        F[:2 * k] = g - lam * u
        F[2 * k] = (r @ r - sigma**2) if tau is None else (mod.sum() - tau)
        # scale of each block: the rounding floor of g and of the constraint
        err = float(np.abs(F[:2 * k]).max()) / max(float(np.abs(g).max()), 1e-300)
        err = max(err, abs(F[2 * k]) / max(float(r @ r) if tau is None else tau, 1e-300))
        stalled = stalled + 1 if not err < 0.5 * best_err else 0
        if err < best_err:
            best, best_err = v[:k] + 1j * v[k:], err
        elif err > 4.0 * best_err:
            break  # at the rounding floor (or diverging): keep the best
        if err <= 1e-15 or (best_err <= KKT_FLOOR and stalled >= 2):
            break
        if stalled >= KKT_STALL:
            break  # not contracting: outside Newton's basin, the caller shortens the step
        d = _kkt_solve(M, u, mod, g, lam, -F, tau)
        if d is None:
            break
        v = v + d[:2 * k]
        lam += float(d[2 * k])
    return best


def _kkt_solve(M, u, mod, g, lam, rhs, tau=None):
    r"""Solve :math:`J d = ` ``rhs`` with :func:`_kkt_newton`'s Jacobian at one point.

    ``M`` :math:`= G^T G`, ``u`` the unit vectors of the coefficients (real
    parts, then imaginary), ``mod`` their moduli, ``g`` :math:`= G^T r`.
    Returns ``None`` when the solve fails or is not finite.
    """
    k = mod.size
    jj = np.arange(k)
    J = np.zeros((2 * k + 1, 2 * k + 1))
    J[:2 * k, :2 * k] = -M
    ur, ui = u[:k], u[k:]
    J[jj, jj] -= lam * (1.0 - ur * ur) / mod
    J[jj + k, jj + k] -= lam * (1.0 - ui * ui) / mod
    J[jj, jj + k] += lam * ur * ui / mod
    J[jj + k, jj] += lam * ur * ui / mod
    J[:2 * k, 2 * k] = -u
    J[2 * k, :2 * k] = -2.0 * g if tau is None else u
    try:
        with warnings.catch_warnings():
            # an ill-conditioned J still gives a usable step; the callers
            # judge the result (Newton by its KKT residual)
            warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
            d = scipy.linalg.solve(J, rhs, check_finite=False)
    except (np.linalg.LinAlgError, ValueError):
        return None
    return d if np.all(np.isfinite(d)) else None


def _kkt_tangent(A_S, y, c_S, sigma):
    r"""Tangent :math:`dc/d\sigma` of the support's BPDN solution path at ``c_S``.

    ``c_S`` solves the KKT system :math:`F(c, \lambda; \sigma) = 0` of
    :func:`_kkt_newton` on a fixed support; only its last equation,
    :math:`\|y - A_S c\|^2 - \sigma^2`, depends on :math:`\sigma`, so
    differentiating gives :math:`J\,(dc, d\lambda)/d\sigma = (0, \dots, 0,
    2\sigma)` with the same Jacobian (Allgower and Georg, *Introduction to
    Numerical Continuation Methods*, SIAM 2003, Ch. 2: the Euler predictor).
    Returns the complex k-vector, or ``None`` when the solve fails.
    """
    k = c_S.size
    G = _realify(A_S)
    v = np.concatenate([c_S.real, c_S.imag])
    g = G.T @ (np.concatenate([y.real, y.imag]) - G @ v)
    mod = np.hypot(v[:k], v[k:])
    if not mod.min() > 0.0:
        return None
    u = v / np.concatenate([mod, mod])
    rhs = np.zeros(2 * k + 1)
    rhs[2 * k] = 2.0 * sigma
    d = _kkt_solve(G.T @ G, u, mod, g, float(u @ g) / k, rhs)
    return None if d is None else d[:k] + 1j * d[k:2 * k]


def _active_nnls(A_W, y, z, h, sigma):
    r"""Real primal points from a near-optimal dual point ``z``: sign-constrained least squares.

    At a solution, :math:`y - Ac^\star = \sigma z^\star/\|z^\star\|` and
    :math:`c^\star_j \ne 0` only where :math:`a_j^T z^\star = \pm 1`, with
    that sign.  So, for ``z`` close to :math:`z^\star`, any ``c`` supported on
    :math:`J = \{j : |a_j^T z| \ge 1 - \delta\}`, with
    :math:`\mathrm{sign}(c_j) = \mathrm{sign}(a_j^T z)` and
    :math:`A_J c_J = b = y - \sigma (1 - \epsilon) z/\|z\|`, is feasible
    and has

    .. math::

        \|c\|_1 = \sum_{j \in J} \frac{a_j^T z}{|a_j^T z|}\, c_j
        \le \frac{z^T b}{1 - \delta}
        = \frac{y^T z - \sigma (1 - \epsilon)\|z\|}{1 - \delta},

    within about :math:`\delta + \epsilon\sigma\|z\|/D(z)` of the dual value
    :math:`D(z)`.  Finding such a ``c`` is the non-negative least-squares
    problem :math:`\min_{x \ge 0} \|A_J \mathrm{diag}(s_J)\, x - b\|`
    (Lawson-Hanson, :func:`scipy.optimize.nnls`): small (``m x |J|``) and,
    unlike the homotopy's support solves, indifferent to the thousands of
    numerically duplicate columns of q = 1 dictionaries, since it needs no
    unique solution (SHRIMP f1, 126 x 20,000, condition ~2e12: gap 2e-9 where
    the central-path point made feasible stopped at 2e-5).  Nothing here is
    trusted: the caller computes each point's residual and gap on the whole
    dictionary.

    Yields ``(sel, c_sel)``: a boolean mask of ``A_W``'s columns and the
    coefficients on them, for every level in :data:`SOCP_NNLS_ACTIVE` and
    shrink in :data:`SOCP_NNLS_SHRINK` that gives a new, small enough ``J``.
    """
    from scipy.optimize import nnls

    m = A_W.shape[0]
    zn = float(np.linalg.norm(z))
    if zn == 0.0:
        return
    last = -1
    for level in SOCP_NNLS_ACTIVE:
        sel = np.abs(h) >= 1.0 - level
        k = int(sel.sum())
        if k == last or k == 0:
            continue
        if k > SOCP_NNLS_MAX * m:
            break
        last = k
        sgn = np.sign(h[sel])
        B = A_W[:, sel] * sgn
        for shrink in SOCP_NNLS_SHRINK:
            b = y - (sigma * (1.0 - shrink) / zn) * z
            try:
                x = nnls(B, b, maxiter=50 * k)[0]
            except RuntimeError:  # iteration cap: no point from this level
                continue
            yield sel, sgn * x


def _barrier(A, y, sigma, z, t, tol, n_newton, outside=None, give_up=None):
    r"""Barrier method on the columns ``A`` (m x k, complex) from strictly feasible ``z``.

    Runs centring steps with ``t`` growing by :data:`SOCP_MU` until the
    central-path gap bound ``2 k / t`` is below ``tol * l1`` (``l1`` from the
    current primal point) or the Newton budget is spent, or, after a centring
    step, ``outside(z)`` says columns outside ``A`` violate their dual
    constraint (then the caller grows the working set before going further).
    ``give_up``: stop, reporting a stall, after that many centring steps in a
    row that used their whole Newton budget.  Returns ``(z, t, c, n_newton,
    stalled)``, ``c = c(z)`` the central-path primal point.
    """
    m, k = A.shape
    real = not np.iscomplexobj(A) and not np.iscomplexobj(y)
    if real:  # real data: a real dual point, one 1-D cone |a_j^T z| <= 1 per column
        G, yv, x, AH = A, y, z.real.copy(), A.T
    else:
        G = _realify(A)
        yv = np.concatenate([y.real, y.imag])
        x = np.concatenate([z.real, z.imag])
        AH = A.conj().T
    eye = np.eye(x.size)

    def hvals(x):
        return AH @ (x if real else x[:m] + 1j * x[m:])

    def dF(x, dxs, h, hn, t):
        """``F_t(x + dxs) - F_t(x)`` without cancellation (F itself is ~t |D|)."""
        s0 = 1.0 - (h.real**2 + h.imag**2)
        s1 = 1.0 - (hn.real**2 + hn.imag**2)
        if s1.min() <= 0.0:
            return math.inf
        lin = -float(yv @ dxs)
        if sigma > 0:
            xn = float(np.linalg.norm(x))
            x1 = x + dxs
            # ||x1|| - ||x|| = (||x1||^2 - ||x||^2) / (||x1|| + ||x||)
            lin += sigma * float(dxs @ (x + x1)) / (float(np.linalg.norm(x1)) + xn)
        return t * lin - float(np.log1p((s1 - s0) / s0).sum())

    h = hvals(x)
    c = None
    stalled = False
    uncentred = 0
    while n_newton < SOCP_MAX_NEWTON and not stalled:
        centred = False
        for _ in range(SOCP_NEWTON):
            s = 1.0 - (h.real**2 + h.imag**2)
            d = 2.0 / s
            xn = float(np.linalg.norm(x))
            if real:
                # phi(h) = -log(1 - h^2): phi' = 2h / s, phi'' = 2 (1 + h^2) / s^2
                g = t * (sigma * x / xn - yv) + G @ (d * h)
                Gs = G * np.sqrt(d * (1.0 + h * h) / s)
                H = Gs @ Gs.T
            else:
                gv = np.concatenate([d * h.real, d * h.imag])
                g = t * (sigma * x / xn - yv) + G @ gv
                Gs = G * np.sqrt(np.concatenate([d, d]))
                V = G[:, :k] * (d * h.real) + G[:, k:] * (d * h.imag)
                H = Gs @ Gs.T + V @ V.T
            if sigma > 0:
                H += (t * sigma / xn) * (eye - np.outer(x, x) / xn**2)
            # no ridge: the barrier's curvature spans 1e0..1e20 at large t
            # (terms 1/s_j^2), and any ridge scaled to the trace swamps the
            # directions only the objective curves (with one, the dual stalls
            # about 1e-6 short of the optimum)
            try:
                cf = scipy.linalg.cho_factor(H, check_finite=False)
                dx = -scipy.linalg.cho_solve(cf, g, check_finite=False)
            except (np.linalg.LinAlgError, ValueError):
                ev, U = np.linalg.eigh(H)
                keep = ev > 1e-15 * ev.max()
                dx = -(U[:, keep] @ ((U[:, keep].T @ g) / ev[keep]))
            n_newton += 1
            dec = -float(g @ dx)
            if not math.isfinite(dec) or dec <= 0.0 or dec / 2.0 <= 1e-12:
                centred = True
                break  # centred (Newton decrement at rounding level)
            dh = hvals(dx)
            # largest step keeping every |h_j + s dh_j| < 1
            a2 = dh.real**2 + dh.imag**2
            b = h.real * dh.real + h.imag * dh.imag
            c2 = h.real**2 + h.imag**2 - 1.0
            with np.errstate(divide="ignore", invalid="ignore"):
                root = np.where(a2 > 0, (-b + np.sqrt(b * b - a2 * c2)) / a2, np.inf)
            step = min(1.0, 0.99 * float(root.min()))
            while step > 1e-12:
                hn = h + step * dh
                if dF(x, step * dx, h, hn, t) <= -0.25 * step * dec:
                    break
                step *= 0.5
            else:
                # no decrease: rounding, not a lack of centring, unless the
                # decrement says the point is far from the central path
                stalled = dec > 1e-6
                break
            x = x + step * dx
            h = hn
        s = 1.0 - (h.real**2 + h.imag**2)
        c = 2.0 * h / (t * s)
        l1 = float(np.abs(c).sum())
        uncentred = 0 if centred else uncentred + 1
        if give_up is not None and uncentred >= give_up:
            stalled = "gave_up"  # truthy, and tells the caller why
            break
        if 2.0 * k / t <= 0.1 * tol * max(l1, 1e-300) or t > SOCP_T_MAX:
            break
        if outside is not None and outside(x if real else x[:m] + 1j * x[m:]):
            break
        t *= SOCP_MU
    return (x if real else x[:m] + 1j * x[m:]), t, c, n_newton, stalled


def _candidates(A_W, y, z, h_W, c_W, slack, keep, sigma, feas):
    """Primal points on the working set, sparsest and most promising first.

    Real data: :func:`_active_nnls` from the dual point; then (both kinds)
    the central-path point ``c_W`` restricted to the columns whose dual slack
    is below each of :data:`SOCP_ACTIVE`, to ``keep`` (dust dropped) and to
    all columns, each made feasible by :func:`_fix_feasible`.  Yields
    ``(sel, c_sel)``.
    """
    if not np.iscomplexobj(A_W) and not np.iscomplexobj(y):
        yield from _active_nnls(A_W, y, z.real, h_W.real, sigma)
    for sel in [slack < lev for lev in SOCP_ACTIVE] + [keep, np.ones(c_W.size, dtype=bool)]:
        if not sel.any():
            continue
        c_S = _fix_feasible(A_W[:, sel], c_W[sel], y, sigma, feas)
        if c_S is not None:
            yield sel, c_S


def _socp_bpdn(P, op, y, *, sigma, tol, feas, columns, h_full=None, patient=False,
               info=None):
    """Certified complex BPDN (``sigma >= 0``) by the dual barrier method with column generation.

    ``h_full`` is :math:`A^* y` when the caller has it (not recomputed).
    Complex data: the barrier stops at :data:`SOCP_GIVE_UP` uncentred
    steps in a row (for :func:`rflite._bp.continuation._continuation` to take over) unless
    ``patient``; ``info["gave_up"]`` (a dict, if given) says whether it did.
    Returns ``(coef, rnorm, l1, gap, rounds, newton)`` for the best feasible
    point found (``gap`` its relative duality gap on the whole dictionary),
    or ``None`` when no feasible point came out.
    """
    m, n = op.shape
    dtype = y.dtype
    ynorm = float(np.linalg.norm(y))
    if h_full is None:
        h_full = P.AH(y)
    if n <= max(2 * SOCP_WS * m, SOCP_FULL):
        W = np.arange(n)
    else:
        W = np.sort(np.argpartition(-np.abs(h_full), SOCP_WS * m - 1)[:SOCP_WS * m])
    z = 0.5 * y / float(np.abs(h_full).max())
    t = None
    grown = True
    refine = np.iscomplexobj(y) and sigma > 0
    # complex: the barrier only has to find the support, Newton on its KKT
    # system does the rest (pushing t towards a gap of 1e-12 degraded the
    # candidates: gap 0.03 where 1e-9 and Newton give 5e-15)
    target = max(tol, SOCP_REFINE_AT) if refine else tol
    best = None
    refined_from = None
    newton = 0

    def _violated(zz):
        """Whether a column outside the working set clearly violates ``|a_j^* z| <= 1``."""
        hz = np.abs(P.AH(zz))
        hz[W] = 0.0
        return float(hz.max()) > 1.0 + 1e-2

    for rnd in range(SOCP_ROUNDS):
        A_W = np.asarray(columns(op, W), dtype=dtype)
        hz = A_W.conj().T @ z
        hmax = float(np.abs(hz).max())
        if hmax >= 0.9:
            z = z * (0.9 / hmax)
        if t is None:
            # balance objective and barrier: t ~ (barrier parameter) / (gap guess)
            dual0 = float(np.vdot(y, z).real) - sigma * float(np.linalg.norm(z))
            t = 2.0 * W.size / max(abs(dual0), 1e-3 * ynorm / max(1.0, float(np.abs(h_full).max())))
        elif grown:
            t = max(t / 1e3, 1.0)
        else:  # same columns, gap still above tol: push further along the path
            t *= SOCP_MU
            target *= 0.1
        with blas_threads(1):  # many small products: threads only thrash
            z, t, c_W, newton, stalled = _barrier(
                A_W, y, sigma, z, t, target, newton,
                outside=None if W.size == n else _violated,
                give_up=SOCP_GIVE_UP if refine and not patient else None)
        if stalled == "gave_up" and info is not None:
            info["gave_up"] = True
        # primal points: the central-path point with its dust (entries whose
        # total l1 is below SOCP_DUST * tol * l1) dropped, else all of it;
        # each made feasible on its support, the one with the smaller gap kept
        hz_full = P.AH(z)
        scale = max(1.0, float(np.abs(hz_full).max()))
        dual = (float(np.vdot(y, z).real) - sigma * float(np.linalg.norm(z))) / scale
        mod = np.abs(c_W)
        order = np.argsort(mod)
        dust = np.cumsum(mod[order]) <= SOCP_DUST * tol * float(mod.sum())
        keep = np.ones(W.size, dtype=bool)
        keep[order[dust]] = False
        # sparsest first: only the columns whose dual constraint is active
        # (slack 1 - |a_j^* z|^2 below SOCP_ACTIVE), which is the support
        # of the solution once t is large
        slack = 1.0 - np.abs(A_W.conj().T @ z) ** 2
        for sel, c_S in _candidates(A_W, y, z, hz_full[W] / scale, c_W, slack, keep, sigma,
                                    feas):
            coef = np.zeros(n, dtype=dtype)
            coef[W[sel]] = c_S
            rn = float(np.linalg.norm(y - P.A(coef)))
            l1 = float(np.abs(c_S).sum())
            gap = (l1 - dual) / max(l1, 1e-300) if rn <= feas else math.inf
            if rn <= feas and (best is None or gap < best[3]):
                best = (coef, rn, l1, gap, rnd + 1, newton)
            if gap <= tol:
                break
        if refine and best is not None and best[0] is not refined_from:
            refined_from = best[0]
            best = _refined(P, op, y, best, sigma, feas, dual, columns)
        if best is not None and best[3] <= tol:
            break
        if newton >= SOCP_MAX_NEWTON or t > SOCP_T_MAX:
            break
        viol = np.abs(hz_full)
        viol[W] = 0.0
        cand = np.flatnonzero(viol > 1.0)
        grown = cand.size > 0
        if not grown:
            if stalled:  # Newton made no progress at this t: rounding floor
                break
            continue
        k = min(cand.size, SOCP_ADD * m)
        add = cand[np.argpartition(-viol[cand], k - 1)[:k]]
        W = np.sort(np.concatenate([W, add]))
    if best is not None:
        best = best[:4] + (best[4], newton)
    return best


def _refined(P, op, y, best, sigma, feas, dual, columns):
    """``best`` = ``(coef, rnorm, l1, gap, rounds)``, or its support's exact solution if better.

    The barrier's point is only ``tol``-optimal (6e-6 from the optimum in
    relative terms at gap 5e-9 on a 120 x 200 exponential-feature problem);
    :func:`_kkt_newton` on its support gives the exact solution (gap 1e-15
    there), checked by :func:`_checked` on the whole dictionary.
    """
    coef = best[0]
    S = np.flatnonzero(coef)
    if S.size == 0:
        return best
    A_S = np.asarray(columns(op, S), dtype=y.dtype)
    c_S = _kkt_newton(A_S, y, coef[S], sigma=sigma)
    if c_S is None:
        return best
    new = np.zeros_like(coef)
    new[S] = c_S
    chk = _checked(P, y, new, sigma, feas, dual)
    if chk is not None and chk[3] <= best[3]:
        return chk + (best[4],)
    return best


def _checked(P, y, coef, sigma, feas, dual):
    r"""``(coef, rnorm, l1, gap)`` of a BPDN point on the whole dictionary, ``None`` if infeasible.

    The relative gap uses the better of two dual points: the caller's value
    ``dual`` (any dual-feasible value; ``-inf`` for none) and
    :math:`r / \|A^* r\|_\infty` (one product).
    """
    r = y - P.A(coef)
    rn = float(np.linalg.norm(r))
    if rn > feas:
        return None
    l1 = float(np.abs(coef).sum())
    scale = float(np.abs(P.AH(r)).max())
    if scale > 0.0:
        dual = max(dual, (float(np.vdot(y, r).real) - sigma * rn) / scale)
    return coef, rn, l1, (l1 - dual) / max(l1, 1e-300)


