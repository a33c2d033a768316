"""ARFF fitted on Dask arrays: rflite._dask.arff.

The Metropolis loop runs on the client with the same random draws as in
memory; only the Gram matrices, right-hand sides, training errors and
validation scores are distributed passes.  So the chains take the same
decisions: frequencies identical, amplitudes and errors equal to rounding
(about 1e-15 without early stopping, 1e-11 with it).
"""

import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from rflite.metropolis import ARFFClassifier, ARFFRegressor  # noqa: E402

# the shared tolerances, `rel`, the synchronous-scheduler and LocalCluster fixtures
from test_dask import RTOL, rel, sync  # noqa: E402, F401


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


@pytest.mark.slow(reason="starts or uses a LocalCluster")
def test_arff_on_a_local_cluster(data, cluster_client):
    X, y = data
    mem = _model().fit(X, y)
    with cluster_client.as_current(), dask.config.set(scheduler=cluster_client):
        dist = _model().fit(da.from_array(X, chunks=(70, -1)), da.from_array(y, chunks=70))
        _assert_same(dist, mem, X)


@pytest.mark.parametrize("kw", [{}, {"lam": 0.05}, {"adaptive_covariance": True}],
                         ids=["default", "lam", "adaptive"])
@pytest.mark.slow(reason="ARFF fits on Dask and in memory, several seconds each")
def test_arff_early_stopping_on_dask_equals_in_memory(data, kw, sync):
    """The default early stopping: the in-memory hold-out split, the chain on the
    training rows, one validation pass per refit scoring the lam grid from
    moments; the Dask fit sorts the rows into the in-memory fit's canonical
    order first, so on shuffled rows it makes the same stop, lam, frequencies
    and amplitudes."""
    X, y = data
    perm = np.random.default_rng(5).permutation(X.shape[0])
    params = {"n_features": 10, "n_iter": 40, "random_state": 0, **kw}
    # 240 rows, 24 held out: both fits also cross-validate against the mean
    mem = ARFFRegressor(**params).fit(X, y)
    dist = ARFFRegressor(**params).fit(da.from_array(X[perm], chunks=(70, -1)),
                                       da.from_array(y[perm], chunks=70))
    assert dist.mean_model_ is mem.mean_model_
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
    with pytest.raises(ValueError, match="sample_weight"):
        ARFFClassifier(4, n_iter=2).fit(Xd, da.from_array((y > 0).astype(int), chunks=70),
                                        sample_weight=np.ones(240))


def test_arff_nan_in_a_chunk_is_named(data, sync):
    X, y = data
    X = X.copy()
    X[150, 1] = np.nan
    with pytest.raises(ValueError, match="^X contains NaN"):
        _model().fit(da.from_array(X, chunks=(70, -1)), da.from_array(y, chunks=70))


# ---------------------------------------------------------------- classifier
@pytest.fixture(scope="module")
def labelled(data):
    X, y = data
    labels = (y > 0).astype(np.int64) + (X[:, 2] > 1)  # three classes, 0 1 2
    return X, labels


def _assert_same_classifier(dist, mem, X):
    np.testing.assert_array_equal(dist.classes_, mem.classes_)
    assert dist.classes_.dtype == mem.classes_.dtype
    np.testing.assert_array_equal(dist.frequencies_, mem.frequencies_)
    assert (dist.n_iter_, dist.best_iteration_, dist.lam_) == \
        (mem.n_iter_, mem.best_iteration_, mem.lam_)
    assert rel(dist.coef_, mem.coef_) <= RTOL
    Xd = da.from_array(X, chunks=(70, -1))
    lazy = dist.predict(Xd)
    assert isinstance(lazy, da.Array)
    np.testing.assert_array_equal(lazy.compute(), mem.predict(X))
    np.testing.assert_allclose(dist.decision_function(Xd).compute(), mem.decision_function(X),
                               rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("rows", [60, 70, 240], ids=["divides", "does-not-divide", "one-chunk"])
def test_arff_classifier_on_dask_equals_in_memory(labelled, rows, sync):
    """One-hot targets built lazily from the labels, the regressor's chain: the
    same frequencies, acceptances and amplitudes (to rounding) as in memory."""
    X, labels = labelled
    params = {"n_features": 10, "n_iter": 12, "early_stopping": False, "random_state": 0}
    mem = ARFFClassifier(**params).fit(X, labels)
    dist = ARFFClassifier(**params).fit(da.from_array(X, chunks=(rows, -1)),
                                        da.from_array(labels, chunks=rows))
    _assert_same_classifier(dist, mem, X)
    np.testing.assert_array_equal(dist.result_.acceptance, mem.result_.acceptance)
    assert dist.score(da.from_array(X, chunks=(rows, -1)), da.from_array(labels, chunks=rows)) \
        == mem.score(X, labels)


def test_arff_classifier_early_stopping_on_dask_equals_in_memory(labelled, sync):
    """The default early stopping on shuffled rows: the Dask fit sorts them into the
    in-memory canonical order first."""
    X, labels = labelled
    perm = np.random.default_rng(5).permutation(X.shape[0])
    mem = ARFFClassifier(n_features=10, n_iter=30, random_state=0).fit(X, labels)
    dist = ARFFClassifier(n_features=10, n_iter=30, random_state=0).fit(
        da.from_array(X[perm], chunks=(70, -1)), da.from_array(labels[perm], chunks=70))
    _assert_same_classifier(dist, mem, X)
    np.testing.assert_array_equal(dist.validation_iterations_, mem.validation_iterations_)
    assert rel(dist.validation_scores_, mem.validation_scores_) <= RTOL


@pytest.mark.slow(reason="starts or uses a LocalCluster")
def test_arff_classifier_on_a_local_cluster(labelled, cluster_client):
    X, labels = labelled
    params = {"n_features": 10, "n_iter": 12, "early_stopping": False, "random_state": 0}
    mem = ARFFClassifier(**params).fit(X, labels)
    with cluster_client.as_current(), dask.config.set(scheduler=cluster_client):
        dist = ARFFClassifier(**params).fit(da.from_array(X, chunks=(70, -1)),
                                            da.from_array(labels, chunks=70))
        _assert_same_classifier(dist, mem, X)


@pytest.mark.parametrize("bad,match", [
    ("nan", "^y contains NaN"), ("continuous", "^Unknown label type"),
    ("one-class", "at least 2 classes"), ("2-columns", "^y must be 1-d"),
])
def test_arff_classifier_bad_labels_on_dask_are_named(labelled, bad, match, sync):
    X, labels = labelled
    y = labels.astype(np.float64)
    if bad == "nan":
        y[100] = np.nan
    elif bad == "continuous":
        y[100] = 0.5
    elif bad == "one-class":
        y[:] = 1.0
    else:
        y = np.column_stack([y, y])
    yd = da.from_array(y, chunks=(70,) + y.shape[1:])
    with pytest.raises(ValueError, match=match):
        ARFFClassifier(4, n_iter=2).fit(da.from_array(X, chunks=(70, -1)), yd)


def test_arff_classifier_column_vector_labels_on_dask_warn(labelled, sync):
    """A column-vector y warns and is flattened, as in memory."""
    from rflite._core.validation import DataConversionWarning

    X, labels = labelled
    Xd = da.from_array(X, chunks=(70, -1))
    with pytest.warns(DataConversionWarning, match="column-vector"):
        model = ARFFClassifier(4, n_iter=2, early_stopping=False, random_state=0).fit(
            Xd, da.from_array(labels[:, None], chunks=(70, 1)))
    np.testing.assert_array_equal(model.classes_, [0, 1, 2])
