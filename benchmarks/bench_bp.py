"""Benchmarks of rflite.bp against plain NumPy and (optionally) the spgl1 package.

Problem: a 500 x 10000 random-feature matrix (sin features, q = 3 of d = 5
inputs, N(0, 1) weights, U[0, 2 pi] bias) and the target sqrt(1 + |x|^2) with
N(0, 0.01^2) noise; BPDN with sigma = 0.01 sqrt(m) (the noise level).  With
``--benchmark-disable`` (the default suite) a 200 x 4000 version runs once as a
smoke test.

* ``rflite``: :func:`rflite.bp.bpdn` (homotopy, exact to rounding);
* ``numpy-spgl1``: a straightforward NumPy SPGL1 (Pareto root finding,
  spectral projected gradient, sort-based projection, one product with A per
  line-search trial), run to the same tolerance ``OPT_TOL`` with spgl1's
  iteration limit ``10 m``;
* ``spgl1``: ``spgl1.spg_bpdn`` (pip package, a ``bench`` extra only:
  skipped when not installed).

``python -m pytest benchmarks/bench_bp.py --benchmark-enable -s`` also prints a
table of medians, time ratios and the objectives reached.

``test_q1_bpdn_vs_spgl1``: the SHRIMP low-dim f2 problem on the paper's q = 1
fourier dictionary (140 x 20,000; smoke run 60 x 2,000), rflite against the
spgl1 package in the same run, both at one BLAS thread.
"""

import time

import numpy as np
import pytest

from rflite.bp import BP_TOL, OPT_TOL, bpdn, project_l1_ball
from rflite.datasets import make_harfe2
from rflite.features import random_feature_map


def _full(request):
    """Whether benchmarks run for real (``--benchmark-enable``) or as smoke tests."""
    cfg = request.config
    if cfg.getoption("benchmark_enable", default=False):
        return True
    return not cfg.getoption("benchmark_disable", default=True)


def make_problem(m, n, seed=0):
    X, y = make_harfe2(m, noise=0.01, rng=seed)
    A = random_feature_map(5, n, q=3, rng=seed).transform(X)
    return A, y, 0.01 * np.sqrt(m)


@pytest.fixture(scope="module")
def problem(request):
    return make_problem(*((500, 10_000) if _full(request) else (200, 4000)))


# ------------------------------------------------------- NumPy reference
def project_sort(x, tau):
    """Projection onto the l1 ball by sorting (Duchi et al. 2008)."""
    a = np.abs(x)
    if a.sum() <= tau:
        return x.copy()
    if tau == 0:
        return np.zeros_like(x)
    u = np.sort(a)[::-1]
    css = np.cumsum(u)
    rho = np.nonzero(u * np.arange(1, a.size + 1) > css - tau)[0][-1]
    theta = (css[rho] - tau) / (rho + 1.0)
    return np.sign(x) * np.maximum(a - theta, 0.0)


def numpy_spgl1(A, y, sigma, tol=OPT_TOL, max_iter=None):
    """Plain SPGL1 (van den Berg and Friedlander 2008, Algorithm 1 + root finding)."""
    m, n = A.shape
    max_iter = 10 * m if max_iter is None else max_iter
    x = np.zeros(n)
    tau = 0.0
    r = y.copy()
    g = -A.T @ r
    f = 0.5 * r @ r
    fold = f
    last = np.full(10, -np.inf)
    last[0] = f
    step_g = 1.0
    for it in range(max_iter):
        gnorm = np.abs(g).max()
        rnorm = np.sqrt(2 * f)
        err1 = abs(rnorm - sigma) / max(1.0, rnorm)
        if err1 <= tol or rnorm <= 1e-6 * np.linalg.norm(y):
            break  # root found (spgl1: EXIT_ROOT_FOUND / EXIT_BPSOL_FOUND)
        change = abs(f - fold)
        if (change <= 1e-4 * f and rnorm > 2 * sigma) or (
            change <= 0.1 * f * abs(rnorm - sigma) and rnorm <= 2 * sigma
        ):
            tau_new = max(0.0, tau + rnorm * (rnorm - sigma) / gnorm)
            if tau_new < tau:
                x = project_sort(x, tau_new)
                r = y - A @ x
                g = -A.T @ r
                f = 0.5 * r @ r
                last[:] = -np.inf
                last[0] = f
            tau = tau_new
        xold, gold, fold = x, g, f
        fmax = last.max()
        step = 1.0
        for _ in range(10):  # projected-arc line search, one A-product per trial
            xn = project_sort(x - step * step_g * g, tau)
            rn = y - A @ xn
            fn = 0.5 * rn @ rn
            if fn < fmax + 1e-4 * (g @ (xn - x)):
                break
            step *= 0.5
        x, r, f = xn, rn, fn
        g = -A.T @ r
        s, dg = x - xold, g - gold
        sty = s @ dg
        step_g = 1e5 if sty <= 0 else min(1e5, max(1e-16, (s @ s) / sty))
        last[(it + 1) % 10] = f
    return x


def _spgl1(limit=None):
    spgl1 = pytest.importorskip("spgl1")
    return lambda A, y, sigma: spgl1.spg_bpdn(A, y, sigma, opt_tol=OPT_TOL, iter_lim=limit,
                                              verbosity=0)[0]


#: Iteration limit of the reference solvers in the smoke run (benchmarks disabled).
SMOKE_ITERS = 30


# ------------------------------------------------------------- benchmarks
@pytest.mark.benchmark(group="bpdn")
def test_bench_bpdn_rflite(benchmark, problem):
    A, y, sigma = problem
    res = benchmark.pedantic(bpdn, args=(A, y, sigma), rounds=3, iterations=1, warmup_rounds=1)
    benchmark.extra_info.update(l1=res.l1_norm, residual=res.residual_norm, gap=res.duality_gap)
    assert res.residual_norm <= sigma * (1 + 1e-6)


@pytest.mark.benchmark(group="bpdn")
def test_bench_bpdn_numpy_spgl1(benchmark, problem, request):
    A, y, sigma = problem
    limit = None if _full(request) else SMOKE_ITERS
    x = benchmark.pedantic(numpy_spgl1, args=(A, y, sigma), kwargs={"max_iter": limit},
                           rounds=1, iterations=1)
    benchmark.extra_info.update(l1=float(np.abs(x).sum()),
                                residual=float(np.linalg.norm(A @ x - y)))


@pytest.mark.benchmark(group="bpdn")
def test_bench_bpdn_spgl1_package(benchmark, problem, request):
    solve = _spgl1(None if _full(request) else SMOKE_ITERS)
    A, y, sigma = problem
    x = benchmark.pedantic(solve, args=(A, y, sigma), rounds=1, iterations=1)
    benchmark.extra_info.update(l1=float(np.abs(x).sum()),
                                residual=float(np.linalg.norm(A @ x - y)))


@pytest.mark.benchmark(group="l1-projection")
def test_bench_projection_condat(benchmark):
    x = np.random.default_rng(0).standard_normal(20_000)
    project_l1_ball(x, 10.0)
    p = benchmark(project_l1_ball, x, 10.0)
    np.testing.assert_allclose(p, project_sort(x, 10.0), atol=1e-12)


@pytest.mark.benchmark(group="l1-projection")
def test_bench_projection_sort(benchmark):
    x = np.random.default_rng(0).standard_normal(20_000)
    benchmark(project_sort, x, 10.0)


def test_bpdn_summary(request, problem):
    """Median times (3 runs for rflite, 1 for the others), ratios and objectives."""
    if not _full(request):
        pytest.skip("summary table only with --benchmark-enable")
    A, y, sigma = problem
    solvers = {"rflite": lambda: bpdn(A, y, sigma).coef,
               "numpy-spgl1": lambda: numpy_spgl1(A, y, sigma)}
    try:
        import spgl1

        solvers["spgl1"] = lambda: spgl1.spg_bpdn(A, y, sigma, opt_tol=OPT_TOL, verbosity=0)[0]
    except ImportError:
        pass
    rows = {}
    for name, solve in solvers.items():
        reps = 3 if (name == "rflite" and _full(request)) else 1
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            x = solve()
            times.append(time.perf_counter() - t0)
        rows[name] = (float(np.median(times)), float(np.abs(x).sum()),
                      float(np.linalg.norm(A @ x - y)))
    t_ref = rows["rflite"][0]
    print(f"\nBPDN {A.shape[0]} x {A.shape[1]}, sigma = {sigma:.4g}")
    print(f"{'solver':14s}{'median s':>10s}{'ratio':>8s}{'||c||_1':>14s}{'||Ac-y||':>12s}")
    for name, (t, l1, rn) in rows.items():
        print(f"{name:14s}{t:10.3f}{t / t_ref:8.1f}{l1:14.6g}{rn:12.6g}")
    assert rows["rflite"][2] <= sigma * (1 + 1e-6)
    # at equal or better objective: the reference's l1 norm is never lower at feasibility
    for name, (t, l1, rn) in rows.items():
        if rn <= sigma * (1 + 1e-6):
            assert rows["rflite"][1] <= l1 * (1 + 1e-6)


# ----------------------------------------------------- SHRIMP q = 1 dictionary
def make_q1_problem(m, N, seed=1):
    """SHRIMP low-dim f2: d = 10, q = 1 fourier dictionary over all subsets,
    N(0, 1) weights, no bias (2N columns); sigma = eta sqrt(m) with the SRFE-S
    experiment's eta (:func:`rflite.experiments.srfe._eta`)."""
    from rflite.datasets import target_shrimp2
    from rflite.experiments.srfe import ETA_REL_SHRIMP, _eta
    from rflite.features import Normal

    rng = np.random.default_rng(seed)
    fmap = random_feature_map(10, N, q=1, subsets="all", distribution=Normal(1.0), bias="none",
                              activation="fourier", rng=seed)
    X = rng.uniform(-1, 1, (m, 10))
    y = target_shrimp2(X)
    A = fmap.transform(X)
    return A, y, _eta(A, y, ETA_REL_SHRIMP) * np.sqrt(m)


@pytest.fixture(scope="module")
def q1_problem(request):
    return make_q1_problem(*((140, 10_000) if _full(request) else (60, 1000)))


def _one_thread():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    return threadpoolctl.threadpool_limits(1)


def _against_spgl1(spgl1, A, y, sigma, title, digits, *, max_iter=None, iter_lim=None):
    """rflite's ``bpdn`` and ``spgl1.spg_bpdn`` on the same problem, one BLAS thread each.

    Prints time (wall and CPU), the ratio, ``||c||_1``, the residual and the
    certificate of each; returns rflite's result and the rows
    ``{name: (seconds, cpu seconds, l1, residual, note)}``.
    """
    rows = {}
    with _one_thread():
        t0, c0 = time.perf_counter(), time.process_time()
        res = bpdn(A, y, sigma, max_iter=max_iter)
        rows["rflite"] = (time.perf_counter() - t0, time.process_time() - c0, res.l1_norm,
                          res.residual_norm, f"{res.stop_reason}, gap {res.duality_gap:.2g}")
        t0, c0 = time.perf_counter(), time.process_time()
        x = spgl1.spg_bpdn(A, y, sigma, opt_tol=OPT_TOL, iter_lim=iter_lim, verbosity=0)[0]
        rows["spgl1"] = (time.perf_counter() - t0, time.process_time() - c0,
                         float(np.abs(x).sum()), float(np.linalg.norm(A @ x - y)),
                         "no certificate")
    print(f"\n{title} {A.shape[0]} x {A.shape[1]}, sigma = {sigma:.4g}")
    for name, (t, cpu, l1, rn, note) in rows.items():
        print(f"{name:8s}{t:9.3f} s (cpu {cpu:7.3f} s)  spgl1/this {rows['spgl1'][0] / t:6.1f}"
              f"  ||c||_1 {l1:12.{digits}g}  ||Ac-y|| {rn:10.4g}  {note}")
    return res, rows


@pytest.mark.parametrize("which", ["sigma", "zero"])
def test_q1_bpdn_vs_spgl1(which, q1_problem, request):
    """rflite vs the spgl1 package, both at one BLAS thread, same matrices.

    Prints time (wall and CPU), ratio, ||c||_1, residual and certificate.
    Asserts for sigma = eta sqrt(m): rflite certified, feasible, ||c||_1 no
    larger than spgl1's.  Basis pursuit (sigma = 0) on this matrix
    (condition number ~1e14) goes through the preconditioned column-generation
    LPs (``rflite._bp.lp._bp_colgen_precond``): asserted certified in the full
    run (a gap near 1e-13 after some 16 rounds, faster than spgl1) and
    feasible (residual <= BP_TOL ||y||)
    with ||c||_1 no larger than spgl1's when spgl1's point is feasible too.
    """
    spgl1 = pytest.importorskip("spgl1")
    A, y, sigma = q1_problem
    if which == "zero":
        sigma = 0.0
    full = _full(request)
    limit = None if full else SMOKE_ITERS
    res, rows = _against_spgl1(spgl1, A, y, sigma, "q=1 f2 BPDN", 6,
                               max_iter=None if full else 50, iter_lim=limit)
    feas = sigma * (1 + 1e-6) + BP_TOL * np.linalg.norm(y)
    if which == "zero":
        assert res.residual_norm <= feas
        assert np.isfinite(res.duality_gap)
        if full:
            assert res.certified
        if rows["spgl1"][3] <= feas:
            assert res.l1_norm <= rows["spgl1"][2] * (1 + 1e-9)
    if which == "sigma":
        assert res.certified
        assert res.residual_norm <= sigma * (1 + 1e-6)
        if rows["spgl1"][3] <= sigma * (1 + 1e-6):
            assert res.l1_norm <= rows["spgl1"][2] * (1 + 1e-9)


# ----------------------------------------------------- complex BPDN: barrier vs spgl1
@pytest.fixture(scope="module")
def complex_problem(request):
    """Complex exponential features exp(i w.x), q = 2 of d = 10, on f2 = cos(x1) + sin(x2)."""
    m, d, n = (140, 10, 2000) if _full(request) else (30, 4, 200)
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, (m, d))
    A = random_feature_map(d, n, q=2, activation="exp", rng=2).transform(X)
    return A, (np.cos(X[:, 0]) + np.sin(X[:, 1])).astype(complex)


@pytest.mark.parametrize("frac", [0.0, 0.1])
def test_complex_bpdn_vs_spgl1(frac, complex_problem, request):
    """Complex BPDN (an SOCP): rflite's dual barrier against spgl1, one BLAS thread each.

    Asserts rflite certified ("barrier"), feasible, and ||c||_1 no larger than
    spgl1's when spgl1's point is feasible.  Without the barrier (full size)
    rflite's SPGL1 alone stops at max_iter (sigma = 0: infeasible;
    sigma = 0.1 ||y||: gap 2.3e-3).
    """
    spgl1 = pytest.importorskip("spgl1")
    A, y = complex_problem
    sigma = frac * float(np.linalg.norm(y))
    res, rows = _against_spgl1(spgl1, A, y, sigma, "complex exp features BPDN", 8)
    feas = sigma * (1 + 1e-6) + BP_TOL * np.linalg.norm(y)
    assert res.stop_reason == "barrier" and res.certified
    assert res.residual_norm <= feas
    if rows["spgl1"][3] <= feas:
        assert res.l1_norm <= rows["spgl1"][2] * (1 + 1e-6)


# ------------------------------- complex BPDN where the barrier stalls: the path
@pytest.fixture(scope="module")
def complex_path_problem(request):
    """Centred complex exponential features (q = 2 of d = 5) on noisy Friedman-1
    with a small sigma: condition ~1e4 .. 1e13, the dual barrier stalls and the
    solution path is followed (``rflite._bp.continuation._continuation``)."""
    from rflite.datasets import make_friedman1

    m, n, eta = (100, 150, 0.05) if _full(request) else (60, 20, 1.0)
    X, y = make_friedman1(m, d=5, noise=0.1, rng=0)
    A = random_feature_map(5, n, q=2, activation="exp", rng=0).transform(X)
    A = A - A.mean(axis=0)
    return A, (y - y.mean()).astype(complex), eta * np.sqrt(m)


def test_complex_bpdn_path_vs_spgl1(complex_path_problem, monkeypatch):
    """The continuation (tangent predictor, predicted leave events, Newton
    stopped where it no longer contracts) against the same path with
    zero-order steps and full Newton runs (the simpler scheme, as reference
    in the same run) and, when installed, spgl1, one BLAS thread each.  At
    full size the continuation needs about a quarter of the simpler scheme's
    Newton solves for the same l1 norm."""
    from rflite._bp import socp as _bp_socp

    A, y, sigma = complex_path_problem
    try:
        import spgl1
    except ImportError:  # the zero-order comparison needs no peer library
        spgl1 = None
    if spgl1 is not None:
        res, rows = _against_spgl1(spgl1, A, y, sigma, "complex BPDN on the solution path", 10)
        t_new = rows["rflite"][0]
    else:
        with _one_thread():
            t0 = time.perf_counter()
            res = bpdn(A, y, sigma)
            t_new = time.perf_counter() - t0
        rows = {}
        print(f"\ncomplex BPDN on the solution path {A.shape[0]} x {A.shape[1]}: "
              f"{t_new:.3f} s ({res.stop_reason}, gap {res.duality_gap:.2g}); spgl1 not installed")
    with monkeypatch.context() as mp, _one_thread():
        mp.setattr(_bp_socp, "_kkt_tangent", lambda *a: None)
        mp.setattr(_bp_socp, "KKT_FLOOR", 0.0)
        mp.setattr(_bp_socp, "KKT_STALL", _bp_socp.KKT_STEPS + 2)
        t0 = time.perf_counter()
        old = bpdn(A, y, sigma)
        t_old = time.perf_counter() - t0
    print(f"zero-order path {t_old:9.3f} s  this/zero-order {t_old / t_new:6.2f}x"
          f"  ||c||_1 {old.l1_norm:12.10g}  {old.stop_reason}, gap {old.duality_gap:.2g}")
    feas = sigma * (1 + 1e-6) + BP_TOL * np.linalg.norm(y)
    assert res.stop_reason == "homotopy" and res.certified
    assert res.residual_norm <= feas
    np.testing.assert_allclose(res.l1_norm, old.l1_norm, rtol=1e-9)
    if "spgl1" in rows and rows["spgl1"][3] <= feas:
        assert res.l1_norm <= rows["spgl1"][2] * (1 + 1e-6)
