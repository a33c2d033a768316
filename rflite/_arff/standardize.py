"""Algorithm 3's standardisation (private machinery of :mod:`rflite.metropolis`).

The ARFF estimators fit on inputs (and targets) standardised by their
training mean and standard deviation and fold the transform back into the
fitted map; :class:`Standardizer` holds the statistics.  :mod:`rflite.metropolis`
re-exports it and :data:`SD_FLOOR`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["SD_FLOOR", "Standardizer"]

#: Input columns whose training standard deviation is below this are only
#: centred, not scaled (Algorithm 3 would divide by zero, e.g. the constant
#: border pixels of the digits).
SD_FLOOR = 1e-12


class Standardizer(NamedTuple):
    """Training mean and standard deviation (``ddof = 1``) of Algorithm 3.

    ``scale`` is 1 where the training standard deviation is below
    :data:`SD_FLOOR` (constant columns are only centred).
    """

    mean: np.ndarray
    scale: np.ndarray

    @classmethod
    def fit(cls, A):
        A = np.asarray(A, dtype=np.float64)
        mean = A.mean(axis=0)
        sd = A.std(axis=0, ddof=1)
        return cls(mean, np.where(sd < SD_FLOOR, 1.0, sd))

    def transform(self, A):
        return (np.asarray(A, dtype=np.float64) - self.mean) / self.scale

    def inverse_transform(self, A):
        return np.asarray(A, dtype=np.float64) * self.scale + self.mean
