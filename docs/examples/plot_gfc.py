"""
GFC: greedy feature construction
================================

:class:`~rflite.greedy.GFCRegressor` builds cosine-wave features one at a
time, each spectrum fitted by L-BFGS-B on a cross-validated objective.  The
constructed features are available through ``transform``.
"""

import numpy as np

from rflite.datasets import make_friedman_gfc, target_friedman1
from rflite.greedy import GFCRegressor

X, y = make_friedman_gfc(300, rng=0)
X_test, _ = make_friedman_gfc(1000, rng=1)
y_test = target_friedman1(X_test)

model = GFCRegressor(n_workers=2, max_steps=4, n_estimators=1, cv=3, random_state=0).fit(X, y)
mse = np.mean((model.predict(X_test) - y_test) ** 2)
print(f"{model.weights_.shape[0]} constructed features, nu = {model.nu_:.3g}, "
      f"test MSE {mse:.3f}")
print("constructed features of the test rows:", model.transform(X_test).shape)
