"""Inputs refused with an error that names the parameter, or accepted and used as
documented: explicit folds, n_jobs, select_shrimp's validation_fraction, a Dask
X or y holding NaN, and GFC with a live executor."""

import copy
import pickle
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from rflite.greedy import GFCRegressor
from rflite.imp import select_shrimp
from rflite.ridge import RandomFeatureRidgeCV


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (30, 3))
    return X, np.sin(2 * X[:, 0]) + X[:, 1]


def _ridge(cv, **kw):
    return RandomFeatureRidgeCV(n_features=20, scales=[1.0], cv=cv, random_state=0, **kw)


@pytest.mark.parametrize("folds,match", [
    ([(np.arange(20.0), np.arange(20.0, 30.0))], "integer row indices, got dtype float64"),
    ([(np.array(["0", "1"]), np.array(["2"]))], "integer row indices, got dtype <U1"),
    ([(np.arange(20), np.arange(20, 30), np.arange(3))], r"must be a \(train, test\) pair"),
    ([(np.ones(5, dtype=bool), np.zeros(5, dtype=bool))], "mask must have 30 entries"),
], ids=["float", "str", "triple", "short-mask"])
def test_explicit_folds_are_checked_by_name(data, folds, match):
    with pytest.raises(ValueError, match="^cv: fold 0") as info:
        _ridge(folds).fit(*data)
    assert info.match(match)


def test_explicit_folds_as_masks_and_integers_are_used(data):
    X, y = data
    tr = np.arange(30) < 20
    a = _ridge([(tr, ~tr)]).fit(X, y)
    b = _ridge([(np.flatnonzero(tr), np.flatnonzero(~tr))]).fit(X, y)
    assert a.lam_ == b.lam_


@pytest.mark.parametrize("n_jobs", [0, -2, True])
def test_n_jobs_errors_name_n_jobs(data, n_jobs):
    with pytest.raises(ValueError, match="^n_jobs must be"):
        _ridge(3, n_jobs=n_jobs).fit(*data)


@pytest.mark.parametrize("fraction", [float("nan"), 0.0, 1.0, -0.5])
def test_select_shrimp_checks_validation_fraction_when_unused(data, fraction):
    with pytest.raises(ValueError, match="validation_fraction"):
        select_shrimp(*data, qs=(1,), n_features=10, cv=3, validation_fraction=fraction)


@pytest.mark.parametrize("where", ["X", "y"])
def test_shrimpcv_on_dask_names_the_input_with_nan(data, where):
    da = pytest.importorskip("dask.array")
    dask = pytest.importorskip("dask")
    from rflite.imp import SHRIMPCV

    X, y = data[0].copy(), data[1].copy()
    if where == "X":
        X[5, 1] = np.nan
    else:
        y[3] = np.inf
    with dask.config.set(scheduler="synchronous"):
        with pytest.raises(ValueError, match=f"^{where} contains NaN"):
            SHRIMPCV(n_features=10, cv=3, random_state=0).fit(
                da.from_array(X, chunks=(10, -1)), da.from_array(y, chunks=10))


def test_gfc_with_a_live_executor_clones_copies_and_pickles(data):
    """The executor is not part of the model's state: clone and deepcopy share
    it, pickle leaves it out; the fitted model survives both."""
    X, y = data
    kw = dict(n_estimators=1, max_steps=2, n_workers=2, random_state=0)
    with ThreadPoolExecutor(2) as pool:
        est = GFCRegressor(executor=pool, **kw).fit(X, y)
        deep = copy.deepcopy(est)
        assert deep.executor is pool
        np.testing.assert_array_equal(deep.predict(X), est.predict(X))
        back = pickle.loads(pickle.dumps(est))
        assert back.executor is None
        np.testing.assert_array_equal(back.predict(X), est.predict(X))
        sklearn_base = pytest.importorskip("sklearn.base")
        fresh = sklearn_base.clone(est)
        assert fresh.executor is pool and not hasattr(fresh, "weights_")
        assert fresh.get_params()["max_steps"] == 2


def test_srfe_matrix_free_must_be_a_bool(data):
    from rflite.bp import SRFERegressor

    with pytest.raises(ValueError, match="^matrix_free must be a bool"):
        SRFERegressor(n_features=20, eta=0.1, matrix_free="False").fit(*data)
