"""Estimator conventions: each test guards against one of these failure modes.

- ``score``: shapes checked (an (n, 1) ``y`` against 1-d predictions broadcast
  to (n, n) in ARFF; the base class reshaped any same-size ``y``), a
  ``sample_weight`` argument, scikit-learn's values for constant ``y`` and
  one row;
- SHRIMP on targets with a large offset (one-pass centring left an offset of
  ~u|c| that the minimum-norm solves fitted);
- SHRIMPRegressor's ``q="auto"`` kept ``feature_names_in_`` of an earlier fit;
- SHRIMPCV: a sparse ``X`` failed inside SciPy; ``cv=None`` was K-fold over
  row positions, so integer weights did not equal repeated rows;
- ``lam = 0`` in a ridge CV grid scored ``inf`` with a divide-by-zero warning;
- integer ``sample_weight`` too large to repeat failed inside NumPy; ARFF's
  ``scale`` was not checked with ``method="metropolis"``.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from rflite._core.metrics import UndefinedMetricWarning, r2_score
from rflite._core.linalg import shifted_eigenvalues
from rflite.imp import SHRIMPCV, SHRIMPRegressor
from rflite.metropolis import ARFFRegressor
from rflite.ridge import RandomFeatureRidge, RandomFeatureRidgeCV


def _data(m=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (m, 4))
    y = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(m)
    return X, y


def _r2_reference(y, pred, w):
    """R^2 from its definition, one output."""
    w = np.broadcast_to(np.asarray(w, dtype=float), y.shape)
    mean = np.sum(w * y) / np.sum(w)
    return 1.0 - np.sum(w * (y - pred) ** 2) / np.sum(w * (y - mean) ** 2)


# ------------------------------------------------------------------ score
def test_r2_score_matches_its_definition_weighted_and_per_output():
    rng = np.random.default_rng(1)
    Y, P, w = rng.normal(size=(50, 3)), rng.normal(size=(50, 3)), rng.uniform(0, 2, 50)
    expected = np.mean([_r2_reference(Y[:, k], P[:, k], w) for k in range(3)])
    np.testing.assert_allclose(r2_score(Y, P, w), expected, rtol=1e-13)
    np.testing.assert_allclose(r2_score(Y[:, 0], P[:, :1]), _r2_reference(Y[:, 0], P[:, 0], 1.0),
                               rtol=1e-13)


def test_r2_score_agrees_with_scikit_learn():
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(2)
    Y, P, w = rng.normal(size=(40, 2)), rng.normal(size=(40, 2)), rng.uniform(0, 2, 40)
    for args in ((Y, P), (Y[:, 0], P[:, 0]), (Y[:, :1], P[:, 0])):
        assert r2_score(*args) == pytest.approx(metrics.r2_score(*args), rel=1e-12)
    assert r2_score(Y, P, w) == pytest.approx(metrics.r2_score(Y, P, sample_weight=w), rel=1e-12)
    const = np.full(10, 3.0)
    assert r2_score(const, const) == metrics.r2_score(const, const) == 1.0
    assert r2_score(const, const + 1) == metrics.r2_score(const, const + 1) == 0.0


def test_r2_score_refuses_mismatched_shapes_and_warns_on_one_row():
    Y = np.zeros((6, 2))
    with pytest.raises(ValueError, match="2 rows but the predictions have 6"):
        r2_score(Y.T, Y)
    with pytest.raises(ValueError, match="1 outputs but the predictions have 2"):
        r2_score(Y[:, 0], Y)
    with pytest.warns(UndefinedMetricWarning, match="less than two samples"):
        assert np.isnan(r2_score([1.0], [1.0]))


def test_score_column_vector_y_and_sample_weight():
    X, y = _data()
    w = np.random.default_rng(3).uniform(0.5, 2, y.size)
    for est in (ARFFRegressor(n_features=32, n_iter=50, random_state=0),
                RandomFeatureRidge(200, random_state=0)):
        est.fit(X, y)
        pred = est.predict(X)
        assert est.score(X, y[:, None]) == pytest.approx(est.score(X, y), rel=1e-14)
        assert est.score(X, y) == pytest.approx(_r2_reference(y, pred, 1.0), rel=1e-12)
        assert est.score(X, y, sample_weight=w) == pytest.approx(_r2_reference(y, pred, w),
                                                                  rel=1e-12)
    two = RandomFeatureRidge(200, random_state=0).fit(X, np.c_[y, -y])
    with pytest.raises(ValueError, match="rows"):
        two.score(X, np.c_[y, -y].T)
    with pytest.raises(ValueError, match="outputs"):
        two.score(X, y)


# ------------------------------------------------------------------ SHRIMP
@pytest.mark.parametrize("offset", [1e4, 1e6])
def test_shrimp_predictions_shift_with_a_large_target_offset(offset):
    X, y = _data()
    Xt, _ = _data(200, seed=5)
    base = SHRIMPRegressor(random_state=0).fit(X, y).predict(Xt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        shifted = SHRIMPRegressor(random_state=0).fit(X, y + offset).predict(Xt) - offset
    # the inputs carry ~u * offset of rounding, the fits differ by about that
    assert np.max(np.abs(shifted - base)) < 1e-6 * max(1.0, offset / 1e4), \
        np.max(np.abs(shifted - base))


def test_shrimp_auto_q_drops_feature_names_of_an_earlier_fit():
    pd = pytest.importorskip("pandas")
    X, y = _data()
    est = SHRIMPRegressor(n_features=100, random_state=0)
    est.fit(pd.DataFrame(X, columns=list("abcd")), y)
    assert list(est.feature_names_in_) == list("abcd")
    est.fit(X, y)
    assert not hasattr(est, "feature_names_in_")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est.predict(X)


def test_shrimpcv_sparse_input_is_a_clear_error():
    X, y = _data(40)
    with pytest.raises(ValueError, match="sparse"):
        SHRIMPCV(n_features=50, random_state=0).fit(sp.csr_matrix(X), y)


def test_shrimpcv_cv_none_integer_weights_equal_repeated_rows():
    X, y = _data(80)
    w = np.random.default_rng(0).integers(0, 3, y.size).astype(float)
    reps = w.astype(int)
    a = SHRIMPCV(n_features=200, cv=None, random_state=0).fit(X, y, sample_weight=w)
    b = SHRIMPCV(n_features=200, cv=None, random_state=0).fit(
        np.repeat(X, reps, axis=0), np.repeat(y, reps))
    assert a.best_index_ == b.best_index_
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-8, atol=1e-10)


# ------------------------------------------------------------ ridge, weights
def test_shifted_eigenvalues_is_the_pseudo_inverse_at_zero():
    e = np.array([0.0, 1e-20, 1e-3, 2.0])
    np.testing.assert_array_equal(shifted_eigenvalues(e, 0.5), e + 0.5)
    np.testing.assert_array_equal(shifted_eigenvalues(e, 0.0), [np.inf, np.inf, 1e-3, 2.0])


def test_ridge_cv_grid_with_zero_is_the_minimum_norm_fit():
    X, y = _data(40)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no divide-by-zero RuntimeWarning
        est = RandomFeatureRidgeCV(n_features=200, lams=[0.0, 1e-3], random_state=0).fit(X, y)
    scores = est.cv_results_["mean_test_mse"]
    assert np.all(np.isfinite(scores)), scores


def test_integer_weights_too_large_to_repeat_are_refused_by_name():
    X, y = _data(20)
    for big in (1e9, 1e300):
        w = np.ones(y.size)
        w[0] = big
        with pytest.raises(MemoryError, match="sample_weight"):
            ARFFRegressor(n_features=8, n_iter=5, random_state=0).fit(X, y, sample_weight=w)


@pytest.mark.parametrize("scale", [-1.0, 0.0])
def test_arff_scale_checked_whatever_the_method(scale):
    X, y = _data(30)
    with pytest.raises(ValueError, match="scale"):
        ARFFRegressor(n_features=8, n_iter=5, scale=scale, random_state=0).fit(X, y)


# ------------------------------------------------------------ Dask predict
def test_dask_predict_is_lazy_and_refuses_nan_chunks():
    da = pytest.importorskip("dask.array")
    dask = pytest.importorskip("dask")
    X, y = _data(200)
    computed = []

    def spy(block):
        computed.append(block.shape[0])
        return block

    with dask.config.set(scheduler="synchronous"):
        for est in (SHRIMPRegressor(n_features=30, random_state=0),
                    SHRIMPCV(n_features=30, random_state=0),
                    RandomFeatureRidge(30, lam=1e-4, random_state=0)):
            est.fit(X, y)
            Xd = da.from_array(X, chunks=(50, 4)).map_blocks(spy, dtype=float,
                                                             meta=np.empty((0, 0)))
            computed.clear()
            pred = est.predict(Xd)
            assert computed == [], (type(est).__name__, computed)  # nothing computed yet
            np.testing.assert_allclose(pred.compute(), est.predict(X), rtol=1e-12, atol=1e-12)
            bad = X.copy()
            bad[3, 1] = np.nan
            with pytest.raises(ValueError, match="X contains NaN"):
                est.predict(da.from_array(bad, chunks=(50, 4))).compute()
