r"""The numba kernels of greedy feature construction (private, for :mod:`rflite.greedy`).

:func:`_hyper_objective` is the value and gradient of the descent's
cross-validated hyperparameter objective (Oglic and Gaertner 2016, Sec. 2 and
Appendix A; :func:`rflite.greedy.hyper_objective` is its checked public
form), :func:`_ridge_step` one greedy step's closed-form ridge fit of the new
feature's amplitudes, with the 3 x 3 Cholesky helpers they share.  Split out
of :mod:`rflite.greedy` (which re-exports the kernels and compiles them in its
``_warmup``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

@njit(cache=True, nogil=True)
def _chol3(P, L):
    """Cholesky factor ``L`` (lower, 3 x 3) of the SPD matrix ``P``."""
    L[0, 0] = math.sqrt(P[0, 0])
    L[1, 0] = P[1, 0] / L[0, 0]
    L[2, 0] = P[2, 0] / L[0, 0]
    L[1, 1] = math.sqrt(P[1, 1] - L[1, 0] * L[1, 0])
    L[2, 1] = (P[2, 1] - L[2, 0] * L[1, 0]) / L[1, 1]
    L[2, 2] = math.sqrt(P[2, 2] - L[2, 0] * L[2, 0] - L[2, 1] * L[2, 1])


@njit(cache=True, nogil=True)
def _cho_solve3(L, b, x):
    """Solve ``L L^T x = b`` for the 3 x 3 factor ``L``."""
    u0 = b[0] / L[0, 0]
    u1 = (b[1] - L[1, 0] * u0) / L[1, 1]
    u2 = (b[2] - L[2, 0] * u0 - L[2, 1] * u1) / L[2, 2]
    x[2] = u2 / L[2, 2]
    x[1] = (u1 - L[2, 1] * x[2]) / L[1, 1]
    x[0] = (u0 - L[1, 0] * x[1] - L[2, 0] * x[2]) / L[0, 0]


@njit(cache=True, nogil=True)
def _sincos_row(X, i, w, sn, cs):  # pragma: no cover - jitted
    r"""Row i's :math:`\sin(x_i^\top w)`, :math:`\cos(x_i^\top w)`, also into ``sn[i]``, ``cs[i]``."""
    u = 0.0
    for j in range(X.shape[1]):
        u += X[i, j] * w[j]
    b, c = math.sin(u), math.cos(u)
    sn[i] = b
    cs[i] = c
    return b, c


@njit(cache=True, nogil=True)
def _hyper_objective(X, y, f, w, lam, folds, k):
    r"""Validation error :math:`E(w, \lambda)` and its gradient ``(d + 1,)``.

    See :func:`hyper_objective` for the maths.  Pass 1 computes
    :math:`u = X w`, the sines and cosines (shared by all folds) and the per-fold
    training Grams :math:`Z_{T_j}^\top Z_{T_j}` and :math:`Z_{T_j}^\top y`;
    the k 3 x 3 systems are solved by Cholesky; pass 2 accumulates the
    validation residuals :math:`r_{ij}` of every point for every fold it
    validates and :math:`\sum r_{ij} z_i`; pass 3 gathers the per-point weights
    :math:`\alpha_i` with :math:`\partial E / \partial w = X^\top \alpha`.
    The last gradient entry is :math:`\partial E / \partial \lambda`.
    """
    s, d = X.shape
    sn = np.empty(s)
    cs = np.empty(s)
    G = np.zeros((k, 3, 3))
    q = np.zeros((k, 3))
    cnt = np.zeros(k)
    for i in range(s):
        a = f[i]
        b, c = _sincos_row(X, i, w, sn, cs)
        j = folds[i]
        G[j, 0, 0] += a * a
        G[j, 1, 0] += b * a
        G[j, 2, 0] += c * a
        G[j, 1, 1] += b * b
        G[j, 2, 1] += c * b
        G[j, 2, 2] += c * c
        q[j, 0] += a * y[i]
        q[j, 1] += b * y[i]
        q[j, 2] += c * y[i]
        cnt[j] += 1.0
    Ls = np.zeros((k, 3, 3))
    coef = np.zeros((k, 3))
    for j in range(k):
        for r in range(3):
            G[j, r, r] += cnt[j] * lam
        _chol3(G[j], Ls[j])
        _cho_solve3(Ls[j], q[j], coef[j])
    # validation residuals
    sse = np.zeros(k)
    gv = np.zeros((k, 3))
    for i in range(s):
        a, b, c = f[i], sn[i], cs[i]
        for j in range(k):
            if j == folds[i]:
                continue
            r = coef[j, 0] * a + coef[j, 1] * b + coef[j, 2] * c - y[i]
            sse[j] += r * r
            gv[j, 0] += r * a
            gv[j, 1] += r * b
            gv[j, 2] += r * c
    value = 0.0
    t = np.zeros((k, 3))
    nval = np.empty(k)
    grad = np.zeros(d + 1)
    for j in range(k):
        nval[j] = s - cnt[j]
        value += sse[j] / nval[j]
        for r in range(3):
            gv[j, r] /= nval[j]
        _cho_solve3(Ls[j], gv[j], t[j])
        grad[d] -= 2.0 * cnt[j] * (t[j, 0] * coef[j, 0] + t[j, 1] * coef[j, 1]
                                   + t[j, 2] * coef[j, 2])
    # per-point weights alpha_i and grad_w = X^T alpha
    for i in range(s):
        a, b, c = f[i], sn[i], cs[i]
        alpha = 0.0
        for j in range(k):
            dzc = coef[j, 1] * c - coef[j, 2] * b  # d(c^T z)/du
            if j == folds[i]:
                fit = coef[j, 0] * a + coef[j, 1] * b + coef[j, 2] * c
                tz = t[j, 0] * a + t[j, 1] * b + t[j, 2] * c
                alpha += 2.0 * ((t[j, 1] * c - t[j, 2] * b) * (y[i] - fit) - tz * dzc)
            else:
                r = coef[j, 0] * a + coef[j, 1] * b + coef[j, 2] * c - y[i]
                alpha += 2.0 * r * dzc / nval[j]
        for jj in range(d):
            grad[jj] += alpha * X[i, jj]
    for jj in range(d + 1):
        grad[jj] /= k
    return value / k, grad


@njit(cache=True, nogil=True)
def _ridge_step(X, y, f, w, lam):
    r"""Amplitudes on the whole sample and the update of ``f`` (in place).

    :math:`c = (Z_w^\top Z_w + s\lambda I)^{-1} Z_w^\top y`,
    :math:`f \leftarrow Z_w c` (Algorithm 1, line 4).  Returns ``c``.
    """
    s = X.shape[0]
    sn = np.empty(s)
    cs = np.empty(s)
    P = np.zeros((3, 3))
    q = np.zeros(3)
    for i in range(s):
        a = f[i]
        b, c = _sincos_row(X, i, w, sn, cs)
        P[0, 0] += a * a
        P[1, 0] += b * a
        P[2, 0] += c * a
        P[1, 1] += b * b
        P[2, 1] += c * b
        P[2, 2] += c * c
        q[0] += a * y[i]
        q[1] += b * y[i]
        q[2] += c * y[i]
    for r in range(3):
        P[r, r] += s * lam
    L = np.zeros((3, 3))
    coef = np.zeros(3)
    _chol3(P, L)
    _cho_solve3(L, q, coef)
    for i in range(s):
        f[i] = coef[0] * f[i] + coef[1] * sn[i] + coef[2] * cs[i]
    return coef
