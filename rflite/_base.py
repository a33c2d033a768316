"""The model shape every rflite estimator shares.

A fitted model is a :class:`~rflite.features.FeatureMap` plus a sparse
coefficient vector (column indices ``support_`` and values ``coef_``) and an
intercept, so that prediction evaluates only the kept columns.  The class
follows scikit-learn's estimator conventions (constructor stores parameters,
``fit`` returns ``self``, fitted attributes end in ``_``, ``get_params`` /
``set_params`` / ``score``) without importing scikit-learn.
"""

from __future__ import annotations

import inspect
import sys

import numpy as np

from rflite._numerics import check_array, check_rng
from rflite.features import FeatureMap, random_feature_map, variable_usage

__all__ = ["RandomFeatureModel", "NotFittedError"]


class NotFittedError(ValueError, AttributeError):
    """Raised when a model is used before ``fit``."""


def _not_fitted_error_class():
    """:class:`NotFittedError`, also an instance of scikit-learn's when that is loaded.

    scikit-learn tools (``check_is_fitted``, the estimator checks) test for
    their own class; subclassing it only when scikit-learn is already imported
    keeps it out of rflite's runtime dependencies.
    """
    sk = sys.modules.get("sklearn.exceptions")
    if sk is None:
        return NotFittedError
    global _SK_NOT_FITTED
    if _SK_NOT_FITTED is None:
        _SK_NOT_FITTED = type("NotFittedError", (NotFittedError, sk.NotFittedError), {})
    return _SK_NOT_FITTED


_SK_NOT_FITTED = None


class RandomFeatureModel:
    """Base class: feature options, parameter handling, sparse prediction.

    Subclasses implement ``fit(X, y)``, which must call :meth:`_draw_features`
    and finally :meth:`_set_solution`.  Feature options shared by all models
    (see :func:`rflite.features.random_feature_map`): ``n_features``, ``q``,
    ``subsets``, ``distribution``, ``bias``, ``activation``, ``random_state``.
    """

    # -- scikit-learn conventions --------------------------------------------
    @classmethod
    def _get_param_names(cls):
        sig = inspect.signature(cls.__init__)
        return sorted(
            p.name for p in sig.parameters.values()
            if p.name != "self" and p.kind != p.VAR_KEYWORD
        )

    def get_params(self, deep: bool = True) -> dict:
        """Constructor parameters as a dict (scikit-learn convention)."""
        return {name: getattr(self, name) for name in self._get_param_names()}

    def set_params(self, **params):
        """Set constructor parameters; unknown names raise ``ValueError``."""
        valid = set(self._get_param_names())
        for key, value in params.items():
            if key not in valid:
                raise ValueError(f"invalid parameter {key!r} for {type(self).__name__}")
            setattr(self, key, value)
        return self

    _estimator_type = "regressor"

    def __sklearn_tags__(self):
        # only scikit-learn calls this, so importing it here adds no runtime dependency
        from sklearn.utils import ClassifierTags, InputTags, RegressorTags, Tags, TargetTags

        is_regressor = self._estimator_type == "regressor"
        return Tags(
            estimator_type=self._estimator_type,
            target_tags=TargetTags(required=True),
            regressor_tags=RegressorTags() if is_regressor else None,
            classifier_tags=ClassifierTags() if self._estimator_type == "classifier" else None,
            input_tags=InputTags(),
        )

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    # -- fitting helpers -----------------------------------------------------
    def _default_distribution(self, d: int):
        """Weight distribution used when ``distribution=None`` (the feature map's default)."""
        return None

    def _draw_features(self, d: int, rng) -> FeatureMap:
        dist = self.distribution if self.distribution is not None else self._default_distribution(d)
        return random_feature_map(
            d, self.n_features, q=self.q, subsets=getattr(self, "subsets", "random"),
            distribution=dist, bias=self.bias, activation=self.activation, rng=rng,
        )

    def _check_feature_memory(self, m: int, d: int, *, dense: bool = True) -> None:
        """Refuse up front (``MemoryError`` naming ``n_features``) a fit that cannot fit in memory.

        Estimated before anything is drawn, against
        :func:`rflite._numerics.available_memory` (``MemAvailable``, cgroup
        limits and ``RLIMIT_AS``): the ``m x n_columns`` training feature
        matrix (``dense``; 2N columns for ``"fourier"``, complex for
        ``"exp"``) plus the solver's workspace, the bytes an estimator's
        optional ``_fit_workspace(m, n_columns, itemsize, dense)`` method
        returns (for HARFE the support columns and factor, for ridge the two
        Gram matrices), so that the estimate is the peak of the fit (no other
        full-size temporaries are made: validation is chunked, real matrices
        are not conjugated).  Matrix-free fits need only the ``N x q``
        weights besides the workspace.  Called by ``fit`` right after the
        input is validated.
        """
        from rflite._numerics import check_int, check_memory

        n = check_int(self.n_features, "n_features", minimum=1)
        activation = getattr(self, "activation", "sin")
        n_columns = 2 * n if activation == "fourier" else n
        q = getattr(self, "q", None)
        q = d if q is None or isinstance(q, bool) or not isinstance(q, int) else min(q, d)
        dtype = np.dtype(np.complex128 if activation == "exp" else np.float64)
        workspace = getattr(self, "_fit_workspace", None)
        extra = int(workspace(m, n_columns, dtype.itemsize, dense)) if workspace else 0
        # supports (int64) + values + bias, and BLAS / LAPACK buffers and
        # allocator slack (14-18 MiB measured above the arrays' sum on HARFE
        # and ridge fits of a 381 MiB matrix)
        weights = n * (2 * q + 1) * 8
        extra += 32 << 20
        hint = "use fewer features (n_features)"
        if dense:
            check_memory(
                (m, n_columns), dtype,
                f"the training feature matrix (m samples x n_columns, n_features={n})",
                hint + " or the matrix-free option where the estimator has one",
                extra=extra + weights,
            )
        check_memory((n, 2 * q + 1), np.float64, f"the random weights (n_features={n})", hint,
                     extra=extra)

    def _rng(self):
        return check_rng(self.random_state)

    def _set_solution(self, fmap: FeatureMap, support, coef, intercept=0.0):
        support = np.asarray(support, dtype=np.int64)
        coef = np.asarray(coef)
        nz = coef != 0
        self.feature_map_ = fmap
        self.support_ = support[nz]
        self.coef_ = coef[nz]
        self.intercept_ = intercept
        self.n_features_in_ = fmap.n_inputs
        return self

    # -- prediction and reporting -------------------------------------------
    def _check_fitted(self):
        if not hasattr(self, "coef_"):
            raise _not_fitted_error_class()(
                f"this {type(self).__name__} is not fitted yet; call fit first"
            )

    def predict(self, X) -> np.ndarray:
        r"""Real predictions :math:`\mathrm{Re}\,(A(X)_{:, S} c_S + c_0)` from the kept columns.

        For the complex ``"exp"`` activation the fitted model
        :math:`f(x) = A(x)_{:, S} c_S + c_0` is complex (as in the ARFF paper,
        Kammonen et al. 2020, whose error is the modulus :math:`|f - y|`).
        The targets of every rflite regressor are real, and for real ``y``
        :math:`|\mathrm{Re} f(x) - y| \le |f(x) - y|`: the real part is never
        the worse real-valued prediction, and scikit-learn's regressors and
        :math:`R^2` need real outputs, so ``predict`` returns it.  The complex
        values are ``self.feature_map_.columns(X, self.support_) @ self.coef_
        + self.intercept_`` (ARFF estimators: ``predict_complex``).  Real
        activations return the model itself.
        """
        self._check_fitted()
        A = self.feature_map_.columns(X, self.support_)
        pred = A @ self.coef_ + self.intercept_
        return pred.real if self.feature_map_.is_complex else pred

    def score(self, X, y) -> float:
        """Coefficient of determination :math:`R^2` on ``(X, y)``."""
        y = check_array(y, "y", ndim=1)
        resid = y - self.predict(X)
        return 1.0 - float(resid @ resid) / float(((y - y.mean()) ** 2).sum())

    @property
    def n_nonzero_(self) -> int:
        """Number of nonzero coefficients (columns kept)."""
        self._check_fitted()
        return int(self.support_.size)

    @property
    def sparsity_(self) -> float:
        """Fraction of the ``n_columns`` columns with a nonzero coefficient."""
        return self.n_nonzero_ / self.feature_map_.n_columns

    def dense_coef(self) -> np.ndarray:
        """The full coefficient vector (length ``n_columns``)."""
        self._check_fitted()
        c = np.zeros(self.feature_map_.n_columns, dtype=self.coef_.dtype)
        c[self.support_] = self.coef_
        return c

    def variable_importance(self, weighting: str = "magnitude") -> np.ndarray:
        """Share of the coefficient mass per input variable (:func:`variable_usage`)."""
        self._check_fitted()
        return variable_usage(
            self.feature_map_, self.coef_, columns=self.support_, weighting=weighting
        )
