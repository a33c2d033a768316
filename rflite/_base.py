"""The model shape every rflite estimator shares.

A fitted model is a :class:`~rflite.features.FeatureMap` plus a sparse
coefficient vector (column indices ``support_`` and values ``coef_``) and an
intercept, so that prediction evaluates only the kept columns.  The class
follows scikit-learn's estimator conventions (constructor stores parameters,
``fit`` returns ``self``, fitted attributes end in ``_``, ``get_params`` /
``set_params`` / ``score``) without importing scikit-learn.
"""

from __future__ import annotations


import numpy as np

from rflite._core.backend import dask_backend, fitted_locally, is_dask_array, local_arrays
from rflite._core.validation import (
    check_array, check_bool, check_sample_weight, check_targets, relative_weights,
    repetition_counts)
from rflite._core.memory import check_memory
from rflite._core.random import check_rng
from rflite._core.linalg import center_and_weight
from rflite._core.metrics import r2_score
from rflite._core.estimator import EstimatorMixin, FeatureNamesWarning, feature_names
from rflite.features import FeatureMap, random_feature_map, variable_usage
from rflite._core.exceptions import (  # noqa: F401 - public here
    EffectiveFeaturesWarning, MagnitudeWarning, NotFittedError, QClippedWarning,
    _not_fitted_error_class)
from rflite._core.exceptions import warn

__all__ = ["RandomFeatureModel", "NotFittedError", "FeatureNamesWarning",
           "QClippedWarning", "EffectiveFeaturesWarning", "MagnitudeWarning"]





def _centered_operator(fmap, X, *, normalize: bool):
    r"""Matrix-free centred (and optionally column-normalised) feature matrix.

    The operator :math:`(A - 1 \mu^T)\,\mathrm{diag}(s)` with
    :math:`\mu = A^T 1 / m` (column means, from one product with the ones
    vector) and :math:`s_j = 1 / \|a_j - \mu_j 1\|` when ``normalize``
    (:math:`\|a_j - \mu_j 1\|^2 = \|a_j\|^2 - m |\mu_j|^2`), so that
    matrix-free fits centre the features exactly as dense fits do, without
    the m x N matrix.  Returns ``(operator, mu, scale)``.
    """
    from scipy.sparse.linalg import LinearOperator

    op0 = fmap.operator(X)
    m = X.shape[0]
    mu = np.conj(op0.rmatvec(np.ones(m))) / m
    scale = np.ones(fmap.n_columns)
    if normalize:
        sq = op0.column_norms() ** 2 - m * np.abs(mu) ** 2
        norms = np.sqrt(np.maximum(sq, 0.0))
        nz = norms > 0
        scale[nz] = 1.0 / norms[nz]
        op = fmap.operator(X, col_scale=scale)
    else:
        op = op0
    mu_s = mu * scale

    class _Centered(LinearOperator):
        def __init__(self):
            super().__init__(op.dtype, op.shape)

        def _matvec(self, c):
            c = np.ravel(c)
            return op.matvec(c) - (mu_s @ c)

        def _rmatvec(self, r):
            r = np.ravel(r)
            return op.rmatvec(r) - np.conj(mu_s) * r.sum()

        def columns(self, idx):
            return np.asarray(op.columns(idx)) - mu_s[idx]

    return _Centered(), mu, scale


#: The estimators whose ``fit`` runs on Dask arrays, for messages.
DASK_ESTIMATORS = ("HARFERegressor", "HARFECV", "RandomFeatureRidge", "RandomFeatureRidgeCV",
                   "SHRIMPRegressor", "SHRIMPCV", "SRFERegressor", "SRFECV", "ARFFRegressor",
                   "ARFFClassifier", "GFCRegressor")


def refuse_dask(est, X, y, sample_weight=None):
    """Refuse Dask input to an in-memory ``fit`` instead of loading it silently.

    The estimators with a distributed fit dispatch to the Dask backend
    (:meth:`RandomFeatureModel._fit_dask`)
    before validating; a NumPy ``X`` with a Dask ``y`` or ``sample_weight``
    reaches this check through :meth:`RandomFeatureModel._validate_fit` and
    is refused: loading an out-of-core array into one process must be the
    user's decision, with its size in view.
    """
    for name, a in (("X", X), ("y", y), ("sample_weight", sample_weight)):
        if is_dask_array(a):
            size = a.nbytes / 2**20 if np.isfinite(a.nbytes) else float("nan")
            raise ValueError(
                f"{name} is a Dask array {tuple(a.shape)}: {type(est).__name__} fits in memory "
                f"and does not load Dask arrays silently. Pass NumPy arrays "
                f"({name}.compute(), {size:.0f} MB), or a Dask X, y (and weights) to an "
                f"estimator that fits on Dask ({', '.join(DASK_ESTIMATORS)}); predict() "
                "accepts Dask arrays and is lazy.")


class RandomFeatureModel(EstimatorMixin):
    """Base class: feature options, parameter handling, sparse prediction.

    Subclasses implement ``fit(X, y)``, which must call :meth:`_draw_features`
    and finally :meth:`_set_solution`.  Feature options shared by all models
    (see :func:`rflite.features.random_feature_map`): ``n_features``, ``q``,
    ``subsets``, ``distribution``, ``bias``, ``activation``, ``random_state``.
    """

    _estimator_type = "regressor"
    #: ``predict`` evaluates every column of ``feature_map_`` (``coef_`` has a
    #: row per column) rather than the columns of ``support_``.
    _predicts_all_columns = False
    #: ``fit`` realises ``sample_weight`` by repeating rows (:meth:`_repeat_rows`).
    _weights_as_rows = False


    def _check_against_mean(self, X, y, sample_weight, share):
        r"""A default fit's choice checked against the training mean; the mask of outputs made the mean.

        Call at the end of ``fit`` when the automatic choice ran.  When the
        hold-out the choice would use, ``share`` of the distinct rows, has
        fewer than :data:`~rflite._core.selection.MIN_HOLDOUT_ROWS` rows, the
        whole fit is cross-validated against the mean
        (:func:`rflite._core.selection.nested_loses_to_mean`, five more
        fits) and each output that loses becomes the training mean
        (:meth:`_outputs_to_mean`).  Returns the mask, or ``None`` when
        nothing was checked (a larger hold-out, or one of the check's own
        fits).  On Dask input the check runs on the client, as
        in memory, when it applies
        (:func:`rflite._dask.backend.mean_check_arrays`).
        """
        from rflite._core.selection import MIN_HOLDOUT_ROWS, nested_loses_to_mean

        if getattr(self, "_skip_mean_check", False):
            return None
        if is_dask_array(X):
            if fitted_locally(X):
                return None  # the fit ran in memory, its check included
            local = dask_backend().mean_check_arrays(X, y, sample_weight, share)
            if local is None:
                return None
            X, y, sample_weight = local
        X, Y, w = self._validate_fit(X, y, sample_weight)
        if np.unique(X, axis=0).shape[0] * share >= MIN_HOLDOUT_ROWS:
            return None
        if self._weights_as_rows and w is not None:
            # the folds' fits must see the rows the fit saw: a fold's weights
            # alone would be reduced by their own common divisor
            X, Y = self._repeat_rows(X, Y, w)
            w = None
        lose = nested_loses_to_mean(self, X, Y, w, self._rng())
        if lose is not None and lose.any():
            self._outputs_to_mean(lose, np.average(Y, axis=0, weights=w))
        if lose is not None and hasattr(self, "mean_model_"):
            merged = np.atleast_1d(self.mean_model_) | lose
            self.mean_model_ = bool(merged[0]) if getattr(self, "_one_d", True) else merged
        return lose

    def _outputs_to_mean(self, outputs, y_mean):
        """Make the outputs ``outputs`` (a boolean mask) of the fitted model the mean ``y_mean``.

        Their coefficients become zero and their intercepts ``y_mean``; the
        columns no output uses any more leave ``support_`` (unless the model
        predicts from every column of its map, ``_predicts_all_columns``).
        """
        one = getattr(self, "_one_d", True)
        c0 = np.atleast_1d(np.array(self.intercept_, copy=True))
        C = np.array(self.coef_, copy=True).reshape(-1, c0.size)
        outputs = np.asarray(outputs, dtype=bool)
        C[:, outputs] = 0
        c0[outputs] = np.atleast_1d(y_mean)[outputs]
        if not self._predicts_all_columns:
            keep = np.any(C != 0, axis=1)
            self.support_, C = self.support_[keep], C[keep]
        self.coef_ = C[:, 0] if one else C
        self.intercept_ = c0[0].item() if one else c0

    def _fit_dask(self, X, y, sample_weight=None, **kwargs):
        """Fit on a Dask ``X`` (and ``y``, weights) through the Dask backend.

        The one place an estimator reaches the backend for a fit
        (:mod:`rflite._core.backend`); the backend finds this estimator's
        distributed fit by its class and returns ``self``.  A small ``X``
        (:data:`rflite._core.backend.LOCAL_FIT_MAX_ROWS` rows) is computed and
        fitted in memory instead: the same model as the NumPy fit, without
        the task graphs' overhead (``dask_passes_`` and ``dask_fit_seconds_``
        are then not set).
        """
        local = local_arrays(X, y, sample_weight)
        if local is not None:
            return type(self).fit(self, *local, **kwargs)
        return dask_backend().fit(self, X, y, sample_weight, **kwargs)
    def __sklearn_tags__(self):
        # only scikit-learn calls this, so importing it here adds no runtime dependency
        from sklearn.utils import ClassifierTags, InputTags, RegressorTags, Tags, TargetTags

        is_regressor = self._estimator_type == "regressor"
        return Tags(
            estimator_type=self._estimator_type,
            # regressors fit a 2-d y (one independent fit per output, or a joint one)
            target_tags=TargetTags(required=True, multi_output=is_regressor),
            regressor_tags=RegressorTags() if is_regressor else None,
            classifier_tags=ClassifierTags() if self._estimator_type == "classifier" else None,
            input_tags=InputTags(),
        )

    # -- input conventions (fit) ---------------------------------------------
    def _validate_fit(self, X, y, sample_weight):
        """Validate ``fit``'s data; record ``n_features_in_`` / ``feature_names_in_``.

        Returns ``X`` (m x d), ``Y`` (m x n_targets) and the weights (None or
        positive, with the zero-weight rows removed from ``X``, ``Y`` and
        ``w``: a zero weight is exactly a dropped row; relative to the
        smallest, :func:`rflite._core.validation.relative_weights`).  Sets ``self._one_d``
        so that :meth:`_finish` and ``predict`` return (n,) for a 1-d ``y``.
        """
        refuse_dask(self, X, y, sample_weight)
        names = feature_names(X)
        X, Y, one_d = check_targets(X, y, estimator=type(self).__name__)
        w = check_sample_weight(sample_weight, X.shape[0])
        if w is not None:
            keep = w > 0
            if not keep.all():
                X, Y, w = X[keep], Y[keep], w[keep]
            if not self._weights_as_rows:
                # c * sample_weight: the same bits (repeated rows get the same
                # integer counts from the weights as given, repetition_counts)
                w = relative_weights(w)
            if np.all(w == 1.0):
                w = None
        self.n_features_in_ = X.shape[1]
        self._record_input_range(X)  # the training box, for clip_inputs
        if names is not None:
            self.feature_names_in_ = names
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self._one_d = one_d
        return X, Y, w

    def _repeat_rows(self, X, Y, w):
        """``sample_weight`` as repeated rows (for methods with internal randomness).

        Methods whose fit splits or samples rows (GFC's folds and subsamples,
        ARFF's Metropolis sampler) cannot scale rows exactly; for them a row
        is repeated in proportion to its weight, by the smallest integers in
        the weights' proportions (:func:`rflite._core.validation.repetition_counts`):
        ``c * sample_weight`` gives the same fit as ``sample_weight``, and
        integer weights with greatest common divisor 1 *are* the repeated-rows
        fit (with the copies adjacent).  Weights in no integer proportion are
        refused (``ValueError`` naming ``sample_weight``).
        """
        if w is None:
            return X, Y
        k = repetition_counts(w, estimator=type(self).__name__)
        # before the repeat: proportions like 1 : 1e9 would otherwise fail
        # inside NumPy's allocation
        total = float(k.sum())
        check_memory((total, X.shape[1] + Y.shape[1]), np.float64,
                     f"X and y with every row repeated sample_weight times ({total:.4g} rows)",
                     f"{type(self).__name__} repeats rows of integer weight; use smaller "
                     "integer weights")
        return np.repeat(X, k, axis=0), np.repeat(Y, k, axis=0)

    def _effective_q(self, d: int):
        """``q`` clipped to ``d`` (recorded as ``q_``; ``QClippedWarning`` when clipped).

        A weight vector cannot have more nonzeros than there are inputs;
        scikit-learn-style estimators must accept one-column input with any
        default, so a larger ``q`` is clipped rather than refused.
        """
        q = self.q
        if q is not None and not isinstance(q, bool) and isinstance(q, (int, np.integer)) \
                and q > d:
            warn(
                f"q={q} exceeds the number of input variables d={d}; using q={d} "
                "(recorded in q_)", QClippedWarning)
            q = d
        self.q_ = q
        return q

    def _center_and_weight(self, A, Y, w, *, center_features=True):
        r"""Centre (weighted means) and scale rows by :math:`\sqrt{w}`, in place on ``A``.

        With ``fit_intercept``, the solve sees :math:`\tilde A = D(A - 1\bar a^T)`,
        :math:`\tilde Y = D(Y - 1 \bar y^T)`, :math:`D = \mathrm{diag}(\sqrt{w})`,
        :math:`\bar a = \sum_i w_i a_i / \sum_i w_i` (``center_features``;
        else :math:`\bar a = 0`), and the intercept is recovered exactly as
        :math:`c_0 = \bar y - \bar a^T c` (:meth:`_finish`).  A weighted
        least-squares / thresholding / l1 solve on :math:`(\tilde A, \tilde Y)`
        is the weighted problem, so integer weights equal repeated rows.

        Returns ``A``, ``Y``, ``a_mean`` (None when not centred) and ``y_mean``.
        """
        fit_intercept = check_bool(getattr(self, "fit_intercept", False), "fit_intercept")
        return center_and_weight(A, Y, w, fit_intercept=fit_intercept,
                                 center_features=center_features)

    def _finish(self, fmap: FeatureMap, supports, coefs, a_mean, y_mean):
        r"""Store per-output solutions as one union support (and exact intercepts).

        ``supports[k]`` / ``coefs[k]``: the columns and values of output k.
        ``support_`` is the sorted union, ``coef_`` has shape
        ``(len(support_), n_targets)`` (zeros where an output does not use a
        column) so that ``predict`` evaluates each kept column once; a 1-d
        ``y`` gives ``(len(support_),)``.  ``intercept_`` is
        :math:`\bar y - \bar a_S^T c` (float for a 1-d ``y``).
        """
        n_t = len(coefs)
        nz_sup = []
        for S, c in zip(supports, coefs):
            S = np.asarray(S, dtype=np.int64)
            c = np.asarray(c)
            nz_sup.append((S[c != 0], c[c != 0]))
        union = np.unique(np.concatenate([S for S, _ in nz_sup])) if nz_sup else \
            np.zeros(0, np.int64)
        dtype = np.result_type(*[c.dtype for _, c in nz_sup], np.float64)
        C = np.zeros((union.size, n_t), dtype=dtype)
        for k, (S, c) in enumerate(nz_sup):
            C[np.searchsorted(union, S), k] = c
        intercept = np.asarray(y_mean, dtype=dtype).copy()
        if a_mean is not None and union.size:
            intercept = intercept - a_mean[union] @ C
        self.feature_map_ = fmap
        self.support_ = union.astype(np.int64)
        if getattr(self, "_one_d", True):
            self.coef_ = C[:, 0]
            self.intercept_ = intercept[0] if np.iscomplexobj(intercept) else float(
                intercept[0])
        else:
            self.coef_ = C
            self.intercept_ = intercept
        self.n_features_in_ = fmap.n_inputs
        return self

    # -- fitting helpers -----------------------------------------------------
    def _default_distribution(self, d: int):
        """Weight distribution used when ``distribution=None`` (the feature map's default)."""
        return None

    def _draw_features(self, d: int, rng) -> FeatureMap:
        dist = self.distribution if self.distribution is not None else self._default_distribution(d)
        q = self._effective_q(d) if getattr(self, "q", None) is not None else None
        return random_feature_map(
            d, self.n_features, q=q, subsets=getattr(self, "subsets", "random"),
            distribution=dist, bias=self.bias, activation=self.activation, rng=rng,
        )

    def _check_feature_memory(self, m: int, d: int, *, dense: bool = True) -> None:
        """Refuse up front (``MemoryError`` naming ``n_features``) a fit that cannot fit in memory.

        Estimated before anything is drawn, against
        :func:`rflite._core.memory.available_memory` (``MemAvailable``, cgroup
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
        from rflite._core.validation import check_int
        from rflite._core.memory import check_memory

        n = check_int(self.n_features, "n_features", minimum=1)
        activation = getattr(self, "activation", "sin")
        n_columns = 2 * n if activation == "fourier" else n
        q = getattr(self, "q", None)
        q = d if q is None or isinstance(q, bool) or not isinstance(q, int) else min(q, d)
        dtype = np.dtype(np.complex128 if activation == "exp" else np.float64)
        workspace = getattr(self, "_fit_workspace", None)
        extra = int(workspace(m, n_columns, dtype.itemsize, dense)) if workspace else 0
        # supports (int64) + values + bias, and BLAS / LAPACK buffers and
        # allocator slack (some 15 MiB above the arrays' sum on HARFE and
        # ridge fits of a few hundred MiB)
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
        return check_rng(self.random_state, name="random_state")

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

    # -- the training box (optional input clipping) -------------------------
    def _record_input_range(self, X) -> None:
        """Store the training box ``input_min_`` / ``input_max_`` (per input column).

        Called by ``fit`` on the rows that are fitted (zero-weight rows
        already dropped).  Used by :meth:`_clip_inputs` when the estimator's
        ``clip_inputs`` is true.
        """
        X = np.asarray(X)
        self.input_min_ = X.min(axis=0) if X.shape[0] else np.zeros(X.shape[1])
        self.input_max_ = X.max(axis=0) if X.shape[0] else np.zeros(X.shape[1])

    def _clip_inputs(self, X) -> np.ndarray:
        r"""``X`` clipped to the training box when ``clip_inputs`` is true (else unchanged).

        A random-feature model :math:`\sum_j c_j \phi(\omega_j^T x + b_j)`
        is fitted only where there are data; far outside the training box the
        features keep oscillating (Fourier, sin, cos), saturate (tanh,
        sigmoid) or grow linearly (relu), and coefficients that cancel on the
        training rows stop cancelling, so predictions there are extrapolations
        of no particular kind.  Clipping each input column to
        ``[input_min_, input_max_]`` of the training rows predicts an outside
        point as its nearest point of the box (per coordinate): predictions
        stay within the range the model was fitted on.  Off by default
        (``clip_inputs=False``), so that predictions are the model's.
        """
        if not check_bool(getattr(self, "clip_inputs", False), "clip_inputs"):
            return X
        lo, hi = getattr(self, "input_min_", None), getattr(self, "input_max_", None)
        if lo is None or hi is None:
            return X
        return np.clip(X, lo, hi)

    def _validate_predict(self, X) -> np.ndarray:
        """Fitted check, name check, ``X`` validation (and clipping) for ``predict``."""
        self._check_fitted()
        self._check_feature_names(X)
        X = check_array(X, "X", ndim=2)
        n = getattr(self, "n_features_in_", X.shape[1])
        if X.shape[1] != n:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                f"{n} features as input (X must have {n} columns, got shape {X.shape})"
            )
        return self._clip_inputs(X)

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
        if is_dask_array(X):
            return dask_backend().predict(self, X)
        X = self._validate_predict(X)
        A = self.feature_map_.columns(X, self.support_)
        pred = A @ self.coef_ + self.intercept_
        return pred.real if self.feature_map_.is_complex else pred

    def score(self, X, y, sample_weight=None) -> float:
        """Coefficient of determination :math:`R^2` on ``(X, y)`` (uniform mean over outputs).

        scikit-learn's ``r2_score`` (:func:`rflite._core.metrics.r2_score`):
        ``y`` of shape (n,) or (n, 1) for a single output, weighted by
        ``sample_weight``; 1 / 0 for constant ``y`` (exact / not).
        """
        return r2_score(y, self.predict(X), sample_weight)

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
