"""One Metropolis iteration of adaptive random Fourier features, rflite vs plain NumPy.

The iteration (Kammonen et al. 2020, Algorithm 1, loop body): features of the
proposed frequencies, the amplitude solve :math:`(S'^*S' + \\lambda N I)\\beta' = S'^*y`,
the K accept tests and the swap of accepted features.  rflite forms the Gram
matrix with one BLAS ``zherk`` (half the work of a general product), factors it
by Cholesky and runs the accept test in a numba kernel; the reference forms
``S.conj().T @ S`` with a general product, calls ``numpy.linalg.solve`` (LU) and
loops over the features in Python.

``floor`` is the ``zherk`` of the proposal features plus the Cholesky
factorisation alone, the floor any iteration pays.

Shapes: N = 10^4 points, d = 5, K = 256 and 1024 (with
``--benchmark-enable``).  In the default suite the benchmarks run once as smoke
tests on N = 500.  Both sides run with BLAS limited to one thread (when
threadpoolctl is installed): on a machine shared with other jobs threaded
BLAS is many times slower and erratic.
"""

import contextlib

import numpy as np
import pytest

from rflite._arff import kernels as kern
from rflite import metropolis as mp

D = 5
LAM = 0.1


def _one_thread():
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover
        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")


def numpy_iteration(X, y, omega, beta, omega_p, u, gamma):
    """Straightforward NumPy: normal equations by numpy.linalg.solve, Python accept loop."""
    N, K = X.shape[0], omega.shape[0]
    S = np.exp(1j * (X @ omega_p.T))
    SH = S.conj().T
    beta_p = np.linalg.solve(SH @ S + LAM * N * np.eye(K), SH @ y)
    for k in range(K):
        if abs(beta_p[k]) ** gamma / abs(beta[k]) ** gamma > u[k]:
            omega[k] = omega_p[k]
            beta[k] = beta_p[k]
    return omega, beta


def zherk_cholesky(S, shift):
    """The floor of an iteration: ``S^* S`` by one BLAS ``zherk``, plus ``shift``, by Cholesky.

    Every exact iteration forms the Gram matrix of the K proposal features over
    the N points (``zherk`` is the cheapest form of that product: it computes
    one triangle) and factors it to solve for the amplitudes; nothing else in
    the iteration is of the same order (N K^2 + K^3 / 3 flops).
    """
    import scipy.linalg as sla
    import scipy.linalg.blas as blas

    G = blas.zherk(1.0, S, trans=2)
    return sla.cholesky(G + shift, lower=False, check_finite=False)


def _problem(N, K):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((N, D))
    y = np.sin(X[:, 0] * 3) * np.exp(-0.5 * (X**2).sum(axis=1))
    omega = rng.standard_normal((K, D))
    omega_p = omega + 0.3 * rng.standard_normal((K, D))
    u = rng.random(K)
    return X, y, omega, omega_p, u


def _size(benchmark, K):
    return (10_000 if not benchmark.disabled else 500), K


@pytest.mark.parametrize("K", [256, 1024])
def bench_rflite_iteration(benchmark, K):
    N, K = _size(benchmark, K)
    benchmark.group = f"metropolis iteration N={N} K={K} d={D}"
    X, y, omega, omega_p, u = _problem(N, K)
    gamma = 3 * D - 2
    mp._warmup()  # compile the accept kernel outside the timing
    with _one_thread():
        chain = mp._Chain(X, y.reshape(-1, 1), K, LAM * N, "exp")
        chain.omega[:] = omega
        chain.S = kern._features(X, omega, "exp")
        chain.G = kern._gram(chain.S)
        chain.rhs = kern._herm_t(chain.S) @ chain.Y
        chain.beta = kern._solve(chain.G, chain.rhs, chain.shift)
        n_acc = benchmark(chain.step, omega_p, u, gamma, np.inf)
    assert 0 <= n_acc <= K


@pytest.mark.parametrize("K", [256, 1024])
def bench_numpy_iteration(benchmark, K):
    N, K = _size(benchmark, K)
    benchmark.group = f"metropolis iteration N={N} K={K} d={D}"
    X, y, omega, omega_p, u = _problem(N, K)
    gamma = 3 * D - 2
    S = np.exp(1j * (X @ omega.T))
    beta = np.linalg.solve(S.conj().T @ S + LAM * N * np.eye(K), S.conj().T @ y)
    with _one_thread():
        benchmark(numpy_iteration, X, y, omega.copy(), beta.copy(), omega_p, u, gamma)


@pytest.mark.parametrize("K", [256, 1024])
def bench_floor_zherk_cholesky(benchmark, K):
    """The floor of an iteration: the Gram matrix of the proposal
    features by one ``zherk`` and its Cholesky factorisation, one BLAS thread."""
    N, K = _size(benchmark, K)
    benchmark.group = f"metropolis iteration N={N} K={K} d={D}"
    X, _, _, omega_p, _ = _problem(N, K)
    S = kern._features(X, omega_p, "exp")
    with _one_thread():
        benchmark(zherk_cholesky, S, LAM * N * np.eye(K))


def bench_iteration_agrees_with_numpy():
    """Same accept decisions and amplitudes as the reference on a small case."""
    X, y, omega, omega_p, u = _problem(300, 32)
    S = np.exp(1j * (X @ omega.T))
    beta = np.linalg.solve(S.conj().T @ S + LAM * 300 * np.eye(32), S.conj().T @ y)
    ref_omega, ref_beta = numpy_iteration(X, y, omega.copy(), beta.copy(), omega_p, u, 13.0)
    chain = mp._Chain(X, y.reshape(-1, 1), 32, LAM * 300, "exp")
    chain.omega[:] = omega
    chain.S = kern._features(X, omega, "exp")
    chain.beta = beta.reshape(-1, 1).copy()
    chain.step(omega_p, u, 13.0, np.inf)
    np.testing.assert_allclose(chain.omega, ref_omega, rtol=1e-12)
    np.testing.assert_allclose(chain.beta[:, 0], ref_beta, rtol=1e-8, atol=1e-12)
