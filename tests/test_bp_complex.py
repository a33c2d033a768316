"""Complex BPDN / basis pursuit certified by the dual barrier method.

The reference is independent of the solver: SLSQP on the real-ified dual
(``2m`` reals, one smooth constraint ``|a_j^* w|^2 <= 1`` per column), whose
optimal value equals the optimal l1 norm (strong duality).  Before the
barrier method, complex data went through SPGL1 only: its root test stopped
at gaps ~1e-3, and on complex exponential features and for ``sigma = 0`` it
stopped at ``max_iter`` (infeasible for basis pursuit, gap 4e-3 for sigma > 0).
"""

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.sparse.linalg import aslinearoperator

from rflite import bp
from rflite._bp.socp import _fix_feasible
from rflite.bp import basis_pursuit, bpdn
from rflite.features import random_feature_map

import naive


def gaussian_problem(m, n, seed):
    rng = np.random.default_rng(seed)
    A = (rng.standard_normal((m, n)) + 1j * rng.standard_normal((m, n))) / np.sqrt(2 * m)
    return A, rng.standard_normal(m) + 1j * rng.standard_normal(m)


def exp_problem(m, d, n, seed):
    """Complex exponential random features exp(i w.x), q = 2 (the ARFF-style dictionary)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (m, d))
    A = random_feature_map(d, n, q=2, activation="exp", rng=seed).transform(X)
    return A, (np.cos(X[:, 0]) + np.sin(X[:, 1])).astype(complex)


def check_certified(res, A, y, sigma, ref):
    assert res.stop_reason == "barrier" and res.certified, (res.stop_reason, res.duality_gap)
    assert res.duality_gap <= bp.OPT_TOL
    ynorm = np.linalg.norm(y)
    assert np.linalg.norm(A @ res.coef - y) <= sigma * (1 + bp.FEAS_TOL) + bp.BP_TOL * ynorm
    assert_allclose(res.l1_norm, np.abs(res.coef).sum(), rtol=1e-12)
    assert_allclose(res.l1_norm, ref, rtol=1e-6)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("frac", [0.0, 1e-3, 0.3])
def test_complex_gaussian_certified(seed, frac):
    A, y = gaussian_problem(12, 40, seed)
    sigma = frac * np.linalg.norm(y)
    res = bpdn(A, y, sigma) if frac else basis_pursuit(A, y)
    check_certified(res, A, y, sigma, naive.complex_bpdn_dual(A, y, sigma))


@pytest.mark.parametrize("frac", [0.0, 1e-3, 0.1])
def test_complex_exponential_features_certified(frac):
    """Before: SPGL1 stopped at max_iter here (basis pursuit infeasible,
    ||Ac - y|| / ||y|| ~ 1e-5; sigma > 0: gap 4e-3 after 2,000 products)."""
    A, y = exp_problem(20, 3, 120, 0)
    sigma = frac * np.linalg.norm(y)
    res = bpdn(A, y, sigma)
    check_certified(res, A, y, sigma, naive.complex_bpdn_dual(A, y, sigma))
    # a complex solution may have more than m nonzeros, but it is sparse
    assert np.count_nonzero(res.coef) < A.shape[1] // 2


def test_complex_operator_and_working_set(monkeypatch):
    """Column generation (working set of 2m columns forced) on a LinearOperator."""
    from rflite._bp import socp as _bp_socp

    monkeypatch.setattr(_bp_socp, "SOCP_FULL", 0)
    monkeypatch.setattr(_bp_socp, "SOCP_WS", 2)
    A, y = exp_problem(16, 3, 160, 1)
    sigma = 0.05 * np.linalg.norm(y)
    res = bpdn(aslinearoperator(A), y, sigma)
    check_certified(res, A, y, sigma, naive.complex_bpdn_dual(A, y, sigma))


def test_real_problem_in_complex_arithmetic_gives_the_real_optimum():
    rng = np.random.default_rng(3)
    A = rng.standard_normal((15, 30))
    y = rng.standard_normal(15)
    sigma = 0.3 * np.linalg.norm(y)
    rc = bpdn(A.astype(complex), y, sigma)
    rr = bpdn(A, y, sigma)
    assert rc.certified and rr.certified
    assert_allclose(rc.l1_norm, rr.l1_norm, rtol=1e-6)


def test_fix_feasible_reaches_the_bound():
    """The minimal-move correction: feasible afterwards, and unchanged when already feasible."""
    rng = np.random.default_rng(0)
    A_S = rng.standard_normal((10, 4)) + 1j * rng.standard_normal((10, 4))
    y = rng.standard_normal(10) + 1j * rng.standard_normal(10)
    c = np.linalg.lstsq(A_S, y, rcond=None)[0] * 0.5
    r_ls = np.linalg.norm(y - A_S @ np.linalg.lstsq(A_S, y, rcond=None)[0])
    sigma = 0.5 * (r_ls + np.linalg.norm(y - A_S @ c))
    c2 = _fix_feasible(A_S, c, y, sigma, sigma * (1 + 1e-12))
    assert np.linalg.norm(y - A_S @ c2) <= sigma * (1 + 1e-12)
    assert_allclose(np.linalg.norm(y - A_S @ c2), sigma, rtol=1e-8)  # the smallest move
    assert _fix_feasible(A_S, c2, y, sigma, sigma * (1 + 1e-12)) is c2
    assert _fix_feasible(A_S, c, y, 0.5 * r_ls, 0.5 * r_ls) is None


# ------------------------------------------- real data: the barrier as the path's fallback
def test_real_barrier_matches_the_homotopy():
    """The real-dual barrier (R^m) on a real problem: certified, same optimal l1."""
    from rflite._bp.homotopy import _columns, _Products
    from rflite._bp.socp import _socp_bpdn

    rng = np.random.default_rng(5)
    A = rng.standard_normal((20, 60))
    y = rng.standard_normal(20)
    sigma = 0.2 * np.linalg.norm(y)
    ref = bpdn(A, y, sigma)
    assert ref.stop_reason == "homotopy"
    coef, rn, l1, gap, _, _ = _socp_bpdn(_Products(A, False), A, y, sigma=sigma, tol=1e-8,
                                         feas=sigma * (1 + bp.FEAS_TOL), columns=_columns)
    assert coef.dtype == np.float64 and rn <= sigma * (1 + bp.FEAS_TOL)
    assert gap <= 1e-8
    assert_allclose(l1, ref.l1_norm, rtol=1e-7)


@pytest.mark.parametrize("with_nnls", [True, False])
def test_real_bpdn_fallbacks_after_the_homotopy(with_nnls, monkeypatch):
    """When the homotopy cannot certify (forced here: it reports a stall), real
    BPDN goes to the LASSO root search on NNLS, then (forced off here) to the
    barrier, before SPGL1 (SHRIMP f1: l1 18.0 instead of 196)."""
    rng = np.random.default_rng(6)
    A = rng.standard_normal((20, 60))
    y = rng.standard_normal(20)
    sigma = 0.2 * np.linalg.norm(y)
    ref = bpdn(A, y, sigma)
    from rflite._bp import spgl1 as _bp_spgl1

    monkeypatch.setattr(_bp_spgl1, "_homotopy_ws",
                        lambda P, op, y, **kw: (np.zeros(op.shape[1]), None, 1, "stalled"))
    if not with_nnls:
        monkeypatch.setattr(_bp_spgl1, "_nnls_bpdn", lambda *args, **kwargs: None)
    res = bpdn(A, y, sigma)
    assert res.stop_reason == ("lasso_nnls" if with_nnls else "barrier") and res.certified
    assert_allclose(res.l1_norm, ref.l1_norm, rtol=1e-6)


@pytest.mark.slow(reason="solver certification on a hard problem, several seconds")
def test_complex_bpdn_is_the_exact_support_solution_whatever_tol():
    """The barrier's point was only tol-optimal (gap 5e-9, coefficients 6e-6
    from the optimum), and tol=1e-12 ended at max_iter with gap 2.9e-6:
    Newton on the support's KKT system now gives the exact solution."""
    from rflite.datasets import make_friedman1
    from rflite.features import random_feature_map

    X, y = make_friedman1(120, d=6, noise=0.1, rng=0)
    A = random_feature_map(6, 200, q=2, activation="exp", rng=0).transform(X)
    A /= np.linalg.norm(A, axis=0)
    yc = y.astype(complex)
    sigma = 0.1 * np.linalg.norm(y)
    loose, tight = bpdn(A, yc, sigma), bpdn(A, yc, sigma, tol=1e-12)
    for res in (loose, tight):
        assert res.stop_reason == "barrier" and res.duality_gap <= 1e-13
        np.testing.assert_allclose(res.residual_norm, sigma, rtol=1e-12)
    np.testing.assert_allclose(tight.coef, loose.coef, rtol=0, atol=1e-12 * np.abs(loose.coef).max())
    # the KKT conditions themselves: A_S^* r = lambda c_S / |c_S|, |a_j^* r| <= lambda off S
    S = np.flatnonzero(loose.coef)
    h = A.conj().T @ (yc - A @ loose.coef)
    lam = np.abs(h[S]).mean()
    np.testing.assert_allclose(h[S], lam * loose.coef[S] / np.abs(loose.coef[S]), rtol=1e-10)
    assert np.abs(np.delete(h, S)).max() <= lam * (1 + 1e-10)


def _stalling_problem(m, n, d):
    from rflite.datasets import make_friedman1

    X, y = make_friedman1(m, d=d, noise=0.1, rng=0)
    A = random_feature_map(d, n, q=2, activation="exp", rng=0).transform(X)
    A = A - A.mean(axis=0)
    A /= np.linalg.norm(A, axis=0)
    return A, (y - y.mean()).astype(complex)


@pytest.mark.slow(reason="solver certification on a hard problem, several seconds")
@pytest.mark.parametrize("m,n,d,eta", [(60, 20, 5, 1.0), (100, 40, 6, 0.5)])
def test_complex_bpdn_where_the_barrier_stalls_follows_the_path(m, n, d, eta):
    """Tall, ill-conditioned (condition 4e3 / 1e4) centred exponential features
    with a small sigma: the dual barrier's Newton steps stalled and SPGL1
    stopped uncertified (l1 up to 25% above the optimum on 240 x 60).  The
    path followed down from ||y|| certifies it; the optimum is checked
    against SLSQP on the dual (an independent reference)."""
    A, yc = _stalling_problem(m, n, d)
    sigma = eta * np.sqrt(m)
    res = bpdn(A, yc, sigma)
    assert res.stop_reason == "homotopy" and res.duality_gap <= 1e-10
    assert np.linalg.norm(A @ res.coef - yc) <= sigma * (1 + bp.FEAS_TOL)
    assert_allclose(res.l1_norm, np.abs(res.coef).sum(), rtol=1e-12)
    assert_allclose(res.l1_norm, naive.complex_bpdn_dual(A, yc, sigma), rtol=1e-10)


def test_kkt_tangent_is_the_derivative_of_the_support_path():
    """The Euler predictor's tangent against central differences of the path
    itself (Newton solutions at sigma -+ delta on the same support)."""
    from rflite._bp.socp import _kkt_newton, _kkt_tangent

    A, yc = _stalling_problem(100, 40, 6)
    sigma = 1.0 * np.sqrt(100)
    res = bpdn(A, yc, sigma)
    S = np.flatnonzero(res.coef)
    c = _kkt_newton(A[:, S], yc, res.coef[S], sigma=sigma)
    delta = 1e-4 * sigma
    lo = _kkt_newton(A[:, S], yc, c, sigma=sigma - delta)
    hi = _kkt_newton(A[:, S], yc, c, sigma=sigma + delta)
    # central differences: error O(delta^2) of the curvature, far below 1e-6
    assert_allclose(_kkt_tangent(A[:, S], yc, c, sigma), (hi - lo) / (2 * delta),
                    rtol=0, atol=1e-6 * np.abs(hi - lo).max() / (2 * delta))


@pytest.mark.slow(reason="solver certification on a hard problem, several seconds")
def test_complex_path_predicts_its_leave_events(monkeypatch):
    """The continuation starts each step from the tangent's prediction and
    drops a coefficient the prediction takes through 0 at once: on 100 x 40
    the path used 630 Newton solves (zero-order starts, halving towards each
    leave event), now 172, with the same certified optimum; and each Newton
    run stops when it no longer contracts."""
    from rflite._bp import socp as _bp_socp

    calls, steps = [], []
    newton, solve = _bp_socp._kkt_newton, _bp_socp._kkt_solve
    monkeypatch.setattr(_bp_socp, "_kkt_newton",
                        lambda *a, **k: calls.append(1) or newton(*a, **k))
    monkeypatch.setattr(_bp_socp, "_kkt_solve",
                        lambda *a, **k: steps.append(1) or solve(*a, **k))
    A, yc = _stalling_problem(100, 40, 6)
    sigma = 0.5 * np.sqrt(100)
    res = bpdn(A, yc, sigma)
    assert res.stop_reason == "homotopy" and res.duality_gap <= 1e-10
    assert_allclose(res.l1_norm, naive.complex_bpdn_dual(A, yc, sigma), rtol=1e-10)
    assert len(calls) <= 300
    # Newton stops at its rounding floor and where it does not contract
    # (KKT_FLOOR, KKT_STALL): 1,926 Jacobian solves before, 953 after
    assert len(steps) <= 1300


def test_complex_sigma_grid_follows_one_path(monkeypatch):
    """The complex eta grid of SRFE (``_solve_grid``) resumes one solution path
    from grid point to grid point: the path starts at ||y|| once and the dual
    barrier is not run (it ran at every point, each solve from scratch), with
    every point the certified optimum of an independent ``bpdn``."""
    from rflite._bp import continuation as _bp_continuation
    from rflite._bp import path as _bp_path
    from rflite._bp import socp as _bp_socp

    calls = {"top": 0, "barrier": 0}
    top, barrier = _bp_continuation._path_top, _bp_socp._socp_bpdn

    def counted_top(*a, **k):
        calls["top"] += 1
        return top(*a, **k)

    def counted_barrier(*a, **k):
        calls["barrier"] += 1
        return barrier(*a, **k)

    monkeypatch.setattr(_bp_continuation, "_path_top", counted_top)
    monkeypatch.setattr("rflite._bp.spgl1._socp_bpdn", counted_barrier)
    A, yc = _stalling_problem(100, 40, 6)
    sigmas = np.array([20.0, 5.0, 30.0, 8.0, 6.0, 12.0])  # solved largest first
    path = _bp_path._solve_grid(A, yc, sigmas, None)
    assert path.reached.all()
    assert calls == {"top": 1, "barrier": 0}
    monkeypatch.undo()
    for e, sigma in enumerate(sigmas):
        ref = bpdn(A, yc, sigma)
        assert ref.certified
        assert_allclose(path.coefs[:, e], ref.coef, rtol=0, atol=1e-9 * np.abs(ref.coef).max())


def test_uncertifiable_grid_point_skips_spgl1(monkeypatch):
    """A grid point that neither the path nor the barrier certifies is scored
    at their best point: SPGL1's last resort (1,000 products without
    improving the gap 0.8 at one point per fold of a complex SRFECV; 60 s a
    fold on a Dask operator) runs for single solves only."""
    from rflite._bp import socp as _bp_socp
    from rflite._bp import spgl1 as _bp_spgl1
    from rflite._bp.continuation import PathPoint
    from rflite.bp import _check_problem, _options, _solve

    barrier = _bp_socp._socp_bpdn

    def uncertified(*a, **k):  # the barrier's point, its gap made 0.5
        sol = barrier(*a, **k)
        return None if sol is None else (*sol[:3], 0.5, *sol[4:])

    monkeypatch.setattr(_bp_spgl1, "_continuation", lambda *a, **k: None)
    monkeypatch.setattr(_bp_spgl1, "_socp_bpdn", uncertified)
    A, yc = _stalling_problem(60, 20, 5)
    op, y, cplx = _check_problem(A, yc)
    opts = _options(op, bp.OPT_TOL, None, None, True)
    sigma = float(np.sqrt(60))
    grid = _solve(op, y, cplx, sigma=sigma, tau=None, resume=PathPoint(), **opts)
    assert grid.stop_reason == "max_iter" and grid.duality_gap == 0.5
    assert grid.n_products < 50
    single = _solve(op, y, cplx, sigma=sigma, tau=None, **opts)  # SPGL1 from that point
    assert single.n_products > 100


@pytest.mark.slow(reason="solver certification on a hard problem, several seconds")
def test_complex_path_accepts_points_at_their_rounding_floor():
    """80 x 130 centred exponential features at eta = 0.02 (l1 norm ~3e3):
    Newton's KKT residual on the path's supports stops just above 1e-8 (its
    rounding floor there), so the path stalled and the solve ended at
    SPGL1's max_iter with gap 0.75; accepting points at the floor certifies
    it.  Optimality checked here from the returned point alone (weak
    duality with the dual point r / max|A^* r|)."""
    from rflite.datasets import make_friedman1

    X, y = make_friedman1(80, d=5, noise=0.1, rng=0)
    A = random_feature_map(5, 130, q=2, activation="exp", rng=0).transform(X)
    A = A - A.mean(axis=0)
    yc = (y - y.mean()).astype(complex)
    sigma = 0.02 * np.sqrt(80)
    res = bpdn(A, yc, sigma)
    assert res.stop_reason == "homotopy" and res.certified
    r = yc - A @ res.coef
    assert np.linalg.norm(r) <= sigma * (1 + bp.FEAS_TOL)
    z = r / np.abs(A.conj().T @ r).max()
    dual = np.vdot(yc, z).real - sigma * np.linalg.norm(z)
    assert np.abs(res.coef).sum() <= dual * (1 + 1e-6)


class _ThirdFolds:
    """Rows i with i % 3 == f are fold f's test rows (a splitter without scikit-learn)."""

    def split(self, X, y=None):
        idx = np.arange(len(X))
        for f in range(3):
            yield idx[idx % 3 != f], idx[idx % 3 == f]


def complex_auto_data():
    from rflite.datasets import make_friedman1

    return make_friedman1(120, d=5, noise=0.1, rng=0)


def test_complex_srfe_chooses_eta_itself():
    """eta="auto" / SRFECV with complex features raised ValueError (the
    choice followed the real homotopy path only).  Now each fold solves the
    grid point by point, largest eta first, with the real path's early stop;
    the fold errors equal certified bpdn solves at the same eta by hand, and
    the default estimator fits."""
    from rflite.bp import SRFECV, SRFERegressor

    X, y = complex_auto_data()
    cv = SRFECV(n_features=30, activation="exp", cv=_ThirdFolds(), random_state=0).fit(X, y)
    A = cv.feature_map_.transform(X)
    etas = cv.cv_results_["eta"]
    for f, (tr, te) in enumerate(_ThirdFolds().split(X)):
        a_mean, y_mean = A[tr].mean(axis=0), y[tr].mean()
        errs = cv.cv_results_[f"split{f}_test_mse"]
        done = np.flatnonzero(np.isfinite(errs))
        # the largest etas first, stopped past the minimum (not the whole grid)
        assert done[0] == 0 and 3 <= done.size < etas.size
        assert np.all(np.diff(done) == 1)
        for e in [*done[:-1:4], done[-1]]:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", bp.SigmaUnreachableWarning)
                res = bpdn(A[tr] - a_mean, y[tr] - y_mean, etas[e] * np.sqrt(tr.size))
            # below the fold's least-squares residual the grid ends with that fit
            assert res.certified or (res.stop_reason == "sigma_unreachable" and e == done[-1])
            pred = ((A[te] - a_mean) @ res.coef).real + y_mean
            assert_allclose(errs[e], np.mean((pred - y[te]) ** 2), rtol=1e-8)
    assert cv.eta_ == etas[np.argmin(cv.cv_results_["mean_test_mse"])]
    assert cv.result_.bpdn.certified
    est = SRFERegressor(n_features=30, activation="exp", random_state=0).fit(X, y)
    assert est.eta_ in est.cv_results_["eta"] and est.result_.bpdn.certified
    assert est.score(X, y) > 0.8
