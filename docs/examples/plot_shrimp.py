"""
SHRIMP: iterative magnitude pruning
===================================

:class:`~rflite.imp.SHRIMPRegressor` starts from the minimum-norm interpolant
on all random Fourier features and repeatedly prunes the smallest
coefficients; the step with the lowest validation error is the model.
"""

import matplotlib.pyplot as plt
import numpy as np

from rflite.datasets import make_shrimp2, target_shrimp2
from rflite.imp import SHRIMPRegressor

X, y = make_shrimp2(140, d=10, rng=0)
X_test, _ = make_shrimp2(500, d=10, rng=1)
y_test = target_shrimp2(X_test)

model = SHRIMPRegressor(n_features=2000, q=1, random_state=0).fit(X, y)
mse = np.mean((model.predict(X_test) - y_test) ** 2)
print(f"step {model.best_step_}: {model.n_nonzero_} columns, refit {model.refit_!r}, "
      f"test MSE {mse:.3g}")

# %%
# The validation error along the pruning path.
path = model.path_
fig, ax = plt.subplots(figsize=(5, 3))
ax.loglog(path.n_kept, path.val_mse, "o-")
ax.axvline(path.n_kept[model.best_step_], color="k", lw=0.8)
ax.set_xlabel("columns kept")
ax.set_ylabel("validation MSE")
ax.invert_xaxis()
fig.tight_layout()
