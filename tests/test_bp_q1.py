"""Basis pursuit on SHRIMP's q = 1 dictionaries: the rigorous duality-gap guard.

The dual bound of ``rflite._bp.lp._dual_bound`` recomputes ``A^T z`` and
``y^T z`` with compensated dot products when the float64 gap is within tol;
these tests check the numba kernel against exact rational arithmetic and that
the q = 1 problems it was written for are now certified against HiGHS.
"""

from fractions import Fraction

import numpy as np
import pytest
import scipy.optimize
from numpy.testing import assert_allclose

from rflite import bp, datasets
from rflite._bp import lp as _bp_lp
from rflite.bp import basis_pursuit, bpdn
from rflite.features import random_feature_map

from naive import bpdn_dual_slsqp, q1_fourier_problem


def full_linprog(A, y):
    """min ||c||_1 s.t. Ac = y by HiGHS on the whole LP (the reference)."""
    n = A.shape[1]
    res = scipy.optimize.linprog(
        np.ones(2 * n), A_eq=np.hstack([A, -A]), b_eq=y, bounds=(0, None), method="highs",
        options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    assert res.status == 0
    return res.fun


def exact_colsums(A, z):
    """A^T z in exact rational arithmetic (float inputs are exact rationals)."""
    return [sum(Fraction(float(A[i, j])) * Fraction(float(z[i])) for i in range(A.shape[0]))
            for j in range(A.shape[1])]


def test_dot2_kernel_against_exact_arithmetic():
    """Heavy cancellation (|A||z| ~ 1e10, A^T z ~ 1): float64 loses ~6 digits,
    the compensated kernel is exact to its stated bound, and the bound holds."""
    rng = np.random.default_rng(0)
    m, n = 25, 40
    A = np.cos(np.outer(rng.uniform(-1, 1, m), rng.standard_normal(n)))
    # z nearly in the left null space of A: the rows' combination cancels
    U, s, _ = np.linalg.svd(A)
    z = 1e10 * U[:, -1] + rng.standard_normal(m)
    h, err = _bp_lp._dot2_cols(A, z)
    exact = exact_colsums(A, z)
    naive = A.T @ z
    d_naive = max(abs(float(Fraction(float(naive[j])) - exact[j])) for j in range(n))
    for j in range(n):
        d = abs(Fraction(float(h[j])) - exact[j])
        assert d <= Fraction(float(err[j]))
        assert float(d) <= 1e-15 * max(1.0, abs(float(exact[j])))
    assert d_naive > 1e-9  # the float64 product is far off (the kernel is needed)
    # one column: the plain dot product y^T z
    hy, ey = _bp_lp._dot2_cols(np.ascontiguousarray(A[:, :1]), z)
    assert abs(Fraction(float(hy[0])) - exact[0]) <= Fraction(float(ey[0]))


def test_dual_bound_dot2_is_a_lower_bound_and_tighter():
    """Any z gives a valid lower bound; the compensated one is never looser than
    the norm-based guard and is below the LP optimum."""
    A, y = q1_fourier_problem(0)
    opt = full_linprog(A, y)
    rng = np.random.default_rng(1)
    res = basis_pursuit(A, y)
    for scale in (0.0, 1e-3, 1.0):
        z = rng.standard_normal(A.shape[0]) * scale + np.linalg.lstsq(A.T, np.sign(
            A.T @ y), rcond=None)[0]
        h = A.T @ z
        loose = _bp_lp._dual_bound(y, z, h, np.linalg.norm(A, axis=0).max(), res.coef)
        tight = _bp_lp._dual_bound_dot2(A, y, z, res.coef)
        assert tight <= opt * (1 + 1e-12)
        assert tight >= loose - 1e-12 * abs(loose)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_q1_basis_pursuit_matches_linprog(seed):
    """d = 4, N = 400, m = 30 (800 columns): certified, HiGHS's optimum to 1e-6."""
    A, y = q1_fourier_problem(seed)
    res = basis_pursuit(A, y)
    assert res.certified and res.duality_gap <= bp.OPT_TOL
    assert np.linalg.norm(A @ res.coef - y) <= bp.BP_TOL * np.linalg.norm(y)
    assert_allclose(res.l1_norm, full_linprog(A, y), rtol=1e-6)


@pytest.mark.parametrize("seed", [0, 1])
def test_q1_bpdn_matches_independent_solver(seed):
    """sigma > 0 (an SOCP): the certified l1 norm against ``naive.bpdn_dual_slsqp``."""
    A, y = q1_fourier_problem(seed)
    sigma = 1e-2 * np.linalg.norm(y)
    res = bpdn(A, y, sigma)
    assert res.certified and res.duality_gap <= bp.OPT_TOL
    assert np.linalg.norm(A @ res.coef - y) <= sigma * (1 + 1e-8)
    assert_allclose(res.l1_norm, bpdn_dual_slsqp(A, y, sigma), rtol=1e-6)


def shrimp1_q1_problem():
    """SHRIMP's f1 target on a 30 x 800 q = 1 dictionary with the srfe
    experiment's sigma = 1e-3 ||y||, where the homotopy's support solves fail."""
    rng = np.random.default_rng(2)
    X, y = datasets.SYNTHETIC_DATASETS["shrimp1"].make(30, d=4, rng=rng)
    fmap = random_feature_map(4, 400, q=1, subsets="all", distribution="normal",
                              bias="none", activation="fourier", rng=rng)
    return fmap.transform(X), y, 1e-3 * np.linalg.norm(y)


def check_certified_optimum(res, A, y, sigma, reason):
    assert res.stop_reason == reason and res.certified
    assert res.duality_gap <= bp.OPT_TOL
    assert np.linalg.norm(A @ res.coef - y) <= sigma * (1 + 1e-8)
    assert_allclose(res.l1_norm, bpdn_dual_slsqp(A, y, sigma), rtol=1e-6)


@pytest.mark.slow(reason="solver certification on a hard problem, several seconds")
def test_q1_bpdn_certified_by_lasso_nnls():
    """Where the path fails, the LASSO root search on NNLS (``_bp_nnls``)
    certifies the optimum of the independent solver."""
    A, y, sigma = shrimp1_q1_problem()
    check_certified_optimum(bpdn(A, y, sigma), A, y, sigma, "lasso_nnls")


@pytest.mark.slow(reason="solver certification on a hard problem, several seconds")
def test_q1_bpdn_barrier_certified_where_the_path_fails(monkeypatch):
    """The next fallback, the dual barrier (the LASSO route switched off).
    Before: its primal points (the central path made feasible) stopped at gap
    5.6e-6 here, so SPGL1 returned it uncertified.  Now the dual point's
    active columns give a primal point by sign-constrained least squares
    (``_bp_socp._active_nnls``), certified at the independent optimum."""
    from rflite._bp import spgl1 as _bp_spgl1

    monkeypatch.setattr(_bp_spgl1, "_nnls_bpdn", lambda *args, **kwargs: None)
    A, y, sigma = shrimp1_q1_problem()
    check_certified_optimum(bpdn(A, y, sigma), A, y, sigma, "barrier")


@pytest.mark.parametrize("seed", range(4))
def test_medium_q1_basis_pursuit_certified(seed):
    """40 x 2,000 (above the single-LP size: column generation).  Before: seeds
    1-3 "lp_inexact" with gaps 2e-6, 1.8e-6, 9e-6, all from the norm-based
    rounding guard at ||z|| ~ 1e8 (exact-arithmetic gaps 1.4e-7, 7e-8, 6e-7).
    Now all four are certified (HiGHS on the full 40 x 4,000 split LP stops
    with a numerical status here, so the gap itself is the check)."""
    A, y = q1_fourier_problem(seed, m=40, N=1000)
    res = basis_pursuit(A, y)
    assert res.stop_reason == "linprog" and res.certified
    assert res.duality_gap <= bp.OPT_TOL
    assert np.linalg.norm(A @ res.coef - y) <= bp.BP_TOL * np.linalg.norm(y)


def test_dd_kernel_against_exact_arithmetic():
    """A^T (z_h + z_l) for a double-double z: hi + lo within err of the exact value."""
    rng = np.random.default_rng(2)
    m, n = 20, 30
    A = np.cos(np.outer(rng.uniform(-1, 1, m), rng.standard_normal(n)))
    U, _, _ = np.linalg.svd(A)
    zh = 1e12 * U[:, -1] + rng.standard_normal(m)
    zl = zh * 1e-17 * rng.standard_normal(m)
    hi, lo, err = _bp_lp._dd_cols(A, zh, zl)
    for j in range(n):
        exact = sum(Fraction(float(A[i, j])) * (Fraction(float(zh[i])) + Fraction(float(zl[i])))
                    for i in range(m))
        d = abs(Fraction(float(hi[j])) + Fraction(float(lo[j])) - exact)
        assert d <= Fraction(float(err[j]))


def test_simplex_matches_linprog():
    """The warm-started primal simplex from a crash basis reaches HiGHS's optimum."""
    rng = np.random.default_rng(0)
    B = rng.standard_normal((15, 60))
    b = rng.standard_normal(15)
    Bi = np.arange(15)
    sg = np.sign(np.linalg.solve(B[:, Bi], b))
    out = _bp_lp._simplex_bp(B, b, Bi, sg)
    assert out is not None
    Bi, sg, x, zeta = out
    assert np.all(sg * x >= -1e-12)
    assert np.abs(B.T @ zeta).max() <= 1 + 1e-9
    assert_allclose(np.abs(x).sum(), full_linprog(B, b), rtol=1e-9)
    assert_allclose(b @ zeta, np.abs(x).sum(), rtol=1e-9)  # strong duality at the vertex


@pytest.mark.parametrize("pivots", [0, None])
def test_preconditioned_column_generation_certifies(pivots, monkeypatch):
    """The column-generation route forced on 30 x 800 q = 1 problems, with the
    warm-started simplex (default) and without it (``LP_SIMPLEX_PIVOTS = 0``:
    HiGHS from scratch every round): certified, HiGHS's full-LP optimum."""
    monkeypatch.setattr(_bp_lp, "LP_MAX_ENTRIES", 0)
    monkeypatch.setattr(_bp_lp, "LP_WS_SIZE", 2)
    if pivots is not None:
        monkeypatch.setattr(_bp_lp, "LP_SIMPLEX_PIVOTS", pivots)
    for seed in (0, 4):
        A, y = q1_fourier_problem(seed)
        res = basis_pursuit(A, y)
        assert res.stop_reason == "linprog" and res.duality_gap <= bp.OPT_TOL
        assert np.linalg.norm(A @ res.coef - y) <= bp.BP_TOL * np.linalg.norm(y)
        assert_allclose(res.l1_norm, full_linprog(A, y), rtol=1e-6)


def test_well_conditioned_column_generation_matches_linprog():
    """A Gaussian 25 x 2,400 basis pursuit (above the single-LP size; well
    conditioned, so the restricted LPs use float64 products with M): certified,
    HiGHS's full-LP optimum."""
    rng = np.random.default_rng(5)
    A = rng.standard_normal((25, 2400))
    y = A[:, :6] @ rng.standard_normal(6) + 0.1 * rng.standard_normal(25)
    res = basis_pursuit(A, y)
    assert res.stop_reason == "linprog" and res.duality_gap <= bp.OPT_TOL
    assert np.linalg.norm(A @ res.coef - y) <= bp.BP_TOL * np.linalg.norm(y)
    assert_allclose(res.l1_norm, full_linprog(A, y), rtol=1e-6)


@pytest.mark.slow(reason="solver certification on a hard problem, several seconds")
def test_q1_bpdn_certified_where_path_and_barrier_were_not():
    """40 x 1,000 q = 1 dictionary, SHRIMP f1 target, sigma = 1e-3 ||y||: with
    the homotopy and the barrier alone SPGL1 returned it uncertified
    ("root_found", gap 1.8e-4); the LASSO root search certifies it."""
    from rflite.features import Normal

    rng = np.random.default_rng(0)
    X, y = datasets.SYNTHETIC_DATASETS["shrimp1"].make(40, d=4, rng=rng)
    fmap = random_feature_map(4, 500, q=1, subsets="all", distribution=Normal(1.0),
                              bias="none", activation="fourier", rng=rng)
    A = fmap.transform(X)
    sigma = 1e-3 * np.linalg.norm(y)
    check_certified_optimum(bpdn(A, y, sigma), A, y, sigma, "lasso_nnls")


def test_lasso_nnls_matches_sklearn_lasso():
    """One LASSO by the augmented NNLS against scikit-learn's coordinate descent
    at the same (effective) penalty, on a well-conditioned problem."""
    sklearn_linear = pytest.importorskip("sklearn.linear_model")
    from rflite._bp import nnls as _bp_nnls

    rng = np.random.default_rng(3)
    A = rng.standard_normal((40, 120))
    y = A[:, :5] @ rng.standard_normal(5) + 0.1 * rng.standard_normal(40)
    c, rho, lam_eff = _bp_nnls._lasso_nnls(A, y, 2.0)
    assert lam_eff > 2.0
    ref = sklearn_linear.Lasso(alpha=lam_eff / 40, fit_intercept=False, tol=1e-14,
                               max_iter=100_000).fit(A, y).coef_
    assert_allclose(c, ref, atol=1e-7)
    assert_allclose(rho, np.linalg.norm(y - A @ c), rtol=1e-12)
    # KKT: |a_j^T r| <= lam_eff, with equality and the sign of c_j on the support
    g = A.T @ (y - A @ c)
    assert np.abs(g).max() <= lam_eff * (1 + 1e-9)
    S = np.abs(c) > 1e-10
    assert_allclose(g[S], lam_eff * np.sign(c[S]), rtol=1e-8)


def test_lasso_root_search_gives_up_on_hopeless_problems():
    """A q = 1 dictionary on 5 inputs, a noisy target and sigma far below the
    noise: reaching sigma needs ||c||_1 of order 1e7, no route certifies it,
    and the LASSO root search stops within NNLS_GIVE_UP_BY rounds (here at
    the first, by the l1 ratio; without the rules it ran 6 rounds and 82
    solves to end uncertified at gap 0.48)."""
    from rflite._bp import nnls as _bp_nnls
    from rflite._bp.homotopy import _columns, _Products

    rng = np.random.default_rng(37)
    X = rng.uniform(-1, 1, (52, 5))
    A = random_feature_map(5, 700, q=1, subsets="all", bias="none", activation="fourier",
                           rng=37).transform(X)
    y = A[:, rng.choice(A.shape[1], 5)] @ rng.standard_normal(5) + 0.05 * rng.standard_normal(52)
    sigma = 1e-2 * np.linalg.norm(y)
    feas = sigma * (1 + 1e-10) + 1e-9 * np.linalg.norm(y)
    out = _bp_nnls._nnls_bpdn(_Products(A, False), A, y, sigma=sigma, tol=bp.OPT_TOL, feas=feas,
                              columns=_columns, z0=y.copy())
    assert out is None or (out[4] <= _bp_nnls.NNLS_GIVE_UP_BY and out[3] > bp.OPT_TOL)
    res = bpdn(A, y, sigma)
    assert not res.certified or res.duality_gap <= bp.OPT_TOL  # labelled either way
