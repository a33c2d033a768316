"""Adaptive random Fourier features (rflite.metropolis): kernels, Algorithms 1-3, models."""

import math
import sys

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

from rflite._arff import kernels as kern
from rflite import metropolis as mp
from rflite.datasets import make_metropolis1, make_metropolis3
from rflite.metropolis import (
    ARFFClassifier,
    ARFFRegressor,
    Standardizer,
    arff,
    fixed_rff,
    fourier_amplitudes,
)


# --------------------------------------------------------------- references
def naive_accept(norm_prop, norm_cur, omega_prop, u, gamma, omega_max):
    """The Metropolis test of Algorithm 2 written out feature by feature."""
    out = np.zeros(len(u), dtype=bool)
    for k in range(len(u)):
        a, b = np.sqrt(norm_prop[k]), np.sqrt(norm_cur[k])
        if b == 0:
            ratio = 1.0 if a == 0 else np.inf
        else:
            with np.errstate(over="ignore"):
                ratio = (a / b) ** gamma
        out[k] = ratio > u[k] and np.linalg.norm(omega_prop[k]) < omega_max
    return out


def naive_amplitudes(X, Y, omega, lam):
    """(S^* S + lam N I) beta = S^* y by numpy.linalg.solve."""
    S = np.exp(1j * X @ omega.T)
    return np.linalg.solve(S.conj().T @ S + lam * len(X) * np.eye(len(omega)), S.conj().T @ Y)


def naive_arff(X, y, K, n_iter, delta, gamma, lam, refit_every, rng):
    """Algorithm 1 transcribed literally (same random draws as rflite's arff)."""
    rng = np.random.default_rng(rng)
    omega = np.zeros((K, X.shape[1]))
    beta = naive_amplitudes(X, y, omega, lam)
    for i in range(1, n_iter + 1):
        z = rng.standard_normal(omega.shape)
        u = rng.random(K)
        omega_p = omega + delta * z
        beta_p = naive_amplitudes(X, y, omega_p, lam)
        for k in range(K):
            if abs(beta_p[k]) ** gamma / abs(beta[k]) ** gamma > u[k]:
                omega[k] = omega_p[k]
                beta[k] = beta_p[k]
        if i % refit_every == 0 or i == n_iter:
            beta = naive_amplitudes(X, y, omega, lam)
    return omega, beta


@pytest.fixture(scope="module")
def two_cosines():
    rng = np.random.default_rng(7)
    X = rng.standard_normal((400, 1))
    return X, np.cos(3 * X[:, 0]) + np.cos(7 * X[:, 0])


# ------------------------------------------------------------------ kernel
@pytest.mark.parametrize("kernel", [mp._accept_kernel, kern._accept_parallel])
def test_accept_kernel_matches_numpy(kernel):
    rng = np.random.default_rng(0)
    K = 200
    norm_prop = rng.exponential(size=K)
    norm_cur = rng.exponential(size=K)
    norm_prop[:5] = 0.0
    norm_cur[3:8] = 0.0  # 0/0 (accepted) and x/0 (accepted)
    omega = rng.standard_normal((K, 3)) * 2
    u = rng.random(K)
    for gamma, omax in [(1.0, math.inf), (13.0, 3.0), (0.0, math.inf), (2350.0, 2.0)]:
        acc = np.empty(K, dtype=np.bool_)
        n = kernel(norm_prop, norm_cur, omega, u, gamma, omax, acc)
        ref = naive_accept(norm_prop, norm_cur, omega, u, gamma, omax)
        assert_array_equal(acc, ref)  # exact: same uniforms, same comparisons
        assert n == ref.sum()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(0, 1e6, allow_subnormal=False), min_size=1, max_size=20),
    st.floats(0, 50),
    st.data(),
)
def test_accept_kernel_property(norms, gamma, data):
    """Any amplitudes, exponent and uniforms: the kernel equals the transcription."""
    K = len(norms)
    other = np.array(data.draw(st.lists(st.floats(0, 1e6, allow_subnormal=False),
                                        min_size=K, max_size=K)))
    u = np.array(data.draw(st.lists(st.floats(0, 1, exclude_max=True), min_size=K,
                                    max_size=K)))
    omega = np.zeros((K, 1))
    acc = np.empty(K, dtype=np.bool_)
    mp._accept_kernel(np.array(norms), other, omega, u, gamma, math.inf, acc)
    assert_array_equal(acc, naive_accept(np.array(norms), other, omega, u, gamma, math.inf))


def test_accept_kernel_with_a_subnormal_exponent():
    """A zero proposal amplitude against a positive one: ratio 0 ** (gamma / 2) = 0 for
    every gamma > 0, also the smallest, where gamma / 2 rounds to 0 (so the ratio
    would be 1 and the proposal accepted)."""
    acc = np.empty(1, dtype=np.bool_)
    mp._accept_kernel(np.array([0.0]), np.array([1.0]), np.zeros((1, 1)), np.array([0.0]),
                      5e-324, math.inf, acc)
    assert not acc[0]
    assert_array_equal(acc, naive_accept(np.array([0.0]), np.array([1.0]), np.zeros((1, 1)),
                                         np.array([0.0]), 5e-324, math.inf))


def test_parallel_kernel_thread_count_invariant():
    rng = np.random.default_rng(1)
    K = 5000
    args = (rng.exponential(size=K), rng.exponential(size=K), rng.standard_normal((K, 2)),
            rng.random(K), 4.0, 2.5)
    outs = []
    before = numba.get_num_threads()
    try:
        for t in sorted({1, numba.config.NUMBA_NUM_THREADS}):
            numba.set_num_threads(t)
            acc = np.empty(K, dtype=np.bool_)
            kern._accept_parallel(*args, acc)
            outs.append(acc)
    finally:
        numba.set_num_threads(before)
    serial = np.empty(K, dtype=np.bool_)
    mp._accept_kernel(*args, serial)
    for acc in outs:
        assert_array_equal(acc, serial)


# ---------------------------------------------------------- linear algebra
def test_amplitudes_match_normal_equations():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((150, 3))
    Y = rng.standard_normal((150, 2))
    W = rng.standard_normal((12, 3))
    beta = fourier_amplitudes(X, Y, W, lam=0.05)
    assert_allclose(beta, naive_amplitudes(X, Y, W, 0.05), rtol=1e-10, atol=1e-12)
    # multi-output = one solve per column
    assert_allclose(beta[:, 1], fourier_amplitudes(X, Y[:, 1], W, lam=0.05), rtol=1e-12)
    # sigmoid: real S = expit(W [x, 1])
    Ws = rng.standard_normal((12, 4))
    S = 1.0 / (1.0 + np.exp(-(np.hstack([X, np.ones((150, 1))]) @ Ws.T)))
    ref = np.linalg.solve(S.T @ S + 0.05 * 150 * np.eye(12), S.T @ Y)
    got = fourier_amplitudes(X, Y, Ws, lam=0.05, activation="sigmoid")
    assert not np.iscomplexobj(got)
    assert_allclose(got, ref, rtol=1e-9, atol=1e-12)


def test_gram_update_only_rebuilds_stale_rows():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((80, 2))
    S = mp._features(X, rng.standard_normal((10, 2)), "exp")
    G = mp._gram(S)
    assert_allclose(G, S.conj().T @ S, rtol=1e-12, atol=1e-10)
    stale = np.zeros(10, dtype=bool)
    idx = [1, 4, 7]
    S[:, idx] = mp._features(X, rng.standard_normal((3, 2)), "exp")
    stale[idx] = True
    G = kern._refresh_gram(G, S, stale)
    assert_allclose(G, S.conj().T @ S, rtol=1e-12, atol=1e-10)
    assert not stale.any()


# ---------------------------------------------------------------- algorithm
def test_matches_literal_transcription_of_algorithm_1():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((120, 2))
    y = np.sin(2 * X[:, 0]) * np.cos(X[:, 1])
    res = arff(X, y, n_features=8, n_iter=25, delta=0.7, gamma=4.0, lam=0.1, refit_every=5,
               rng=11)
    omega, beta = naive_arff(X, y, 8, 25, 0.7, 4.0, 0.1, 5, 11)
    assert_allclose(res.frequencies, omega, rtol=1e-12, atol=1e-12)
    assert_allclose(res.amplitudes, beta, rtol=1e-8, atol=1e-10)


def test_gamma_zero_accepts_everything(two_cosines):
    X, y = two_cosines
    res = arff(X, y, n_features=8, n_iter=20, gamma=0.0, rng=0)
    assert_array_equal(res.acceptance, np.ones(20))
    # every proposal accepted: the chain is a plain random walk from 0
    rng = np.random.default_rng(0)
    walk = np.zeros((8, 1))
    for _ in range(20):
        walk += mp.DELTA_NUMERATOR * rng.standard_normal((8, 1))
        rng.random(8)
    assert_allclose(res.frequencies, walk, rtol=1e-12)


def test_result_shapes_and_trace(two_cosines):
    X, y = two_cosines
    seen = []
    res = arff(X, y, n_features=8, n_iter=12, delta=0.5, rng=0,
               callback=lambda i, w, b: seen.append(i))
    assert seen == list(range(1, 13))
    assert res.frequencies.shape == (8, 1) and res.amplitudes.shape == (8,)
    assert res.acceptance.shape == (12,) and res.train_error.shape == (13,)
    assert res.covariance.shape == (1, 1)
    assert np.all((res.acceptance >= 0) & (res.acceptance <= 1))
    # the last trace entry is the error of the final refit
    beta = fourier_amplitudes(X, y, res.frequencies, lam=0.1)
    assert_allclose(res.amplitudes, beta, rtol=1e-10)
    # ... of the complex model, by the modulus of its residual as in the paper
    pred = np.exp(1j * X @ res.frequencies.T) @ beta
    assert_allclose(res.train_error[-1], np.mean(np.abs(pred - y) ** 2), rtol=1e-10)
    assert res.train_error[-1] > np.mean((pred.real - y) ** 2) * (1 + 1e-6)


def test_same_seed_same_result(two_cosines, monkeypatch):
    X, y = two_cosines
    kw = dict(n_features=8, n_iter=30, delta=0.5, adaptive_covariance=True, burn_in=5)
    a = arff(X, y, rng=5, **kw)
    b = arff(X, y, rng=np.random.default_rng(5), **kw)
    for fa, fb in zip(a, b):
        assert_array_equal(fa, fb)
    c = arff(X, y, rng=6, **kw)
    assert not np.array_equal(a.frequencies, c.frequencies)
    # with the numba-parallel accept kernel, on 1 thread and on all threads
    monkeypatch.setattr(kern, "PARALLEL_MIN_FEATURES", 1)
    monkeypatch.setattr(kern, "PARALLEL_MIN_ENTRIES", 1)
    before = numba.get_num_threads()
    try:
        for t in sorted({1, numba.config.NUMBA_NUM_THREADS}):
            numba.set_num_threads(t)
            p = arff(X, y, rng=5, **kw)
            for fa, fp in zip(a, p):
                assert_array_equal(fa, fp)
    finally:
        numba.set_num_threads(before)


def test_frequencies_concentrate_on_the_spectrum(two_cosines):
    """f = cos(3x) + cos(7x): |f_hat| sits at |omega| = 3 and 7 (paper Sec. 3, Remark 3.2)."""
    X, y = two_cosines
    res = arff(X, y, n_features=16, n_iter=300, delta=0.5, gamma=8.0, rng=0)
    w = np.abs(res.frequencies[:, 0])
    near = (np.abs(w - 3) < 1) | (np.abs(w - 7) < 1)
    assert near.mean() >= 0.75
    assert res.train_error[-1] < 0.05 * np.var(y)
    # fixed N(0, 1) frequencies cannot reach omega = 7
    base = fixed_rff(X, y, n_features=16, rng=0)
    assert base.train_error[-1] > 10 * res.train_error[-1]


def test_adaptive_covariance_becomes_elongated_on_case3():
    """Case 3: the optimal density is N(0, diag(32^2, 32^-2)) (wide in omega_1)."""
    X, y = make_metropolis3(400, rng=0)
    model = ARFFRegressor(32, n_iter=200, delta=0.5, adaptive_covariance=True,
                          random_state=0).fit(X, y)
    C = model.result_.covariance
    assert C[0, 0] / C[1, 1] > 10
    assert np.all(np.linalg.eigvalsh(C) > 0)


def test_omega_max_caps_the_frequencies(two_cosines):
    X, y = two_cosines
    res = arff(X, y, n_features=8, n_iter=40, omega_max=4.0, rng=0)
    assert np.all(np.linalg.norm(res.frequencies, axis=1) < 4.0)


def test_multi_output_accept_on_the_norm(two_cosines):
    """Two identical outputs: the norm ratio equals the single-output ratio."""
    X, y = two_cosines
    one = arff(X, y, n_features=8, n_iter=20, delta=0.5, rng=3)
    two = arff(X, np.column_stack([y, y]), n_features=8, n_iter=20, delta=0.5, rng=3)
    assert_allclose(two.frequencies, one.frequencies, rtol=1e-12)
    assert two.amplitudes.shape == (8, 2)
    assert_allclose(two.amplitudes[:, 1], one.amplitudes, rtol=1e-9)


def test_sigmoid_variant(two_cosines):
    X, y = two_cosines
    res = arff(X, np.tanh(2 * X[:, 0]), n_features=8, n_iter=40, activation="sigmoid", rng=0)
    assert res.frequencies.shape == (8, 2)  # weight and bias
    assert not np.iscomplexobj(res.amplitudes)
    assert res.train_error[-1] < 0.1 * res.train_error[0]


# ---------------------------------------------------------------- Algorithm 3
def test_standardizer_round_trip():
    rng = np.random.default_rng(8)
    A = rng.standard_normal((50, 3)) * [1.0, 10.0, 0.0] + [5.0, -2.0, 3.0]
    st = Standardizer.fit(A)
    Z = st.transform(A)
    assert_allclose(Z[:, :2].mean(0), 0, atol=1e-12)
    assert_allclose(Z[:, :2].std(0, ddof=1), 1, rtol=1e-12)
    assert_allclose(Z[:, 2], 0, atol=1e-12)  # constant column: centred only
    assert_allclose(st.inverse_transform(Z), A, rtol=1e-12, atol=1e-12)


def test_regressor_is_affine_equivariant():
    """Fitting on a*X+b, c*y+e gives c*pred+e at a*x+b (Algorithm 3 folded into the map)."""
    X, y = make_metropolis1(200, a=0.1, rng=1)
    kw = dict(n_iter=20, random_state=0)
    m1 = ARFFRegressor(8, **kw).fit(X, y)
    m2 = ARFFRegressor(8, **kw).fit(3 * X - 2, -4 * y + 7)
    Xt, _ = make_metropolis1(50, a=0.1, rng=2)
    assert_allclose(m2.predict(3 * Xt - 2), -4 * m1.predict(Xt) + 7, rtol=1e-8, atol=1e-8)
    # predictions = mapped-back model on standardised data
    r = m1.result_
    Xn = m1.x_standardizer_.transform(Xt)
    ref = (np.exp(1j * Xn @ r.frequencies.T) @ r.amplitudes).real
    assert_allclose(m1.predict(Xt), m1.y_standardizer_.inverse_transform(ref[:, None])[:, 0],
                    rtol=1e-9)
    # the matrix-free operator gives the same predictions
    op = m1.feature_map_.operator(Xt)
    assert_allclose((op.matvec(m1.coef_)).real + m1.intercept_, m1.predict(Xt), rtol=1e-9)


def test_regressor_multi_output_and_sigmoid():
    X, y = make_metropolis1(200, a=0.1, rng=1)
    Y = np.column_stack([y, 2 * y + 1])
    m = ARFFRegressor(8, n_iter=15, random_state=0).fit(X, Y)
    assert m.predict(X).shape == (200, 2)
    assert m.score(X, Y) > 0.5
    s = ARFFRegressor(8, n_iter=15, activation="sigmoid", random_state=0).fit(X, y)
    assert s.predict(X).shape == (200,)
    assert np.isfinite(s.score(X, y))
    f = ARFFRegressor(8, method="fixed", scale=2.0, random_state=0).fit(X, y)
    assert f.result_.acceptance.size == 0
    assert_allclose(f.result_.covariance, 4.0 * np.eye(1))


def test_classifier_digits_stand_in():
    datasets = pytest.importorskip("sklearn.datasets")
    X, y = datasets.load_digits(return_X_y=True)
    X, y = X[:700], y[:700]
    clf = ARFFClassifier(32, n_iter=20, delta=0.1, random_state=0).fit(X[:500], y[:500])
    assert clf.decision_function(X[500:]).shape == (200, 10)
    acc = clf.score(X[500:], y[500:])
    assert acc > 0.6
    fixed = ARFFClassifier(32, method="fixed", random_state=0).fit(X[:500], y[:500])
    assert fixed.score(X[500:], y[500:]) < acc
    assert set(clf.predict(X[500:])) <= set(range(10))


def test_estimator_conventions():
    m = ARFFRegressor(8, n_iter=5, lam=0.2)
    params = m.get_params()
    assert params["n_features"] == 8 and params["lam"] == 0.2 and "random_state" in params
    m.set_params(n_iter=3)
    assert m.n_iter == 3
    with pytest.raises(ValueError, match="invalid parameter"):
        m.set_params(bogus=1)
    assert "ARFFRegressor(" in repr(m)
    with pytest.raises(ValueError, match="not fitted"):
        m.predict(np.zeros((2, 1)))
    X, y = make_metropolis1(60, a=0.1, rng=0)
    assert m.fit(X, y) is m
    imp = m.variable_importance()
    assert_allclose(imp, [1.0])


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "kw, name",
    [
        (dict(n_features=0), "n_features"),
        (dict(n_iter=-1), "n_iter"),
        (dict(delta=0.0), "delta"),
        (dict(gamma=-1.0), "gamma"),
        (dict(lam=0.0), "lam"),
        (dict(refit_every=0), "refit_every"),
        (dict(burn_in=-2), "burn_in"),
        (dict(omega_max=0.0), "omega_max"),
        (dict(omega_max="big"), "omega_max"),
        (dict(activation="relu"), "activation"),
        (dict(adaptive_covariance="yes"), "adaptive_covariance"),
        (dict(rng="seed"), "rng"),
        (dict(callback=3), "callback"),
    ],
)
def test_bad_parameters_raise(kw, name):
    X = np.zeros((10, 1))
    y = np.zeros(10)
    args = dict(n_features=4, n_iter=2)
    args.update(kw)
    with pytest.raises(ValueError, match=name):
        arff(X, y, **args)


def test_bad_data_raise():
    with pytest.raises(ValueError, match="X"):
        arff(np.array([[np.nan], [1.0]]), np.zeros(2), n_features=2, n_iter=1)
    with pytest.raises(ValueError, match="same number of rows"):
        arff(np.zeros((5, 1)), np.zeros(4), n_features=2, n_iter=1)
    with pytest.raises(ValueError, match="y"):
        arff(np.zeros((5, 1)), np.zeros((5, 2, 2)), n_features=2, n_iter=1)
    with pytest.raises(ValueError, match="method"):
        ARFFRegressor(4, method="sgd").fit(np.zeros((5, 1)), np.arange(5.0))
    with pytest.raises(ValueError, match="scale"):
        fixed_rff(np.zeros((5, 1)), np.zeros(5), n_features=2, scale=-1.0)
    with pytest.raises(ValueError, match="frequencies"):
        fourier_amplitudes(np.zeros((5, 2)), np.zeros(5), np.zeros((3, 1)))
    with pytest.raises(ValueError, match="classes"):
        ARFFClassifier(4).fit(np.zeros((5, 1)), np.zeros(5))


# ---------------------------------------------------------------- experiment
def test_case1_quick_experiment(tmp_path):
    from rflite.experiments import Context, run_experiment

    res = run_experiment("arff-case1", Context(quick=True, out=tmp_path))
    assert (tmp_path / "arff_case1.png").stat().st_size > 1000
    assert res["alg1"]["error"][-1] < res["rff"]["error"][-1]


def test_feature_kernels_match_numpy(monkeypatch):
    rng = np.random.default_rng(9)
    X = rng.standard_normal((300, 3))
    W = 4 * rng.standard_normal((37, 3))
    ref = np.exp(1j * X @ W.T)
    assert_allclose(mp._features(X, W, "exp"), ref, rtol=0, atol=1e-13)
    # the threaded path (column blocks, any thread count) gives the same numbers
    monkeypatch.setattr(kern, "PARALLEL_MIN_ENTRIES", 1)
    before = numba.get_num_threads()
    try:
        for t in sorted({1, numba.config.NUMBA_NUM_THREADS}):
            numba.set_num_threads(t)
            assert_array_equal(mp._features(X, W, "exp"), mp._features(X, W, "exp"))
            assert_allclose(mp._features(X, W, "exp"), ref, rtol=0, atol=1e-13)
    finally:
        numba.set_num_threads(before)
    sig = mp._features(X, W, "sigmoid")
    assert_allclose(sig, 1 / (1 + np.exp(-X @ W.T)), rtol=1e-12)


def test_chain_keeps_gram_consistent_through_swaps():
    """After low- and high-acceptance steps the refreshed Gram equals S^* S of the current S."""
    rng = np.random.default_rng(10)
    X = rng.standard_normal((120, 2))
    y = np.cos(2 * X[:, 0]).reshape(-1, 1)
    chain = mp._Chain(X, y, 12, 0.1 * 120, "exp")
    for u_level in (0.999999, 0.0, 0.5, 0.0):  # few accepted, all accepted, mixed
        omega_p = chain.omega + 0.7 * rng.standard_normal(chain.omega.shape)
        n = chain.step(omega_p, np.full(12, u_level), 2.0, np.inf)
        assert 0 <= n <= 12
        assert_allclose(chain.S, np.exp(1j * X @ chain.omega.T), atol=1e-13)
        chain.refit()
        assert_allclose(chain.G, chain.S.conj().T @ chain.S, rtol=1e-12, atol=1e-10)
        assert_allclose(chain.beta, naive_amplitudes(X, y, chain.omega, 0.1), rtol=1e-9)


def test_digits_experiment_skips_without_sklearn(monkeypatch, tmp_path, capsys):
    from rflite.experiments import Context, run_experiment

    monkeypatch.setitem(sys.modules, "sklearn", None)
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    res = run_experiment("arff-digits", Context(quick=True, out=tmp_path))
    assert "skipped" in res
    assert "scikit-learn is not installed" in capsys.readouterr().out


@pytest.mark.parametrize("scale", [1.0, 3e5])  # the second takes the libm fallback
def test_exp_features_match_numpy(scale):
    """exp(i X W^T) by the sincos kernel, to 1e-15 absolute (1e-9 relative to the phase
    for phases beyond SINCOS_MAX_ABS, where the phase itself carries that rounding)."""
    from rflite import metropolis as mp

    rng = np.random.default_rng(1)
    X = rng.standard_normal((50, 3))
    W = rng.standard_normal((7, 3)) * scale
    S = mp._features(X, W, "exp")
    ref = np.exp(1j * (X @ W.T))
    atol = 1e-15 if scale == 1.0 else 1e-9
    np.testing.assert_allclose(S, ref, rtol=0, atol=atol)
