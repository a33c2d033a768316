"""The shared model shape (rflite._base) through the plain ridge baseline."""

import numpy as np
import pytest

from rflite._base import NotFittedError
from rflite.datasets import make_friedman1
from rflite.ridge import RandomFeatureRidge


@pytest.fixture(scope="module")
def data():
    X, y = make_friedman1(150, d=8, noise=0.1, rng=0)
    X_test, y_test = make_friedman1(60, d=8, rng=1)
    return X, y, X_test, y_test


def test_params_follow_sklearn_conventions():
    model = RandomFeatureRidge(50, lam=0.1, q=2)
    params = model.get_params()
    assert params["n_features"] == 50 and params["lam"] == 0.1 and params["q"] == 2
    assert model.set_params(lam=0.5) is model and model.lam == 0.5
    with pytest.raises(ValueError, match="invalid parameter 'alpha'"):
        model.set_params(alpha=1.0)
    assert "RandomFeatureRidge(" in repr(model)
    assert not hasattr(model, "coef_")  # constructor stores parameters only


def test_fit_predict_score(data):
    X, y, X_test, y_test = data
    model = RandomFeatureRidge(300, lam=1e-4, q=2, random_state=0)
    assert model.fit(X, y) is model
    pred = model.predict(X_test)
    full = model.feature_map_.transform(X_test) @ model.dense_coef() + model.intercept_
    np.testing.assert_allclose(pred, full, rtol=1e-12, atol=1e-12)
    assert model.score(X_test, y_test) > 0.8
    assert model.n_nonzero_ == 300 and model.sparsity_ == 1.0
    assert model.n_features_in_ == 8
    u = model.variable_importance()
    assert u.shape == (8,) and u.sum() == pytest.approx(1.0)


def test_same_seed_same_model(data):
    X, y, X_test, _ = data
    a = RandomFeatureRidge(100, q=2, random_state=3).fit(X, y).predict(X_test)
    b = RandomFeatureRidge(100, q=2, random_state=3).fit(X, y).predict(X_test)
    c = RandomFeatureRidge(100, q=2, random_state=4).fit(X, y).predict(X_test)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_complex_exp_features_predict_real(data):
    X, y, X_test, y_test = data
    model = RandomFeatureRidge(200, lam=1e-4, activation="exp", random_state=0).fit(X, y)
    pred = model.predict(X_test)
    assert pred.dtype == np.float64 and model.score(X_test, y_test) > 0.5


def test_not_fitted_and_bad_input(data):
    X, y, *_ = data
    with pytest.raises(NotFittedError, match="fit"):
        RandomFeatureRidge(10).predict(X)
    with pytest.raises(ValueError, match="lam"):
        RandomFeatureRidge(10, lam=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="n_features"):
        RandomFeatureRidge(0).fit(X, y)
    with pytest.raises(ValueError, match="q"):
        RandomFeatureRidge(10, q=0).fit(X, y)
    with pytest.raises(ValueError, match="same number of rows"):
        RandomFeatureRidge(10).fit(X, y[:-1])
    model = RandomFeatureRidge(10, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="X must have 8 columns"):
        model.predict(X[:, :3])
    # beyond float64, and a penalty m * lam that overflows: ValueError naming lam
    with pytest.raises(ValueError, match="lam must be finite"):
        RandomFeatureRidge(10, lam=10**400).fit(X, y)
    with pytest.raises(ValueError, match=r"lam=1e\+307 overflows"):
        RandomFeatureRidge(10, lam=1e307).fit(X, y)


@pytest.mark.slow(reason="fits every estimator once per random-state form")
def test_every_sklearn_random_state_form(data):
    X, y, X_test, _ = data
    a = RandomFeatureRidge(50, q=2, random_state=np.random.RandomState(7)).fit(X, y)
    b = RandomFeatureRidge(50, q=2, random_state=np.random.RandomState(7)).fit(X, y)
    np.testing.assert_array_equal(a.predict(X_test), b.predict(X_test))
    for state in (2**63, 2**64 + 1, np.uint64(2**63 + 5), np.random.SeedSequence(3),
                  np.random.default_rng(3), None):
        RandomFeatureRidge(20, random_state=state).fit(X, y)
    with pytest.raises(ValueError, match="non-negative"):
        RandomFeatureRidge(20, random_state=-1).fit(X, y)


# ------------------------------------------------------ scikit-learn compatibility
sklearn = pytest.importorskip("sklearn")


@pytest.mark.slow(reason="scikit-learn check_estimator suite")
def test_passes_sklearn_estimator_checks():
    from sklearn.utils.estimator_checks import check_estimator

    results = check_estimator(RandomFeatureRidge(random_state=0), on_fail=None)
    bad = [(r["check_name"], repr(r["exception"])) for r in results if r["status"] == "failed"]
    assert bad == []


def test_works_in_pipeline_and_grid_search(data):
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y, X_test, y_test = data
    pipe = make_pipeline(StandardScaler(), RandomFeatureRidge(200, q=2, random_state=0))
    search = GridSearchCV(pipe, {"randomfeatureridge__lam": [1e-5, 1e-2]}, cv=3).fit(X, y)
    assert search.best_params_["randomfeatureridge__lam"] in (1e-5, 1e-2)
    assert search.score(X_test, y_test) > 0.7


def test_column_vector_y_is_a_one_output_fit(data):
    # scikit-learn's multi-output regressors: y of shape (m, 1) fits one
    # output and predicts (n, 1), the same numbers as the 1-d fit
    X, y, X_test, _ = data
    a = RandomFeatureRidge(20, random_state=0).fit(X, y[:, None]).predict(X_test)
    b = RandomFeatureRidge(20, random_state=0).fit(X, y).predict(X_test)
    assert a.shape == (X_test.shape[0], 1) and b.shape == (X_test.shape[0],)
    np.testing.assert_allclose(a[:, 0], b, rtol=1e-12)
