"""RandomFeatureRidge / ...CV: the weight scale chosen with lam."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from rflite.ridge import SCALE_GRID, RandomFeatureRidge, RandomFeatureRidgeCV, scaled_map


# ------------------------------------------------------------------ ridge scale
def _smooth_problem(m=300, d=30, seed=0):
    # a smooth (low-frequency) target of many inputs: N(0, 1) weights on
    # standardised inputs give features far too rough for it
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, d))
    return X, X[:, :10].sum(axis=1) / 3 + 0.3 * rng.standard_normal(m)


def test_ridge_scale_search_picks_smaller_scale_when_needed():
    X, y = _smooth_problem()
    Xt, yt = _smooth_problem(400, seed=1)
    est = RandomFeatureRidge(n_features=300, random_state=0).fit(X, y)
    assert est.scale_ < 1.0
    fixed = RandomFeatureRidge(n_features=300, scale=1.0, random_state=0).fit(X, y)
    assert fixed.scale_ == 1.0
    assert np.mean((est.predict(Xt) - yt) ** 2) < np.mean((fixed.predict(Xt) - yt) ** 2)
    res = est.cv_results_
    assert res["scale"].shape == res["lam"].shape == (len(SCALE_GRID) * 23,)
    i = int(np.argmin(res["mean_test_mse"]))
    assert (res["scale"][i], res["lam"][i]) == (est.scale_, est.lam_)


def test_ridge_scale_equals_explicit_scaled_fit():
    X, y = _smooth_problem(120, d=5)
    a = RandomFeatureRidge(n_features=80, random_state=0).fit(X, y)
    b = RandomFeatureRidge(n_features=80, scale=a.scale_, lam=a.lam_, random_state=0).fit(X, y)
    assert_allclose(a.predict(X), b.predict(X), rtol=1e-9, atol=1e-12)
    ref = RandomFeatureRidge(n_features=80, scale=1.0, lam=a.lam_, random_state=0).fit(X, y)
    assert_allclose(a.feature_map_.values, a.scale_ * ref.feature_map_.values)
    # a float lam keeps the weights as drawn (the paper settings)
    assert RandomFeatureRidge(n_features=80, lam=1e-3, random_state=0).fit(X, y).scale_ == 1.0


def test_ridge_cv_scales_argument_and_errors():
    X, y = _smooth_problem(100, d=4)
    one = RandomFeatureRidgeCV(n_features=60, scales=[1.0], random_state=0).fit(X, y)
    assert one.scale_ == 1.0 and set(one.cv_results_["scale"]) == {1.0}
    with pytest.raises(ValueError, match="scale"):
        RandomFeatureRidge(n_features=20, scale="big").fit(X, y)
    with pytest.raises(ValueError, match="scale"):
        RandomFeatureRidge(n_features=20, scale=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="scales"):
        RandomFeatureRidgeCV(n_features=20, scales=[0.0, 1.0]).fit(X, y)


def test_ridge_two_outputs_choose_own_scales():
    X, y = _smooth_problem(120, d=5)
    Y = np.column_stack([y, np.sin(3 * X[:, 0])])
    for activation in ("sin", "fourier"):
        est = RandomFeatureRidge(n_features=80, activation=activation, random_state=0).fit(X, Y)
        assert est.scale_.shape == est.lam_.shape == (2,)
        for k in range(2):
            one = RandomFeatureRidge(n_features=80, activation=activation,
                                     random_state=0).fit(X, Y[:, k])
            assert one.scale_ == est.scale_[k] and one.lam_ == est.lam_[k]
            assert_allclose(est.predict(X)[:, k], one.predict(X), rtol=1e-7, atol=1e-9)
    assert est.scale_[0] != est.scale_[1]  # the stacked map was exercised
    assert scaled_map(est.feature_map_, 1.0) is est.feature_map_
