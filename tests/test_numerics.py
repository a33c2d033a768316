"""Shared numerics: rng handling, validation, ridge and minimum-norm solves.

Tolerances: well-conditioned solves agree with numpy.linalg to rtol=1e-10;
the ill-conditioned fallback agrees with an eigen-truncated pseudo-inverse to 1e-8.
"""

import warnings

import numpy as np
import pytest

from rflite._core import linalg
from rflite._core import random as core_random
from rflite._core import sincos
from rflite._core import validation


def test_check_rng_forms():
    g = np.random.default_rng(3)
    assert core_random.check_rng(g) is g
    assert core_random.check_rng(5).random() == np.random.default_rng(5).random()
    assert isinstance(core_random.check_rng(None), np.random.Generator)
    for bad in ("seed", 1.5, -1, True):
        with pytest.raises(ValueError, match="rng"):
            core_random.check_rng(bad)


def test_spawn_streams_are_independent_and_reproducible():
    a = [s.random() for s in core_random.spawn_streams(np.random.default_rng(0), 3)]
    b = [s.random() for s in core_random.spawn_streams(np.random.default_rng(0), 3)]
    assert a == b and len(set(a)) == 3


def test_check_array_messages():
    with pytest.raises(ValueError, match="X must have 2"):
        validation.check_array(np.zeros(3), "X")
    with pytest.raises(ValueError, match="y contains NaN"):
        validation.check_array([1.0, np.nan], "y", ndim=1)
    with pytest.raises(ValueError, match="A must be real"):
        validation.check_array(np.ones((2, 2)) * 1j, "A")
    with pytest.raises(ValueError, match="X must be numeric"):
        validation.check_array([["a"]], "X")
    a = np.ones((3, 2))
    assert validation.check_array(a, "X") is a  # no copy for clean float64 input
    with pytest.raises(ValueError, match="same number of rows"):
        validation.check_X_y(np.ones((3, 2)), np.ones(4))


def test_scalar_checks():
    assert validation.check_int(3, "s", minimum=1) == 3
    with pytest.raises(ValueError, match="s must be >= 1, got 0"):
        validation.check_int(0, "s", minimum=1)
    with pytest.raises(ValueError, match="s must be an integer"):
        validation.check_int(2.0, "s")
    with pytest.raises(ValueError, match="lam must be >= 0"):
        validation.check_real(-1e-3, "lam", minimum=0.0)
    with pytest.raises(ValueError, match="mu must be > 0"):
        validation.check_real(0.0, "mu", minimum=0.0, strict=True)
    with pytest.raises(ValueError, match="mu must be finite"):
        validation.check_real(np.inf, "mu")
    with pytest.raises(ValueError, match="method"):
        validation.check_choice("x", "method", ("a", "b"))


@pytest.mark.parametrize("complex_", [False, True])
def test_ridge_solve_matches_numpy(complex_, rng):
    A = rng.normal(size=(30, 8)) + (1j * rng.normal(size=(30, 8)) if complex_ else 0)
    y = rng.normal(size=30)
    z = linalg.ridge_on_columns(A, y, 0.3)
    G = A.conj().T @ A + 0.3 * np.eye(8)
    np.testing.assert_allclose(z, np.linalg.solve(G, A.conj().T @ y), rtol=1e-10)
    Y = rng.normal(size=(8, 2))
    np.testing.assert_allclose(linalg.ridge_solve(A.conj().T @ A, Y, 0.3), np.linalg.solve(G, Y),
                               rtol=1e-10)


def test_ridge_solve_singular_falls_back_with_warning(rng):
    B = rng.normal(size=(20, 3))
    A = np.hstack([B, B])  # duplicate columns: rank 3 of 6
    y = rng.normal(size=20)
    with pytest.warns(linalg.IllConditionedWarning, match="pseudo-inverse"):
        z = linalg.ridge_on_columns(A, y, 0.0)
    np.testing.assert_allclose(z, np.linalg.pinv(A) @ y, rtol=1e-8, atol=1e-10)


def test_ridge_fit_primal_and_dual_agree(rng):
    for m, n in [(40, 10), (10, 40)]:
        A = rng.normal(size=(m, n))
        y = rng.normal(size=m)
        c = linalg.ridge_fit(A, y, 0.5)
        expected = np.linalg.solve(A.T @ A + 0.5 * np.eye(n), A.T @ y)
        np.testing.assert_allclose(c, expected, rtol=1e-10)


@pytest.mark.parametrize("shape", [(10, 30), (30, 10)])
@pytest.mark.parametrize("complex_", [False, True])
def test_min_norm_solve_matches_pinv(shape, complex_, rng):
    A = rng.normal(size=shape) + (1j * rng.normal(size=shape) if complex_ else 0)
    y = rng.normal(size=shape[0])
    np.testing.assert_allclose(linalg.min_norm_solve(A, y), np.linalg.pinv(A) @ y, rtol=1e-9,
                               atol=1e-12)
    assert linalg.min_norm_solve(A[:, :0], y).shape == (0,)


def test_min_norm_solve_rank_deficient(rng):
    B = rng.normal(size=(5, 12))
    A = np.vstack([B, B])  # rank 5, 10 rows
    y = np.concatenate([np.ones(5), np.ones(5)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        c = linalg.min_norm_solve(A, y)
    np.testing.assert_allclose(c, np.linalg.pinv(A) @ y, rtol=1e-8, atol=1e-10)


# ------------------------------------------------------------------- sincos
@pytest.mark.parametrize("scale", [1.0, 1e2, 1e4, sincos.SINCOS_MAX_ABS])
def test_sincos_within_one_ulp_of_numpy(scale):
    """Within 1 ulp of NumPy's value (and |error| <= 2.3e-16) over the documented
    range, including arguments within rounding of multiples of pi/2."""
    from numba import njit

    @njit
    def both(x, s, c):
        for i in range(x.size):
            s[i], c[i] = sincos.sincos(x[i])

    x = np.random.default_rng(0).uniform(-scale, scale, 200_000)
    x[:2000] = np.round(x[:2000] / (np.pi / 2)) * (np.pi / 2)
    x[2000:2010] = [0.0, -0.0, 1e-300, np.pi / 4, -np.pi / 4, np.pi, 3.0, -3.0, 1e-8, 0.5]
    s, c = np.empty_like(x), np.empty_like(x)
    both(x, s, c)
    np.testing.assert_allclose(s, np.sin(x), rtol=0, atol=2.3e-16)
    np.testing.assert_allclose(c, np.cos(x), rtol=0, atol=2.3e-16)
    assert _ulps(s, np.sin(x)).max() <= 1 and _ulps(c, np.cos(x)).max() <= 1


def _sincos_arrays(x):
    from numba import njit

    @njit
    def both(x, s, c):
        for i in range(x.size):
            s[i], c[i] = sincos.sincos(x[i])

    s, c = np.empty_like(x), np.empty_like(x)
    both(x, s, c)
    return s, c


def _ulps(a, ref):
    """|a - ref| in units of the last place of ``ref`` (``numpy.spacing``)."""
    return np.abs(a - ref) / np.spacing(np.abs(ref))


def test_sincos_within_one_ulp_next_to_multiples_of_half_pi():
    """The doubles nearest to k pi/2 (k up to 2^18, both signs) and their two
    neighbours each side: |r| down to ~1e-19, where dropping the last term of
    pi/2's split cost up to 2.8e6 ulp."""
    pi_ld = np.longdouble("3.14159265358979323846264338327950288")
    k = np.arange(1, 2**18, dtype=np.longdouble)
    near = (k * pi_ld / 2).astype(np.float64)
    x = np.concatenate([near + i * np.spacing(near) for i in (-2, -1, 0, 1, 2)])
    x = np.concatenate([x, -x])
    assert np.abs(x).max() <= sincos.SINCOS_MAX_ABS
    s, c = _sincos_arrays(x)
    assert _ulps(s, np.sin(x)).max() <= 1
    assert _ulps(c, np.cos(x)).max() <= 1


def test_sincos_signed_zero_and_subnormals():
    tiny = np.array([0.0, -0.0, 5e-324, -5e-324, 2.2e-308, -1e-310, 1e-200, -1e-160])
    s, c = _sincos_arrays(tiny)
    np.testing.assert_array_equal(s, tiny)  # sin(x) = x exactly for |x| < 2^-27
    np.testing.assert_array_equal(np.signbit(s), np.signbit(tiny))  # sin(-0.0) = -0.0
    np.testing.assert_array_equal(c, np.ones_like(tiny))


def test_sin_only_and_cos_only_equal_sincos_bit_for_bit():
    """The one-polynomial kernels of the sin / cos feature loops give sincos's
    values exactly (signed zeros included) on uniform arguments at every scale,
    next to multiples of pi/2 and on zeros and subnormals."""
    from numba import njit

    @njit
    def each(x, s, c):
        for i in range(x.size):
            s[i] = sincos.sin_only(x[i])
            c[i] = sincos.cos_only(x[i])

    rng = np.random.default_rng(3)
    pi_ld = np.longdouble("3.14159265358979323846264338327950288")
    near = (np.arange(1, 2**14, dtype=np.longdouble) * pi_ld / 2).astype(np.float64)
    x = np.concatenate(
        [rng.uniform(-scale, scale, 50_000) for scale in (1.0, 1e2, 1e4, sincos.SINCOS_MAX_ABS)]
        + [near + i * np.spacing(near) for i in (-1, 0, 1)]
        + [[0.0, -0.0, 5e-324, -5e-324, -1e-310, np.pi / 4, -np.pi / 4]])
    x = np.concatenate([x, -x])
    s, c = np.empty_like(x), np.empty_like(x)
    each(x, s, c)
    s_ref, c_ref = _sincos_arrays(x)
    np.testing.assert_array_equal(s, s_ref)
    np.testing.assert_array_equal(c, c_ref)
    np.testing.assert_array_equal(np.signbit(s), np.signbit(s_ref))
    np.testing.assert_array_equal(np.signbit(c), np.signbit(c_ref))


def test_sin_features_beyond_sincos_range_use_libm():
    """Phases above SINCOS_MAX_ABS (huge x) go through math.sin/cos: equal to NumPy."""
    from rflite.features import FeatureMap

    X = np.array([[1e6], [3.0e9], [-7.5e12], [0.5]])
    for act in ("sin", "cos", "fourier"):
        fmap = FeatureMap(np.zeros((3, 1), dtype=np.int64), np.array([[1.0], [3.0], [-2.0]]),
                          np.zeros(3), act, 1)
        A = fmap.transform(X)
        Z = X @ fmap.values.T
        ref = {"sin": np.sin(Z), "cos": np.cos(Z), "fourier": np.hstack([np.cos(Z), np.sin(Z)])}
        assert _ulps(A, ref[act]).max() <= 1


# ------------------------------------------------------------ random state
def test_check_rng_accepts_every_sklearn_random_state():
    big = 2**64 + 12345  # seeds >= 2**63 are valid SeedSequence entropy
    assert core_random.check_rng(big).random() == np.random.default_rng(big).random()
    assert core_random.check_rng(np.uint64(2**63)).random() == np.random.default_rng(2**63).random()
    assert core_random.check_rng(np.int32(7)).random() == np.random.default_rng(7).random()
    ss = np.random.SeedSequence(11)
    assert core_random.check_rng(ss).random() == np.random.default_rng(np.random.SeedSequence(11)).random()
    bg = np.random.PCG64(3)
    assert core_random.check_rng(bg).bit_generator is bg
    # RandomState: deterministic, and it advances (two calls give different streams)
    rs = np.random.RandomState(0)
    a, b = core_random.check_rng(rs).random(), core_random.check_rng(rs).random()
    assert a != b
    assert core_random.check_rng(np.random.RandomState(0)).random() == a
    entropy = np.random.RandomState(0).randint(0, 2**32, size=4, dtype=np.uint32)
    expected = np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy.tolist())))
    assert a == expected.random()


def test_check_rng_names_the_parameter():
    with pytest.raises(ValueError, match="random_state must be a non-negative int seed, got -1"):
        core_random.check_rng(-1, name="random_state")
    with pytest.raises(ValueError, match="rng must be a non-negative"):
        core_random.check_rng(-(2**70))
    for bad in (True, np.bool_(False), 1.0, "0", [1]):
        with pytest.raises(ValueError, match="^random_state must be None"):
            core_random.check_rng(bad, name="random_state")


def test_check_rng_random_state_works_in_functions():
    from rflite.features import random_feature_map

    a = random_feature_map(4, 10, q=2, rng=np.random.RandomState(1))
    b = random_feature_map(4, 10, q=2, rng=np.random.RandomState(1))
    np.testing.assert_array_equal(a.values, b.values)
    c = random_feature_map(4, 10, q=2, rng=2**63 + 1)
    assert c.values.shape == (10, 2)
    with pytest.raises(ValueError, match="rng must be a non-negative int seed, got -3"):
        random_feature_map(4, 10, rng=-3)


# ---------------------------------------------------- booleans and overflow
def test_check_bool():
    assert validation.check_bool(True, "normalize") is True
    assert validation.check_bool(np.bool_(False), "normalize") is False
    for bad in ("no", "False", 0, 1, None, 1.0, np.array([True, False])):
        with pytest.raises(ValueError, match="normalize must be a bool"):
            validation.check_bool(bad, "normalize")


def test_check_real_rejects_values_beyond_float64():
    from fractions import Fraction

    for huge in (10**400, -(10**400), Fraction(10**400, 3)):
        with pytest.raises(ValueError, match="lam must be finite, got a value too large"):
            validation.check_real(huge, "lam")
    with pytest.raises(ValueError, match="lam must be a real number"):
        validation.check_real(np.bool_(True), "lam")
    assert validation.check_real(10**300, "lam") == 1e300


# -------------------------------------------------- conditioning safeguard
def _unit_diagonal_ill_conditioned(n=40):
    """R = I - 0.6 triu(1, 1): unit diagonal, cond(R^T R) ~ 1.9e17 for n = 40."""
    return np.eye(n) - 0.6 * np.triu(np.ones((n, n)), 1)


def test_cholesky_rcond_sees_through_a_unit_diagonal():
    R = _unit_diagonal_ill_conditioned()
    G = R.T @ R
    assert np.linalg.cond(G) > 1e16
    # the old test, squared diagonal ratio of the factor, is 1: no warning
    assert np.abs(np.diag(R)).min() ** 2 / np.abs(np.diag(R)).max() ** 2 == 1.0
    anorm = np.abs(G).sum(axis=0).max()
    assert linalg.cholesky_rcond(R, anorm) < 1e-15
    assert linalg.cholesky_rcond(R) < 1e-15  # trace-based norm
    Q = np.linalg.qr(np.random.default_rng(0).normal(size=(40, 40)))[0]
    well = np.linalg.cholesky(Q @ np.diag(np.linspace(1, 10, 40)) @ Q.T).T
    assert 1e-3 < linalg.cholesky_rcond(well) <= 1.0


def test_ridge_solve_warns_on_unit_diagonal_ill_conditioned_gram():
    """A unit-diagonal ill-conditioned Gram warns: its Cholesky solution is 44 % off."""
    R = _unit_diagonal_ill_conditioned()
    G = R.T @ R
    x = np.random.default_rng(0).normal(size=40)
    with pytest.warns(linalg.IllConditionedWarning, match="numerically singular"):
        z = linalg.ridge_solve(G, G @ x, 0.0)
    # the pseudo-inverse solution reproduces the right-hand side
    assert np.linalg.norm(G @ z - G @ x) <= 1e-8 * np.linalg.norm(G @ x)
    # a shift that makes the system well conditioned: no warning, exact solve
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        z = linalg.ridge_solve(G, G @ x + 1e-2 * x, 1e-2)
    np.testing.assert_allclose(z, x, rtol=1e-9)


def test_sincos_pi_half_split_is_exact_where_it_must_be():
    """The reduction's premises: _PIO2_1 and _PIO2_3 have at most 33 significant
    bits and _PIO2_2 at most 21 ending at 2^-53 (so k * each is exact for
    k < 2^20 and x - k*_PIO2_1 - k*_PIO2_2 is exact), and the four parts sum to
    pi/2 within 2^-135."""
    import math
    from fractions import Fraction

    def bits(v):
        m = Fraction(v)
        e = 0
        while m.denominator != 1:
            m *= 2
            e += 1
        return int(m).bit_length(), e  # significant bits, position of the last bit

    assert bits(sincos._PIO2_1)[0] <= 33 and bits(sincos._PIO2_3)[0] <= 33
    n2, last2 = bits(sincos._PIO2_2)
    assert n2 <= 21 and last2 <= 53
    assert 2 * sincos.SINCOS_MAX_ABS / math.pi < 2**20
    pi = Fraction("3.14159265358979323846264338327950288419716939937510582097494459")
    total = sum(Fraction(p) for p in (sincos._PIO2_1, sincos._PIO2_2, sincos._PIO2_3, sincos._PIO2_3T))
    assert abs(total - pi / 2) < Fraction(1, 2**135)


def test_absmax_matches_numpy():
    """The allocation-free row maximum of the sincos kernels against ``np.abs(z).max()``."""
    from rflite._core.sincos import absmax

    rng = np.random.default_rng(0)
    for z in (rng.standard_normal(1001) * 1e6, -np.arange(5.0), np.array([-0.0]),
              np.array([np.inf, 1.0])):
        assert absmax(z) == np.abs(z).max()
    # the maximum in every position of the eight running maxima and the tail
    for n in range(1, 20):
        for k in range(n):
            z = rng.uniform(-1.0, 1.0, n)
            z[k] = -3.0 if k % 2 else 3.0
            assert absmax(z) == 3.0, (n, k)
    assert absmax(np.empty(0)) == 0.0


def _blas_counts(threadpoolctl):
    return [m["num_threads"] for m in threadpoolctl.threadpool_info() if m["user_api"] == "blas"]


def test_shared_blas_limit_restores_the_count_after_interleaved_threads():
    """A enters, B enters, A leaves, B leaves: a plain save-and-restore limit
    would restore B's saved count (A's limit) last, and leave it for good;
    the shared gate restores the count the first one found."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    import threading

    from rflite._core.blas import shared_blas_limit

    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()

    def a():
        with shared_blas_limit(1):
            a_in.set()
            assert b_in.wait(30)
        a_out.set()

    def b():
        assert a_in.wait(30)
        with shared_blas_limit(1):
            b_in.set()
            assert a_out.wait(30)

    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        before = _blas_counts(threadpoolctl)
        threads = [threading.Thread(target=f) for f in (a, b)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not any(t.is_alive() for t in threads)
        assert _blas_counts(threadpoolctl) == before


def test_shared_blas_limit_without_waiting():
    """``wait=False`` under another thread's different limit runs at that limit at
    once (no wait, count untouched); with the default it waits for the holder."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    import threading

    from rflite._core.blas import shared_blas_limit

    held, release, waited = threading.Event(), threading.Event(), []

    def holder():
        with shared_blas_limit(1):
            held.set()
            assert release.wait(30)

    def waiter():
        with shared_blas_limit(None):
            waited.append(release.is_set())

    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        t = threading.Thread(target=holder)
        t.start()
        assert held.wait(30)
        inside = _blas_counts(threadpoolctl)
        with shared_blas_limit(None, wait=False):
            assert _blas_counts(threadpoolctl) == inside
        w = threading.Thread(target=waiter)
        w.start()
        w.join(0.3)
        assert w.is_alive() and not waited  # blocked behind the holder
        release.set()
        t.join(30)
        w.join(30)
        assert waited == [True]


def test_exact_sum_parts_give_the_correctly_rounded_sum_of_any_partition():
    """Reference: the exact rational sum (fractions), rounded once."""
    import math
    from fractions import Fraction

    from rflite._core.metrics import exact_sum_parts, exact_total

    rng = np.random.default_rng(0)
    for trial in range(60):
        n = int(rng.integers(1, 200))
        x = rng.standard_normal(n) * 10.0 ** rng.integers(-300, 300, n)
        x[: min(n, 4)] = [5e-324, -0.0, 1e308, -1e308][: min(n, 4)]
        exact = sum(Fraction(v) for v in x)
        pieces = np.split(rng.permutation(x), np.sort(rng.integers(0, n, 3)))
        parts = sum(exact_sum_parts(p) for p in pieces)
        assert exact_total(parts) == float(exact) == math.fsum(x)
        assert exact_total(parts, n) == float(exact / n)
    assert exact_total(exact_sum_parts(np.zeros(3))) == 0.0
