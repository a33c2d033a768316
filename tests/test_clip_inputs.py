"""clip_inputs: every estimator can predict outside points at the training box."""

import numpy as np
import pytest

from rflite.bp import SRFERegressor
from rflite.greedy import GFCRegressor
from rflite.htp import HARFERegressor
from rflite.imp import SHRIMPRegressor
from rflite.metropolis import ARFFRegressor
from rflite.ridge import RandomFeatureRidge

SMALL = {
    "ridge": lambda **k: RandomFeatureRidge(n_features=50, lam=1e-3, **k),
    "harfe": lambda **k: HARFERegressor(n_features=100, s=10, lam=1e-4, **k),
    "shrimp": lambda **k: SHRIMPRegressor(n_features=50, **k),
    "srfe": lambda **k: SRFERegressor(n_features=100, eta=0.1, **k),
    "arff": lambda **k: ARFFRegressor(n_features=16, n_iter=20, **k),
    "gfc": lambda **k: GFCRegressor(max_steps=2, **k),
}


@pytest.mark.slow(reason="fits every estimator, GFC for several seconds")
@pytest.mark.parametrize("name", list(SMALL))
def test_clip_inputs_predicts_outside_points_at_the_box(name):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (60, 3))
    y = np.sin(2 * X[:, 0]) + X[:, 1]
    far = np.array([[5.0, -7.0, 0.5], [0.2, 0.3, -0.1]])
    at_box = np.clip(far, X.min(axis=0), X.max(axis=0))
    clipped = SMALL[name](clip_inputs=True, random_state=0).fit(X, y)
    plain = SMALL[name](random_state=0).fit(X, y)
    np.testing.assert_array_equal(clipped.input_min_, X.min(axis=0))
    np.testing.assert_allclose(clipped.predict(far), plain.predict(at_box), rtol=1e-12,
                               atol=1e-12)
    # off by default: the far point is the model's own extrapolation
    np.testing.assert_allclose(plain.predict(far[1:]), clipped.predict(far[1:]), rtol=1e-12)
    assert not np.allclose(plain.predict(far[:1]), plain.predict(at_box[:1]))


def test_clip_inputs_is_validated():
    X = np.random.default_rng(0).uniform(-1, 1, (30, 2))
    with pytest.raises(ValueError, match="clip_inputs"):
        RandomFeatureRidge(n_features=20, lam=1e-3, clip_inputs="yes").fit(X, X[:, 0]).predict(X)
