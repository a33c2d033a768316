"""Greedy feature construction: the hyper-parameter objective and the worker fan-out.

Groups:
- ``gfc-objective``: one evaluation of the k-fold validation error and its
  analytic gradient (m = 2000, d = 10, k = 5): the rflite numba kernel
  against a straightforward NumPy implementation of the same maths (a loop
  over folds with fancy indexing, ``np.linalg.solve`` and the Appendix C.1
  formulas).
- ``gfc-workers``: wall time of :func:`rflite.greedy.gfc` (m = 8000, d = 10,
  4 greedy descents of 3 steps) run serially and on a warm local process
  pool of 2 workers (on 2 cores): the ratio is the parallel speed-up.
"""

import multiprocessing
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

from rflite._core.parallel import one_blas_thread
from rflite.datasets import make_friedman_gfc
from rflite.greedy import _hyper_objective, fold_ids, gfc, greedy_descent

M, D, K = 2000, 10, 5


@pytest.fixture(scope="module")
def objective_problem():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (M, D))
    y = rng.standard_normal(M)
    f = rng.standard_normal(M)
    w = rng.standard_normal(D) / np.sqrt(D)
    folds = fold_ids(M, K, 0)
    return X, y, f, w, 1e-4, folds


def numpy_objective(X, y, f, w, lam, folds, k):
    """Straightforward NumPy: value and gradient (w, lam) fold by fold."""
    d = X.shape[1]
    value, gw, gl = 0.0, np.zeros(d), 0.0
    for j in range(k):
        T = folds == j
        V = ~T
        XT, XV, yT, yV = X[T], X[V], y[T], y[V]
        uT, uV = XT @ w, XV @ w
        sT, cT, sV, cV = np.sin(uT), np.cos(uT), np.sin(uV), np.cos(uV)
        ZT = np.column_stack([f[T], sT, cT])
        ZV = np.column_stack([f[V], sV, cV])
        nT, nV = len(yT), len(yV)
        P = ZT.T @ ZT + nT * lam * np.eye(3)
        c = np.linalg.solve(P, ZT.T @ yT)
        r = ZV @ c - yV
        value += np.mean(r**2)
        t = np.linalg.solve(P, ZV.T @ r / nV)
        gw += 2.0 / nV * XV.T @ (r * (c[1] * cV - c[2] * sV))
        gw += 2.0 * XT.T @ ((t[1] * cT - t[2] * sT) * (yT - ZT @ c)
                            - (ZT @ t) * (c[1] * cT - c[2] * sT))
        gl -= 2.0 * nT * (t @ c)
    return value / k, np.append(gw, gl) / k


@pytest.mark.benchmark(group="gfc-objective")
def bench_objective_rflite(benchmark, objective_problem):
    X, y, f, w, lam, folds = objective_problem
    value, grad = benchmark(_hyper_objective, X, y, f, w, lam, folds, K)
    ref_value, ref_grad = numpy_objective(X, y, f, w, lam, folds, K)
    np.testing.assert_allclose(value, ref_value, rtol=1e-10)
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-8, atol=1e-12)


@pytest.mark.benchmark(group="gfc-objective")
def bench_objective_numpy(benchmark, objective_problem):
    X, y, f, w, lam, folds = objective_problem
    benchmark(numpy_objective, X, y, f, w, lam, folds, K)


# ----------------------------------------------------------------- workers
GFC_KW = dict(n_workers=4, max_steps=3, eps=0.0, rng=0)


@pytest.fixture(scope="module")
def gfc_data():
    return make_friedman_gfc(8000, rng=0)


@pytest.fixture(scope="module")
def pool2():
    """A warm spawn pool: worker start-up and numba cache loading stay out of the timing.

    Built as the docs advise for a user's own pool (one BLAS thread a worker,
    as the pools ``map_tasks`` creates have): two workers with threaded BLAS
    oversubscribe 2 cores and make this median swing by a factor of two.
    """
    pool = ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn"),
                               initializer=one_blas_thread)
    X, y = make_friedman_gfc(50, rng=0)
    list(pool.map(_warm, [(X, y)] * 2))
    yield pool
    pool.shutdown()


def _warm(args):
    X, y = args
    return greedy_descent(X, y, 0.0, max_steps=1, rng=0).n_steps


@pytest.mark.benchmark(group="gfc-workers")
def bench_gfc_serial(benchmark, gfc_data):
    X, y = gfc_data
    res = benchmark.pedantic(gfc, args=(X, y), kwargs=GFC_KW, rounds=3, iterations=1)
    assert res.n_constructed == 12


@pytest.mark.benchmark(group="gfc-workers")
def bench_gfc_process_pool_2(benchmark, gfc_data, pool2):
    X, y = gfc_data
    res = benchmark.pedantic(gfc, args=(X, y), kwargs=dict(GFC_KW, executor=pool2),
                             rounds=3, iterations=1)
    assert res.n_constructed == 12
