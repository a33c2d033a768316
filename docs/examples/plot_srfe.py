"""
SRFE: basis pursuit denoising on random features
================================================

:class:`~rflite.bp.SRFERegressor` fits the coefficients by
:math:`\\min \\|c\\|_1` subject to :math:`\\|Ac - y\\|_2 \\le \\eta\\sqrt m`.
The low-level solver :func:`~rflite.bp.bpdn` returns a certified result.
"""

import numpy as np

from rflite.bp import SRFERegressor, bpdn
from rflite.datasets import make_shrimp2, target_shrimp2

X, y = make_shrimp2(100, d=10, noise=0.01, rng=0)
X_test, _ = make_shrimp2(500, d=10, rng=1)
y_test = target_shrimp2(X_test)

model = SRFERegressor(n_features=500, eta=0.01, q=1, random_state=0).fit(X, y)
mse = np.mean((model.predict(X_test) - y_test) ** 2)
print(f"{model.n_nonzero_} nonzero coefficients, test MSE {mse:.3g}, "
      f"solver stop: {model.result_.bpdn.stop_reason}")

# %%
# The solver on a plain matrix: a sparse vector recovered from 60 Gaussian
# measurements.
rng = np.random.default_rng(0)
A = rng.normal(size=(60, 200))
c_true = np.zeros(200)
c_true[[3, 50, 120]] = [1.0, -2.0, 0.5]
res = bpdn(A, A @ c_true, sigma=1e-8)
print(f"certified: {res.certified}, error {np.abs(res.coef - c_true).max():.2e}")
