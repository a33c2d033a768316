r"""HARFE's choice of (s, lam) from the data: fold scores of the grid (private machinery of :mod:`rflite.htp`).

One fold of :class:`~rflite.htp.HARFERegressor`'s ``"auto"`` choice and of
:class:`~rflite.htp.HARFECV`: the fold's preprocessing (centring, weights,
column scaling), the warm-started HARFE grid (:func:`rflite.htp.harfe_grid`,
Saha, Schaeffer and Tran, *HARFE: hard-ridge random feature expansion*,
2023) scored on the validation rows, and the ridge over all columns
(``s = n_columns``) scored for every shift at once from one Gram matrix
(:func:`_ridge_predictions`, in dual form when the fold has fewer rows than
columns), dense or matrix-free (:func:`_harfe_fold_scores_mf`).  The HTP
loop is :mod:`rflite._htp.solver`'s; :mod:`rflite.htp` re-exports these names
(:data:`GRAM_BLOCK` and :data:`RIDGE_MAX_ROWS_MATRIX_FREE` are read here).
"""

from __future__ import annotations

import numpy as np

from rflite._base import _centered_operator
from rflite._htp.solver import HTPResult, _one_blas_thread, harfe_grid
from rflite._core.linalg import center_and_weight, ridge_fit, shifted_eigenvalues


#: Columns per block when a matrix-free fit forms the m x m Gram matrix of
#: the candidates over all columns.
GRAM_BLOCK = 2048


#: Matrix-free fits score the candidates over all columns only when the
#: training rows are at most this many: their m x m Gram matrix (800 MB here)
#: is the one object of the route that grows with m squared.  Above it those
#: candidates score infinitely bad (never chosen).  Dense fits form the
#: smaller of the two Gram matrices, min(m, N) square, never more than the
#: feature matrix itself.
RIDGE_MAX_ROWS_MATRIX_FREE = 10_000


def _prepare(A, Y, w, *, fit_intercept, normalize):
    """Centre (weighted), scale rows by sqrt(w), normalise columns; in place on ``A``.

    The preprocessing of :meth:`HARFERegressor.fit` (dense route), shared with
    the cross-validation folds.  Returns ``A, Yc, a_mean, y_mean, scale``.
    """
    A, Y, a_mean, y_mean = center_and_weight(A, Y, w, fit_intercept=fit_intercept)
    scale = np.ones(A.shape[1])
    if normalize:
        norms = np.sqrt(_column_sq_norms(A))
        nz = norms > 0
        scale[nz] = 1.0 / norms[nz]
        A *= scale
    return A, Y, a_mean, y_mean, scale


def _split_points(points, n_columns):
    """``(sparse, dense)``: the points with ``s < n_columns`` (HARFE) and the rest (ridge).

    The grid is ordered by ``s``, so the ridge points (``s >= n_columns``:
    HARFE keeps every column, its fixed point is the ridge solution over all
    columns) come last and are scored in closed form (:func:`_dual_ridge`).
    """
    sparse = [p for p in points if p[0] < n_columns]
    return sparse, [p for p in points if p[0] >= n_columns]


def _gram(A, other=None):
    """``(A A^*, B A^*)`` of an array or an operator with ``columns`` (in column blocks).

    ``other`` is a callable giving the columns of a second row set (validation
    rows) for the same indices, or an array; the operator route never forms
    the m x N matrix, only ``GRAM_BLOCK`` columns at a time.
    """
    if isinstance(A, np.ndarray):
        K = A @ A.conj().T
        return K, None if other is None else other @ A.conj().T
    n = A.shape[1]
    K = 0.0
    Kb = 0.0
    for j0 in range(0, n, GRAM_BLOCK):
        idx = np.arange(j0, min(n, j0 + GRAM_BLOCK))
        C = np.asarray(A.columns(idx))
        K = K + C @ C.conj().T
        if other is not None:
            Kb = Kb + other(idx) @ C.conj().T
    return K, (None if other is None else Kb)


def _dual_ridge(K, Kte, y, shifts):
    """Predictions ``Kte (K + shift I)^{-1} Y`` (``Y`` 2-d) at every shift from one eigendecomposition."""
    e, U = np.linalg.eigh(K)
    e = np.maximum(e.real, 0.0)
    b = U.conj().T @ y
    P = Kte @ U
    return [(P @ (b / shifted_eigenvalues(e, sh)[:, None])).real for sh in shifts]


def _ridge_predictions(A, B, Y, shifts):
    r"""Ridge predictions :math:`B (A^* A + \sigma I)^{-1} A^* Y` at every shift, dense ``A``.

    One eigendecomposition of the smaller Gram matrix: :math:`A^* A`
    (primal, N square) when ``A`` has fewer columns than rows, else
    :math:`A A^*` (dual, :func:`_dual_ridge`), so the memory is at most
    :math:`\min(m, N)^2`, never more than ``A`` itself.
    """
    m, n = A.shape
    if n >= m:
        K, Kte = _gram(A, B)
        return _dual_ridge(K, Kte, Y, shifts)
    AH = A.conj().T
    e, V = np.linalg.eigh(AH @ A)
    e = np.maximum(e.real, 0.0)
    b = V.conj().T @ (AH @ Y)
    P = B @ V
    return [(P @ (b / shifted_eigenvalues(e, sh)[:, None])).real for sh in shifts]


def _ridge_all_columns(A, y, shift):
    """HARFE with every column kept: the ridge coefficients over all columns (an HTPResult)."""

    n = A.shape[1]
    if isinstance(A, np.ndarray):
        coef = ridge_fit(A, y, shift)
    else:
        K, _ = _gram(A)
        alpha = np.linalg.solve(K + shift * np.eye(K.shape[0]), y)
        coef = np.asarray(A.rmatvec(alpha)).ravel()
    res = np.linalg.norm(_apply(A, coef) - y) / max(np.linalg.norm(y), np.finfo(float).tiny)
    return HTPResult(coef, np.arange(n, dtype=np.int64), 1, True, "ridge",
                     np.array([res]))


def _apply(A, c):
    return A @ c if isinstance(A, np.ndarray) else np.asarray(A.matvec(c)).ravel()


def _harfe_fold_scores(train, test, A, Y, w, groups, points, fit_intercept, normalize, mu,
                       max_iter, tol):
    """Validation MSE of every grid point on one fold (module level: picklable).

    ``groups`` labels the distinct rows (:func:`rflite._core.folds.distinct_labels`):
    the fold's penalty is ``lam`` times the distinct training rows, as the
    full fit's.
    """

    from rflite._core.folds import distinct_count
    from rflite._core.selection import weighted_mse

    w_tr = None if w is None else w[train]
    total = distinct_count(groups, train)
    At, Yc, a_mean, y_mean, scale = _prepare(
        A[train].copy(), Y[train], w_tr, fit_intercept=fit_intercept, normalize=normalize)
    points, dense = _split_points(points, A.shape[1])
    with _one_blas_thread():
        results = harfe_grid(At, Yc, total, points, mu=mu, max_iter=max_iter, tol=tol)
    A_te = A[test]
    w_te = None if w is None else w[test]
    scores = []
    if dense:
        B = A_te if a_mean is None else A_te - a_mean
    for i in range(len(points)):
        pred = np.empty((test.size, Y.shape[1]))
        for k in range(Y.shape[1]):
            res = results[k][i]
            S = res.support
            coef = res.coef[S] * scale[S]
            cols = A_te[:, S] if a_mean is None else A_te[:, S] - a_mean[S]
            pred[:, k] = (cols @ coef).real + y_mean[k]
        # one error per output: each output of a 2-d y gets its own choice
        scores.extend(weighted_mse(Y[test, k], pred[:, k], w_te) for k in range(Y.shape[1]))
    if dense:
        shifts = [total * lam for _, lam in dense]
        with _one_blas_thread():
            preds = _ridge_predictions(At, B * scale, Yc, shifts)
        for P in preds:
            scores.extend(weighted_mse(Y[test, k], P[:, k] + y_mean[k], w_te)
                          for k in range(Y.shape[1]))
    return scores


def _harfe_fold_scores_mf(train, test, fmap, X, Y, groups, points, fit_intercept, normalize,
                          mu, max_iter, tol):
    """:func:`_harfe_fold_scores` of a matrix-free fit (0/1 weights only: ``w`` is None)."""

    from rflite._core.folds import distinct_count
    from rflite._core.selection import weighted_mse

    total = distinct_count(groups, train)

    Xtr = X[train]
    if fit_intercept:
        op, a_mean, scale = _centered_operator(fmap, Xtr, normalize=normalize)
        y_mean = Y[train].mean(axis=0)
    else:
        a_mean, y_mean = None, np.zeros(Y.shape[1])
        op = fmap.operator(Xtr)
        scale = np.ones(fmap.n_columns)
        if normalize:
            norms = op.column_norms()
            nz = norms > 0
            scale[nz] = 1.0 / norms[nz]
            op = fmap.operator(Xtr, col_scale=scale)
    Yc = Y[train] - y_mean
    points, dense = _split_points(points, fmap.n_columns)
    with _one_blas_thread():
        results = harfe_grid(op, Yc, total, points, mu=mu, max_iter=max_iter, tol=tol)
    scores = []
    for i in range(len(points)):
        for k in range(Y.shape[1]):
            S = results[k][i].support
            cols = fmap.columns(X[test], S)
            if a_mean is not None:
                cols = cols - a_mean[S]
            pred = (cols @ (results[k][i].coef[S] * scale[S])).real + y_mean[k]
            scores.append(weighted_mse(Y[test, k], pred))
    if dense:
        def test_columns(idx):
            cols = fmap.columns(X[test], idx)
            return (cols if a_mean is None else cols - a_mean[idx]) * scale[idx]

        if train.size > RIDGE_MAX_ROWS_MATRIX_FREE:
            scores.extend([np.inf] * (len(dense) * Y.shape[1]))
            return scores
        with _one_blas_thread():
            K, Kte = _gram(op, test_columns)
            preds = _dual_ridge(K, Kte, Yc, [total * lam for _, lam in dense])
        for P in preds:
            scores.extend(weighted_mse(Y[test, k], P[:, k] + y_mean[k])
                          for k in range(Y.shape[1]))
    return scores


def _column_sq_norms(A):
    if np.iscomplexobj(A):
        return np.einsum("ij,ij->j", A.real, A.real) + np.einsum("ij,ij->j", A.imag, A.imag)
    return np.einsum("ij,ij->j", A, A)
