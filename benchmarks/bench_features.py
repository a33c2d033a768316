"""Feature-matrix construction: rflite against NumPy at m = 2000, N = 20000, sin.

Groups (one per shape):
- ``rflite`` (threads over row blocks, the default) and ``rflite-1thread``;
- ``numpy-dense``: ``np.sin(X @ W.T + b)``, the straightforward implementation;
- ``numpy-sin-floor``: ``np.sin`` alone applied to a precomputed m x N
  pre-activation, the floor for any sin feature matrix built with NumPy's sin;
- ``write-floor``: filling the m x N output once (pre-touched memory), the
  floor of any method writing into ``out=``; ``write-floor-fresh``:
  ``np.empty(...).fill``, page faults included, the floor of a transform
  returning a new matrix; and ``blas-product-floor``: ``X @ W.T`` alone (with the
  write floor, the floor of the dense-weight path).
"""

import numpy as np
import pytest

from rflite.features import random_feature_map

M, N = 2000, 20000
SHAPES = {"d100-q2": (100, 2), "d20-q20": (20, 20)}


@pytest.fixture(scope="module", params=list(SHAPES))
def problem(request):
    d, q = SHAPES[request.param]
    rng = np.random.default_rng(0)
    fmap = random_feature_map(d, N, q=q, activation="sin", rng=1)
    X = rng.uniform(-1, 1, (M, d))
    W = fmap.dense_weights()
    return request.param, fmap, X, W


def write_fresh(shape):
    """``np.empty(shape).fill(1.0)``: write a fresh output once, page faults included.

    The floor of any transform that returns a new ``shape`` matrix: each of its
    entries is written at least once into memory the call has to obtain.
    """
    out = np.empty(shape)
    out.fill(1.0)
    return out


def _group(benchmark, shape):
    benchmark.group = f"features-{shape}"


@pytest.mark.parametrize("n_threads", [None, 1], ids=["rflite", "rflite-1thread"])
def bench_rflite(benchmark, problem, n_threads):
    shape, fmap, X, _ = problem
    _group(benchmark, shape)
    A = benchmark(fmap.transform, X, n_threads=n_threads)
    assert A.shape == (M, N)


def bench_numpy_dense(benchmark, problem):
    shape, fmap, X, W = problem
    _group(benchmark, shape)
    b = fmap.bias
    A = benchmark(lambda: np.sin(X @ W.T + b))
    np.testing.assert_allclose(A[:50], fmap.transform(X[:50]), rtol=0, atol=1e-12)


def bench_numpy_sin_floor(benchmark, problem):
    shape, fmap, X, W = problem
    _group(benchmark, shape)
    Z = X @ W.T + fmap.bias
    benchmark(np.sin, Z)


def bench_write_floor(benchmark, problem):
    """Writing the m x N output once (``out.fill``): the floor of any method returning A."""
    shape, fmap, _, _ = problem
    _group(benchmark, shape)
    out = np.empty((M, fmap.n_columns))
    benchmark(out.fill, 1.0)


def bench_write_floor_fresh(benchmark, problem):
    """``np.empty((m, N)).fill``: writing a *fresh* output, page faults included --
    the floor ("the time needed just to write the result"), the one a
    transform that returns a new matrix is compared with."""
    shape, fmap, _, _ = problem
    _group(benchmark, shape)
    benchmark(write_fresh, (M, fmap.n_columns))


def bench_blas_product_floor(benchmark, problem):
    """``X @ W.T`` alone into a preallocated output (one BLAS thread): with the
    write floor, the floor of the dense-weight path."""
    shape, fmap, X, W = problem
    _group(benchmark, shape)
    out = np.empty((M, N))
    benchmark(np.matmul, X, W.T, out=out)
