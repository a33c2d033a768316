"""HARFE fit on a prebuilt feature matrix: rflite against two NumPy versions.

The problem is a HARFE Table 1 fit: f(x) = 1/sqrt(1 + |x|^2), d = 5, q = 3,
m = 500, N = 10^4, s = 500, m*lambda = 1e-4, mu = 0.1, at most 50 iterations
(this one stops at a fixed point after 26; all three versions apply the same
stopping rules and must select identical supports).

- ``rflite``: :func:`rflite.htp.harfe` (one ``A^T r`` per iteration, support
  Gram rows reused, Cholesky on the support).
- ``numpy-gram-pinv``: the published implementation's approach, transcribed:
  ``A^T A`` (N x N) formed up front, the gradient from it, a pseudo-inverse of
  the support system every iteration (with the magnitude-based support, so
  that the supports agree).
- ``numpy-solve``: the straightforward per-iteration version: ``A c`` and
  ``A^T r`` in full, ``A_S^T A_S`` rebuilt, :func:`numpy.linalg.solve`.

Smoke mode (the default suite, timing disabled) shrinks the problem to
m = 200, N = 2000, s = 200 so that the N x N baseline takes well under a second;
``--benchmark-enable`` runs the Table 1 size (the N x N Gram then needs
0.8 GB).  The last test prints the medians and ratios of the timed run.
"""

import numpy as np
import pytest

from rflite import htp
from rflite.datasets import make_harfe1
from rflite.features import random_feature_map
from rflite.htp import harfe

FULL = dict(m=500, N=10_000, s=500)
SMOKE = dict(m=200, N=2000, s=200)
M_LAM, MU, MAX_ITER, TOL = 1e-4, 0.1, 50, 1e-10
GROUP = "harfe-table1-fit"
_medians = {}


def _problem(m, N, s):
    rng = np.random.default_rng(0)
    X, y = make_harfe1(m, d=5, rng=rng)
    fmap = random_feature_map(5, N, q=3, rng=rng)
    A = fmap.transform(X)
    A /= np.linalg.norm(A, axis=0)
    return A, y, s


@pytest.fixture(scope="module")
def problems():
    htp._warmup()  # keep numba compilation out of the timings
    return {}


@pytest.fixture
def problem(benchmark, problems):
    size = "smoke" if benchmark.disabled else "full"
    if size not in problems:
        problems[size] = _problem(**(SMOKE if size == "smoke" else FULL))
    return problems[size]


@pytest.fixture(scope="module")
def reference(problems):
    """rflite's result per problem size, to check the baselines against."""
    out = {}

    def get(A, y, s):
        key = A.shape
        if key not in out:
            out[key] = harfe(A, y, s=s, lam=M_LAM / A.shape[0], mu=MU, max_iter=MAX_ITER, tol=TOL)
        return out[key]

    return get


# ---------------------------------------------------------------- baselines
def harfe_gram_pinv(A, y, s, shift, mu=MU, max_iter=MAX_ITER, tol=TOL):
    """The published approach: N x N Gram up front, pinv of the support system."""
    G = A.T @ A
    Aty = A.T @ y
    y_norm = np.linalg.norm(y)
    c = np.zeros(A.shape[1])
    support = None
    for it in range(1, max_iter + 1):
        g = (1 - mu * shift) * c + mu * (Aty - G @ c)
        new = np.sort(np.argsort(-np.abs(g), kind="stable")[:s])
        if support is not None and np.array_equal(new, support):
            break
        support = new
        c = np.zeros_like(c)
        c[support] = np.linalg.pinv(G[np.ix_(support, support)] + shift * np.eye(s)) @ Aty[support]
        if np.linalg.norm(A[:, support] @ c[support] - y) / y_norm <= tol:
            break
    return c, support, it


def harfe_numpy_solve(A, y, s, shift, mu=MU, max_iter=MAX_ITER, tol=TOL):
    """Straightforward NumPy: full A c and A^T r, A_S^T A_S rebuilt, linalg.solve."""
    y_norm = np.linalg.norm(y)
    c = np.zeros(A.shape[1])
    support = None
    for it in range(1, max_iter + 1):
        g = (1 - mu * shift) * c + mu * (A.T @ (y - A @ c))
        new = np.sort(np.argpartition(-np.abs(g), s - 1)[:s])
        if support is not None and np.array_equal(new, support):
            break
        support = new
        AS = A[:, support]
        c = np.zeros_like(c)
        c[support] = np.linalg.solve(AS.T @ AS + shift * np.eye(s), AS.T @ y)
        if np.linalg.norm(A @ c - y) / y_norm <= tol:
            break
    return c, support, it


# --------------------------------------------------------------- benchmarks
def _record(benchmark, name):
    if not benchmark.disabled and benchmark.stats is not None:
        _medians[name] = benchmark.stats.stats.median


def bench_rflite(benchmark, problem, reference):
    A, y, s = problem
    benchmark.group = GROUP
    res = benchmark(harfe, A, y, s=s, lam=M_LAM / A.shape[0], mu=MU, max_iter=MAX_ITER, tol=TOL)
    _record(benchmark, "rflite")
    assert res.support.size == s and res.n_iter > 2


def bench_numpy_gram_pinv(benchmark, problem, reference):
    A, y, s = problem
    benchmark.group = GROUP
    kwargs = dict(rounds=3, iterations=1) if not benchmark.disabled else {}
    if kwargs:
        c, support, n_iter = benchmark.pedantic(harfe_gram_pinv, (A, y, s, M_LAM), **kwargs)
    else:
        c, support, n_iter = benchmark(harfe_gram_pinv, A, y, s, M_LAM)
    _record(benchmark, "numpy-gram-pinv")
    ref = reference(A, y, s)
    np.testing.assert_array_equal(support, ref.support)
    assert n_iter == ref.n_iter
    np.testing.assert_allclose(c, ref.coef, rtol=0, atol=1e-6 * np.abs(ref.coef).max())


def bench_numpy_solve(benchmark, problem, reference):
    A, y, s = problem
    benchmark.group = GROUP
    c, support, n_iter = benchmark(harfe_numpy_solve, A, y, s, M_LAM)
    _record(benchmark, "numpy-solve")
    ref = reference(A, y, s)
    np.testing.assert_array_equal(support, ref.support)
    assert n_iter == ref.n_iter
    np.testing.assert_allclose(c, ref.coef, rtol=0, atol=1e-6 * np.abs(ref.coef).max())


def bench_ratio_report(capsys):
    """Print medians and speed-ups of the timed run (nothing in smoke mode)."""
    if "rflite" not in _medians:
        return
    base = _medians["rflite"]
    with capsys.disabled():
        print(f"\nHARFE Table-1 fit (m={FULL['m']}, N={FULL['N']}, s={FULL['s']}): medians")
        for name, t in _medians.items():
            print(f"  {name:16s} {t * 1e3:9.1f} ms   {t / base:6.1f}x rflite's time")
