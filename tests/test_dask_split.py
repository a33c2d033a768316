"""Hold-out splits of tall Dask arrays without an m-long array on the client.

Past ``CLIENT_SPLIT_MAX_ROWS`` rows, SHRIMP's validation split and ARFF's
early-stopping split come from a keyed bijection of the row indices
(rflite._dask.split.FeistelPermutation) evaluated chunk by chunk.  The tests
lower the threshold to 0 so that small data take that route, and check it
against the in-memory fits given the same shuffle.
"""

import pickle

import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from rflite._dask import split as _dask_split
from rflite._dask.split import (FeistelPermutation, holdout_rows, take_rows,  # noqa: E402
                                validation_mask, weighted_prefix)
from rflite.datasets import make_friedman1  # noqa: E402

from test_dask import RTOL, rel, sorted_rows, sync, to_dask  # noqa: E402, F401


@pytest.fixture
def tall(monkeypatch):
    """Every Dask split takes the chunk-by-chunk route."""
    monkeypatch.setattr(_dask_split, "CLIENT_SPLIT_MAX_ROWS", 0)


class _FeistelOrder:
    """A Generator stand-in whose ``permutation(n)`` is the order of a FeistelPermutation
    keyed from the wrapped Generator: position k holds the row i with pi(i) = k."""

    def __init__(self, rng):
        self.rng = rng

    def permutation(self, n):
        return np.argsort(FeistelPermutation(n, self.rng)(np.arange(n)))

    def __getattr__(self, name):
        return getattr(self.rng, name)


@pytest.mark.parametrize("m", [2, 3, 5, 64, 65, 1000, 4099])
def test_feistel_is_a_permutation_and_depends_on_the_keys(m):
    a = FeistelPermutation(m, np.random.default_rng(0))(np.arange(m))
    np.testing.assert_array_equal(np.sort(a), np.arange(m))
    again = FeistelPermutation(m, np.random.default_rng(0))
    np.testing.assert_array_equal(again(np.arange(m)[::-1]), a[::-1])  # any index order
    if m >= 64:
        b = FeistelPermutation(m, np.random.default_rng(1))(np.arange(m))
        assert np.mean(a == b) < 0.1


def test_feistel_prefix_is_spread_over_the_rows():
    """The first 10 % of the shuffled order falls evenly on the ten row deciles
    (chi-square with 9 degrees of freedom below its 0.999 quantile, 27.9)."""
    m = 100_000
    pos = FeistelPermutation(m, np.random.default_rng(3))(np.arange(m))
    counts = np.bincount(np.flatnonzero(pos < m // 10) // (m // 10), minlength=10)
    assert np.sum((counts - 1000.0) ** 2 / 1000.0) < 27.9


@pytest.mark.parametrize("m,n_bins", [(37, 4), (1000, 8), (1000, 1 << 16), (5003, 16)])
@pytest.mark.parametrize("zeros", [False, True])
def test_weighted_prefix_is_the_closest_prefix(sync, m, n_bins, zeros):
    """The histogram refinement finds a k whose prefix weight is as close to frac of
    the total as the brute-force cumulative sum's (several passes when n_bins < m)."""
    rng = np.random.default_rng(m)
    w = rng.exponential(size=m) * ((rng.random(m) < 0.6) if zeros else 1.0)
    perm = FeistelPermutation(m, rng)
    for frac in (0.1, 0.37):
        n_val = weighted_prefix(da.from_array(w.reshape(-1, 1), chunks=(m // 3 + 1, 1)),
                                perm, frac, n_bins=n_bins)
        cum = np.cumsum(w[np.argsort(perm(np.arange(m)))])
        dist = np.abs(cum[:-1] - frac * cum[-1])
        assert 1 <= n_val <= m - 1
        assert dist[n_val - 1] <= dist.min() + 1e-12 * cum[-1]
        if not zeros:
            assert n_val == int(np.argmin(dist)) + 1


def test_split_graph_holds_no_row_array(sync, tall):
    """The masks' graphs hold a few keys per chunk task, not m numbers (the client
    route embeds an m-byte mask and draws an 8 m-byte permutation)."""
    m = 50_000
    chunks = (7_000,) * 7 + (1_000,)
    mask = validation_mask(chunks, FeistelPermutation(m, np.random.default_rng(0)), 5_000)
    assert len(pickle.dumps(dict(mask.__dask_graph__()))) < m / 4
    assert int(mask.sum().compute()) == 5_000
    train, val = holdout_rows(chunks, m, 0.1, np.random.default_rng(0))
    assert (train.size, val.size) == (45_000, 5_000)
    assert len(pickle.dumps(dict(val.mask.__dask_graph__()))) < m / 4


def test_take_rows_keeps_order_and_known_chunks(sync, tall):
    m = 230
    X = np.arange(2.0 * m).reshape(m, 2)
    Xd = da.from_array(X, chunks=(60, 2))
    train, val = holdout_rows(Xd.chunks[0], m, 0.25, np.random.default_rng(4))
    is_val = val.mask.compute()[:, 0]
    for rows, sel in ((train, ~is_val), (val, is_val)):
        part = take_rows(Xd, rows)
        assert not any(np.isnan(c) for c in part.chunks[0])
        np.testing.assert_array_equal(part.compute(), X[sel])
        np.testing.assert_array_equal(take_rows(Xd[:, 0], rows).compute(), X[sel, 0])
    assert val.size == round(0.25 * m) == is_val.sum()


@pytest.mark.parametrize("weighted", [False, True])
def test_tall_shrimp_equals_in_memory_with_the_same_shuffle(sync, tall, monkeypatch, weighted):
    """Past the threshold the Dask SHRIMP fit is the in-memory fit whose split
    shuffles by the same keyed bijection (the rows distinct and sorted, so the
    in-memory distinct rows are the rows), for every chunking; the index
    attributes are lazy."""
    import rflite.imp as imp
    from rflite.imp import SHRIMPRegressor

    X, y = sorted_rows(*make_friedman1(400, d=6, noise=0.1, rng=0))
    w = np.random.default_rng(1).uniform(0.5, 2.0, size=400) if weighted else None
    split = imp._distinct_row_split
    monkeypatch.setattr(imp, "_distinct_row_split",
                        lambda X, Y, w, frac, rng: split(X, Y, w, frac, _FeistelOrder(rng)))
    # refit="min_norm": the guarded ridge's power iterations start from another
    # vector on Dask (penalties equal to about 1e-3, see fit_shrimp)
    kw = dict(n_features=30, q=2, subsets="random", refit="min_norm", random_state=0)
    ref = SHRIMPRegressor(**kw).fit(X, y, sample_weight=w)
    for rows in (60, 70, 400):
        Xd, yd = to_dask(X, y, rows)
        est = SHRIMPRegressor(**kw).fit(Xd, yd, sample_weight=w)
        assert isinstance(est.validation_indices_, da.Array)
        np.testing.assert_array_equal(est.validation_indices_.compute(), ref.validation_indices_)
        np.testing.assert_array_equal(est.train_indices_.compute(), ref.train_indices_)
        assert est.best_step_ == ref.best_step_
        np.testing.assert_array_equal(est.support_, ref.support_)
        assert rel(est.coef_, ref.coef_) < 1e-9
        np.testing.assert_allclose(est.path_.val_mse, ref.path_.val_mse, rtol=1e-9)


def test_tall_arff_equals_in_memory_with_the_same_shuffle(sync, tall, monkeypatch):
    """ARFF's early stopping on the chunk-by-chunk split: the in-memory fit whose
    hold-out split shuffles by the same keyed bijection, for every chunking (rows
    in the canonical order, as in test_dask_arff)."""
    from rflite.metropolis import ARFFRegressor, _canonical_order

    rng = np.random.default_rng(0)
    X = rng.normal(size=(240, 3))
    y = np.sin(2 * X[:, 0]) * np.exp(-X[:, 1] ** 2) + 0.01 * rng.normal(size=240)
    order = _canonical_order(X, y)  # the in-memory fit sorts its rows so first
    X, y = X[order], y[order]
    setup = ARFFRegressor._early_setup

    def feistel_setup(self, shape, rng, split=None):
        def split_(n, frac, rng):
            return holdout_rows((n,), n, frac, rng)
        if split is not None:  # the Dask fit: its own split
            return setup(self, shape, rng, split=split)
        train, val, *rest = setup(self, shape, rng, split=split_)
        is_val = val.mask.compute()[:, 0]
        return (np.flatnonzero(~is_val), np.flatnonzero(is_val), *rest)

    monkeypatch.setattr(ARFFRegressor, "_early_setup", feistel_setup)
    kw = dict(n_features=10, n_iter=15, random_state=0)
    ref = ARFFRegressor(**kw)
    # compare the early-stopped fits themselves, without the nested check against
    # the mean that both make on so few rows (its folds are not Feistel's)
    ref._skip_mean_check = True
    ref.fit(X, y)
    for rows in (70, 240):
        est = ARFFRegressor(**kw)
        est._skip_mean_check = True
        est.fit(da.from_array(X, chunks=(rows, -1)), da.from_array(y, chunks=rows))
        np.testing.assert_array_equal(est.frequencies_, ref.frequencies_)
        assert (est.n_iter_, est.best_iteration_, est.lam_) == \
            (ref.n_iter_, ref.best_iteration_, ref.lam_)
        assert rel(est.coef_, ref.coef_) <= RTOL
        np.testing.assert_allclose(est.validation_scores_, ref.validation_scores_, rtol=1e-9)


@pytest.mark.slow(reason="starts or uses a LocalCluster")
def test_tall_split_on_a_cluster_equals_the_synchronous_fit(cluster_client, tall):
    """The keyed bijection travels to worker processes (they never see the lowered
    threshold: the client decides the route) and gives the synchronous fit."""
    from rflite.imp import SHRIMPRegressor

    X, y = make_friedman1(300, d=5, noise=0.1, rng=2)
    kw = dict(n_features=24, q=2, subsets="random", refit="min_norm", random_state=0)
    with dask.config.set(scheduler="synchronous"):
        ref = SHRIMPRegressor(**kw).fit(*to_dask(X, y, 80))
    with cluster_client.as_current(), dask.config.set(scheduler=cluster_client):
        est = SHRIMPRegressor(**kw).fit(*to_dask(X, y, 80))
        np.testing.assert_array_equal(est.validation_indices_.compute(),
                                      ref.validation_indices_.compute())
    np.testing.assert_array_equal(est.support_, ref.support_)
    assert rel(est.coef_, ref.coef_) < 1e-12


@pytest.mark.parametrize("rows", [7, 70, 300])
def test_canonical_rows_are_the_in_memory_order(sync, rows):
    """canonical_rows: the order of rflite._core.folds._canonical_order and the groups
    of np.unique over [X, y], whatever the chunking, with copies across chunks, a
    -0.0 equal to 0.0, and rows of zero weight left out (group -1)."""
    from rflite._core.folds import _canonical_order
    from rflite._dask.split import canonical_rows, reorder_rows

    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(300, 3)).astype(float)
    y = rng.integers(0, 2, size=(300, 1)).astype(float)
    X[5, 0], X[6] = -0.0, X[200]
    y[6] = y[200]
    Xd, yd = da.from_array(X, chunks=(rows, -1)), da.from_array(y, chunks=(rows, -1))
    canon = canonical_rows(Xd, yd)
    np.testing.assert_array_equal(canon.order, _canonical_order(X, y))
    _, inverse = np.unique(np.hstack([X, y]), axis=0, return_inverse=True)
    np.testing.assert_array_equal(canon.groups, np.asarray(inverse).ravel())
    np.testing.assert_array_equal(reorder_rows(Xd, canon.order).compute(), X[canon.order])
    w = rng.integers(0, 2, size=300).astype(float)
    weighted = canonical_rows(Xd, yd, da.from_array(w.reshape(-1, 1), chunks=(rows, -1)))
    keep = w > 0
    _, inverse = np.unique(np.hstack([X, y])[keep], axis=0, return_inverse=True)
    np.testing.assert_array_equal(weighted.groups[keep], np.asarray(inverse).ravel())
    assert (weighted.groups[~keep] == -1).all()


def test_canonical_rows_past_the_size_limit_is_none(sync, monkeypatch):
    from rflite._dask.split import canonical_rows

    X = np.zeros((100, 4))
    monkeypatch.setattr(_dask_split, "CANONICAL_MAX_BYTES", 100 * 5 * 8 - 1)
    assert canonical_rows(da.from_array(X, chunks=(30, -1)),
                          da.from_array(np.zeros((100, 1)), chunks=(30, -1))) is None
