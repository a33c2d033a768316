"""Mutual coherence: rflite's blocked kernel against the straightforward NumPy version.

Group ``coherence-500x10000`` (the original SHRIMP code's routine takes
seconds and nearly 3 GB there):

- ``rflite``: :func:`rflite.theory.coherence`, Gram matrix one column block at a
  time (upper triangle only), numba masked maximum, ~32 MB of extra memory;
- ``numpy``: normalise the columns, form the N x N Gram matrix, take ``abs``,
  mask the diagonal, take the maximum (two N x N float64 arrays, 1.6 GB).

Peak traced memory (``tracemalloc``, which sees NumPy's allocations) of one
extra call is stored in ``extra_info["peak_MB"]`` and printed.  With the
benchmarks disabled (the default suite) the shape shrinks to 200 x 2000 so the
smoke run stays short.
"""

import tracemalloc

import numpy as np
import pytest

from rflite import theory

FULL, SMOKE = (500, 10000), (200, 2000)


def numpy_coherence(A):
    """Normalised Gram matrix, masked diagonal, maximum: the textbook version."""
    An = A / np.linalg.norm(A, axis=0)
    G = np.abs(An.conj().T @ An)
    np.fill_diagonal(G, 0.0)
    return float(G.max())


def _peak_mb(fn, A):
    tracemalloc.start()
    try:
        value = fn(A)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return value, peak / 2**20


@pytest.fixture(scope="module")
def matrices():
    rng = np.random.default_rng(0)
    return {shape: rng.standard_normal(shape) for shape in (FULL, SMOKE)}


@pytest.mark.parametrize(
    "name, fn", [("rflite", theory.coherence), ("numpy", numpy_coherence)], ids=["rflite", "numpy"]
)
def bench_coherence(benchmark, matrices, name, fn):
    shape = SMOKE if benchmark.disabled else FULL
    A = matrices[shape]
    benchmark.group = f"coherence-{shape[0]}x{shape[1]}"
    value = benchmark(fn, A)
    again, peak = _peak_mb(fn, A)
    benchmark.extra_info["peak_MB"] = round(peak, 1)
    print(f"\n{name} coherence {shape}: {value:.6f}, peak traced memory {peak:.1f} MB")
    assert value == again
    if benchmark.disabled and name == "rflite":
        np.testing.assert_allclose(value, numpy_coherence(A), rtol=1e-12)


def bench_coherence_memory_ratio(matrices):
    """Peak memory on the smoke shape with 100-column blocks: >= 10x below NumPy's."""
    A = matrices[SMOKE]
    v1, p1 = _peak_mb(lambda a: theory.coherence(a, block_size=100), A)
    v2, p2 = _peak_mb(numpy_coherence, A)
    np.testing.assert_allclose(v1, v2, rtol=1e-12)
    assert p2 >= 10 * p1, (p1, p2)
