"""Vectorisable sine and cosine for numba kernels: exact argument reduction, fdlibm polynomials."""

from __future__ import annotations

import math

from numba import njit


# -------------------------------------------------------- vectorisable sincos
# pi/2 split for an exact branch-free reduction (|k| < 2^20), then fdlibm's
# minimax kernels on [-pi/4, pi/4].  The split differs from fdlibm's
# 33 + 33 + 33 + 53 bits: the second part stops at bit 2^-53, so that with x a
# multiple of 2^-53 (|x| >= 1/2 whenever k != 0) x - k*_PIO2_1 - k*_PIO2_2 is
# a multiple of 2^-53 below 1, hence exact, and only one two-sum is needed.
_TWO_OVER_PI = 0.63661977236758134308
_PIO2_1 = 1.5707963267341256  # bits 2^0 .. 2^-32 of pi/2 (fdlibm's pio2_1)
_PIO2_2 = 6.077094383272197e-11  # bits 2^-33 .. 2^-53 (21 bits)
_PIO2_3 = 6.12323399538461e-17  # bits 2^-54 .. 2^-86 (33 bits)
_PIO2_3T = 3.5215598651832e-27  # the rest, rounded: pi/2 to about 2^-140
_S1, _S2, _S3 = -1.66666666666666324348e-01, 8.33333333332248946124e-03, -1.98412698298579493134e-04
_S4, _S5, _S6 = 2.75573137070700676789e-06, -2.50507602534068634195e-08, 1.58969099521155010221e-10
_C1, _C2, _C3 = 4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05
_C4, _C5, _C6 = -2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11

#: Largest |x| for :func:`sincos`: the products ``k * _PIO2_i`` stay exact
#: while the quadrant count k < 2^20.  Callers fall back to ``math.sin``/``cos``
#: beyond.
SINCOS_MAX_ABS = 2.0**19


@njit(cache=True, inline="always")
def _two_diff(a, b):  # pragma: no cover - jitted
    """``(h, e)`` with ``h = fl(a - b)`` and ``h + e = a - b`` exactly (Knuth's TwoSum)."""
    h = a - b
    bb = h - a
    e = (a - (h - bb)) - (b + bb)
    return h, e


@njit(cache=True, inline="always")
def absmax(z):  # pragma: no cover - jitted
    """``max |z_j|`` (0 for an empty vector) without the temporary of ``np.abs(z).max()``.

    The kernels check every row's phases against :data:`SINCOS_MAX_ABS`;
    ``np.abs(z).max()`` there allocated a row-sized array per row, 20 % of
    the sincos pass on 2000 x 20000 (``benchmarks/bench_features.py``).
    Eight running maxima, not one: a single one is a chain of dependent
    compare-selects that LLVM does not vectorise (a float max reduction needs
    fast-math), 1.34 ns an entry here against 0.51 with eight, a third of the
    cosine pass's time.
    """
    n = z.size
    m0 = m1 = m2 = m3 = m4 = m5 = m6 = m7 = 0.0
    j = 0
    while j + 8 <= n:
        m0 = max(m0, abs(z[j]))
        m1 = max(m1, abs(z[j + 1]))
        m2 = max(m2, abs(z[j + 2]))
        m3 = max(m3, abs(z[j + 3]))
        m4 = max(m4, abs(z[j + 4]))
        m5 = max(m5, abs(z[j + 5]))
        m6 = max(m6, abs(z[j + 6]))
        m7 = max(m7, abs(z[j + 7]))
        j += 8
    mx = max(max(max(m0, m1), max(m2, m3)), max(max(m4, m5), max(m6, m7)))
    while j < n:
        mx = max(mx, abs(z[j]))
        j += 1
    return mx


@njit(cache=True, inline="always")
def _reduce_pio2(x):  # pragma: no cover - jitted
    r"""``(n, r, y)``: :math:`x = k\pi/2 + (r + y)`, ``n = k mod 4`` (see :func:`sincos`)."""
    k = math.floor(x * _TWO_OVER_PI + 0.5)
    h = (x - k * _PIO2_1) - k * _PIO2_2  # exact, see the split above
    r, e = _two_diff(h, k * _PIO2_3)
    y = e - k * _PIO2_3T  # tail of the reduced argument, |y| << |r|
    return int(k) & 3, r, y


@njit(cache=True, inline="always")
def _sin_kernel(r, y, z, p):  # pragma: no cover - jitted
    """fdlibm's sin on the reduced argument ``r + y`` (``z = r*r``), ``p`` its
    polynomial in ``z``; sin(r + y) = sin r + y cos r, and y z / 2 is below
    0.16 ulp(r), so dropped."""
    return r + (y + r * z * p)


@njit(cache=True, inline="always")
def _cos_kernel(r, y, z, p):  # pragma: no cover - jitted
    """fdlibm's cos on the reduced argument ``r + y``, ``p`` its polynomial in ``z``."""
    return (1.0 - 0.5 * z) + (z * z * p - r * y)


@njit(cache=True, inline="always")
def _poly(z, a1, a2, a3, a4, a5, a6):  # pragma: no cover - jitted
    return a1 + z * (a2 + z * (a3 + z * (a4 + z * (a5 + z * a6))))


@njit(cache=True, inline="always")
def sincos(x):  # pragma: no cover - jitted
    r"""``(sin(x), cos(x))`` for ``|x| <= SINCOS_MAX_ABS``, branch-free so loops vectorise.

    Range reduction :math:`x = k\pi/2 + (r + y)` with
    :math:`k = \mathrm{round}(2x/\pi)` and the reduced argument as a
    head and a small tail :math:`r + y`: with
    :math:`\pi/2` split into ``_PIO2_1 + _PIO2_2 + _PIO2_3 + _PIO2_3T``
    (about 140 bits), ``x - k*_PIO2_1 - k*_PIO2_2`` is exact, ``k*_PIO2_3`` is
    exact and subtracted by an error-free two-sum (:func:`_two_diff`), so the
    reduction stays accurate next to multiples of :math:`\pi/2`, where
    :math:`|r|` is tiny (fdlibm's ``__ieee754_rem_pio2`` keeps the same tail,
    by branches).  Then fdlibm's degree-13/14 minimax polynomials on
    :math:`|r| \lesssim \pi/4` with the first-order corrections in ``y``
    (:math:`\sin(r + y) \approx \sin r + y`,
    :math:`\cos(r + y) \approx \cos r - r y`), and the quadrant swap by
    selects.  ``sin(-0.0)`` is ``-0.0``.

    Tested (``tests/test_numerics.py``): within 1 ulp of ``numpy.sin`` /
    ``numpy.cos`` (``numpy.spacing`` of NumPy's value) on uniform arguments
    at scales 1 to ``SINCOS_MAX_ABS``, on the doubles nearest to
    :math:`k\pi/2` for every :math:`1 \le k < 2^{18}` and their two
    neighbours each side (both signs), and exactly ``sin(x) = x``,
    ``cos(x) = 1`` on subnormals and signed zeros.  A loop of it vectorises
    (``benchmarks/bench_features.py``).
    """
    n, r, y = _reduce_pio2(x)
    z = r * r
    s = _sin_kernel(r, y, z, _poly(z, _S1, _S2, _S3, _S4, _S5, _S6))
    c = _cos_kernel(r, y, z, _poly(z, _C1, _C2, _C3, _C4, _C5, _C6))
    s = x if x == 0.0 else s  # keep the sign of zero (-0.0 + 0.0 is +0.0)
    swap = n & 1
    ss = s if swap == 0 else c
    cc = c if swap == 0 else s
    return (1.0 - 2.0 * ((n >> 1) & 1)) * ss, (1.0 - 2.0 * (((n + 1) >> 1) & 1)) * cc


@njit(cache=True, inline="always")
def _one_poly(z, odd):  # pragma: no cover - jitted
    """The sin polynomial in odd quadrants, the cos one in even: one evaluation
    with per-lane coefficients (selects, so a loop still vectorises)."""
    return _poly(z, _S1 if odd else _C1, _S2 if odd else _C2, _S3 if odd else _C3,
                 _S4 if odd else _C4, _S5 if odd else _C5, _S6 if odd else _C6)


@njit(cache=True, inline="always")
def cos_only(x):  # pragma: no cover - jitted
    """``sincos(x)[1]`` bit for bit, evaluating one polynomial instead of two.

    In an odd quadrant cos(x) is +-sin of the reduced argument, in an even one
    +-cos: the same operations as :func:`sincos` on the branch it keeps, so
    the results are identical, at about 15 % less time per entry in a
    vectorised loop (``benchmarks/bench_features.py``).
    """
    n, r, y = _reduce_pio2(x)
    z = r * r
    odd = (n & 1) == 1
    p = _one_poly(z, odd)
    v = _sin_kernel(r, y, z, p) if odd else _cos_kernel(r, y, z, p)
    return (1.0 - 2.0 * (((n + 1) >> 1) & 1)) * v


@njit(cache=True, inline="always")
def sin_only(x):  # pragma: no cover - jitted
    """``sincos(x)[0]`` bit for bit, evaluating one polynomial (as :func:`cos_only`)."""
    n, r, y = _reduce_pio2(x)
    z = r * r
    odd = (n & 1) == 1
    p = _one_poly(z, not odd)
    v = _cos_kernel(r, y, z, p) if odd else _sin_kernel(r, y, z, p)
    v = x if x == 0.0 else v  # keep the sign of zero (x == 0 only in quadrant 0)
    return (1.0 - 2.0 * ((n >> 1) & 1)) * v
