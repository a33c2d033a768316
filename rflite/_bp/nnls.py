r"""Real BPDN by a LASSO root search on sign-constrained least squares (certified).

Private module behind :func:`rflite.bp.bpdn`, for real data where the LASSO
homotopy cannot certify its result: the q = 1 fourier dictionaries of the
SHRIMP paper, whose thousands of numerically duplicate columns make the
homotopy's support systems (and the dual barrier's Newton systems) lose
their accuracy.

For :math:`0 < \sigma < \|y\|`, basis pursuit denoising

.. math::

    \min_c \|c\|_1 \quad \text{s.t.} \quad \|A c - y\|_2 \le \sigma

is the LASSO :math:`\min_c \tfrac12\|Ac - y\|^2 + \lambda\|c\|_1` at the
:math:`\lambda^\star` whose residual norm :math:`\rho(\lambda) = \|y - A
c_\lambda\|` equals :math:`\sigma` (:math:`\rho` is non-decreasing in
:math:`\lambda`).  For one :math:`\lambda` the LASSO is a non-negative
least-squares problem in :math:`x = (c^+, c^-)`,

.. math::

    \min_{x \ge 0} \tfrac12 \left\| \begin{pmatrix} A & -A \\ \gamma 1^T &
    \gamma 1^T \end{pmatrix} x - \begin{pmatrix} y \\ -\lambda/\gamma
    \end{pmatrix} \right\|^2
    = \tfrac12\|A c - y\|^2 + \lambda \|c\|_1 + \tfrac12 \gamma^2 \|c\|_1^2
    + \mathrm{const},

the LASSO at :math:`\lambda + \gamma^2\|c\|_1` (:data:`NNLS_GAMMA2`
:math:`= \gamma^2/\lambda`): a slightly larger penalty, which the root search
absorbs.  Lawson and Hanson's active-set method (:func:`scipy.optimize.nnls`)
solves it by Householder least squares on a growing set of columns: it needs
no unique solution, so near-duplicate columns do not hurt it, and the
residual it returns is backward stable -- the certificate below uses nothing
else.

The LASSO runs on a working set ``J`` of columns (column generation): after
each root search the residual is checked on the whole dictionary and the
columns with :math:`|a_j^T r| > \lambda` join ``J``.  The root search takes
secant steps on :math:`(\log\lambda, \log\rho)` inside a bracket until
:math:`\rho \le \sigma` and the gap of the exact LASSO point,
:math:`\rho(\sigma - \rho) / (\lambda \|c\|_1)`, is below a quarter of ``tol``.

Certificate, as everywhere in :mod:`rflite.bp`: ``c`` (zero off ``J``) is
feasible (:math:`\|y - Ac\| = \rho \le \sigma`, recomputed with the whole
``A``) and :math:`z = r / \|A^T r\|_\infty` is dual feasible, so

.. math::

    \mathrm{gap} = \frac{\|c\|_1 - (y^T z - \sigma\|z\|)}{\|c\|_1}

bounds the distance to the optimum whatever NNLS did.  On SHRIMP's f2
dictionary (126 x 20,000, where the barrier can stop at gap 1e-4) this
certifies gaps near 1e-8, :math:`\|c\|_1` equal to an interior-point
reference (Clarabel) to 1e-9, started from ``z0 = y``; on the f1
dictionaries (condition ~1e12) gaps near 1e-10.
"""

from __future__ import annotations

import math

import numpy as np

#: gamma^2 / lambda of the augmented row (the effective penalty is
#: lambda (1 + NNLS_GAMMA2 ||c||_1)).
NNLS_GAMMA2 = 1e-4
#: Working set: columns with |a_j^T z| >= 1 - NNLS_WS_SLACK for the starting
#: dual point z (at least NNLS_WS_MIN * m columns, the largest |a_j^T z|).
NNLS_WS_SLACK = 1e-2
NNLS_WS_MIN = 4
#: Violated columns added per column-generation round (NNLS_ADD * m) and rounds.
NNLS_ADD = 2
NNLS_ROUNDS = 20
#: Giving up: after NNLS_GIVE_UP_BY rounds with no feasible point or a best
#: gap above NNLS_GIVE_UP_GAP, or at once when a feasible point needs
#: ``||c||_1 max_j ||a_j|| > NNLS_L1_RATIO ||y||`` (q = 1 dictionaries of a
#: few inputs with sigma far below the noise: ||c||_1 ~ 1e8, gap ~1, which
#: no route certifies; 24 s spent there before these rules, 0.9 s by the
#: other routes).
NNLS_GIVE_UP_BY = 3
NNLS_GIVE_UP_GAP = 0.9
NNLS_L1_RATIO = 1e6
#: NNLS solves per root search.
NNLS_ROOT_ITERS = 40
#: Lawson-Hanson iterations per solve, per column of the split problem.
NNLS_MAXITER = 10
#: Root target: rho = sigma (1 - NNLS_SHRINK) (room for rounding below sigma).
NNLS_SHRINK = 1e-9


def _split_matrix(A_J):
    """``[A_J, -A_J]`` with a spare last row for the penalty (see :func:`_lasso_nnls`)."""
    m, k = A_J.shape
    B = np.empty((m + 1, 2 * k))
    B[:m, :k] = A_J
    B[:m, k:] = -A_J
    return B


def _lasso_nnls(A_J, y, lam, B=None):
    """The LASSO on ``A_J`` at about ``lam`` by NNLS; ``(c, rho, lam_eff)`` or ``None``.

    ``lam_eff = lam (1 + NNLS_GAMMA2 ||c||_1)`` is the penalty the point is
    optimal for (see the module notes).  ``B`` is :func:`_split_matrix` of
    ``A_J``, built once per root search; its last row is overwritten here.
    """
    from scipy.optimize import nnls

    m, k = A_J.shape
    gamma = math.sqrt(NNLS_GAMMA2 * lam)
    if B is None:
        B = _split_matrix(A_J)
    B[m] = gamma
    b = np.append(y, -lam / gamma)
    try:
        x = nnls(B, b, maxiter=NNLS_MAXITER * 2 * k)[0]
    except RuntimeError:  # iteration cap (older SciPy raises)
        return None
    c = x[:k] - x[k:]
    if not np.all(np.isfinite(c)):
        return None
    rho = float(np.linalg.norm(y - A_J @ c))
    return c, rho, lam * (1.0 + NNLS_GAMMA2 * float(np.abs(c).sum()))


def _next_lam(lam, rho, lo, hi, target, prev=None):
    """Secant step on (log lam, log rho) toward ``target``, kept inside the bracket.

    With one side of the bracket only, the slope ``a`` of ``rho ~ lam^a`` is
    the secant through the previous point ``prev`` (1 at first), and the
    step is at most a factor of 10.
    """
    if lo is not None and hi is not None:
        (l0, r0), (l1, r1) = lo, hi
        t = l0 + (math.log(target) - r0) * (l1 - l0) / (r1 - r0) if r1 > r0 else 0.5 * (l0 + l1)
        inner = min(l0, l1) + 0.01 * abs(l1 - l0), max(l0, l1) - 0.01 * abs(l1 - l0)
        return math.exp(min(max(t, inner[0]), inner[1]))
    slope = 1.0
    if prev is not None and prev[0] != lam and prev[1] > 0.0 and rho > 0.0:
        s = (math.log(rho) - math.log(prev[1])) / (math.log(lam) - math.log(prev[0]))
        slope = s if s > 1e-3 else 1e-3
    step = (math.log(target) - math.log(rho)) / slope
    return lam * math.exp(max(min(step, math.log(10.0)), -math.log(10.0)))


def _lasso_root(A_J, y, lam, sigma, tol):
    """LASSO points on ``A_J`` with ``rho`` just below ``sigma``: ``(c, lam_eff, rho, n)``.

    Returns the point the search accepted, else the feasible one closest to
    ``sigma``, else (the working set cannot reach ``sigma``) the one with the
    smallest ``rho``, whose residual tells column generation what is
    missing; ``None`` if no solve succeeded.
    """
    target = sigma * (1.0 - NNLS_SHRINK)
    B = _split_matrix(A_J)
    lo = hi = None
    best = None
    prev = None
    stalls = 0
    for it in range(NNLS_ROOT_ITERS):
        out = _lasso_nnls(A_J, y, lam, B)
        if out is None:
            break
        c, rho, lam_eff = out
        # feasible points rank by rho closest to sigma, above any infeasible one
        rank = (rho <= sigma, rho if rho <= sigma else -rho)
        if best is None or rank > best[0]:
            best = (rank, c, lam_eff, rho)
        if rho <= sigma:
            l1 = float(np.abs(c).sum())
            if l1 > 0.0 and rho * (sigma - rho) <= 0.25 * tol * lam_eff * l1:
                return (c, lam_eff, rho, it + 1)
            lo = (math.log(lam), math.log(max(rho, 1e-300)))
        else:
            hi = (math.log(lam), math.log(rho))
            # rho stalling above sigma while lam falls fivefold a step: the
            # working set cannot reach sigma (column generation must add to it)
            if prev is not None and lam < 0.2 * prev[0] and rho > (1.0 - 1e-3) * prev[1]:
                stalls += 1
                if stalls >= 2:
                    break
        lam, prev = _next_lam(lam, rho, lo, hi, target, prev), (lam, rho)
    return None if best is None else best[1:] + (it + 1,)


def _first_ws(h, m):
    """Columns with ``|h_j| >= 1 - NNLS_WS_SLACK`` (``h = A^T z`` of a dual feasible
    ``z``), at least the ``NNLS_WS_MIN * m`` largest, plus ``NNLS_WS_MIN * m``
    columns spread evenly over the dictionary (the most correlated columns
    of a q = 1 dictionary are near-constant low frequencies whose span can
    miss ``y``; see :func:`rflite._bp.homotopy._homotopy_ws`)."""
    a = np.abs(h)
    n = a.size
    J = np.flatnonzero(a >= 1.0 - NNLS_WS_SLACK)
    k = min(n, NNLS_WS_MIN * m)
    if J.size < k:
        J = np.argpartition(-a, k - 1)[:k]
    spread = np.linspace(0, n - 1, k).round().astype(np.int64)
    return np.unique(np.concatenate([J, spread]))


def _nnls_bpdn(P, op, y, *, sigma, tol, feas, columns, z0):
    """Certified real BPDN (``0 < sigma < ||y||``) from a dual point ``z0``.

    ``z0`` (any vector; scaled here) gives the first working set and the
    first penalty ``sigma / ||z||``.  Returns ``(coef, rnorm, l1, gap,
    rounds, solves)`` for the best feasible point found (``gap`` its relative
    duality gap on the whole dictionary), or ``None`` when no feasible point
    came out.
    """
    m, n = op.shape
    h = P.AH(z0)
    scale = float(np.abs(h).max())
    if not scale > 0.0 or not math.isfinite(scale):
        return None
    z0 = z0 / scale
    lam = sigma / max(float(np.linalg.norm(z0)), 1e-300)
    J = _first_ws(h / scale, m)
    best = None
    solves = 0
    for rnd in range(1, NNLS_ROUNDS + 1):
        A_J = np.ascontiguousarray(columns(op, J), dtype=np.float64)
        out = _lasso_root(A_J, y, lam, sigma, tol)
        if out is None:
            break
        c_J, lam, rho, k = out
        solves += k
        coef = np.zeros(n)
        coef[J] = c_J
        r = y - P.A(coef)
        rn = float(np.linalg.norm(r))
        hr = np.abs(P.AH(r))
        hmax = float(hr.max())
        l1 = float(np.abs(c_J).sum())
        if rn <= feas and l1 > 0.0 and hmax > 0.0:
            dual = (float(y @ r) - sigma * rn) / hmax
            gap = (l1 - dual) / l1
            if best is None or gap < best[3]:
                best = (coef, rn, l1, max(gap, 0.0), rnd, solves)
            if gap <= tol:
                break
            colmax = float(np.sqrt(np.einsum("ij,ij->j", A_J, A_J).max()))
            if l1 * colmax > NNLS_L1_RATIO * float(np.linalg.norm(y)):
                break
        if rnd >= NNLS_GIVE_UP_BY and (best is None or best[3] > NNLS_GIVE_UP_GAP):
            break
        hr[J] = 0.0
        cand = np.flatnonzero(hr > lam * (1.0 + 1e-9))
        if cand.size == 0:
            break
        add = cand[np.argpartition(-hr[cand], min(cand.size, NNLS_ADD * m) - 1)[:NNLS_ADD * m]]
        J = np.sort(np.concatenate([J, add]))
    return best
