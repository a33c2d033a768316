r"""The shared fit of the ARFF estimators (private machinery of :mod:`rflite.metropolis`).

:class:`_ARFFBase`, the base of :class:`~rflite.metropolis.ARFFRegressor`
and :class:`~rflite.metropolis.ARFFClassifier`: Algorithm 3 (standardise,
sample, fold the standardisation into the fitted map), the paper's exact
fit on all rows (``early_stopping=False``) and the default early stopping
on a validation split with ``lam`` chosen from :data:`LAM_GRID`, with the
estimators' tunable defaults.  :mod:`rflite.metropolis` re-exports the
constants.
"""

from __future__ import annotations

import math

import numpy as np

from rflite._arff.chain import (ARFFResult, _fixed_rff, _ProgressMonitor, _sample_arff,
                                _ValidationMonitor)
from rflite._arff.kernels import _blas_limit, _features, _gram, _rhs, _row_sq_norms, _solve
from rflite._arff.standardize import Standardizer
from rflite._base import RandomFeatureModel
from rflite._core.backend import dask_backend, is_dask_array
from rflite._core.folds import _canonical_order, holdout_split
from rflite._core.progress import Progress
from rflite._core.validation import check_bool, check_choice, check_int, check_real
from rflite.features import FeatureMap

__all__ = ["LAM_PAPER", "LAM_GRID", "DELTA_EARLY"]

#: The paper's Tikhonov parameter (Sec. 5: lambda = 0.1 in every case); the
#: sampler's ``lam`` when ``lam="auto"``.
LAM_PAPER = 0.1

#: Ridge parameters the early-stopping estimators choose the final ``lam_``
#: from on the validation split (``lam="auto"``; the shift is ``lam N`` on a
#: Gram matrix whose diagonal is ``N``, so 1 halves every amplitude of
#: orthogonal features and 1e-8 is almost unregularised).
LAM_GRID = np.logspace(-8, 1, 19)

#: Default proposal step of the early-stopping estimators,
#: ``delta = DELTA_EARLY / sqrt(d)`` on standardised inputs: small enough that
#: the chain, which starts at omega = 0, passes through the low frequencies (a
#: near-linear model) slowly, so that the validation checks every
#: ``refit_every`` iterations can stop it at the right scale.  The paper's
#: ``2.4^2 / d`` reaches per-coordinate frequencies near 1 within ten
#: iterations for d = 20, before the first check (Friedman-1 with d = 20
#: then stops at a validation error about twice that of ridge).
DELTA_EARLY = 0.1


class _ARFFBase(RandomFeatureModel):
    """Shared fitting of the ARFF estimators (see :class:`~rflite.metropolis.ARFFRegressor`)."""

    #: How the validation error scores the complex model: the real part
    #: (regression, what ``predict`` returns) or the modulus (the classifier's
    #: one-hot outputs, whose arg max of moduli is the prediction).
    _validation_part = "real"

    _predicts_all_columns = True
    _weights_as_rows = True

    def __init__(self, n_features=128, *, n_iter=1000, method="metropolis", scale=1.0,
                 delta=None, gamma=None, lam="auto", refit_every=10,
                 adaptive_covariance=False, burn_in=None, omega_max=math.inf,
                 activation="exp", early_stopping=True, validation_fraction=0.2,
                 n_iter_no_change=5, tol=1e-4, verbose=0, random_state=None, clip_inputs=False):
        self.clip_inputs = clip_inputs
        self.n_features = n_features
        self.n_iter = n_iter
        self.method = method
        self.scale = scale
        self.delta = delta
        self.gamma = gamma
        self.lam = lam
        self.refit_every = refit_every
        self.adaptive_covariance = adaptive_covariance
        self.burn_in = burn_in
        self.omega_max = omega_max
        self.activation = activation
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.verbose = verbose
        self.random_state = random_state

    def _check_lam(self, early_stopping):
        """``(sampler lam, lam grid or None)`` from ``lam``."""
        if isinstance(self.lam, str):
            if self.lam != "auto":
                raise ValueError(f"lam must be a positive number or 'auto', got {self.lam!r}")
            if early_stopping:
                return LAM_PAPER, LAM_GRID
            return LAM_PAPER, None
        return check_real(self.lam, "lam", minimum=0.0, strict=True), None

    def _fit_targets(self, X, T, *, center_y):
        """Standardise (Algorithm 3), run the sampler and store the folded solution.

        ``center_y``: True centres and scales ``T``, False only scales it,
        None leaves it as it is (the classifier's one-hot targets).
        """
        check_choice(self.method, "method", ("metropolis", "fixed"))
        # checked whatever the method (only "fixed" uses it), as every parameter is
        check_real(self.scale, "scale", minimum=0.0, strict=True)
        early = check_bool(self.early_stopping, "early_stopping")
        if early:
            # a canonical row order before anything is computed from the rows
            # (standardisation included): the fit then does not depend on the
            # order of the rows, and integer weights (repeated rows) equal the
            # repeated-rows fit exactly
            order = _canonical_order(X, T)
            X, T = X[order], T[order]
        x_std = Standardizer.fit(X)
        t_std = None
        if center_y is not None:
            t_std = Standardizer.fit(T)
            if not center_y:
                t_std = Standardizer(np.zeros_like(t_std.mean), t_std.scale)
        lam, lam_grid = self._check_lam(early)
        progress = Progress(self.verbose, type(self).__name__)
        Xn = x_std.transform(X)
        Tn = t_std.transform(T) if t_std is not None else T
        rng = self._rng()
        if early:
            res, best_lam = self._fit_early_stopping(Xn, Tn, lam, lam_grid, rng, progress)
        else:
            res = self._fit_paper(Xn, Tn, lam, rng, progress)
            best_lam = lam
            self.n_iter_ = res.acceptance.size
            self.best_iteration_ = self.n_iter_
            self.validation_scores_ = None
        return self._store(res, x_std, t_std, best_lam, X.shape[1])

    def _store(self, res, x_std, t_std, lam, d):
        """Fold Algorithm 3's standardisation into the fitted map; returns ``self``."""
        self.lam_ = lam
        self.result_ = res
        self.x_standardizer_ = x_std
        self.y_standardizer_ = t_std
        # fold Algorithm 3 into the map: w.(x - mu)/sd + b = (w/sd).x + (b - w.mu/sd)
        W = res.frequencies[:, :d] / x_std.scale
        b = -W @ x_std.mean
        if self.activation == "sigmoid":
            b = b + res.frequencies[:, d]
        K = W.shape[0]
        fmap = FeatureMap(np.tile(np.arange(d), (K, 1)), W, b, self.activation, d)
        beta = res.amplitudes.reshape(K, -1)
        if t_std is not None:
            coef = beta * t_std.scale
            intercept = np.atleast_1d(t_std.mean).copy()
        else:
            coef = beta
            intercept = np.zeros(beta.shape[1])
        self.feature_map_ = fmap
        self.support_ = np.arange(K)
        self.n_features_in_ = d
        self.n_outputs_ = beta.shape[1]
        self.coef_ = coef
        self.intercept_ = intercept
        self.frequencies_ = res.frequencies
        return self

    def _fit_paper(self, Xn, Tn, lam, rng, progress):
        """The paper's algorithms on all rows, exactly (``early_stopping=False``)."""
        if self.method == "fixed":
            return _fixed_rff(Xn, Tn, self.n_features, self.scale, lam, self.activation, rng)
        return _sample_arff(Xn, Tn, self.n_features, self.n_iter, self.delta, self.gamma, lam,
                            self.refit_every, self.adaptive_covariance, self.burn_in,
                            self.omega_max, self.activation, rng, None,
                            _ProgressMonitor(progress, self.n_iter) if progress else None)

    def _fit_early_stopping(self, Xn, Tn, lam, lam_grid, rng, progress):
        """Sampler on a training part, stopped and ``lam`` chosen on the validation part.

        The rows are first put in a canonical (lexicographic) order, so that the
        fit does not depend on the order of the rows and integer sample weights
        (repeated rows) give exactly the repeated-rows fit.  Then
        :func:`rflite._core.folds.holdout_split` holds out ``validation_fraction`` of
        them; the Metropolis chain runs on the rest with ``lam``, the
        validation MSE of the current model is recorded after every iteration
        (iteration 0 is the constant model), and the run stops once it has not
        improved by ``tol`` for ``n_iter_no_change`` iterations.  The
        frequencies of the best iteration are kept; the ridge parameter is
        chosen from ``lam_grid`` (if given) by the validation MSE of the
        amplitudes solved on the training part, and the amplitudes are finally
        re-solved on all rows.
        """
        N = Xn.shape[0]
        train, val, n_no_change, tol, delta = self._early_setup(Xn.shape, rng)
        Xt, Tt, Xv, Tv = Xn[train], Tn[train], Xn[val], Tn[val]
        act = self.activation
        monitor = _ValidationMonitor(Xv, Tv, act, n_no_change, tol, self._validation_part,
                                     progress, self.n_iter, lam_grid)
        if self.method == "fixed":
            res = _fixed_rff(Xt, Tt, self.n_features, self.scale, lam, act, rng)
            Xta = np.hstack([Xt, np.ones((Xt.shape[0], 1))]) if act == "sigmoid" else Xt
            S = _features(Xta, res.frequencies, act)
            monitor.record(0, res.frequencies,
                           res.amplitudes.reshape(res.frequencies.shape[0], -1),
                           res.train_error[0], _gram(S), _rhs(S, Tt.reshape(S.shape[0], -1)),
                           S.shape[0])
        else:
            res = _sample_arff(Xt, Tt, self.n_features, self.n_iter, delta, self.gamma, lam,
                               self.refit_every, self.adaptive_covariance, self.burn_in,
                               self.omega_max, act, rng, None, monitor)
        omega = monitor.best_omega
        self.n_iter_ = res.acceptance.size
        self.best_iteration_ = monitor.best_iteration
        self.validation_scores_ = np.array(monitor.scores)
        self.validation_iterations_ = np.array(monitor.iterations, dtype=np.int64)
        Xa = np.hstack([Xn, np.ones((N, 1))]) if act == "sigmoid" else Xn
        Y = Tn.reshape(N, -1)
        best_lam = lam if monitor.best_lam is None else monitor.best_lam
        with _blas_limit(N * omega.shape[0] ** 2):
            S = _features(Xa, omega, act)
            beta = _solve(_gram(S), _rhs(S, Y), best_lam * N)
        one_d = Tn.ndim == 1
        res = ARFFResult(omega, beta[:, 0] if one_d else beta, res.acceptance, res.train_error,
                         res.covariance)
        return res, best_lam

    def _early_setup(self, shape, rng, split=holdout_split):
        """Early stopping's checks and hold-out split of N rows: ``(train, val,
        n_iter_no_change, tol, delta)`` (shared with the Dask fit, whose
        ``split`` returns lazy row selections for very tall X)."""
        validation_fraction = check_real(self.validation_fraction, "validation_fraction",
                                         minimum=0.0, strict=True, maximum=1.0)
        if validation_fraction >= 1.0:
            raise ValueError(f"validation_fraction must be in (0, 1), got "
                             f"{self.validation_fraction!r}")
        n_no_change = check_int(self.n_iter_no_change, "n_iter_no_change", minimum=1)
        tol = check_real(self.tol, "tol", minimum=0.0)
        N, d = shape
        if N < 3:
            raise ValueError(
                f"early_stopping=True needs at least 3 samples (a training part of 2 and a "
                f"validation part of validation_fraction={self.validation_fraction!r}), got "
                f"n_samples={N}; pass early_stopping=False")
        train, val = split(N, validation_fraction, rng)
        if train.size < 2:
            train, val = np.arange(1, N), np.arange(1)
        delta = DELTA_EARLY / math.sqrt(d) if self.delta is None else self.delta
        return train, val, n_no_change, tol, delta

    def _decision(self, X):
        """The fitted model :math:`f(x) = \\sigma(W x + b) c + c_0`, complex for ``"exp"``."""
        if is_dask_array(X):
            return dask_backend().predict(self, X, real=False)
        X = self._validate_predict(X)
        A = self.feature_map_.transform(X)
        return A @ self.coef_ + self.intercept_

    def predict_complex(self, X) -> np.ndarray:
        r"""The paper's complex model :math:`f(x) = \sum_k \beta_k e^{i \omega_k \cdot x}`.

        On the original scale (standardisation folded in), (m,) or (m, p)
        for a regressor and (m, n_classes) for a classifier; complex for
        ``activation="exp"``, real for ``"sigmoid"``.  The paper's
        generalisation error is :math:`|f(\tilde x) - \tilde y|` of these
        values (see :func:`~rflite.metropolis.generalization_error`); ``predict`` of a regressor
        is their real part.
        """
        return self._decision(X)

    def variable_importance(self, weighting: str = "magnitude") -> np.ndarray:
        """Share of the amplitude mass (norm over outputs) per input variable."""
        self._check_fitted()
        from rflite.features import variable_usage

        coef = np.asarray(self.coef_)
        mass = np.sqrt(_row_sq_norms(coef.reshape(coef.shape[0], -1)))
        return variable_usage(self.feature_map_, mass, weighting=weighting)
