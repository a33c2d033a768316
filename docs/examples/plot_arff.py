"""
ARFF: adaptive random Fourier features
======================================

:class:`~rflite.metropolis.ARFFRegressor` samples the frequencies with a
Metropolis chain that makes them follow the amplitudes.  By default it holds
out a validation split and stops early; ``**PAPER_SETTINGS`` runs the paper's
algorithm as published.
"""

import matplotlib.pyplot as plt
import numpy as np

from rflite.datasets import make_metropolis3, target_metropolis3
from rflite.metropolis import ARFFRegressor

X, y = make_metropolis3(500, rng=0)
X_test, _ = make_metropolis3(1000, rng=1)
y_test = target_metropolis3(X_test)

model = ARFFRegressor(32, n_iter=60, random_state=0).fit(X, y)
mse = np.mean((model.predict(X_test) - y_test) ** 2)
print(f"{model.n_iter_} iterations (best {model.best_iteration_}), lam = {model.lam_:.3g}, "
      f"test MSE {mse:.3g}")

# %%
# The sampled frequencies concentrate where the target's Fourier transform
# has its mass (long in the first input, short in the second).
W = model.feature_map_.dense_weights()
fig, ax = plt.subplots(figsize=(4, 4))
ax.scatter(W[:, 0], W[:, 1], s=10)
ax.set_xlabel(r"$\omega_1$")
ax.set_ylabel(r"$\omega_2$")
ax.set_title("ARFF frequencies")
fig.tight_layout()
