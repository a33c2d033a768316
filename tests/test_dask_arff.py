"""ARFF fitted on Dask arrays (issue 16): rflite._dask_arff.

The Metropolis loop runs on the client with the same random draws as in
memory; only the Gram matrices, right-hand sides, training errors and
validation scores are distributed passes.  So the chains take the same
decisions: frequencies identical, amplitudes and errors equal to rounding
(measured: 3e-15 without early stopping, 1e-11 with it).
"""

import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from rflite.metropolis import ARFFClassifier, ARFFRegressor  # noqa: E402

# the shared tolerances, `rel`, the synchronous-scheduler and LocalCluster fixtures
from test_dask import RTOL, cluster_client, rel, sync  # noqa: E402, F401


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(240, 3))
    y = np.sin(2 * X[:, 0]) * np.exp(-X[:, 1] ** 2) + 0.01 * rng.normal(size=240)
    return X, y


def _model(**kw):
    return ARFFRegressor(**{"n_features": 10, "n_iter": 12, "early_stopping": False,
                            "random_state": 0, **kw})


def _assert_same(dist, mem, X):
    np.testing.assert_array_equal(dist.frequencies_, mem.frequencies_)
    np.testing.assert_array_equal(dist.result_.acceptance, mem.result_.acceptance)
    assert rel(dist.coef_, mem.coef_) <= RTOL
    assert rel(dist.result_.train_error, mem.result_.train_error) <= RTOL
    np.testing.assert_allclose(dist.intercept_, mem.intercept_, rtol=RTOL, atol=1e-12)
    lazy = dist.predict(da.from_array(X, chunks=(70, -1)))
    np.testing.assert_allclose(lazy.compute(), mem.predict(X), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("rows,kw", [
    (60, {}), (70, {}), (240, {}),
    (70, {"adaptive_covariance": True, "lam": 0.05, "refit_every": 3}),
    (70, {"fit_intercept": False}),
], ids=["divides", "does-not-divide", "one-chunk", "adaptive", "no-intercept"])
def test_arff_on_dask_equals_in_memory(data, rows, kw, sync):
    X, y = data
    mem = _model(**kw).fit(X, y)
    dist = _model(**kw).fit(da.from_array(X, chunks=(rows, -1)), da.from_array(y, chunks=rows))
    _assert_same(dist, mem, X)
    # 1 + n_iter proposals + (n_iter + 1) training errors + the refits that moved
    assert len(dist.dask_passes_) >= 2 * 12 + 2 and dist.dask_fit_seconds_ > 0


def test_arff_on_dask_2d_y(data, sync):
    X, y = data
    Y = np.column_stack([y, np.cos(X[:, 2])])
    mem = _model().fit(X, Y)
    dist = _model().fit(da.from_array(X, chunks=(70, -1)), da.from_array(Y, chunks=(70, -1)))
    _assert_same(dist, mem, X)


def test_arff_on_a_local_cluster(data, cluster_client):
    X, y = data
    mem = _model().fit(X, y)
    with cluster_client.as_current(), dask.config.set(scheduler=cluster_client):
        dist = _model().fit(da.from_array(X, chunks=(70, -1)), da.from_array(y, chunks=70))
        _assert_same(dist, mem, X)


@pytest.mark.parametrize("kw", [{}, {"lam": 0.05}, {"adaptive_covariance": True}],
                         ids=["default", "lam", "adaptive"])
def test_arff_early_stopping_on_dask_equals_in_memory(data, kw, sync):
    """The default early stopping: the in-memory hold-out split, the chain on the
    training rows, one validation pass per refit scoring the lam grid from
    moments; on rows in the canonical order (which the in-memory fit sorts them
    into first) the same stop, lam, frequencies and amplitudes."""
    from rflite.metropolis import _canonical_order

    X, y = data
    order = _canonical_order(X, y)
    X, y = X[order], y[order]
    params = {"n_features": 10, "n_iter": 40, "random_state": 0, **kw}
    mem = ARFFRegressor(**params).fit(X, y)
    dist = ARFFRegressor(**params).fit(da.from_array(X, chunks=(70, -1)),
                                       da.from_array(y, chunks=70))
    assert (dist.n_iter_, dist.best_iteration_, dist.lam_) == \
        (mem.n_iter_, mem.best_iteration_, mem.lam_)
    np.testing.assert_array_equal(dist.frequencies_, mem.frequencies_)
    np.testing.assert_array_equal(dist.validation_iterations_, mem.validation_iterations_)
    assert rel(dist.validation_scores_, mem.validation_scores_) <= RTOL
    assert rel(dist.coef_, mem.coef_) <= RTOL
    np.testing.assert_allclose(dist.intercept_, mem.intercept_, rtol=RTOL)


@pytest.mark.parametrize("kw,name", [
    ({"method": "fixed"}, "method"),
    ({"activation": "sigmoid"}, "activation"),
])
def test_arff_settings_not_on_dask_are_refused_by_name(data, kw, name, sync):
    X, y = data
    Xd, yd = da.from_array(X, chunks=(70, -1)), da.from_array(y, chunks=70)
    with pytest.raises(ValueError, match=name):
        _model(**kw).fit(Xd, yd)
    with pytest.raises(ValueError, match="sample_weight"):
        _model().fit(Xd, yd, sample_weight=np.ones(240))
    with pytest.raises(ValueError, match="X is a Dask array .*ARFFClassifier fits in memory"):
        ARFFClassifier(4, n_iter=2).fit(Xd, (y > 0).astype(int))


def test_arff_nan_in_a_chunk_is_named(data, sync):
    X, y = data
    X = X.copy()
    X[150, 1] = np.nan
    with pytest.raises(ValueError, match="^X contains NaN"):
        _model().fit(da.from_array(X, chunks=(70, -1)), da.from_array(y, chunks=70))
