"""
HARFE: sparse ridge by hard thresholding pursuit
================================================

:class:`~rflite.htp.HARFERegressor` draws q-sparse random features and keeps
the ``s`` of them that hard thresholding pursuit selects.  Here ``s`` and
``lam`` are given; the defaults (``"auto"``) choose them on a hold-out split.
"""

import matplotlib.pyplot as plt
import numpy as np

from rflite.datasets import make_friedman1, target_friedman1
from rflite.htp import HARFERegressor
from rflite.features import variable_usage

X, y = make_friedman1(300, d=10, noise=0.5, rng=0)
X_test, _ = make_friedman1(1000, d=10, rng=1)
y_test = target_friedman1(X_test)

model = HARFERegressor(n_features=2000, s=100, lam=1e-3 / len(y), random_state=0)
model.fit(X, y)
mse = np.mean((model.predict(X_test) - y_test) ** 2)
print(f"{model.n_nonzero_} features kept, {model.n_iter_} iterations, "
      f"stop: {model.stop_reason_}, test MSE {mse:.3f}")

# %%
# Which inputs do the kept features use?  Friedman-1 depends on the first
# five inputs only.
usage = variable_usage(model.feature_map_, model.coef_, columns=model.support_)
fig, ax = plt.subplots(figsize=(5, 3))
ax.bar(np.arange(1, X.shape[1] + 1), usage)
ax.set_xlabel("input")
ax.set_ylabel("usage")
ax.set_title("HARFE: variable usage of the kept features")
fig.tight_layout()
