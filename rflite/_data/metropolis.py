"""The synthetic targets of adaptive random Fourier features with Metropolis sampling.

Kammonen, Kiessling, Plechac, Sandberg, Szepessy (2020), Sec. 5, Cases 1-3:
functions whose Fourier transforms decay slowly or are strongly anisotropic,
sampled on Gaussian inputs.  Public in :mod:`rflite.datasets`, which
re-exports them.
"""

from __future__ import annotations

import numpy as np
import scipy.special

from rflite._core.validation import check_real
from rflite._data.sampling import Sample, _check_common, _check_X, _generate, _normal


def _si_gauss(X, a):
    si, _ = scipy.special.sici(X[:, 0] / a)
    return si * np.exp(-0.5 * np.einsum("ij,ij->i", X, X))


def target_metropolis1(X, *, a=1e-3) -> np.ndarray:
    r"""Metropolis case 1: a sine integral under a Gaussian, d = 1.

    .. math:: f(x) = \mathrm{Si}(x / a)\, e^{-x^2/2},\quad
              \mathrm{Si}(t) = \int_0^t \frac{\sin s}{s}\, ds

    (:func:`scipy.special.sici`).  Its Fourier transform decays like
    :math:`|\omega|^{-1}` up to :math:`|\omega| = 1/a`.

    Parameters
    ----------
    X : (m, 1) array_like
    a : float > 0, default 1e-3

    References
    ----------
    A. Kammonen, J. Kiessling, P. Plechac, M. Sandberg, A. Szepessy, "Adaptive
    random Fourier features with Metropolis sampling", Foundations of Data
    Science 2(3), 2020, Sec. 5, Case 1.
    """
    X = _check_X(X, d_min=1, d_exact=1)
    a = check_real(a, "a", minimum=0.0, strict=True)
    return _si_gauss(X, a)


def make_metropolis1(n_samples, *, a=1e-3, noise=0.0, rng=None) -> Sample:
    """Sample :func:`target_metropolis1` with ``x ~ N(0, 1)`` (d = 1).

    The data are raw; the paper normalises them afterwards (its Algorithm 3),
    which is the model's job, not the generator's.  Paper: N = 10^4 points.

    Parameters
    ----------
    n_samples : int >= 1
    a : float > 0, default 1e-3
    noise : float >= 0, default 0
    rng : None, int or numpy.random.Generator

    Returns
    -------
    Sample
        ``X`` (n_samples, 1) and ``y`` (n_samples,).
    """
    n_samples, _, noise = _check_common(n_samples, noise)
    a = check_real(a, "a", minimum=0.0, strict=True)
    return _generate(target_metropolis1, _normal, n_samples, 1, noise, rng, a=a)


def target_metropolis2(X, *, a=0.1) -> np.ndarray:
    r"""Metropolis case 2: the case 1 function in d dimensions.

    .. math:: f(x) = \mathrm{Si}(x_1 / a)\, e^{-\|x\|_2^2/2}

    Parameters
    ----------
    X : (m, d) array_like, d >= 1 (the paper: d = 5)
    a : float > 0, default 0.1

    References
    ----------
    Kammonen et al. (2020), Sec. 5, Case 2.
    """
    X = _check_X(X, d_min=1)
    a = check_real(a, "a", minimum=0.0, strict=True)
    return _si_gauss(X, a)


def make_metropolis2(n_samples, *, d=5, a=0.1, noise=0.0, rng=None) -> Sample:
    """Sample :func:`target_metropolis2` with ``x ~ N(0, I_d)`` (paper: d = 5).

    Raw data, see :func:`make_metropolis1`.
    """
    n_samples, d, noise = _check_common(n_samples, noise, d, 1)
    a = check_real(a, "a", minimum=0.0, strict=True)
    return _generate(target_metropolis2, _normal, n_samples, d, noise, rng, a=a)


def target_metropolis3(X) -> np.ndarray:
    r"""Metropolis case 3: an anisotropic Gaussian, d = 2.

    .. math:: f(x) = e^{-(32 x_1)^2/2}\, e^{-(x_2/32)^2/2}

    Since :math:`|\hat f(\omega)| \propto e^{-\omega_1^2/(2 \cdot 32^2)}
    e^{-32^2 \omega_2^2/2}`, the optimal frequency density of Remark 3.2
    (:math:`p_* \propto |\hat f|`) is :math:`N(0, \mathrm{diag}(32^2, 32^{-2}))`:
    wide in :math:`\omega_1`, narrow in :math:`\omega_2`.  The paper prints
    ``diag([32^-2, 32^2])``, which has the two axes swapped.

    References
    ----------
    Kammonen et al. (2020), Sec. 5, Case 3, eq. (30).
    """
    X = _check_X(X, d_min=2, d_exact=2)
    return np.exp(-0.5 * (32.0 * X[:, 0]) ** 2) * np.exp(-0.5 * (X[:, 1] / 32.0) ** 2)


def make_metropolis3(n_samples, *, noise=0.0, rng=None) -> Sample:
    """Sample :func:`target_metropolis3` with ``x ~ N(0, I_2)``.

    The paper: "the non normalized x-points are independent random vectors in
    R^2 with independent N(0, 1) components"; K = 256.  With this input law most
    targets are tiny (``f > 0.5`` needs ``|x_1| < 0.037``, about 3 % of points).
    Raw data, see :func:`make_metropolis1`.
    """
    n_samples, _, noise = _check_common(n_samples, noise)
    return _generate(target_metropolis3, _normal, n_samples, 2, noise, rng)
