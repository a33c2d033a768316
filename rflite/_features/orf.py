r"""Weights of shift-invariant kernels and orthogonal random features.

Private helpers of :class:`rflite.features.RandomFeatures`: its ``gamma``
(:func:`_resolve_gamma`) and weights (:func:`_draw_weights`), the spectral
laws of the three kernels it approximates, the orthogonal random features of
Yu, Suresh, Choromanski, Holtmann-Rice and Kumar (2016), and scikit-learn's
feature-name checks for DataFrame-like input (duck-typed by ``.columns``, no
pandas or scikit-learn import).

Bochner's theorem: a continuous shift-invariant kernel :math:`k(x - y)` with
:math:`k(0) = 1` is the characteristic function of a probability law
:math:`p`, :math:`k(\delta) = E_{\omega \sim p} \cos(\omega^T \delta)`, so with
:math:`b \sim U[0, 2\pi]` the features
:math:`z(x) = \sqrt{2/N} \cos(W x + b)` satisfy
:math:`E\, z(x)^T z(y) = k(x - y)` (Rahimi and Recht 2007, Sec. 3, Fig. 1).
With the parameter :math:`\gamma > 0`:

========  ===============================================  =============================
kernel    :math:`k(\delta)`                                 law of :math:`\omega`
========  ===============================================  =============================
gaussian  :math:`\exp(-\gamma \|\delta\|_2^2)`              :math:`N(0, 2\gamma I)`
laplace   :math:`\exp(-\gamma \|\delta\|_1)`                iid Cauchy(0, :math:`\gamma`)
cauchy    :math:`\prod_j 1 / (1 + \gamma^2 \delta_j^2)`     iid Laplace(0, :math:`\gamma`)
========  ===============================================  =============================

(The characteristic function of Cauchy(0, s) is :math:`e^{-s|t|}`, that of
Laplace(0, b) with density :math:`e^{-|w|/b} / 2b` is :math:`1/(1 + b^2 t^2)`:
the *Laplace* kernel comes from *Cauchy* weights and vice versa.  Rahimi and
Recht's Fig. 1 writes the Cauchy kernel as :math:`\prod_j 2/(1 + \delta_j^2)`
with :math:`p(\omega) = e^{-\|\omega\|_1}`; both are unnormalised there, the
pair above is normalised, :math:`k(0) = 1`.)
"""

from __future__ import annotations

import math

import numpy as np

from rflite._core.memory import check_memory
from rflite._core.random import spawn_streams
from rflite._core.validation import check_real
from rflite._features.supports import sample_supports

#: Kernels with a spectral law in :func:`sample_spectral`.
KERNELS = ("gaussian", "laplace", "cauchy")

#: Largest ``gamma``: weight draws (Cauchy tails reach ~1e16 x gamma with
#: 53-bit uniforms) stay far below :data:`rflite._core.validation.MAX_ABS`.
MAX_GAMMA = 1e100


def sample_spectral(kernel: str, rng: np.random.Generator, gamma: float, size) -> np.ndarray:
    """Draw weight entries of ``kernel``'s spectral law with bandwidth ``gamma``.

    Consumes ``rng`` element by element in C order, so the first rows of a
    larger draw equal a smaller draw (prefix stability, as
    :func:`rflite.features.random_feature_map`).
    """
    if kernel == "gaussian":
        return rng.normal(0.0, np.sqrt(2.0 * gamma), size)
    if kernel == "laplace":
        return gamma * rng.standard_cauchy(size)
    return rng.laplace(0.0, gamma, size)


def orthogonal_gaussian(rng: np.random.Generator, n: int, d: int, scale: float) -> np.ndarray:
    r"""``n`` x ``d`` orthogonal random features, rows marginally :math:`N(0, \mathrm{scale}^2 I)`.

    Yu et al. 2016, "Orthogonal Random Features", Sec. 3 (ORF): for each
    block of ``d`` rows draw a Gaussian ``d`` x ``d`` matrix ``G``, take the
    Haar-distributed orthogonal factor ``Q`` of its QR decomposition (signs
    fixed by ``diag(R) > 0``) and rescale row ``i`` by an independent
    :math:`\chi_d` draw :math:`s_i`, the norm a Gaussian row would have:
    :math:`W = \mathrm{scale}\, S Q`.  Every row is then exactly
    :math:`N(0, \mathrm{scale}^2 I)` (so the kernel estimate stays unbiased),
    while rows inside a block are orthogonal, which lowers the variance of
    the Gaussian-kernel estimate (their Theorem 1).  Blocks are stacked and
    the last one truncated when ``n`` is not a multiple of ``d``.
    """
    n_blocks = -(-n // d)
    W = np.empty((n_blocks * d, d))
    for k in range(n_blocks):
        G = rng.standard_normal((d, d))
        Q, R = np.linalg.qr(G)
        Q *= np.where(np.diag(R) < 0, -1.0, 1.0)  # Haar measure: column signs from R
        s = np.sqrt(rng.chisquare(d, d))
        W[k * d:(k + 1) * d] = s[:, None] * Q.T
    W = W[:n]
    W *= scale
    return W


def _resolve_gamma(gamma, X, lazy):
    """The kernel parameter of :class:`rflite.features.RandomFeatures` for inputs ``X``:
    ``gamma``, or for ``"scale"`` ``1 / (d var(X))``, capped at :data:`MAX_GAMMA`."""
    d = X.shape[1]
    if isinstance(gamma, str) and gamma == "scale":
        # a Dask X is read only here: one tree-reduced pass for its variance
        var = float(X.var().compute() if lazy else X.var())
        if not math.isfinite(var):  # (Dask: chunks are not checked until computed)
            raise ValueError("X contains NaN, infinity or a value too large for gamma='scale' "
                             f"(variance {var})")
        gamma = 1.0 / (d * var) if var > 0 else 1.0
    elif isinstance(gamma, str):
        raise ValueError(f"gamma must be a positive real or 'scale', got {gamma!r}")
    else:
        gamma = check_real(gamma, "gamma", minimum=0.0, strict=True, maximum=MAX_GAMMA)
    return min(gamma, MAX_GAMMA)


def _draw_weights(rng, n, d, q, kernel, gamma, orthogonal):
    """Supports, values and phases of ``n`` cosine features of :class:`RandomFeatures`."""
    # the stream layout of random_feature_map: supports, values, biases
    check_memory((n, 2 * q + 1), np.float64,
                 f"the random weights (n_components={n})", "use fewer components")
    support_rng, value_rng, bias_rng = spawn_streams(rng, 3)
    if orthogonal:
        supports = np.broadcast_to(np.arange(d), (n, d))
        values = orthogonal_gaussian(value_rng, n, d, math.sqrt(2.0 * gamma))
    else:
        supports = sample_supports(d, n, q, support_rng)
        values = sample_spectral(kernel, value_rng, gamma, (n, q))
    bias = bias_rng.uniform(0.0, 2.0 * np.pi, n)
    return supports, values, bias
