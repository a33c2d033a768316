"""
Theory helpers
==============

:mod:`rflite.theory` measures a given feature matrix (coherence, restricted
isometry estimates, Gram spectra) and evaluates the papers' closed-form
bounds.
"""

import numpy as np

from rflite.features import random_feature_map
from rflite.theory import (
    coherence,
    harfe_min_samples,
    metropolis_optimal_exponent,
    rip_lower_bound,
    rip_upper_bound,
    shrimp_thm5_max_sparsity,
    sparsity_check,
    welch_bound,
)

rng = np.random.default_rng(0)
X = rng.uniform(-1, 1, size=(100, 10))
fmap = random_feature_map(10, 500, q=2, activation="exp", rng=0)
A = fmap.transform(X)  # the bounds study A / sqrt(m) by default

mu = coherence(A)
print(f"coherence {mu:.3f} (Welch bound for 100 x 500: {welch_bound(100, 500):.3f})")

# %%
# A certified lower bound and the coherence upper bound on the restricted
# isometry constant of order 2.
low = rip_lower_bound(A, 2, rng=0)
print(f"RIP delta_2 >= {low.delta:.3f} (worst of {low.n_supports} trial supports)")
print(f"RIP delta_2 <= {rip_upper_bound(A, 2):.3f}")

# %%
# Is this matrix good enough for sparsity s = 1?
print(sparsity_check(A, 1, rng=0))

# %%
# Closed-form quantities: the largest sparsity SHRIMP's Theorem 5 allows at
# this coherence, the samples HARFE's Theorem 3.1 asks for (universal
# constants 1), and the optimal Metropolis exponent of ARFF in d = 10.
print("shrimp_thm5_max_sparsity:", shrimp_thm5_max_sparsity(mu))
print("harfe_min_samples:", harfe_min_samples(500, 5, lam=1e-3, delta=0.1))
print("metropolis_optimal_exponent:", metropolis_optimal_exponent(10))
