r"""The solvers on a :class:`rflite._dask.backend.DaskFeatureOperator` (private; re-exported by :mod:`rflite._dask.backend`).

:func:`harfe_dask` (HARFE with one gradient pass and one support-Gram pass
per iteration, the s x s system on the client) and
:func:`as_linear_operator` (a SciPy view for the BPDN / basis pursuit /
SRFE solvers of :mod:`rflite.bp`).  Split out of :mod:`rflite._dask.backend`.
"""

from __future__ import annotations

import math

import numpy as np

from rflite._dask.operator import check_dask_y
from rflite._core.linalg import ridge_solve


def as_linear_operator(op):
    r"""A :class:`scipy.sparse.linalg.LinearOperator` view of a :class:`DaskFeatureOperator`.

    For solvers written against NumPy products (:func:`rflite.bp.bpdn`,
    :func:`rflite.bp.basis_pursuit`, :func:`rflite.bp.srfe`): ``A^* r`` is
    one distributed pass returning N numbers, but ``A c`` and
    ``columns(S)`` are *computed* into the client's memory (m and m x |S|
    numbers), so this suits m up to what the client holds as a few
    vectors, not the m = 10^8 of :func:`harfe_dask`.  Every product is one
    pass over the data.
    """
    from scipy.sparse.linalg import LinearOperator

    class _Client(LinearOperator):
        def __init__(self):
            super().__init__(op.dtype, op.shape)

        def _matvec(self, c):
            return np.asarray(op.matvec(np.ravel(c)).compute())

        def _rmatvec(self, r):
            return op.rmatvec(np.ravel(r))

        def columns(self, idx):
            return np.asarray(op.columns(idx).compute())

        def column_norms(self):
            return op.column_norms()

        def full_gram(self, y):
            # A^* A and A^* y in one pass: BPDN's least-squares test on tall data
            G, b = op.full_gram(np.ravel(y))
            return G, b[:, 0]

    return _Client()


def harfe_dask(op, y, *, s, lam, mu, max_iter, tol, c0=None):
    r"""HARFE (Algorithm 1) on a :class:`DaskFeatureOperator`: the iterates of :func:`rflite.htp.harfe`.

    Per iteration one full pass, :meth:`DaskFeatureOperator.gradient`, gives
    :math:`A^*(y - A_S c_S)` and the residual of the current iterate (so the
    ``tol`` test of iteration n is made at the start of iteration n + 1,
    with the same outcome), and one pass over the s support columns,
    :meth:`DaskFeatureOperator.gram` restricted to the rows of the columns
    that entered the support, updates the s x s Gram matrix kept on the
    client; :func:`rflite._core.linalg.ridge_solve` then solves
    :math:`(G + m\lambda I) z = A_S^* y` there.  A run that ends by
    ``max_iter`` takes one more pass over the support columns for the last
    residual.  Arguments and result as :func:`rflite.htp.harfe`.
    """
    from rflite._htp.solver import HTPResult, _check_harfe_args, _threshold_step

    m, n = op.shape
    Y, one_d = check_dask_y(y, op.X)
    if not one_d and Y.shape[1] != 1:
        raise ValueError(f"y must have 1 dimension, got shape {y.shape}")
    s, lam, mu, max_iter, tol, c, dtype = _check_harfe_args(
        m, n, s, lam, mu, max_iter, tol, c0, np.result_type(op.dtype, Y.dtype, np.float64))
    y_sq = float(_y_stats(Y)[1][0])
    if not np.isfinite(y_sq):
        raise ValueError("y contains NaN or infinite values")
    y_norm = math.sqrt(y_sq)
    if y_norm == 0.0:
        return HTPResult(np.zeros(n, dtype=dtype), np.zeros(0, dtype=np.int64), 0, True,
                         "zero_target", np.zeros(0))
    shift = m * lam
    step = 1.0 - mu * shift
    support = np.flatnonzero(c)
    gram = _GramCache()
    solved = False
    residuals = []
    reason = "max_iter"
    for _ in range(max_iter):
        g, rr = op.gradient(Y, support, c[support])
        if solved:
            residuals.append(math.sqrt(max(rr, 0.0)) / y_norm)
            if residuals[-1] <= tol:
                reason = "tol"
                break
        new = _threshold_step(np.array(g), c, support, s, mu, step)
        if solved and np.array_equal(new, support):
            residuals.append(residuals[-1])
            reason = "fixed_point"
            break
        G, b = gram.move(op, Y, new)
        z = ridge_solve(G, b, shift)
        c[support] = 0
        c[new] = z
        support = new
        solved = True
    else:
        residuals.append(op.residual_norm(Y, support, c[support]) / y_norm)
        if residuals[-1] <= tol:
            reason = "tol"
    return HTPResult(c, support, len(residuals), reason != "max_iter", reason,
                     np.asarray(residuals))


class _GramCache:
    r"""The Gram matrix :math:`A_S^* A_S` and :math:`A_S^* y` of the current support.

    Moving to a new support computes only the rows of the entering columns,
    :math:`A_{in}^* A_{S'}` (k x s), in one pass over the s new support
    columns; the rows and columns of the kept ones are copied.
    """

    def __init__(self):
        self.S = np.zeros(0, dtype=np.int64)
        self.G = None
        self.b = None

    def move(self, op, Y, new):
        pos_in = np.flatnonzero(~np.isin(new, self.S))
        if pos_in.size == 0 and self.G is not None and new.size == self.S.size:
            return self.G, self.b
        G_in, b_in = op.gram(new, Y, rows=pos_in)
        dtype = np.result_type(G_in.dtype, b_in.dtype)
        s = new.size
        G = np.empty((s, s), dtype=dtype)
        b = np.empty(s, dtype=dtype)
        keep_new = np.flatnonzero(np.isin(new, self.S))
        if keep_new.size:
            old_pos = np.searchsorted(self.S, new[keep_new])
            G[np.ix_(keep_new, keep_new)] = self.G[np.ix_(old_pos, old_pos)]
            b[keep_new] = self.b[old_pos]
        G[:, pos_in] = G_in.conj().T
        G[pos_in, :] = G_in
        b[pos_in] = b_in[:, 0]
        self.S, self.G, self.b = new, G, b
        return G, b


def _y_stats(Y):
    """Sums and squared norms of the columns of a Dask ``Y`` (one pass over ``Y``)."""
    import dask

    sq = (abs(Y) ** 2).sum(axis=0) if np.iscomplexobj(np.empty(0, Y.dtype)) else \
        (Y * Y).sum(axis=0)
    s, q = dask.compute(Y.sum(axis=0), sq)
    return np.asarray(s), np.asarray(q)
