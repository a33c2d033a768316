"""Scores and exact sums: ``r2_score`` as scikit-learn defines it, and order-free float sums."""

from __future__ import annotations


import numpy as np

from rflite._core.linalg import weighted_mean
from rflite._core.validation import check_array, check_sample_weight
from rflite._core.exceptions import warn


class UndefinedMetricWarning(UserWarning):
    """A score is not defined for the given targets (scikit-learn's warning of that name)."""


def r2_score(y, pred, sample_weight=None) -> float:
    r"""Coefficient of determination, as scikit-learn's ``r2_score`` computes it.

    :math:`R^2_k = 1 - \sum_i w_i (y_{ik} - \hat y_{ik})^2 / \sum_i w_i
    (y_{ik} - \bar y_k)^2` per output ``k`` (:math:`\bar y_k` the weighted
    mean), averaged uniformly over the outputs.  A 1-d ``y`` or ``pred`` is a
    single output, so ``(n,)`` and ``(n, 1)`` compare; other shapes must
    agree (``ValueError`` naming both, never a silent broadcast or reshape).
    An output with constant ``y`` scores 1 when predicted exactly and 0
    otherwise (scikit-learn's ``force_finite``); fewer than two rows give NaN
    and an :class:`UndefinedMetricWarning`.  ``sample_weight`` as in ``fit``
    (:func:`check_sample_weight`).
    """
    y = check_array(y, "y", ndim=(1, 2))
    pred = np.asarray(pred)
    y2 = y[:, None] if y.ndim == 1 else y
    p2 = pred[:, None] if pred.ndim == 1 else pred
    if y2.shape[0] != p2.shape[0]:
        raise ValueError(f"y has {y2.shape[0]} rows but the predictions have {p2.shape[0]} "
                         f"(y.shape={y.shape}, predictions {pred.shape})")
    if y2.shape[1] != p2.shape[1]:
        raise ValueError(f"y has {y2.shape[1]} outputs but the predictions have {p2.shape[1]} "
                         f"(y.shape={y.shape}, predictions {pred.shape})")
    w = check_sample_weight(sample_weight, y2.shape[0])
    if y2.shape[0] < 2:
        warn("R^2 score is not well-defined with less than two samples.",
                      UndefinedMetricWarning)
        return float("nan")
    wc = np.ones((y2.shape[0], 1)) if w is None else w[:, None]
    resid = (wc * np.abs(y2 - p2) ** 2).sum(axis=0)
    total = (wc * np.abs(y2 - weighted_mean(y2, w)) ** 2).sum(axis=0)
    scores = np.where(resid == 0.0, 1.0, 0.0)
    defined = total != 0.0
    scores[defined] = 1.0 - resid[defined] / total[defined]
    return float(np.mean(scores))


#: Exponent buckets of :func:`exact_sum_parts`: every float64 is ``k * 2**e`` with an
#: integer ``|k| < 2**53`` and ``e`` in ``[-1126, 971]``.
EXACT_SUM_OFFSET = 1126
EXACT_SUM_BUCKETS = 1126 + 971 + 1


def exact_sum_parts(x) -> np.ndarray:
    r"""The exact sum of a float64 array as integer parts: a (2, EXACT_SUM_BUCKETS) int64 array.

    Each value is :math:`k\,2^e` (:func:`numpy.frexp`, ``|k| < 2**53``), split
    as :math:`k = 2^{26} h + l`; row 0 holds the sums of ``h`` and row 1 of
    ``l`` per exponent ``e``.  Integer sums are associative, so parts of any
    partition of the values add (exactly, up to :math:`2^{36}` values) to the
    parts of the whole: :func:`exact_total` of the summed parts does not depend
    on how the values were split or ordered (chunks of a Dask array).
    """
    x = np.asarray(x, dtype=np.float64).reshape(-1)
    mant, exp = np.frexp(x)
    k = (mant * 2.0**53).astype(np.int64)
    idx = exp.astype(np.int64) - 53 + EXACT_SUM_OFFSET
    out = np.zeros((2, EXACT_SUM_BUCKETS), dtype=np.int64)
    np.add.at(out[0], idx, k >> 26)
    np.add.at(out[1], idx, k & ((1 << 26) - 1))
    return out


def exact_total(parts, divisor: int = 1) -> float:
    """``sum / divisor`` correctly rounded, from :func:`exact_sum_parts` (summed over pieces)."""
    from fractions import Fraction

    parts = np.asarray(parts)
    nz = np.flatnonzero(parts[0] | parts[1])
    if nz.size == 0:
        return 0.0
    e0 = int(nz[0]) - EXACT_SUM_OFFSET
    total = sum(((int(parts[0, i]) << 26) + int(parts[1, i])) << (int(i) - int(nz[0]))
                for i in nz)
    scale = Fraction(2) ** e0
    return float(Fraction(total) * scale / divisor)
