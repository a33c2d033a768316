"""HARFE on a Dask array on a 2-worker LocalCluster against the in-memory fit.

The problem: HARFE with N = 10^4 features (q = 2, sin features), s = 500,
d = 20, m = 10^5 rows of the Friedman-1 function, explicit ``lam`` (the
``"auto"`` choice would time a 15-point grid, not the solver) and
``max_iter = 10`` (the per-iteration cost is what distribution changes; both
sides stop at the same iteration).

- ``in-memory``: ``HARFERegressor(..., matrix_free=True).fit(X, y)`` on a
  NumPy ``X``; the m x N matrix (8 GB at full size) is never formed, the
  feature kernels run block by block on the local threads.  As every
  reference (benchmarks/conftest.py) it runs with one BLAS thread; its numba
  feature kernels keep their threads.
- ``rflite-dask``: the same estimator on ``dask.array.from_array(X,
  chunks=10_000)`` on a ``LocalCluster`` of 2 worker processes with one
  thread each (:mod:`rflite._dask.backend`).

Both fits give the same support (checked).

The goal is a Dask fit within 2x of the in-memory one.  What keeps it there:

- a task of 10^4 rows does not build its whole 800 MB feature chunk
  (first-touch page faults, no cache reuse) and sweep it again for
  centring, column scaling and residual: chunk tasks evaluate their
  features in 32 MB row blocks with one reused buffer
  (``rflite._dask.backend.BLOCK_ENTRIES``), as the in-memory operator does;
- the gradient kernel applies centring, row weights and column scaling to
  the vectors (rank-one corrections) instead of to every feature entry,
  and the centred column norms come from the first pass's sums of squares
  (one pass fewer), so the chunk kernel costs little more than the bare
  feature fill.

Smoke mode (the default suite,
timing disabled) shrinks the problem to m = 2000, N = 200, s = 20, so that it
finishes in seconds; ``--benchmark-enable -k dask`` runs the full size once
(one round each: a fit is minutes on a busy 2-core machine).  The last test
prints the medians and the ratio.
"""


import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from rflite.datasets import make_friedman1  # noqa: E402
from rflite.htp import HARFERegressor  # noqa: E402

FULL = dict(m=100_000, N=10_000, s=500, chunk=10_000)
SMOKE = dict(m=2000, N=200, s=20, chunk=500)
D, Q, M_LAM, MAX_ITER = 20, 2, 1e-3, 10
GROUP = "harfe-dask-cluster"
_medians = {}
_fits = {}


@pytest.fixture(scope="module")
def cluster(cluster_client):
    return cluster_client  # the run's shared LocalCluster (conftest.py)


@pytest.fixture(scope="module")
def problems():
    return {}


def _size(benchmark):
    return "smoke" if benchmark.disabled else "full"


@pytest.fixture
def problem(benchmark, problems):
    size = _size(benchmark)
    if size not in problems:
        p = SMOKE if size == "smoke" else FULL
        X, y = make_friedman1(p["m"], d=D, noise=0.1, rng=0)
        problems[size] = (X, y, p)
    return problems[size]


def _estimator(p):
    return HARFERegressor(p["N"], s=p["s"], lam=M_LAM / p["m"], q=Q, max_iter=MAX_ITER,
                          random_state=0)


def _run(benchmark, fit):
    if benchmark.disabled:
        return benchmark(fit)
    return benchmark.pedantic(fit, rounds=1, iterations=1, warmup_rounds=0)


@pytest.mark.benchmark(group=GROUP)
def bench_harfe_dask_in_memory(benchmark, problem):
    X, y, p = problem
    est = _run(benchmark, lambda: _estimator(p).set_params(matrix_free=True).fit(X, y))
    _fits[(_size(benchmark), "memory")] = est
    if not benchmark.disabled:
        _medians["in-memory"] = benchmark.stats.stats.median


@pytest.mark.benchmark(group=GROUP)
def bench_harfe_dask_rflite_cluster(benchmark, problem, cluster):
    X, y, p = problem
    Xd = da.from_array(X, chunks=(p["chunk"], -1))
    yd = da.from_array(y, chunks=p["chunk"])
    with cluster.as_current(), dask.config.set(scheduler=cluster):
        Xd, yd = Xd.persist(), yd.persist()  # the data live on the workers, as on a cluster
        distributed.wait([Xd, yd])
        est = _run(benchmark, lambda: _estimator(p).fit(Xd, yd))
    _fits[(_size(benchmark), "dask")] = est
    if not benchmark.disabled:
        _medians["rflite-dask"] = benchmark.stats.stats.median


def bench_harfe_dask_same_support_and_ratio():
    for size in ("smoke", "full"):
        a, b = _fits.get((size, "memory")), _fits.get((size, "dask"))
        if a is not None and b is not None:
            np.testing.assert_array_equal(a.support_, b.support_)
            assert a.n_iter_ == b.n_iter_
    if len(_medians) == 2:
        print(f"\nHARFE m={FULL['m']} N={FULL['N']} s={FULL['s']}: in memory "
              f"{_medians['in-memory']:.1f} s, 2-worker LocalCluster "
              f"{_medians['rflite-dask']:.1f} s, ratio "
              f"{_medians['rflite-dask'] / _medians['in-memory']:.2f}")
