"""Shared numerics: rng handling, validation, ridge and minimum-norm solves.

Tolerances: well-conditioned solves agree with numpy.linalg to rtol=1e-10;
the ill-conditioned fallback agrees with an eigen-truncated pseudo-inverse to 1e-8.
"""

import warnings

import numpy as np
import pytest

from rflite import _numerics as nm


def test_check_rng_forms():
    g = np.random.default_rng(3)
    assert nm.check_rng(g) is g
    assert nm.check_rng(5).random() == np.random.default_rng(5).random()
    assert isinstance(nm.check_rng(None), np.random.Generator)
    for bad in ("seed", 1.5, -1, True):
        with pytest.raises(ValueError, match="rng"):
            nm.check_rng(bad)


def test_spawn_streams_are_independent_and_reproducible():
    a = [s.random() for s in nm.spawn_streams(np.random.default_rng(0), 3)]
    b = [s.random() for s in nm.spawn_streams(np.random.default_rng(0), 3)]
    assert a == b and len(set(a)) == 3


def test_check_array_messages():
    with pytest.raises(ValueError, match="X must have 2"):
        nm.check_array(np.zeros(3), "X")
    with pytest.raises(ValueError, match="y contains NaN"):
        nm.check_array([1.0, np.nan], "y", ndim=1)
    with pytest.raises(ValueError, match="A must be real"):
        nm.check_array(np.ones((2, 2)) * 1j, "A")
    with pytest.raises(ValueError, match="X must be numeric"):
        nm.check_array([["a"]], "X")
    a = np.ones((3, 2))
    assert nm.check_array(a, "X") is a  # no copy for clean float64 input
    with pytest.raises(ValueError, match="same number of rows"):
        nm.check_X_y(np.ones((3, 2)), np.ones(4))


def test_scalar_checks():
    assert nm.check_int(3, "s", minimum=1) == 3
    with pytest.raises(ValueError, match="s must be >= 1, got 0"):
        nm.check_int(0, "s", minimum=1)
    with pytest.raises(ValueError, match="s must be an integer"):
        nm.check_int(2.0, "s")
    with pytest.raises(ValueError, match="lam must be >= 0"):
        nm.check_real(-1e-3, "lam", minimum=0.0)
    with pytest.raises(ValueError, match="mu must be > 0"):
        nm.check_real(0.0, "mu", minimum=0.0, strict=True)
    with pytest.raises(ValueError, match="mu must be finite"):
        nm.check_real(np.inf, "mu")
    with pytest.raises(ValueError, match="method"):
        nm.check_choice("x", "method", ("a", "b"))


@pytest.mark.parametrize("complex_", [False, True])
def test_ridge_solve_matches_numpy(complex_, rng):
    A = rng.normal(size=(30, 8)) + (1j * rng.normal(size=(30, 8)) if complex_ else 0)
    y = rng.normal(size=30)
    z = nm.ridge_on_columns(A, y, 0.3)
    G = A.conj().T @ A + 0.3 * np.eye(8)
    np.testing.assert_allclose(z, np.linalg.solve(G, A.conj().T @ y), rtol=1e-10)
    Y = rng.normal(size=(8, 2))
    np.testing.assert_allclose(nm.ridge_solve(A.conj().T @ A, Y, 0.3), np.linalg.solve(G, Y),
                               rtol=1e-10)


def test_ridge_solve_singular_falls_back_with_warning(rng):
    B = rng.normal(size=(20, 3))
    A = np.hstack([B, B])  # duplicate columns: rank 3 of 6
    y = rng.normal(size=20)
    with pytest.warns(nm.IllConditionedWarning, match="pseudo-inverse"):
        z = nm.ridge_on_columns(A, y, 0.0)
    np.testing.assert_allclose(z, np.linalg.pinv(A) @ y, rtol=1e-8, atol=1e-10)


def test_ridge_fit_primal_and_dual_agree(rng):
    for m, n in [(40, 10), (10, 40)]:
        A = rng.normal(size=(m, n))
        y = rng.normal(size=m)
        c = nm.ridge_fit(A, y, 0.5)
        expected = np.linalg.solve(A.T @ A + 0.5 * np.eye(n), A.T @ y)
        np.testing.assert_allclose(c, expected, rtol=1e-10)


@pytest.mark.parametrize("shape", [(10, 30), (30, 10)])
@pytest.mark.parametrize("complex_", [False, True])
def test_min_norm_solve_matches_pinv(shape, complex_, rng):
    A = rng.normal(size=shape) + (1j * rng.normal(size=shape) if complex_ else 0)
    y = rng.normal(size=shape[0])
    np.testing.assert_allclose(nm.min_norm_solve(A, y), np.linalg.pinv(A) @ y, rtol=1e-9,
                               atol=1e-12)
    assert nm.min_norm_solve(A[:, :0], y).shape == (0,)


def test_min_norm_solve_rank_deficient(rng):
    B = rng.normal(size=(5, 12))
    A = np.vstack([B, B])  # rank 5, 10 rows
    y = np.concatenate([np.ones(5), np.ones(5)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        c = nm.min_norm_solve(A, y)
    np.testing.assert_allclose(c, np.linalg.pinv(A) @ y, rtol=1e-8, atol=1e-10)


# ------------------------------------------------------------------- sincos
@pytest.mark.parametrize("scale", [1.0, 1e2, 1e4, nm.SINCOS_MAX_ABS])
def test_sincos_within_one_ulp_of_numpy(scale):
    """|error| <= 2.3e-16 (one ulp of values in [-1, 1]) over the documented range,
    including arguments within rounding of multiples of pi/2."""
    from numba import njit

    @njit
    def both(x, s, c):
        for i in range(x.size):
            s[i], c[i] = nm.sincos(x[i])

    x = np.random.default_rng(0).uniform(-scale, scale, 200_000)
    x[:2000] = np.round(x[:2000] / (np.pi / 2)) * (np.pi / 2)
    x[2000:2010] = [0.0, -0.0, 1e-300, np.pi / 4, -np.pi / 4, np.pi, 3.0, -3.0, 1e-8, 0.5]
    s, c = np.empty_like(x), np.empty_like(x)
    both(x, s, c)
    np.testing.assert_allclose(s, np.sin(x), rtol=0, atol=2.3e-16)
    np.testing.assert_allclose(c, np.cos(x), rtol=0, atol=2.3e-16)
