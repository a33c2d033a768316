"""rflite.theory: measurements against brute force, bounds against hand computation.

Reference implementations below are loop-level and written for readability.
The validation experiments run in quick mode; only mathematically guaranteed
relations are asserted about them (never that a paper's bound holds).
"""

import itertools
import math
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from numpy.testing import assert_allclose

from rflite._theory import kernels as TK
from rflite import theory as T
from rflite.experiments import Context, run_experiment
from rflite.features import Normal, random_feature_map


# ------------------------------------------------------------- references
def naive_coherence(A):
    N = A.shape[1]
    best = 0.0
    for j in range(N):
        for k in range(N):
            if j != k:
                v = abs(np.vdot(A[:, j], A[:, k])) / (
                    np.linalg.norm(A[:, j]) * np.linalg.norm(A[:, k]))
                best = max(best, v)
    return best


def naive_babel(A, k):
    An = A / np.linalg.norm(A, axis=0)
    G = np.abs(An.conj().T @ An)
    best = 0.0
    for j in range(A.shape[1]):
        row = sorted((G[j, i] for i in range(A.shape[1]) if i != j), reverse=True)
        best = max(best, sum(row[:k]))
    return best


def naive_rip(B, s):
    """Exact delta_s of B by enumerating every support."""
    best = 0.0
    for S in itertools.combinations(range(B.shape[1]), s):
        ev = np.linalg.eigvalsh(B[:, S].conj().T @ B[:, S])
        best = max(best, ev[-1] - 1.0, 1.0 - ev[0])
    return best


def naive_kappa(c, s, p):
    mags = sorted(np.abs(np.asarray(c)).tolist(), reverse=True)[s:]
    if not mags:
        return 0.0
    if p == np.inf:
        return max(mags)
    return sum(x**p for x in mags) ** (1.0 / p)


def _mat(rng, m, n, complex_=False):
    A = rng.standard_normal((m, n))
    if complex_:
        A = A + 1j * rng.standard_normal((m, n))
    return A


def _exp_features(m=12, N=10, d=3, q=2, seed=0):
    fmap = random_feature_map(d, N, q=q, distribution=Normal(1.0), bias="none",
                              activation="exp", rng=seed)
    X = np.random.default_rng(seed + 1).standard_normal((m, d))
    return fmap, X


# -------------------------------------------------------------- coherence
@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("block_size", [None, 1, 3, 50])
def test_coherence_matches_brute_force(rng, complex_, block_size):
    A = _mat(rng, 7, 11, complex_)
    A[:, 4] = 3.0 * A[:, 2] + 0.01 * A[:, 5]  # one strongly coherent pair
    assert_allclose(T.coherence(A, block_size=block_size), naive_coherence(A), rtol=1e-12)


def test_masked_block_max_kernel_against_numpy(rng):
    for G in (rng.standard_normal((4, 9)), rng.standard_normal((4, 9)) + 1j):
        r, c = rng.uniform(0.5, 2, 4), rng.uniform(0.5, 2, 9)
        for shift in (0, 3, 5):
            M = np.abs(G) ** 2 * (r**2)[:, None] * (c**2)[None, :]
            for i in range(4):
                if i + shift < 9:
                    M[i, i + shift] = -1.0
            assert_allclose(TK._masked_block_max(G, r, c, shift), M.max(), rtol=1e-13)


def test_coherence_zero_column_is_a_clear_error(rng):
    A = _mat(rng, 5, 6)
    A[:, 3] = 0.0
    with pytest.raises(ValueError, match=r"zero column.*index 3"):
        T.coherence(A)
    with pytest.raises(ValueError, match="zero column"):
        T.rip_upper_bound(A, 2)


def test_coherence_bad_input(rng):
    with pytest.raises(ValueError, match="at least 2 columns"):
        T.coherence(np.ones((3, 1)))
    A = _mat(rng, 4, 4)
    A[0, 0] = np.nan
    with pytest.raises(ValueError, match="A contains NaN"):
        T.coherence(A)
    with pytest.raises(ValueError, match="block_size"):
        T.coherence(_mat(rng, 4, 4), block_size=0)


def test_coherence_properties(rng):
    A = _mat(rng, 6, 30, True)
    mu = T.coherence(A)
    assert T.welch_bound(6, 30) <= mu <= 1.0
    # invariant under column scaling and row unitary transforms
    Q, _ = np.linalg.qr(_mat(rng, 6, 6, True))
    assert_allclose(T.coherence(Q @ A * rng.uniform(0.1, 10, 30)), mu, rtol=1e-10)
    assert T.coherence(np.eye(4)) == 0.0
    assert T.coherence(np.ones((3, 2))) == 1.0


def test_coherence_operator_path_matches_dense():
    fmap, X = _exp_features(m=9, N=14)
    op = fmap.operator(X)
    assert_allclose(T.coherence(op, block_size=4), T.coherence(op.todense()), rtol=1e-12)
    fs = random_feature_map(3, 8, activation="sin", rng=2)
    op = fs.operator(X)
    assert_allclose(T.coherence(op, block_size=3), naive_coherence(op.todense()), rtol=1e-12)


def test_cumulative_coherence_matches_brute_force(rng):
    A = _mat(rng, 5, 9, True)
    assert_allclose(T.cumulative_coherence(A, 1), T.coherence(A), rtol=1e-12)
    for k in (2, 4, 8):
        assert_allclose(T.cumulative_coherence(A, k, block_size=2), naive_babel(A, k),
                        rtol=1e-12)


def test_welch_bound():
    assert T.welch_bound(4, 4) == 0.0
    assert_allclose(T.welch_bound(2, 3), math.sqrt(1 / 4))
    # attained by the Mercedes-Benz frame (3 unit vectors at 120 degrees in R^2)
    ang = 2 * np.pi * np.arange(3) / 3
    assert_allclose(T.coherence(np.vstack([np.cos(ang), np.sin(ang)])), 0.5, rtol=1e-12)


# -------------------------------------------------------------------- RIP
@pytest.mark.parametrize("complex_", [False, True])
def test_rip_lower_bound_vs_exact(rng, complex_):
    A = _mat(rng, 6, 8, complex_)
    for s in (1, 2, 3, 5):
        exact = naive_rip(A / math.sqrt(6), s)
        ex = T.rip_lower_bound(A, s, method="exhaustive")
        assert_allclose(ex.delta, exact, rtol=1e-10)
        assert ex.n_supports == math.comb(8, s)
        for method in ("random", "greedy"):
            est = T.rip_lower_bound(A, s, method=method, n_trials=5, rng=1)
            assert est.delta <= exact + 1e-12
            # the reported support really has the reported deviation
            S = est.support
            ev = np.linalg.eigvalsh((A[:, S].conj().T @ A[:, S]) / 6)
            assert_allclose([est.eig_min, est.eig_max], [ev[0], ev[-1]], rtol=1e-10, atol=1e-12)
            assert_allclose(est.delta, max(ev[-1] - 1, 1 - ev[0]), rtol=1e-10, atol=1e-12)
            assert len(S) == s and np.all(np.diff(S) > 0)


def test_rip_exact_below_coherence_upper_bound(rng):
    A = _mat(rng, 5, 7, True)
    for s in (1, 2, 3, 4):
        for scale in ("columns", None, 2.5):
            exact = T.rip_lower_bound(A, s, method="exhaustive", scale=scale).delta
            assert exact <= T.rip_upper_bound(A, s, scale=scale) + 1e-12
    mu = T.coherence(A)
    assert_allclose(T.rip_upper_bound(A, 3, scale="columns"), 2 * mu, rtol=1e-12)


def test_rip_greedy_finds_the_coherent_pair(rng):
    A = _mat(rng, 20, 40)
    A[:, 17] = A[:, 5] + 1e-3 * rng.standard_normal(20)
    # every column is a start: the greedy partner of column 5 is column 17
    est = T.rip_lower_bound(A, 2, method="greedy", n_trials=40, scale="columns", rng=0)
    assert_allclose(est.delta, T.coherence(A), rtol=1e-12)
    assert sorted(est.support.tolist()) == [5, 17]


def test_best_candidate_kernel_against_numpy(rng):
    lam, diag, g2 = 1.3, rng.uniform(0.5, 1.5, 10), rng.uniform(0, 1, 10)
    in_S = np.zeros(10, dtype=bool)
    in_S[[2, 7]] = True
    half = (lam - diag) / 2
    up = (lam + diag) / 2 + np.sqrt(half**2 + g2)
    lo = (lam + diag) / 2 - np.sqrt(half**2 + g2)
    up[in_S], lo[in_S] = -np.inf, np.inf
    assert TK._best_candidate(lam, diag, g2, in_S, 1.0) == int(np.argmax(up))
    assert TK._best_candidate(lam, diag, g2, in_S, -1.0) == int(np.argmin(lo))


def test_rip_seeded_and_operator_path():
    fmap, X = _exp_features(m=10, N=12)
    op, A = fmap.operator(X), fmap.transform(X)
    for method in ("random", "greedy"):
        a = T.rip_lower_bound(A, 3, method=method, n_trials=4, rng=7)
        b = T.rip_lower_bound(A, 3, method=method, n_trials=4, rng=7)
        c = T.rip_lower_bound(op, 3, method=method, n_trials=4, rng=7)
        assert a.delta == b.delta and np.array_equal(a.support, b.support)
        assert_allclose(c.delta, a.delta, rtol=1e-10)
        assert np.array_equal(c.support, a.support)
    # unit-modulus features: scale=m and unit-norm columns are the same matrix
    assert_allclose(T.rip_lower_bound(A, 2, method="exhaustive").delta,
                    T.rip_lower_bound(A, 2, method="exhaustive", scale="columns").delta,
                    rtol=1e-10)
    assert_allclose(T.rip_upper_bound(A, 3), 2 * T.coherence(A), rtol=1e-10)


def test_rip_bad_input(rng):
    A = _mat(rng, 4, 5)
    with pytest.raises(ValueError, match="s must be <= 5"):
        T.rip_lower_bound(A, 6)
    with pytest.raises(ValueError, match="s must be >= 1"):
        T.rip_upper_bound(A, 0)
    with pytest.raises(ValueError, match="method"):
        T.rip_lower_bound(A, 2, method="sa")
    with pytest.raises(ValueError, match="scale"):
        T.rip_lower_bound(A, 2, scale="rows")
    with pytest.raises(ValueError, match="scale"):
        T.rip_lower_bound(A, 2, scale=-1.0)
    with pytest.raises(ValueError, match="EXHAUSTIVE_MAX"):
        T.rip_lower_bound(_mat(rng, 3, 60), 10, method="exhaustive")


# -------------------------------------------------------- spectrum, kappa
@pytest.mark.parametrize("shape", [(5, 9), (9, 5)])
def test_gram_extreme_eigenvalues_vs_svd(rng, shape):
    A = _mat(rng, *shape, True)
    sv = np.linalg.svd(A, compute_uv=False)
    spec = T.gram_extreme_eigenvalues(A)
    assert_allclose([spec.eig_min, spec.eig_max], [sv[-1] ** 2 / shape[1], sv[0] ** 2 / shape[1]],
                    rtol=1e-10)
    assert spec.side == ("AA*" if shape[0] <= shape[1] else "A*A")
    assert_allclose(T.gram_extreme_eigenvalues(A, scale=2.0).eig_max, sv[0] ** 2 / 2, rtol=1e-10)
    fmap, X = _exp_features(m=6, N=9)
    assert_allclose(T.gram_extreme_eigenvalues(fmap.operator(X))[:2],
                    T.gram_extreme_eigenvalues(fmap.transform(X))[:2], rtol=1e-12)


@pytest.mark.parametrize("p", [0.5, 1.0, 2.0, np.inf])
def test_best_s_term_error_vs_sort(rng, p):
    c = rng.standard_normal(12) + 1j * rng.standard_normal(12)
    c[3] = c[5]  # ties
    for s in (0, 1, 5, 11, 12):
        assert_allclose(T.best_s_term_error(c, s, p), naive_kappa(c, s, p), rtol=1e-12)
    assert T.best_s_term_error([3.0, -1.0, 2.0, 0.5], 2) == 1.5
    with pytest.raises(ValueError, match="s must be <= 12"):
        T.best_s_term_error(c, 13)
    with pytest.raises(ValueError, match="p must be > 0"):
        T.best_s_term_error(c, 1, 0.0)


# ------------------------------------------------------- closed-form bounds
def test_harfe_bounds_hand_computed():
    # Lemma A.3: N >= eps^-2 (1 + sqrt(2 log(1/delta)))^2
    assert_allclose(T.lemma_a3_min_features(0.1, math.exp(-2)), 100 * 9, rtol=1e-12)
    assert_allclose(T.lemma_a3_epsilon(900, math.exp(-2)), 0.1, rtol=1e-12)
    # epsilon: gamma = sigma = 1, d = 12, m / delta = e -> sqrt(1 + 1) inside
    eps = T.harfe_risk_epsilon(4, 1, gamma=1, sigma=1, d=12, delta=1 / math.e)
    assert_allclose(eps, (1 + 48 * math.sqrt(2) + math.sqrt(0.5)) / 2, rtol=1e-12)
    # Thm 3.1, condition 3: sqrt(delta)/(6 sqrt 3)(1+lam)(4 g^2 s^2+1)^(d/4)
    assert_allclose(T.harfe_max_features(lam=1.0, delta=0.25, gamma=1, sigma=1, d=4),
                    0.5 / (6 * math.sqrt(3)) * 2 * 5, rtol=1e-12)
    c = T.harfe_thm31_conditions(100, 1, 1, lam=0.0, delta=math.exp(-1), gamma=1, sigma=1,
                                 d=40, C1=50.0, C2=1.0)
    assert c.lhs[0] == 100
    assert_allclose(c.rhs[0], 50.0, rtol=1e-12)
    assert_allclose(c.rhs[1], math.log(6) ** 2 * math.log(1 / (9 * math.log(200)) + 3))
    assert c.holds == (True, True, True) and c.all_hold
    assert "samples" in c.report()
    # Thm 3.1 bound: 2 b^n |c| + D1/sqrt(s) kappa + D2 sqrt((r^2/m + lam |c|^2)/(1+lam))
    v = T.harfe_thm31_bound(2, beta=0.5, c_norm=2.0, kappa1=4.0, residual_norm=2.0, lam=1.0,
                            m=4, s=4, D1=1.0, D2=2.0)
    assert_allclose(v, 2 * 0.25 * 2 + 2 + 2 * math.sqrt((1 + 4) / 2))
    # Thm 3.2 with kappa = E = 0, lam = 0: only eps |f|, in both versions
    b = T.harfe_risk_bound(N=10, m=5, s=2, lam=0.0, delta=0.5, eps=0.3, f_rho_norm=2.0,
                           kappa1=0.0, noise_bound=0.0)
    assert_allclose([b.printed.value, b.proof.value], 0.6)
    t = 3 ** -0.25
    v = T.harfe_risk_bound(N=4, m=1, s=1, lam=0.0, delta=math.exp(-0.5), eps=0.0,
                           f_rho_norm=0.0, kappa1=1.0, noise_bound=1.0, C=1.0, D=1.0)
    assert_allclose([v.printed.value, v.proof.value], (t + 2 * 1) + (t + 2 * 1))


def test_harfe_risk_bound_proof_keeps_sqrt_n_in_the_f_term():
    """Thm 3.2 as printed drops a factor sqrt(N) from the ||f|| term's second
    part; the proof's second-to-last line, multiplied out by hand here, keeps it."""
    N, m, s, lam, delta, eps, f, kappa, E, C, D = 400, 50, 3, 0.2, 0.05, 0.1, 2.0, 0.3, 0.4, 1.5, 0.7
    b = T.harfe_risk_bound(N=N, m=m, s=s, lam=lam, delta=delta, eps=eps, f_rho_norm=f,
                           kappa1=kappa, noise_bound=E, C=C, D=D)
    L, t = math.log(1 / delta), 3 ** -0.25
    # the proof's second-to-last line, unexpanded: (factor) x (bracket)
    factor = t * m**-0.5 + math.sqrt(N) * (2 * L / m) ** 0.25
    bracket = (math.sqrt(m) * math.sqrt(1 + lam) * C / math.sqrt(s) * kappa
               + D * (E + math.sqrt(m * lam) / math.sqrt(N) * f))
    assert_allclose(b.proof.value, eps * f + factor * bracket, rtol=1e-12)
    # the printed statement differs only in the ||f|| term, by sqrt(N) in its second part
    gap = f * D * math.sqrt(lam / N) * (2 * m * L) ** 0.25 * (math.sqrt(N) - 1)
    assert_allclose(b.proof.value - b.printed.value, gap, rtol=1e-10)
    assert b.proof.value > b.printed.value
    assert_allclose(b.printed.probability, 1 - 2 * delta)
    assert_allclose(b.proof.probability, 1 - 4 * delta)


def test_harfe_min_samples_is_minimal():
    kw = dict(lam=1e-4, delta=0.1, C1=2.0, C2=0.5)
    m = T.harfe_min_samples(10000, 10, **kw)
    ok = T.harfe_thm31_conditions(m, 10000, 10, gamma=1, sigma=1, d=5, **kw)
    bad = T.harfe_thm31_conditions(m - 1, 10000, 10, gamma=1, sigma=1, d=5, **kw)
    assert ok.holds[:2] == (True, True) and not all(bad.holds[:2])


def test_shrimp_bounds_hand_computed():
    # Prop. 7, m = 2, N = 4, q = 2, gamma = sigma = 1: r = 5
    b = T.shrimp_prop7_bounds(2, 4, q=2, gamma=1.0, sigma=1.0)
    r4, r2 = 5 ** -0.5, 5 ** -1.0
    assert_allclose(b.lambda_max_printed, 2 - 6 / 16 + 3 * 2 / 16 * r4)
    assert_allclose(b.lambda_max_eq32, 1 + 6 / 16 + 3 * 2 / 16 * r4)
    assert_allclose(b.lambda_max_rayleigh, 1 + 1 / 4 + 3 / 4 * r2)
    assert_allclose(b.lambda_min, 0.5 + 0.5 + (0.5 * 2 + 1) * r4)
    assert b.ratio == 2.0
    r8 = T.shrimp_remark8_bound(100, q=2, gamma=1.0, sigma=1.0, p=0.5)
    assert_allclose(r8, (10 * r4 + 0.1, 0.9))
    assert_allclose(T.shrimp_thm5_coherence_requirement(1), 4 / math.sqrt(41))
    for mu in (0.05, 0.2, 0.62, 0.7):
        s = T.shrimp_thm5_max_sparsity(mu)
        if s:
            assert mu <= T.shrimp_thm5_coherence_requirement(s)
        assert mu > T.shrimp_thm5_coherence_requirement(s + 1)
    assert T.shrimp_thm5_max_sparsity(0.7) == 0
    assert_allclose(T.shrimp_thm5_min_variance(1, 2), (math.sqrt(41) / 2 - 1) / 2)
    assert_allclose(T.shrimp_thm5_features(0.5, 1, gamma=1, sigma=1, d=12, delta=1 / math.e),
                    16 * (1 + 48 * math.sqrt(2) + math.sqrt(0.5)) ** 2)
    c = T.shrimp_thm5_conditions(100, 10, 2, gamma=1.0, sigma=1.0, d=1, delta=0.1, mu=0.1)
    assert_allclose(c.rhs[1], 4 * 3 * math.log(1000))
    assert c.names == ("variance", "samples", "coherence")
    assert c.holds == (False, True, True) and not c.all_hold
    # Cor. 6 with q = d reduces to Thm 5's sample condition
    c6 = T.shrimp_cor6_conditions(100, 10, 2, q=3, d=3, gamma=1.0, sigma=1.0, delta=0.1)
    c5 = T.shrimp_thm5_conditions(100, 10, 2, gamma=1.0, sigma=1.0, d=3, delta=0.1)
    assert_allclose(c6.rhs, c5.rhs)
    # eq. (8) and the coefficient error bound
    assert_allclose(T.shrimp_thm5_bound(m=8, s=2, delta=math.exp(-1), coef_error=1.0,
                                        kappa1=1.0), 1 * math.sqrt(5) + 3)
    assert_allclose(T.shrimp_thm5_coef_error_bound(eps=1.0, f_rho_norm=1.0, nu=0.0, kappa1=0.0,
                                                   lam_max=4.0, m=1, C=2.0),
                    2 * min(2.0, math.sqrt(2) + 2.0))


@pytest.mark.slow(reason="theory reproduction, over 5 s")
def test_rahimi_recht_and_metropolis():
    kw = dict(d=3, sigma_p=2.0, diam=1.5)
    assert T.rahimi_recht_tail(0.5, 100, **kw) == 1.0  # vacuous, capped
    assert_allclose(T.rahimi_recht_tail(0.5, 2000, **kw),
                    256 * 36 * math.exp(-2000 * 0.25 / 20), rtol=1e-12)
    eps = T.rahimi_recht_epsilon(5000, 0.05, **kw)
    assert_allclose(T.rahimi_recht_tail(eps, 5000, **kw), 0.05, rtol=1e-8)
    N = T.rahimi_recht_min_features(0.1, 0.05, **kw)
    assert T.rahimi_recht_tail(0.1, math.ceil(N), **kw) <= 0.05
    assert T.rahimi_recht_tail(0.1, math.floor(N) - 1, **kw) > 0.05
    for d in (1, 2, 5, 10):
        g = T.metropolis_optimal_exponent(d)
        assert g == 3 * d - 2
        grid = np.linspace(0.2, 10 * d, 20001)
        work = [T.metropolis_relative_work(x, d) for x in grid]
        assert abs(grid[int(np.argmin(work))] - g) < 0.01 * d
    p = T.metropolis_optimal_density(np.array([1.0, -3.0, 0.0, 4j]), cell_volume=0.5)
    assert_allclose(p, [0.25, 0.75, 0.0, 1.0])


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: T.lemma_a3_min_features(0.1, 1.0), "delta must be in"),
        (lambda: T.lemma_a3_min_features(0.1, 0.0), "delta must be in"),
        (lambda: T.lemma_a3_min_features(-0.1, 0.5), "eps must be > 0"),
        (lambda: T.harfe_risk_epsilon(10, 5, gamma=1, sigma=1, d=2, delta=1.5), "delta"),
        (lambda: T.harfe_thm31_conditions(10, 10, 0, lam=0.1, delta=0.1, gamma=1, sigma=1,
                                          d=2), "s must be >= 1"),
        (lambda: T.harfe_thm31_conditions(10, 10, 1, lam=-1.0, delta=0.1, gamma=1, sigma=1,
                                          d=2), "lam must be >= 0"),
        (lambda: T.harfe_thm31_bound(1, beta=1.0, c_norm=1, kappa1=0, residual_norm=0, lam=0,
                                     m=1, s=1), "beta must be in"),
        (lambda: T.shrimp_prop7_bounds(10, 5, q=1, gamma=1, sigma=1), "m <= N"),
        (lambda: T.shrimp_prop7_bounds(5, 10, q=1, gamma=0.0, sigma=1), "gamma must be > 0"),
        (lambda: T.shrimp_remark8_bound(10, q=1, gamma=1, sigma=1, p=1.0), "p must be in"),
        (lambda: T.shrimp_cor6_conditions(10, 10, 1, q=4, d=3, gamma=1, sigma=1, delta=0.1),
         "q must be <= 3"),
        (lambda: T.shrimp_thm5_max_sparsity(1.5), "mu must be <= 1"),
        (lambda: T.rahimi_recht_tail(0.1, 0, d=1, sigma_p=1, diam=1), "N must be >= 1"),
        (lambda: T.metropolis_optimal_exponent(0), "d must be >= 1"),
        (lambda: T.metropolis_optimal_density(np.zeros(3)), "identically zero"),
        (lambda: T.welch_bound(0, 3), "m must be >= 1"),
    ],
)
def test_bound_functions_reject_invalid_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ------------------------------------------------------------ experiments
def test_experiment_prop7_quick(tmp_path):
    res = run_experiment("theory-prop7", Context(quick=True, out=tmp_path))
    assert (tmp_path / "theory_prop7.png").stat().st_size > 1000
    for c in res["cells"]:
        # trace(AA*/N) = m, so lambda_max >= 1 >= lambda_min for every draw
        assert c["min_lmax"] >= 1 - 1e-9 and c["max_lmin"] <= 1 + 1e-9
        assert c["status_printed"] in ("held", "within noise", "VIOLATED")


def test_experiment_coherence_quick(tmp_path):
    res = run_experiment("theory-coherence", Context(quick=True, out=tmp_path))
    assert (tmp_path / "theory_coherence.png").stat().st_size > 1000
    for r in res["rows"]:
        assert r["welch"] - 1e-12 <= r["mu_min"] <= r["mu"] <= 1.0


def test_experiment_rip_quick(tmp_path):
    res = run_experiment("theory-rip", Context(quick=True, out=tmp_path))
    assert (tmp_path / "theory_rip.png").stat().st_size > 1000
    for r in res["rows"]:
        assert 0.0 <= r["lower"] <= r["upper"] + 1e-9
        if r["s"] == 1:  # unit-modulus features: delta_1 = 0 exactly
            assert r["lower"] < 1e-12


def test_experiment_lemma_a3_quick(tmp_path):
    res = run_experiment("theory-lemma-a3", Context(quick=True, out=tmp_path))
    assert (tmp_path / "theory_lemma_a3.png").stat().st_size > 1000
    eps = [r["eps"] for r in res["rows"]]
    assert all(a > b for a, b in zip(eps, eps[1:]))
    assert all(r["q_err"] >= 0 and r["q_kernel"] >= 0 for r in res["rows"])


def test_experiment_shrimp_spectrum_quick(tmp_path):
    res = run_experiment("theory-shrimp-spectrum", Context(quick=True, out=tmp_path))
    if "skipped" in res:
        pytest.skip(res["skipped"])
    assert (tmp_path / "theory_shrimp_spectrum.png").stat().st_size > 1000
    for r in res.values():
        lo, hi = np.asarray(r["eig_min"]), np.asarray(r["eig_max"])
        assert np.all(hi >= lo) and np.all(lo >= -1e-8 * hi)


def test_shrimp_spectrum_skips_cleanly_without_imp(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "rflite.imp", None)  # import now raises ImportError
    res = run_experiment("theory-shrimp-spectrum", Context(quick=True, out=tmp_path))
    assert "rflite.imp.shrimp_path is not available" in res["skipped"]
    assert "skipped:" in capsys.readouterr().out


# --------------------------------------------------------------- properties
_finite = st.floats(-10, 10, allow_nan=False, allow_infinity=False)


@settings(max_examples=40, deadline=None)
@given(arrays(np.float64, st.integers(1, 15), elements=_finite),
       st.sampled_from([0.5, 1, 2, np.inf]))
def test_best_s_term_error_properties(c, p):
    vals = [T.best_s_term_error(c, s, p) for s in range(len(c) + 1)]
    assert all(a >= b - 1e-12 for a, b in zip(vals, vals[1:]))  # non-increasing in s
    assert vals[-1] == 0.0
    assert_allclose(vals, [naive_kappa(c, s, p) for s in range(len(c) + 1)], rtol=1e-10,
                    atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 6), st.integers(2, 9), st.integers(0, 2**31 - 1))
def test_coherence_permutation_and_scaling_invariant(m, n, seed):
    r = np.random.default_rng(seed)
    A = r.standard_normal((m, n)) + 1j * r.standard_normal((m, n))
    perm = r.permutation(n)
    mu = T.coherence(A)
    assert_allclose(T.coherence(A[:, perm] * r.uniform(0.1, 10, n), block_size=2), mu,
                    rtol=1e-10)
    assert_allclose(mu, naive_coherence(A), rtol=1e-12)
    assert T.welch_bound(m, n) - 1e-12 <= mu <= 1.0


def test_sparsity_check_is_consistent(rng):
    Q, _ = np.linalg.qr(rng.standard_normal((40, 40)))
    chk = T.sparsity_check(Q[:, :12], 2, scale=1.0, rng=0)  # orthonormal columns
    assert chk.order == 12 and chk.coherence < 1e-12 and chk.coherence_ok
    assert chk.delta_upper < 1e-12 and chk.htp_certified and not chk.htp_ruled_out
    A = rng.standard_normal((8, 30))
    chk = T.sparsity_check(A, 3, n_trials=3, rng=0)
    assert chk.delta_lower <= chk.delta_upper + 1e-12
    assert not (chk.htp_certified and chk.htp_ruled_out)
    assert chk.htp_ruled_out  # 18 columns in R^8: some B_S^* B_S is singular
    assert chk.coherence_requirement == T.shrimp_thm5_coherence_requirement(3)
    assert chk == T.sparsity_check(A, 3, n_trials=3, rng=0)


# -------------------------------------------------- extreme inputs never hang
#: A valid, ordinary value for every parameter name of the closed-form bounds.
BASE = dict(m=50, N=200, s=3, lam=0.1, delta=0.1, gamma=1.0, sigma=1.0, d=5, C1=1.0, C2=1.0,
            n=5, beta=0.5, c_norm=1.0, kappa1=0.1, residual_norm=0.1, D1=1.0, D2=1.0, eps=0.1,
            f_rho_norm=1.0, noise_bound=0.1, C=1.0, D=1.0, q=2, p=0.5, mu=0.3, nu=0.1,
            lam_max=10.0, kappa2=0.1, coef_error=0.1, sigma_p=1.0, diam=1.0)
#: Extreme values that are still valid, by kind of parameter.
PROBABILITIES = {"delta", "beta", "p"}
UNIT = {"mu"}
EXTREME_REAL = [1e308, 1e-300, 5e-324, 0.0]
EXTREME_PROB = [5e-324, 1e-300, 1 - 2**-53]
EXTREME_INT = [2**62, 10**308]
#: Every public closed-form function of rflite.theory (the measurements on
#: matrices are tested above); a new one must be added here.
CLOSED_FORM = [
    "welch_bound", "htp_rip_threshold", "harfe_thm31_conditions", "harfe_min_samples",
    "harfe_max_features", "harfe_thm31_bound", "harfe_risk_epsilon", "harfe_risk_bound",
    "lemma_a3_min_features", "lemma_a3_epsilon", "shrimp_prop7_bounds", "shrimp_remark8_bound",
    "shrimp_thm5_coherence_requirement", "shrimp_thm5_max_sparsity", "shrimp_thm5_min_variance",
    "shrimp_thm5_features", "shrimp_thm5_conditions", "shrimp_thm5_coef_error_bound",
    "shrimp_thm5_bound", "shrimp_cor6_conditions", "rahimi_recht_tail", "rahimi_recht_epsilon",
    "rahimi_recht_min_features", "metropolis_optimal_exponent", "metropolis_relative_work",
]


#: The measurements on a given matrix, tested against brute force above.
MEASUREMENTS = {"coherence", "cumulative_coherence", "rip_lower_bound", "rip_upper_bound",
                "gram_extreme_eigenvalues", "best_s_term_error", "sparsity_check",
                "metropolis_optimal_density"}


def test_every_public_function_is_covered_by_the_extreme_input_test():
    import inspect

    public = {n for n in T.__all__ if inspect.isfunction(getattr(T, n))}
    assert public == set(CLOSED_FORM) | MEASUREMENTS


def _numbers(result):
    """Every float in a result (NamedTuples and tuples flattened; bools and ints kept as they are)."""
    if isinstance(result, (tuple, list)):
        return [x for r in result for x in _numbers(r)]
    if isinstance(result, (bool, str)):
        return []
    return [result]


def _extreme_calls(name):
    import inspect

    func = getattr(T, name)
    params = inspect.signature(func).parameters
    base = {p: BASE[p] for p in params if p in BASE}
    if name == "shrimp_thm5_max_sparsity":
        base = {"mu": 0.3}
    yield dict(base)
    for p, v0 in base.items():
        if isinstance(v0, int):
            values = EXTREME_INT
        elif p in PROBABILITIES:
            values = EXTREME_PROB
        elif p in UNIT:
            values = [5e-324, 1.0]
        else:
            values = EXTREME_REAL
        for v in values:
            yield {**base, p: v}
    floats = [p for p, v in base.items() if isinstance(v, float) and p not in PROBABILITIES | UNIT]
    for v in (1e308, 5e-324):  # every real parameter extreme at once: inf - inf, 0 * inf
        yield {**base, **{p: v for p in floats}}
    ints = [p for p, v in base.items() if isinstance(v, int)]
    yield {**base, **{p: 2**62 for p in ints}}


class _Hang(Exception):
    pass


def _call_with_alarm(func, kwargs, seconds=5.0):
    import signal

    def on_alarm(signum, frame):
        raise _Hang

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return func(**kwargs)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@pytest.mark.skipif(not hasattr(__import__("signal"), "setitimer"), reason="needs SIGALRM")
@pytest.mark.parametrize("name", CLOSED_FORM)
def test_closed_form_bounds_with_extreme_inputs(name):
    """No hang, no NaN, no OverflowError or RuntimeWarning; finite, a documented inf,
    or a ValueError naming the extreme parameter."""
    import warnings

    func = getattr(T, name)
    doc = func.__doc__ or ""
    problems = []
    for kwargs in _extreme_calls(name):
        changed = [p for p in kwargs if kwargs[p] != BASE.get(p, kwargs[p])]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                with np.errstate(all="raise"):
                    result = _call_with_alarm(func, kwargs)
        except _Hang:
            problems.append(f"hangs: {kwargs}")
            continue
        except ValueError as exc:
            if changed and not any(p in str(exc) for p in changed):
                problems.append(f"ValueError not naming {changed}: {exc} ({kwargs})")
            continue
        except Exception as exc:  # OverflowError, FloatingPointError, RuntimeWarning, ...
            problems.append(f"{type(exc).__name__}: {exc} ({kwargs})")
            continue
        for x in _numbers(result):
            if isinstance(x, int):  # exact (possibly huge) counts: nothing to overflow
                continue
            x = float(x)
            if math.isnan(x):
                problems.append(f"NaN in {result} ({kwargs})")
            elif math.isinf(x) and "inf" not in doc:
                problems.append(f"undocumented inf in {result} ({kwargs})")
    assert not problems, "\n".join(problems[:12]) + f"\n({len(problems)} problems)"


def test_harfe_min_samples_subnormal_delta_terminates():
    """lam = 0, delta = 5e-324 terminates: an extreme delta must not loop forever."""
    m = _call_with_alarm(T.harfe_min_samples, dict(N=1000, s=5, lam=0.0, delta=5e-324))
    # m >= C1 s log(1/delta) = 5 * 744.44 is the binding condition here
    assert m == math.ceil(5 * -math.log(5e-324))
