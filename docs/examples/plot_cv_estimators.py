"""
Cross-validated estimators
==========================

Every sparse method has a K-fold version that chooses its regularisation:
:class:`~rflite.ridge.RandomFeatureRidgeCV` (``lam``, weight scale),
:class:`~rflite.htp.HARFECV` (``s``, ``lam``), :class:`~rflite.bp.SRFECV`
(``eta``) and :class:`~rflite.imp.SHRIMPCV` (pruning step, ``q``, prune
rate).  One feature map is drawn and shared by the folds; the scores of the
whole grid are in ``cv_results_``.
"""

import numpy as np

from rflite.bp import SRFECV
from rflite.datasets import make_friedman1, target_friedman1
from rflite.htp import HARFECV
from rflite.ridge import RandomFeatureRidgeCV

X, y = make_friedman1(200, d=10, noise=1.0, rng=0)
X_test, _ = make_friedman1(1000, d=10, rng=1)
y_test = target_friedman1(X_test)


def test_mse(model):
    return np.mean((model.predict(X_test) - y_test) ** 2)


ridge = RandomFeatureRidgeCV(n_features=300, scales=[1.0], random_state=0).fit(X, y)
print(f"RandomFeatureRidgeCV: lam_ = {ridge.lam_:.3g}, test MSE {test_mse(ridge):.3f}")

harfe = HARFECV(n_features=1000, ss=[25, 50], lams=[1e-2, 1e-4], cv=3,
                random_state=0).fit(X, y)
print(f"HARFECV: s_ = {harfe.s_}, lam_ = {harfe.lam_:.3g}, test MSE {test_mse(harfe):.3f}")

srfe = SRFECV(n_features=300, cv=3, random_state=0).fit(X, y)
print(f"SRFECV: eta_ = {srfe.eta_:.3g}, {srfe.n_nonzero_} nonzero, "
      f"test MSE {test_mse(srfe):.3f}")

# %%
# The grid and its fold errors, as in scikit-learn's ``GridSearchCV``.
for s, lam, err in zip(harfe.cv_results_["s"], harfe.cv_results_["lam"],
                       harfe.cv_results_["mean_test_mse"]):
    print(f"s = {s:3d}  lam = {lam:.0e}  mean validation MSE {err:.3f}")
