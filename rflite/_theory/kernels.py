r"""Private machinery of :mod:`rflite.theory`: blocked Gram scans, RIP searches, exact arithmetic.

* Operands: :func:`_matrix` accepts a dense array or a
  :class:`rflite.features.FeatureOperator` (column norms and column subsets
  without forming ``A``).
* Coherence: the Gram matrix of the normalised columns block by block
  (:func:`_gram_blocks`, :data:`BLOCK_ENTRIES` entries a block) with a
  numba kernel for each block's largest off-diagonal modulus.
* RIP estimates (:func:`rflite.theory.rip_lower_bound`): extreme eigenvalues
  of :math:`A_S^* A_S` over batches of supports (random or exhaustive) and
  the greedy search that grows a support column by column.
* Closed forms: the theorems' bounds are evaluated in 34-digit decimal
  arithmetic with an unbounded exponent (:data:`_CONTEXT`), so that no
  intermediate over- or underflows for any finite input.
* Argument checks shared by the bounds (:func:`_pos`, :func:`_nonneg`,
  :func:`_prob`) and the column weights of a scaled matrix (:func:`_scaling`).

Split out of :mod:`rflite.theory` (which re-exports :class:`RIPEstimate`
and :data:`BLOCK_ENTRIES`, read here) so that the module of public bounds
stays readable.
"""

from __future__ import annotations

import decimal
import functools
import itertools
import math
from decimal import Decimal
from typing import NamedTuple

import numpy as np
import scipy.linalg
from numba import njit
from scipy.sparse.linalg import LinearOperator

from rflite._core.blas import blas_threads
from rflite._core.validation import check_array, check_choice, check_int, check_real



class RIPEstimate(NamedTuple):
    r"""Result of :func:`rip_lower_bound`.

    Attributes
    ----------
    delta : float
        :math:`\max_S \|B_S^* B_S - I\|_{2 \to 2}` over the supports tried, a
        lower bound on :math:`\delta_s(B)` (exact for ``"exhaustive"``), where
        :math:`B` is ``A`` scaled as requested.
    support : (s,) int64 ndarray
        The worst support found (increasing).
    eig_min, eig_max : float
        Extreme eigenvalues of :math:`B_S^* B_S` on that support.
    n_supports : int
        Number of supports evaluated.
    """

    delta: float
    support: np.ndarray
    eig_min: float
    eig_max: float
    n_supports: int


def _small_blas():
    """Single-threaded BLAS around loops of small products (see ``blas_threads``)."""
    return blas_threads(1)


def _is_operator(A) -> bool:
    return isinstance(A, LinearOperator) and hasattr(A, "columns")


def _matrix(A, name="A"):
    """Dense 2-d float64/complex128 array or a FeatureOperator (returned as is)."""
    if _is_operator(A):
        return A
    if isinstance(A, LinearOperator):
        raise ValueError(f"{name} must be an array or a FeatureOperator, got {type(A).__name__}")
    return check_array(A, name, ndim=2, allow_complex=True)


def _column_norms(A) -> np.ndarray:
    if _is_operator(A):
        return np.asarray(A.column_norms(), dtype=np.float64)
    if np.iscomplexobj(A):
        sq = np.einsum("ij,ij->j", A.real, A.real) + np.einsum("ij,ij->j", A.imag, A.imag)
    else:
        sq = np.einsum("ij,ij->j", A, A)
    return np.sqrt(sq)


def _columns(A, cols) -> np.ndarray:
    if _is_operator(A):
        return np.asarray(A.columns(np.asarray(cols, dtype=np.int64)))
    return A[:, cols]


def _check_nonzero_columns(norms, name="A"):
    zero = np.flatnonzero(norms == 0.0)
    if zero.size:
        raise ValueError(
            f"{name} has {zero.size} zero column(s), first at index {int(zero[0])}; "
            "coherence is undefined for a zero column"
        )


#: Columns whose largest entry is below this are rescaled before the norms
#: (squares of ~1e-154 and below underflow).
_TINY_COLUMN = 1e-140

#: Target size, in entries, of one block of the Gram matrix in
#: :func:`coherence` (32 MB of float64): the block has
#: ``max(1, BLOCK_ENTRIES // N)`` rows.
BLOCK_ENTRIES = 1 << 22


def _gram_blocks(A, block_size, *, upper):
    """Blocks of rows of the Gram matrix, for :func:`coherence` and :func:`cumulative_coherence`.

    Yields ``(i0, i1, j0, G, inv)`` with ``G = A[:, i0:i1]^* A[:, j0:]`` and
    ``inv`` the inverse column norms (a zero column raises ``ValueError``).
    ``upper`` starts each block at its own diagonal (``j0 = i0``) for dense
    ``A``; operators always give whole rows (``j0 = 0``).  Memory is one
    block x N piece.
    """
    N = A.shape[1]
    if block_size is None:
        block_size = max(1, BLOCK_ENTRIES // N)
    block_size = check_int(block_size, "block_size", minimum=1)
    if not _is_operator(A) and A.size:
        # coherence is invariant to column scaling: columns of entries below
        # ~1e-140 are rescaled first, else their squared norms (and the Gram
        # entries) underflow to 0 and a nonzero column reads as a zero one
        amax = np.abs(A).max(axis=0)
        if np.any((amax > 0.0) & (amax < _TINY_COLUMN)):
            A = A / np.where(amax > 0.0, amax, 1.0)
    norms = _column_norms(A)
    _check_nonzero_columns(norms)
    inv = 1.0 / norms
    for i0 in range(0, N, block_size):
        i1 = min(N, i0 + block_size)
        if _is_operator(A):
            j0 = 0
            G = np.ascontiguousarray(A.rmatmat(A.columns(np.arange(i0, i1))).T)
        else:
            j0 = i0 if upper else 0
            Aj = A[:, i0:i1]
            G = (Aj.conj().T if np.iscomplexobj(A) else Aj.T) @ A[:, j0:]
        yield i0, i1, j0, G, inv


@njit(cache=True)
def _masked_block_max(G, inv_rows, inv_cols, shift):  # pragma: no cover - jitted
    r"""Largest :math:`|G_{ij}|^2 r_i^2 c_j^2` over :math:`j \ne i + \text{shift}`.

    ``G`` is one block of the Gram matrix (rows: the block's columns of ``A``;
    columns: the columns ``shift + j``...), ``r`` and ``c`` the inverse column
    norms.  Squared magnitudes avoid a square root per entry.
    """
    b, n = G.shape
    best = 0.0
    for i in range(b):
        ri = inv_rows[i] * inv_rows[i]
        row_best = 0.0
        for j in range(n):
            if j == i + shift:
                continue
            g = G[i, j]
            v = (g.real * g.real + g.imag * g.imag) * (inv_cols[j] * inv_cols[j])
            if v > row_best:
                row_best = v
        row_best *= ri
        if row_best > best:
            best = row_best
    return best


#: Batch size, in entries of the stacked ``A_S``, for the random and exhaustive
#: RIP searches.
_BATCH_ENTRIES = 1 << 21


def _support_eigs(A, w, S):
    BS = _columns(A, S) * w[S]
    G = BS.conj().T @ BS
    ev = scipy.linalg.eigh(G, eigvals_only=True, check_finite=False)
    return ev[0], ev[-1]


def _best_of_supports(A, w, supports):
    """Evaluate supports (equal sizes) in stacked batches; keep the worst."""
    supports = iter(supports)
    first = next(supports)
    s = len(first)
    supports = itertools.chain([first], supports)
    m = A.shape[0]
    batch = max(1, _BATCH_ENTRIES // (m * s))
    best = (-1.0, None, 0.0, 0.0)
    count = 0
    while True:
        chunk = list(itertools.islice(supports, batch))
        if not chunk:
            break
        S = np.asarray(chunk, dtype=np.int64)  # (b, s)
        cols = _columns(A, S.ravel()) * w[S.ravel()]  # (m, b*s)
        BS = cols.reshape(m, S.shape[0], s).transpose(1, 0, 2)  # (b, m, s)
        G = np.conj(np.swapaxes(BS, 1, 2)) @ BS
        ev = np.linalg.eigvalsh(G)
        dev = np.maximum(ev[:, -1] - 1.0, 1.0 - ev[:, 0])
        k = int(np.argmax(dev))
        if dev[k] > best[0]:
            best = (float(dev[k]), S[k].copy(), float(ev[k, 0]), float(ev[k, -1]))
        count += S.shape[0]
    return RIPEstimate(max(best[0], 0.0), np.sort(best[1]), best[2], best[3], count)


def _rmatvec(A, r):
    if _is_operator(A):
        return np.asarray(A.rmatvec(r))
    return A.conj().T @ r


def _greedy(A, w, diag, s, n_starts, rng):
    N = A.shape[1]
    dev0 = np.abs(diag - 1.0)
    first = int(np.argmax(dev0))
    others = rng.permutation(np.delete(np.arange(N), first))
    starts = [first] + others[: n_starts - 1].tolist()
    best = None
    count = 0
    for j0 in starts:
        for sign in (1.0, -1.0):  # grow towards lambda_max, then lambda_min
            S = _grow(A, w, diag, s, j0, sign)
            lo, hi = _support_eigs(A, w, S)
            count += 1
            dev = max(hi - 1.0, 1.0 - lo)
            if best is None or dev > best[0]:
                best = (float(dev), np.sort(S), float(lo), float(hi))
    return RIPEstimate(max(best[0], 0.0), best[1], best[2], best[3], count)


def _grow(A, w, diag, s, j0, sign):
    S = [j0]
    in_S = np.zeros(A.shape[1], dtype=np.bool_)
    in_S[j0] = True
    lam = diag[j0]
    v = np.ones(1)
    while len(S) < s:
        r = _columns(A, np.asarray(S)) @ (w[S] * v)
        g = w * _rmatvec(A, r)  # (B^* B_S v)_j
        g2 = (g.real * g.real + g.imag * g.imag) if np.iscomplexobj(g) else g * g
        j = _best_candidate(lam, diag, np.ascontiguousarray(g2, dtype=np.float64), in_S, sign)
        S.append(j)
        in_S[j] = True
        BS = _columns(A, np.asarray(S)) * w[S]
        ev, V = scipy.linalg.eigh(BS.conj().T @ BS, check_finite=False)
        k = -1 if sign > 0 else 0
        lam, v = ev[k], V[:, k]
    return np.asarray(S, dtype=np.int64)


@njit(cache=True)
def _best_candidate(lam, diag, g2, in_S, sign):  # pragma: no cover - jitted
    r"""Column outside S extremising the 2 x 2 compression's eigenvalue.

    For the current extreme eigenpair :math:`(\lambda, v)` of
    :math:`B_S^* B_S` and a candidate column :math:`j`, the compression of
    :math:`B_{S\cup j}^* B_{S\cup j}` onto :math:`\{(v, 0), e_j\}` is
    :math:`\begin{pmatrix}\lambda & g_j\\ \bar g_j & d_j\end{pmatrix}` with
    eigenvalues :math:`(\lambda + d_j)/2 \pm \sqrt{((\lambda - d_j)/2)^2 +
    |g_j|^2}`.  ``sign = +1`` maximises the ``+`` root, ``-1`` minimises the
    ``-`` root.  Returns the chosen index.
    """
    best_j = -1
    best_v = -np.inf
    for j in range(diag.shape[0]):
        if in_S[j]:
            continue
        half = 0.5 * (lam - diag[j])
        root = np.sqrt(half * half + g2[j])
        val = sign * (0.5 * (lam + diag[j])) + root  # = sign * eigenvalue
        if val > best_v:
            best_v = val
            best_j = j
    return best_j


#: Decimal context in which every closed form below is evaluated: 34
#: significant digits and an exponent range of about +-10^18, so that no
#: intermediate quantity over- or underflows for any finite float or int input
#: (gamma = 1e308, delta = 5e-324, d = 2**62).  Overflow and underflow are
#: not trapped (they give Infinity / 0 only beyond +-10^18); invalid
#: operations (inf - inf, 0 * inf) and division by zero are trapped, so a
#: NaN can never be returned silently.
_CONTEXT = decimal.Context(prec=34, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN,
                           traps=[decimal.InvalidOperation, decimal.DivisionByZero])


def _closed_form(func):
    """Evaluate ``func`` in :data:`_CONTEXT` (the decorator of every closed form)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with decimal.localcontext(_CONTEXT):
            return func(*args, **kwargs)

    return wrapper


def _D(x) -> Decimal:
    """Exact decimal value of a validated float or int."""
    return x if isinstance(x, Decimal) else Decimal(x)


def _ln(x) -> Decimal:
    return _D(x).ln()


def _sqrt(x) -> Decimal:
    return _D(x).sqrt()


def _float(x: Decimal) -> float:
    """Round once to float: beyond the float range ``inf``, below it ``0.0``."""
    return float(x)


def _ln_inv(delta: float) -> Decimal:
    r""":math:`\log(1/\delta)` as :math:`-\log\delta` (``1/5e-324`` overflows a float)."""
    return -_ln(delta)


_ONE = Decimal(1)


# ------------------------------------------------------ argument checks
def _pos(value, name):
    return check_real(value, name, minimum=0.0, strict=True)


def _nonneg(value, name):
    return check_real(value, name, minimum=0.0)


def _prob(value, name="delta"):
    value = check_real(value, name)
    if not 0.0 < value < 1.0:
        raise ValueError(f"{name} must be in (0, 1), got {value}")
    return value


def _scaling(A, norms, scale):
    """Column weights w with B = A diag(w), and the diagonal of B^* B."""
    if isinstance(scale, str):
        check_choice(scale, "scale", ("columns",))
        _check_nonzero_columns(norms)
        w = 1.0 / norms
    else:
        sc = float(A.shape[0]) if scale is None else _pos(scale, "scale")
        w = np.full(norms.shape[0], 1.0 / math.sqrt(sc))
    return w, (norms * w) ** 2
