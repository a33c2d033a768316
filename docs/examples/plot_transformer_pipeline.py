"""
RandomFeatures in a scikit-learn Pipeline
=========================================

:class:`rflite.RandomFeatures` is a drop-in for scikit-learn's
``RBFSampler``: random Fourier features of the Gaussian, Laplace or Cauchy
kernel, optionally q-sparse or orthogonal.  It follows scikit-learn's
conventions, so it fits in a ``Pipeline`` and a grid search.
"""

import numpy as np
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from rflite import RandomFeatures
from rflite.datasets import make_friedman1, target_friedman1

X, y = make_friedman1(400, d=10, noise=1.0, rng=0)
X_test, _ = make_friedman1(1000, d=10, rng=1)
y_test = target_friedman1(X_test)

pipe = make_pipeline(
    StandardScaler(),
    RandomFeatures(n_components=200, gamma=0.1, random_state=0),
    Ridge(alpha=1e-2),
)
pipe.fit(X, y)
print(f"test MSE {np.mean((pipe.predict(X_test) - y_test) ** 2):.3f}")

# %%
# The kernel and its bandwidth are hyper-parameters like any other.
search = GridSearchCV(
    pipe,
    {"randomfeatures__kernel": ["gaussian", "laplace"],
     "randomfeatures__gamma": [0.03, 0.1]},
    cv=3,
)
search.fit(X, y)
print("best:", search.best_params_)
print(f"test MSE {np.mean((search.predict(X_test) - y_test) ** 2):.3f}")
