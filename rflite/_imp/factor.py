r"""Minimum-norm solves along a SHRIMP pruning path (private machinery of :mod:`rflite.imp`).

The path solves :math:`c_t = A_{P_t}^{+} y` for a nested sequence of column
sets :math:`P_0 \supset P_1 \supset \dots`; :class:`_MinNormSolver` keeps a
factorisation of the surviving columns and *updates* it as columns are
removed instead of refactoring :math:`A_{P_t}` at every step (the notes
below say which factor is used when).  Split out of :mod:`rflite.imp` so
that the estimator module stays readable.

Numerics of the path
--------------------
The published code recomputes a pseudo-inverse (an SVD of the m x N_t matrix)
and all Gram eigenvalues at every step.  The random Fourier dictionaries are
smooth, hence numerically low rank: with q = 1 (f1, f2) the condition number
of the m x N matrix is about 1e12, so the normal equations (condition 1e24)
cannot give the ~16 digits that the paper's exactly representable targets
need (test MSE 1e-22 and below).  The path therefore updates triangular
factors as columns are removed, using the Gram matrix only where that is safe
and orthogonal factors elsewhere:

* **over-parameterised steps** (:math:`N_t \ge m`), a triangular factor
  ``U`` with :math:`A_P A_P^T = U^T U`, kept in one of two modes:

  - *well conditioned* (:math:`\kappa(A_P) \lesssim 10^5`, ``dpocon``
    estimate against :data:`GRAM_RCOND`): ``U`` is the Cholesky factor of the
    m x m Gram matrix, which is *downdated* by the removed columns,
    :math:`G_t = G_{t-1} - A_R A_R^T` (one ``dsyrk``: the whole path costs
    :math:`O(m^2 N)` instead of :math:`O(m^2 N / p)`), labels ``"gram"`` /
    ``"gram-downdate"``;
  - *ill conditioned*: ``U`` is the R factor of a Householder QR of
    :math:`A_P^T` (LQ of :math:`A_P`), solved in factored form (``dgeqrf`` +
    ``dormqr``, backward stable whatever :math:`\kappa`, label ``"lq"``) and
    then downdated in *orthogonal coordinates*: with
    :math:`Q_R = A_R^T U^{-1}`, :math:`I - Q_R^T Q_R = S^T S` (Cholesky of a
    well-conditioned m x m matrix) and the new factor is :math:`S U`
    (:func:`_lq_downdate`; the Gram matrix, whose condition is
    :math:`\kappa^2`, is never formed), label ``"lq-downdate"``.

  Downdated factors are used through the semi-normal equations
  :math:`c = A_P^T U^{-1} U^{-T} y` followed by **iterative refinement
  against** :math:`A_P` (the residual :math:`y - A_P c` is computed with the
  matrix itself; corrected semi-normal equations, Björck 1996, Sec. 6.6).
  Refinement contracts by about :math:`u\,\kappa(A_P)^2` (plus the
  downdating error); when it does not reach :data:`REFINE_ACCEPT` the factor is
  recomputed (Gram if still well conditioned, else Householder);
* **under-parameterised steps** (:math:`N_t < m`): the least-squares QR
  :math:`A_P = Q R` with :math:`Q^T y` kept; deleting columns re-triangularises
  :math:`R_{:, K}` (an :math:`O(N_t^3)` update, :func:`_qr_delete_columns`,
  label ``"qr-ls"``), backward stable;
* a factor with a diagonal ratio below :data:`RANK_RTOL` (numerically rank
  deficient) is solved by an SVD of :math:`A_P` (label ``"svd"``; a
  Householder QR first when :math:`A_P` is wide), truncating singular values
  at most :math:`10^{-15}\sigma_{\max}` (:data:`rflite._imp.factor.SVD_RCOND`),
  ``numpy.linalg.pinv``'s cut and so the SHRIMP authors' definition of the
  minimum-norm solution.  LAPACK ``gelsd``'s default :math:`\epsilon\,
  \sigma_{\max}` would also keep the directions of
  singular values between :math:`2.2 \times 10^{-16}` and
  :math:`10^{-15}\sigma_{\max}`, which on exactly rank-deficient q = 1
  dictionaries (``insulin``'s SNP inputs take three values, so its 256 x 1000
  centred dictionary has 98 singular values down to 0.026
  :math:`\sigma_{\max}`, then 18 from rounding alone at 2.5e-16 .. 1e-14)
  would carry coefficients of 1e15.  With pinv's cut the Table 2 model sizes are
  the paper's (low-dim f1 / f3 / f4: 3230 / 147 / 172 columns against
  3100 / 147 / 172); the rounding directions above 1e-15 remain, as they do
  in the authors' code (the guarded refit handles them).  From
  then on the path runs in a **reduced basis**: removing columns cannot raise
  the rank and keeps :math:`A_{P'}` in the column space of :math:`A_P`, so
  with ``V`` (m x r) the kept left singular vectors every later step solves
  :math:`\min \|c\|` over the least-squares solutions of
  :math:`V^T A_{P'} c = V^T y` (r rows instead of m; ``V`` shrinks whenever
  the rank drops; label ``"svd-reduced"``,
  :meth:`rflite._imp.factor._MinNormSolver._solve_reduced`).  The
  directions dropped are those the solve discards at that step; on the q = 1
  paths, whose rank falls
  from m to a few dozen, this avoids a fresh m-row ``gelsd`` per step
  (high-dim f2, 1260 rows: a rank of about 1200 at the first rank-deficient
  step, about 400 ten steps later).

Accuracy (on the Table 2 problems, m = 126, 20000 columns): on
well-conditioned steps the coefficients agree with ``numpy.linalg.pinv`` to
1e-12 ... 1e-14 relative (the tests require 1e-8); on steps with
:math:`\kappa \approx 10^{12}` any two backward-stable solvers differ by about
:math:`u \kappa`, pinv included.  f2 reaches test MSE ~1e-31 and f3 ~1e-20.
The solver used at each step is recorded in :attr:`rflite.imp.SHRIMPPath.solver`.

Memory: the matrix is held transposed (columns of ``A`` contiguous) and
compacted in place as columns are removed (:func:`rflite._imp.factor._compact_rows`, the only
jitted kernel: everything else is BLAS / LAPACK bound), so a path needs the
m x N matrix once plus O(m^2), and from the first rank-deficient step on
the N_t x r projection of the surviving columns onto the reduced basis
(r the numerical rank, at most m).

References
----------
Å. Björck, *Numerical Methods for Least Squares Problems*, SIAM 1996,
Secs. 3.2 (updating QR) and 6.6 (corrected semi-normal equations); G. H. Golub and C. F. Van Loan,
*Matrix Computations*, 4th ed., Sec. 6.5 (updating matrix factorisations).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
from numba import njit
from scipy.linalg import blas, lapack


#: The rank-deficient SVD solves discard singular values at most this times
#: the largest: ``numpy.linalg.pinv``'s default, the cut of the SHRIMP
#: authors' code (LAPACK ``gelsd``'s ``eps`` kept rounding-level directions
#: of exactly rank-deficient dictionaries, see the module notes).
SVD_RCOND = 1e-15

#: Maximum iterative-refinement steps after a Cholesky (semi-normal) solve.
MAX_REFINE = 4

#: Refinement stops when the correction is below this fraction of the solution.
REFINE_RTOL = 1e-13

#: A refined solve is accepted when its last correction is below this fraction
#: of the solution (else the factor is recomputed, then an SVD solve is used).
REFINE_ACCEPT = 1e-9

#: A triangular factor whose smallest diagonal entry is below this fraction of
#: the largest is treated as rank deficient: the solve truncates small singular
#: values like ``pinv`` (LAPACK ``gelsd`` on :math:`A_P`).
RANK_RTOL = 1e-14

#: The Gram route is taken while the ``dpocon`` reciprocal condition estimate of
#: the Cholesky factor exceeds this (times ``N_ref / N_t`` for a downdated
#: Gram matrix): :math:`\kappa(A_P) < 10^5`, where refinement converges in one
#: or two steps.  Otherwise a Householder QR of :math:`A_P^T` is used and
#: downdated in orthogonal coordinates.
GRAM_RCOND = 1e-10

#: A downdate whose orthogonal-coordinate factor ``S`` has a diagonal ratio
#: below this is rejected and the factor is recomputed by a QR.
DOWNDATE_RTOL = 1e-6

#: An LQ factor ``U`` is downdated and refined only while its diagonal ratio
#: exceeds this: the ratio bounds :math:`1/\kappa(A_P)` from above, and the
#: corrected semi-normal equations contract by about :math:`u\,\kappa^2`,
#: so below it refinement cannot converge and the step goes straight to a
#: fresh Householder factor (the same result without the failed attempt;
#: every such attempt failed on the Table 2 paths, at ratios <= 5.5e-11).
LQ_REFINE_RTOL = 1e-8

#: Tall, thin QRs of :math:`A_P^T` (``m`` at most :data:`BLOCKED_QR_MAX_COLS`,
#: at least four blocks of :data:`BLOCKED_QR_ROWS` rows) go block by block
#: (:func:`_blocked_qr`): LAPACK's ``dgeqrf`` on 20000 x 126 runs at level-2 speed,
#: the blocks in cache take about half its time.  For wider
#: ``m`` the stacked triangles make the blocked QR dearer than one ``dgeqrf``
#: (m = 1260: 2.4x slower), so it is not used there.
BLOCKED_QR_MAX_COLS = 256
BLOCKED_QR_ROWS = 1024


class _MinNormSolver:
    r"""Factors of the surviving columns along a nested path (see the module notes).

    Over-parameterised (:math:`N_t \ge m`), ``U`` (m x m, upper) with
    :math:`A_P A_P^T = U^T U`, kept in one of two modes:

    * ``"gram"`` (well conditioned): ``G`` :math:`= A_P A_P^T` is downdated
      by ``dsyrk`` and refactored by Cholesky at every step;
    * ``"lq"``: ``U`` is the R factor of a Householder QR of :math:`A_P^T`,
      downdated in orthogonal coordinates (:func:`_lq_downdate`).

    Under-parameterised: ``R`` (:math:`N_t` square, upper) and ``z``
    :math:`= Q^T y` of a QR :math:`A_P = Q R`.

    Reduced (from the first numerically rank-deficient step on, either
    regime): ``V`` (m x r, orthonormal) spans the numerical column space of
    :math:`A_P` and ``Bt`` :math:`= A_P^T V`; a step solves
    :math:`\min\|c\|` over the least-squares solutions of
    :math:`V^T A_P c = V^T y` by an SVD (:func:`_svd_step`) and shrinks ``V``
    and ``Bt`` to the new rank.
    """

    def __init__(self, m: int):
        self.m = m
        self.reset()

    def reset(self):
        self.mode = None
        self.G = None
        self.n_ref = 0
        self.U = None
        self.R = None
        self.z = None
        # reduced mode (once A_P is numerically rank deficient): V (m x r)
        # spans the numerical column space of A_P and Bt = A_P^T V
        # (N_t x r); pruning removes rows of Bt and the steps are solved in
        # those r coordinates (:meth:`_solve_reduced`)
        self.V = None
        self.Bt = None
        # once a fresh Gram factor is too ill-conditioned it is not tried
        # again: kappa(A_P) grows as the path approaches N_t = m
        self.gram_ok = True

    def copy(self) -> "_MinNormSolver":
        """An independent copy (factors copied: :meth:`prune` overwrites ``G`` in place).

        Paths that start from the same columns (another prune rate on the
        same feature matrix) share the t = 0 solve and its factors through a
        copy; the copy continues bit for bit as the original would.
        """
        new = _MinNormSolver.__new__(_MinNormSolver)
        new.__dict__.update(self.__dict__)
        for name in ("G", "U", "R", "z", "V", "Bt"):
            value = getattr(self, name)
            if value is not None:
                setattr(new, name, value.copy(order="K"))
        return new

    # -- updates ---------------------------------------------------------------
    def prune(self, keep_pos, removed_rows):
        """Update the factors for a nested pruning step (``removed_rows`` of ``A^T``)."""
        if self.Bt is not None:
            _compact_rows(self.Bt, keep_pos)
            self.Bt = self.Bt[:keep_pos.size]
            return
        if keep_pos.size < self.m:
            self.mode, self.G, self.U = None, None, None
            if self.R is not None:
                self.R, self.z = _qr_delete_columns(self.R, self.z, keep_pos)
        elif self.mode == "gram":
            # G <- G - A_R A_R^T (upper triangle), A_R = removed_rows.T
            self.G = blas.dsyrk(-1.0, removed_rows.T, beta=1.0, c=self.G, trans=0,
                                lower=0, overwrite_c=1)
            self.U = None
        elif self.mode == "lq" and self.U is not None:
            self.U = _lq_downdate(self.U, removed_rows) if _refinable(self.U) else None

    # -- solves ----------------------------------------------------------------
    def solve(self, At, y):
        """Minimum-norm solution on the current columns; returns ``(c, label)``."""
        if self.Bt is not None:
            return self._solve_reduced(y), "svd-reduced"
        if At.shape[0] >= self.m:
            return self._solve_over(At, y)
        return self._solve_under(At, y)

    def _solve_over(self, At, y):
        n_t = At.shape[0]
        U, label = None, None
        if self.mode == "gram" and self.G is not None:
            # the downdate left an absolute error ~ u |G_ref|: demand a margin
            U = _cholesky(self.G.copy(order="F"), GRAM_RCOND * self.n_ref / n_t)
            label = "gram-downdate"
        elif self.mode == "lq" and self.U is not None:
            U = self.U if _refinable(self.U) else None
            label = "lq-downdate"
        if U is not None:
            c = _refined_min_norm(At, y, U)
            if c is not None:
                self.U = U
                return c, label
        if self.gram_ok:
            G = blas.dsyrk(1.0, At.T, trans=0, lower=0)
            U = _cholesky(G.copy(order="F"), GRAM_RCOND)
            c = None if U is None else _refined_min_norm(At, y, U)
            if c is not None:
                self.mode, self.G, self.n_ref, self.U = "gram", G, n_t, U
                return c, "gram"
            self.gram_ok = False
        c, factors = _householder_solve(At, y)
        if c is not None:
            self.mode, self.G, self.U = "lq", None, factors[0]
            return c, "lq"
        return self._enter_reduced(At, y, factors), "svd"

    def _solve_under(self, At, y):
        if self.R is None:
            Q, R = scipy.linalg.qr(At.T, mode="economic", check_finite=False)
            self.R, self.z = R, Q.T @ y
        d = np.abs(np.diag(self.R))
        if d.min() > RANK_RTOL * d.max():
            c = scipy.linalg.solve_triangular(self.R, self.z, lower=False,
                                              check_finite=False)
            return c, "qr-ls"
        return self._enter_reduced(At, y), "svd"

    def _enter_reduced(self, At, y, factors=None):
        """First rank-deficient step: SVD solve on ``A_P`` itself, then reduced mode.

        Removing columns cannot raise the rank, and the column space of a
        pruned :math:`A_{P'}` lies in that of :math:`A_P`: every later step
        is solved on :math:`B_{P'} = V^T A_{P'}` (r rows instead of m).
        """
        c, X, Bt = _svd_step(At, y, factors)
        self.mode, self.G, self.U, self.R, self.z = None, None, None, None, None
        self.V = X
        self.Bt = Bt if Bt is not None else np.ascontiguousarray(At @ X)
        return c

    def _solve_reduced(self, y):
        r"""Minimum-norm solution of :math:`B_P c = V^T y`; shrinks the basis as the rank drops."""
        c, X, Bt = _svd_step(self.Bt, self.V.T @ y)
        if X.shape[1] < self.V.shape[1]:
            self.V = self.V @ X
            self.Bt = Bt if Bt is not None else np.ascontiguousarray(self.Bt @ X)
        return c


def _refinable(U):
    """Is the diagonal ratio of ``U`` above :data:`LQ_REFINE_RTOL` (and :data:`RANK_RTOL`)?"""
    d = np.abs(np.diag(U))
    return bool(d.min() > max(LQ_REFINE_RTOL, RANK_RTOL) * d.max())


def _svd_step(Bt, y, factors=None):
    r"""Minimum-norm solution of :math:`B c = y`, :math:`B = ` ``Bt.T``, by an SVD; and its basis.

    Singular values at most :data:`SVD_RCOND` ``* s_max`` are discarded
    (``pinv``'s default).  ``Bt`` with at least as many rows as
    columns (the wide :math:`B` of an over-parameterised step): Householder
    QR :math:`B^T = Q U` (blocked for tall, thin ``Bt``; ``factors``: that
    factorisation when the caller has it already, from
    :func:`_householder_solve`), the SVD :math:`U^T = X \Sigma Z^T` of the
    small factor and :math:`c = Q Z \Sigma^+ X^T y` (the factored ``Q``
    applied once).  Fewer rows than columns: the thin SVD of ``Bt`` itself.

    Returns ``(c, X_k, Bt_k)``: ``X_k`` (columns of ``B``'s space x k, the
    left singular vectors of the k kept singular values) spans the numerical
    column space of ``B``, and ``Bt_k`` is :math:`B^T X_k` when it comes for
    free (the thin-SVD case), else ``None`` (the caller multiplies).
    """
    n, r = Bt.shape
    if n == 0 or r == 0:
        return np.zeros(n), np.zeros((r, 0)), np.zeros((n, 0))
    if n >= r:
        U, apply_q = factors if factors is not None else _householder_factors(Bt)
        X, s, Zt = scipy.linalg.svd(U.T, check_finite=False)
        k = _numerical_rank(s)
        return apply_q(Zt[:k].T @ ((X[:, :k].T @ y) / s[:k])), X[:, :k], None
    W, s, Xt = scipy.linalg.svd(Bt, full_matrices=False, check_finite=False)
    k = _numerical_rank(s)
    c = W[:, :k] @ ((Xt[:k] @ y) / s[:k])
    return c, np.ascontiguousarray(Xt[:k].T), np.ascontiguousarray(W[:, :k] * s[:k])


def min_norm_lstsq(A, y):
    r"""Minimum-norm least-squares :math:`A^+ y` with the path's truncation (:data:`SVD_RCOND`).

    SHRIMP's refits use this rather than ``gelsd``'s ``eps`` cut so that the
    refit of a support means the same solution as the path's solve on it.
    """
    return _svd_step(np.ascontiguousarray(A.T), y)[0]


def _numerical_rank(s):
    """Singular values (descending) above :data:`SVD_RCOND` ``* s[0]``."""
    if not s.size or not s[0] > 0.0:
        return 0
    return int(np.count_nonzero(s > SVD_RCOND * s[0]))


def _householder_factors(At):
    r"""Householder QR :math:`A^T = Q U` of ``At`` (n x m, n >= m): ``(U, apply_q)``.

    ``apply_q(w)`` is :math:`Q\,[w; 0]` with ``Q`` in factored form
    (``dormqr``); tall, thin ``At`` goes through :func:`_blocked_qr`.
    """
    n_t, m = At.shape
    if _use_blocked_qr(At):
        blocks, top, U = _blocked_qr(At)
        return U, lambda w: _blocked_q_apply(blocks, top, w)
    (qr, tau), _ = scipy.linalg.qr(At, mode="raw", check_finite=False)
    return np.triu(qr[:m]), lambda w: _apply_q(qr, tau, np.concatenate([w, np.zeros(n_t - m)]))


def _use_blocked_qr(At):
    n_t, m = At.shape
    return m <= BLOCKED_QR_MAX_COLS and n_t >= 4 * max(m, BLOCKED_QR_ROWS)


def _blocked_qr(At):
    r"""Householder QR :math:`A^T = Q U` of a tall, thin ``At``, block by block.

    Each block of :data:`BLOCKED_QR_ROWS` rows (at least 2m; a short tail
    joins the last block) is factored by ``dgeqrf`` while it is in cache, then
    the stacked m x m triangles once more (the one-level TSQR of Demmel et
    al., "Communication-optimal parallel and sequential QR and LU
    factorizations", SIAM J. Sci. Comput. 34, 2012; the distributed,
    R-only tree of the Dask fit is :func:`rflite._dask.shrimp._tsqr`).
    Backward stable like one ``dgeqrf``; ``Q`` stays in factored form.  Returns ``(blocks, top, U)``
    for :func:`_blocked_q_apply`.
    """
    n, m = At.shape
    b = max(BLOCKED_QR_ROWS, 2 * m)
    blocks, triangles = [], []
    r0 = 0
    while r0 < n:
        r1 = n if n - (r0 + b) < m else r0 + b
        qr, tau, _, info = lapack.dgeqrf(np.asfortranarray(At[r0:r1]), overwrite_a=1)
        blocks.append((qr, tau))
        triangles.append(np.triu(qr[:m]))
        r0 = r1
    qt, taut, _, info = lapack.dgeqrf(np.asfortranarray(np.vstack(triangles)), overwrite_a=1)
    return blocks, (qt, taut), np.triu(qt[:m])


def _blocked_q_apply(blocks, top, w):
    r""":math:`Q\,[w; 0]` for the factored ``Q`` of :func:`_blocked_qr` (length n)."""
    m = w.size
    v = _apply_q(*top, np.concatenate([w, np.zeros(top[0].shape[0] - m)]))
    return np.concatenate([
        _apply_q(qr, tau, np.concatenate([v[i * m:(i + 1) * m], np.zeros(qr.shape[0] - m)]))
        for i, (qr, tau) in enumerate(blocks)])


def _apply_q(qr, tau, v):
    """``Q v`` for Householder factors ``(qr, tau)`` of ``dgeqrf`` (``dormqr``)."""
    v = v.reshape(-1, 1)
    lwork = int(lapack.dormqr("L", "N", qr, tau, v, lwork=-1)[1][0])
    c, _, info = lapack.dormqr("L", "N", qr, tau, v, lwork=max(lwork, 1), overwrite_c=1)
    return c[:, 0]


def _cholesky(G, rcond_min):
    r"""Upper Cholesky factor of the upper-stored ``G`` (overwritten), if well conditioned.

    Returns ``None`` when ``dpotrf`` fails or the ``dpocon`` reciprocal
    condition estimate is at most ``rcond_min``.  For :math:`G = A A^T` this
    is a cheaper starting factor than a Householder QR (:math:`m^2 N_t` flops
    at level-3 speed) and as good once refined, as long as
    :math:`\kappa(A) \lesssim` ``rcond_min**-0.5``.
    """
    anorm = np.abs(np.triu(G) + np.triu(G, 1).T).sum(axis=0).max()
    U, info = lapack.dpotrf(G, lower=0, clean=1, overwrite_a=1)
    if info != 0:
        return None
    rcond, info = lapack.dpocon(U, anorm)
    return U if info == 0 and rcond > rcond_min else None


def _householder_min_norm(At, y):
    r"""Minimum-norm solution by a Householder QR of :math:`A^T` (LQ of ``A``).

    :math:`A^T = Q U` (``dgeqrf``; :func:`_blocked_qr` for a tall, thin
    :math:`A^T`), :math:`c = Q\,[U^{-T} y; 0]` with ``Q`` applied in
    factored form (``dormqr``): backward stable whatever
    :math:`\kappa(A)`, :math:`O(m^2 N_t)`.  Returns ``(c, U)``, or
    ``(None, None)`` when ``U`` is numerically singular (diagonal ratio below
    :data:`RANK_RTOL`).
    """
    c, factors = _householder_solve(At, y)
    return (c, factors[0]) if c is not None else (None, None)


def _householder_solve(At, y):
    """:func:`_householder_min_norm` returning ``(c or None, factors)``, the
    :func:`_householder_factors` that a rank-deficient step reuses in :func:`_svd_step`."""
    factors = _householder_factors(At)
    U = factors[0]
    d = np.abs(np.diag(U))
    if not d.min() > RANK_RTOL * d.max():
        return None, factors
    w = scipy.linalg.solve_triangular(U, y, trans="T", lower=False, check_finite=False)
    return factors[1](w), factors


def _lq_downdate(U, B):
    r"""Factor of :math:`A_K A_K^T = U^T U - B^T B` in orthogonal coordinates.

    With :math:`A_P^T = Q U`, the removed rows of ``Q`` are
    :math:`Q_R = B U^{-1}` and the kept ones satisfy
    :math:`Q_K^T Q_K = I - Q_R^T Q_R = S^T S` (Cholesky), so
    :math:`A_K^T = (Q_K S^{-1}) (S U)` and the new factor is :math:`S U`.
    The downdate is done on the well-conditioned :math:`I - Q_R^T Q_R`, not on
    the Gram matrix, so the factor keeps the accuracy of a QR factorisation
    however ill-conditioned :math:`A_P` is.  Returns ``None`` (recompute) when
    :math:`I - Q_R^T Q_R` is numerically singular, i.e. the removed columns
    carried a whole direction of the row space.
    """
    m = U.shape[0]
    QR = blas.dtrsm(1.0, U, np.asfortranarray(B), side=1, lower=0)  # B U^{-1}
    M = blas.dsyrk(-1.0, QR, beta=1.0, c=np.eye(m), trans=1, lower=0)
    S, info = lapack.dpotrf(M, lower=0, clean=1, overwrite_a=1)
    if info != 0:
        return None
    s = np.abs(np.diag(S))
    if s.min() < DOWNDATE_RTOL * s.max():
        return None
    return blas.dtrmm(1.0, S, U, side=0, lower=0)  # S U, upper triangular


def _qr_delete_columns(R, z, keep_pos):
    r"""Update the QR least-squares factors :math:`(R, Q^T y)` after deleting columns.

    :math:`A_K = Q R_{:, K}` and :math:`R_{:, K} = Q_2 R'`, so :math:`A_K =
    (Q Q_2) R'` and :math:`(Q Q_2)^T y = Q_2^T (Q^T y)`: an
    :math:`O(N_t^3)` update instead of a new :math:`O(m N_t^2)` factorisation
    (Golub and Van Loan, Sec. 6.5).
    """
    Q2, R2 = scipy.linalg.qr(R[:, keep_pos], mode="full", check_finite=False)
    k = keep_pos.size
    return np.ascontiguousarray(R2[:k]), (Q2.T @ z)[:k]


def _refined_min_norm(At, y, U):
    r"""Semi-normal-equations solve :math:`c = A^T U^{-1} U^{-T} y`, then refined.

    Each refinement step computes the residual :math:`r = y - A c` with ``A``
    itself and adds :math:`A^T U^{-1} U^{-T} r`; ``c`` stays in the row space
    of ``A``.  Stops when the correction is below :data:`REFINE_RTOL` of
    ``c`` or stops shrinking (rounding-error level); returns ``None`` if the
    last correction still exceeds :data:`REFINE_ACCEPT` (no convergence).
    """
    c = At @ _tri2(U, y)
    prev = np.inf
    rel = np.inf
    for _ in range(MAX_REFINE):
        dc = At @ _tri2(U, y - At.T @ c)
        c += dc
        rel = np.linalg.norm(dc) / max(np.linalg.norm(c), np.finfo(float).tiny)
        if rel <= REFINE_RTOL or rel > 0.5 * prev:
            break
        prev = rel
    return c if rel <= REFINE_ACCEPT else None


def _tri2(U, b):
    r""":math:`U^{-1} U^{-T} b` for upper triangular ``U``."""
    w = scipy.linalg.solve_triangular(U, b, trans="T", lower=False, check_finite=False)
    return scipy.linalg.solve_triangular(U, w, lower=False, check_finite=False)


@njit(cache=True)
def _compact_rows(At, keep_pos):  # pragma: no cover - jitted
    """Move rows ``keep_pos`` (increasing) of ``At`` to its front, in place.

    ``At[i] = At[keep_pos[i]]`` for ``i = 0 .. len(keep_pos) - 1``; since
    ``keep_pos[i] >= i`` the forward copy never overwrites a row still needed.
    This replaces allocating ``A[:, P_t]`` (m x N_t) at every pruning step.
    """
    m = At.shape[1]
    for i in range(keep_pos.shape[0]):
        src = keep_pos[i]
        if src != i:
            for j in range(m):
                At[i, j] = At[src, j]


def _warmup():
    """Compile :func:`_compact_rows` (float64 rows, int64 positions)."""
    _compact_rows(np.ones((3, 2)), np.array([0, 2], dtype=np.int64))
