r"""The Metropolis chain of ARFF and its checks (private machinery of :mod:`rflite.metropolis`).

Algorithms 1-2 of Kammonen et al., *Adaptive random Fourier features with
Metropolis sampling* (2020), as a Python loop over BLAS calls: the chain
state :class:`_Chain` (frequencies, amplitudes, the Gram matrix and what a
refit must redo), the loop :func:`_metropolis`, the early-stopping monitor
(:class:`_ValidationMonitor`: validation error after every refit, the
``lam`` grid scored from one eigendecomposition), and the input and memory
checks of the public functions.  The numba kernels they call are in
:mod:`rflite._arff.kernels`.  Split out of :mod:`rflite.metropolis` (which
re-exports :class:`ARFFResult` and the constants) so that the estimator
module stays readable.  Also here: the checks and the bodies of
:func:`~rflite.metropolis.arff` and :func:`~rflite.metropolis.fixed_rff`
(:func:`_sample_arff`, :func:`_fixed_rff`), which the estimators call.
"""

from __future__ import annotations

import math
import numbers
from typing import NamedTuple

import numpy as np

from rflite._arff import kernels as _arff_kernels
from rflite._arff.kernels import (
    _accept_kernel,
    _accept_parallel,
    _blas_limit,
    _features,
    _gram,
    _launch_parallel,
    _refresh_gram,
    _rhs,
    _row_sq_norms,
    _solve,
    _sym_sqrt,
    _train_error,
)
from rflite._core.selection import choose
from rflite._core.random import check_rng
from rflite._core.validation import (DataConversionWarning, check_array, check_bool, check_choice,
                                     check_int, check_real)
from rflite._core.memory import check_memory
from rflite._core.exceptions import warn


#: Rule choosing ``lam`` on the validation rows at each check
#: (:func:`rflite._core.selection.choose`; the rows play the folds).
LAM_RULE = "1se"

#: Activations of the hidden layer: complex ``exp(i w.x)`` (the paper's model)
#: or the real logistic sigmoid of ``w.[x, 1]`` (the paper's Experiment 5).
ACTIVATIONS = ("exp", "sigmoid")

#: Default proposal step ``delta = DELTA_NUMERATOR / d`` (Sec. 4, after
#: Roberts, Gelman and Gilks' optimal random-walk scaling).
DELTA_NUMERATOR = 2.4**2


class ARFFResult(NamedTuple):
    """Result of :func:`arff` (and :func:`fixed_rff`).

    Attributes
    ----------
    frequencies : (K, d') ndarray
        The sampled frequencies :math:`\\omega_k` (rows); ``d' = d + 1`` for the
        sigmoid activation, whose last weight multiplies the constant-1 input.
    amplitudes : (K,) or (K, p) ndarray
        :math:`\\hat\\beta`, complex for ``"exp"`` and real for ``"sigmoid"``;
        two-dimensional exactly when ``y`` was.
    acceptance : (n_iter,) ndarray
        Fraction of the K proposals accepted in each iteration.
    train_error : (n_iter + 1,) ndarray
        Mean squared training error :math:`|S \\hat\\beta - y|^2` of the
        current (complex) model, the modulus as in the paper's error, averaged
        over samples and outputs: before the first iteration, after each one,
        and (last entry) after the final refit.
    covariance : (d', d') ndarray
        The final proposal covariance :math:`\\bar C` (the identity unless
        ``adaptive_covariance`` is on and the burn-in has passed).
    """

    frequencies: np.ndarray
    amplitudes: np.ndarray
    acceptance: np.ndarray
    train_error: np.ndarray
    covariance: np.ndarray


# =========================================================================
# the Metropolis loop (Python: it is a sequence of BLAS calls)
# =========================================================================
class _Chain:
    """State of the K Metropolis chains: frequencies, amplitudes and what they cost.

    ``S`` (features of the current frequencies), ``rhs`` (:math:`S^* y`) and the
    Gram matrix ``G`` are kept so that a refit only recomputes the Gram rows of
    the features that differ from those ``G`` was formed from (``stale``).  The
    proposal features are written into a second buffer of the same size; when
    most proposals are accepted the buffers (and the proposal Gram matrix) are
    swapped and only the rejected columns copied back, so a step moves
    ``min(accepted, rejected)`` columns, never allocates an N x K array, and a
    refit after a high-acceptance step recomputes only the rejected rows.
    """

    def __init__(self, X, Y, K, shift, activation):
        self.X, self.Y, self.shift, self.activation = X, Y, shift, activation
        self.omega = np.zeros((K, X.shape[1]))
        self.S = _features(X, self.omega, activation)
        self.S_buf = np.empty_like(self.S, order="F")
        self.G = _gram(self.S)
        self.rhs = _rhs(self.S, Y)
        self.beta = _solve(self.G, self.rhs, shift)
        self.stale = np.zeros(K, dtype=bool)
        self.accept = np.empty(K, dtype=np.bool_)
        self.parallel_accept = K >= _arff_kernels.PARALLEL_MIN_FEATURES
        self.fresh = True  # beta solves the current frequencies' problem
        self.n_refits = 0  # the validation monitor scores each refitted state once

    def step(self, omega_p, u, gamma, omega_max) -> int:
        """Proposal amplitudes, the accept test, and the swap; returns the accept count."""
        S_p = _features(self.X, omega_p, self.activation, out=self.S_buf)
        rhs_p = _rhs(S_p, self.Y)
        G_p = _gram(S_p)
        beta_p = _solve(G_p, rhs_p, self.shift)
        K = omega_p.shape[0]
        n_acc = self._accept_test(beta_p, omega_p, u, gamma, omega_max)
        if n_acc == 0:
            return 0
        idx = self._take_accepted(omega_p, beta_p, rhs_p)
        if 2 * n_acc >= K:
            # keep the proposal buffer and its Gram matrix; copy the rejected back
            rej = np.flatnonzero(~self.accept)
            S_p[:, rej] = self.S[:, rej]
            self.S, self.S_buf = S_p, self.S
            self.G = G_p
            self.stale[:] = False
            self.stale[rej] = True
        else:
            self.S[:, idx] = S_p[:, idx]
            self.stale[idx] = True
        return n_acc

    def _accept_test(self, beta_p, omega_p, u, gamma, omega_max) -> int:
        """The K accept tests into ``self.accept``; returns the accept count."""
        args = (_row_sq_norms(beta_p), _row_sq_norms(self.beta), omega_p, u, gamma, omega_max,
                self.accept)
        if self.parallel_accept:
            return _launch_parallel(_accept_parallel, _accept_kernel, *args)
        return _accept_kernel(*args)

    def _take_accepted(self, omega_p, beta_p, rhs_p):
        """The accepted proposals' frequencies, amplitudes and ``S^* y`` rows; their indices."""
        self.fresh = False
        idx = np.flatnonzero(self.accept)
        self.omega[idx] = omega_p[idx]
        self.beta[idx] = beta_p[idx]
        self.rhs[idx] = rhs_p[idx]
        return idx

    def refit(self):
        """Amplitudes for the current frequencies (Gram rows of stale features redone)."""
        self.G = _refresh_gram(self.G, self.S, self.stale)
        self.beta = _solve(self.G, self.rhs, self.shift)
        self.fresh = True
        self.n_refits += 1

    def train_error(self) -> float:
        return _train_error(self.S, self.beta, self.Y)


def _metropolis(X, Y, one_d, K, n_iter, delta, gamma, lam, refit_every, adaptive,
                burn_in, omega_max, activation, rng, callback, monitor=None,
                chain_class=None) -> ARFFResult:
    """Algorithms 1-2 on clean input.

    ``monitor(i, chain)``, if given, is called after iteration ``i`` (0 before
    the first) and returns True to stop early; the returned arrays then end
    at the last iteration run (the estimators' early stopping, which draws no
    random numbers, so the chain is the same as without it up to the stop).
    ``chain_class`` (default :class:`_Chain`) holds the state; the Dask fit
    passes one whose products are distributed passes
    (:class:`rflite._dask.arff._DaskChain`).
    """
    dd = X.shape[1]
    chain = (chain_class or _Chain)(X, Y, K, lam * X.shape[0], activation)
    acceptance = np.zeros(n_iter)
    train_error = np.empty(n_iter + 1)
    train_error[0] = chain.train_error()
    cov = np.eye(dd)
    root = np.eye(dd)  # proposal r = z @ root.T has covariance root root^T
    s1 = np.zeros(dd)
    s2 = np.zeros((dd, dd))
    if monitor is not None and monitor(0, chain):
        n_iter = 0
    for i in range(1, n_iter + 1):
        z = rng.standard_normal((K, dd))
        u = rng.random(K)
        if adaptive:
            z = z @ root.T
        acceptance[i - 1] = chain.step(chain.omega + delta * z, u, gamma, omega_max) / K
        if adaptive:
            omega = chain.omega
            s1 += omega.sum(axis=0)
            s2 += omega.T @ omega
            if i > burn_in:
                mean = s1 / (i * K)
                cov = s2 / (i * K) - np.outer(mean, mean)
                root = _sym_sqrt(cov)
        if i % refit_every == 0 or i == n_iter:
            chain.refit()
        train_error[i] = chain.train_error()
        if callback is not None:
            callback(i, chain.omega, chain.beta[:, 0] if one_d else chain.beta)
        if monitor is not None and monitor(i, chain) and i < n_iter:
            if i % refit_every:
                chain.refit()  # end on a refit, as the full run does
                train_error[i] = chain.train_error()
            acceptance, train_error = acceptance[:i], train_error[:i + 1]
            break
    beta = chain.beta
    return ARFFResult(chain.omega, beta[:, 0] if one_d else beta, acceptance, train_error, cov)


# =========================================================================
# helpers
# =========================================================================
def _check_data(X, y):
    X = check_array(X, "X", ndim=2, min_rows=2)
    y = check_array(y, "y", ndim=(1, 2))
    if y.shape[0] != X.shape[0]:
        raise ValueError(
            f"X and y must have the same number of rows, got X {X.shape} and y {y.shape}"
        )
    one_d = y.ndim == 1
    Y = y.reshape(-1, 1) if one_d else y
    if Y.shape[1] == 0:
        raise ValueError(f"y must have at least one output column, got shape {y.shape}")
    return np.ascontiguousarray(X), Y, one_d


#: Peak of a fit in units of the N x K complex feature matrix S (just over
#: 3x: S, the proposal's S' and the product
#: temporaries), and of the K x K Gram matrix (G, G' and the factor).
PEAK_S_FACTOR = 3.2
PEAK_GRAM_FACTOR = 3.0


def _check_sizes(N: int, K: int) -> None:
    """``MemoryError`` naming ``n_features`` before a fit whose peak cannot fit.

    The need is :data:`PEAK_S_FACTOR` copies of S plus :data:`PEAK_GRAM_FACTOR`
    copies of the Gram matrix: the estimate is the fit's peak.
    """
    hint = "use fewer features (n_features)"
    gram = PEAK_GRAM_FACTOR * K * K * np.dtype(np.complex128).itemsize
    check_memory((N, K), np.complex128, f"the feature matrix S (N samples x n_features={K})",
                 hint, factor=PEAK_S_FACTOR, extra=int(gram))


def _check_labels(y) -> np.ndarray:
    """Class labels as a 1-d array: a column vector is flattened with a warning,
    NaN / inf and continuous (non-integral float) targets are refused."""
    if y is None:
        raise ValueError("ARFFClassifier requires y to be passed, but the target y is None")
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        warn(
            "A column-vector y was passed when a 1d array was expected; flattened to "
            f"shape ({y.shape[0]},)", DataConversionWarning)
        y = y[:, 0]
    numeric = y
    if y.dtype == object:
        try:
            numeric = y.astype(np.float64)  # only to look for NaN / inf; y keeps its labels
        except (TypeError, ValueError):
            numeric = None  # labels such as strings
    if numeric is not None and np.issubdtype(numeric.dtype, np.inexact):
        if not np.all(np.isfinite(numeric)):
            raise ValueError("y contains NaN or infinite values; class labels must be finite")
        if y.dtype != object and np.any(y != np.round(y.real)):
            raise ValueError(
                "Unknown label type: y is continuous (non-integral float labels); "
                "ARFFClassifier needs class labels, use ARFFRegressor for regression"
            )
    return y


def _check_omega_max(omega_max) -> float:
    if isinstance(omega_max, bool) or not isinstance(omega_max, numbers.Real) or not (
        omega_max > 0
    ):
        raise ValueError(f"omega_max must be a positive number or inf, got {omega_max!r}")
    return float(omega_max)


class _ValidationMonitor:
    """Validation error after every Metropolis iteration, the best state, and the stop rule.

    Called by :func:`_metropolis` as ``monitor(i, chain)``; returns True once
    the validation MSE has not fallen below ``best - tol`` for
    ``n_iter_no_change`` consecutive iterations (scikit-learn's
    ``MLPRegressor`` / ``SGDRegressor`` rule).  Draws no random numbers.
    """

    def __init__(self, Xv, Yv, activation, n_iter_no_change, tol, part, progress, n_iter,
                 lam_grid=None):
        if activation == "sigmoid":
            Xv = np.hstack([Xv, np.ones((Xv.shape[0], 1))])
        self.Xv, self.Yv = np.ascontiguousarray(Xv), Yv.reshape(Xv.shape[0], -1)
        self.activation, self.part = activation, part
        self.n_iter_no_change, self.tol = n_iter_no_change, tol
        self.progress, self.n_iter = progress, n_iter
        self.lam_grid = lam_grid
        self.best_lam = None
        self.scores = []
        self.iterations = []
        self.best = math.inf
        self.best_iteration = 0
        self.best_omega = None
        self.no_change = 0
        self.scored_refits = -1

    def __call__(self, i, chain) -> bool:
        train_error = chain.train_error()
        if not chain.fresh or chain.n_refits == self.scored_refits:
            # between refits the amplitudes mix several solves and do not form a
            # model (their training error swings by orders of magnitude): only
            # the refitted states are scored, each once (a step that accepts
            # nothing leaves the last refit's state "fresh"; scoring it again
            # counted as a check without improvement and stopped runs early)
            self.progress.line(f"iteration {i}/{self.n_iter}  train {train_error:.4g}")
            return False
        self.scored_refits = chain.n_refits
        return self.record(i, chain.omega, chain.beta, train_error, chain.G, chain.rhs,
                           chain.X.shape[0])

    def record(self, i, omega, beta, train_error, G=None, rhs=None, N=None) -> bool:
        Sv = _features(self.Xv, omega, self.activation)
        lam = None
        if self.lam_grid is not None:
            rows = _lam_scores(G, rhs, N, Sv, self.Yv, self.lam_grid, self.part)
            # the grid from the simplest model (largest lam) for the rule; the
            # rows of the validation part act as its folds (one-row standard
            # errors for "1se")
            c = choose(rows[:, ::-1], rule=LAM_RULE)
            j = rows.shape[1] - 1 - c.index
            score, lam = float(c.mean[c.index]), float(self.lam_grid[j])
        else:
            score = _validation_mse(Sv @ beta, self.Yv, self.part)
        return self._update(i, score, lam, omega, train_error)

    def _update(self, i, score, lam, omega, train_error) -> bool:
        """Record iteration ``i``'s validation ``score``; True when the run should stop."""
        self.scores.append(score)
        self.iterations.append(i)
        if score < self.best - self.tol:
            self.best, self.best_iteration, self.no_change = score, i, 0
            self.best_omega, self.best_lam = omega.copy(), lam
        else:
            self.no_change += 1
        if self.best_omega is None:  # a non-finite first score
            self.best_omega = omega.copy()
        self.progress.line(f"iteration {i}/{self.n_iter}  train {train_error:.4g}  "
                           f"validation {score:.4g}"
                           + (f" (lam {lam:.3g})" if lam is not None else ""))
        return self.no_change >= self.n_iter_no_change


class _ProgressMonitor:
    """One progress line per iteration of a run without early stopping (never stops it)."""

    def __init__(self, progress, n_iter):
        self.progress, self.n_iter = progress, n_iter

    def __call__(self, i, chain) -> bool:
        if i:
            self.progress.line(f"iteration {i}/{self.n_iter}  train {chain.train_error():.4g}")
        return False


def _validation_mse(pred, Y, part) -> float:
    """Mean of ``|Re f - y|^2`` (``part="real"``) or ``|f - y|^2`` (``"modulus"``)."""
    r = (pred.real if part == "real" else pred) - Y
    if np.iscomplexobj(r):
        return float(np.mean(r.real * r.real + r.imag * r.imag))
    return float(np.mean(r * r))


def _lam_scores(G, rhs, N, Sv, Yv, lams, part) -> np.ndarray:
    r"""Validation errors ``(n_val, len(lams))`` of :math:`(G + \lambda N I)^{-1} S^* Y`.

    Squared error of every validation row (averaged over outputs) for every
    :math:`\lambda`.

    ``G`` is the training Gram matrix :math:`S^* S` and ``rhs`` :math:`S^* Y`.
    One eigendecomposition :math:`G = V \Lambda V^*` serves every
    :math:`\lambda`: :math:`\beta(\lambda) = V (\Lambda + \lambda N)^{-1} V^* S^* Y`.
    """
    e, V = np.linalg.eigh(G)
    e = np.maximum(e, 0.0)
    proj = V.conj().T @ rhs  # (K, p)
    SvV = Sv @ V
    out = np.empty((Sv.shape[0], len(lams)))
    for j, lam in enumerate(lams):
        beta_rot = proj / (e + lam * N)[:, None]
        r = (SvV @ beta_rot).real - Yv if part == "real" else SvV @ beta_rot - Yv
        out[:, j] = (r.real**2 + r.imag**2).mean(axis=1) if np.iscomplexobj(r) else \
            (r * r).mean(axis=1)
    return out


def _check_arff_params(shape, n_features, n_iter, delta, gamma, lam, refit_every,
                       adaptive_covariance, burn_in, omega_max, activation, callback):
    """:func:`~rflite.metropolis.arff`'s parameters validated and defaulted for data of
    ``shape`` (N, d)."""
    N, d = shape
    K = check_int(n_features, "n_features", minimum=1)
    _check_sizes(N, K)
    n_iter = check_int(n_iter, "n_iter", minimum=0)
    delta = DELTA_NUMERATOR / d if delta is None else check_real(
        delta, "delta", minimum=0.0, strict=True)
    gamma = float(max(3 * d - 2, 0)) if gamma is None else check_real(gamma, "gamma", minimum=0.0)
    lam = check_real(lam, "lam", minimum=0.0, strict=True)
    refit_every = check_int(refit_every, "refit_every", minimum=1)
    adaptive = bool(check_bool(adaptive_covariance, "adaptive_covariance"))
    burn_in = n_iter // 10 if burn_in is None else check_int(burn_in, "burn_in", minimum=0)
    omega_max = _check_omega_max(omega_max)
    activation = check_choice(activation, "activation", ACTIVATIONS)
    if callback is not None and not callable(callback):
        raise ValueError(f"callback must be callable or None, got {callback!r}")
    return K, n_iter, delta, gamma, lam, refit_every, adaptive, burn_in, omega_max, activation


def _sample_arff(X, y, n_features, n_iter, delta, gamma, lam, refit_every, adaptive_covariance,
                 burn_in, omega_max, activation, rng, callback, monitor) -> ARFFResult:
    """:func:`~rflite.metropolis.arff`: checks and defaults, then the chain (``monitor``:
    a :class:`_ValidationMonitor` or :class:`_ProgressMonitor`, or None)."""
    X, Y, one_d = _check_data(X, y)
    K, n_iter, delta, gamma, lam, refit_every, adaptive, burn_in, omega_max, activation = \
        _check_arff_params(X.shape, n_features, n_iter, delta, gamma, lam, refit_every,
                           adaptive_covariance, burn_in, omega_max, activation, callback)
    rng = check_rng(rng)

    if activation == "sigmoid":
        X = np.hstack([X, np.ones((X.shape[0], 1))])
    with _blas_limit(X.shape[0] * K * K):
        return _metropolis(X, Y, one_d, K, n_iter, delta, gamma, lam, refit_every,
                           adaptive, burn_in, omega_max, activation, rng, callback, monitor)


def _fixed_rff(X, y, n_features, scale, lam, activation, rng) -> ARFFResult:
    """:func:`~rflite.metropolis.fixed_rff`: the amplitudes of ``n_features`` frequencies
    drawn from :math:`N(0, s^2 I)`."""
    X, Y, one_d = _check_data(X, y)
    K = check_int(n_features, "n_features", minimum=1)
    _check_sizes(X.shape[0], K)
    scale = check_real(scale, "scale", minimum=0.0, strict=True)
    lam = check_real(lam, "lam", minimum=0.0, strict=True)
    activation = check_choice(activation, "activation", ACTIVATIONS)
    rng = check_rng(rng)
    if activation == "sigmoid":
        X = np.hstack([X, np.ones((X.shape[0], 1))])
    omega = scale * rng.standard_normal((K, X.shape[1]))
    with _blas_limit(X.shape[0] * K * K):
        S = _features(X, omega, activation)
        beta = _solve(_gram(S), _rhs(S, Y), lam * X.shape[0])
        err = _train_error(S, beta, Y)
    return ARFFResult(omega, beta[:, 0] if one_d else beta, np.zeros(0), np.array([err]),
                      scale**2 * np.eye(X.shape[1]))
