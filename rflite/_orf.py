r"""Weights of shift-invariant kernels and orthogonal random features.

Private helpers of :class:`rflite.features.RandomFeatures`: the spectral
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

==========  ====================================================  =====================================
kernel      :math:`k(\delta)`                                      law of :math:`\omega`
==========  ====================================================  =====================================
gaussian    :math:`\exp(-\gamma \|\delta\|_2^2)`                   :math:`N(0, 2\gamma I)`
laplace     :math:`\exp(-\gamma \|\delta\|_1)`                     iid Cauchy(0, :math:`\gamma`) entries
cauchy      :math:`\prod_j 1 / (1 + \gamma^2 \delta_j^2)`          iid Laplace(0, :math:`\gamma`) entries
==========  ====================================================  =====================================

(The characteristic function of Cauchy(0, s) is :math:`e^{-s|t|}`, that of
Laplace(0, b) with density :math:`e^{-|w|/b} / 2b` is :math:`1/(1 + b^2 t^2)`:
the *Laplace* kernel comes from *Cauchy* weights and vice versa.  Rahimi and
Recht's Fig. 1 writes the Cauchy kernel as :math:`\prod_j 2/(1 + \delta_j^2)`
with :math:`p(\omega) = e^{-\|\omega\|_1}`; both are unnormalised there, the
pair above is normalised, :math:`k(0) = 1`.)
"""

from __future__ import annotations

import warnings

import numpy as np

#: Kernels with a spectral law in :func:`sample_spectral`.
KERNELS = ("gaussian", "laplace", "cauchy")


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


# ------------------------------------------------------------- feature names
def feature_names(X):
    """Column names of DataFrame-like ``X`` as an object array, or ``None``.

    As scikit-learn's ``_get_feature_names``: names are used only when they
    are all strings; mixing string and non-string names is a ``TypeError``.
    """
    columns = getattr(X, "columns", None)
    if columns is None or isinstance(X, np.ndarray):
        return None
    names = list(columns)
    is_str = [isinstance(c, str) for c in names]
    if names and all(is_str):
        return np.asarray(names, dtype=object)
    if any(is_str):
        types = sorted({type(c).__name__ for c in names})
        raise TypeError(
            "Feature names are only supported if all input features have string names, "
            f"but your input has {types} as feature name / column name types. Convert "
            "all column names to str (X.columns = X.columns.astype(str))."
        )
    return None


def check_feature_names(est, X, *, reset: bool) -> None:
    """Set (``reset``) or check ``est.feature_names_in_`` against ``X`` as scikit-learn does.

    At fit: store the names, or delete a stale ``feature_names_in_``.  At
    transform: different names or order raise ``ValueError``; names at only
    one of fit / transform warn (``UserWarning``), as scikit-learn's
    ``BaseEstimator._check_feature_names`` does.
    """
    names = feature_names(X)
    if reset:
        if names is not None:
            est.feature_names_in_ = names
        elif hasattr(est, "feature_names_in_"):
            del est.feature_names_in_
        return
    fitted = getattr(est, "feature_names_in_", None)
    cls = type(est).__name__
    if fitted is None and names is None:
        return
    if names is not None and fitted is None:
        warnings.warn(f"X has feature names, but {cls} was fitted without feature names",
                      UserWarning, stacklevel=3)
        return
    if names is None:
        warnings.warn(f"X does not have valid feature names, but {cls} was fitted with "
                      "feature names", UserWarning, stacklevel=3)
        return
    if len(names) != len(fitted) or np.any(names != fitted):
        unseen = sorted(set(names) - set(fitted))
        missing = sorted(set(fitted) - set(names))
        msg = "The feature names should match those that were passed during fit.\n"
        if unseen:
            msg += f"Feature names unseen at fit time: {unseen}\n"
        if missing:
            msg += f"Feature names seen at fit time, yet now missing: {missing}\n"
        if not unseen and not missing:
            msg += "Feature names must be in the same order as they were in fit.\n"
        raise ValueError(msg)


#: Rows per block of :func:`scale_rows` (a block of 2000 x 20000 features is
#: then a few MB, in cache while it is scaled).
SCALE_BLOCK_ENTRIES = 1 << 18


def scale_rows(out: np.ndarray, factor: float) -> None:
    """``out *= factor`` in row blocks on a small thread pool (ufuncs release the GIL)."""
    from concurrent.futures import ThreadPoolExecutor
    import os

    m = out.shape[0]
    block = max(1, SCALE_BLOCK_ENTRIES // max(1, out.shape[1]))
    starts = range(0, m, block)

    def work(r0):
        np.multiply(out[r0:r0 + block], factor, out=out[r0:r0 + block])

    n_threads = os.cpu_count() or 1
    if n_threads == 1 or len(starts) < 4:
        out *= factor
        return
    with ThreadPoolExecutor(max_workers=n_threads) as pool:
        list(pool.map(work, starts))
