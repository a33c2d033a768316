"""Which inputs each random feature depends on (public in :mod:`rflite.features`).

:func:`sample_supports` draws one random q-subset per feature (HARFE),
:func:`all_subsets_supports` spreads the features over every q-subset
(SHRIMP's Def. 3), and :func:`_check_distinct_rows` refuses a support that
repeats an input.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from rflite._core.random import check_rng
from rflite._core.validation import check_int
from rflite._features.kernels import _partial_fisher_yates


def _check_distinct_rows(supports):
    """``ValueError`` unless every row of ``supports`` has distinct entries.

    A repeated input in a row gave different features on the two transform
    paths (the dense BLAS weights keep one of the values, the sparse gather
    adds both).  One pass when the rows are sorted (what
    :func:`random_feature_map` draws); a sort only otherwise.
    """
    if supports.shape[1] < 2:
        return
    steps = np.diff(supports, axis=1)
    if np.all(steps > 0):
        return
    sorted_rows = np.sort(supports, axis=1)
    bad = np.flatnonzero((np.diff(sorted_rows, axis=1) == 0).any(axis=1))
    if bad.size:
        raise ValueError(f"supports must be distinct within each row; row {int(bad[0])} "
                         f"repeats an input: {supports[bad[0]].tolist()}")


def sample_supports(d: int, n_features: int, q: int, rng=None) -> np.ndarray:
    """Draw one uniformly random q-subset of ``range(d)`` per feature (HARFE).

    Parameters
    ----------
    d, n_features, q : int
        Input dimension, number of features, support size (``1 <= q <= d``).
    rng : None, int, Generator, RandomState or SeedSequence
        See :func:`rflite._core.random.check_rng` (a negative seed is an error).

    Returns
    -------
    supports : (n_features, q) int64 ndarray
        Sorted, distinct indices per row.  Row ``j`` uses only the ``q``
        uniforms drawn for it, so the rows are prefix stable.
    """
    d = check_int(d, "d", minimum=1)
    n_features = check_int(n_features, "n_features", minimum=1)
    q = check_int(q, "q", minimum=1, maximum=d)
    rng = check_rng(rng)
    out = np.empty((n_features, q), dtype=np.int64)
    if q == d:
        out[:] = np.arange(d)
        return out
    _partial_fisher_yates(rng.random((n_features, q)), d, out)
    return out


def all_subsets_supports(d: int, n_features: int, q: int, rng=None) -> np.ndarray:
    """Supports of SHRIMP's Def. 3: ``n = N // C(d, q)`` features per q-subset.

    Every one of the ``C(d, q)`` subsets (in lexicographic order) is repeated
    ``n`` times, so ``n * C(d, q) <= N`` rows are returned.  When
    ``C(d, q) > N`` this is impossible and, as in the original SHRIMP code,
    one random subset per feature is drawn instead (:func:`sample_supports`).
    """
    d = check_int(d, "d", minimum=1)
    n_features = check_int(n_features, "n_features", minimum=1)
    q = check_int(q, "q", minimum=1, maximum=d)
    n_subsets = math.comb(d, q)
    if n_subsets > n_features:
        return sample_supports(d, n_features, q, rng)
    per_subset = n_features // n_subsets
    subsets = np.array(list(itertools.combinations(range(d), q)), dtype=np.int64)
    return np.repeat(subsets, per_subset, axis=0)
