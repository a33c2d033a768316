r"""HARFE's support system, updated between iterations (private machinery of :mod:`rflite.htp`).

The ridge system on the current support, :math:`(A_S^* A_S + m\lambda I) c_S
= A_S^* y`, is kept from one hard-thresholding iteration to the next
(:class:`_SupportSystem`): for ``s <= m`` its Cholesky factor loses the
columns that left the support by Givens rotations (the numba kernel
:func:`_chol_delete`) and gains the entering ones by a triangular solve and a
k x k Cholesky, :math:`O(k s^2 + m s k)` instead of :math:`O(m s^2 + s^3/3)`;
for ``s > m`` the m x m dual system gets a rank-2k update and a new
factorisation (Golub and Van Loan, *Matrix Computations*, Sec. 6.5).  Split
out of :mod:`rflite.htp`, whose module notes describe the iteration.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
from numba import njit

from rflite._core.linalg import RCOND_WARN, cholesky_rcond, ridge_solve

class _SupportSystem:
    r"""The ridge system on the current support, updated between iterations.

    Primal (``s <= m``): the support columns are kept in ``AS`` (m x s, in
    factor order ``slots``) together with the upper Cholesky factor ``R`` of
    :math:`A_S^* A_S + m\lambda I`.  When ``k`` columns leave and ``k`` enter,
    the leaving columns are deleted from ``R`` by Givens rotations
    (:func:`_chol_delete`, :math:`O(s^2)` each) and the entering ones appended
    by one triangular solve and a k x k Cholesky: :math:`O(k s^2 + m s k)`
    instead of :math:`O(m s^2 + s^3/3)`.  Deletion is orthogonal and appending
    is the last step of a bordered Cholesky, so an updated factor is as
    accurate as a fresh one.

    Dual (``s > m``): the m x m matrix :math:`A_S A_S^*` gets a rank-2k update
    (leaving columns subtracted, entering ones added) and is factorised anew;
    to bound the rounding drift of the subtractions it is rebuilt once ``s``
    columns have been swapped in since the last rebuild.

    With more than ``reuse_fraction`` (:data:`rflite.htp.GRAM_REUSE_FRACTION`)
    of the columns changed, or when the updated factor is numerically
    singular, everything is rebuilt and
    solved by :func:`rflite._core.linalg.ridge_solve` (warning and
    pseudo-inverse on a singular system).
    """

    def __init__(self, op, y, s, shift, *, reuse_fraction):
        self.reuse_fraction = reuse_fraction
        self.op = op
        self.y = y
        self.s = s
        self.shift = shift
        m, n = op.shape
        self.dual = s > m
        self.slots = None
        self.pos = np.full(n, -1, dtype=np.int64)  # factor position of a column, -1 if out
        self.drift = 0
        self.R = None  # primal Cholesky factor (None: not available)

    def solve(self, new):
        """Move to support ``new`` (sorted, length s); return (slots, z, A_S z)."""
        if self.slots is None:
            self._rebuild(new)
        else:
            keep = np.zeros(self.pos.shape[0], dtype=bool)
            keep[new] = True
            out = np.flatnonzero(~keep[self.slots])  # positions whose column left
            incoming = new[self.pos[new] < 0]
            k = out.size
            if (k > self.reuse_fraction * self.s or (self.dual and self.drift + k > self.s)
                    or (not self.dual and self.R is None)):
                self.pos[self.slots] = -1
                self._rebuild(new)
            elif k:
                self._update(out, incoming)
        AS = self.AS
        if self.dual:
            z = _adjoint(AS, ridge_solve(self.H, self.y, self.shift))
        elif self.R is not None:
            z = _cho_solve(self.R, self.b)
        else:
            z = ridge_solve(_inner(AS, AS), self.b, self.shift)
        return self.slots, z, AS @ z

    def _rebuild(self, new):
        self.slots = new.copy()
        self.pos[new] = np.arange(new.size)
        self.AS = np.asfortranarray(self.op.columns(new))
        self.drift = 0
        AS = self.AS
        if self.dual:
            self.H = _outer(AS, AS)
            return
        self.b = _adjoint(AS, self.y)
        M = np.asfortranarray(_inner(AS, AS))
        M.flat[:: M.shape[0] + 1] += self.shift
        self.R = _cholesky(M)

    def _update(self, out, incoming):
        cols = self.op.columns(incoming)
        self.pos[self.slots[out]] = -1
        if self.dual:
            AS = self.AS
            old = AS[:, out]
            self.H += _outer(cols, cols) - _outer(old, old)
            AS[:, out] = cols
            self.slots[out] = incoming
            self.pos[incoming] = out
            self.drift += out.size
            return
        s, k = self.s, out.size
        n = s - k
        R = self.R
        size = s
        for j in out[::-1]:  # descending, so that earlier positions stay put
            _chol_delete(R, size, j)
            size -= 1
        keep = np.ones(s, dtype=bool)
        keep[out] = False
        AS = self.AS
        AS[:, :n] = AS[:, keep]
        AS[:, n:] = cols
        self.slots = np.concatenate([self.slots[keep], incoming])
        self.pos[self.slots] = np.arange(s)
        self.b = np.concatenate([self.b[keep], _adjoint(cols, self.y)])
        # append: R12 = R11^{-*} A_keep^* A_new, R22 = chol(A_new^* A_new + shift I - R12^* R12)
        R12 = scipy.linalg.solve_triangular(
            R[:n, :n], _inner(AS[:, :n], cols), trans="C", lower=False, check_finite=False
        )
        M22 = _inner(cols, cols) - _inner(R12, R12)
        M22.flat[:: k + 1] += self.shift
        R22 = _cholesky(np.asfortranarray(M22))
        if R22 is None:
            self.R = None
            return
        R[:n, n:] = R12
        R[n:, n:] = R22
        R[n:, :n] = 0
        # O(s^2) condition estimate of the updated system (the norm of M is
        # estimated by its trace, see cholesky_rcond): an ill-conditioned
        # system goes to ridge_solve, which warns and uses a pseudo-inverse
        if cholesky_rcond(R) < RCOND_WARN:
            self.R = None


def _cholesky(M):
    """Upper Cholesky factor of the Fortran-order matrix ``M``, in place.

    ``None`` when the factorisation fails or the ``pocon`` reciprocal
    condition estimate (:func:`rflite._core.linalg.cholesky_rcond`, exact
    :math:`\\|M\\|_1`, :math:`O(s^2)`) is below
    :data:`~rflite._core.linalg.RCOND_WARN`: the test of
    :func:`rflite._core.linalg.ridge_solve`, which the caller then falls back to.
    """
    potrf, lange = scipy.linalg.lapack.get_lapack_funcs(("potrf", "lange"), (M,))
    anorm = float(lange("1", M))
    R, info = potrf(M, lower=False, overwrite_a=True, clean=True)
    if info != 0 or cholesky_rcond(R, anorm) < RCOND_WARN:
        return None
    return R


def _cho_solve(R, b):
    """Solve :math:`R^* R z = b` (``R`` upper, real or complex; ``b`` may be complex)."""
    potrs = scipy.linalg.lapack.get_lapack_funcs("potrs", (R,))
    if np.iscomplexobj(b) and not np.iscomplexobj(R):
        x, _ = potrs(R, np.column_stack([b.real, b.imag]), lower=False)
        return x[:, 0] + 1j * x[:, 1]
    z, _ = potrs(R, b, lower=False)
    return z


@njit(cache=True)
def _chol_delete(R, n, j):  # pragma: no cover - jitted
    r"""Delete column (and row) ``j`` from the upper Cholesky factor ``R[:n, :n]``.

    With :math:`M = R^* R`, afterwards :math:`R[:n-1, :n-1]^* R[:n-1, :n-1]`
    is ``M`` without row and column ``j``: the columns right of ``j`` shift
    left, leaving one subdiagonal, which Givens rotations on rows
    ``(i, i + 1)`` remove (Golub and Van Loan, *Matrix Computations*, 4th ed.,
    Sec. 6.5.2).  Row and column ``n - 1`` are zeroed.  :math:`O((n - j)^2)`;
    real or complex ``R``, modified in place.
    """
    for c in range(j, n - 1):
        for r in range(c + 2):
            R[r, c] = R[r, c + 1]
    for i in range(j, n - 1):
        a = R[i, i]
        b = R[i + 1, i]
        rho = np.sqrt(abs(a) ** 2 + abs(b) ** 2)
        if rho == 0.0:
            continue
        cs = a / rho
        sn = b / rho
        for c in range(i, n - 1):
            x = R[i, c]
            w = R[i + 1, c]
            R[i, c] = np.conj(cs) * x + np.conj(sn) * w
            R[i + 1, c] = cs * w - sn * x
        R[i + 1, i] = 0.0
    for r in range(n):
        R[r, n - 1] = 0.0
        R[n - 1, r] = 0.0


def _warmup():
    """Compile the numba kernel of this module (real and complex factors)."""
    for dtype in (np.float64, np.complex128):
        R = np.asfortranarray(np.triu(np.ones((3, 3), dtype=dtype)) + 2 * np.eye(3))
        _chol_delete(R, 3, 1)


def _inner(M, N):
    """:math:`M^* N` without a conjugated copy of ``M`` (BLAS syrk when ``N is M``, real)."""
    if np.iscomplexobj(M):
        return M.conj().T @ N
    return M.T @ N


def _outer(M, N):
    """:math:`M N^*`."""
    return M @ (N.conj().T if np.iscomplexobj(N) else N.T)


def _adjoint(M, v):
    """:math:`M^* v` without copying ``M`` (real ``M`` with complex ``v`` included)."""
    if np.iscomplexobj(M):
        return (M.T @ v.conj()).conj()
    if np.iscomplexobj(v):
        return M.T @ v.real + 1j * (M.T @ v.imag)
    return M.T @ v
