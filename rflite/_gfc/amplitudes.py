r"""The amplitude fit of a GFC pass (private machinery of :mod:`rflite.greedy`).

Lines 5-7 of Oglic and Gaertner's Algorithm 2: the ridge amplitudes of all
features constructed so far on the design ``[1, cos(X W^T), sin(X W^T)]``
(:func:`gfc_design`), the ridge parameter :math:`\nu` by cross-validation
(:func:`ridge_cv`; one eigendecomposition per fold serves every :math:`\nu`),
with ``stopping="cv"`` also the number of greedy steps kept per descent
(:func:`_choose_steps_nu`), and the cut-off of features below ``eta``.
:mod:`rflite.greedy` re-exports the public names.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from rflite._core.linalg import ridge_solve
from rflite._core.selection import choose
from rflite._core.validation import check_array
from rflite._gfc.descent import _check_folds
from rflite.features import FeatureMap

__all__ = ["NU_GRID", "gfc_design", "ridge_cv"]

#: Ridge parameters :math:`\nu` (penalty :math:`\nu \|a\|^2`) cross-validated
#: for the amplitudes of GFC and of the random-Fourier baselines (Appendix C.2).
NU_GRID = np.logspace(-3, 2, 10)

#: Rule choosing :math:`\nu` over explicit ``cv`` folds (:func:`rflite._core.selection.choose`).
#: "1se" over-smooths where the signal is strong (housing) and gains little
#: where it is weak (insulin, where it only approaches the mean predictor).
NU_RULE = "min"


def _amplitude_fit(X, y, weights, new, nu, cv_folds, splits, nu_grid, eta, stopping="eps"):
    """Lines 5-7 of a pass: the amplitudes of all features, nu, the cut-off.

    With ``stopping="cv"`` (and ``nu`` not given) only the first s steps of
    every descent of the pass enter, s chosen with nu (:func:`_choose_steps_nu`).
    Returns ``(weights, amplitudes, model values, nu, constructed, pruned,
    fold errors of the kept features or None, s or None)``.

    Runs with one BLAS thread (the caller's limit), as the descents do: its
    Grams and eigendecompositions are a few hundred columns wide, where
    OpenBLAS's threads cost more in start-up and synchronisation than they
    save (several times slower on a 2-core machine).
    """
    A = gfc_design(X, weights)
    cv_mse = steps = None
    n_new = sum(len(w) for w in new)
    if nu is not None:
        nu_used = nu
    elif stopping == "cv":
        step = _step_index(weights.shape[0], new)
        prefixes = [_prefix_columns(step, s) for s in range(1, max(len(w) for w in new) + 1)]
        if splits is None:  # gfc's random folds: the lowest mean error, as _best_nu
            folds = [(np.flatnonzero(cv_folds != j), np.flatnonzero(cv_folds == j))
                     for j in range(int(cv_folds.max()) + 1)]
            tables = [t.mean(axis=0) for t in _ridge_cv_prefixes(A, y, nu_grid, folds,
                                                                 prefixes)]
            base = None
        else:
            tables = _ridge_cv_prefixes(A, y, nu_grid, splits, prefixes)
            base = [float(np.mean((y[te] - y[tr].mean()) ** 2)) for tr, te in splits]
        steps, nu_used = _choose_steps_nu(tables, base, nu_grid)
        cv_mse = None if splits is None else tables[steps - 1]
        kept = step < steps
        if not kept.all():
            weights, A = weights[kept], A[:, prefixes[steps - 1]]
    elif splits is None:
        nu_used = _best_nu(A, y, nu_grid, cv_folds)
    else:
        cv_mse = _ridge_cv_splits(A, y, nu_grid, splits)
        base = [float(np.mean((y[te] - y[tr].mean()) ** 2)) for tr, te in splits]
        nu_used = _choose_nu(cv_mse, base, nu_grid)
    a = ridge_solve(A.T @ A, A.T @ y, nu_used)
    L = weights.shape[0]
    keep, cols = _kept_columns(a, L, eta)
    # line 7: the model on the kept features (pruned amplitudes are below eta)
    f = A[:, cols] @ a[cols]
    return (weights[keep], a[cols], f, nu_used, n_new, int(L - keep.sum()), cv_mse, steps)


def _step_index(n_weights, new) -> np.ndarray:
    """Greedy step of every spectrum of ``vstack([earlier, *new])``: -1 for the
    earlier passes' (always kept), 0, 1, ... along each descent of ``new``."""
    n_old = n_weights - sum(len(w) for w in new)
    return np.concatenate([np.full(n_old, -1, np.int64)]
                          + [np.arange(len(w), dtype=np.int64) for w in new])


def _prefix_columns(step, s) -> np.ndarray:
    """Columns of ``[1, cos, sin]`` (:func:`gfc_design`) of the spectra with ``step < s``."""
    idx = np.flatnonzero(step < s)
    return np.concatenate([[0], 1 + idx, 1 + step.size + idx])


def _choose_steps_nu(tables, baseline, nu_grid):
    r"""``(s, nu)`` of ``stopping="cv"`` from the fold errors of every prefix.

    ``tables[s - 1]`` holds the errors of the features of the first s steps
    of every descent: ``(n_folds, len(nu_grid))`` per fold with explicit
    folds (``baseline`` their mean-prediction errors), chosen by
    :data:`NU_RULE` of :func:`rflite._core.selection.choose` with the grid ordered from
    the simplest model (fewer steps, then larger :math:`\nu`), the rule that
    chooses :math:`\nu` alone (:func:`_choose_nu`); or ``(len(nu_grid),)``
    mean errors over :func:`~rflite.greedy.gfc`'s random folds (``baseline`` None), the
    lowest (fewer steps, then smaller :math:`\nu`, on ties, as
    :func:`_best_nu`).
    """
    n_nu = nu_grid.size
    if baseline is None:
        flat = np.concatenate([np.asarray(t, dtype=float) for t in tables])
        flat = np.where(np.isfinite(flat), flat, np.inf)
        s, j = divmod(int(np.argmin(flat)), n_nu)
        return s + 1, float(nu_grid[j])
    c = choose(np.concatenate([t[:, ::-1] for t in tables], axis=1), rule=NU_RULE,
               baseline=baseline)
    s, j = divmod(c.index, n_nu)
    return s + 1, float(nu_grid[n_nu - 1 - j])


def _choose_nu(cv_mse, baseline, nu_grid) -> float:
    """:data:`NU_RULE` over the folds' errors ``(n_folds, len(nu_grid))``: the
    one-prefix case of :func:`_choose_steps_nu` (largest nu first)."""
    return _choose_steps_nu([cv_mse], baseline, nu_grid)[1]


def _kept_columns(a, L, eta):
    """Line 6: features with amplitude at least ``eta`` (at least one): ``(keep, cols)``,
    ``cols`` the kept columns of ``[1, cos, sin]``."""
    amp = np.hypot(a[1:L + 1], a[L + 1:])
    keep = amp >= eta
    if not keep.any():
        keep[np.argmax(amp)] = True
    return keep, np.concatenate([[0], 1 + np.flatnonzero(keep), 1 + L + np.flatnonzero(keep)])


def gfc_design(X, weights) -> np.ndarray:
    """Design matrix ``[1, cos(X W^T), sin(X W^T)]`` (m x (2L + 1)) of GFC features."""
    X = check_array(X, "X", ndim=2)
    weights = check_array(weights, "weights", ndim=2, min_rows=0)
    if weights.shape[1] != X.shape[1]:
        raise ValueError(f"weights must have {X.shape[1]} columns, got shape {weights.shape}")
    Z = X @ weights.T
    return np.hstack([np.ones((X.shape[0], 1)), np.cos(Z), np.sin(Z)])


def ridge_cv(A, y, nus, folds) -> np.ndarray:
    r"""k-fold cross-validated MSE of ridge regression for every :math:`\nu` in ``nus``.

    For fold :math:`j`, :math:`a_j(\nu) = (A_{-j}^\top A_{-j} + \nu I)^{-1}
    A_{-j}^\top y_{-j}` from one eigendecomposition of the training Gram
    :math:`A^\top A - A_j^\top A_j`, so each extra :math:`\nu` costs
    :math:`O(n^2)`.  Returns the mean over folds of the held-out MSE,
    shape ``(len(nus),)``.
    """
    A = check_array(A, "A", ndim=2)
    y = check_array(y, "y", ndim=1)
    nus = np.atleast_1d(check_array(nus, "nus", ndim=(0, 1)))
    if np.any(nus <= 0):
        raise ValueError(f"nus must be positive, got {nus}")
    folds, k = _check_folds(folds, A.shape[0])
    G = A.T @ A
    r = A.T @ y
    err = np.zeros(nus.size)
    for j in range(k):
        idx = np.flatnonzero(folds == j)
        Aj, yj = A[idx], y[idx]
        e, V = scipy.linalg.eigh(G - Aj.T @ Aj, check_finite=False)
        e = np.maximum(e, 0.0)
        proj = V.T @ (r - Aj.T @ yj)
        pred = (Aj @ V) @ (proj[:, None] / (e[:, None] + nus[None, :]))
        err += np.mean((pred - yj[:, None]) ** 2, axis=0)
    return err / k


def _ridge_cv_prefixes(A, y, nus, splits, prefixes) -> list:
    """:func:`_ridge_cv_splits` on the columns of every prefix (``stopping="cv"``).

    One training Gram matrix per fold serves every prefix, whose own Gram is
    its principal block (for all columns: the matrix itself, so those errors
    are :func:`_ridge_cv_splits`'s); no copy of ``A``'s columns is kept.
    Returns one ``(n_folds, len(nus))`` array per prefix.
    """
    out = [np.empty((len(splits), nus.size)) for _ in prefixes]
    for k, (tr, te) in enumerate(splits):
        At = A[tr]
        G, r, Ae = At.T @ At, At.T @ y[tr], A[te]
        del At
        for table, cols in zip(out, prefixes):
            full = cols.size == A.shape[1]
            e, V = scipy.linalg.eigh(G if full else G[np.ix_(cols, cols)], check_finite=False)
            e = np.maximum(e, 0.0)
            proj = V.T @ (r if full else r[cols])
            pred = ((Ae if full else Ae[:, cols]) @ V) @ (proj[:, None]
                                                         / (e[:, None] + nus[None, :]))
            table[k] = np.mean((pred - y[te][:, None]) ** 2, axis=0)
    return out


def _ridge_cv_splits(A, y, nus, splits) -> np.ndarray:
    """Validation MSE ``(n_folds, len(nus))`` of ridge on ``A`` for explicit splits.

    As :func:`ridge_cv` (one eigendecomposition per fold serves every
    :math:`\nu`), with any ``(train, test)`` pairs instead of fold ids: the
    one-prefix case of :func:`_ridge_cv_prefixes` (all columns).
    """
    return _ridge_cv_prefixes(A, y, nus, splits, [np.arange(A.shape[1])])[0]


def _fourier_map(weights) -> FeatureMap:
    L, d = weights.shape
    supports = np.tile(np.arange(d, dtype=np.int64), (L, 1))
    return FeatureMap(supports, weights, np.zeros(L), "fourier", d)


def _best_nu(A, y, nus, folds) -> float:
    return float(nus[np.argmin(ridge_cv(A, y, nus, folds))])
