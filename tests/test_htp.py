"""Tests of rflite.htp (HARFE): against a loop-level NumPy transcription of
Algorithm 1, exact recovery, stopping rules, the operator path, the model class
and bad input."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rflite import htp
from rflite._htp import support as _htp_support
from rflite._core.linalg import IllConditionedWarning
from rflite.datasets import make_friedman1
from rflite.features import random_feature_map
from rflite.htp import HARFERegressor, harfe, top_s
from rflite._htp import solver as _htp_solver


# ----------------------------------------------------------- naive reference
def naive_harfe(A, y, s, lam, mu=0.1, max_iter=50, tol=htp.DEFAULT_TOL, c0=None):
    """HARFE Algorithm 1 written for readability: full products, a stable sort
    for the top s magnitudes (ties to the smaller index), numpy.linalg.solve."""
    m, n = A.shape
    dtype = np.result_type(A, y, float)
    c = np.zeros(n, dtype) if c0 is None else np.array(c0, dtype)
    support = None
    residuals = []
    for _ in range(max_iter):
        g = (1 - m * mu * lam) * c + mu * A.conj().T @ (y - A @ c)
        new = np.sort(np.argsort(-np.abs(g), kind="stable")[:s])
        if support is not None and np.array_equal(new, support):
            residuals.append(residuals[-1])
            return c, support, len(residuals), "fixed_point", residuals
        support = new
        AS = A[:, support]
        c = np.zeros(n, dtype)
        c[support] = np.linalg.solve(AS.conj().T @ AS + m * lam * np.eye(s), AS.conj().T @ y)
        residuals.append(np.linalg.norm(A @ c - y) / np.linalg.norm(y))
        if residuals[-1] <= tol:
            return c, support, len(residuals), "tol", residuals
    return c, support, len(residuals), "max_iter", residuals


def random_problem(m, n, rng, complex_=False, k=None):
    A = rng.standard_normal((m, n))
    if complex_:
        A = A + 1j * rng.standard_normal((m, n))
    A /= np.linalg.norm(A, axis=0)
    y = rng.standard_normal(m) + (1j * rng.standard_normal(m) if complex_ else 0)
    return A, y


CASES = [  # (m, n, s, lam, complex)
    (30, 80, 8, 1e-3, False),
    (40, 100, 10, 0.0, False),
    (25, 60, 5, 1e-2, True),
    (15, 60, 25, 1e-2, False),  # s > m: the dual system
    (12, 50, 20, 1e-3, True),  # s > m, complex
    (40, 120, 10, 1e-2, False),  # long trajectory (50 iterations at mu = 1)
    (50, 50, 50, 1e-3, False),  # s = N
]


@pytest.mark.parametrize("m, n, s, lam, cplx", CASES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_naive_transcription(m, n, s, lam, cplx, seed):
    rng = np.random.default_rng(seed)
    A, y = random_problem(m, n, rng, cplx)
    mu = 1.0 if n == 120 else 0.1
    res = harfe(A, y, s=s, lam=lam, mu=mu)
    c, support, n_iter, reason, residuals = naive_harfe(A, y, s, lam, mu=mu)
    np.testing.assert_array_equal(res.support, support)
    np.testing.assert_allclose(res.coef, c, rtol=0, atol=1e-10 * max(1, np.abs(c).max()))
    assert res.n_iter == n_iter and res.stop_reason == reason
    np.testing.assert_allclose(res.residuals, residuals, rtol=1e-9)
    assert res.coef.dtype == (np.complex128 if cplx else np.float64)
    assert np.count_nonzero(res.coef) <= s


def test_matches_naive_with_start_vector():
    rng = np.random.default_rng(5)
    A, y = random_problem(30, 90, rng)
    c0 = np.zeros(90)
    c0[rng.choice(90, 20, replace=False)] = rng.standard_normal(20)  # more than s nonzeros
    res = harfe(A, y, s=7, lam=1e-3, c0=c0)
    c, support, *_ = naive_harfe(A, y, 7, 1e-3, c0=c0)
    np.testing.assert_array_equal(res.support, support)
    np.testing.assert_allclose(res.coef, c, atol=1e-10)


@pytest.mark.parametrize("m, s", [(30, 6), (10, 20)])
def test_real_matrix_complex_target(m, s):
    rng = np.random.default_rng(9)
    A, _ = random_problem(m, 60, rng)
    y = rng.standard_normal(m) + 1j * rng.standard_normal(m)
    res = harfe(A, y, s=s, lam=1e-2)
    c, support, *_ = naive_harfe(A, y, s, 1e-2)
    np.testing.assert_array_equal(res.support, support)
    np.testing.assert_allclose(res.coef, c, atol=1e-10)


@pytest.mark.parametrize("fraction", [0.0, 1.0])
@pytest.mark.parametrize("m, s, seed", [(40, 10, 0), (15, 30, 0)])
def test_gram_update_equals_rebuild(monkeypatch, fraction, m, s, seed):
    """Reusing the support Gram (fraction 1) gives the rebuilt iterates (fraction 0)."""
    A, y = random_problem(m, 120, np.random.default_rng(seed))
    ref = harfe(A, y, s=s, lam=1e-2, mu=1.0, tol=0)
    calls = []
    update = htp._SupportSystem._update
    monkeypatch.setattr(_htp_solver, "GRAM_REUSE_FRACTION", fraction)
    monkeypatch.setattr(htp._SupportSystem, "_update",
                        lambda self, *a: calls.append(1) or update(self, *a))
    res = harfe(A, y, s=s, lam=1e-2, mu=1.0, tol=0)
    np.testing.assert_array_equal(res.support, ref.support)
    np.testing.assert_allclose(res.coef, ref.coef, atol=1e-10)
    assert res.n_iter == ref.n_iter > 5
    assert (len(calls) > 3) == (fraction == 1.0)


@pytest.mark.parametrize("cplx", [False, True])
@pytest.mark.parametrize("j", [0, 3, 6])
def test_chol_delete_matches_cholesky_of_reduced_matrix(cplx, j):
    rng = np.random.default_rng(j)
    n = 7
    B = rng.standard_normal((10, n)) + (1j * rng.standard_normal((10, n)) if cplx else 0)
    M = B.conj().T @ B + 0.1 * np.eye(n)
    R = np.asfortranarray(np.linalg.cholesky(M).conj().T)  # upper, M = R^* R
    _htp_support._chol_delete(R, n, j)
    keep = np.delete(np.arange(n), j)
    Rk = R[: n - 1, : n - 1]
    np.testing.assert_allclose(Rk.conj().T @ Rk, M[np.ix_(keep, keep)], atol=1e-12)
    np.testing.assert_allclose(np.tril(Rk, -1), 0, atol=0)
    assert not R[n - 1].any() and not R[:, n - 1].any()
    # the factor is unique up to the (real positive) diagonal
    np.testing.assert_allclose(np.abs(Rk), np.abs(np.linalg.cholesky(M[np.ix_(keep, keep)]).T),
                               atol=1e-12)


# ----------------------------------------------------------------- recovery
def planted(rng, s=50, n=1000, cplx=False):
    """Gaussian A (m = 4s, unit columns) and a Gaussian s-sparse vector."""
    A, _ = random_problem(4 * s, n, rng, cplx)
    c = np.zeros(n, dtype=A.dtype)
    true_support = np.sort(rng.choice(n, s, replace=False))
    c[true_support] = rng.standard_normal(s) + (1j * rng.standard_normal(s) if cplx else 0)
    return A, c, true_support


@pytest.mark.parametrize("cplx", [False, True])
def test_planted_sparse_vector_recovered_exactly(cplx):
    """HTP with the compressed-sensing step mu = 1 (unit columns), lam = 0."""
    A, c, true_support = planted(np.random.default_rng(0), cplx=cplx)
    res = harfe(A, A @ c, s=true_support.size, lam=0.0, mu=1.0)
    np.testing.assert_array_equal(res.support, true_support)
    np.testing.assert_allclose(res.coef, c, atol=1e-10)
    assert res.converged


def test_planted_sparse_vector_with_noise():
    rng = np.random.default_rng(1)
    A, c, true_support = planted(rng)
    e = 1e-3 * rng.standard_normal(A.shape[0])
    res = harfe(A, A @ c + e, s=true_support.size, lam=0.0, mu=1.0)
    np.testing.assert_array_equal(res.support, true_support)
    # least squares on the true support: error of the order of the noise
    assert np.linalg.norm(res.coef - c) <= 3 * np.linalg.norm(e)


# ----------------------------------------------------------------- stopping
def test_fixed_point_stop():
    rng = np.random.default_rng(2)
    A, y = random_problem(30, 100, rng)
    res = harfe(A, y, s=5, lam=1e-3, max_iter=200)
    assert res.stop_reason == "fixed_point" and res.converged
    assert res.n_iter < 200
    assert res.residuals[-1] == res.residuals[-2]
    # a fixed point: restarting from it selects the same support at once
    again = harfe(A, y, s=5, lam=1e-3, c0=res.coef)
    np.testing.assert_array_equal(again.support, res.support)
    np.testing.assert_allclose(again.coef, res.coef, atol=1e-12)


def test_tol_and_max_iter_stops():
    rng = np.random.default_rng(4)
    A, y = random_problem(30, 100, rng)
    res = harfe(A, y, s=5, lam=1e-3, tol=0.99)
    assert res.stop_reason == "tol" and res.n_iter == 1 and res.residuals[0] <= 0.99
    res = harfe(A, y, s=5, lam=1e-3, max_iter=1)
    assert res.stop_reason == "max_iter" and not res.converged and res.n_iter == 1


def test_zero_target():
    A, _ = random_problem(10, 20, np.random.default_rng(0))
    res = harfe(A, np.zeros(10), s=3, lam=0.1)
    assert res.stop_reason == "zero_target" and res.converged and res.n_iter == 0
    assert not res.coef.any() and res.support.size == 0


# --------------------------------------------------------------- selection
def test_top_s_ties_go_to_smaller_index():
    a = np.array([1.0, 3.0, 2.0, 3.0, 2.0, 2.0, 0.0])
    np.testing.assert_array_equal(top_s(a, 3), [1, 2, 3])
    np.testing.assert_array_equal(top_s(a, 4), [1, 2, 3, 4])
    np.testing.assert_array_equal(top_s(np.zeros(5), 2), [0, 1])
    np.testing.assert_array_equal(top_s(a, 7), np.arange(7))


@given(st.lists(st.integers(0, 5), min_size=1, max_size=40), st.integers(1, 40))
def test_top_s_property(values, s):
    a = np.array(values, dtype=float)
    s = min(s, a.size)
    expected = np.sort(np.argsort(-a, kind="stable")[:s])
    np.testing.assert_array_equal(top_s(a, s), expected)


def test_duplicate_columns_are_deterministic():
    rng = np.random.default_rng(6)
    A, y = random_problem(20, 30, rng)
    A = np.hstack([A, A])  # every column twice: ties in |g|
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # singular support systems
        res = harfe(A, y, s=6, lam=1e-2)
    c, support, *_ = naive_harfe(A, y, 6, 1e-2)
    np.testing.assert_array_equal(res.support, support)
    np.testing.assert_allclose(res.coef, c, atol=1e-9)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 30), st.sampled_from([0.0, 1e-3, 1.0]))
def test_invariants(seed, s, lam):
    rng = np.random.default_rng(seed)
    A, y = random_problem(20, 30, rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = harfe(A, y, s=s, lam=lam, max_iter=10)
    assert res.support.size == s and np.all(np.diff(res.support) > 0)
    off = np.ones(30, bool)
    off[res.support] = False
    assert not res.coef[off].any()
    assert np.all(np.isfinite(res.coef)) and res.residuals.size == res.n_iter
    assert res.converged == (res.stop_reason != "max_iter")


def test_read_only_input_is_not_modified():
    rng = np.random.default_rng(7)
    A, y = random_problem(20, 40, rng)
    A0, y0 = A.copy(), y.copy()
    A.flags.writeable = False
    y.flags.writeable = False
    harfe(A, y, s=4, lam=1e-3)
    np.testing.assert_array_equal(A, A0)
    np.testing.assert_array_equal(y, y0)


# ----------------------------------------------------------- operator path
def test_operator_path_equals_dense_path():
    rng = np.random.default_rng(8)
    X = rng.uniform(-1, 1, (60, 4))
    y = np.sin(X[:, 0]) + X[:, 1] ** 2
    fmap = random_feature_map(4, 300, q=2, rng=1)
    A = fmap.transform(X)
    scale = 1 / np.linalg.norm(A, axis=0)
    op = fmap.operator(X, col_scale=scale, block_rows=7)
    dense = harfe(A * scale, y, s=30, lam=1e-4)
    matfree = harfe(op, y, s=30, lam=1e-4)
    np.testing.assert_array_equal(matfree.support, dense.support)
    np.testing.assert_allclose(matfree.coef, dense.coef, atol=1e-8 * np.abs(dense.coef).max())
    assert matfree.n_iter == dense.n_iter


def test_model_matrix_free_equals_dense():
    X, y = make_friedman1(80, noise=0.5, rng=0)
    kw = dict(n_features=400, s=40, lam=1e-6, random_state=3)
    a = HARFERegressor(**kw).fit(X, y)
    b = HARFERegressor(matrix_free=True, **kw).fit(X, y)
    np.testing.assert_array_equal(a.support_, b.support_)
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-7, atol=1e-7)


# ------------------------------------------------------------------- model
def test_model_fit_predict_and_scaling():
    X, y = make_friedman1(100, noise=0.5, rng=1)
    model = HARFERegressor(n_features=500, s=50, lam=1e-6, fit_intercept=False, random_state=0)
    assert model.fit(X, y) is model
    assert model.n_nonzero_ <= 50 and model.n_iter_ >= 1 and model.residuals_.size == model.n_iter_
    # coef_ include the column scaling: predictions equal the normalised solve
    A = model.feature_map_.transform(X)
    norms = np.linalg.norm(A, axis=0)
    res = harfe(A / norms, y, s=50, lam=1e-6)
    np.testing.assert_allclose(model.predict(X), (A / norms) @ res.coef, rtol=1e-9, atol=1e-9)
    assert model.score(X, y) > 0.8
    assert model.get_params()["s"] == 50
    assert np.isclose(model.variable_importance().sum(), 1.0)


def test_model_complex_activation():
    X, y = make_friedman1(60, noise=0.1, rng=2)
    model = HARFERegressor(n_features=300, s=30, lam=1e-6, activation="exp", random_state=0)
    pred = model.fit(X, y).predict(X)
    assert pred.dtype == np.float64 and model.coef_.dtype == np.complex128
    assert model.score(X, y) > 0.5


def test_friedman_d20_importance_ranks_active_variables_first():
    """HARFE Fig. 4: g on [0, 1]^20, q = 2; x1..x5 carry the most weight
    (averaged over three fits, the setting of ``harfe-importance``)."""
    shares = {"magnitude": np.zeros(20), "count": np.zeros(20)}
    for run in range(3):
        rng = np.random.default_rng([0, run])
        X, y = make_friedman1(500, d=20, noise=1.0, rng=rng)
        model = HARFERegressor(10_000, s=500, lam=1e-3 / 500, q=2, random_state=rng).fit(X, y)
        for weighting, total in shares.items():
            total += model.variable_importance(weighting)
    for weighting, total in shares.items():
        assert set(np.argsort(-total)[:5]) == {0, 1, 2, 3, 4}, weighting


# --------------------------------------------------------------- bad input
@pytest.mark.parametrize("kwargs, name", [
    (dict(s=0), "s"),
    (dict(s=101), "s"),
    (dict(s=2.5), "s"),
    (dict(lam=-1e-3), "lam"),
    (dict(mu=0.0), "mu"),
    (dict(mu=-1.0), "mu"),
    (dict(max_iter=0), "max_iter"),
    (dict(tol=-1.0), "tol"),
    (dict(lam=float("nan")), "lam"),
    (dict(lam=10**400), "lam"),  # beyond float64: ValueError, not OverflowError
    (dict(lam=1e308), "lam"),  # mu * m * lam overflows (m = 10)
    (dict(c0=np.zeros(99)), "c0"),
])
def test_bad_parameters_raise(kwargs, name):
    A, y = random_problem(10, 100, np.random.default_rng(0))
    args = dict(s=5, lam=1e-3) | kwargs
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        harfe(A, y, **args)


def test_bad_arrays_raise():
    A, y = random_problem(10, 100, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"\by\b"):
        harfe(A, y[:9], s=5, lam=0.0)
    with pytest.raises(ValueError, match=r"\bA\b"):
        harfe(A[0], y, s=5, lam=0.0)
    bad = A.copy()
    bad[3, 4] = np.nan
    with pytest.raises(ValueError, match=r"\bA\b"):
        harfe(bad, y, s=5, lam=0.0)
    bad_y = y.copy()
    bad_y[0] = np.inf
    with pytest.raises(ValueError, match=r"\by\b"):
        harfe(A, bad_y, s=5, lam=0.0)


def test_model_bad_parameters_raise():
    X, y = make_friedman1(30, rng=0)
    with pytest.raises(ValueError, match=r"\bs\b"):
        HARFERegressor(n_features=50, s=51).fit(X, y)
    with pytest.raises(ValueError, match=r"\blam\b"):
        HARFERegressor(n_features=50, s=5, lam=-1.0).fit(X, y)
    with pytest.raises(ValueError, match=r"\bX\b"):
        HARFERegressor(n_features=50, s=5).fit(np.full((30, 10), np.nan), y)
    for name in ("normalize", "matrix_free"):
        for bad in ("no", 0, None):
            with pytest.raises(ValueError, match=rf"{name} must be a bool"):
                HARFERegressor(n_features=50, s=5, **{name: bad}).fit(X, y)
    with pytest.raises(ValueError, match="lam must be finite"):
        HARFERegressor(n_features=50, s=5, lam=10**400).fit(X, y)
    with pytest.raises(ValueError, match=r"\blam\b.*overflow"):
        HARFERegressor(n_features=50, s=5, lam=1e307).fit(X, y)


def test_model_accepts_legacy_random_state():
    X, y = make_friedman1(30, rng=0)
    fits = [HARFERegressor(n_features=50, s=5, random_state=np.random.RandomState(4)).fit(X, y)
            for _ in range(2)]
    np.testing.assert_array_equal(fits[0].coef_, fits[1].coef_)
    HARFERegressor(n_features=50, s=5, random_state=2**64).fit(X, y)
    HARFERegressor(n_features=50, s=5, random_state=np.random.SeedSequence(1)).fit(X, y)


# -------------------------------------------------- conditioning safeguard
def _unit_diagonal_factor(n, a):
    """I - a triu(1, 1): unit diagonal (a squared-diagonal-ratio test sees
    a perfectly conditioned factor) but cond(R^T R) ~ (1 + a)^(2n)."""
    return np.eye(n) - a * np.triu(np.ones((n, n)), 1)


def test_support_rebuild_warns_on_ill_conditioned_system():
    """A unit-diagonal ill-conditioned factor as support Gram: A = R = I - 0.6 triu, n = 40, so
    A^T A = R^T R (cond 1.9e17); s = N = 40 so the support system is built by
    ``_cholesky``, whose factor has a unit diagonal."""
    A = _unit_diagonal_factor(40, 0.6)
    y = A @ np.random.default_rng(1).normal(size=40)
    with pytest.warns(IllConditionedWarning, match="numerically singular"):
        res = harfe(A, y, s=40, lam=0.0, max_iter=2)
    assert res.residuals[-1] < 1e-8  # the pseudo-inverse still fits y


def test_support_update_warns_on_ill_conditioned_system():
    """The updated factor (Givens deletions + appended block) is checked too:
    30 orthonormal columns kept, 10 swapped in whose Gram has cond 4.6e16 with
    a unit-diagonal factor; k = 10 <= GRAM_REUSE_FRACTION * s, so it is an update."""
    rng = np.random.default_rng(1)
    Q = np.linalg.qr(rng.normal(size=(60, 50)))[0]
    A = np.hstack([Q[:, :30], Q[:, 30:40] @ _unit_diagonal_factor(10, 5.0), Q[:, 40:]])
    y = A[:, :40] @ rng.normal(size=40)
    system = htp._SupportSystem(htp._Dense(A), y, 40, 0.0,
                                reuse_fraction=htp.GRAM_REUSE_FRACTION)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the first support is well conditioned
        system.solve(np.r_[np.arange(30), np.arange(40, 50)])
    assert system.R is not None
    assert 10 <= htp.GRAM_REUSE_FRACTION * 40
    updates = []
    original = system._update
    system._update = lambda *args: (updates.append(1), original(*args))
    with pytest.warns(IllConditionedWarning, match="numerically singular"):
        slots, z, fitted = system.solve(np.arange(40))
    assert updates, "the second support must go through the factor update"
    assert np.linalg.norm(fitted - y) < 1e-8 * np.linalg.norm(y)


# -------------------------------------------------------------- experiments
@pytest.mark.slow
@pytest.mark.parametrize("name", ["harfe-table1", "harfe-table2", "harfe-importance",
                                  "harfe-real"])
@pytest.mark.slow(reason="paper reproductions in their quick form")
def test_experiments_quick(name, tmp_path, capsys):
    from rflite.experiments import Context, run_experiment

    result = run_experiment(name, Context(quick=True, out=tmp_path))
    out = capsys.readouterr().out
    assert result
    if name != "harfe-importance":
        assert "paper" in out  # our numbers beside the published ones
    else:
        assert (tmp_path / "harfe_importance.png").is_file()
        assert result["top5_correct"]
    if name == "harfe-table1":
        cells = [k for k in result if k != "srfe"]
        assert len(cells) == 12 and "sweep" in out  # some quick entries are > 2x off
        assert set(result["srfe"]) == {"harfe-table1-q1", "harfe-table1-q3", "harfe-table1-q5"}
