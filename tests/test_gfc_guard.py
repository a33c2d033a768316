"""GFCRegressor's guard against predicting the mean (issue 14, insulin)."""

import numpy as np
from numpy.testing import assert_allclose

from rflite.greedy import GFCRegressor


# ------------------------------------------------------------------ GFC guard
def test_gfc_mean_guard_fires_on_pure_noise(capsys):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((150, 5))
    y = 3.0 + rng.standard_normal(150)
    est = GFCRegressor(max_steps=5, random_state=0).fit(X, y)
    assert est.guarded_ and est.guard_mse_[0] >= est.guard_mse_[1]
    GFCRegressor(max_steps=2, verbose=1, random_state=0).fit(X, y)
    assert "intercept only" in capsys.readouterr().err
    assert est.coef_.size == 0 and est.weights_.shape == (0, 5)
    assert_allclose(est.predict(X), np.full(150, y.mean()))
    off = GFCRegressor(max_steps=5, mean_guard=False, random_state=0).fit(X, y)
    assert not off.guarded_ and off.guard_mse_ is None and off.coef_.size > 0


def test_gfc_mean_guard_keeps_a_real_signal():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((150, 3))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.standard_normal(150)
    est = GFCRegressor(max_steps=5, random_state=0).fit(X, y)
    assert not est.guarded_ and est.coef_.size > 0
    assert est.guard_mse_[0] < est.guard_mse_[1]


def test_gfc_mean_guard_skipped_on_few_rows():
    from rflite.greedy import GUARD_MIN_ROWS

    rng = np.random.default_rng(2)
    X = rng.standard_normal((GUARD_MIN_ROWS - 1, 3))
    est = GFCRegressor(max_steps=2, random_state=0).fit(X, rng.standard_normal(len(X)))
    assert est.guard_mse_ is None and not est.guarded_
