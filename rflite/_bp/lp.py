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
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg
import scipy.optimize
from numba import njit

#: Largest ``m * N`` for which basis pursuit is handed to HiGHS: HiGHS's
#: simplex on the badly conditioned random-feature LPs takes seconds at
#: 140 x 1,000 and does not finish in minutes at 140 x 20,000.
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
    dual = _dual_bound(y, w, A.T @ w, float(np.sqrt((A * A).sum(axis=0).max())), coef,
                       A=A, tol=tol)
    gap = (l1 - dual) / max(l1, 1e-300)
    if not gap <= tol:
        return None
    return coef, rnorm, l1, max(gap, 0.0)


#: Column generation (:func:`_bp_colgen`): the first restricted LP holds
#: ``LP_WS_SIZE * m`` columns spread evenly over the dictionary.
LP_WS_SIZE = 4
#: Columns added per round: the ``LP_ADD * m`` most violated dual constraints.
LP_ADD = 1
#: Rounds of restricted LPs before giving up (each: one SVD of the m x |W|
#: restricted matrix, one HiGHS solve and one product with A^T).
LP_ROUNDS = 30
#: ... and stop growing the working set once ``m * |W|`` exceeds this: the
#: restricted LPs get slower with every round while the gap closes slowly on
#: the 140 x 20,000 SHRIMP q = 1 problem (|W| <= 1,142 there: 2 s, gap 0.03;
#: 2,240 columns: 8 s, gap 0.013; 4,480: 39 s, gap 0.010), whereas the 40- and
#: 60-row problems can afford their whole dictionary.
LP_MAX_WS_ENTRIES = 160_000
#: Singular values of the restricted matrix below ``LP_RCOND * s_max`` are
#: dropped from the restricted LP's constraints (the final residual is
#: checked with A itself).
LP_RCOND = 1e-12
#: The dictionary counts as numerically rank-deficient (the homotopy's
#: support solves cannot reach lambda = 0 accurately) when the first
#: restricted matrix has singular values below ``LP_RANK_RCOND * s_max``.
LP_RANK_RCOND = 1e-8
#: A column belongs to the polishing set when its dual constraint is active
#: to within this much: ``|a_j^T z| >= 1 - LP_ACTIVE``.
LP_ACTIVE = 1e-9


def _dual_bound(y, z, h, colnorm, coef, A=None, tol=None):
    r"""Lower bound on the basis pursuit optimum from a dual point, guarded.

    The bound is :math:`\min(y^T z,\; c^T h) / \max(1, \|h\|_\infty)` with
    :math:`h = A^T z`.  :math:`y^T z` is the dual objective; :math:`c^T h =
    (Ac)^T z` is the same objective for the right-hand side :math:`Ac` that
    the primal point ``coef`` meets exactly.  Both are needed because the two
    differ by :math:`r^T z`, and on the q = 1 dictionaries the restricted LPs'
    dual points reach :math:`\|z\| \sim 10^{10}`: a residual of 1e-14 then
    moves :math:`y^T z` by 1e-4.

    Rounding is bounded in one of two ways:

    * by default each inner product is corrected by a bound on the rounding
      error of an m-term dot product, :math:`\sqrt{m}\,u\,\|x\|_2 \|z\|_2`
      (the probabilistic :math:`\sqrt m\,u` of Higham and Mary, SIAM J. Sci.
      Comput. 41(5), 2019, in place of the worst case :math:`m u` of
      Higham's book, Sec. 3.1).  At :math:`\|z\| = 10^8` this guard alone is
      about 1e-6 of the bound, so it cannot certify at ``tol = 1e-6``;
    * when the dense float64 ``A`` is given and the unguarded gap is within
      ``tol`` (only then is the extra cost worth it), :math:`A^T z` and
      :math:`y^T z` are recomputed with compensated dot products
      (:func:`_dot2_cols`, Ogita, Rump and Oishi's Dot2), whose error is
      bounded by :math:`u|x^T z| + \gamma_m^2 |x|^T|z|` -- about
      :math:`10^{-28} |x|^T |z|`, negligible at any dual point HiGHS returns.
      The medium q = 1 problems (40 x 2,000) whose gaps are 1e-7 in exact
      arithmetic were reported at 2e-6 to 9e-6 by the first guard.
    """
    m = y.size
    l1 = float(np.abs(coef).sum())
    if (A is not None and isinstance(A, np.ndarray) and A.dtype == np.float64
            and A.ndim == 2 and A.shape[0] == m):
        hmax = float(np.abs(h).max())
        loose = min(float(y @ z), float(coef @ h)) / max(1.0, hmax)
        if tol is None or (l1 - loose) <= tol * max(l1, 1e-300):
            return _dual_bound_dot2(A, y, z, coef)
    err = math.sqrt(m) * np.finfo(np.float64).eps * float(np.linalg.norm(z))
    hmax = float(np.abs(h).max()) + err * colnorm
    val = min(float(y @ z) - err * float(np.linalg.norm(y)),
              float(coef @ h) - err * colnorm * l1)
    return val / max(1.0, hmax)


def _dual_bound_dot2(A, y, z, coef):
    """:func:`_dual_bound` with :math:`A^T z`, :math:`y^T z` by :func:`_dot2_cols` (rigorous)."""
    A = np.ascontiguousarray(A, dtype=np.float64)
    z = np.ascontiguousarray(z, dtype=np.float64)
    h, eh = _dot2_cols(A, z)
    yz, eyz = _dot2_cols(np.ascontiguousarray(y, dtype=np.float64).reshape(-1, 1), z)
    hmax = float((np.abs(h) + eh).max())
    # c^T h: h_j is known to within eh_j, and the float sum over the support
    # adds at most gamma_k |c|^T |h| (k nonzeros)
    S = np.flatnonzero(coef)
    cS, hS = coef[S], h[S]
    ch = float(cS @ hS)
    u = np.finfo(np.float64).eps / 2
    k = max(S.size, 1)
    gk = k * u / (1 - k * u)
    ech = float(np.abs(cS) @ (eh[S] + 2 * gk * np.abs(hS))) + gk * abs(ch)
    val = min(float(yz[0]) - float(eyz[0]), ch - ech)
    return val / max(1.0, hmax)


@njit(cache=True)
def _dot2_row(A, i, b, p, s, t):  # pragma: no cover - jitted
    r"""Add :math:`A_{i,:} b` to the Dot2 accumulators: sums ``p``, error terms ``s``, ``t``.

    Per column j: TwoProduct of :math:`A_{ij} b` (Dekker's splitting by
    :math:`2^{27} + 1`, exact without FMA), TwoSum into ``p[j]``, both
    rounding errors into ``s[j]`` and :math:`|A_{ij} b|` into ``t[j]`` (Ogita,
    Rump and Oishi 2005, Algorithm 5.3), shared by :func:`_dot2_cols` and
    :func:`_dd_cols`.
    """
    split = 134217729.0  # 2^27 + 1
    cb = split * b
    bh = cb - (cb - b)
    bl = b - bh
    ab = abs(b)
    for j in range(A.shape[1]):
        a = A[i, j]
        x = a * b
        ca = split * a
        ah = ca - (ca - a)
        al = a - ah
        r = al * bl - (((x - ah * bh) - al * bh) - ah * bl)
        pj = p[j]
        pn = pj + x
        bb = pn - pj
        q = (pj - (pn - bb)) + (x - bb)
        p[j] = pn
        s[j] += q + r
        t[j] += abs(a) * ab


@njit(cache=True)
def _dot2_cols(A, z):  # pragma: no cover - jitted
    r"""Compensated :math:`h = A^T z` (Dot2) with a rigorous bound on each error.

    Ogita, Rump and Oishi, "Accurate sum and dot product", SIAM J. Sci.
    Comput. 26(6), 2005, Algorithm 5.3: error-free TwoProduct (Dekker's
    splitting, no FMA needed) and TwoSum, with the error terms summed
    separately; the result is as accurate as if computed in twice the working
    precision.  Their Proposition 5.5 bounds the error of column ``j`` by
    :math:`u|h_j| + \gamma_m^2 \sum_i |A_{ij} z_i|` (no underflow), returned
    (inflated by :math:`1/(1-u)` and :math:`1 + \gamma_m` for the rounding of
    the bound itself, and 1% on top) as ``err``.

    Rows are the outer loop so that ``A`` (C order, m x n) is read once, in
    memory order.
    """
    m, n = A.shape
    p = np.zeros(n)
    s = np.zeros(n)
    t = np.zeros(n)
    for i in range(m):
        _dot2_row(A, i, z[i], p, s, t)
    u = 2.0 ** -53
    gm = m * u / (1.0 - m * u)
    h = np.empty(n)
    err = np.empty(n)
    for j in range(n):
        h[j] = p[j] + s[j]
        err[j] = 1.01 * (u * abs(h[j]) + gm * gm * t[j] * (1.0 + gm)) / (1.0 - u)
    return h, err


def _first_ws(n, m, start):
    """First working set: ``LP_WS_SIZE * m`` columns spread evenly, plus ``start``."""
    W = np.unique(np.linspace(0, n - 1, min(n, LP_WS_SIZE * m)).round().astype(np.int64))
    if start is not None and start.size:
        W = np.union1d(W, start)
    return W


def _most_violated(h, W, k):
    """Up to ``k`` columns outside ``W`` with the largest ``|h_j| > 1`` (empty: none violated)."""
    h = np.abs(h)
    h[W] = 0.0
    cand = np.flatnonzero(h > 1.0)
    if cand.size == 0:
        return cand
    k = min(cand.size, max(1, int(k)))
    return cand[np.argpartition(-h[cand], k - 1)[:k]]


def _dual_lp(B, b):
    r"""Basis pursuit :math:`\min\|c\|_1` s.t. :math:`Bc = b` through its dual LP, by HiGHS.

    HiGHS's dual simplex on :math:`\max b^T\zeta` s.t. :math:`-1 \le B^T
    \zeta \le 1` (free variables, as many as rows): 4-8x faster than on the
    primal form; the primal is the difference
    of the marginals of the two inequality blocks.  Returns ``(c, zeta)`` or
    ``None`` if HiGHS failed.
    """
    k = B.shape[1]
    res = scipy.optimize.linprog(-b, A_ub=np.vstack([B.T, -B.T]), b_ub=np.ones(2 * k),
                                 bounds=(None, None), method="highs-ds")
    if res.status != 0 or res.x is None:
        return None
    mu = np.asarray(res.ineqlin.marginals, dtype=np.float64)  # <= 0 (linprog's convention)
    return mu[k:] - mu[:k], np.asarray(res.x, dtype=np.float64)


def _polish_active(B, b, c, h):
    r"""Least-squares correction of the residual ``b - B c`` on the columns that can carry the solution.

    Those are the support of ``c`` and the columns whose dual constraint is
    active (:math:`|h_j| \ge 1 -` ``LP_ACTIVE``: complementary slackness), so
    the l1 norm is kept to first order.  ``c`` is updated in place.
    """
    T = np.flatnonzero((c != 0) | (np.abs(h) >= 1.0 - LP_ACTIVE))
    if T.size:
        delta, *_ = np.linalg.lstsq(B[:, T], b - B @ c, rcond=None)
        c[T] += delta
    return c


def _bp_colgen(P, op, y, *, feas, tol, columns, colnorm, start=None):
    r"""Basis pursuit by column generation: restricted LPs, certified on the whole dictionary.

    The dual of basis pursuit, :math:`\max y^T z` s.t.
    :math:`\|A^T z\|_\infty \le 1`, has one constraint per column; the
    restricted LP on a working set :math:`W` of columns relaxes all the
    others.  Each round solves the restricted LP (:func:`_restricted_lp`),
    takes its dual point :math:`z`, computes :math:`h = A^T z` on the **whole**
    dictionary (one product) and the relative duality gap of the full problem

    .. math::

        \mathrm{gap} = \frac{\|c\|_1 - y^T z / \max(1, \|h\|_\infty)}{\|c\|_1},

    a valid bound because :math:`z / \max(1, \|h\|_\infty)` is dual feasible
    and :math:`c` (zero off :math:`W`) primal feasible (its residual, checked
    with ``A`` in float64, is at most ``feas``).  When the gap is above
    ``tol`` the ``LP_ADD * m`` columns with the largest :math:`|h_j| > 1` join
    :math:`W` (Dantzig-Wolfe / delayed column generation; Chen, Donoho and
    Saunders 2001, Sec. 3.1 for basis pursuit as an LP).

    Why: HiGHS on the full 140 x 20,000 LP of a SHRIMP q = 1 dictionary did
    not finish in 10 minutes, and the homotopy's support solves lose their
    accuracy at the condition numbers (~1e14) of these dictionaries; a
    restricted LP on ~1,000 columns in the orthonormal form of
    :func:`_restricted_lp` takes about a second.

    Parameters
    ----------
    P : rflite._bp.homotopy._Products
        Products with the whole dictionary (counted).
    op : ndarray or operator
    y : (m,) ndarray, real
    feas : float
        Largest residual accepted as :math:`Ac = y`.
    tol : float
        Relative duality gap to reach.
    columns : callable
        ``columns(op, idx)`` returns the dense ``A[:, idx]``.
    colnorm : float
        Largest column norm of ``A`` (for the rounding bound of :func:`_dual_bound`).
    start : ndarray of int, optional
        Columns to include in the first working set (e.g. a previous support).

    A dense float64 ``op`` goes to :func:`_bp_colgen_precond` (preconditioned
    rounds, warm-started simplex, double-double certificate) and comes back
    here only if that fails; the rounds below serve operators.

    Returns
    -------
    ``(best, deficient)``: ``best`` is ``(coef, rnorm, l1, gap, rounds)`` of
    the best feasible point found (the first with ``gap <= tol``, else the
    one with the smallest gap), or ``None`` when no round produced a feasible
    point; ``deficient`` says whether the first restricted matrix was
    numerically rank-deficient (``LP_RANK_RCOND``).  At most ``LP_ROUNDS``
    rounds: on the 140 x 20,000 SHRIMP q = 1 problem the restricted LPs grow
    slower to solve with every round (HiGHS's simplex on dense columns) while
    the gap closes slowly, so the result there is a feasible point with a
    gap of a few percent, returned uncertified.
    """
    m, n = op.shape
    if isinstance(op, np.ndarray) and op.dtype == np.float64 and op.ndim == 2:
        out = _bp_colgen_precond(P, op, y, feas=feas, tol=tol, start=start)
        if out is not None:
            return out
    W = _first_ws(n, m, start)
    best = None
    deficient = False
    for rnd in range(1, LP_ROUNDS + 1):
        A_W = np.ascontiguousarray(columns(op, W), dtype=np.float64)
        sol = _restricted_lp(A_W, y, feas)
        if sol is None:
            break
        c_W, z, srel = sol
        if rnd == 1:
            deficient = bool(srel < LP_RANK_RCOND)
        h = P.AH(z)
        coef = np.zeros(n)
        coef[W] = c_W
        rnorm = float(np.linalg.norm(y - P.A(coef)))
        l1 = float(np.abs(c_W).sum())
        dual = _dual_bound(y, z, h, colnorm, coef,
                           A=op if isinstance(op, np.ndarray) else None, tol=tol)
        gap = (l1 - dual) / max(l1, 1e-300)
        if rnorm <= feas and l1 > 0.0:
            if best is None or gap < best[3]:
                best = (coef, rnorm, l1, max(gap, 0.0), rnd)
            if gap <= tol:
                break
        add = _most_violated(h, W, LP_ADD * m)
        if add.size == 0 or W.size * m >= LP_MAX_WS_ENTRIES:
            break
        W = np.sort(np.concatenate([W, add]))
    return best, deficient


#: Preconditioned column generation (:func:`_bp_colgen_precond`): singular
#: values of ``A`` below this fraction of the largest are dropped from the
#: preconditioner (exactly rank-deficient dictionaries give ~1e-17; the
#: 140 x 20,000 SHRIMP q = 1 matrix has 8.5e-15 and keeps all its rows).
LP_PRECOND_RCOND = 1e-15
#: Rounds of the preconditioned restricted LPs (the 140 x 20,000 SHRIMP q = 1
#: problem is certified after 17 rounds of ``m`` added columns).
LP_PRECOND_ROUNDS = 40
#: ... and stop growing the working set once ``m * |W|`` exceeds this (the
#: certified 140 x 20,000 problem ends at |W| = 2,696: 377,000 entries; each
#: restricted LP there takes ~2 s of HiGHS's dual simplex, from scratch).
LP_PRECOND_MAX_WS_ENTRIES = 700_000
#: The certificate of a round is evaluated in double-double arithmetic only
#: when the float64 estimate of ``max |A^T z|`` is below ``1 + LP_DD_PRICE``
#: or four times that estimate's rounding level ``u max||a_j|| ||z||``
#: (1e-3 at ``||z|| ~ 1e12``, where the float64 estimate can be off by
#: nearly that much): each evaluation
#: costs two compensated passes over ``A``.
LP_DD_PRICE = 1e-3


def _rows_dot2(M, B):
    """``M @ B`` with every entry by a compensated dot product (:func:`_dot2_cols`)."""
    B = np.ascontiguousarray(B, dtype=np.float64)
    out = np.empty((M.shape[0], B.shape[1]))
    for i in range(M.shape[0]):
        out[i] = _dot2_cols(B, np.ascontiguousarray(M[i]))[0]
    return out


def _bp_colgen_precond(P, A, y, *, feas, tol, start=None):
    r"""Column generation on the row-preconditioned LP, certified in double-double.

    Basis pursuit is unchanged by an invertible row transformation:
    :math:`Ac = y \iff MAc = My`.  With the SVD :math:`A = U\Sigma V^T` and
    :math:`M = \Sigma^{-1} U^T` (the computed factors: any invertible
    ``M`` will do), :math:`MA \approx V^T` has orthonormal rows.  The catch on
    the q = 1 dictionaries (condition number ~1e14) is that :math:`MA`
    and :math:`My` formed in float64 are wrong by :math:`u\,s_{max}/s_i`,
    1e-2 in the last rows -- the restricted LPs of :func:`_restricted_lp`
    were a different LP at that level (their optimal values moved up and down
    by 2e-5 from round to round and the dual points violated 3-20 % of the
    constraints off the working set).  Here each entry of :math:`M A_W` and
    :math:`My` is a compensated dot product (:func:`_dot2_cols`: as if
    computed with twice the precision), rounded once, so the restricted LP is
    the exact LP up to relative perturbations of ``u`` in a well-conditioned
    form (cond(:math:`MA_W`) about 7), and HiGHS solves it to its own
    accuracy.  Its dual point :math:`\zeta` maps back to
    :math:`z = M^T\zeta` (:math:`\|z\| \sim 10^{12}`), formed in
    double-double (:func:`_dd_cols`), and the certificate
    :math:`\min(y^Tz, c^T A^T z) / \max(1, \|A^T z\|_\infty)` is evaluated
    with :func:`_dd_cols` on the original ``A`` and ``y`` with rigorous error
    bounds: nothing in it relies on ``M``, the SVD or HiGHS.  The primal
    :math:`c` is polished in the preconditioned form (least squares on the
    active columns), so that :math:`M(y - Ac)` is ~1e-15 and the two dual
    objectives agree.

    The first restricted LP is solved by HiGHS; every later round by the
    primal simplex :func:`_simplex_bp` warm-started at the previous optimal
    basis (still primal feasible after columns are added), which needs a few
    dozen pivots where HiGHS from scratch needed ~1,700 iterations (HiGHS
    again if the simplex fails).  On the 140 x 20,000 SHRIMP q = 1 problem:
    certified after some 16 rounds (gap ~1e-13, residual ~1e-15), several
    times faster than HiGHS every round, where the unpreconditioned rounds
    stop uncertified (gap ~0.03).

    Columns are generated as in :func:`_bp_colgen`: the ``LP_ADD * m`` most
    violated dual constraints per round, found with the float64 product
    :math:`A^T z` (error ~1e-2 at these norms: enough to find violations);
    the double-double certificate is computed when the float64 estimate is
    within ``LP_DD_PRICE`` of feasibility.

    Returns ``(best, deficient)`` as :func:`_bp_colgen`, or ``None`` when the
    SVD or the first LP fails (the caller then runs the plain rounds).
    """
    m, n = A.shape
    if n < m:
        return None
    try:
        # U and s of A from A^T = QR (Q not formed): A = R^T Q^T, and R^T's
        # SVD gives A's left factor -- 2-3x cheaper than gesdd, which also
        # forms the m x n right factor
        R = scipy.linalg.qr(A.T, mode="r", check_finite=False)[0][:m]
        U, s, _ = np.linalg.svd(R.T)
    except (np.linalg.LinAlgError, ValueError):
        return None
    if s.size == 0 or not s[0] > 0.0:
        return None
    deficient = bool(s[-1] < LP_RANK_RCOND * s[0]) or s.size < m
    r = int((s > LP_PRECOND_RCOND * s[0]).sum())
    M = np.ascontiguousarray((U[:, :r] / s[:r]).T)  # diag(1/s) U^T, r x m
    if s[r - 1] < LP_RANK_RCOND * s[0]:
        transform = _rows_dot2
    else:
        # well-conditioned A: float64 products are off by u s_max / s_min
        # <= 1e-8 relative, harmless to the LP (the certificate does not use
        # M), and m^2 |W| compensated products would dominate at large m
        def transform(M, B):
            return M @ np.asarray(B, dtype=np.float64)
    b = transform(M, y.reshape(-1, 1))[:, 0]
    y2 = np.ascontiguousarray(y, dtype=np.float64).reshape(-1, 1)
    colmax = float(np.sqrt(np.einsum("ij,ij->j", A, A).max()))
    W = _first_ws(n, m, start)
    B_W = transform(M, A[:, W])
    best = None
    basis = None  # (positions in W, signs) of the last optimal simplex basis
    for rnd in range(1, LP_PRECOND_ROUNDS + 1):
        k = W.size
        sol = _simplex_bp(B_W, b, *basis) if basis is not None else None
        if sol is not None:
            basis = sol[:2]
            c_W = np.zeros(k)
            c_W[basis[0]] = sol[2]
            zeta = sol[3]
        else:
            # HiGHS from scratch (the first round, or when the warm-started
            # simplex fails), and its optimal basis for the next rounds
            lp = _dual_lp(B_W, b)
            if lp is None:
                if rnd == 1:
                    return None
                break
            c_W, zeta = lp
            hW = B_W.T @ zeta
            _polish_active(B_W, b, c_W, hW)  # the preconditioned residual
            basis = _basis_from(B_W, c_W, hW)
        coef = np.zeros(n)
        coef[W] = c_W
        rnorm = float(np.linalg.norm(y - P.A(coef)))
        l1 = float(np.abs(c_W).sum())
        z = M.T @ zeta
        h = P.AH(z)  # float64 estimate, for pricing
        gap = math.inf
        # its rounding error is about u ||a_j|| ||z|| (cancellation: ||z|| ~ 1e12)
        fl_err = np.finfo(np.float64).eps * colmax * float(np.linalg.norm(z))
        if float(np.abs(h).max()) <= 1.0 + max(LP_DD_PRICE, 4.0 * fl_err):
            zh, zl, _ = _dd_cols(M, zeta, np.zeros_like(zeta))
            h, _, eh = _dd_cols(A, zh, zl)
            yz, _, eyz = _dd_cols(y2, zh, zl)
            hmax = float((np.abs(h) + eh).max())
            S = np.flatnonzero(coef)
            cS, hS = coef[S], h[S]
            ch = float(cS @ hS)
            u = np.finfo(np.float64).eps / 2
            g = max(S.size, 1) * u / (1 - max(S.size, 1) * u)
            ech = float(np.abs(cS) @ (eh[S] + 2 * g * np.abs(hS))) + g * abs(ch)
            dual = min(float(yz[0]) - float(eyz[0]), ch - ech) / max(1.0, hmax)
            gap = (l1 - dual) / max(l1, 1e-300)
        if rnorm <= feas and l1 > 0.0:
            if best is None or gap < best[3] or (gap == best[3] and l1 < best[2]):
                best = (coef, rnorm, l1, max(gap, 0.0), rnd)
            if gap <= tol:
                break
        add = _most_violated(h, W, LP_ADD * m)
        if add.size == 0 or W.size * m >= LP_PRECOND_MAX_WS_ENTRIES:
            break
        B_W = np.hstack([B_W, transform(M, A[:, add])])
        W = np.concatenate([W, add])
    return best, deficient


#: Largest number of pivots of one warm-started :func:`_simplex_bp` call.
LP_SIMPLEX_PIVOTS = 5_000
#: Reduced costs above ``-LP_SIMPLEX_TOL`` count as optimal in :func:`_simplex_bp`
#: (well-scaled: the preconditioned columns have norm ~1; the certificate is
#: checked independently in double-double).
LP_SIMPLEX_TOL = 1e-11


def _basis_from(B, c, h):
    """A simplex basis (m positions into ``B``'s columns, signs) from an LP solution.

    The support of ``c`` first (HiGHS's vertex: at most m independent
    columns), then the active dual constraints (``|h_j| = 1``), then any
    columns, each chosen by QR with column pivoting on the part orthogonal to
    the columns already taken.  ``None`` if no nonsingular basis is found.
    """
    m, k = B.shape
    S = np.flatnonzero(c != 0)
    if S.size > m:
        return None
    act = np.setdiff1d(np.flatnonzero(np.abs(h) >= 1.0 - 1e-7), S)
    rest = np.setdiff1d(np.arange(k), np.concatenate([S, act]))
    pool = np.concatenate([act, rest])
    if S.size:
        Q, _ = np.linalg.qr(B[:, S])
        Rm = B[:, pool] - Q @ (Q.T @ B[:, pool])
    else:
        Rm = B[:, pool]
    need = m - S.size
    if need > pool.size:
        return None
    if need:
        # prefer active constraints: scale the rest down in the pivoting
        w = np.where(np.arange(pool.size) < act.size, 1.0, 1e-3)
        _, _, piv = scipy.linalg.qr(Rm * w, mode="economic", pivoting=True)
        Bi = np.concatenate([S, pool[piv[:need]]])
    else:
        Bi = S.copy()
    sg = np.sign(h[Bi])
    sg[: S.size] = np.sign(c[S])
    sg[sg == 0] = 1.0
    if np.linalg.cond(B[:, Bi]) > 1e12:
        return None
    return Bi, sg


def _simplex_bp(B, b, Bi, sg):
    r"""Primal simplex for :math:`\min \|c\|_1` s.t. :math:`Bc = b`, warm-started.

    Basis pursuit as the LP in the split variables :math:`c = u - v \ge`;
    a basis is m columns ``Bi`` with signs ``sg`` (column :math:`+b_j` or
    :math:`-b_j`), primal feasible when :math:`sg \cdot B_{Bi}^{-1} b \ge 0`
    and optimal when its dual point :math:`\zeta = B_{Bi}^{-T} sg` has
    :math:`|B^T\zeta| \le 1` (reduced costs :math:`1 - |b_j^T\zeta|`).
    Dantzig pricing; ratio test with ties broken by the largest pivot
    (Harris's idea, for stability on the degenerate vertices these problems
    have: 130 nonzeros for 140 rows).  Each pivot refactorises the m x m
    basis (LU, O(m^3), cheap at m = 140).

    Why: column generation adds ``m`` columns per round, and the previous
    optimal basis stays primal feasible, so a few dozen pivots restore
    optimality where HiGHS from scratch (scipy cannot warm-start it) needed
    ~1,700 iterations and 2 s per round on 2,700 columns.  On the
    preconditioned columns (:func:`_bp_colgen_precond`) the bases are
    well enough conditioned (1e2-1e8) for float64 pivoting.

    Returns ``(Bi, sg, x_B, zeta)`` at optimality, or ``None`` (singular
    basis, unbounded ratio test -- impossible for basis pursuit in exact
    arithmetic -- or ``LP_SIMPLEX_PIVOTS`` reached): the caller then asks HiGHS.
    """
    m = B.shape[0]
    Bi = np.array(Bi, dtype=np.int64)
    sg = np.array(sg, dtype=np.float64)
    getrf, getrs = scipy.linalg.lapack.dgetrf, scipy.linalg.lapack.dgetrs
    for _ in range(LP_SIMPLEX_PIVOTS):
        Bm = B[:, Bi]
        lu, piv, info = getrf(Bm)
        if info != 0 or not np.isfinite(lu).all():
            return None
        x = getrs(lu, piv, b)[0]
        zeta = getrs(lu, piv, sg, trans=1)[0]
        h = B.T @ zeta
        v = np.abs(h) - 1.0
        v[Bi] = -1.0
        j = int(np.argmax(v))
        if v[j] <= LP_SIMPLEX_TOL:
            # optimal: one step of iterative refinement for both solutions
            x += getrs(lu, piv, b - Bm @ x)[0]
            zeta += getrs(lu, piv, sg - Bm.T @ zeta, trans=1)[0]
            return Bi, sg, x, zeta
        sj = 1.0 if h[j] > 0 else -1.0
        d = getrs(lu, piv, B[:, j])[0] * sj
        sx = np.maximum(sg * x, 0.0)
        sd = sg * d
        ok = sd > LP_SIMPLEX_TOL
        if not ok.any():
            return None
        t = np.full(m, np.inf)
        t[ok] = sx[ok] / sd[ok]
        cand = np.flatnonzero(t <= t.min() + 1e-12)
        i = cand[np.argmax(sd[cand])]
        Bi[i] = j
        sg[i] = sj
    return None


def _restricted_lp(A_W, y, feas):
    r"""Basis pursuit on the columns ``A_W`` by HiGHS, in an orthonormal form, polished.

    With the SVD :math:`A_W = U \Sigma V^T` truncated at ``LP_RCOND``, the
    constraint :math:`A_W c = y` is replaced by :math:`V_r^T c = b`,
    :math:`b = \Sigma_r^{-1} U_r^T y`: the same solutions on the numerical
    range, but a constraint matrix with orthonormal rows, on which HiGHS's
    simplex is several times faster and its values consistent where the raw
    form (condition number ~1e14) gave primal and dual values 10% apart.
    HiGHS solves the dual LP :math:`\max b^T\zeta` s.t.
    :math:`\|V_r^T \zeta\|_\infty \le 1`; the primal :math:`c` is the
    difference of the marginals of its two inequality blocks, and the dual
    point maps back as :math:`z = U_r \Sigma_r^{-1} \zeta`
    (:math:`A_W^T z = V_r \zeta`, :math:`y^T z = b^T \zeta`).

    HiGHS's point satisfies the constraints only to its tolerance; it is
    polished by the least-squares correction of its residual on the columns
    that can carry the solution (its support and the columns whose dual
    constraint is active, :math:`|a_j^T z| \ge 1 - ` ``LP_ACTIVE``:
    complementary slackness), which keeps the l1 norm to first order.

    Returns ``(c, z, s_min / s_max)`` with ``‖A_W c - y‖`` checked by the
    caller, or ``None`` if HiGHS failed.
    """
    try:
        U, s, Vt = np.linalg.svd(A_W, full_matrices=False)
    except np.linalg.LinAlgError:
        return None
    if s.size == 0 or s[0] == 0.0:
        return None
    r = int((s > LP_RCOND * s[0]).sum())
    V = Vt[:r]
    b = (U[:, :r].T @ y) / s[:r]
    # the primal is the dual LP's marginals, feasible in the orthonormal form to 1e-15
    lp = _dual_lp(V, b)
    if lp is None:
        return None
    c, zeta = lp
    z = U[:, :r] @ (zeta / s[:r])
    if float(np.linalg.norm(y - A_W @ c)) > feas:
        _polish_active(A_W, y, c, A_W.T @ z)
    srel = float(s[-1] / s[0]) if s.size >= A_W.shape[0] else 0.0
    return c, z, srel


@njit(cache=True)
def _dd_cols(A, zh, zl):  # pragma: no cover - jitted
    r""":math:`A^T (z_h + z_l)` for a double-double vector, compensated (Dot2), with bounds.

    As :func:`_dot2_cols` on the stacked product :math:`[A; A]^T [z_h; z_l]`
    (2m terms), and the result returned in double-double too: ``(hi, lo,
    err)`` with :math:`|hi + lo - (A^T z)_j| \le` ``err[j]`` (Ogita, Rump and
    Oishi 2005, Prop. 5.5, inflated as there; ``hi + lo`` is the compensated
    sum before its last rounding, so the bound covers it).
    """
    m, n = A.shape
    p = np.zeros(n)
    s = np.zeros(n)
    t = np.zeros(n)
    for part in range(2):
        for i in range(m):
            b = zh[i] if part == 0 else zl[i]
            if b != 0.0:
                _dot2_row(A, i, b, p, s, t)
    u = 2.0 ** -53
    k = 2 * m
    gm = k * u / (1.0 - k * u)
    hi = np.empty(n)
    lo = np.empty(n)
    err = np.empty(n)
    for j in range(n):
        h = p[j] + s[j]
        hi[j] = h
        lo[j] = (p[j] - h) + s[j]
        # the bound on |p + s - exact| (before the final rounding, which the
        # double-double result does not suffer up to u^2 |h|)
        err[j] = 1.01 * (4.0 * u * u * abs(h) + gm * gm * t[j] * (1.0 + gm)) / (1.0 - u)
    return hi, lo, err


def _warmup():
    """Compile the exact dot-product kernels (one float64 signature each)."""
    A, z = np.ones((2, 2)), np.ones(2)
    _dot2_cols(A, z)
    _dot2_row(A, 0, 1.0, z.copy(), z.copy(), z.copy())
    _dd_cols(A, z, np.zeros(2))
