"""
Random-feature ridge regression
===============================

The baseline every sparse model is compared with: ridge regression on all
``N`` random features.  With the default ``lam="auto"`` and ``scale="auto"``
the penalty and the weight scale are chosen by 5-fold cross-validation from
one eigendecomposition per fold.
"""

import numpy as np

from rflite.datasets import make_friedman1, target_friedman1
from rflite.ridge import RandomFeatureRidge

X, y = make_friedman1(300, d=10, noise=1.0, rng=0)
X_test, _ = make_friedman1(1000, d=10, rng=1)
y_test = target_friedman1(X_test)

model = RandomFeatureRidge(n_features=500, random_state=0).fit(X, y)
mse = np.mean((model.predict(X_test) - y_test) ** 2)
print(f"chosen lam = {model.lam_:.3g}, scale = {model.scale_}")
print(f"test MSE {mse:.3f} (predicting the mean: {np.var(y_test):.3f})")

# %%
# A fixed ``lam`` (and ``scale=1``) gives the plain model of the papers.
fixed = RandomFeatureRidge(n_features=500, lam=1e-3, random_state=0).fit(X, y)
print(f"lam = 1e-3: test MSE {np.mean((fixed.predict(X_test) - y_test) ** 2):.3f}")
