"""Synthetic targets and the six real (UCI) regression sets used by the papers.

Synthetic data
--------------
Every synthetic target ``xxx`` comes as a pair

* ``target_xxx(X)`` -- the noise-free function, evaluated row-wise on an
  (m, d) array (use it for noise-free test targets), and
* ``make_xxx(n_samples, *, [d=...,] noise=..., rng=None) -> Sample(X, y)`` --
  ``n_samples`` inputs drawn from the paper's input distribution and
  ``y = target_xxx(X) + noise * e`` with ``e ~ N(0, 1)``.

:class:`Sample` is a NamedTuple, so ``X, y = make_xxx(...)`` works.  Random
stream: ``X`` is drawn first, then ``n_samples`` standard normals for the noise
are *always* drawn (also when ``noise == 0``).  So for a given seed ``X`` does
not depend on ``noise``, and a shared :class:`numpy.random.Generator` advances
the same way whatever the noise level.  Same seed, same data.

Indices in formulas are 1-based, as in the papers: ``x_3`` is column ``X[:, 2]``.

Targets (name, f(x), default d, input distribution)::

    harfe1          1 / sqrt(1 + |x|^2)                          5         U[-1, 1]^d
    harfe2          sqrt(1 + |x|^2)                              5         U[-1, 1]^d
    harfe3          x1 x2 / (1 + x3^6)                           5 (>= 3)  U[-1, 1]^d
    harfe4          sum_i exp(-|x_i|)                            100       U[-1, 1]^d
    friedman1       10 sin(pi x1 x2) + 20 (x3 - 1/2)^2
                      + 10 x4 + 5 x5                             10 (>= 5) U[0, 1]^d
    friedman2       sqrt(z1^2 + (z2 z3 - 1/(z2 z4))^2)           4         U[0, 1]^4
    friedman3       arctan((z2 z3 - 1/(z2 z4)) / z1)             4         U[0, 1]^4
    friedman_gfc    Friedman 1 with noise N(0, 1)                10        U[0, 1]^10
    shrimp1..7      SHRIMP f1 .. f7 (see the functions)          10        U[-1, 1]^d
                                                                           (f6: U[-pi, pi]^d)
    shrimp_support  3 cos(x3) + 4 sin(x4) + 2 sin(x2)            5 (>= 4)  U[-1, 1]^d
    metropolis1     Si(x / a) exp(-x^2 / 2), a = 1e-3            1         N(0, 1)
    metropolis2     Si(x1 / a) exp(-|x|^2 / 2), a = 0.1          5         N(0, I_d)
    metropolis3     exp(-(32 x1)^2 / 2) exp(-(x2 / 32)^2 / 2)    2         N(0, I_2)
    2dplanes        Breiman's 2dplanes (:func:`target_2dplanes`) 10        x1 ~ U{-1, 1},
                                                                           x2..x10 ~ U{-1, 0, 1}

For Friedman 2 and 3, ``z1 = 100 x1``, ``z2 = 520 pi x2 + 40 pi``, ``z3 = x3``,
``z4 = 10 x4 + 1`` with ``x in [0, 1]^4``: this is exactly what
:func:`sklearn.datasets.make_friedman2` / ``make_friedman3`` sample, expressed
on the unit cube (the HARFE experiments build their features on the unit cube).

:data:`SYNTHETIC_DATASETS` maps each name above to a :class:`SyntheticSpec`
(generator, target, dimension, input distribution, reference);
:func:`make_synthetic` dispatches on the name.

The generators are vectorised NumPy: evaluating a closed-form target costs a
few passes over ``X``, so there is nothing for a numba kernel to gain here.

Real data
---------
:func:`load_uci` reads the six shared UCI-derived sets with the preprocessing of
the data sets' README (seeded shuffle, fixed train/test rows, training-set
standardisation, appended noise columns); :data:`UCI_DATASETS` describes them,
with the published test MSEs to print beside a reproduction.
"""

from __future__ import annotations

import functools
import os
import warnings
from pathlib import Path
from typing import Callable, NamedTuple

import numpy as np
import scipy.io
import scipy.special

from rflite._core.validation import check_array, check_choice, check_int, check_real
from rflite._core.random import check_rng

__all__ = [
    "Sample",
    "SyntheticSpec",
    "SYNTHETIC_DATASETS",
    "make_synthetic",
    # HARFE Table 1
    "target_harfe1", "make_harfe1",
    "target_harfe2", "make_harfe2",
    "target_harfe3", "make_harfe3",
    "target_harfe4", "make_harfe4",
    # Friedman
    "target_friedman1", "make_friedman1",
    "target_friedman2", "make_friedman2",
    "target_friedman3", "make_friedman3",
    "make_friedman_gfc",
    "friedman23_inputs",
    "FRIEDMAN23_SCALE",
    "FRIEDMAN23_OFFSET",
    "GFC_N_SAMPLES",
    # SHRIMP
    "target_shrimp1", "make_shrimp1",
    "target_shrimp2", "make_shrimp2",
    "target_shrimp3", "make_shrimp3",
    "target_shrimp4", "make_shrimp4",
    "target_shrimp5", "make_shrimp5",
    "target_shrimp6", "make_shrimp6",
    "target_shrimp7", "make_shrimp7",
    "target_shrimp_support", "make_shrimp_support",
    # Metropolis
    "target_metropolis1", "make_metropolis1",
    "target_metropolis2", "make_metropolis2",
    "target_metropolis3", "make_metropolis3",
    # Breiman
    "target_2dplanes", "make_2dplanes",
    # real data
    "UCIInfo",
    "UCIDataset",
    "UCI_DATASETS",
    "DATA_ENV_VAR",
    "STANDARDISE_DDOF",
    "uci_path",
    "load_uci",
]

#: Number of points in the GFC paper's synthetic "friedman" and "breiman" sets.
GFC_N_SAMPLES = 40768

#: Environment variable consulted for the data directory when no ``data_dir``
#: argument is given.
DATA_ENV_VAR = "RFLITE_DATA"

#: Default ``ddof`` of the training standard deviation in :func:`load_uci`.
STANDARDISE_DDOF = 0

# The default data directory, found beside the repository checkout.
_DEFAULT_DATA_DIR = Path(__file__).resolve().parents[2] / "shared" / "data"

#: Copies shipped inside the package (the small sets the showcase uses), the
#: last place looked in, so that an installed rflite runs without the repository.
_PACKAGED_DATA_DIR = Path(__file__).resolve().parent / "data"


class Sample(NamedTuple):
    """A synthetic sample: inputs ``X`` (n_samples, d) and targets ``y`` (n_samples,)."""

    X: np.ndarray
    y: np.ndarray


# =========================================================================
# shared plumbing
# =========================================================================
def _check_X(X, *, d_min: int, d_exact: int | None = None) -> np.ndarray:
    """Coerce ``X`` to a finite float64 (m, d) array with enough columns."""
    X = check_array(X, "X", ndim=2, min_rows=0)
    if d_exact is not None and X.shape[1] != d_exact:
        raise ValueError(f"X must have exactly {d_exact} column(s), got shape {X.shape}")
    if X.shape[1] < d_min:
        raise ValueError(f"X must have at least {d_min} column(s), got shape {X.shape}")
    return X


def _uniform(lo: float, hi: float):
    def draw(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
        return rng.uniform(lo, hi, size=(n, d))

    draw.__doc__ = f"x ~ U[{lo:g}, {hi:g}]^d"
    return draw


def _normal(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    """x ~ N(0, I_d)."""
    return rng.standard_normal((n, d))


def _generate(target, sampler, n_samples, d, noise, rng, **target_kw) -> Sample:
    """Validate, draw ``X`` then the noise, and evaluate the target."""
    rng = check_rng(rng)
    X = sampler(rng, n_samples, d)
    e = rng.standard_normal(n_samples)
    y = target(X, **target_kw) + noise * e
    return Sample(X, y)


def _check_common(n_samples, noise, d=None, d_min=1):
    n_samples = check_int(n_samples, "n_samples", minimum=1)
    if d is not None:
        d = check_int(d, "d", minimum=d_min)
    noise = check_real(noise, "noise", minimum=0.0)
    return n_samples, d, noise


# =========================================================================
# HARFE Table 1 (Saha, Schaeffer, Tran), x ~ U[-1, 1]^d
# =========================================================================
def target_harfe1(X) -> np.ndarray:
    r"""Inverse multiquadric, HARFE Table 1 column 1.

    .. math:: f(x) = \frac{1}{\sqrt{1 + \|x\|_2^2}}

    Parameters
    ----------
    X : (m, d) array_like, d >= 1

    Returns
    -------
    f : (m,) ndarray

    References
    ----------
    Saha, Schaeffer, Tran, "HARFE: Hard-Ridge Random Feature Expansion" (2023),
    Sec. 4.1, Table 1 (d = 5, x ~ U[-1, 1]^d).
    """
    X = _check_X(X, d_min=1)
    return 1.0 / np.sqrt(1.0 + np.einsum("ij,ij->i", X, X))


def make_harfe1(n_samples, *, d=5, noise=0.0, rng=None) -> Sample:
    """Sample :func:`target_harfe1` with ``x ~ U[-1, 1]^d`` (HARFE Table 1, d = 5).

    Parameters
    ----------
    n_samples : int >= 1
    d : int >= 1, default 5
    noise : float >= 0, default 0
        Standard deviation of the additive Gaussian noise on ``y``.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    Sample
        ``X`` (n_samples, d) and ``y`` (n_samples,).
    """
    n_samples, d, noise = _check_common(n_samples, noise, d, 1)
    return _generate(target_harfe1, _uniform(-1.0, 1.0), n_samples, d, noise, rng)


def target_harfe2(X) -> np.ndarray:
    r"""Multiquadric, HARFE Table 1 column 2.

    .. math:: f(x) = \sqrt{1 + \|x\|_2^2}

    References
    ----------
    Saha, Schaeffer, Tran, HARFE (2023), Sec. 4.1, Table 1 (d = 5); also the
    timing study of Fig. 3 (d = 50 ... 200).
    """
    X = _check_X(X, d_min=1)
    return np.sqrt(1.0 + np.einsum("ij,ij->i", X, X))


def make_harfe2(n_samples, *, d=5, noise=0.0, rng=None) -> Sample:
    """Sample :func:`target_harfe2` with ``x ~ U[-1, 1]^d`` (HARFE Table 1, d = 5).

    Parameters and return value as in :func:`make_harfe1`.
    """
    n_samples, d, noise = _check_common(n_samples, noise, d, 1)
    return _generate(target_harfe2, _uniform(-1.0, 1.0), n_samples, d, noise, rng)


def target_harfe3(X) -> np.ndarray:
    r"""Rational product, HARFE Table 1 column 3.

    .. math:: f(x) = \frac{x_1 x_2}{1 + x_3^6}

    Columns beyond the third are inert (d = 5 in the paper).

    References
    ----------
    Saha, Schaeffer, Tran, HARFE (2023), Sec. 4.1, Table 1 (d = 5).
    """
    X = _check_X(X, d_min=3)
    return X[:, 0] * X[:, 1] / (1.0 + X[:, 2] ** 6)


def make_harfe3(n_samples, *, d=5, noise=0.0, rng=None) -> Sample:
    """Sample :func:`target_harfe3` with ``x ~ U[-1, 1]^d``, d >= 3 (Table 1: d = 5).

    Parameters and return value as in :func:`make_harfe1`.
    """
    n_samples, d, noise = _check_common(n_samples, noise, d, 3)
    return _generate(target_harfe3, _uniform(-1.0, 1.0), n_samples, d, noise, rng)


def target_harfe4(X) -> np.ndarray:
    r"""Sum of Laplace bumps, HARFE Table 1 column 4.

    .. math:: f(x) = \sum_{i=1}^d \exp(-|x_i|)

    References
    ----------
    Saha, Schaeffer, Tran, HARFE (2023), Sec. 4.1, Table 1 (d = 100).  The
    plain-text copy of the paper reads ``exp(- x_i)``; the absolute value
    follows the project spec (that copy also drops the bars of ``||x||_2``).
    """
    X = _check_X(X, d_min=1)
    return np.exp(-np.abs(X)).sum(axis=1)


def make_harfe4(n_samples, *, d=100, noise=0.0, rng=None) -> Sample:
    """Sample :func:`target_harfe4` with ``x ~ U[-1, 1]^d`` (HARFE Table 1, d = 100).

    Parameters and return value as in :func:`make_harfe1` (default ``d = 100``).
    """
    n_samples, d, noise = _check_common(n_samples, noise, d, 1)
    return _generate(target_harfe4, _uniform(-1.0, 1.0), n_samples, d, noise, rng)


# =========================================================================
# Friedman 1/2/3 (as sklearn.datasets.make_friedman1/2/3)
# =========================================================================
#: Affine maps from the unit cube to sklearn's Friedman 2/3 input box:
#: ``z = FRIEDMAN23_SCALE * x + FRIEDMAN23_OFFSET``.
FRIEDMAN23_SCALE = np.array([100.0, 520.0 * np.pi, 1.0, 10.0])
FRIEDMAN23_OFFSET = np.array([0.0, 40.0 * np.pi, 0.0, 1.0])
FRIEDMAN23_SCALE.flags.writeable = False
FRIEDMAN23_OFFSET.flags.writeable = False


def friedman23_inputs(X) -> np.ndarray:
    r"""Map unit-cube inputs to sklearn's Friedman 2/3 box.

    .. math:: z_1 = 100 x_1,\ z_2 = 520\pi x_2 + 40\pi,\ z_3 = x_3,\ z_4 = 10 x_4 + 1

    Parameters
    ----------
    X : (m, 4) array_like
        Points of :math:`[0, 1]^4`.

    Returns
    -------
    Z : (m, 4) ndarray
        The same points as :func:`sklearn.datasets.make_friedman2` returns them.
        ``(Z - FRIEDMAN23_OFFSET) / FRIEDMAN23_SCALE`` maps back.
    """
    X = _check_X(X, d_min=4, d_exact=4)
    return X * FRIEDMAN23_SCALE + FRIEDMAN23_OFFSET


def target_friedman1(X) -> np.ndarray:
    r"""Friedman 1.

    .. math:: f(x) = 10 \sin(\pi x_1 x_2) + 20 (x_3 - 1/2)^2 + 10 x_4 + 5 x_5

    Columns beyond the fifth are inert.  Same formula as
    :func:`sklearn.datasets.make_friedman1`.

    References
    ----------
    J. H. Friedman, "Multivariate adaptive regression splines", Ann. Statist.
    19(1), 1991.  Used in HARFE (2023) Sec. 4.2, Table 2 (d = 10, noise sd 1.0)
    and Fig. 4 (``g`` on [0, 1]^20), and in Oglic & Gaertner, "Greedy feature
    construction", NIPS 2016 (the "friedman" set, see :func:`make_friedman_gfc`).
    """
    X = _check_X(X, d_min=5)
    return (
        10.0 * np.sin(np.pi * X[:, 0] * X[:, 1])
        + 20.0 * (X[:, 2] - 0.5) ** 2
        + 10.0 * X[:, 3]
        + 5.0 * X[:, 4]
    )


def make_friedman1(n_samples, *, d=10, noise=0.0, rng=None) -> Sample:
    """Sample Friedman 1 (:func:`target_friedman1`) with ``x ~ U[0, 1]^d``.

    ``d = 10`` is sklearn's default and HARFE Table 2 (noise sd 1.0);
    ``d = 20`` is the feature-selection function ``g`` of HARFE Fig. 4.

    Parameters
    ----------
    n_samples : int >= 1
    d : int >= 5, default 10
    noise : float >= 0, default 0
    rng : None, int or numpy.random.Generator

    Returns
    -------
    Sample
        ``X`` (n_samples, d) in [0, 1)^d and ``y`` (n_samples,).

    Examples
    --------
    >>> X, y = make_friedman1(200, noise=1.0, rng=0)
    >>> X.shape, y.shape
    ((200, 10), (200,))
    """
    n_samples, d, noise = _check_common(n_samples, noise, d, 5)
    return _generate(target_friedman1, _uniform(0.0, 1.0), n_samples, d, noise, rng)


def _friedman23_parts(X):
    Z = friedman23_inputs(X)
    return Z[:, 0], Z[:, 1] * Z[:, 2] - 1.0 / (Z[:, 1] * Z[:, 3])


def target_friedman2(X) -> np.ndarray:
    r"""Friedman 2 on the unit cube.

    .. math:: f(x) = \sqrt{z_1^2 + \bigl(z_2 z_3 - 1/(z_2 z_4)\bigr)^2}

    with ``z`` = :func:`friedman23_inputs` ``(x)``, ``x in [0, 1]^4``: equal to
    :func:`sklearn.datasets.make_friedman2`'s ``y`` on the rescaled inputs.

    References
    ----------
    Friedman (1991); L. Breiman, "Bagging predictors", Machine Learning 24,
    1996.  HARFE (2023) Table 2 uses noise sd 125.
    """
    z1, r = _friedman23_parts(X)
    return np.sqrt(z1**2 + r**2)


def make_friedman2(n_samples, *, noise=0.0, rng=None) -> Sample:
    """Sample Friedman 2 (:func:`target_friedman2`) with ``x ~ U[0, 1]^4``.

    ``X`` is returned on the unit cube (not sklearn's scaled box; see
    :func:`friedman23_inputs`).  HARFE Table 2 uses ``noise = 125.0``.

    Parameters
    ----------
    n_samples : int >= 1
    noise : float >= 0, default 0
    rng : None, int or numpy.random.Generator

    Returns
    -------
    Sample
        ``X`` (n_samples, 4) and ``y`` (n_samples,).
    """
    n_samples, _, noise = _check_common(n_samples, noise)
    return _generate(target_friedman2, _uniform(0.0, 1.0), n_samples, 4, noise, rng)


def target_friedman3(X) -> np.ndarray:
    r"""Friedman 3 on the unit cube.

    .. math:: f(x) = \arctan\frac{z_2 z_3 - 1/(z_2 z_4)}{z_1}

    with ``z`` = :func:`friedman23_inputs` ``(x)``.  Written as sklearn writes
    it (``arctan(r / z1)``); ``x_1 = 0`` gives :math:`\pm\pi/2`.

    References
    ----------
    Friedman (1991); Breiman (1996).  HARFE (2023) Table 2 uses noise sd 0.1.
    """
    z1, r = _friedman23_parts(X)
    with np.errstate(divide="ignore"):
        return np.arctan(r / z1)


def make_friedman3(n_samples, *, noise=0.0, rng=None) -> Sample:
    """Sample Friedman 3 (:func:`target_friedman3`) with ``x ~ U[0, 1]^4``.

    HARFE Table 2 uses ``noise = 0.1``.  Parameters and return value as in
    :func:`make_friedman2`.
    """
    n_samples, _, noise = _check_common(n_samples, noise)
    return _generate(target_friedman3, _uniform(0.0, 1.0), n_samples, 4, noise, rng)


def make_friedman_gfc(n_samples=GFC_N_SAMPLES, *, noise=1.0, rng=None) -> Sample:
    """The GFC paper's "friedman" set: Friedman 1, d = 10, noise N(0, 1).

    Same as ``make_friedman1(n_samples, d=10, noise=noise, rng=rng)``.

    Parameters
    ----------
    n_samples : int >= 1, default 40768 (the paper's size)
    noise : float >= 0, default 1.0
    rng : None, int or numpy.random.Generator

    References
    ----------
    D. Oglic, T. Gaertner, "Greedy Feature Construction", NIPS 2016, Table 1
    (GFC: RMSE x 100 of 3.29 with 100 features, 3.16 with 500, target scaled
    to range 1).
    """
    return make_friedman1(n_samples, d=10, noise=noise, rng=rng)


# =========================================================================
# SHRIMP (Xie, Shi, Schaeffer, Ward), Sec. 4.1 and Fig. 4
# =========================================================================
def target_shrimp1(X) -> np.ndarray:
    r"""SHRIMP f1, additive and dense in the variables.

    .. math:: f_1(x) = \sum_{i=1}^{d-1} x_i + \exp(-x_d)

    References
    ----------
    Y. Xie, B. Shi, H. Schaeffer, R. Ward, "SHRIMP: Sparser Random Feature
    Models via Iterative Magnitude Pruning", MSML 2022, Sec. 4.1, Table 2
    (d = 10 low-dim, d = 100 high-dim, x ~ U[-1, 1]^d).
    """
    X = _check_X(X, d_min=1)
    return X[:, :-1].sum(axis=1) + np.exp(-X[:, -1])


def target_shrimp2(X) -> np.ndarray:
    r"""SHRIMP f2: :math:`f_2(x) = \cos(x_1) + \sin(x_2)`.

    References
    ----------
    Xie, Shi, Schaeffer, Ward, SHRIMP (2022), Sec. 4.1, Table 2.
    """
    X = _check_X(X, d_min=2)
    return np.cos(X[:, 0]) + np.sin(X[:, 1])


def target_shrimp3(X) -> np.ndarray:
    r"""SHRIMP f3: :math:`f_3(x) = (2x_1 - 1)(2x_2 - 1)` (pairwise, from Liu et al. 2020).

    References
    ----------
    Xie, Shi, Schaeffer, Ward, SHRIMP (2022), Sec. 4.1, Table 2.
    """
    X = _check_X(X, d_min=2)
    return (2.0 * X[:, 0] - 1.0) * (2.0 * X[:, 1] - 1.0)


def target_shrimp4(X) -> np.ndarray:
    r"""SHRIMP f4, sum of the three pairwise products of :math:`u_i = 2x_i - 1`.

    .. math:: f_4(x) = u_1 u_2 + u_1 u_3 + u_2 u_3,\quad u_i = 2 x_i - 1

    References
    ----------
    Xie, Shi, Schaeffer, Ward, SHRIMP (2022), Sec. 4.1, Table 2.
    """
    X = _check_X(X, d_min=3)
    u = 2.0 * X[:, :3] - 1.0
    return u[:, 0] * u[:, 1] + u[:, 0] * u[:, 2] + u[:, 1] * u[:, 2]


def target_shrimp5(X) -> np.ndarray:
    r"""SHRIMP f5, low-order and non-smooth (from Hashemi et al. 2021).

    .. math:: f_5(x) = \mathrm{sinc}(x_1)\,\mathrm{sinc}(x_3)^3 + \mathrm{sinc}(x_2)

    with NumPy's normalised :math:`\mathrm{sinc}(t) = \sin(\pi t) / (\pi t)`
    (:func:`numpy.sinc`).

    References
    ----------
    Xie, Shi, Schaeffer, Ward, SHRIMP (2022), Sec. 4.1, Table 2.
    """
    X = _check_X(X, d_min=3)
    return np.sinc(X[:, 0]) * np.sinc(X[:, 2]) ** 3 + np.sinc(X[:, 1])


def target_shrimp6(X) -> np.ndarray:
    r"""SHRIMP f6, the Ishigami function.

    .. math:: f_6(x) = \sin(x_1) + 7 \sin^2(x_2) + 0.1\, x_3^4 \sin(x_1)

    References
    ----------
    T. Ishigami, T. Homma, "An importance quantification technique in
    uncertainty analysis for computer models", ISUMA 1990.  SHRIMP (2022),
    Sec. 4.1, Table 2, sampled on U[-pi, pi]^d.
    """
    X = _check_X(X, d_min=3)
    s1 = np.sin(X[:, 0])
    return s1 + 7.0 * np.sin(X[:, 1]) ** 2 + 0.1 * X[:, 2] ** 4 * s1


def target_shrimp7(X) -> np.ndarray:
    r"""SHRIMP f7, order 2 with many order-1 terms.

    .. math:: f_7(x) = \cos(x_1) x_3 + x_2^2 x_4 + \sum_{i=3}^d x_i

    (the sum includes :math:`x_3` and :math:`x_4` again, as printed).

    References
    ----------
    Xie, Shi, Schaeffer, Ward, SHRIMP (2022), Sec. 4.1, Table 2, Figs. 5-6.
    """
    X = _check_X(X, d_min=4)
    return np.cos(X[:, 0]) * X[:, 2] + X[:, 1] ** 2 * X[:, 3] + X[:, 2:].sum(axis=1)


def target_shrimp_support(X) -> np.ndarray:
    r"""SHRIMP's support-recovery function.

    .. math:: f_s(x) = 3 \cos(x_3) + 4 \sin(x_4) + 2 \sin(x_2)

    1-based indices: ``x_3`` is ``X[:, 2]``.  Only :math:`x_2, x_3, x_4` are
    active; a pruned ``[cos, sin]`` dictionary should keep cos-features on
    :math:`x_3` and sin-features on :math:`x_2, x_4`.

    References
    ----------
    Xie, Shi, Schaeffer, Ward, SHRIMP (2022), Sec. 4.2 "Sparse Support
    Recovery", Fig. 4 (m = 1000, x ~ U[-1, 1]^5); also the timing study, Fig. 2.
    """
    X = _check_X(X, d_min=4)
    return 3.0 * np.cos(X[:, 2]) + 4.0 * np.sin(X[:, 3]) + 2.0 * np.sin(X[:, 1])


_SHRIMP_DOC = """Sample :func:`{target}` with ``x ~ {dist}``.

    Parameters
    ----------
    n_samples : int >= 1
        SHRIMP Table 2 uses m = 140 (low-dim, d = 10) and m = 1400 (high-dim,
        d = 100), split 90 / 10 into training and validation.
    d : int >= {d_min}, default {d}
    noise : float >= 0, default 0 (the paper adds no noise)
    rng : None, int or numpy.random.Generator

    Returns
    -------
    Sample
        ``X`` (n_samples, d) and ``y`` (n_samples,).
    """


def _shrimp_maker(target, d_min, lo=-1.0, hi=1.0, d_default=10, name=None, dist=None):
    sampler = _uniform(lo, hi)

    def make(n_samples, *, d=d_default, noise=0.0, rng=None) -> Sample:
        n_samples, d, noise = _check_common(n_samples, noise, d, d_min)
        return _generate(target, sampler, n_samples, d, noise, rng)

    make.__name__ = make.__qualname__ = name
    make.__doc__ = _SHRIMP_DOC.format(
        target=target.__name__, dist=dist or "U[-1, 1]^d", d_min=d_min, d=d_default
    )
    make.__module__ = __name__
    return make


make_shrimp1 = _shrimp_maker(target_shrimp1, 1, name="make_shrimp1")
make_shrimp2 = _shrimp_maker(target_shrimp2, 2, name="make_shrimp2")
make_shrimp3 = _shrimp_maker(target_shrimp3, 2, name="make_shrimp3")
make_shrimp4 = _shrimp_maker(target_shrimp4, 3, name="make_shrimp4")
make_shrimp5 = _shrimp_maker(target_shrimp5, 3, name="make_shrimp5")
make_shrimp6 = _shrimp_maker(
    target_shrimp6, 3, -np.pi, np.pi, name="make_shrimp6", dist="U[-pi, pi]^d"
)
make_shrimp7 = _shrimp_maker(target_shrimp7, 4, name="make_shrimp7")
make_shrimp_support = _shrimp_maker(
    target_shrimp_support, 4, d_default=5, name="make_shrimp_support"
)


# =========================================================================
# Adaptive random Fourier features with Metropolis sampling, Sec. 5
# =========================================================================
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


# =========================================================================
# Breiman's 2dplanes
# =========================================================================
def target_2dplanes(X) -> np.ndarray:
    r"""Breiman's 2dplanes, noise-free.

    .. math::
        f(x) = \begin{cases}
            3 + 3x_2 + 2x_3 + x_4 & x_1 = 1\\
            -3 + 3x_5 + 2x_6 + x_7 & x_1 = -1
        \end{cases}

    The branch test is ``x_1 > 0``, identical on the domain
    :math:`x_1 \in \{-1, 1\}`.  Columns 8-10 are inert.

    References
    ----------
    L. Breiman, J. Friedman, R. Olshen, C. Stone, "Classification and
    Regression Trees", 1984, Sec. 8.6; used as "breiman" in Oglic & Gaertner,
    "Greedy Feature Construction", NIPS 2016, Table 1.
    """
    X = _check_X(X, d_min=10, d_exact=10)
    upper = 3.0 + 3.0 * X[:, 1] + 2.0 * X[:, 2] + X[:, 3]
    lower = -3.0 + 3.0 * X[:, 4] + 2.0 * X[:, 5] + X[:, 6]
    return np.where(X[:, 0] > 0, upper, lower)


def _two_d_planes_inputs(rng, n, d):
    X = rng.integers(-1, 2, size=(n, d)).astype(np.float64)
    X[:, 0] = 2.0 * rng.integers(0, 2, size=n) - 1.0
    return X


def make_2dplanes(n_samples=GFC_N_SAMPLES, *, noise=1.0, rng=None) -> Sample:
    """Sample Breiman's 2dplanes (the GFC paper's "breiman" set).

    ``x_1`` uniform on {-1, 1}, ``x_2 .. x_10`` uniform on {-1, 0, 1},
    independently; ``y = target_2dplanes(x) + noise * e``, ``e ~ N(0, 1)``.

    Parameters
    ----------
    n_samples : int >= 1, default 40768 (the paper's size)
    noise : float >= 0, default 1.0 (part of the definition)
    rng : None, int or numpy.random.Generator

    Returns
    -------
    Sample
        ``X`` (n_samples, 10) of float64 in {-1, 0, 1} and ``y`` (n_samples,).
    """
    n_samples, _, noise = _check_common(n_samples, noise)
    return _generate(target_2dplanes, _two_d_planes_inputs, n_samples, 10, noise, rng)


# =========================================================================
# registry
# =========================================================================
class SyntheticSpec(NamedTuple):
    """Registry entry for one synthetic target.

    Attributes
    ----------
    make : callable
        ``make(n_samples, *, [d=...,] noise=..., rng=None) -> Sample``.
    target : callable
        Noise-free ``target(X) -> y``.
    d : int
        Default (paper) input dimension.
    d_fixed : bool
        Whether ``make`` has no ``d`` argument (the dimension is part of the
        definition).
    domain : str
        Input distribution.
    reference : str
        Paper and place.
    """

    make: Callable
    target: Callable
    d: int
    d_fixed: bool
    domain: str
    reference: str


_U11 = "U[-1, 1]^d"
SYNTHETIC_DATASETS: dict[str, SyntheticSpec] = {
    "harfe1": SyntheticSpec(make_harfe1, target_harfe1, 5, False, _U11, "HARFE Table 1, col 1"),
    "harfe2": SyntheticSpec(make_harfe2, target_harfe2, 5, False, _U11, "HARFE Table 1, col 2"),
    "harfe3": SyntheticSpec(make_harfe3, target_harfe3, 5, False, _U11, "HARFE Table 1, col 3"),
    "harfe4": SyntheticSpec(make_harfe4, target_harfe4, 100, False, _U11, "HARFE Table 1, col 4"),
    "friedman1": SyntheticSpec(
        make_friedman1, target_friedman1, 10, False, "U[0, 1]^d", "HARFE Table 2 / Fig. 4"
    ),
    "friedman2": SyntheticSpec(
        make_friedman2, target_friedman2, 4, True, "U[0, 1]^4", "HARFE Table 2"
    ),
    "friedman3": SyntheticSpec(
        make_friedman3, target_friedman3, 4, True, "U[0, 1]^4", "HARFE Table 2"
    ),
    "friedman_gfc": SyntheticSpec(
        make_friedman_gfc, target_friedman1, 10, True, "U[0, 1]^10", "GFC Table 1 'friedman'"
    ),
    "shrimp1": SyntheticSpec(make_shrimp1, target_shrimp1, 10, False, _U11, "SHRIMP Table 2"),
    "shrimp2": SyntheticSpec(make_shrimp2, target_shrimp2, 10, False, _U11, "SHRIMP Table 2"),
    "shrimp3": SyntheticSpec(make_shrimp3, target_shrimp3, 10, False, _U11, "SHRIMP Table 2"),
    "shrimp4": SyntheticSpec(make_shrimp4, target_shrimp4, 10, False, _U11, "SHRIMP Table 2"),
    "shrimp5": SyntheticSpec(make_shrimp5, target_shrimp5, 10, False, _U11, "SHRIMP Table 2"),
    "shrimp6": SyntheticSpec(
        make_shrimp6, target_shrimp6, 10, False, "U[-pi, pi]^d", "SHRIMP Table 2 (Ishigami)"
    ),
    "shrimp7": SyntheticSpec(make_shrimp7, target_shrimp7, 10, False, _U11, "SHRIMP Table 2"),
    "shrimp_support": SyntheticSpec(
        make_shrimp_support, target_shrimp_support, 5, False, _U11, "SHRIMP Fig. 4"
    ),
    "metropolis1": SyntheticSpec(
        make_metropolis1, target_metropolis1, 1, True, "N(0, 1)", "ARFF-Metropolis Case 1"
    ),
    "metropolis2": SyntheticSpec(
        make_metropolis2, target_metropolis2, 5, False, "N(0, I_d)", "ARFF-Metropolis Case 2"
    ),
    "metropolis3": SyntheticSpec(
        make_metropolis3, target_metropolis3, 2, True, "N(0, I_2)", "ARFF-Metropolis Case 3"
    ),
    "2dplanes": SyntheticSpec(
        make_2dplanes, target_2dplanes, 10, True,
        "x1 ~ U{-1, 1}, x2..x10 ~ U{-1, 0, 1}", "GFC Table 1 'breiman'",
    ),
}


def make_synthetic(name, n_samples, **kwargs) -> Sample:
    """Dispatch to the generator registered as ``name`` in :data:`SYNTHETIC_DATASETS`.

    Parameters
    ----------
    name : str
        A key of :data:`SYNTHETIC_DATASETS`.
    n_samples : int >= 1
    **kwargs
        Passed on (``d``, ``noise``, ``rng``, ``a`` where the generator has them).

    Raises
    ------
    ValueError
        For an unknown ``name`` (or bad arguments, from the generator).
    """
    check_choice(name, "name", SYNTHETIC_DATASETS)
    return SYNTHETIC_DATASETS[name].make(n_samples, **kwargs)


# =========================================================================
# Real data
# =========================================================================
class UCIInfo(NamedTuple):
    """Description of one shared UCI-derived set (as in the data sets' README).

    Attributes
    ----------
    file : str
        Path relative to the data directory (``uci/...``).
    fmt : str
        ``"whitespace"``, ``"comma"`` or ``"mat"``.
    inputs : tuple of int or None
        0-based input columns of the text table (README columns minus one);
        ``None`` for .mat files (all columns of the input matrix).
    target : int or None
        0-based target column of the text table; ``None`` for .mat files.
    mat_keys : tuple of str or None
        ``(inputs, target)`` variable names of a .mat file.
    log_target : bool
        Take ``log`` of the target (propulsion).
    n_train, n_test : int
        Rows taken after the shuffle (train first, then test).
    n_noise : int
        N(0, 1) noise columns appended by default.
    d : int
        Input dimension after the noise columns.
    published : dict
        Published test MSE on the standardised target, by method
        (``None`` where the paper has no number).
    harfe_params : dict
        HARFE's published ``N``, ``s``, ``m_lambda`` (= m * lambda) and ``q``.
    shrimp_q : int or None
        The ``q`` of the published SHRIMP number.
    """

    file: str
    fmt: str
    inputs: tuple | None
    target: int | None
    mat_keys: tuple | None
    log_target: bool
    n_train: int
    n_test: int
    n_noise: int
    d: int
    published: dict
    harfe_params: dict
    shrimp_q: int | None


def _cols(*ranges) -> tuple:
    """0-based column indices from inclusive 1-based ranges."""
    out = []
    for lo, hi in ranges:
        out.extend(range(lo - 1, hi))
    return tuple(out)


def _pub(harfe, shrimp, salsa, srfe, lasso):
    return {"HARFE": harfe, "SHRIMP": shrimp, "SALSA": salsa, "SRFE": srfe, "Lasso": lasso}


def _hp(N, s, m_lambda, q):
    return {"N": N, "s": s, "m_lambda": m_lambda, "q": q}


#: The six shared sets, with the README's preprocessing and published numbers.
UCI_DATASETS: dict[str, UCIInfo] = {
    "propulsion": UCIInfo(
        "uci/propulsion.txt", "whitespace", _cols((3, 8), (10, 18)), 1, None, True,
        200, 200, 0, 15,
        _pub(4.17e-5, 1.02e-6, 8.8e-3, 1.54e-2, 2.48e-2), _hp(3000, 300, 1e-10, 2), 2,
    ),
    "airfoil": UCIInfo(
        "uci/airfoil.txt", "whitespace", _cols((1, 5)), 5, None, False,
        750, 750, 36, 41,
        _pub(0.449, 0.265, 0.518, 0.570, 0.520), _hp(80000, 5000, 1.0, 2), 2,
    ),
    "ccpp": UCIInfo(
        "uci/ccpp.mat", "mat", None, None, ("XTrain", "YTrain"), False,
        2000, 2000, 55, 59,
        _pub(0.0677, 0.0655, 0.0678, 0.0744, 0.0740), _hp(10000, 1000, 0.05, 1), 2,
    ),
    "housing": UCIInfo(
        "uci/housing.txt", "whitespace", _cols((2, 3), (5, 14)), 0, None, False,
        256, 250, 0, 12,
        _pub(0.264, 0.394, 0.262, 0.640, 0.445), _hp(10000, 1000, 0.1, 2), 7,
    ),
    "speech": UCIInfo(
        "uci/parkinson21.txt", "comma", _cols((1, 14), (20, 26)), 14, None, False,
        520, 520, 0, 21,
        _pub(0.0238, None, 0.0224, 0.0246, 0.0730), _hp(20000, 1000, 0.1, 2), None,
    ),
    "insulin": UCIInfo(
        "uci/epidata.mat", "mat", None, None, ("snp_data", "insulin_data"), False,
        256, 250, 0, 50,
        _pub(1.014, 1.24, 1.021, 1.646, 1.110), _hp(2560, 170, 2.75, 2), 1,
    ),
}


class UCIDataset(NamedTuple):
    """A preprocessed UCI split (see :func:`load_uci`).

    Attributes
    ----------
    X_train, y_train, X_test, y_test : ndarray
        Standardised with the training statistics; noise columns (if any) are
        the last ``n_noise`` columns of ``X_*``.
    name : str
    d : int
        ``X_train.shape[1]``.
    y_mean, y_std : float
        Training mean and standard deviation of the raw target (of ``log y``
        for propulsion): ``y_raw = y * y_std + y_mean``.
    x_mean, x_std : (d - n_noise,) ndarray
        The same for the input columns (``x_std`` is 1 for constant columns).
    n_noise : int
        Number of appended N(0, 1) columns.
    """

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    name: str
    d: int
    y_mean: float
    y_std: float
    x_mean: np.ndarray
    x_std: np.ndarray
    n_noise: int


def uci_path(name, data_dir=None) -> Path:
    """Locate the file of UCI set ``name``.

    Looked up in order: ``data_dir``, then ``$RFLITE_DATA``, then
    the default data directory beside the repository checkout, then the copies
    shipped inside the package
    (``housing`` and ``airfoil`` only, byte-identical to the shared files).  Each directory may hold the files either
    under ``uci/`` or directly.  When an explicitly given location (argument
    or environment variable) lacks the file but a later one has it, a
    ``UserWarning`` names the skipped location.

    Raises
    ------
    ValueError
        For an unknown ``name``.
    FileNotFoundError
        When none of the three locations holds the file; the message lists all
        three.
    """
    check_choice(name, "name", UCI_DATASETS)
    return _locate(name, data_dir, stacklevel=3)


def _locate(name, data_dir, *, stacklevel) -> Path:
    """The search behind :func:`uci_path`; ``stacklevel`` points the warning at the user."""
    rel = Path(UCI_DATASETS[name].file)
    env = os.environ.get(DATA_ENV_VAR) or None
    candidates = [
        (f"data_dir argument ({data_dir})" if data_dir is not None
         else "data_dir argument (not given)", data_dir),
        (f"${DATA_ENV_VAR} ({env})" if env else f"${DATA_ENV_VAR} (not set)", env),
        (f"default ({_DEFAULT_DATA_DIR})", _DEFAULT_DATA_DIR),
        (f"copy shipped with rflite ({_PACKAGED_DATA_DIR}; housing and airfoil only)",
         _PACKAGED_DATA_DIR),
    ]
    skipped = []
    for index, (label, base) in enumerate(candidates):
        if base is None:
            continue
        base = Path(base).expanduser()
        for path in (base / rel, base / rel.name):
            if path.is_file():
                if skipped:
                    warnings.warn(
                        f"{rel.name} not found in {', '.join(skipped)}; using {path}",
                        UserWarning,
                        stacklevel=stacklevel,
                    )
                return path
        if index < 2:  # only locations the user named are worth a warning
            skipped.append(label)
    raise FileNotFoundError(
        f"UCI data file {str(rel)!r} for name={name!r} not found (looked for "
        f"<dir>/{rel} and <dir>/{rel.name}) in: "
        + "; ".join(label for label, _ in candidates)
        + f". Pass data_dir=..., or set {DATA_ENV_VAR}."
    )


@functools.lru_cache(maxsize=16)
def _read_table(path: str, fmt: str, mat_keys, mtime_ns: int):
    """Read a raw table once per (path, modification time); arrays are read-only.

    Every failure of the readers (a truncated or foreign ``.mat`` file, a
    missing variable, text that is not numbers, ragged rows) becomes a
    ``ValueError`` that names the file and says what is wrong, instead of the
    reader's own message, which names neither.
    """
    if fmt == "mat":
        try:
            mat = scipy.io.loadmat(path)
        except Exception as exc:  # scipy raises ValueError, TypeError, MatReadError, ...
            raise ValueError(f"{path}: not a readable MATLAB .mat file "
                             f"({type(exc).__name__}: {exc})") from exc
        missing = [k for k in mat_keys if k not in mat]
        if missing:
            found = sorted(k for k in mat if not k.startswith("__"))
            raise ValueError(f"{path}: MATLAB variable(s) {missing} missing; the file holds {found}")
        tables = []
        for key in mat_keys:
            try:
                tables.append(np.asarray(mat[key], dtype=np.float64))
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{path}: MATLAB variable {key!r} is not a numeric array "
                                 f"({exc})") from exc
        X, y = tables
        if X.ndim != 2 or y.size != X.shape[0]:
            raise ValueError(f"{path}: {mat_keys[0]!r} must be a 2-D array with one row per "
                             f"entry of {mat_keys[1]!r}; shapes are {X.shape} and {y.shape}")
        tables = (X, y.ravel())
    else:
        try:
            with warnings.catch_warnings():  # an empty file is reported below, not warned
                warnings.simplefilter("ignore", UserWarning)
                table = np.loadtxt(path, delimiter="," if fmt == "comma" else None, ndmin=2)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ValueError(f"{path}: not a table of numbers "
                             f"({'comma' if fmt == 'comma' else 'whitespace'}-separated): {exc}"
                             ) from exc
        if table.size == 0:
            raise ValueError(f"{path}: no data (the file is empty or holds only comments)")
        tables = (np.asarray(table, dtype=np.float64),)
    for t in tables:
        bad = ~np.isfinite(t)
        if bad.any():
            first = np.argwhere(bad)[0]
            where = (f"row {first[0] + 1}, column {first[1] + 1}" if t.ndim == 2
                     else f"entry {first[0] + 1}")
            raise ValueError(f"{path}: {int(bad.sum())} NaN or infinite value(s) in the data, "
                             f"the first at {where} (1-based); clean or impute the file first")
        t.flags.writeable = False
    return tuple(tables)


def _standardise(train, test, ddof):
    mean = train.mean(axis=0)
    std = train.std(axis=0, ddof=ddof)
    # A constant training column (propulsion's column 12, P1 = 0.998) would give
    # 0/0, or, because the computed mean is off by an ulp, +-1 noise of size
    # 1e-15 / 1e-15.  Centre it on its exact value and leave it unscaled (as
    # sklearn's StandardScaler does), so it becomes exactly 0 on the train set.
    const = train.min(axis=0) == train.max(axis=0)
    if np.any(const):
        mean = np.where(const, train[0], mean)
        std = np.where(const, 1.0, std)
    return (train - mean) / std, (test - mean) / std, mean, std


def load_uci(name, data_dir=None, rng=None, *, n_noise=None, ddof=STANDARDISE_DDOF):
    r"""Load one of the six shared UCI sets with the papers' preprocessing.

    Steps (as in the data sets' README; columns there are 1-based):

    1. read the raw table (for propulsion, take ``log`` of the target, column 2);
    2. shuffle the rows with ``rng`` (one ``rng.permutation`` of all rows);
    3. the first ``n_train`` shuffled rows are the training set, the next
       ``n_test`` the test set (the remaining rows are unused);
    4. standardise every input column and the target with the **training** mean
       and standard deviation (``ddof``, default 0, i.e. ``np.std``); the test
       set uses the training statistics.  A constant training column is only
       centred (it becomes 0; propulsion's column 12 is constant);
    5. append ``n_noise`` independent N(0, 1) columns, drawn from ``rng`` after
       the permutation (training rows first, then test rows).  They are not
       re-standardised, following the README's order of steps.

    Parameters
    ----------
    name : str
        One of ``propulsion, airfoil, ccpp, housing, speech, insulin``
        (:data:`UCI_DATASETS`).
    data_dir : str or Path, optional
        Directory holding the files, directly or under ``uci/``; see
        :func:`uci_path` for the fallback to ``$RFLITE_DATA`` and
        the default data directory.
    rng : None, int or numpy.random.Generator
        Seeds the shuffle and the noise columns.
    n_noise : int >= 0, optional
        Noise columns to append; default the README's (36 for airfoil, 55 for
        ccpp, 0 otherwise).
    ddof : int, 0 <= ddof < n_train, default 0
        Delta degrees of freedom of the training standard deviation (the
        Metropolis paper's Algorithm 3 uses 1).

    Returns
    -------
    UCIDataset
        ``X_train (n_train, d)``, ``y_train (n_train,)``, ``X_test (n_test, d)``,
        ``y_test (n_test,)``, and metadata (``name``, ``d``, ``y_mean``,
        ``y_std``, ``x_mean``, ``x_std``, ``n_noise``).  Test MSE on ``y_test``
        is the papers' metric (1.0 = predicting the training mean, roughly).

    Raises
    ------
    ValueError
        Unknown ``name``, negative ``n_noise``, ``ddof`` not smaller than
        ``n_train``; and, naming the file, a file with too few rows or
        columns, NaN or infinite values (with the first position), text that
        is not numbers, or a ``.mat`` file that cannot be read or lacks its
        variables.
    FileNotFoundError
        When the file is in none of the searched locations.

    References
    ----------
    K. Kandasamy, Y. Yu, "Additive approximations in high dimensional
    nonparametric regression via the SALSA", ICML 2016 (the splits); HARFE
    (2023) Tables 3-4; SHRIMP (2022) Table 3.

    Examples
    --------
    >>> ds = load_uci("housing", rng=0)        # doctest: +SKIP
    >>> ds.X_train.shape, ds.X_test.shape, ds.d  # doctest: +SKIP
    ((256, 12), (250, 12), 12)
    """
    check_choice(name, "name", UCI_DATASETS)
    info = UCI_DATASETS[name]
    n_noise = info.n_noise if n_noise is None else check_int(n_noise, "n_noise", minimum=0)
    ddof = check_int(ddof, "ddof", minimum=0)
    if ddof >= info.n_train:
        # np.std would divide by n_train - ddof <= 0: an infinite (or NaN) scale
        # and all-zero standardised data.
        raise ValueError(f"ddof={ddof} must be smaller than the {info.n_train} training rows "
                         f"of name={name!r}")
    rng = check_rng(rng)
    path = _locate(name, data_dir, stacklevel=3)

    try:
        tables = _read_table(str(path), info.fmt, info.mat_keys, path.stat().st_mtime_ns)
    except ValueError as exc:  # name the request too, not only the file
        raise ValueError(f"{exc} (the data file of name={name!r}; see data_dir and "
                         f"${DATA_ENV_VAR})") from exc
    if info.fmt == "mat":
        X_all, y_all = tables
    else:
        (table,) = tables
        need = max(max(info.inputs), info.target) + 1
        if table.shape[1] < need:
            raise ValueError(
                f"{path} has {table.shape[1]} columns, name={name!r} needs at least {need}"
            )
        X_all = table[:, info.inputs]
        y_all = table[:, info.target]
    if info.log_target:
        if np.any(y_all <= 0):
            raise ValueError(f"{path}: the target of name={name!r} must be positive to take log")
        y_all = np.log(y_all)
    n_rows = X_all.shape[0]
    n_use = info.n_train + info.n_test
    if n_rows < n_use:
        raise ValueError(
            f"{path} has {n_rows} rows, name={name!r} needs {info.n_train} + {info.n_test}"
        )

    perm = rng.permutation(n_rows)
    train, test = perm[: info.n_train], perm[info.n_train : n_use]
    X_train, X_test, x_mean, x_std = _standardise(X_all[train], X_all[test], ddof)
    y_train, y_test, y_mean, y_std = _standardise(y_all[train], y_all[test], ddof)
    if n_noise:
        X_train = np.hstack([X_train, rng.standard_normal((info.n_train, n_noise))])
        X_test = np.hstack([X_test, rng.standard_normal((info.n_test, n_noise))])
    return UCIDataset(
        X_train=np.ascontiguousarray(X_train),
        y_train=y_train,
        X_test=np.ascontiguousarray(X_test),
        y_test=y_test,
        name=name,
        d=X_train.shape[1],
        y_mean=float(y_mean),
        y_std=float(y_std),
        x_mean=x_mean,
        x_std=x_std,
        n_noise=n_noise,
    )
