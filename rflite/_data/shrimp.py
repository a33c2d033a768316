"""The synthetic targets of SHRIMP (Xie, Shi, Schaeffer, Ward 2022), Sec. 4.1 and Fig. 4.

Public in :mod:`rflite.datasets`, which re-exports them (and reports itself
as their module); the generators are built by :func:`_shrimp_maker` from a
target, its input box and its smallest dimension.
"""

from __future__ import annotations

import numpy as np

from rflite._data.sampling import Sample, _check_common, _check_X, _generate, _uniform


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
