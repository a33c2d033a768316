"""Feature maps, the pre-activation kernel and the matrix-free operator against NumPy references.

Tolerances: float64 results agree with the references to rtol=1e-12 / atol=1e-12
(the kernel sums the q products in a different order than BLAS does);
float32 results to atol=1e-6 (single-precision rounding of values in [-1, 1]).
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rflite import features
from rflite._core.sincos import SINCOS_MAX_ABS
from rflite.features import (
    ACTIVATIONS,
    FeatureMap,
    Normal,
    Uniform,
    all_subsets_supports,
    random_feature_map,
    sample_supports,
    variable_usage,
)

import naive
from rflite._features import fill as _feature_fill

TOL = dict(rtol=1e-12, atol=1e-12)


def reference(fmap, X):
    W = naive.dense_weights(fmap.supports, fmap.values, fmap.n_inputs)
    return naive.feature_matrix(X, W, fmap.bias, fmap.activation)


# q = 2 of d = 9 takes the sparse kernel, q = 9 of 9 the BLAS path
@pytest.mark.parametrize("q", [2, 9])
@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_transform_matches_reference(activation, q, rng):
    fmap = random_feature_map(9, 37, q=q, activation=activation, rng=1)
    assert fmap.uses_blas == (q == 9)
    X = rng.uniform(-1, 1, (23, 9))
    A = fmap.transform(X)
    expected = reference(fmap, X)
    assert A.shape == (23, fmap.n_columns) == expected.shape
    assert A.dtype == (np.complex128 if activation == "exp" else np.float64)
    np.testing.assert_allclose(A, expected, **TOL)


@pytest.mark.parametrize("activation", ["sin", "fourier", "exp", "sigmoid"])
def test_float32_output(activation, rng):
    fmap = random_feature_map(6, 20, q=3, activation=activation, rng=2)
    X = rng.normal(size=(11, 6))
    A = fmap.transform(X, dtype=np.float32)
    assert A.dtype == (np.complex64 if activation == "exp" else np.float32)
    np.testing.assert_allclose(A, reference(fmap, X), rtol=0, atol=1e-6)


def test_out_argument_is_filled_in_place(rng):
    fmap = random_feature_map(5, 16, q=2, rng=3)
    X = rng.normal(size=(7, 5))
    out = np.full((7, 16), np.nan)
    A = fmap.transform(X, out=out)
    assert A is out
    np.testing.assert_allclose(out, reference(fmap, X), **TOL)
    with pytest.raises(ValueError, match="out"):
        fmap.transform(X, out=np.empty((7, 15)))
    with pytest.raises(ValueError, match="out"):
        fmap.transform(X, out=np.empty((7, 16), dtype=np.float32))
    with pytest.raises(ValueError, match="out"):
        fmap.transform(X, out=np.empty((16, 7)).T)


def test_threads_do_not_change_the_result(rng):
    # large enough (>= THREAD_MIN_ENTRIES) for the thread pool to be used
    fmap = random_feature_map(8, 1 << 14, q=2, rng=4)
    X = rng.normal(size=(80, 8))
    assert X.shape[0] * fmap.n_columns >= features.THREAD_MIN_ENTRIES
    np.testing.assert_array_equal(fmap.transform(X, n_threads=1), fmap.transform(X, n_threads=2))


@pytest.mark.parametrize("activation", ["sin", "cos", "fourier"])
def test_blas_trig_path_matches_reference_and_thread_counts(activation, rng, monkeypatch):
    """The dense-weight sin / cos / fourier path (BLAS product of a tile, then
    bias and sincos on it in place): tiles that divide neither m nor N, one
    tile, 1 or 2 threads (bitwise equal), against NumPy."""
    monkeypatch.setattr(_feature_fill, "THREAD_MIN_ENTRIES", 1)
    fmap = random_feature_map(5, 129, q=5, activation=activation, rng=6)
    assert fmap.uses_blas
    X = rng.uniform(-1, 1, (37, 5))
    expected = reference(fmap, X)
    for tile in [(7, 10), (37, 129), (1, 1), (100, 1000)]:
        monkeypatch.setattr(_feature_fill, "TILE_ROWS_COLS", tile)
        A = fmap.transform(X, n_threads=1)
        np.testing.assert_allclose(A, expected, **TOL)
        np.testing.assert_array_equal(A, fmap.transform(X, n_threads=2))


def test_concurrent_transforms_leave_the_blas_thread_count_alone(rng, monkeypatch):
    """The threaded BLAS path runs each tile at one BLAS thread (through
    ``shared_blas_limit``, tested in test_numerics): transforms in several
    Python threads at once agree bitwise with a serial one and leave the
    process's BLAS thread count as they found it."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from concurrent.futures import ThreadPoolExecutor

    def counts():
        return [m["num_threads"] for m in threadpoolctl.threadpool_info()
                if m["user_api"] == "blas"]

    monkeypatch.setattr(_feature_fill, "THREAD_MIN_ENTRIES", 1)
    monkeypatch.setattr(_feature_fill, "TILE_ROWS_COLS", (16, 64))
    fmap = random_feature_map(6, 2000, q=6, activation="cos", rng=8)
    X = rng.uniform(-1, 1, (300, 6))
    expected = fmap.transform(X, n_threads=1)
    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        before = counts()
        with ThreadPoolExecutor(4) as pool:
            results = list(pool.map(lambda _: fmap.transform(X, n_threads=2), range(24)))
        assert counts() == before
    for A in results:
        np.testing.assert_array_equal(A, expected)


def test_phase_bound_of_the_blas_trig_path(rng):
    """``_phases_in_range``: true for ordinary maps (the per-row check is skipped),
    false when ``max|x| max ||w||_1 + max|b|`` may reach ``SINCOS_MAX_ABS``."""
    fmap = random_feature_map(4, 40, q=4, activation="cos", rng=7)
    X = rng.uniform(-1, 1, (9, 4))
    W = fmap.dense_weights()
    assert features._phases_in_range(fmap, X)
    Z = np.abs(X @ W.T + fmap.bias)
    assert fmap.phase_bound(np.abs(X).max()) >= Z.max()  # a bound on every phase
    scale = SINCOS_MAX_ABS / (np.abs(X).max() * np.abs(W).sum(axis=1).max())
    assert not features._phases_in_range(fmap, X * scale)


@pytest.mark.parametrize("activation,kind", [("sin", 0), ("cos", 1), ("fourier", 2)])
@pytest.mark.parametrize("q", [1, 3])
def test_sparse_trig_rows_skip_the_range_check_with_the_same_bits(rng, activation, kind, q):
    """The gather path skips its per-row range check when the phase bound holds:
    the same bits as the checked route, and libm rows where it does not hold."""
    from rflite._features.kernels import _trig_rows

    fmap = random_feature_map(40, 50, q=q, activation=activation, rng=3)  # gather path
    st = np.ascontiguousarray(fmap.supports.T)
    vt = np.ascontiguousarray(fmap.values.T)
    X = rng.uniform(-2, 2, (7, 40))
    checked, unchecked = (np.empty((7, fmap.n_columns)) for _ in range(2))
    _trig_rows(X, 0, 7, st, vt, fmap.bias, checked, kind, 1.0, False)
    _trig_rows(X, 0, 7, st, vt, fmap.bias, unchecked, kind, 1.0, True)
    np.testing.assert_array_equal(unchecked, checked)
    assert features._phases_in_range(fmap, X)
    np.testing.assert_array_equal(fmap.transform(X), checked)
    Z = X @ fmap.dense_weights().T + fmap.bias
    ref = {"sin": np.sin(Z), "cos": np.cos(Z), "fourier": np.hstack([np.cos(Z), np.sin(Z)])}
    # (the BLAS product rounds the phases differently: a few ulp of |phase| <= 10)
    np.testing.assert_allclose(checked, ref[activation], rtol=0, atol=1e-14)
    # phases beyond the range: the bound fails and the transform takes libm's values
    big = X.copy()
    big[0] *= 4 * SINCOS_MAX_ABS / np.abs(X[0] @ fmap.dense_weights().T).max()
    assert not features._phases_in_range(fmap, big)
    Zb = big @ fmap.dense_weights().T + fmap.bias
    refb = {"sin": np.sin(Zb), "cos": np.cos(Zb), "fourier": np.hstack([np.cos(Zb), np.sin(Zb)])}
    np.testing.assert_allclose(fmap.transform(big), refb[activation], rtol=0, atol=1e-9)


def test_blas_trig_path_with_phases_beyond_the_sincos_range(rng):
    """Rows whose phases exceed ``SINCOS_MAX_ABS`` go through libm on the BLAS path."""
    fmap = random_feature_map(4, 40, q=4, activation="fourier", distribution=Normal(1e6), rng=7)
    X = rng.uniform(-1, 1, (9, 4))
    Z = X @ fmap.dense_weights().T + fmap.bias
    assert np.abs(Z).max() > SINCOS_MAX_ABS
    A = fmap.transform(X)
    # the pre-activation's own rounding (|Z| ~ 1e6, BLAS vs NumPy order) bounds the agreement
    np.testing.assert_allclose(A, np.hstack([np.cos(Z), np.sin(Z)]), rtol=0, atol=1e-8)


def test_read_only_input(rng):
    fmap = random_feature_map(4, 10, q=2, rng=5)
    X = rng.normal(size=(6, 4))
    X.setflags(write=False)
    np.testing.assert_allclose(fmap.transform(X), reference(fmap, X), **TOL)


@settings(max_examples=25, deadline=None)
@given(
    m=st.integers(1, 12), d=st.integers(1, 7), n=st.integers(1, 30),
    data=st.data(), activation=st.sampled_from(ACTIVATIONS),
)
def test_transform_property(m, d, n, data, activation):
    q = data.draw(st.integers(1, d))
    seed = data.draw(st.integers(0, 2**32 - 1))
    fmap = random_feature_map(d, n, q=q, activation=activation, rng=seed)
    X = np.random.default_rng(seed).uniform(-3, 3, (m, d))
    np.testing.assert_allclose(fmap.transform(X), reference(fmap, X), **TOL)


# ------------------------------------------------------------------ weights
@pytest.mark.parametrize("bias", ["uniform", "none", "weights"])
@pytest.mark.parametrize("distribution", [Normal(0.5), Uniform(-2.0, 3.0)])
def test_prefix_stability(bias, distribution):
    small = random_feature_map(10, 40, q=3, bias=bias, distribution=distribution, rng=7)
    big = random_feature_map(10, 100, q=3, bias=bias, distribution=distribution, rng=7)
    np.testing.assert_array_equal(small.supports, big.supports[:40])
    np.testing.assert_array_equal(small.values, big.values[:40])
    np.testing.assert_array_equal(small.bias, big.bias[:40])


def test_same_seed_same_map_and_generator_accepted():
    a = random_feature_map(6, 25, q=2, rng=11)
    b = random_feature_map(6, 25, q=2, rng=np.random.default_rng(11))
    c = random_feature_map(6, 25, q=2, rng=12)
    for name in ("supports", "values", "bias"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert not np.array_equal(a.values, c.values)


def test_weight_and_bias_distributions():
    n = 20000
    f = random_feature_map(3, n, q=3, distribution=Normal(2.0), bias="uniform", rng=0)
    assert abs(f.values.std() - 2.0) < 0.05 and abs(f.values.mean()) < 0.05
    assert f.bias.min() >= 0 and f.bias.max() <= 2 * np.pi
    g = random_feature_map(3, n, q=1, distribution=Uniform(-1, 1), bias="weights", rng=0)
    assert g.values.min() >= -1 and g.values.max() <= 1 and g.bias.min() >= -1
    assert np.all(random_feature_map(3, 10, bias="none", rng=0).bias == 0)


def test_dense_map_is_q_equal_d():
    f = random_feature_map(4, 10, rng=0)
    assert f.q == 4
    np.testing.assert_array_equal(f.supports, np.tile(np.arange(4), (10, 1)))
    np.testing.assert_array_equal(f.dense_weights(), f.values)


def test_sparse_supports_distinct_sorted_uniform():
    d, q, n = 12, 3, 30000
    S = sample_supports(d, n, q, rng=0)
    assert S.shape == (n, q)
    assert np.all(np.diff(S, axis=1) > 0)  # sorted and distinct
    counts = np.bincount(S.ravel(), minlength=d) / (n * q)
    np.testing.assert_allclose(counts, 1 / d, atol=0.005)  # ~ 6 sigma
    # every pair of variables appears about equally often
    pairs = np.bincount(S[:, 0] * d + S[:, 1], minlength=d * d)
    assert pairs.max() < 3 * pairs[pairs > 0].mean()


def test_all_subsets_exact_design():
    d, q, N = 5, 2, 103
    S = all_subsets_supports(d, N, q)
    n_sub = math.comb(d, q)
    per = N // n_sub
    assert S.shape == (per * n_sub, q)
    subsets, counts = np.unique(S, axis=0, return_counts=True)
    assert subsets.shape[0] == n_sub and np.all(counts == per)
    assert np.all(np.diff(subsets, axis=1) > 0)
    f = random_feature_map(d, N, q=q, subsets="all", rng=0)
    assert f.n_features == per * n_sub


def test_all_subsets_falls_back_to_random_subsets():
    S = all_subsets_supports(20, 50, 3, rng=1)  # C(20, 3) = 1140 > 50
    assert S.shape == (50, 3) and np.all(np.diff(S, axis=1) > 0)


# ------------------------------------------------------------ bad inputs
@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(d=5, n_features=10, q=6), "q"),
        (dict(d=5, n_features=10, q=0), "q"),
        (dict(d=5, n_features=0), "n_features"),
        (dict(d=0, n_features=3), "d"),
        (dict(d=5, n_features=10, activation="softplus"), "activation"),
        (dict(d=5, n_features=10, bias="gaussian"), "bias"),
        (dict(d=5, n_features=10, distribution="cauchy"), "distribution"),
        (dict(d=5, n_features=10, subsets="some"), "subsets"),
        (dict(d=5, n_features=10, rng="seed"), "rng"),
    ],
)
def test_bad_map_arguments(kwargs, name):
    with pytest.raises(ValueError, match=name):
        random_feature_map(**kwargs)


def test_bad_distribution_parameters():
    with pytest.raises(ValueError, match="scale"):
        Normal(-1.0)
    with pytest.raises(ValueError, match="high"):
        Uniform(1.0, 0.0)


def test_bad_transform_inputs():
    f = random_feature_map(4, 8, q=2, rng=0)
    with pytest.raises(ValueError, match="X"):
        f.transform(np.zeros((3, 5)))
    with pytest.raises(ValueError, match="X"):
        f.transform(np.zeros(4))
    X = np.zeros((3, 4))
    X[1, 2] = np.nan
    with pytest.raises(ValueError, match="X.*NaN"):
        f.transform(X)
    with pytest.raises(ValueError, match="dtype"):
        f.transform(np.zeros((3, 4)), dtype=np.int32)
    with pytest.raises(ValueError, match="columns"):
        f.columns(np.zeros((3, 4)), [8])


def test_feature_map_constructor_validates():
    with pytest.raises(ValueError, match="supports"):
        FeatureMap(np.array([[0, 7]]), np.ones((1, 2)), np.zeros(1), "sin", 4)
    with pytest.raises(ValueError, match="bias"):
        FeatureMap(np.array([[0, 1]]), np.ones((1, 2)), np.zeros(2), "sin", 4)


# ---------------------------------------------------------------- train/test
def test_test_data_transformed_like_train_data(rng):
    f = random_feature_map(6, 30, q=2, activation="fourier", rng=3)
    X_train, X_test = rng.normal(size=(40, 6)), rng.normal(size=(9, 6))
    both = f.transform(np.vstack([X_train, X_test]))
    np.testing.assert_array_equal(f.transform(X_test), both[40:])
    np.testing.assert_array_equal(f.transform(X_train), both[:40])


@pytest.mark.parametrize("activation", ["sin", "fourier", "exp", "relu"])
def test_columns_and_subset(activation, rng):
    f = random_feature_map(7, 25, q=3, activation=activation, rng=8)
    X = rng.normal(size=(10, 7))
    A = reference(f, X)
    cols = np.array([3, 0, f.n_columns - 1, 3, f.n_columns // 2])
    np.testing.assert_allclose(f.columns(X, cols), A[:, cols], **TOL)
    mask = np.zeros(f.n_columns, bool)
    mask[[1, 4]] = True
    np.testing.assert_allclose(f.columns(X, mask), A[:, [1, 4]], **TOL)
    sub = f.subset([4, 2])
    np.testing.assert_array_equal(sub.supports, f.supports[[4, 2]])


# ---------------------------------------------------------------- operator
@pytest.mark.parametrize("activation", ["sin", "fourier", "exp"])
@pytest.mark.parametrize("q", [2, 5])
def test_operator_matches_dense(activation, q, rng):
    f = random_feature_map(5, 33, q=q, activation=activation, rng=9)
    X = rng.normal(size=(29, 5))
    A = reference(f, X)
    op = f.operator(X, block_rows=4)  # several blocks, the last one partial
    assert op.shape == A.shape and op.dtype == A.dtype
    c = rng.normal(size=A.shape[1]) + (1j * rng.normal(size=A.shape[1]) if f.is_complex else 0)
    r = rng.normal(size=A.shape[0])
    np.testing.assert_allclose(op.matvec(c), A @ c, **TOL)
    np.testing.assert_allclose(op.rmatvec(r), A.conj().T @ r, **TOL)
    C = rng.normal(size=(A.shape[1], 3))
    np.testing.assert_allclose(op.matmat(C), A @ C, **TOL)
    np.testing.assert_allclose(op.H @ r, A.conj().T @ r, **TOL)
    cols = np.array([5, 1, A.shape[1] - 1])
    np.testing.assert_allclose(op.columns(cols), A[:, cols], **TOL)
    np.testing.assert_allclose(op.column_norms(), np.linalg.norm(A, axis=0), **TOL)
    np.testing.assert_allclose(op.todense(), A, **TOL)


def test_operator_column_scaling(rng):
    f = random_feature_map(4, 12, q=2, rng=10)
    X = rng.normal(size=(15, 4))
    A = reference(f, X)
    scale = 1.0 / np.linalg.norm(A, axis=0)
    op = f.operator(X, col_scale=scale, block_rows=6)
    c = rng.normal(size=12)
    np.testing.assert_allclose(op @ c, (A * scale) @ c, **TOL)
    np.testing.assert_allclose(op.column_norms(), np.ones(12), **TOL)
    with pytest.raises(ValueError, match="col_scale"):
        f.operator(X, col_scale=np.ones(3))


def test_operator_memory_is_blocked(rng):
    # the operator must never materialise the m x N matrix: with tiny blocks,
    # the largest array it creates is block_rows x N
    f = random_feature_map(3, 50, q=1, rng=0)
    X = rng.normal(size=(40, 3))
    op = f.operator(X, block_rows=5)
    shapes = [A.shape for _, _, A in op._blocks()]
    assert max(s[0] for s in shapes) == 5 and len(shapes) == 8


# ---------------------------------------------------------- variable usage
@pytest.mark.parametrize("weighting", ["magnitude", "count"])
@pytest.mark.parametrize("activation", ["sin", "fourier"])
def test_variable_usage_matches_reference(weighting, activation, rng):
    f = random_feature_map(6, 20, q=2, activation=activation, rng=1)
    coef = rng.normal(size=f.n_columns) * (rng.random(f.n_columns) < 0.3)
    u = variable_usage(f, coef, weighting=weighting)
    np.testing.assert_allclose(u, naive.variable_usage(f.supports, 20, 6, coef, weighting), **TOL)
    assert u.sum() == pytest.approx(1.0)
    cols = np.flatnonzero(coef)
    np.testing.assert_allclose(variable_usage(f, coef[cols], columns=cols, weighting=weighting), u)


def test_variable_usage_concentrates_on_used_variables():
    f = random_feature_map(5, 10, q=1, rng=2)
    coef = np.where(f.supports[:, 0] == 3, 1.0, 0.0)
    if coef.any():
        assert variable_usage(f, coef)[3] == pytest.approx(1.0)
    assert np.all(variable_usage(f, np.zeros(10)) == 0)
    with pytest.raises(ValueError, match="coef"):
        variable_usage(f, np.ones(3))


def test_too_large_feature_matrix_raises_memory_error_before_allocating():
    f = random_feature_map(3, 10**6, q=1, rng=0)
    X = np.zeros((10**5, 3))  # 10^5 x 10^6 float64 features: 800 GB
    with pytest.raises(MemoryError, match="feature matrix.*operator"):
        f.transform(X)


def test_empty_column_selection(rng):
    f = random_feature_map(3, 5, q=1, activation="fourier", rng=0)
    X = rng.normal(size=(4, 3))
    assert f.columns(X, []).shape == (4, 0)
    assert f.operator(X).columns(np.array([], dtype=int)).shape == (4, 0)


@pytest.mark.parametrize("activation", ["sin", "cos", "fourier"])
@pytest.mark.parametrize("q", [2, 6])
def test_huge_phases_take_the_libm_path(activation, q, rng):
    # phases beyond SINCOS_MAX_ABS: the fused kernels fall back to math.sin/cos;
    # agreement to 1e-9 because the phase itself carries ~1e-10 of rounding there
    f = random_feature_map(6, 20, q=q, activation=activation, distribution=Normal(1e7), rng=3)
    X = rng.uniform(-1, 1, (9, 6))
    np.testing.assert_allclose(f.transform(X), reference(f, X), rtol=0, atol=1e-9)


@pytest.mark.parametrize("activation", ["sin", "fourier"])
def test_columns_bitwise_equal_to_full_matrix(activation, rng):
    # solvers mix A[:, S] with products of the full matrix; on ill-conditioned
    # dictionaries (SHRIMP, q = 1) even 1-ulp differences change the path
    f = random_feature_map(20, 300, q=2, activation=activation, rng=4)
    X = rng.uniform(-1, 1, (40, 20))
    cols = rng.permutation(f.n_columns)[:77]
    np.testing.assert_array_equal(f.columns(X, cols), f.transform(X)[:, cols])


@pytest.mark.parametrize("n_cols", [1, 50])
def test_columns_on_the_blas_path_agree_to_preactivation_rounding(n_cols, rng):
    """d <= DENSE_RATIO * q: the pre-activation is a BLAS product, which may sum
    in another order for another column set (here a single column goes through
    gemv: differences of ~1e-14 were seen), so selected columns are only
    equal to the rounding of the phase, 4 d eps max|phase| (documented)."""
    d = 100
    f = random_feature_map(d, 3000, q=d, activation="sin", rng=4)
    assert f.uses_blas
    X = rng.uniform(-1, 1, (1000, d))
    cols = rng.permutation(f.n_columns)[:n_cols]
    phase = np.abs(X @ f.dense_weights().T + f.bias).max()
    np.testing.assert_allclose(f.columns(X, cols), f.transform(X)[:, cols], rtol=0,
                               atol=4 * d * np.finfo(float).eps * phase)


def test_distribution_parameters_that_would_overflow_are_refused():
    with pytest.raises(ValueError, match=r"scale must be <= .*, got 1e\+300"):
        Normal(1e300)
    with pytest.raises(ValueError, match="scale must be finite, got a value too large"):
        Normal(10**400)
    with pytest.raises(ValueError, match=r"low must be >= "):
        Uniform(-1e300, 1.0)
    with pytest.raises(ValueError, match=r"high must be <= "):
        Uniform(0.0, 1e300)
    Normal(1e100)  # large but representable draws are fine
