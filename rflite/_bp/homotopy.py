r"""The exact LASSO / BPDN homotopy behind :mod:`rflite.bp`, and its working-set driver.

Private module: :func:`rflite.bp.bpdn` and friends call :func:`_homotopy_ws`
for real data.  See the notes of :mod:`rflite.bp` for the maths and the
references; this module holds the path itself (:func:`_homotopy`, its
numba join kernel :func:`_next_join`), the products helper shared with the
SPGL1 loop, and the working-set (column generation) driver that makes the
path fast on dictionaries with many nearly parallel columns.

Working set (``rflite._bp.homotopy._homotopy_ws``): on dictionaries with
more than ``2 * WS_SIZE * m`` columns, BPDN's path is first run on an evenly
spread subset of ``WS_SIZE * m`` columns; its dual point is checked against
the whole dictionary with one product, the violated columns are added and the
path is rerun until the relative duality gap **of the full problem** is below
``tol`` (column generation).  On the SHRIMP q = 1 fourier dictionaries, which
sample each input's frequencies finely, the full path crawls from grid point
to grid point (3,000 breakpoints on the 140 x 20,000 f2 problem); the working
set certifies the same optimum 10-20x faster (``benchmarks/bench_bp.py``).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg
from numba import njit

#: A joining column whose part orthogonal to the current support columns is
#: below this fraction of its norm is kept out of the path (near-duplicate
#: random features); this bounds the conditioning of the support QR.
HOMOTOPY_RCOND = 1e-8
#: Breakpoints between exact recomputations of the correlations ``A^T r``.
HOMOTOPY_REFRESH = 32
#: Working set of the BPDN path (:func:`_homotopy_ws`): ``WS_SIZE * m``
#: columns spread evenly over the dictionary to start with; used only when
#: the dictionary has more than twice as many columns.
WS_SIZE = 16
#: Columns added per round: the ``WS_ADD * m`` most violated dual constraints.
WS_ADD = 1
#: Rounds of the working-set driver before it falls back to the full path.
WS_ROUNDS = 25


def _columns(op, support):
    """Dense ``A[:, support]`` for an array or an operator."""
    if isinstance(op, np.ndarray):
        return op[:, support]
    if hasattr(op, "columns"):
        return np.asarray(op.columns(support))
    E = np.zeros((op.shape[1], support.size))
    E[support, np.arange(support.size)] = 1.0
    return np.asarray(op.matmat(E))


class _Products:
    """``A x`` and ``A^* r`` for an array or an operator, counting products."""

    def __init__(self, op, cplx):
        self.op = op
        self.count = 0
        self.dense = isinstance(op, np.ndarray)
        if self.dense:
            self._AH = op.conj().T if np.iscomplexobj(op) else op.T
        self.cplx = cplx
        self.dtype = np.complex128 if cplx else np.float64

    def A(self, x):
        self.count += 1
        if self.dense:
            return self.op @ x
        return np.asarray(self.op.matvec(x), dtype=self.dtype).ravel()

    def AH(self, r):  # noqa: N802 - maths notation
        self.count += 1
        if self.dense:
            return self._AH @ r
        return np.asarray(self.op.rmatvec(r), dtype=self.dtype).ravel()

    def AH2(self, R):  # noqa: N802
        """:math:`A^* R` for a few columns in one pass (counted as that many products)."""
        self.count += R.shape[1]
        if self.dense:
            return self._AH @ R
        return np.asarray(self.op.rmatmat(R), dtype=self.dtype)




def _homotopy_ws(P, op, y, *, sigma, tau, max_steps, tol, feas):
    r"""The BPDN path on a working set of columns, certified on the full dictionary.

    Column generation (the primal view of a cutting-plane method on the
    dual): solve BPDN exactly on a subset :math:`W` of the columns with
    :func:`_homotopy`, take its dual point :math:`w` (:math:`\|A_W^T w\|_\infty
    \le 1`), compute :math:`h = A^T w` on the **whole** dictionary (one
    product) and the relative duality gap of the full problem,

    .. math::

        \mathrm{gap} = \frac{\|c\|_1 - (y^T w - \sigma\|w\|) / \max(1, \|h\|_\infty)}
                             {\|c\|_1},

    which is a valid bound because :math:`w / \max(1, \|h\|_\infty)` is dual
    feasible for the full problem and :math:`c` (zero off :math:`W`) is
    primal feasible.  Stop when ``gap <= tol``; otherwise add the ``WS_ADD
    * m`` columns with the largest :math:`|h_j| > 1` (the violated dual
    constraints) and solve again.  Finite: every round adds a column whose
    constraint the current dual point violates, and with :math:`W` the
    whole dictionary the answer is the full path's.

    Why: on dictionaries that sample a continuous family finely (the SHRIMP
    q = 1 fourier dictionaries: 1,000 frequencies per input), the exact path
    crawls from each column to its neighbour (a join and a drop per grid
    point), about 3,000 breakpoints of one full product each on the
    140 x 20,000 f2 problem (12 s).  On an evenly spread sixteenth of the
    columns the path is ~10x shorter and each product ~10x cheaper; a few
    rounds of violated columns then close the gap to 1e-8 (0.5 s).  The
    initial set is spread over the dictionary rather than chosen by the
    correlations with ``y`` (the strong rule): on the f2 problem the most
    correlated columns are all near-constant low-frequency cosines, whose span
    misses ``y``, and the restricted path went through coefficients of 1e7.

    Parameters
    ----------
    tol : float
        Relative duality gap to reach.
    feas : float
        Residual bound accepted as feasible (``sigma`` plus rounding slack).

    Returns
    -------
    ``(coef, w, n_steps, status)`` as :func:`_homotopy`, or with status
    ``"feasible"``: no certificate, but the best feasible point of the rounds
    and its dual point (returned when the full path stalls).  The full path is
    run when the working set is not smaller than half the dictionary, when
    the dictionary is not an array or an operator with ``columns``, or when
    the rounds end without a certificate.
    """
    m, n = op.shape
    k0 = WS_SIZE * m
    if tau is not None or n <= 2 * k0 or not (isinstance(op, np.ndarray)
                                              or hasattr(op, "columns")):
        return _homotopy(P, op, y, sigma=sigma, tau=tau, max_steps=max_steps)
    W = np.unique(np.linspace(0, n - 1, k0).round().astype(np.int64))
    steps = 0
    best = None  # (l1, coef, w): the best feasible round, kept if all else fails
    for _ in range(WS_ROUNDS):
        A_W = np.ascontiguousarray(_columns(op, W))
        P_W = _Products(A_W, False)
        c, w, k, status = _homotopy(P_W, A_W, y, sigma=sigma, tau=None, max_steps=max_steps)
        steps += k
        P.count += P_W.count
        if status != "done" or w is None:
            break
        h = P.AH(w)
        l1 = float(np.abs(c).sum())
        rnorm = float(np.linalg.norm(y - A_W @ c))
        if l1 > 0.0 and rnorm <= feas:
            hmax = max(1.0, float(np.abs(h).max()))
            dual = (float(y @ w) - sigma * float(np.linalg.norm(w))) / hmax
            coef = np.zeros(n)
            coef[W] = c
            if (l1 - dual) / l1 <= tol:
                return coef, w, steps, "done"
            if best is None or l1 < best[0]:
                best = (l1, coef, w)
        h[W] = 0.0
        cand = np.flatnonzero(np.abs(h) > 1.0)
        if cand.size == 0:
            break
        k = min(cand.size, WS_ADD * m)
        add = cand[np.argpartition(-np.abs(h[cand]), k - 1)[:k]]
        W = np.sort(np.concatenate([W, add]))
    coef, w, k, status = _homotopy(P, op, y, sigma=sigma, tau=tau, max_steps=max_steps)
    if best is not None and (status != "done" or float(np.abs(coef).sum()) > best[0]):
        # the full path stalled too, or ended (uncertified) at a larger l1
        # norm than a feasible round -- on dictionaries with condition numbers
        # of 1e14 the path's support solves lose all accuracy: hand back the
        # best feasible point with its dual point, so the caller can report
        # its gap (the full path ended at ||c||_1 = 190 where a round had
        # found a feasible 1.98 on a SHRIMP f2 problem)
        return best[1], best[2], steps + k, "feasible"
    return coef, w, steps + k, status


class _Segment:
    r"""One segment of the LASSO path, as yielded by :func:`_lasso_segments`.

    On the segment :math:`\lambda \to \lambda - t` (``0 <= t <=
    min(t_join, t_drop)``): :math:`c_S(t) = c_S + t d`, :math:`r(t) = r - t v`,
    :math:`A^T r(t) = g - t a`.  After the generator is exhausted, ``end``
    says why: ``"zero"`` (lambda reached 0), ``"steps"`` (breakpoint cap) or
    ``"empty"`` (support emptied), with ``t`` the step taken on the last
    segment.  (A join with ``m`` columns in the support is refused as
    numerically dependent, not an end: stopping there would end the path, on
    duplicated columns, well above the requested residual.)
    """

    __slots__ = ("S", "z", "cS", "d", "r", "v", "a", "lam", "lam0", "t_join", "t_drop",
                 "steps", "end", "t")


def _lasso_segments(P, op, y, max_steps):
    r"""The exact LASSO path (homotopy / LARS-LASSO) as a generator of segments, real data.

    Follows :math:`c(\lambda) = \arg\min \tfrac12\|Ac - y\|^2 + \lambda\|c\|_1`
    from :math:`\lambda = \|A^T y\|_\infty` downwards.  On a segment with
    support :math:`S` and signs :math:`z`, :math:`c_S = R^{-1}(Q^T y) - \lambda d`
    with :math:`d = (A_S^T A_S)^{-1} z = R^{-1} R^{-T} z` (QR of :math:`A_S`
    kept up to date by column insertions and deletions), the residual is
    :math:`r = r_0 + \lambda v`, :math:`v = A_S d`, and the correlations
    :math:`g = A^T r` change linearly, so the next breakpoint (a column joins
    when :math:`|g_j| = \lambda`, leaves when :math:`c_j` hits 0) is found in
    closed form.  Every step recomputes :math:`c_S` and :math:`r` from the
    factorisation; the correlations are updated as :math:`g \leftarrow g - t
    A^T v` (one product with :math:`A^T` per breakpoint) and recomputed
    exactly every :data:`HOMOTOPY_REFRESH` breakpoints, so errors do not
    accumulate.

    Yields one :class:`_Segment` per breakpoint interval (the same object,
    updated); the consumer reads the segment, finds its own end event on it
    (a residual level, an l1 radius) and stops iterating when that comes
    before the next breakpoint.  Shared by the certified solver
    (:func:`_homotopy`) and :func:`rflite.bp.bpdn_path`.

    References
    ----------
    M. R. Osborne, B. Presnell, B. A. Turlach, A new approach to variable
    selection in least squares problems, IMA J. Numer. Anal. 20, 2000;
    B. Efron, T. Hastie, I. Johnstone, R. Tibshirani, Least angle regression,
    Ann. Statist. 32, 2004, Sec. 3.1 (the LASSO modification).
    """
    m, n = op.shape
    seg = _Segment()
    seg.end, seg.t, seg.steps = "zero", 0.0, 0
    g = P.AH(y)
    j = int(np.argmax(np.abs(g)))
    lam = lam0 = float(abs(g[j]))
    seg.lam0 = lam0
    if lam == 0.0:
        return
    S = [j]
    z = [1.0 if g[j] > 0 else -1.0]
    in_S = np.zeros(n, dtype=np.bool_)
    in_S[j] = True
    col = _columns(op, np.array([j]))
    Q, R = scipy.linalg.qr(col, mode="economic", check_finite=False)
    excluded = -1
    just_added = True
    steps = 0
    refused = []  # columns kept out as numerically in span(A_S), until the next drop
    while True:
        zS = np.asarray(z)
        u = scipy.linalg.solve_triangular(R, zS, trans="T", check_finite=False)
        d = scipy.linalg.solve_triangular(R, u, check_finite=False)
        if just_added and len(S) > 1 and d[-1] * z[-1] < 0:
            # the column that just joined would move against its sign: it
            # cannot be on the path (a joiner's coefficient grows with the sign
            # of its correlation, Efron et al. 2004, Lemma 5).  This happens
            # when it duplicates (up to sign) a column that just left: equal
            # correlations, the same direction that made the other leave.
            # Kept out like a numerically dependent column, until the next drop
            jr = S.pop()
            z.pop()
            Q, R = scipy.linalg.qr_delete(Q, R, len(S), which="col", overwrite_qr=True,
                                          check_finite=False)
            Q, R = Q[:, :R.shape[1]], R[:R.shape[1]]
            refused.append(jr)
            just_added = False
            continue
        qy = Q.T @ y
        cS = scipy.linalg.solve_triangular(R, qy, check_finite=False) - lam * d
        v = Q @ u
        r = (y - Q @ qy) + lam * v
        # g = A^T r changes linearly along a segment (g <- g - t a), so one
        # product a = A^T v per breakpoint suffices; g is recomputed exactly
        # every HOMOTOPY_REFRESH breakpoints to stop rounding drift.
        if steps and steps % HOMOTOPY_REFRESH == 0:
            g = P.AH(r)
        a = P.AH(v)
        t_join, j_join = _next_join(g, a, lam, in_S, excluded)
        with np.errstate(divide="ignore", invalid="ignore"):
            tdrop = np.where(cS * d < 0, -cS / d, np.inf)
        if just_added:  # its coefficient is 0 up to rounding: not a drop candidate
            tdrop[-1] = np.inf
        k_drop = int(np.argmin(tdrop))
        t_drop = float(tdrop[k_drop])
        seg.S, seg.z, seg.cS, seg.d, seg.r, seg.v, seg.a = np.asarray(S), zS, cS, d, r, v, a
        seg.lam, seg.t_join, seg.t_drop, seg.steps = lam, t_join, t_drop, steps
        yield seg
        t = min(t_join, t_drop)
        seg.t = min(t, lam)
        if t >= lam - 1e-12 * lam0:
            seg.end = "zero"
            return
        steps += 1
        seg.steps = steps
        if steps > max_steps:
            seg.end = "steps"
            return
        lam -= t
        g -= t * a
        if t_drop <= t_join:
            jd = S[k_drop]
            Q, R = scipy.linalg.qr_delete(Q, R, k_drop, which="col", overwrite_qr=True,
                                          check_finite=False)
            # a full (square Q) factorisation stays full: trim back to economic
            Q, R = Q[:, :R.shape[1]], R[:R.shape[1]]
            del S[k_drop], z[k_drop]
            in_S[jd] = False
            excluded = jd
            if refused:
                # the support's span changed: refused columns may join now
                in_S[np.asarray(refused)] = False
                refused.clear()
            just_added = False
            if not S:
                seg.end = "empty"
                return
        else:
            colj = _columns(op, np.array([j_join]))[:, 0]
            try:
                if len(S) >= m:
                    # m independent columns span R^m: every other column is
                    # in their span (an exact duplicate of a support column,
                    # whose correlation follows its twin's, joins here at t = 0)
                    raise np.linalg.LinAlgError("full support")
                Q, R = scipy.linalg.qr_insert(Q, R, colj, len(S), which="col",
                                              rcond=HOMOTOPY_RCOND,
                                              overwrite_qru=True, check_finite=False)
            except np.linalg.LinAlgError:
                # numerically in the span of A_S (near-duplicate random
                # features): keep it out of the path; the final duality-gap
                # check decides whether that was harmless
                in_S[j_join] = True
                refused.append(j_join)
                excluded = -1
                # S is unchanged: a column that joined just before is still
                # at 0 up to rounding (its drop is not a candidate yet), else
                # a rounding-level wrong sign dropped it at t ~ 1e-16 and the
                # path went on from a point that is not on it
                continue
            S.append(j_join)
            z.append(1.0 if g[j_join] > 0 else -1.0)
            in_S[j_join] = True
            excluded = -1
            just_added = True


def _homotopy(P, op, y, *, sigma, tau, max_steps):
    r"""BPDN / LASSO / basis pursuit by the exact LASSO path (:func:`_lasso_segments`).

    The path stops exactly where :math:`\|r\| = \sigma` (BPDN, a quadratic
    in the step), :math:`\|c\|_1 = \tau` (LASSO, linear) or :math:`\lambda
    = 0` (basis pursuit).

    Returns ``(coef, w, n_steps, status)``: ``w`` is the dual point
    :math:`r / \lambda` (for basis pursuit, :math:`\lambda \to 0`, the limit
    :math:`v = A_S d`, so that :math:`A_S^T w = z`); status ``"done"`` or
    ``"stalled"`` (rank deficiency or step cap: the caller falls back to SPG
    warm-started at ``coef``).
    """
    n = op.shape[1]
    coef = np.zeros(n)
    seg = None
    for seg in _lasso_segments(P, op, y, max_steps):
        lam, cS, d, r, v = seg.lam, seg.cS, seg.d, seg.r, seg.v
        # the end events
        t_stop = lam  # lambda -> 0: basis pursuit
        if tau is not None:
            zd = float(seg.z @ d)
            t_tau = (tau - float(np.abs(cS).sum())) / zd if zd > 0 else np.inf
            t_stop = min(t_stop, max(t_tau, 0.0))
        elif sigma > 0:
            # ||r - t v||^2 = sigma^2, r.v = lam z.d > 0: smaller root
            vv = float(v @ v)
            rv = float(r @ v)
            rr = float(r @ r)
            disc = rv * rv - vv * (rr - sigma**2)
            if rr <= sigma**2:
                t_stop = 0.0
            elif disc >= 0 and vv > 0:
                t_stop = min(t_stop, (rr - sigma**2) / (rv + math.sqrt(disc)))
        t = min(t_stop, seg.t_join, seg.t_drop)
        if t >= t_stop - 1e-12 * seg.lam0:  # events within rounding of the end are noise
            lam_f = lam - t_stop
            coef[seg.S] = cS + t_stop * d
            w = (r - t_stop * v) / lam_f if lam_f > 0 else v
            return coef, w, seg.steps, "done"
    if seg is None:  # A^T y = 0
        return coef, None, 0, "done"
    if seg.end == "steps":
        coef[seg.S] = seg.cS
    return coef, None, seg.steps, "stalled"


@njit(cache=True)
def _next_join(g, a, lam, in_S, excluded):  # pragma: no cover - jitted
    r"""Next join of the LASSO path: least :math:`t \ge 0`, :math:`|g_j - t a_j| = \lambda - t`.

    Solves :math:`g_j - t a_j = \pm(\lambda - t)` for every column outside the
    support (LARS, Efron et al. 2004, eq. 2.13): :math:`t = (\lambda - g_j) /
    (1 - a_j)` or :math:`(\lambda + g_j) / (1 + a_j)`, keeping the roots with a
    positive denominator; a column above :math:`\lambda` by more than rounding
    (``1e-11`` relative) joins at :math:`t = 0`.  Returns ``(t, j)``, ``(inf, -1)`` if none.

    ``excluded`` is the column that just left the support: at :math:`t = 0` it
    sits at :math:`|g_j| = \lambda`, so its same-sign root is the trivial
    :math:`t = 0`; only the opposite-sign root (numerator :math:`\approx
    2\lambda`) is a genuine later re-entry.  Skipping the column altogether
    lost that re-entry when the path ended on the next segment (a 2 x 2 basis
    pursuit whose solution changes sign ended on one column with a residual of
    8% of ``||y||``).
    """
    best = np.inf
    jbest = -1
    tiny = 1e-11 * lam
    for j in range(g.size):
        if in_S[j]:
            continue
        # the column just dropped may re-enter only through its opposite-sign root
        floor = lam if j == excluded else -np.inf
        gj = g[j]
        aj = a[j]
        den = 1.0 - aj
        if den > 0.0:
            num = lam - gj
            t = num / den if num >= 0.0 else (0.0 if num < -tiny else np.inf)
            if t < best and num > floor:
                best = t
                jbest = j
        den = 1.0 + aj
        if den > 0.0:
            num = lam + gj
            t = num / den if num >= 0.0 else (0.0 if num < -tiny else np.inf)
            if t < best and num > floor:
                best = t
                jbest = j
    return best, jbest


def _warmup():
    """Compile :func:`_next_join` for the dtypes the path passes (one signature)."""
    g = np.array([0.5, -0.25])
    _next_join(g, np.zeros(2), 1.0, np.zeros(2, dtype=np.bool_), -1)
