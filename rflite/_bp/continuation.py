r"""Complex BPDN by following its solution path down from ``sigma = ‖y‖``.

Private module of :mod:`rflite.bp`, the finish of :mod:`rflite._bp.socp`'s
barrier where it stalls: ill-conditioned dictionaries whose solutions have
large l1 norms, whose dual optimum lies far out along directions the barrier
barely curves.  The path is piecewise smooth, each piece the solution of the
KKT system of a fixed support (:func:`rflite._bp.socp._kkt_newton`) as
``sigma`` decreases; columns join and leave where the dual conditions say.
:class:`PathPoint` carries the lowest accepted point from one ``sigma`` of a
decreasing grid to the next, so that a grid follows one path.
"""

from __future__ import annotations

import math

import numpy as np

from rflite._bp.socp import _kkt_newton, _kkt_tangent
from rflite._core.blas import blas_threads
from rflite._core.linalg import min_norm_solve

#: :func:`_continuation`: Newton solves allowed, first ``sigma`` below
#: ``‖y‖`` (relative), and the step (relative to ``sigma``) at which a
#: support change is made instead of halving further.
CONT_SOLVES = 5000
CONT_START = 1e-6
CONT_EVENT = 1e-6
#: ... support changes tried at one ``sigma``, and columns joining at once.
CONT_TRIES = 8
CONT_JOIN = 1
#: ... and the largest support it follows (Newton systems of 2k + 1 reals).
CONT_MAX_SUPPORT = 300


def _continuation(P, op, y, sigma, columns, h_full, max_solves=CONT_SOLVES, resume=None):
    r"""Complex BPDN by following its solution path down from ``sigma = ‖y‖`` (homotopy).

    The real LASSO homotopy's path is piecewise linear; the complex one is
    piecewise smooth, each piece the solution of the KKT system of a fixed
    support (:func:`_kkt_newton`) as ``sigma`` decreases.  Starting from the
    one-column solution just below :math:`\|y\|` (the column of the largest
    :math:`|a_j^* y|`, coefficient in the phase of :math:`a_j^* y`), each
    step solves at a smaller ``sigma`` from the point the path's tangent
    predicts (:func:`_kkt_tangent`, the Euler predictor).  A point is
    accepted only when it is optimal: Newton converged on the support
    (:func:`_kkt_converged`) and :math:`|a_j^* r| \le \lambda` off it.
    Otherwise, at the same ``sigma``, coefficients at rounding level leave,
    the most violating columns join (with a tiny coefficient in the phase of
    :math:`a_j^* r`), and, when Newton fails where the tangent takes a
    coefficient through 0 within the step, or on a step already below
    :data:`CONT_EVENT`, that (the smallest) coefficient leaves; failing that
    the step is halved, and doubled after each accepted one.  Used where
    the dual barrier stalls (ill-conditioned dictionaries whose solutions
    have large l1 norms).  ``resume`` (a :class:`PathPoint`, for a grid of
    decreasing ``sigma`` on one dictionary) starts from the lowest point of
    an earlier call above ``sigma`` instead of from :math:`\|y\|`, and
    keeps this call's last accepted point.  Returns the coefficients at
    ``sigma`` or ``None`` (budget of ``max_solves`` Newton solves spent, a
    step below rounding, a support above :data:`CONT_MAX_SUPPORT`, or least
    squares on every column above ``sigma``); the caller certifies.
    """
    with blas_threads(1):  # many small Newton systems: BLAS threads only thrash
        return _follow_path(P, op, y, sigma, columns, h_full, max_solves,
                            resume if resume is not None else PathPoint())


class PathPoint:
    """The lowest accepted point of :func:`_continuation` (support, coefficients,
    their columns, sigma and the path's tangent there); empty until one is
    accepted."""

    def __init__(self):
        self.point = None

    def start(self, sigma):
        """``(S, c_S, A_S, s_cur, tangent)`` to start from above ``sigma``, or None."""
        return self.point if self.point is not None and self.point[3] > sigma else None


def _path_top(op, y, columns, h_full):
    r"""The one-column solution just below :math:`\|y\|` (the path's first point)."""
    ynorm = float(np.linalg.norm(y))
    j0 = int(np.argmax(np.abs(h_full)))
    S = np.array([j0])
    A_S = np.asarray(columns(op, S), dtype=y.dtype)
    a = A_S[:, 0]
    hj, an2 = complex(h_full[j0]), float(np.vdot(a, a).real)
    s_cur = ynorm * (1.0 - CONT_START)
    # |y - beta u a|^2 = s^2 with u the phase of a^* y: the smaller root
    disc = abs(hj) ** 2 - an2 * (ynorm**2 - s_cur**2)
    beta = (abs(hj) - math.sqrt(max(disc, 0.0))) / an2
    return S, np.array([beta * hj / abs(hj)], dtype=y.dtype), A_S, s_cur, None


def _follow_path(P, op, y, sigma, columns, h_full, max_solves, resume):
    """:func:`_continuation`'s loop."""
    m, n = op.shape
    S, c_S, A_S, s_cur, tangent = resume.start(sigma) or _path_top(op, y, columns, h_full)
    step = s_cur - sigma
    solves = 0
    while solves < max_solves:
        s_new = max(sigma, s_cur - step)
        S_t, c_t, A_t = S, c_S, A_S
        # Euler predictor along the current support's path; a coefficient it
        # takes through 0 within the step marks a leave event (kept at its
        # current value for Newton's start)
        leaving = None
        if tangent is not None:
            pred = c_S + (s_new - s_cur) * tangent
            leaving = (pred.real * c_S.real + pred.imag * c_S.imag) <= 0.0
            c_t = np.where(leaving, c_S, pred)
        dropped = False
        accepted = None
        for _ in range(CONT_TRIES):
            solves += 1
            c_new = _kkt_newton(A_t, y, c_t, sigma=s_new)
            ok = c_new is not None and _kkt_converged(A_t, y, c_new, s_new)
            if not ok:
                if S_t.size == n and _ls_residual(A_t, y) > sigma:
                    return None  # every column in: least squares cannot reach sigma
                # a predicted leave event is tried at once, whatever the step
                # (halving towards a coefficient whose modulus shrinks ever
                # more slowly crawled: 3,046 solves where 785 do); the
                # accepted point is checked for optimality all the same
                event = (S_t is S  # (still the accepted support, the prediction's)
                         and leaving is not None and leaving.any() and S_t.size >= 2)
                if dropped or S_t.size < 2 or not (event or step <= CONT_EVENT * s_cur):
                    break
                keep = np.ones(S_t.size, dtype=bool)
                keep[int(np.argmin(np.where(leaving, np.abs(c_S), np.inf)) if event
                         else np.argmin(np.abs(c_t)))] = False
                S_t, c_t, A_t, dropped = S_t[keep], c_t[keep], A_t[:, keep], True
                continue
            mod = np.abs(c_new)
            zero = mod <= 1e-10 * mod.max()
            if zero.any():
                S_t, c_t, A_t = S_t[~zero], c_new[~zero], A_t[:, ~zero]
                continue
            r = y - A_t @ c_new
            h = P.AH(r)
            lam = float(np.abs(h[S_t]).mean())
            h[S_t] = 0.0
            viol = np.flatnonzero(np.abs(h) > lam * (1.0 + 1e-9))
            if viol.size == 0:
                accepted = c_new
                break
            if S_t.size + 1 > min(2 * m, CONT_MAX_SUPPORT):
                return None  # (2k+1)-square Newton systems: leave it to SPGL1
            add = viol[np.argsort(-np.abs(h[viol]))[:CONT_JOIN]]
            S_t = np.concatenate([S_t, add])
            A_t = np.column_stack([A_t, np.asarray(columns(op, add), dtype=y.dtype)])
            c_t = np.concatenate([c_new, 1e-9 * mod.max() * h[add] / np.abs(h[add])])
        if accepted is not None:
            S, c_S, A_S, s_cur = S_t, accepted, A_t, s_new
            tangent = _kkt_tangent(A_S, y, c_S, s_cur)
            resume.point = (S, c_S, A_S, s_cur, tangent)
            if s_cur <= sigma:
                coef = np.zeros(n, dtype=y.dtype)
                coef[S] = c_S
                return coef
            step *= 2.0
        elif step <= 1e-14 * s_cur:
            return None
        else:
            step *= 0.5
    return None


def _ls_residual(A_S, y):
    """Least-squares residual norm of ``y`` on the columns ``A_S``."""
    return float(np.linalg.norm(y - A_S @ min_norm_solve(A_S, y)))


def _kkt_converged(A_S, y, c_S, sigma):
    r"""Whether ``c_S`` solves the support's BPDN KKT system to 1e-8 (relative),
    or to its rounding floor where that is higher.

    The floor: :math:`r = y - A_S c` carries an error up to
    :math:`\epsilon \sum_j \|a_j\| |c_j|`, so :math:`A_S^* r` one up to
    that times :math:`\max_j \|a_j\|`; relative to :math:`\lambda` this
    worst case overstates the actual rounding 30-100x, and a
    tenth of it is accepted.  On 120 x 200 exponential features at
    ``eta`` = 0.05 (l1 norm 5e4) Newton's best was 1.1e-8 .. 1.9e-8 there,
    the path stalled and the solve ended uncertified.  Every point the path
    returns is certified on the whole dictionary all the same.
    """
    r = y - A_S @ c_S
    g = A_S.conj().T @ r
    lam = float(np.abs(g).mean())
    if not (np.all(np.isfinite(g)) and lam > 0.0):
        return False
    kkt = float(np.abs(g - lam * c_S / np.abs(c_S)).max()) / lam
    norms = np.linalg.norm(A_S, axis=0)
    floor = np.finfo(float).eps * float(norms @ np.abs(c_S)) * float(norms.max()) / lam
    return (kkt <= max(1e-8, 0.1 * floor)
            and abs(float(np.linalg.norm(r)) - sigma) <= 1e-8 * sigma)
