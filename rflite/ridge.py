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

from rflite._base import RandomFeatureModel
from rflite._numerics import check_int, check_real, check_X_y, ridge_fit

__all__ = ["RandomFeatureRidge"]


class RandomFeatureRidge(RandomFeatureModel):
    """Ridge regression on all N random features (no sparsity).

    Parameters
    ----------
    n_features : int
        Number of random features N.
    lam : float
        Ridge parameter :math:`\\lambda >= 0` (the penalty is ``m * lam``).
    q : int or None
        Nonzeros per weight vector (None: dense).
    distribution, bias, activation, subsets
        See :func:`rflite.features.random_feature_map`.
    random_state : None, int, Generator, RandomState or SeedSequence
        See :func:`rflite._numerics.check_rng` (a negative seed is an error).

    Examples
    --------
    >>> from rflite.datasets import make_friedman1
    >>> X, y = make_friedman1(200, d=20, rng=0)
    >>> model = RandomFeatureRidge(n_features=500, q=2, lam=1e-3, random_state=0).fit(X, y)
    >>> model.n_nonzero_
    500
    """

    def __init__(self, n_features=1000, *, lam=1e-3, q=None, distribution="normal",
                 bias="uniform", activation="sin", subsets="random", random_state=None):
        self.n_features = n_features
        self.lam = lam
        self.q = q
        self.distribution = distribution
        self.bias = bias
        self.activation = activation
        self.subsets = subsets
        self.random_state = random_state

    def _fit_workspace(self, m, n_columns, itemsize, dense):
        """Bytes a fit needs beyond the feature matrix (for ``_check_feature_memory``).

        :func:`rflite._numerics.ridge_fit` forms the ``min(m, N)`` square
        Gram matrix and :func:`~rflite._numerics.ridge_solve` one copy of it
        to factorise; the vectors are negligible but counted.
        """
        k = min(m, n_columns)
        return 2 * k * k * itemsize + 4 * (m + n_columns) * itemsize

    def fit(self, X, y):
        """Draw the features and solve the ridge problem; returns ``self``."""
        X, y = check_X_y(X, y, estimator=type(self).__name__)
        check_int(self.n_features, "n_features", minimum=1)
        lam = check_real(self.lam, "lam", minimum=0.0)
        if not np.isfinite(X.shape[0] * lam):
            raise ValueError(f"lam={lam:g} overflows float64 in the penalty m * lam "
                             f"(m={X.shape[0]}); lam must be far smaller")
        self._check_feature_memory(*X.shape)
        fmap = self._draw_features(X.shape[1], self._rng())
        A = fmap.transform(X)
        coef = ridge_fit(A, y, X.shape[0] * lam)
        return self._set_solution(fmap, np.arange(fmap.n_columns), coef)
