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

from pathlib import Path
from typing import Callable, NamedTuple

import numpy as np

from rflite._core.random import check_rng
from rflite._core.validation import check_choice, check_int
from rflite._data import metropolis as _data_metropolis
from rflite._data import sampling as _data_sampling
from rflite._data import shrimp as _data_shrimp
from rflite._data import uci as _data_uci
from rflite._data.metropolis import (  # noqa: F401 - public here; the helper stays importable
    _si_gauss,
    make_metropolis1,
    make_metropolis2,
    make_metropolis3,
    target_metropolis1,
    target_metropolis2,
    target_metropolis3,
)
from rflite._data.sampling import (  # noqa: F401 - Sample is public here; the plumbing too
    Sample,
    _check_common,
    _check_X,
    _generate,
    _normal,
    _uniform,
)
from rflite._data.shrimp import (  # noqa: F401 - public here; the helpers stay importable
    _SHRIMP_DOC,
    _shrimp_maker,
    make_shrimp1,
    make_shrimp2,
    make_shrimp3,
    make_shrimp4,
    make_shrimp5,
    make_shrimp6,
    make_shrimp7,
    make_shrimp_support,
    target_shrimp1,
    target_shrimp2,
    target_shrimp3,
    target_shrimp4,
    target_shrimp5,
    target_shrimp6,
    target_shrimp7,
    target_shrimp_support,
)
from rflite._data.uci import (  # noqa: F401 - public here; the helpers stay importable
    DATA_ENV_VAR,
    UCI_DATASETS,
    UCIDataset,
    UCIInfo,
    _cols,
    _hp,
    _locate,
    _pub,
    _read_table,
    _standardise,
)
from rflite._core.naming import publish

_HOMES = (_data_sampling, _data_shrimp, _data_metropolis, _data_uci)
# the public generators, targets and result types defined in the homes are
# reported as this module's
publish(__name__, *tuple(
    obj for home in _HOMES for name, obj in vars(home).items()
    if not name.startswith("_") and getattr(obj, "__module__", None) == home.__name__
))

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


#: Default ``ddof`` of the training standard deviation in :func:`load_uci`.
STANDARDISE_DDOF = 0

# The default data directory, found beside the repository checkout.
_DEFAULT_DATA_DIR = Path(__file__).resolve().parents[2] / "shared" / "data"

#: Copies shipped inside the package (the small sets the showcase uses), the
#: last place looked in, so that an installed rflite runs without the repository.
_PACKAGED_DATA_DIR = Path(__file__).resolve().parent / "data"


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


# SHRIMP's targets (Sec. 4.1, Fig. 4) are in rflite._data.shrimp and the
# Metropolis paper's (Sec. 5) in rflite._data.metropolis, imported above.


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
    return _locate(name, data_dir, _DEFAULT_DATA_DIR, _PACKAGED_DATA_DIR)


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
    path = _locate(name, data_dir, _DEFAULT_DATA_DIR, _PACKAGED_DATA_DIR)

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
