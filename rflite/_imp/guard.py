r"""SHRIMP's refit guard and held-out scoring (private machinery of :mod:`rflite.imp`).

The paper's minimum-norm refit :math:`c = A_S^+ y` can be out of proportion
to the targets on real data: :func:`_out_of_proportion` detects
it (amplification :math:`\|c\|_2 \sigma_{\max}(A_S) / \|y\|_2` above
:data:`AMPLIFICATION_MAX`, or, for bounded features, a worst-case size
:math:`\sum_j |c_j|(1 + |\bar a_j|)` above :data:`GUARD_RATIO` target
ranges) and :func:`_guarded_refit` replaces it by a ridge refit whose
penalty :math:`\sigma_{\max}(A_S)^2 10^{-k}` (:data:`RIDGE_EXPONENTS`) is
chosen on held-out rows.  Also here: the per-step and per-penalty held-out
scores of :class:`~rflite.imp.SHRIMPRegressor` and
:class:`~rflite.imp.SHRIMPCV`, the row helpers they share (distinct rows,
their split, centring like the training rows, the mean baseline) and the
:class:`~rflite._core.exceptions.MagnitudeWarning` check.  Split out of
:mod:`rflite.imp`, which re-exports the public constants.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg

from rflite._base import RandomFeatureModel
from rflite._core.exceptions import MagnitudeWarning
from rflite._imp.factor import min_norm_lstsq
from rflite._core.linalg import ridge_fit
from rflite._core.exceptions import warn

__all__ = ["AMPLIFICATION_MAX", "MAGNITUDE_RATIO", "GUARD_RATIO", "RIDGE_EXPONENTS"]

#: A minimum-norm refit is numerically singular when the coefficient norm it
#: needs, relative to the targets, exceeds this: the amplification
#: :math:`\rho = \|c\|_2\,\sigma_{\max}(A_S) / \|y\|_2` (1 when ``y`` lies on
#: the top singular vector, :math:`\kappa(A_S)` when it lies on the bottom
#: one).  On the shared real sets the minimum-norm refits reach
#: :math:`\rho = 10^{8}` .. :math:`10^{15}` (q = 1 Fourier dictionaries of
#: standardised inputs have condition numbers of 1e15 and more).
AMPLIFICATION_MAX = 1e4

#: :class:`~rflite._core.exceptions.MagnitudeWarning` threshold of ``predict``: a
#: prediction with :math:`|\hat f(x) - \bar y|` above ``MAGNITUDE_RATIO`` times
#: :math:`\max_i |y_i - \bar y|` is out of proportion to the training targets
#: (the fitted coefficients are held to :data:`GUARD_RATIO`).
MAGNITUDE_RATIO = 100.0

#: The guarded refit (``refit="auto"`` / ``"ridge"``) accepts only
#: coefficients whose worst-case size :math:`\sum_j |c_j| (1 + |\bar a_j|)`
#: is at most ``GUARD_RATIO`` times :math:`\max_i |y_i - \bar y|`, so that the
#: model stays within that many target ranges of its intercept on any input.
#: A trade-off: on heavy-tailed inputs (tests/test_shrimp_robust.py) a
#: looser bound lets cancelling coefficients through and the test MSE grows
#: by orders of magnitude, while a smooth target that needs large cancelling
#: coefficients (``propulsion``) loses accuracy under a tighter one.
#: ``refit="min_norm"`` has no guard.  The same bound decides the
#: :class:`~rflite._core.exceptions.MagnitudeWarning` of a fitted model
#: (:func:`_warn_magnitude`), so a model the guard accepted never warns.
GUARD_RATIO = 100.0

#: Ridge penalties tried by the guarded refit, relative to
#: :math:`\sigma_{\max}(A_S)^2`: :math:`10^{-k}` for these k (the smallest
#: gives an effective condition number of 1e6, :data:`AMPLIFICATION_MAX`).
RIDGE_EXPONENTS = tuple(range(1, 13))


#: Activations whose features are bounded by 1 in modulus, for which
#: :math:`\sum_j |c_j| (1 + |\bar a_j|)` bounds the fitted function everywhere.
_BOUNDED = ("fourier", "sin", "cos", "tanh", "sigmoid", "exp")


def _collapse_rows(X, Y, w, return_inverse=False):
    """The distinct rows of ``(X, Y)`` (sorted) with their summed weights (None if all 1).

    ``return_inverse``: also each input row's index among the distinct rows.

    Least-squares fits depend on the data only through the weighted set of
    distinct rows; collapsing repeated rows first makes integer weights and
    repeated rows the *same* arithmetic (a repeated row would otherwise make
    the minimum-norm systems rank deficient and change their rounding), and
    makes the fit independent of the row order.
    """
    d = X.shape[1]
    key = np.ascontiguousarray(np.hstack([X, Y]))
    uniq, inverse = np.unique(key, axis=0, return_inverse=True)
    inverse = np.asarray(inverse).ravel()
    wu = np.bincount(inverse, weights=w, minlength=uniq.shape[0])
    if w is None and np.all(wu == 1.0):
        wu = None
    out = np.ascontiguousarray(uniq[:, :d]), np.ascontiguousarray(uniq[:, d:]), wu
    return (*out, inverse) if return_inverse else out


def _distinct_row_split(X, Y, w, fraction, rng):
    r"""Training and validation rows, drawn over the distinct rows of ``(X, Y)``.

    The distinct rows are found by :func:`numpy.unique` (sorted, so their
    order does not depend on the row order of ``X``), shuffled by ``rng``,
    and the shortest prefix whose total weight is closest to ``fraction`` of
    the whole weight is held out (at least one distinct row on each side).
    Copies of a row go to the same side; a row of integer weight k and k
    copies of it give the same split.  Raises ``ValueError`` when there are
    fewer than two distinct rows.
    """
    key = np.ascontiguousarray(np.hstack([X, Y]))
    _, inverse = np.unique(key, axis=0, return_inverse=True)
    inverse = np.asarray(inverse).ravel()
    n_groups = int(inverse.max()) + 1
    held = _held_groups(np.bincount(inverse, weights=w, minlength=n_groups), fraction, rng)
    is_val = held[inverse]
    return np.flatnonzero(~is_val), np.flatnonzero(is_val)


def _held_groups(group_weights, fraction, rng):
    """Which distinct rows :func:`_distinct_row_split` holds out (also the Dask split).

    ``group_weights``: the total weight of each distinct row, in
    :func:`numpy.unique` order.  The rows are shuffled by ``rng`` and the
    shortest prefix whose weight is closest to ``fraction`` of the whole is
    held out (1 to n - 1 rows).
    """
    n_groups = group_weights.size
    if n_groups < 2:
        raise ValueError("the validation split needs at least 2 distinct rows of (X, y), "
                         f"got {n_groups}")
    order = rng.permutation(n_groups)
    cum = np.cumsum(group_weights[order])
    k = int(np.argmin(np.abs(cum[:-1] - fraction * cum[-1]))) + 1
    held = np.zeros(n_groups, dtype=bool)
    held[order[:k]] = True
    return held


def _center_weight_like(A, Y, a_mean, y_mean, w):
    """Held-out rows centred with the training means and scaled by sqrt(w) (in place on A)."""
    Y = Y - y_mean
    if a_mean is not None:
        A -= a_mean
    if w is not None:
        sw = np.sqrt(w)[:, None]
        A *= sw
        Y = Y * sw
    return A, Y


def _target_stats(Y, w):
    r"""``(ybar, max_i |y_i - ybar|)`` per output over the fitted rows (weighted mean):
    the centre and the yardstick of the :data:`MAGNITUDE_RATIO` checks."""
    mean = np.average(Y, axis=0, weights=w)
    return mean, np.max(np.abs(Y - mean), axis=0)


def _sigma_max(A) -> float:
    r"""Largest singular value of ``A``, exactly: the top eigenvalue of its smaller Gram matrix.

    Defines the guard's ridge penalties :math:`\sigma_{\max}(A_S)^2 10^{-e_k}`
    wherever they are computed (the held-out scoring, every refit, the fold
    models of the committee, the Dask factors, whose Gram matrix is the
    same), so that a penalty index means the same penalty everywhere; for
    the small supports it is used on, the Gram matrix is cheap.
    """
    if A.size == 0:
        return 0.0
    G = _small_gram(A)
    k = G.shape[0] - 1
    ev = scipy.linalg.eigvalsh(G, subset_by_index=[k, k], check_finite=False)
    return math.sqrt(max(float(ev[-1]), 0.0))


def _spectral_norm(A, n_iter: int = 30) -> float:
    """Largest singular value of ``A``, by power iteration from ``A^T 1`` (a threshold test)."""
    if A.size == 0:
        return 0.0
    v = A.T @ np.ones(A.shape[0])
    if not np.any(v):
        v = np.ones(A.shape[1])
    s = 0.0
    for _ in range(n_iter):
        v /= np.linalg.norm(v)
        u = A @ v
        s = float(np.linalg.norm(u))
        if s == 0.0:
            return 0.0
        v = A.T @ u
    return math.sqrt(float(np.linalg.norm(v)))


def _magnitude_bound(c, a_mean, activation):
    r""":math:`\sum_j |c_j| (1 + |\bar a_j|)`, a bound on :math:`|\hat f(x) - c_0|` for every x.

    ``None`` for unbounded activations (relu).
    """
    if activation not in _BOUNDED:
        return None
    mag = np.abs(c)
    if a_mean is not None:
        return float(mag @ (1.0 + np.abs(a_mean)))
    return float(mag.sum())


def _out_of_proportion(A, c, y, a_mean=None, y_scale=None, activation=None,
                       smax=None) -> bool:
    r"""Is the minimum-norm ``c`` numerically singular?

    True when ``c`` is not finite, its amplification
    :math:`\|c\|_2 \sigma_{\max}(A) / \|y\|_2` exceeds :data:`AMPLIFICATION_MAX`,
    or (bounded activations, ``y_scale`` given) its worst-case size
    :math:`\sum_j |c_j|(1 + |\bar a_j|)` exceeds :data:`GUARD_RATIO` ``y_scale``.
    ``smax``: :math:`\sigma_{\max}(A)` when the caller has it (else
    :func:`_spectral_norm`).
    """
    if not np.all(np.isfinite(c)):
        return True
    ny = float(np.linalg.norm(y))
    if ny == 0.0:
        return False
    smax = _spectral_norm(A) if smax is None else smax
    if not _in_proportion(c[:, None], smax, ny)[0]:
        return True
    # bounded features: the fitted function's worst-case size (GUARD_RATIO)
    bound = _magnitude_bound(c, a_mean, activation) if activation is not None else None
    if bound is not None and y_scale is not None:
        return bound > GUARD_RATIO * max(float(y_scale), 1e-300)
    return False


def _guarded_refit(A, y, a_mean, refit, y_scale, activation, ridge_errors, c_min_norm=None):
    """The refit of one output on all rows: ``(coef, "min_norm" | "ridge", lam or None)``.

    ``ridge_errors(lams)`` returns held-out errors of the ridge penalties
    ``lams`` (absolute, for all rows) and whether each is in proportion.
    """
    if refit != "ridge":
        c = min_norm_lstsq(A, y) if c_min_norm is None else c_min_norm
        if refit == "min_norm" or not _out_of_proportion(A, c, y, a_mean, y_scale, activation):
            return c, "min_norm", None
    s2 = _sigma_max(A) ** 2
    if not s2 > 0.0:
        return np.zeros(A.shape[1]), "ridge", None
    lams = s2 * 10.0 ** -np.asarray(RIDGE_EXPONENTS, dtype=float)
    errors, ok = ridge_errors(lams)
    errors = np.where(np.isfinite(errors), errors, np.inf)
    masked = np.where(ok, errors, np.inf)
    k = int(np.argmin(masked)) if np.isfinite(masked).any() else int(np.argmin(errors))
    lam = float(lams[k])
    return ridge_fit(A, y, lam), "ridge", lam


def _guarded_step_scores(A_tr, y_tr, A_val, y_val, path, a_mean, y_scale, activation, refit,
                         val_scale, memo=None):
    r"""Validation error of every step's guarded model, and the ridge penalty it uses.

    Step t scores the lower of (a) its minimum-norm validation error, when
    those coefficients are in proportion (:func:`_out_of_proportion`;
    ``refit="auto"`` only), and (b) the best validation error of the ridge
    penalties :math:`\sigma_{\max}(A_{P_t})^2 10^{-k}` whose coefficients are
    in proportion, on every step (steps with more columns than training rows
    through the dual Gram matrix :math:`A A^T`).  Returns ``(scores (T+1,),
    penalty per step or None, families)``, ``inf`` where nothing qualifies;
    ``families[t]`` is step t's ``(lams, errors, coefficients of the lowest
    error)`` of (b) (``None`` when :math:`A_{P_t} = 0`), for
    :func:`_guarded_choice`.  ``memo`` (a dict
    shared by paths of one output that start from the same solve, e.g. the
    prune rates of :func:`rflite.imp._shared_paths`) keeps the scores of each
    (support, coefficients) so that a step two paths share is scored once.
    """
    scores = np.full(path.n_steps + 1, np.inf)
    lam_at = [None] * (path.n_steps + 1)
    families = [None] * (path.n_steps + 1)
    ys = float(y_scale) if y_scale is not None else float(np.max(np.abs(y_tr)))
    bounded = activation is None or activation in _BOUNDED
    for t, (S, c) in enumerate(zip(path.supports, path.coefs)):
        am = None if a_mean is None else a_mean[S]
        A_S = A_tr[:, S]
        # one eigendecomposition of the smaller Gram matrix gives sigma_max and
        # every penalty.  Over-parameterised steps get ridge candidates too:
        # their minimum-norm solution interpolates the training rows (heavy-
        # tailed test set: without them many draws end far above RidgeCV's
        # error, with them and the 1se rule every draw stays close)
        key = (S.tobytes(), np.asarray(c).tobytes()) if memo is not None else None
        hit = memo.get(key) if memo is not None else None
        if hit is None:
            hit = _score_step(A_S, c, y_tr, A_val[:, S], y_val, am, ys, val_scale, refit,
                              activation or "fourier", bounded, ridge=True)
            if memo is not None:
                memo[key] = hit
        min_norm_ok, family = hit
        if min_norm_ok:
            scores[t] = path.val_mse[t]
        families[t] = family
        if family is None:
            continue
        lams, err, _ = family
        j = int(np.argmin(err))
        if err[j] < scores[t]:
            scores[t], lam_at[t] = float(err[j]), float(lams[j])
    return scores, lam_at, families


def _guarded_choice(scores, lam_at, families, path, rule, error_moments):
    """The step, penalty and validation error of the guarded choice, or ``None``.

    The step of lowest score (:func:`_guarded_step_scores`) with its penalty;
    with ``rule="1se_ridge"`` the penalty is then moved by
    :func:`_strongest_within_se`, the standard error coming from
    ``error_moments(S, c)``: :func:`_row_error_moments` of the validation rows'
    errors of the coefficients ``c`` on the columns ``S`` that the step's
    score was computed with (in memory from the validation matrix, on Dask
    by a pass over the rows).  ``None`` when no step has a finite score.
    """
    if not np.isfinite(scores).any():
        return None
    t = int(np.argmin(scores))
    lam, err = lam_at[t], float(scores[t])
    if rule == "1se_ridge":
        c = path.coefs[t] if lam is None else families[t][2]
        se = _se_of_mean_error(*error_moments(path.supports[t], c))
        near = _strongest_within_se(families[t], err, se)
        if near is not None:
            lam, err = near
    return t, lam, err


def _row_error_moments(resid, w):
    r"""``(sum w, sum w e, sum w e^2, sum w^2)`` of the validation errors
    :math:`e_i = r_i^2` from the :math:`\sqrt{w_i}`-scaled residuals ``resid``
    (``w`` None: weights 1)."""
    we = np.asarray(resid, dtype=float) ** 2
    if w is None:
        return float(we.size), float(we.sum()), float(np.sum(we ** 2)), float(we.size)
    w = np.asarray(w, dtype=float)
    return float(w.sum()), float(we.sum()), float(np.sum(we ** 2 / w)), float(np.sum(w ** 2))


def _se_of_mean_error(s_w, s_we, s_we2, s_w2) -> float:
    r"""Standard error of the weighted mean validation error from its row moments.

    :math:`\mu = \sum w e / \sum w`, weighted variance
    :math:`v = \sum w (e - \mu)^2 / \sum w` and Kish's effective count
    :math:`n = (\sum w)^2 / \sum w^2`: :math:`\sqrt{v / (n - 1)}`, the
    usual ``std(e, ddof=1) / sqrt(n)`` for unit weights (``inf`` below two
    effective rows).
    """
    if not s_w > 0.0 or not s_w2 > 0.0:
        return math.inf
    n = s_w * s_w / s_w2
    if not n > 1.0:
        return math.inf
    mu = s_we / s_w
    return math.sqrt(max(s_we2 / s_w - mu * mu, 0.0) / (n - 1.0))


def _strongest_within_se(family, best, se):
    r"""Rule ``"1se_ridge"`` on one validation split: ``(lam, error)`` or ``None``.

    Among the ridge penalties of the chosen step's ``family`` (``lams,
    errors`` first, :func:`_penalty_errors`; out-of-proportion ones are ``inf``)
    whose validation error is at most ``best + se`` (``best`` the chosen
    model's error, ``se`` its standard error over the validation rows,
    :func:`_se_of_mean_error`), the largest penalty: the one-standard-error
    rule over the penalty only (Hastie, Tibshirani & Friedman 2009, Sec.
    7.10), as :class:`~rflite.imp.SHRIMPCV` applies it over folds.
    """
    if family is None or not math.isfinite(best):
        return None
    lams, err = family[:2]
    near = np.isfinite(err) & (err <= best + se)
    if not near.any():
        return None
    j = int(np.argmax(np.where(near, lams, -np.inf)))
    return float(lams[j]), float(err[j])


def _step_penalty_scores(A_tr, y_tr, A_val, y_val, path, a_mean, refit, val_scale, *,
                         ys=None, n_rows=None):
    r"""Held-out error of every (step, penalty) of one fold: a (T+1, 1 + L) array.

    Column 0 is the minimum-norm coefficients (``inf`` when numerically
    singular with ``refit="auto"``, always with ``refit="ridge"``); column k
    the ridge penalty :math:`\sigma_{\max}(A_{P_t})^2 10^{-e_k}`, e_k in
    :data:`RIDGE_EXPONENTS` (``inf`` out of proportion, for steps t >= 1 with
    more columns than training rows, and with ``refit="min_norm"``).  Step 0,
    the whole dictionary, always has its ridge penalties: a random-feature
    ridge regression (Rahimi & Recht) is then a candidate of every fold even
    when the dictionary is wider than the rows; the other wide steps are not
    scored by ridge, whose dual eigendecomposition per step and fold would
    dominate the cost (:class:`~rflite.imp.SHRIMPRegressor`, one split,
    scores them all).  ``ys`` (the
    largest training target) and ``n_rows`` (training rows) default to those
    of ``y_tr`` and ``A_tr``; the Dask fit passes them, its ``A_tr`` being a
    triangular factor of the rows (:mod:`rflite._dask.shrimpcv`).
    """
    n_pen = 1 + len(RIDGE_EXPONENTS)
    out = np.full((path.n_steps + 1, n_pen), np.inf)
    if ys is None:
        ys = float(np.max(np.abs(y_tr))) if y_tr.size else 0.0
    n_rows = A_tr.shape[0] if n_rows is None else n_rows
    for t, (S, c) in enumerate(zip(path.supports, path.coefs)):
        am = None if a_mean is None else a_mean[S]
        A_S = A_tr[:, S]
        ridge = refit != "min_norm" and (S.size <= n_rows or t == 0)
        min_norm_ok, family = _score_step(A_S, c, y_tr, A_val[:, S], y_val, am, ys, val_scale,
                                          refit, "fourier", True, ridge=ridge)
        if refit == "min_norm" or min_norm_ok:
            out[t, 0] = path.val_mse[t]
        if family is not None:
            out[t, 1:] = family[1]
    return out


def _score_step(A_S, c, y_tr, A_val_S, y_val, a_mean_S, ys, val_scale, refit, activation,
                bounded, *, ridge):
    """One step's guarded scores: ``(min-norm coefficients usable, ridge family or None)``.

    The minimum-norm ``c`` is usable with ``refit="auto"`` when in proportion
    (:func:`_out_of_proportion`); with ``ridge`` the step's penalties are
    scored (:func:`_penalty_errors` with their best coefficients), one
    eigendecomposition of the smaller Gram matrix serving both.  Shared by
    the one-split choice (:func:`_guarded_step_scores`) and the fold tables
    (:func:`_step_penalty_scores`).
    """
    eig = _gram_eig(A_S) if ridge else None
    min_norm_ok = refit == "auto" and not _out_of_proportion(
        A_S, c, y_tr, a_mean_S, ys, activation, smax=_eig_smax(eig))
    family = (_penalty_errors(A_S, y_tr, A_val_S, y_val, a_mean_S, ys, val_scale, bounded,
                              eig=eig, with_coefs=True) if ridge else None)
    return min_norm_ok, family


def _penalty_errors(A_S, y_tr, A_val_S, y_val, a_mean_S, ys, val_scale, bounded, eig=None,
                    with_coefs=False):
    r"""Held-out errors of the guard's ridge penalties on one support: ``(lams, errors)``.

    The penalties are :math:`\sigma_{\max}(A_S)^2 10^{-e_k}`, e_k in
    :data:`RIDGE_EXPONENTS`; an error is ``inf`` when it is not finite, when
    the coefficients amplify more than :data:`AMPLIFICATION_MAX`, or
    (``bounded`` features) when their worst-case size
    :math:`\sum_j |c_j|(1 + |\bar a_j|)` exceeds :data:`GUARD_RATIO` ``ys``.
    ``None`` when :math:`A_S` is zero.  ``eig``: :func:`_gram_eig` of ``A_S``
    (computed here otherwise), which also gives :math:`\sigma_{\max}`.
    ``with_coefs``: also return the coefficients of the lowest error
    (``(lams, errors, coef)``).
    """
    eig = _gram_eig(A_S) if eig is None else eig
    s2 = _eig_smax(eig) ** 2
    if not s2 > 0.0:
        return None
    lams = s2 * 10.0 ** -np.asarray(RIDGE_EXPONENTS, dtype=float)
    pred, C = _ridge_family(A_S, y_tr, A_val_S, lams, eig=eig)
    err = np.mean((pred - y_val[:, None]) ** 2, axis=0) * val_scale
    ok = _in_proportion(C, math.sqrt(s2), float(np.linalg.norm(y_tr)))
    if bounded:
        mag = np.abs(C)
        bound = (mag.T @ (1.0 + np.abs(a_mean_S))) if a_mean_S is not None \
            else mag.sum(axis=0)
        ok &= bound <= GUARD_RATIO * max(ys, 1e-300)
    err = np.where(ok & np.isfinite(err), err, np.inf)
    if with_coefs:
        return lams, err, C[:, int(np.argmin(err))]
    return lams, err


def _small_gram(A):
    """The smaller Gram matrix of ``A``: :math:`A^T A` (primal) when ``A`` has at
    most as many columns as rows, else :math:`A A^T` (dual)."""
    m, n = A.shape
    return A.T @ A if n <= m else A @ A.T


def _gram_eig(A):
    """Eigendecomposition ``(ev, V)`` of :func:`_small_gram` ``(A)`` (which of the
    two, :func:`_ridge_family` reads from the shape of ``A``)."""
    return np.linalg.eigh(_small_gram(A))


def _eig_smax(eig):
    r""":math:`\sigma_{\max}` from a :func:`_gram_eig` result (``None`` passes through)."""
    if eig is None:
        return None
    ev = eig[0]
    return math.sqrt(max(float(ev[-1]), 0.0)) if ev.size else 0.0


def _ridge_family(A, y, A_val, lams, eig=None):
    """Validation predictions of ridge fits on ``(A, y)`` for every penalty (columns).

    One eigendecomposition of the smaller Gram matrix (:func:`_gram_eig`, or
    ``eig`` when the caller has it) serves every penalty; returns
    ``(pred (m_val, L), coefs (n, L))``.
    """
    m, n = A.shape
    lams = np.asarray(lams, dtype=float)
    ev, V = _gram_eig(A) if eig is None else eig
    if n <= m:
        b = V.T @ (A.T @ y)
        C = V @ (b[:, None] / (np.maximum(ev, 0.0)[:, None] + lams[None, :]))
    else:
        b = V.T @ y
        C = A.T @ (V @ (b[:, None] / (np.maximum(ev, 0.0)[:, None] + lams[None, :])))
    return A_val @ C, C


def _holdout_ridge_errors(held, lams, tr_share, val_scale):
    """Validation errors (and proportion flags) of ridge fits on the training part."""
    A_tr, y_tr, A_val, y_val, a_mean_tr, y_scale = held
    pred, C = _ridge_family(A_tr, y_tr, A_val, np.asarray(lams) * tr_share)
    err = np.mean((pred - y_val[:, None]) ** 2, axis=0) * val_scale
    return err, _in_proportion(C, _spectral_norm(A_tr), float(np.linalg.norm(y_tr)))


def _in_proportion(C, smax, ny):
    """Which columns of ``C`` (coefficients per penalty) amplify at most :data:`AMPLIFICATION_MAX`."""
    return np.linalg.norm(C, axis=0) * smax <= AMPLIFICATION_MAX * max(ny, 1e-300)


def _kfold_ridge_errors(fmap, S, X, y, w, splits, lams, fit_intercept, y_scale):
    """Mean K-fold errors (and proportion flags) of ridge fits on the fixed columns ``S``."""
    w_all = float(np.sum(w)) if w is not None else float(X.shape[0])
    B = fmap.columns(X, S)
    rows, oks = [], []
    for tr, te in splits:
        wt = None if w is None else w[tr]
        we = None if w is None else w[te]
        A, Yt, am, ym = _center_weight_rows(B[tr].copy(), y[tr][:, None], wt, fit_intercept)
        Av, Yv = _center_weight_like(B[te].copy(), y[te][:, None], am, ym, we)
        share = (float(np.sum(wt)) if wt is not None else float(tr.size)) / w_all
        pred, C = _ridge_family(A, Yt[:, 0], Av, np.asarray(lams) * share)
        denom = float(np.sum(we)) if we is not None else float(te.size)
        rows.append(np.sum((pred - Yv[:, 0][:, None]) ** 2, axis=0) / denom)
        oks.append(_in_proportion(C, _spectral_norm(A), float(np.linalg.norm(Yt[:, 0]))))
    # the caller takes the lowest mean fold error among the penalties in proportion
    return np.vstack(rows).mean(axis=0), np.all(np.vstack(oks), axis=0)


def _center_weight_rows(A, Y, w, fit_intercept):
    """:meth:`rflite._base.RandomFeatureModel._center_and_weight` as a function (for fold workers)."""
    from rflite._core.linalg import center_and_weight

    return center_and_weight(A, Y, w, fit_intercept=fit_intercept)


def _mean_baseline(Y, w, tr, te) -> float:
    """Weighted test MSE of predicting the weighted training mean (the guard's yardstick)."""
    wt = None if w is None else w[tr]
    we = None if w is None else w[te]
    mean = np.average(Y[tr], axis=0, weights=wt)
    r = ((Y[te] - mean) ** 2).mean(axis=1)
    return float(np.average(r, weights=we))


def _warn_magnitude(est, a_mean=None) -> None:
    r""":class:`~rflite._core.exceptions.MagnitudeWarning` when a fitted model is out of proportion.

    The guard's criterion (:func:`_out_of_proportion`): output k warns when
    :math:`\sum_j |c_{jk}| (1 + |\bar a_j|)` (:func:`_magnitude_bound`)
    exceeds :data:`GUARD_RATIO` times its ``target_scale_``.  ``a_mean``: the
    column means the model was centred with (all columns); without them
    (``fit_intercept`` but means unknown, e.g. averaged fold models) the
    bound takes :math:`|\bar a_j| \le 1`, which holds for bounded features.
    """
    if est.activation not in _BOUNDED:
        return
    C = est.coef_ if est.coef_.ndim == 2 else est.coef_[:, None]
    scale = np.atleast_1d(est.target_scale_)
    if not getattr(est, "fit_intercept", False):
        a_S = None
    elif a_mean is None:
        a_S = np.ones(C.shape[0])
    else:
        a_S = np.asarray(a_mean)[est.support_]
    bound = np.array([_magnitude_bound(C[:, k], a_S, est.activation)
                      for k in range(C.shape[1])])
    bad = bound > GUARD_RATIO * np.maximum(scale, 1e-300)
    if np.any(bad):
        warn(
            f"{type(est).__name__}: the fitted function can reach {float(np.max(bound)):.3g} "
            f"(sum of |coef| x feature bound) against a largest training-target deviation "
            f"of {float(np.max(scale)):.3g} (GUARD_RATIO={GUARD_RATIO:g}); the "
            f"coefficients are out of proportion (refit={getattr(est, 'refit_', None)!r}: "
            "refit='auto' or 'ridge' guards against numerically singular refits)",
            MagnitudeWarning)


def _predict_checked(est, X):
    """``RandomFeatureModel.predict`` plus the :class:`MagnitudeWarning` check.

    The check needs the values: it runs on in-memory predictions only; a
    Dask ``X`` gets its lazy predictions unchecked (checking them computed
    every chunk inside ``predict``, and again when the result was used).
    """
    pred = RandomFeatureModel.predict(est, X)
    scale = getattr(est, "target_scale_", None)
    if scale is not None and pred.size and isinstance(pred, np.ndarray):
        # from the training targets' mean, not the intercept (far from the
        # targets when large coefficients cancel against the feature means)
        centre = getattr(est, "target_mean_", None)
        centre = est.intercept_ if centre is None else (
            centre if pred.ndim == 2 else centre.reshape(-1)[0])
        dev = np.abs(pred - centre)
        dev = dev.max(axis=0) if dev.ndim == 2 else dev.max()
        limit = MAGNITUDE_RATIO * np.maximum(scale, np.finfo(float).tiny)
        if np.any(dev > limit):
            warn(
                f"{type(est).__name__} predicted values up to {float(np.max(dev)):.3g} "
                f"away from the training targets' mean, more than "
                f"MAGNITUDE_RATIO={MAGNITUDE_RATIO:g} "
                f"times the training targets' largest deviation "
                f"({float(np.max(scale)):.3g}); inputs far outside the training range? "
                "(clip_inputs=True predicts them at the edge of the training box)",
                MagnitudeWarning)
    return pred
