"""RandomFeatures.transform against scikit-learn's RBFSampler.transform.

One group, ``transformer-m2000-N20000-d100`` (Gaussian kernel, inputs uniform
on [-1, 1]^100, ``gamma = 0.02`` so the kernel values are near 0.26):

- ``rflite-dense``: ``RandomFeatures()`` (q=None): BLAS pre-activation, fused
  sincos, scaling;
- ``rflite-orthogonal``: the same with orthogonal weights (same cost);
- ``rflite-q10`` / ``rflite-q2``: q-sparse weights (gather kernel, no BLAS);
  these approximate the subset-averaged kernel, not the full Gaussian one;
- ``rbfsampler-1blas``: ``RBFSampler.transform`` at one BLAS thread
  (threadpoolctl), the baseline;
- ``write-floor``: ``np.empty((2000, 20000)).fill(1.0)``, the cost of writing
  the output once;
- ``product-floor``: ``X @ W.T`` alone on every BLAS thread, the dense map's
  floor (the product writes the fresh output; the cosines come on top).

Ratios are read from one ``--benchmark-enable`` run (the machine is shared).
The approximation error (mean |z(x)^T z(y) - k(x, y)| over pairs of the first
300 rows, averaged over 6 seeds) is checked once per run: within 10 % of
RBFSampler's for the dense map, lower for the orthogonal one; it is stored in
``extra_info``.
"""

import numpy as np
import pytest

from rflite.features import RandomFeatures

sklearn = pytest.importorskip("sklearn")
threadpoolctl = pytest.importorskip("threadpoolctl")
from sklearn.kernel_approximation import RBFSampler  # noqa: E402

M, N, D = 2000, 20000, 100
GAMMA = 0.02
GROUP = f"transformer-m{M}-N{N}-d{D}"
ERR_ROWS, ERR_SEEDS = 300, 6


@pytest.fixture(scope="module")
def X():
    # compile rflite._features.orf's kernels (not in rflite.warmup) outside the timings
    for q in (None, 1):
        RandomFeatures(n_components=4, q=q, random_state=0).fit_transform(np.zeros((2, 5)))
    return np.random.default_rng(0).uniform(-1.0, 1.0, (M, D))


def _error(make, X):
    """Mean kernel error over the pairs of the first ERR_ROWS rows, averaged over seeds."""
    Xs = X[:ERR_ROWS]
    K = np.exp(-GAMMA * ((Xs[:, None] - Xs[None]) ** 2).sum(-1))
    iu = np.triu_indices(ERR_ROWS, 1)
    errs = []
    for seed in range(ERR_SEEDS):
        Z = make(seed).fit(X).transform(Xs)
        errs.append(np.abs((Z @ Z.T - K)[iu]).mean())
    return float(np.mean(errs))


@pytest.fixture(scope="module")
def errors(X):
    with threadpoolctl.threadpool_limits(1):
        sk = _error(lambda s: RBFSampler(n_components=N, gamma=GAMMA, random_state=s), X)
    ours = _error(lambda s: RandomFeatures(n_components=N, gamma=GAMMA, random_state=s), X)
    orth = _error(lambda s: RandomFeatures(n_components=N, gamma=GAMMA, orthogonal=True,
                                           random_state=s), X)
    return {"rbfsampler": sk, "dense": ours, "orthogonal": orth}


@pytest.mark.parametrize("params", [
    {}, {"orthogonal": True}, {"q": 10}, {"q": 2},
], ids=["rflite-dense", "rflite-orthogonal", "rflite-q10", "rflite-q2"])
def bench_rflite(benchmark, X, errors, params):
    benchmark.group = GROUP
    rf = RandomFeatures(n_components=N, gamma=GAMMA, random_state=0, **params).fit(X)
    benchmark.extra_info.update(errors)
    Z = benchmark(rf.transform, X)
    assert Z.shape == (M, N)
    if not params:
        assert abs(errors["dense"] / errors["rbfsampler"] - 1) < 0.10, errors
    if params.get("orthogonal"):
        assert errors["orthogonal"] < errors["dense"], errors


def bench_rbfsampler_one_blas_thread(benchmark, X, errors):
    benchmark.group = GROUP
    sk = RBFSampler(n_components=N, gamma=GAMMA, random_state=0).fit(X)
    benchmark.extra_info.update(errors)
    with threadpoolctl.threadpool_limits(1):
        Z = benchmark(sk.transform, X)
    assert Z.shape == (M, N)


def bench_write_floor(benchmark):
    benchmark.group = GROUP
    benchmark(lambda: np.empty((M, N)).fill(1.0))


def bench_product_floor(benchmark, X):
    """``X @ W.T`` alone with every BLAS thread: what any float64 dense map pays
    before its first cosine (the product also writes the fresh output)."""
    benchmark.group = GROUP
    W = RandomFeatures(n_components=N, gamma=GAMMA, random_state=0).fit(X) \
        .feature_map_.dense_weights()
    Z = benchmark(np.matmul, X, W.T)
    assert Z.shape == (M, N)
