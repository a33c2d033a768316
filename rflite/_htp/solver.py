"""Hard thresholding pursuit for sparse ridge regression: HARFE's solver.

The iteration of Saha, Schaeffer & Tran (2023), Algorithm 1, on any operator
with products ``A c`` and ``A^* r`` (dense arrays, :class:`rflite.FeatureOperator`
and SciPy linear operators); the maths is in :mod:`rflite.htp`, which
re-exports the public names.  An operator over the rows of a Dask array is
solved by the Dask backend through :mod:`rflite._core.backend`.
"""

from __future__ import annotations

import contextlib
import numbers
import threading
from typing import NamedTuple

import numpy as np

from rflite._core.backend import dask_backend, is_dask_operator
from rflite._core.blas import blas_threads
from rflite._core.validation import (
    check_array, check_int, check_real, refuse_plain_operator,
)
from rflite._htp.support import _adjoint, _SupportSystem


#: Step size of the gradient step (the paper uses 0.1 in every experiment).
DEFAULT_MU = 0.1

#: Iteration limit (the paper's experiments run 50 iterations).
DEFAULT_MAX_ITER = 50

#: Stop when the relative training residual ``||A c - y|| / ||y||`` is at most
#: this.  Small, so that on noise-free data the iteration is ended by the
#: fixed point or ``max_iter`` rather than by a nearly interpolating first
#: support.
DEFAULT_TOL = 1e-10

#: The support system is updated when at most this fraction of the s columns
#: changed, otherwise rebuilt.  For ``k`` changed columns (``s <= m``) updating
#: the Cholesky factor costs about ``2 k s^2 + 2 m s k`` flops (Givens
#: deletions, new Gram rows, a triangular solve), rebuilding ``m s^2 + s^3 / 3``
#: (Gram and factorisation): the break-even is near ``k = s / 3`` for m = s.
GRAM_REUSE_FRACTION = 0.25

#: Why an iteration stopped (``HTPResult.stop_reason``).
STOP_REASONS = ("tol", "fixed_point", "max_iter", "zero_target")


class HTPResult(NamedTuple):
    r"""Result of :func:`harfe`.

    Attributes
    ----------
    coef : (N,) ndarray
        The s-sparse coefficient vector (float64, or complex128 when ``A`` or
        ``y`` is complex).
    support : (s,) int64 ndarray
        Sorted indices of the last selected support (``coef`` may have exact
        zeros inside it; empty for ``y = 0``).
    n_iter : int
        Number of iterations (support selections) performed.
    converged : bool
        ``stop_reason`` is ``"tol"``, ``"fixed_point"`` or ``"zero_target"``.
    stop_reason : str
        ``"tol"``: relative residual ``<= tol``; ``"fixed_point"``: the support
        repeated, so further iterations change nothing; ``"max_iter"``;
        ``"zero_target"``: ``y = 0``, solved by ``c = 0`` without iterating.
    residuals : (n_iter,) ndarray
        Relative residual :math:`\|A c^n - y\|_2 / \|y\|_2` after each
        iteration.
    """

    coef: np.ndarray
    support: np.ndarray
    n_iter: int
    converged: bool
    stop_reason: str
    residuals: np.ndarray


def harfe(
    A,
    y,
    *,
    s: int,
    lam: float,
    mu: float = DEFAULT_MU,
    max_iter: int = DEFAULT_MAX_ITER,
    tol: float = DEFAULT_TOL,
    c0=None,
) -> HTPResult:
    r"""Sparse ridge regression by hard thresholding pursuit (HARFE, Algorithm 1).

    .. math::

        \min_c \|A c - y\|_2^2 + m\lambda\|c\|_2^2 \quad\text{s.t.}\quad \|c\|_0 \le s

    Parameters
    ----------
    A : (m, N) ndarray, or operator
        The (column-normalised, if wanted) feature matrix, real or complex.
        Instead of an array, any object with ``shape``, ``rmatvec(r)``
        (:math:`A^* r`) and ``columns(idx)`` (dense ``A[:, idx]``), such as
        :class:`rflite.features.FeatureOperator`, so that ``A`` need never
        exist in memory; both give the same iterates.
    y : (m,) array_like
        Targets, real or complex.
    s : int
        Sparsity level, ``1 <= s <= N``.
    lam : float
        Ridge parameter :math:`\lambda \ge 0`; the penalty is
        ``m * lam * ||c||^2`` with ``m = A.shape[0]``.  HARFE's printed values
        (Tables 1-3) are :math:`m\lambda`: pass ``printed / m``.  ``lam = 0``
        gives plain HTP.
    mu : float, default :data:`DEFAULT_MU` (0.1)
        Step size of the gradient step, ``> 0``.  0.1 is the paper's value for
        random features; for unit-norm columns in the compressed-sensing regime
        the classical HTP step is 1 (Foucart 2011), which explores supports
        more freely.
    max_iter : int, default :data:`DEFAULT_MAX_ITER` (50)
    tol : float, default :data:`DEFAULT_TOL` (1e-10)
        Stop when the relative residual is at most ``tol`` (0 disables).
    c0 : (N,) array_like, optional
        Starting vector (default 0).

    Returns
    -------
    HTPResult
        ``coef`` (dense, length N), ``support``, ``n_iter``, ``converged``,
        ``stop_reason``, ``residuals``.

    Raises
    ------
    ValueError
        Naming the argument: ``s`` outside ``[1, N]``, ``lam < 0``,
        ``mu <= 0``, ``max_iter < 1``, ``tol < 0``, shape mismatch of ``A``,
        ``y`` or ``c0``, NaN or infinite entries.

    Notes
    -----
    The support is the ``s`` largest entries of the gradient step in
    magnitude, ties broken towards the smaller index (:func:`top_s`).  A
    numerically singular support system is solved by a pseudo-inverse with an
    :class:`rflite._core.linalg.IllConditionedWarning`.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> A = rng.standard_normal((80, 200)) / np.sqrt(80)
    >>> c = np.zeros(200); c[[3, 50, 120]] = [1.0, -2.0, 0.5]
    >>> res = harfe(A, A @ c, s=3, lam=0.0)
    >>> res.support
    array([  3,  50, 120])
    >>> bool(np.allclose(res.coef, c))
    True
    """
    if is_dask_operator(A):  # its products are passes over chunked rows
        return dask_backend().harfe_dask(A, y, s=s, lam=lam, mu=mu, max_iter=max_iter, tol=tol,
                                         c0=c0)
    op = _as_operator(A)
    m, n = op.shape
    y = check_array(y, "y", ndim=1, allow_complex=True)
    if y.shape[0] != m:
        raise ValueError(f"y must have length m={m} (A has shape {op.shape}), got {y.shape[0]}")
    s, lam, mu, max_iter, tol, c, dtype = _check_harfe_args(
        m, n, s, lam, mu, max_iter, tol, c0, np.result_type(op.dtype, y.dtype, np.float64))

    y_norm = float(np.linalg.norm(y))
    if y_norm == 0.0:
        return HTPResult(
            np.zeros(n, dtype=dtype), np.zeros(0, dtype=np.int64), 0, True, "zero_target",
            np.zeros(0),
        )
    # The loop is many small factor updates and triangular solves; OpenBLAS
    # threads cost more than they give there (several times on the Table-1
    # fit), and the one large product per iteration is memory bound.
    with _one_blas_thread():
        return _htp(op, y.astype(dtype, copy=False), c, s, m * lam, mu, max_iter, tol, y_norm)


_LIMIT_STATE = threading.local()


@contextlib.contextmanager
def _one_blas_thread():
    """:func:`rflite._core.blas.blas_threads` (1), entered once however deeply nested.

    Each ``threadpool_limits`` call scans the loaded libraries (milliseconds,
    more on a busy machine): a grid of HARFE fits inside one fold's limit
    would pay it dozens of times per tiny fit, a large share of a fit on a
    few rows (scikit-learn's estimator checks fit hundreds of those).  Inside an enclosing limit the
    inner ones change nothing, so they are skipped.
    """
    depth = getattr(_LIMIT_STATE, "depth", 0)
    if depth:
        _LIMIT_STATE.depth = depth + 1
        try:
            yield
        finally:
            _LIMIT_STATE.depth = depth
        return
    with blas_threads(1):
        _LIMIT_STATE.depth = 1
        try:
            yield
        finally:
            _LIMIT_STATE.depth = 0


def _threshold_step(g, c, support, s, mu, step):
    r"""HTP's support update: the ``s`` largest entries of :math:`|\mu g + (1 - \mu m\lambda) c|`.

    ``g`` is :math:`A^*(y - A c)` (overwritten), ``c`` is zero off
    ``support``; shared by the in-memory and the Dask loop.
    """
    g *= mu
    if support.size:
        g[support] += step * c[support]
    a = np.abs(g)
    if not np.all(np.isfinite(a)):
        raise ValueError("A contains NaN or infinite values (A^*(y - A c) is not finite)")
    return top_s(a, s)


def _check_harfe_args(m, n, s, lam, mu, max_iter, tol, c0, dtype):
    """Validated ``(s, lam, mu, max_iter, tol, c, dtype)`` of :func:`harfe` (in memory or Dask).

    ``c`` is the starting point: zeros, or a copy of ``c0`` (length ``n``)
    in the common dtype.
    """
    s = check_int(s, "s", minimum=1, maximum=n)
    lam = check_real(lam, "lam", minimum=0.0)
    mu = check_real(mu, "mu", minimum=0.0, strict=True)
    _check_shift(m, lam, mu)
    max_iter = check_int(max_iter, "max_iter", minimum=1)
    tol = check_real(tol, "tol", minimum=0.0)
    c = np.zeros(n, dtype=dtype)
    if c0 is not None:
        c0 = check_array(c0, "c0", ndim=1, allow_complex=True)
        if c0.shape[0] != n:
            raise ValueError(f"c0 must have length N={n}, got {c0.shape[0]}")
        dtype = np.result_type(dtype, c0.dtype)
        c = c0.astype(dtype, copy=True)
    return s, lam, mu, max_iter, tol, c, dtype


def _check_shift(m, lam, mu):
    """Refuse ``lam``/``mu`` whose products ``m * lam`` and ``mu * m * lam`` overflow."""
    shift = m * lam
    if not np.isfinite(shift * mu):
        raise ValueError(
            f"lam={lam:g} and mu={mu:g} overflow float64 in mu * m * lam (m={m}); "
            "lam must be far smaller"
        )


def top_s(a: np.ndarray, s: int) -> np.ndarray:
    """Sorted indices of the ``s`` largest entries of the real array ``a``.

    Ties at the threshold go to the smaller indices, so the result does not
    depend on the partition algorithm.  :math:`O(N)`: one
    :func:`numpy.partition` and two comparisons, no sort of ``a``.

    Examples
    --------
    >>> top_s(np.array([0.5, 2.0, 0.5, 1.0]), 3)
    array([0, 1, 3])
    """
    s = check_int(s, "s", minimum=1)
    n = a.shape[0]
    if s >= n:
        return np.arange(n)
    kth = n - s
    thr = np.partition(a, kth)[kth]  # the s-th largest value
    above = np.flatnonzero(a > thr)
    if above.size == s:
        return above
    ties = np.flatnonzero(a == thr)[: s - above.size]
    if above.size + ties.size < s:  # only NaN compares false both ways
        raise ValueError(f"a contains NaN ({int(np.isnan(a).sum())} entries); top_s needs "
                         "comparable values")
    return np.sort(np.concatenate([above, ties]))


# --------------------------------------------------------------------- kernel
def _htp(op, y, c, s, shift, mu, max_iter, tol, y_norm) -> HTPResult:
    """The iteration of :func:`harfe` on validated input (``y != 0``).

    ``shift`` is :math:`m\\lambda`.  ``c`` is the starting vector (modified in
    place and returned as ``coef``).
    """
    step = 1.0 - mu * shift
    # the module constant is read at each call (so that setting it takes effect)
    system = _SupportSystem(op, y, s, shift, reuse_fraction=GRAM_REUSE_FRACTION)
    support = np.flatnonzero(c)
    if support.size:
        r = y - op.columns(support) @ c[support]
    else:
        r = y.copy()
    solved = False  # whether c is the ridge solution on `support`
    residuals = []
    reason = "max_iter"
    for _ in range(max_iter):
        new = _threshold_step(op.rmatvec(r), c, support, s, mu, step)
        if solved and np.array_equal(new, support):
            residuals.append(residuals[-1])
            reason = "fixed_point"
            break
        slots, z, fitted = system.solve(new)
        c[support] = 0
        c[slots] = z
        support = new
        solved = True
        r = y - fitted
        residuals.append(float(np.linalg.norm(r)) / y_norm)
        if residuals[-1] <= tol:
            reason = "tol"
            break
    return HTPResult(
        c, support, len(residuals), reason != "max_iter", reason, np.asarray(residuals)
    )


class _Dense:
    """Operator view of a dense matrix: ``rmatvec`` and ``columns``."""

    def __init__(self, A):
        self.A = A
        self.shape = A.shape
        self.dtype = A.dtype

    def rmatvec(self, r):
        return _adjoint(self.A, r)

    def columns(self, idx):
        return self.A[:, idx]


class _Wrapped:
    """A user operator, with the results coerced to 1-d / 2-d arrays."""

    def __init__(self, op):
        self.op = op
        self.shape = op.shape
        self.dtype = np.dtype(getattr(op, "dtype", np.float64))

    def rmatvec(self, r):
        return np.array(self.op.rmatvec(r), copy=True).reshape(-1)

    def columns(self, idx):
        return np.asarray(self.op.columns(idx))


def _as_operator(A):
    refuse_plain_operator(A, "A", "HARFE's support solves")
    if isinstance(A, np.ndarray) or not all(
        hasattr(A, name) for name in ("shape", "rmatvec", "columns")
    ):
        A = check_array(A, "A", ndim=2, allow_complex=True)
        return _Dense(A)
    shape = tuple(A.shape)
    if len(shape) != 2 or not all(isinstance(k, numbers.Integral) and k >= 1 for k in shape):
        raise ValueError(f"A must have a 2-d shape with positive sizes, got {shape}")
    return _Wrapped(A)



def harfe_grid(A, Yc, total, points, *, mu, max_iter, tol, progress=None):
    """HARFE at every ``(s, lam)`` of ``points``, warm-starting each from the previous one.

    ``points`` is a list of ``(s, lam)`` in the order they are visited
    (the estimators order it by ``s`` and, within one ``s``, from the largest
    ``lam`` down, so that consecutive problems differ little).  The start of
    each fit is the previous solution (:func:`harfe`'s ``c0``; with a larger
    support than the new ``s``, the first thresholding step keeps the ``s``
    best entries), which typically makes the fit end at a fixed point after
    a few iterations.  ``total`` is the weighted row count (the penalty is
    ``total * lam``).  Returns, per output, a list of :class:`HTPResult`.
    """
    m = A.shape[0]
    out = []
    for k in range(Yc.shape[1]):
        prev = None
        row = []
        for i, (s, lam) in enumerate(points):
            res = harfe(A, Yc[:, k], s=int(s), lam=lam * total / m, mu=mu,
                        max_iter=max_iter, tol=tol, c0=prev)
            prev = res.coef
            row.append(res)
            if progress is not None:
                progress.line(f"s={int(s)} lam={lam:.3g} ({i + 1}/{len(points)}): "
                              f"{res.n_iter} iterations, {res.stop_reason}", level=2)
        out.append(row)
    return out


