r"""Plain random-feature ridge regression: the baseline every sparse model is compared with.

.. math::

    \min_{c \in \mathbb{R}^N} \; \|A c - y\|_2^2 + m \lambda \|c\|_2^2,
    \qquad A = \sigma(X W^T + b),

with dense or q-sparse random weights (Rahimi and Recht 2008; with q-sparse
weights, the dictionary of HARFE, Saha et al. 2023).  ``lam`` is
:math:`\lambda` (it is multiplied by ``m`` internally).
"""

from __future__ import annotations

import numpy as np

from rflite import _dask
from rflite._base import RandomFeatureModel
from rflite._numerics import check_int, check_real, ridge_fit

__all__ = ["RandomFeatureRidge"]


class RandomFeatureRidge(RandomFeatureModel):
    r"""Ridge regression on all N random features (no sparsity).

    Parameters
    ----------
    n_features : int
        Number of random features N.
    lam : float
        Ridge parameter :math:`\lambda >= 0` (the penalty is ``m * lam``).
    q : int or None
        Nonzeros per weight vector (None: dense).
    distribution, bias, activation, subsets
        See :func:`rflite.features.random_feature_map`.
    fit_intercept : bool, default True
        Centre ``y`` and the feature columns (weighted means) before the
        solve and recover the intercept exactly as
        :math:`c_0 = \bar y - \bar a^T c` (the penalty leaves it out).
        ``False`` fits through the origin (the behaviour before 0.2).
    random_state : None, int, Generator, RandomState or SeedSequence
        See :func:`rflite._numerics.check_rng` (a negative seed is an error).

    Attributes
    ----------
    feature_map_, support_, coef_, intercept_
        ``coef_`` is (N,) for a 1-d ``y`` and (N, n_targets) for a 2-d one
        (one ridge solve with n_targets right-hand sides: the outputs are
        independent).
    n_features_in_, feature_names_in_
        As in scikit-learn (names only for data frames with string columns).
    q_
        ``q`` clipped to the number of inputs.

    Notes
    -----
    ``sample_weight`` minimises :math:`\sum_i w_i (a_i^T c + c_0 - y_i)^2 +
    \lambda (\sum_i w_i) \|c\|^2` (rows scaled by :math:`\sqrt{w_i}`, the
    penalty scaled by :math:`\sum w` instead of m), so integer weights equal
    repeated rows and a zero weight equals a dropped row.

    Examples
    --------
    >>> from rflite.datasets import make_friedman1
    >>> X, y = make_friedman1(200, d=20, rng=0)
    >>> model = RandomFeatureRidge(n_features=500, q=2, lam=1e-3, random_state=0).fit(X, y)
    >>> model.n_nonzero_
    500
    """

    def __init__(self, n_features=1000, *, lam=1e-3, q=None, distribution="normal",
                 bias="uniform", activation="sin", subsets="random", fit_intercept=True,
                 random_state=None):
        self.n_features = n_features
        self.lam = lam
        self.q = q
        self.distribution = distribution
        self.bias = bias
        self.activation = activation
        self.subsets = subsets
        self.fit_intercept = fit_intercept
        self.random_state = random_state

    def _fit_workspace(self, m, n_columns, itemsize, dense):
        """Bytes a fit needs beyond the feature matrix (for ``_check_feature_memory``).

        :func:`rflite._numerics.ridge_fit` forms the ``min(m, N)`` square
        Gram matrix and :func:`~rflite._numerics.ridge_solve` one copy of it
        to factorise; the vectors are negligible but counted.
        """
        k = min(m, n_columns)
        return 2 * k * k * itemsize + 4 * (m + n_columns) * itemsize

    def fit(self, X, y, sample_weight=None):
        """Draw the features and solve the (weighted, centred) ridge problem; returns ``self``."""
        if _dask.is_dask_array(X):  # distributed fit (issue 16): all logic in rflite._dask
            return _dask.fit_ridge(self, X, y, sample_weight)
        X, Y, w = self._validate_fit(X, y, sample_weight)
        check_int(self.n_features, "n_features", minimum=1)
        lam = check_real(self.lam, "lam", minimum=0.0)
        total = X.shape[0] if w is None else float(w.sum())
        if not np.isfinite(total * lam):
            raise ValueError(f"lam={lam:g} overflows float64 in the penalty m * lam "
                             f"(m={total:g}); lam must be far smaller")
        self._check_feature_memory(*X.shape)
        fmap = self._draw_features(X.shape[1], self._rng())
        A, Yc, a_mean, y_mean = self._center_and_weight(fmap.transform(X), Y, w)
        # one solve for all outputs: the Gram matrix is shared
        C = ridge_fit(A, Yc, total * lam).reshape(fmap.n_columns, -1)
        cols = np.arange(fmap.n_columns)
        return self._finish(fmap, [cols] * C.shape[1], list(C.T), a_mean, y_mean)
