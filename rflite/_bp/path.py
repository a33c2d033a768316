r"""BPDN solutions along one homotopy path and SRFE's choice of eta (private machinery of :mod:`rflite.bp`).

:func:`bpdn_path` follows the LASSO homotopy (Osborne, Presnell and Turlach
2000) once and reads off the BPDN solution at every requested residual bound
:math:`\sigma`; :func:`_path_scores` scores an ``(eta, s)`` grid from one
such path per fold and output (with :func:`_threshold_refit`, the
thresholding and refit of the sparse random feature expansion of Hashemi,
Schaeffer, Shi, Topcu, Tran and Ward, 2023), stopping a fold's path once its validation error has passed its
minimum (:data:`PATH_STOP_FACTOR`, :data:`PATH_PATIENCE`).  Split out of
:mod:`rflite.bp`, which re-exports :func:`bpdn_path`, :class:`BPDNPath` and
the constants (setting them there reaches this module).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.sparse.linalg import LinearOperator

from rflite._bp.homotopy import _columns, _lasso_segments, _Products
from rflite._bp.spgl1 import HOMOTOPY_STEPS
from rflite._core.blas import blas_threads
from rflite._core.linalg import center_and_weight, min_norm_solve, ridge_on_columns
from rflite._core.validation import check_array, check_int


class BPDNPath(NamedTuple):
    """Result of :func:`bpdn_path`.

    Attributes
    ----------
    coefs : ndarray (N, n_sigmas)
        The BPDN solution at every ``sigma`` (in the order given).
    reached : ndarray of bool (n_sigmas,)
        False where the path ended (lambda = 0, or it stalled on a rank
        deficiency or the step cap) before its residual came down to
        ``sigma``; that column then holds the path's last point.
    n_steps : int
        Breakpoints followed.
    """

    coefs: np.ndarray
    reached: np.ndarray
    n_steps: int


def bpdn_path(A, y, sigmas, *, max_steps=None, callback=None) -> BPDNPath:
    r"""BPDN solutions for many ``sigma`` from one LASSO homotopy path (real data).

    .. math::

        c(\sigma) = \arg\min_c \|c\|_1 \quad \text{s.t.} \quad \|A c - y\|_2 \le \sigma

    The homotopy of :func:`bpdn` (Osborne, Presnell and Turlach 2000; Efron
    et al. 2004) follows :math:`c(\lambda)` from :math:`\lambda =
    \|A^T y\|_\infty` down; along it :math:`\|A c(\lambda) - y\|` decreases,
    and on each segment the residual :math:`r - t v` is affine in the step, so
    the point where it equals each requested ``sigma`` is found in closed form
    (the smaller root of a quadratic) -- every ``sigma`` costs nothing beyond
    the path down to the smallest one.  This is how :class:`SRFECV` scores
    its whole ``eta`` grid from one path per fold.

    Parameters
    ----------
    A : (m, N) real ndarray
    y : (m,) real array_like
    sigmas : sequence of float >= 0
        Residual bounds, any order.
    max_steps : int, optional
        Breakpoint cap (default ``HOMOTOPY_STEPS * m + 100``, as :func:`bpdn`).
    callback : callable, optional
        ``callback(k, coef) -> bool`` is called as the path reaches
        ``sigmas[k]`` (in decreasing order of sigma); returning True stops
        the path there (the remaining points are not reached).  The
        estimators stop a fold's path once its validation error has clearly
        passed its minimum.

    Returns
    -------
    BPDNPath

    Notes
    -----
    Uses the same QR updates and join kernel as the certified solver
    (:func:`rflite._bp.homotopy._homotopy`) but does not certify each point
    by its duality gap; the estimators refit their chosen ``eta`` with
    :func:`bpdn`.  Columns numerically in the span of the support are kept
    out, as there.
    """
    if not isinstance(A, LinearOperator):  # (an operator: products and columns only)
        A = check_array(A, "A", ndim=2)
    y = check_array(y, "y", ndim=1)
    m, n = A.shape
    if y.shape[0] != m:
        raise ValueError(f"A and y must have the same number of rows, got A {A.shape} and "
                         f"y {y.shape}")
    sig = np.asarray(sigmas, dtype=float).ravel()
    if sig.size == 0 or not np.all(np.isfinite(sig)) or np.any(sig < 0):
        raise ValueError(f"sigmas must be a non-empty sequence of finite values >= 0, "
                         f"got {sigmas!r}")
    if max_steps is None:
        max_steps = HOMOTOPY_STEPS * m + 100
    max_steps = check_int(max_steps, "max_steps", minimum=1)
    order = np.argsort(-sig, kind="stable")
    coefs = np.zeros((n, sig.size))
    reached = np.zeros(sig.size, dtype=bool)
    ynorm = float(np.linalg.norm(y))
    pending = list(order)
    while pending and sig[pending[0]] >= ynorm:
        reached[pending.pop(0)] = True  # c = 0 meets the bound
    if not pending:
        return BPDNPath(coefs, reached, 0)
    P = _Products(A, False)
    last = np.zeros(n)
    stopped = False
    seg = None
    for seg in _lasso_segments(P, A, y, max_steps):
        cS, d, r, v = seg.cS, seg.d, seg.r, seg.v
        t = min(seg.lam, seg.t_join, seg.t_drop)
        # every pending sigma met on this segment: ||r - t v||^2 = sigma^2
        vv, rv, rr = float(v @ v), float(r @ v), float(r @ r)
        while pending:
            s2 = sig[pending[0]] ** 2
            if rr <= s2:
                ts = 0.0
            else:
                disc = rv * rv - vv * (rr - s2)
                if disc < 0 or vv <= 0:
                    break
                ts = (rr - s2) / (rv + math.sqrt(disc))
            if ts > t:
                break
            k = pending.pop(0)
            coefs[seg.S, k] = cS + ts * d
            reached[k] = True
            if callback is not None and callback(int(k), coefs[:, k]):
                stopped = True
                break
        if stopped:
            break
        last[:] = 0.0
        last[seg.S] = cS + t * d
        if not pending:
            break
    # (otherwise the path ended: lambda reached 0 above the remaining sigmas,
    # the breakpoint cap, or a rank-deficient join)
    steps = 0 if seg is None else seg.steps
    if not stopped:
        for k in pending:  # not reached: the path's last point
            coefs[:, k] = last
    return BPDNPath(coefs, reached, steps)


def _threshold_refit(A, y, coef, s, refit, lam):
    """SRFE's post-processing of one BPDN solution: keep the ``s`` largest, refit."""
    support = np.flatnonzero(coef)
    if s is not None and support.size > s:
        keep = np.argpartition(-np.abs(coef[support]), s - 1)[:s]
        support = np.sort(support[keep])
        new = np.zeros_like(coef)
        new[support] = coef[support]
        coef = new
    if refit is not None and support.size:
        A_S = _columns(A, support)
        coef = np.zeros_like(coef)
        coef[support] = min_norm_solve(A_S, y) if refit == "lstsq" else \
            ridge_on_columns(A_S, y, lam)
    return coef


def _prepare(A, Y, w, *, fit_intercept, normalize):
    """Centre (weighted), scale rows by sqrt(w), normalise columns; in place on ``A``."""
    A, Y, a_mean, y_mean = center_and_weight(A, Y, w, fit_intercept=fit_intercept)
    scale = None
    if normalize:
        norms = np.linalg.norm(A, axis=0)
        scale = 1.0 / np.where(norms > 0, norms, 1.0)
        A *= scale
    return A, Y, a_mean, y_mean, scale


#: A fold's path stops once the validation MSE of ``PATH_PATIENCE``
#: consecutive ``eta`` values exceeds ``PATH_STOP_FACTOR`` times the best so
#: far (smaller ``eta`` only fits more noise); the points not reached score
#: ``inf`` on that fold.  One such point suffices: the grid's lower part is
#: geometric (about a factor 0.55 per point) and the homotopy's cost grows
#: as eta falls, so a second point cost most of the fit (Friedman-1, 1500 x
#: 20: 23 s with 2, 7 s with 1) while changing no choice of the default
#: ``SRFERegressor`` on Friedman-1 and the six shared sets, seeds 0-2 (21
#: problems, same ``eta_`` and test MSE).
PATH_STOP_FACTOR = 1.25


PATH_PATIENCE = 1


def _srfe_fold_scores(train, test, A, Y, w, etas, ss, fit_intercept, normalize, refit, lam):
    """Validation MSE of every ``(eta, s)`` point on one fold from one path per output."""
    from rflite._core.selection import weighted_mse

    w_tr = None if w is None else w[train]
    total = train.size if w_tr is None else float(w_tr.sum())
    At, Yc, a_mean, y_mean, scale = _prepare(
        A[train].copy(), Y[train], w_tr, fit_intercept=fit_intercept, normalize=normalize)
    A_te = A[test] if a_mean is None else A[test] - a_mean
    if scale is not None:
        A_te = A_te * scale
    w_te = None if w is None else w[test]

    def val_error(k, c):  # the real part: what predict returns (complex features)
        return weighted_mse(Y[test, k], (A_te @ c).real + y_mean[k], w_te)

    return _path_scores(At, Yc, total, etas, ss, refit, lam, val_error)


def _path_scores(At, Yc, total, etas, ss, refit, lam, val_error):
    """The grid errors of one fold from one homotopy path per output (grid-major list).

    ``At`` (array or operator) and ``Yc`` are the fold's centred, weighted and
    scaled training rows of total weight ``total``; ``val_error(k, c)`` is the
    validation MSE of output k's coefficients ``c`` (in ``At``'s columns).
    Shared by the in-memory folds and the Dask ones (:mod:`rflite._dask.srfe`).
    Complex ``At`` (``activation="exp"``) has no piecewise-linear path: the
    grid is solved point by point instead (:func:`_solve_grid`), with the
    same early stop.
    """
    n_s = len(ss)
    # per output and grid point: squared errors (inf where the path stopped)
    err = np.full((len(etas) * n_s, Yc.shape[1]), np.inf)
    etas = np.asarray(etas, dtype=float).reshape(len(etas), -1)  # (n_eta, 1 or n_targets)
    for k in range(Yc.shape[1]):
        sigmas = etas[:, min(k, etas.shape[1] - 1)] * math.sqrt(total)
        yk = Yc[:, k]
        state = {"best": np.inf, "bad": 0}

        def score(e, coef, yk=yk, k=k, state=state):
            for i, s in enumerate(ss):
                c = _threshold_refit(At, yk, coef, s, refit, lam)
                err[e * n_s + i, k] = val_error(k, c)
            cur = float(err[e * n_s:(e + 1) * n_s, k].min())
            state["bad"] = state["bad"] + 1 if cur > PATH_STOP_FACTOR * state["best"] else 0
            state["best"] = min(state["best"], cur)
            return state["bad"] >= PATH_PATIENCE

        if np.dtype(At.dtype).kind == "c":
            path = _solve_grid(At, yk, sigmas, score)
        else:
            with blas_threads(1):  # many small QR updates
                path = bpdn_path(At, yk, sigmas, callback=score)
        for e in np.flatnonzero(~path.reached):
            if not np.isfinite(err[e * n_s, k]) and np.any(path.coefs[:, e]):
                score(int(e), path.coefs[:, e])  # ended above sigma: its last point
    return list(err.ravel())  # grid-major, one error per output


def _solve_grid(A, y, sigmas, callback):
    r"""BPDN at every ``sigma`` (largest first) by certified solves, as a :class:`BPDNPath`.

    For complex dictionaries, whose BPDN path is piecewise smooth, not
    piecewise linear (:func:`bpdn_path` is real only): one solve of
    :func:`rflite.bp.bpdn` per grid point, from the largest ``sigma`` down,
    stopping when ``callback(index, coef)`` returns True, as the real path
    does.  The grid follows one solution path
    (``rflite._bp.continuation._continuation``, the dual barrier only where it
    fails): each grid point resumes the path where the previous one left it
    instead of starting a solve from scratch.  Each solve is certified or says why not (its
    ``stop_reason``); a point whose ``sigma`` is below the least-squares
    residual is not reached, and the smaller ones are not tried.
    """
    from rflite._bp.continuation import PathPoint
    from rflite._bp.spgl1 import OPT_TOL
    from rflite._bp.solve import _check_problem, _options, _solve

    op, yy, cplx = _check_problem(A, y)
    opts = _options(op, OPT_TOL, None, None, True)
    resume = PathPoint()
    n = A.shape[1]
    coefs = np.zeros((n, len(sigmas)), dtype=np.result_type(A.dtype, np.complex128))
    reached = np.zeros(len(sigmas), dtype=bool)
    steps = 0
    for e in np.argsort(-np.asarray(sigmas), kind="stable"):
        # (an unreachable sigma ends the grid here; the final fit warns)
        res = _solve(op, yy, cplx, sigma=float(sigmas[e]), tau=None, resume=resume, **opts)
        steps += res.n_iter
        coefs[:, e] = res.coef
        if res.stop_reason == "sigma_unreachable":
            break
        reached[e] = True
        if callback is not None and callback(int(e), res.coef):
            break
    return BPDNPath(coefs, reached, steps)

