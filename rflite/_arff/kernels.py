r"""Numerical kernels of the Metropolis chain (private machinery of :mod:`rflite.metropolis`).

Complex features :math:`e^{i \omega \cdot x}` (a numba kernel that forms
:math:`\omega \cdot x` and its sines and cosines), their Gram matrix by one
BLAS rank-k update, the refresh of a Gram matrix after some columns changed,
the BLAS thread gate shared by concurrent fits, and the per-feature accept
test of Algorithms 1-2 (Kammonen et al., *Adaptive random Fourier features
with Metropolis sampling*, 2020).  Split out of :mod:`rflite.metropolis` so
that the estimator module stays readable; the names are re-exported there.

Threads and processes
---------------------
Two parallel numba kernels (:func:`_cis_parallel` for large feature
matrices, :data:`_accept_parallel` for very many features) run on numba's
threading layer, which is process-global and, depending on the layer, neither
thread- nor fork-safe: the ``workqueue`` layer aborts the process (or, in
older numba, computes garbage) when two Python threads launch kernels at once,
and GNU OpenMP (numba's ``omp`` layer, the default where libgomp is present)
kills a child forked after the parent ran a kernel ("fork() called from a
process already using GNU OpenMP").  rflite does not change the user's layer
(``NUMBA_THREADING_LAYER`` is respected); instead every launch goes through
:func:`_launch_parallel`, which

* holds one process-wide lock, so threads (``ThreadPoolExecutor``, web
  servers, ...) take turns on the kernels -- each launch uses all numba
  threads anyway -- and results equal serial runs bit for bit;
* in a process forked after a fork-unsafe layer started (any ``fork``-context
  ``ProcessPoolExecutor``, ``multiprocessing.Pool``, dask's process workers)
  runs the same kernel serially instead, with one
  :class:`ParallelFallbackWarning`; the numbers are the same, since every
  entry is computed the same way whatever the thread count.

So any executor can run ARFF fits: threads, ``spawn``/``forkserver`` pools
(kernels stay parallel) and ``fork`` pools (kernels run serially in the
workers, usually what one wants with one worker per core).
"""

from __future__ import annotations

import math
import os
import threading

import numba
import numpy as np
import scipy.linalg.blas as _blas
import scipy.special
from numba import njit, prange

from rflite._core.sincos import SINCOS_MAX_ABS, absmax, sincos
from rflite._core.linalg import ridge_solve
from rflite._core.blas import shared_blas_limit
from rflite._core.exceptions import warn

#: Problems with ``N K^2`` below this run their BLAS calls single-threaded
#: (through ``threadpoolctl``): the loop makes thousands of
#: small BLAS calls whose thread start-up and synchronisation cost more than
#: they save, and on a loaded machine many times more (a descheduled thread
#: stalls every call, so a small threaded ``zherk`` can take orders of
#: magnitude longer than a serial one).  ``2^31`` is ``N = 10^4`` with
#: ``K ~ 460``.
BLAS_SERIAL_WORK = 1 << 31

#: The accept kernel uses numba threads (``prange``) from this many features
#: on; below, thread start-up costs more than the O(K d) loop.
PARALLEL_MIN_FEATURES = 1 << 16

#: Complex features are computed by numba threads (``prange`` over blocks of
#: columns) from this many matrix entries on (``N = 10^4``, ``K >= 420``); each
#: entry is computed the same way whatever the thread count.  Below it, on a
#: busy 2-core machine, threads do not pay off (at ``N K = 2.6 * 10^6`` the
#: threaded fill is no faster than the serial one).
PARALLEL_MIN_ENTRIES = 1 << 22

#: Number of column blocks handed to the threads.
CIS_BLOCKS = 16

#: numba threading layers that keep working in a process forked after they
#: started (numba's threading-layer documentation: ``tbb`` and ``workqueue``
#: are fork-safe; ``omp`` is not with GNU OpenMP, and Intel's cannot be told
#: apart from it here, so it is treated the same way).
FORK_SAFE_LAYERS = ("tbb", "workqueue")


class ParallelFallbackWarning(RuntimeWarning):
    """A parallel kernel ran serially because the process was forked after numba's
    fork-unsafe threading layer started (see the module notes); results are unchanged."""


def _features(X, omega, activation, out=None):
    """S (N x K, Fortran order so its columns are contiguous): exp(i X W^T) or sigmoid.

    ``out``, if given, is an N x K Fortran-ordered array of the result dtype.
    """
    N, K = X.shape[0], omega.shape[0]
    if activation == "exp":
        S = np.empty((N, K), dtype=np.complex128, order="F") if out is None else out
        XT = np.ascontiguousarray(X.T)
        if N * K >= PARALLEL_MIN_ENTRIES and K > 1:
            _launch_parallel(_cis_parallel, _cis_serial, XT, omega, S, max(1, K // CIS_BLOCKS))
        else:
            _cis_block(XT, omega, S, 0, K)
        return S
    S = np.empty((N, K), order="F") if out is None else out
    np.matmul(omega, X.T, out=S.T)  # S.T is the C-ordered (K, N) view
    return scipy.special.expit(S, out=S)  # logistic sigmoid, overflow-free


def _rhs(S, Y):
    """:math:`S^* Y` without forming a conjugated copy of S (Y is real)."""
    R = S.T @ Y
    return R.conj() if np.iscomplexobj(R) else R


def _herm_t(S):
    return S.conj().T if np.iscomplexobj(S) else S.T


def _gram(S):
    """Full Hermitian S^* S from one BLAS rank-k update (upper half) plus a mirror."""
    if np.iscomplexobj(S):
        U = _blas.zherk(1.0, S, trans=2)
    else:
        U = _blas.dsyrk(1.0, S, trans=1)
    return _mirror_upper(U)


def _mirror_upper(U):
    lower = np.tril_indices(U.shape[0], -1)
    U[lower] = U.T[lower].conj()
    return U


def _refresh_gram(G, S, stale):
    """Gram of the current S given the Gram ``G`` formed before columns ``stale`` changed."""
    n_stale = int(stale.sum())
    if n_stale == 0:
        return G
    K = S.shape[1]
    if 2 * n_stale >= K:
        G = _gram(S)
    else:
        idx = np.flatnonzero(stale)
        rows = _herm_t(S[:, idx]) @ S  # (n_stale, K)
        G[idx, :] = rows
        G[:, idx] = rows.conj().T
    stale[:] = False
    return G


def _blas_limit(work):
    """One BLAS thread for small problems (see BLAS_SERIAL_WORK and ``blas_threads``).

    Thread-safe: see :func:`rflite._core.blas.shared_blas_limit`.
    """
    return shared_blas_limit(1 if work < BLAS_SERIAL_WORK else None)


def _solve(G, rhs, shift):
    return ridge_solve(G, rhs, shift)


def _row_sq_norms(beta):
    """Squared Euclidean norm of each amplitude row, over the outputs."""
    if np.iscomplexobj(beta):
        return (beta.real**2 + beta.imag**2).sum(axis=1)
    return (beta**2).sum(axis=1)


def _train_error(S, beta, Y):
    r"""Mean of :math:`|(S \beta)_{np} - Y_{np}|^2`: the modulus of the complex residual.

    The paper's error (Sec. 5) is :math:`|S\hat\beta - y|`, imaginary part
    included; the real part alone would understate it.
    """
    r = S @ beta - Y
    if np.iscomplexobj(r):
        return float(np.mean(r.real * r.real + r.imag * r.imag))
    return float(np.mean(r * r))


def _sym_sqrt(C):
    """Symmetric square root of a covariance (negative round-off eigenvalues clipped)."""
    w, V = np.linalg.eigh(0.5 * (C + C.T))
    return (V * np.sqrt(np.clip(w, 0.0, None))) @ V.T


# =========================================================================
# kernel
# =========================================================================
@njit(cache=True, nogil=True)
def _cis_block(XT, W, out, k0, k1):
    r"""Columns ``k0:k1`` of :math:`S = e^{i X W^T}`, one ``cos`` and ``sin`` per entry.

    ``XT`` is :math:`X^T` (d x N, C order) and ``out`` is N x K in Fortran
    order, so every column is written contiguously.  The vectorisable
    :func:`rflite._core.sincos.sincos` makes this an order of magnitude faster
    than scalar ``math.cos``/``math.sin``, and no
    N x K pre-activation array is allocated.
    """
    d, N = XT.shape
    z = np.empty(N)
    for k in range(k0, k1):
        # the phase first, as a vectorisable axpy over n, then one sincos per entry
        z[:] = 0.0
        for j in range(d):
            w = W[k, j]
            for n in range(N):
                z[n] += w * XT[j, n]
        if absmax(z) <= SINCOS_MAX_ABS:
            for n in range(N):
                sn, cs = sincos(z[n])
                out[n, k] = complex(cs, sn)
        else:  # phases beyond the fast range reduction: libm
            for n in range(N):
                out[n, k] = complex(math.cos(z[n]), math.sin(z[n]))


@njit(cache=True, parallel=True)
def _cis_parallel(XT, W, out, block):
    """:func:`_cis_block` over column blocks of width ``block`` in parallel (disjoint writes).

    Launch it through :func:`_launch_parallel` (thread and fork safety).
    """
    K = W.shape[0]
    n_blocks = (K + block - 1) // block
    for b in prange(n_blocks):
        k0 = b * block
        _cis_block(XT, W, out, k0, min(K, k0 + block))


def _cis_serial(XT, W, out, block):
    """What :func:`_cis_parallel` computes, in one thread (the same numbers, entry by entry)."""
    _cis_block(XT, W, out, 0, W.shape[0])


# ---------------------------------------------------- launching parallel kernels
#: Serialises launches of the ``parallel=True`` kernels across Python threads
#: (numba's workqueue layer is not thread-safe); replaced in forked children,
#: where a lock held by another parent thread at the fork would never be freed.
_PARALLEL_LOCK = threading.Lock()

#: True in a process forked after a fork-unsafe threading layer started in an
#: ancestor: numba's GNU OpenMP layer aborts such a child at its first launch.
_FORKED_UNSAFE = False

_FALLBACK_WARNED = False


def _layer_is_fork_unsafe() -> bool:
    """Whether numba's threading layer has started in this process and is not fork-safe."""
    try:
        layer = numba.threading_layer()
    except ValueError:  # no parallel kernel launched yet: a child will start its own layer
        return False
    return layer not in FORK_SAFE_LAYERS


def _after_fork_in_child():
    global _PARALLEL_LOCK, _FORKED_UNSAFE, _FALLBACK_WARNED
    _PARALLEL_LOCK = threading.Lock()
    # inherited: numba's layer state (and ours) is a copy of the parent's at the fork
    _FORKED_UNSAFE = _FORKED_UNSAFE or _layer_is_fork_unsafe()
    _FALLBACK_WARNED = False


if hasattr(os, "register_at_fork"):  # POSIX; elsewhere there is no fork
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _launch_parallel(kernel, serial, *args):
    """Run the ``parallel=True`` ``kernel(*args)`` safely from any thread or process.

    Holds :data:`_PARALLEL_LOCK` for the launch (thread safety on every numba
    threading layer), and in a process forked after a fork-unsafe layer
    started runs ``serial(*args)`` instead, which computes the same numbers,
    warning once per process (:class:`ParallelFallbackWarning`).  See the
    module notes "Threads and processes".
    """
    global _FALLBACK_WARNED
    if _FORKED_UNSAFE:
        if not _FALLBACK_WARNED:
            _FALLBACK_WARNED = True
            warn(
                f"numba's {numba.threading_layer()!r} threading layer started before this "
                "process was forked and cannot run here; rflite's parallel kernels run "
                "serially in this process (same results). To keep them parallel use a "
                "'spawn' or 'forkserver' executor, or set NUMBA_THREADING_LAYER=workqueue "
                "(or tbb) before the parent starts.",
                ParallelFallbackWarning)
        return serial(*args)
    with _PARALLEL_LOCK:
        return kernel(*args)


@njit(cache=True)
def _accept_kernel(norm_sq_prop, norm_sq, omega_prop, u, gamma, omega_max, accept):
    r"""Per-feature Metropolis test of Algorithms 1-2, with pre-drawn uniforms.

    Sets ``accept[k]`` to

    .. math::

        \Bigl(\frac{\|\hat\beta'_k\|^2}{\|\hat\beta_k\|^2}\Bigr)^{\gamma/2} > u_k
        \quad\text{and}\quad \|\omega'_k\|_2 < \omega_{\max}

    and returns the number of accepted features.  ``0 / 0`` counts as ratio 1
    (accepted, since ``u < 1``), ``x / 0`` as infinity.  Every feature is
    independent (``prange``; serial unless compiled as
    :data:`_accept_parallel`), so the result does not depend on the thread
    count.

    Parameters
    ----------
    norm_sq_prop, norm_sq : (K,) float64
        Squared amplitude norms of the proposal and the current state.
    omega_prop : (K, d) float64
        Proposed frequencies.
    u : (K,) float64
        Uniforms on [0, 1).
    gamma, omega_max : float
    accept : (K,) bool, output
    """
    K = u.shape[0]
    d = omega_prop.shape[1]
    half = 0.5 * gamma
    lim_sq = omega_max * omega_max
    for k in prange(K):
        a = norm_sq_prop[k]
        b = norm_sq[k]
        if b > 0.0:
            # 0 ** (gamma / 2) is 0 for gamma > 0, also where gamma / 2 underflows to 0
            ratio = (a / b) ** half if a > 0.0 or gamma == 0.0 else 0.0
        elif a > 0.0:
            ratio = np.inf
        else:
            ratio = 1.0
        r2 = 0.0
        for j in range(d):
            r2 += omega_prop[k, j] * omega_prop[k, j]
        accept[k] = ratio > u[k] and r2 < lim_sq
    n = 0
    for k in range(K):
        if accept[k]:
            n += 1
    return n


#: The same kernel compiled with ``parallel=True`` (``prange`` over features);
#: it gives identical results for any thread count.  Not cached: numba's cache
#: index is keyed by function and signature, not by the ``parallel`` flag, so a
#: cached copy of the same Python function would collide with the serial one.
#: Launch it through :func:`_launch_parallel`.  (With ``NUMBA_DISABLE_JIT=1``
#: ``njit`` returns the plain function, which has no ``py_func``.)
_accept_parallel = njit(parallel=True)(getattr(_accept_kernel, "py_func", _accept_kernel))
