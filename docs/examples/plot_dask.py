"""
Fitting on a Dask array
=======================

The estimators accept a row-chunked :class:`dask.array.Array`: every chunk's
features are built where the chunk lives and only reductions over the rows
come back, so the m x N feature matrix is never formed.  This example uses
Dask's synchronous scheduler on a small array, so it needs no cluster; with a
``distributed.Client`` the same code runs on the cluster.
"""

import dask
import dask.array as da
import numpy as np

from rflite.htp import HARFERegressor

rng = np.random.default_rng(0)
X_np = rng.uniform(0, 1, size=(2000, 5))
y_np = 10 * np.sin(np.pi * X_np[:, 0] * X_np[:, 1]) + 10 * X_np[:, 3]

X = da.from_array(X_np, chunks=(500, 5))  # row chunks, all columns in each
y = da.from_array(y_np, chunks=500)

with dask.config.set(scheduler="synchronous"):
    model = HARFERegressor(n_features=500, s=50, lam=1e-6, random_state=0).fit(X, y)
    pred = model.predict(X)  # lazy, chunked like X
    mse = float(((pred - y) ** 2).mean().compute())

print(f"{model.n_nonzero_} features, training MSE {mse:.3g}")
print("distributed passes:", len(model.dask_passes_))

# %%
# The same fit in memory gives the same support and, to rounding, the same
# coefficients.
ref = HARFERegressor(n_features=500, s=50, lam=1e-6, random_state=0).fit(X_np, y_np)
print("same support:", np.array_equal(np.sort(ref.support_), np.sort(model.support_)))
print(f"largest coefficient difference: {np.abs(ref.coef_ - model.coef_).max():.1e}")
