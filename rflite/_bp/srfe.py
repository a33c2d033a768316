"""SRFE on a feature matrix: the BPDN solve, thresholding and refit behind :mod:`rflite.bp`.

:func:`_srfe` is :func:`rflite.bp.srfe` without its warning (shared with
:class:`rflite.bp.SRFERegressor`); :func:`_srfe_by_path` is the final fit of
the automatic ``eta`` choice, by the same homotopy path the choice scored;
the estimator's parameter checks and per-output final fits are here too.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from rflite._bp.homotopy import _columns
from rflite._bp.path import _threshold_refit, bpdn_path
from rflite._bp.solve import _check_problem, _options, _solve
from rflite._bp.spgl1 import BP_TOL, FEAS_TOL, L1Result, _bpdn_gap, _l1
from rflite._bp.warn import _warn_uncertified, _warn_unreachable
from rflite._core.linalg import min_norm_solve, ridge_on_columns
from rflite._core.selection import HOLDOUT_FRACTION
from rflite._core.validation import check_int, check_real


class SRFEResult(NamedTuple):
    """Result of :func:`srfe`.

    Attributes
    ----------
    coef : ndarray (N,)
        Final coefficients: the BPDN solution, thresholded to its ``s`` largest
        entries and refitted when asked.
    support : ndarray of int
        Sorted indices of the kept columns.
    bpdn : L1Result
        The basis pursuit denoising solve before thresholding.
    """

    coef: np.ndarray
    support: np.ndarray
    bpdn: L1Result


def _srfe(A, y, *, eta, s, refit, lam, tol, max_iter, polish) -> SRFEResult:
    """:func:`srfe` without the warning (shared with :class:`SRFERegressor`)."""
    op, yv, cplx = _check_problem(A, y)
    eta = check_real(eta, "eta", minimum=0.0)
    if refit not in (None, "lstsq", "ridge"):
        raise ValueError(f"refit must be None, 'lstsq' or 'ridge', got {refit!r}")
    lam = check_real(lam, "lam", minimum=0.0)
    m, n = op.shape
    if s is not None:
        s = check_int(s, "s", minimum=1, maximum=n)
    res = _solve(op, yv, cplx, sigma=eta * math.sqrt(m), tau=None,
                 **_options(op, tol, max_iter, None, polish))
    coef = res.coef.copy()
    support = np.flatnonzero(coef)
    if s is not None and support.size > s:
        keep = np.argpartition(-np.abs(coef[support]), s - 1)[:s]
        support = np.sort(support[keep])
        coef = np.zeros_like(coef)
        coef[support] = res.coef[support]
    if refit is not None and support.size:
        A_S = _columns(op, support)
        coef = np.zeros_like(coef)
        if refit == "lstsq":
            coef[support] = min_norm_solve(A_S, yv)
        else:
            coef[support] = ridge_on_columns(A_S, yv, lam)
    return SRFEResult(coef, support, res)


#: Default ``eta`` grid of the automatic choice, as fractions of the (weighted)
#: standard deviation of the training targets, largest (simplest) first.
#: Finer near the top, where the noisy real sets choose (their noise is a
#: large share of the variance of y); 1.0 itself would give c = 0.
ETA_FRACTIONS = tuple(np.concatenate([np.linspace(0.95, 0.5, 10),
                                      np.logspace(np.log10(0.4), -3, 11)]))


#: Share of the distinct rows held out by ``SRFERegressor(eta="auto")``.
VALIDATION_FRACTION = HOLDOUT_FRACTION


def _srfe_by_path(A, y, eta, s, refit, lam, *, certify=None) -> SRFEResult:
    """SRFE at one ``eta`` by :func:`bpdn_path` (the final fit of the automatic choice).

    The same homotopy point the choice scored, without :func:`bpdn`'s SPGL1
    fallback (which can run ``max_iter`` iterations on tall, badly
    conditioned matrices: 220 s on a 2000 x 1000 fold of ccpp).

    ``certify`` (a dict of :func:`_srfe`'s ``tol`` and ``max_iter``; the
    in-memory estimator passes it): the point's relative duality gap is
    computed (one product with :math:`A^T`); within ``tol`` the result is
    certified (``stop_reason="homotopy"``), otherwise -- the path ended
    before ``sigma`` or its point is not optimal -- the certified solver
    :func:`_srfe` refits at this ``eta``.  ``None`` (the Dask fit, where the
    product is one more pass): ``stop_reason`` is ``"path"`` (or
    ``"sigma_unreachable"`` when the path ended above ``sigma``),
    ``duality_gap`` NaN, not certified.
    """
    m = A.shape[0]
    sigma = eta * math.sqrt(m)
    path = bpdn_path(A, y, [sigma])
    coef = path.coefs[:, 0]
    r = y - A @ coef
    rnorm = float(np.linalg.norm(r))
    l1 = _l1(coef)
    if certify is not None:
        feasible = rnorm <= sigma * (1.0 + FEAS_TOL) + BP_TOL * float(np.linalg.norm(y))
        gap = _bpdn_gap(y, r, float(np.abs(A.T @ r).max(initial=0.0)), l1, sigma)
        if not (path.reached[0] and feasible and gap <= certify["tol"]):
            return _srfe(A, y, eta=eta, s=s, refit=refit, lam=lam, tol=certify["tol"],
                         max_iter=certify["max_iter"], polish=True)
        res = L1Result(coef, rnorm, l1, float(gap), path.n_steps, 2 * path.n_steps + 2, l1,
                       "homotopy")
    else:
        reason = "path" if path.reached[0] else "sigma_unreachable"
        res = L1Result(coef, rnorm, l1, math.nan, path.n_steps, 2 * path.n_steps + 1, l1,
                       reason)
    final = _threshold_refit(A, y, coef, s, refit, lam)
    return SRFEResult(final, np.flatnonzero(final), res)


def _check_eta(est, n_columns):
    """``(eta, search)`` of an SRFE estimator: a fixed ``eta`` (``search`` None) or the
    validated search ``(eta grid, is_fraction, s grid, rule)`` (``eta`` None)."""
    search = est._search()
    if search is None:
        if isinstance(est.eta, str):
            raise ValueError(f"eta must be a float >= 0 or 'auto', got {est.eta!r}")
        return check_real(est.eta, "eta", minimum=0.0), None
    from rflite._core.parallel import check_executor
    from rflite._core.selection import check_grid

    grid, is_fraction, s_grid = search
    grid = check_grid(grid, "etas", order="descending").astype(float)
    s_grid = [None if s is None else check_int(s, "s", minimum=1, maximum=n_columns)
              for s in s_grid]
    rule = est._rule()
    check_executor(est._n_jobs(), "n_jobs")  # (on Dask: validated, unused)
    return None, (grid, is_fraction, s_grid, rule)


def _check_post(est, n_columns):
    """Validate the thresholding and refit parameters (``s``, ``refit``, ``lam``)."""
    if est.s is not None and not isinstance(est.s, (list, tuple, np.ndarray)):
        check_int(est.s, "s", minimum=1, maximum=n_columns)
    if est.refit not in (None, "lstsq", "ridge"):
        raise ValueError(f"refit must be None, 'lstsq' or 'ridge', got {est.refit!r}")
    check_real(est.lam, "lam", minimum=0.0)


def _eta_grids(grid, is_fraction, Y, w):
    """The ``eta`` grid of the automatic choice, one column per output of ``Y``."""
    if is_fraction:
        # per output: each output's grid is relative to its own spread
        yc = Y - (Y.mean(axis=0) if w is None else (w @ Y) / w.sum())
        sd = np.sqrt(np.mean(yc ** 2 if w is None
                             else (w[:, None] * yc ** 2) / w.mean(), axis=0))
        grid = np.outer(grid, np.where(sd > 0, sd, 1.0))
    else:
        grid = np.repeat(grid[:, None], Y.shape[1], axis=1)
    return grid


def _final_fits(est, A, Yc, chosen, total, scale, by_path, progress):
    """The final SRFE fit of every output of :class:`rflite.bp.SRFERegressor` at its
    chosen ``(eta, s)``: ``(supports, coefs, results)``, the coefficients unscaled.

    ``total`` is the sum of the sample weights; ``by_path`` fits by the homotopy path
    the automatic choice scored (:func:`_srfe_by_path`).  The warnings point at the
    caller of ``fit``.
    """
    m = A.shape[0]
    supports, coefs, results = [], [], []
    for k in range(Yc.shape[1]):
        eta, s_final = chosen[k]
        # sigma = eta * sqrt(rows) in the solver: make it eta * sqrt(sum w)
        eta_eff = eta * math.sqrt(total / m)
        if by_path:
            res = _srfe_by_path(A, Yc[:, k], eta_eff, s_final, est.refit, est.lam,
                                certify=dict(tol=est.tol, max_iter=est.max_iter))
        else:
            res = _srfe(A, Yc[:, k], eta=eta_eff, s=s_final, refit=est.refit,
                        lam=est.lam, tol=est.tol, max_iter=est.max_iter, polish=True)
        _warn_unreachable(res.bpdn, eta * math.sqrt(total), total)
        _warn_uncertified(est, res.bpdn, eta_eff * math.sqrt(m))
        coef = res.coef if scale is None else res.coef * scale
        support = np.flatnonzero(coef)
        results.append(res)
        supports.append(support)
        coefs.append(coef[support])
        progress.line(f"final fit, output {k + 1}/{Yc.shape[1]}: "
                      f"{res.bpdn.stop_reason}, {support.size} nonzero", level=2)
    return supports, coefs, results
