"""First passes over Dask rows: validation, weights, means and column scales.

What every distributed fit does before its algorithm: check ``X``, ``y`` and
the weights (:func:`_prepare`), one tree-reduced pass for the (weighted)
target and feature means and the sums of squares (:func:`_first_pass`), and
the centring and column scaling that the in-memory fits apply
(:func:`_centring`).
"""

from __future__ import annotations

import numpy as np

from rflite._core.validation import MAX_ABS
from rflite._dask.operator import (
    DaskFeatureOperator, check_dask_weight,
    check_dask_X, check_dask_y,
)


# ------------------------------------------------------------ chunk kernels
# Each returns a (1, L) array: one row of partial sums per chunk, summed by
# the tree reduction.  Module level, so that workers unpickle them by name.


def _k_first(Xb, Yb, *rest, with_features, with_sq=False):
    """Validation of a chunk of X and y, plus (weighted) column sums and y sums (first pass).

    ``rest`` is ``(state,)`` or ``(weights, state)``.  Returns ``[bad_X,
    bad_y, sum w, sum w y (k), sum w |y|^2 (k), sum w a (N), sum w |a|^2
    (N)]`` (w = 1 without weights; the last with ``with_sq`` only).  Non-finite or too large entries are counted rather
    than raised here, so that the client raises one clear ``ValueError``
    naming the argument and the rows.
    """
    state = rest[-1]
    w = np.asarray(rest[0], dtype=np.float64)[:, 0] if len(rest) == 2 else None
    Xf = np.asarray(Xb, dtype=np.float64)
    if not np.iscomplexobj(Yb):
        Yb = np.asarray(Yb, dtype=np.float64)
    bad_x = float(np.count_nonzero(~(np.abs(Xf) <= MAX_ABS)))
    bad_y = float(np.count_nonzero(~(np.abs(Yb) <= MAX_ABS)))
    Ya = Yb.real * Yb.real + (Yb.imag * Yb.imag if np.iscomplexobj(Yb) else 0.0)
    if w is None:
        total, sums, sq = float(Xf.shape[0]), Yb.sum(axis=0), Ya.sum(axis=0)
    else:
        total, sums, sq = float(w.sum()), w @ Yb, w @ Ya
    dtype = np.result_type(Yb.dtype, state.fmap.is_complex and np.complex128 or np.float64)
    parts = [np.array([bad_x, bad_y, total]), sums, sq]
    if with_features:
        col = np.zeros(state.fmap.n_columns, dtype=dtype)
        col_sq = np.zeros(state.fmap.n_columns)
        if not bad_x:
            for r0, r1, A in state.blocks(Xf):
                # BLAS products and einsum: no temporary of the block's size
                wb = np.ones(r1 - r0) if w is None else w[r0:r1]
                col += wb @ A
                if with_sq:
                    col_sq += np.einsum("i,ij,ij->j", wb, A.real, A.real)
                    if np.iscomplexobj(A):
                        col_sq += np.einsum("i,ij,ij->j", wb, A.imag, A.imag)
        parts.append(col)
        if with_sq:
            parts.append(col_sq)
    return np.concatenate([p.astype(dtype) for p in parts]).reshape(1, -1)


def _check_predict_X(est, X):
    """A Dask ``X`` for a fitted ``est``'s predict / transform: chunks, dtype and width."""
    X = check_dask_X(X)
    n = getattr(est, "n_features_in_", X.shape[1])
    if X.shape[1] != n:
        raise ValueError(
            f"X has {X.shape[1]} features, but {type(est).__name__} is expecting "
            f"{n} features as input (X must have {n} columns, got shape {X.shape})")
    return X


# ------------------------------------------------------------------ operator


# ---------------------------------------------------------------- estimators


def _first_pass(fmap, X, Y, with_features, W=None, with_sq=False):
    """Validate X and y (NaN / inf / too large) and get the (weighted) means, in one pass.

    Returns ``(y_mean (k,), col_mean (N,) or None, op)``; raises
    ``ValueError`` naming ``X`` or ``y``.  With weights ``W`` the means are
    :math:`\\sum_i w_i a_i / \\sum_i w_i` (:func:`rflite._core.linalg.weighted_mean`).
    """
    op = DaskFeatureOperator(fmap, X)
    k, n = Y.shape[1], fmap.n_columns
    with_sq = with_sq and with_features
    length = 3 + 2 * k + (n if with_features else 0) + (n if with_sq else 0)
    dtype = np.result_type(Y.dtype, np.complex128 if fmap.is_complex else np.float64)
    arrays = [Y] if W is None else [Y, W]
    out = op._reduce(_k_first, arrays, length, dtype, with_features=with_features,
                     with_sq=with_sq)
    if out[0].real:
        raise ValueError(f"X contains NaN, infinity or a value too large (|x| > {MAX_ABS:g}) "
                         f"in {int(out[0].real)} entries")
    if out[1].real:
        raise ValueError(f"y contains NaN, infinity or a value too large (|y| > {MAX_ABS:g}) "
                         f"in {int(out[1].real)} entries")
    total = out[2].real
    y_mean = out[3:3 + k] / total
    if not np.iscomplexobj(Y.dtype.type(0)):
        y_mean = y_mean.real
    col_mean = out[3 + 2 * k:3 + 2 * k + n] / total if with_features else None
    # the (weighted) sums of squares of the columns (centred norms without a pass)
    op.col_sq = out[3 + 2 * k + n:].real if with_sq else None
    if col_mean is not None and not fmap.is_complex:
        col_mean = col_mean.real
    return y_mean, col_mean, op


def _prepare(est, X, y, sample_weight, *, weights=False):
    """Checks common to the Dask fits; returns ``(X, Y, one_d)`` (and ``(W, total)``).

    ``weights`` False refuses ``sample_weight`` (fits that cannot weight
    rows); True validates it (:func:`check_dask_weight`) and returns
    ``(X, Y, one_d, W, total)``.
    """
    check_dask_X(X)
    if sample_weight is not None and not weights:
        raise ValueError(f"sample_weight is not supported for Dask input by "
                         f"{type(est).__name__} (pass sample_weight=None, or fit in memory)")
    Y, one_d = check_dask_y(y, X)
    if np.dtype(Y.dtype).kind == "c":
        raise ValueError(f"y must be real (Complex data not supported), got dtype {Y.dtype}")
    if weights:
        W, total = check_dask_weight(sample_weight, X)
    est.n_features_in_ = int(X.shape[1])
    if hasattr(est, "feature_names_in_"):
        del est.feature_names_in_
    est._one_d = one_d
    return (X, Y, one_d, W, total) if weights else (X, Y, one_d)


def _weighted_rows(Yc, W):
    r""":math:`\sqrt{w}\,Y_c` (lazy; ``Yc`` itself without weights), as ``center_and_weight``."""
    import dask.array as da

    return Yc if W is None else Yc * da.sqrt(W)


def _centring(fmap, X, Y, W, total, fit_intercept, normalize):
    """The first pass of HARFE's and SRFE's Dask fits: ``(y_mean, a_mean, scale, first)``.

    Validation (NaN / inf named) before anything else, then the (weighted)
    means of all rows (zero and None without ``fit_intercept``) and the
    column factors of ``normalize`` (:func:`_column_scale`); ``first`` is the
    pass's operator (its ``pass_seconds``).
    """
    y_mean, a_mean, first = _first_pass(fmap, X, Y, fit_intercept or normalize, W,
                                        with_sq=normalize)
    if not fit_intercept:
        a_mean, y_mean = None, np.zeros(Y.shape[1])
    return y_mean, a_mean, _column_scale(first, a_mean, total, normalize), first


def _column_scale(first, a_mean, total, normalize):
    r"""Column factors: 1, or 1 / the centred (weighted) training norms (``normalize``).

    The norms come from :func:`_first_pass`'s sums of squares without a pass
    of their own: :math:`\sum_i w_i |a_{ij} - \bar a_j|^2 = \sum_i w_i |a_{ij}|^2
    - (\sum_i w_i) |\bar a_j|^2` (as the in-memory matrix-free fits; relative
    rounding ~1e-16 of :math:`\sum_i w_i |a_{ij}|^2`).
    """
    scale = np.ones(first.fmap.n_columns)
    if normalize:
        sq = first.col_sq if a_mean is None else first.col_sq - total * np.abs(a_mean) ** 2
        norms = np.sqrt(np.maximum(sq, 0.0))
        nz = norms > 0
        scale[nz] = 1.0 / norms[nz]
    return scale
