"""Greedy feature construction (rflite.greedy) and the executor helper (rflite._core.parallel)."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from rflite._core.random import spawn_streams
from rflite._core.parallel import check_executor, map_tasks, spawn_seeds
from rflite.greedy import (
    BANDWIDTHS,
    NU_GRID,
    GFCRegressor,
    _ridge_step,
    fold_ids,
    gfc,
    gfc_design,
    greedy_descent,
    hyper_objective,
    ridge_cv,
    rff_ridge_cv,
)


# ------------------------------------------------------------ NumPy references
def naive_objective(X, y, f, w, lam, folds):
    """Loop over folds: train on fold j, validate on the rest (readable reference)."""
    Z = np.column_stack([f, np.sin(X @ w), np.cos(X @ w)])
    k = folds.max() + 1
    total = 0.0
    for j in range(k):
        tr, va = folds == j, folds != j
        P = Z[tr].T @ Z[tr] + tr.sum() * lam * np.eye(3)
        c = np.linalg.solve(P, Z[tr].T @ y[tr])
        total += np.mean((Z[va] @ c - y[va]) ** 2)
    return total / k


def naive_ridge_step(X, y, f, w, lam):
    Z = np.column_stack([f, np.sin(X @ w), np.cos(X @ w)])
    c = np.linalg.solve(Z.T @ Z + len(y) * lam * np.eye(3), Z.T @ y)
    return c, Z @ c


def _problem(s=120, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (s, d))
    y = np.cos(X @ rng.standard_normal(d)) + 0.1 * rng.standard_normal(s)
    f = 0.5 + 0.3 * rng.standard_normal(s)
    return X, y, f, rng


# -------------------------------------------------------- objective, gradient
def test_objective_matches_numpy_reference():
    X, y, f, rng = _problem()
    folds = fold_ids(len(y), 5, 1)
    for _ in range(3):
        w, lam = rng.standard_normal(X.shape[1]), 10 ** rng.uniform(-5, 0)
        got = hyper_objective(X, y, f, w, lam, folds).value
        assert_allclose(got, naive_objective(X, y, f, w, lam, folds), rtol=1e-12)


def test_gradient_matches_central_differences():
    X, y, f, rng = _problem(s=150, d=5, seed=3)
    folds = fold_ids(len(y), 5, 2)
    for _ in range(4):
        w, lam = rng.standard_normal(X.shape[1]), 10 ** rng.uniform(-4, -1)
        obj = hyper_objective(X, y, f, w, lam, folds)
        grad = np.append(obj.grad_w, obj.grad_lam)
        fd = np.empty_like(grad)
        for j in range(X.shape[1]):
            e = np.zeros_like(w)
            e[j] = h = 1e-6
            fd[j] = (naive_objective(X, y, f, w + e, lam, folds)
                     - naive_objective(X, y, f, w - e, lam, folds)) / (2 * h)
        h = 1e-5 * lam
        fd[-1] = (naive_objective(X, y, f, w, lam + h, folds)
                  - naive_objective(X, y, f, w, lam - h, folds)) / (2 * h)
        rel = np.abs(grad - fd) / np.abs(fd).max()
        assert rel.max() < 1e-5, (grad, fd)


def test_ridge_step_matches_numpy_reference():
    X, y, f, rng = _problem(s=80, d=3, seed=5)
    w = rng.standard_normal(3)
    c_ref, f_ref = naive_ridge_step(X, y, f, w, 1e-3)
    f_new = f.copy()
    c = _ridge_step(X, y, f_new, w, 1e-3)
    assert_allclose(c, c_ref, rtol=1e-10)
    assert_allclose(f_new, f_ref, rtol=1e-10, atol=1e-13)


def test_ridge_cv_matches_direct_solves():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((60, 7))
    y = rng.standard_normal(60)
    folds = fold_ids(60, 4, 0)
    nus = np.array([1e-2, 1.0, 30.0])
    ref = np.zeros(3)
    for j in range(4):
        tr, va = folds != j, folds == j
        for i, nu in enumerate(nus):
            a = np.linalg.solve(A[tr].T @ A[tr] + nu * np.eye(7), A[tr].T @ y[tr])
            ref[i] += np.mean((A[va] @ a - y[va]) ** 2) / 4
    assert_allclose(ridge_cv(A, y, nus, folds), ref, rtol=1e-10)


# ----------------------------------------------------------- published behaviour
def test_one_greedy_step_recovers_cosine_direction():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (500, 3))
    w_true = np.array([2.0, -1.0, 0.5])
    y = np.cos(X @ w_true)
    res = greedy_descent(X, y, np.zeros(500), max_steps=1, rng=1)
    w = res.weights[0]
    assert res.n_steps == 1
    assert abs(w @ w_true) / (np.linalg.norm(w) * np.linalg.norm(w_true)) > 0.99
    assert res.errors[1] < 1e-3 * res.errors[0]


def test_descent_stops_on_small_relative_improvement():
    X, y, _, _ = _problem(s=300, d=3, seed=7)
    res = greedy_descent(X, y, y.mean(), max_steps=15, eps=0.05, rng=0)
    assert res.weights.shape == (res.n_steps, 3) and res.errors.shape == (res.n_steps + 1,)
    rel = np.abs(np.diff(res.errors)) / np.maximum(res.errors[1:], res.errors[:-1])
    # every step but the last improved by at least eps; the last one stopped it
    assert np.all(rel[:-1] >= 0.05)
    assert res.n_steps == 15 or rel[-1] < 0.05
    assert_allclose(np.mean((res.f - y) ** 2), res.errors[-1], rtol=1e-12)


def _gfc_problem(m=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, (m, 4))
    y = np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.05 * rng.standard_normal(m)
    return X, y


GFC_KW = dict(n_workers=3, max_steps=3, rng=11)


@pytest.fixture(scope="module")
def gfc_serial():
    X, y = _gfc_problem()
    return gfc(X, y, **GFC_KW)


def _assert_same(a, b):
    assert_array_equal(a.weights, b.weights)
    assert_array_equal(a.coef_cos, b.coef_cos)
    assert_array_equal(a.coef_sin, b.coef_sin)
    assert a.intercept == b.intercept and a.nu == b.nu


def test_gfc_fits_and_model_matches_design(gfc_serial):
    X, y = _gfc_problem()
    res = gfc_serial
    assert res.n_constructed <= 3 * 3 and res.weights.shape[0] == res.n_constructed - res.n_pruned
    pred = gfc_design(X, res.weights) @ np.concatenate([[res.intercept], res.coef_cos,
                                                        res.coef_sin])
    assert_allclose(np.sqrt(np.mean((pred - y) ** 2)), res.train_rmse, rtol=1e-10)
    assert res.train_rmse < 0.3 * y.std()
    assert res.nu in NU_GRID


def test_eta_pruning_removes_only_features_below_eta():
    X, y = _gfc_problem()
    full = gfc(X, y, eta=0.0, **GFC_KW)
    amp = np.hypot(full.coef_cos, full.coef_sin)
    eta = float(np.median(amp))
    pruned = gfc(X, y, eta=eta, **GFC_KW)
    keep = amp >= eta
    assert 0 < keep.sum() < amp.size
    assert pruned.n_pruned == amp.size - keep.sum()
    assert_array_equal(pruned.weights, full.weights[keep])
    assert_array_equal(pruned.coef_cos, full.coef_cos[keep])
    assert_array_equal(pruned.coef_sin, full.coef_sin[keep])
    assert np.all(np.hypot(pruned.coef_cos, pruned.coef_sin) >= eta)


def test_gfc_seeded_reproducibility(gfc_serial):
    X, y = _gfc_problem()
    _assert_same(gfc(X, y, **GFC_KW), gfc_serial)


def test_gfc_identical_on_thread_pool(gfc_serial):
    X, y = _gfc_problem()
    with ThreadPoolExecutor(2) as ex:
        _assert_same(gfc(X, y, executor=ex, **GFC_KW), gfc_serial)


@pytest.mark.slow(reason="starts a process pool")
def test_gfc_identical_on_process_pool_of_two(gfc_serial):
    X, y = _gfc_problem()
    _assert_same(gfc(X, y, executor=2, **GFC_KW), gfc_serial)


@pytest.mark.slow(reason="starts or uses a LocalCluster")
def test_gfc_identical_on_dask_local_cluster(gfc_serial, cluster_client):
    X, y = _gfc_problem()
    res = gfc(X, y, executor=cluster_client.get_executor(), **GFC_KW)
    _assert_same(res, gfc_serial)


def test_gfc_multiple_passes_and_subsample():
    X, y = _gfc_problem(m=400)
    kw = dict(n_passes=2, n_workers=2, max_steps=2, subsample=150, nu=1e-3, rng=0)
    res = gfc(X, y, **kw)
    assert res.nu == 1e-3 and res.n_constructed <= 8
    assert res.train_rmse < y.std()
    with ThreadPoolExecutor(2) as ex:
        _assert_same(gfc(X, y, executor=ex, **kw), res)


# ------------------------------------------------------------------- model class
def _gfc_in_units_of_y(X, y, **kw):
    """gfc() as the estimator runs it on one output: on ``y`` divided by its scale
    and rounded to the grid, the result mapped back to units of ``y``."""
    from rflite._gfc.estimator import _in_memory_scale, _scaled_targets, _unscaled

    scale = _in_memory_scale(y)
    return _unscaled(gfc(X, _scaled_targets(y, scale), **kw), scale)


def test_regressor_predict_transform_and_params():
    # the estimator is gfc() on the rows in canonical order (cv=None: gfc's
    # random folds for nu, over the estimator's wider nu grid and smaller
    # initial spectra; n_estimators=1: one fit, not the default bag of five),
    # on the scaled targets
    from rflite.greedy import GFC_INIT_SCALE, NU_GRID_ESTIMATOR
    from rflite.metropolis import _canonical_order

    X, y = _gfc_problem()
    model = GFCRegressor(n_workers=3, max_steps=3, n_estimators=1, fit_intercept=False,
                         cv=None, random_state=11).fit(X, y)
    order = _canonical_order(X, y)
    ref = _gfc_in_units_of_y(X[order], y[order], nu_grid=NU_GRID_ESTIMATOR,
                             init_scale=GFC_INIT_SCALE, stopping="cv", **GFC_KW)
    _assert_same(model.result_, ref)
    assert model.steps_ == ref.steps
    L = model.weights_.shape[0]
    F = model.transform(X)
    assert F.shape == (X.shape[0], 2 * L)
    coef = np.concatenate([ref.coef_cos, ref.coef_sin])
    assert_allclose(model.predict(X), F @ coef + ref.intercept, rtol=1e-12, atol=1e-12)
    assert model.score(X, y) > 0.9  # 0.95 with these 3 x 3 steps
    # train_rmse is against the targets on the estimator's grid (TARGET_GRID_BITS)
    assert_allclose(np.sqrt(np.mean((model.predict(X) - y) ** 2)), ref.train_rmse, rtol=1e-7)
    assert model.get_params()["n_workers"] == 3
    assert model.set_params(eta=0.1).eta == 0.1
    with pytest.raises(ValueError, match="bogus"):
        model.set_params(bogus=1)


def _units_problem(m=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (m, 3))
    y = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(m)
    return X, y, rng.uniform(-1, 1, (50, 3))


def _assert_scaled_fit(est, ref, a, Xt):
    """``est`` fitted on ``a * y`` is ``ref`` fitted on ``y`` in other units."""
    assert_array_equal(est.weights_, ref.weights_)
    assert (est.nu_, est.steps_, est.guarded_) == (ref.nu_, ref.steps_, ref.guarded_)
    want = a * ref.predict(Xt)
    assert_allclose(est.predict(Xt), want, rtol=1e-10, atol=1e-10 * np.abs(want).max())
    assert_allclose(est.cv_results_["mean_test_mse"], a ** 2 * ref.cv_results_["mean_test_mse"],
                    rtol=1e-10)


def test_default_regressor_predictions_scale_with_the_targets():
    """The default GFCRegressor fits ``a * y`` (a > 0) as ``a`` times its fit of
    ``y``: the same spectra, nu and steps, predictions to rounding.  (The fit
    works on the targets divided by their standard deviation: its penalties,
    start and bounds of lambda and cut-offs are relative to it.)"""
    X, y, Xt = _units_problem()
    ref = GFCRegressor(random_state=0).fit(X, y)
    for a in (1e-3, 2.0, 1e3):
        _assert_scaled_fit(GFCRegressor(random_state=0).fit(X, a * y), ref, a, Xt)


def test_regressor_eta_is_in_units_of_y():
    """A given cut-off ``eta`` is an amplitude in units of ``y``: ``a * eta`` on
    ``a * y`` prunes the same features, and a cut-off between the amplitudes
    keeps exactly those above it."""
    X, y, Xt = _units_problem()
    kw = dict(n_workers=2, max_steps=4, n_estimators=1, mean_guard=False, random_state=0)
    full = GFCRegressor(eta=0.0, **kw).fit(X, y)
    amp = np.hypot(full.result_.coef_cos, full.result_.coef_sin)
    eta = float(np.median(amp))
    ref = GFCRegressor(eta=eta, **kw).fit(X, y)
    assert ref.result_.n_pruned == np.sum(amp < eta) > 0
    assert_array_equal(ref.weights_, full.weights_[amp >= eta])
    _assert_scaled_fit(GFCRegressor(eta=1e3 * eta, **kw).fit(X, 1e3 * y), ref, 1e3, Xt)


# ---------------------------------------------------------------- RFF baseline
@pytest.mark.parametrize("measure", ["gaussian", "laplace", "cauchy"])
def test_rff_baseline_cross_validates(measure):
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (300, 3))
    y = np.sin(4 * X[:, 0]) + X[:, 1]
    res = rff_ridge_cv(X, y, n_features=30, measure=measure, bandwidths=BANDWIDTHS[4:8],
                       nus=NU_GRID[:3], rng=0)
    assert res.cv_mse.shape == (4, 3)
    assert res.bandwidth in BANDWIDTHS and res.nu in NU_GRID
    pred = res.feature_map.transform(X) @ res.coef + res.intercept
    assert np.mean((pred - y) ** 2) < 0.05 * y.var()


def test_rff_same_result_with_executor():
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 1, (120, 2))
    y = X[:, 0] ** 2
    kw = dict(n_features=10, bandwidths=BANDWIDTHS[5:8], nus=NU_GRID[:2], rng=4)
    with ThreadPoolExecutor(2) as ex:
        a, b = rff_ridge_cv(X, y, **kw), rff_ridge_cv(X, y, executor=ex, **kw)
    assert_array_equal(a.coef, b.coef)
    assert_array_equal(a.cv_mse, b.cv_mse)


# ------------------------------------------------------------------ bad inputs
def test_bad_inputs_raise_value_error_naming_parameter():
    X, y = _gfc_problem(m=100)
    f = np.zeros(100)
    folds = fold_ids(100, 5, 0)
    cases = [
        (lambda: gfc(X, y, n_workers=0), "n_workers"),
        (lambda: gfc(X, y, max_steps=0), "max_steps"),
        (lambda: gfc(X, y, n_passes=0), "n_passes"),
        (lambda: gfc(X, y, nu=0.0), "nu"),
        (lambda: gfc(X, y, eta=-1.0), "eta"),
        (lambda: gfc(X, y, executor="pool"), "executor"),
        (lambda: gfc(X, y, executor=0), "executor"),
        (lambda: gfc(X, y, n_workers=60), "subsample"),
        (lambda: gfc(X, y, rng=-3), "rng"),
        (lambda: gfc(X, y[:-1]), "same number of rows"),
        (lambda: gfc(np.where(X > 0.5, np.nan, X), y), "X"),
        (lambda: greedy_descent(X[:6], y[:6], 0.0), "2 \\* n_folds"),
        (lambda: greedy_descent(X, y, f, eps=-1), "eps"),
        (lambda: greedy_descent(X, y, f[:3]), "f0"),
        (lambda: hyper_objective(X, y, f, np.ones(3), 1e-3, folds), "w"),
        (lambda: hyper_objective(X, y, f, np.ones(4), 0.0, folds), "lam"),
        (lambda: hyper_objective(X, y, f, np.ones(4), 1e-3, np.zeros(100, int)), "folds"),
        (lambda: rff_ridge_cv(X, y, measure="student"), "measure"),
        (lambda: rff_ridge_cv(X, y, bandwidths=[-1.0]), "bandwidths"),
        # frequencies omega_0 / 1e-300 overflow in X Omega^T
        (lambda: rff_ridge_cv(X, y, bandwidths=[1e-300]), "bandwidths has a value too small"),
        (lambda: gfc(X, y, eps=10**400), "eps must be finite"),
        (lambda: gfc(X, y, nu=10**400), "nu must be finite"),
        (lambda: fold_ids(10, 2, rng=-1), "rng must be a non-negative"),
        (lambda: ridge_cv(X, y, [0.0], folds), "nus"),
    ]
    for call, name in cases:
        with pytest.raises(ValueError, match=name):
            call()


# ------------------------------------------------------------- _parallel helper
def _square(x):
    return x * x


def test_map_tasks_keeps_order_on_every_executor():
    tasks = list(range(7))
    expected = [t * t for t in tasks]
    assert map_tasks(_square, tasks) == expected
    assert map_tasks(_square, tasks, executor=1) == expected
    with ThreadPoolExecutor(3) as ex:
        assert map_tasks(_square, tasks, executor=ex) == expected


def test_check_executor():
    assert check_executor(None) is None
    assert check_executor(3) == 3
    assert check_executor(-1) >= 1
    for bad in (0, -2, True, "x", 2.5):
        with pytest.raises(ValueError, match="executor"):
            check_executor(bad)


def test_spawn_seeds_match_spawn_streams():
    seeds = spawn_seeds(np.random.default_rng(5), 3)
    streams = spawn_streams(np.random.default_rng(5), 3)
    for s, g in zip(seeds, streams):
        assert np.random.default_rng(s).integers(1 << 30) == g.integers(1 << 30)


def test_amplitude_fit_runs_with_one_blas_thread(monkeypatch):
    """The amplitude fit's Grams and eigendecompositions (a few hundred columns)
    run at one BLAS thread, as the descents do: with OpenBLAS's threads they
    were 2-9x slower on the shared 2-core machine (no timing here)."""
    from threadpoolctl import threadpool_info

    from rflite._gfc import amplitudes  # where the amplitude fit reads gfc_design

    seen = []
    real = amplitudes.gfc_design

    def spy(X, weights):
        seen.append([i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"])
        return real(X, weights)

    monkeypatch.setattr(amplitudes, "gfc_design", spy)
    X, y = _gfc_problem()
    gfc(X, y, n_workers=2, max_steps=2, rng=0)
    assert seen and all(threads and set(threads) == {1} for threads in seen)


# ---------------------------------------------------------------- stopping="cv"
def _naive_steps_nu(X, y, weights, new, splits, nus):
    """(s, nu, amplitudes) by direct solves: the first s steps of every descent,
    every nu, each fold's ridge by ``np.linalg.solve``; the grid from the
    simplest model (fewer steps, then larger nu); the lowest mean fold error
    among the points whose error on every fold is at most ten times the mean
    prediction's (the "min" rule of rflite._core.selection.choose), first on ties."""
    n_old = len(weights) - sum(len(w) for w in new)
    step = np.concatenate([np.full(n_old, -1)] + [np.arange(len(w)) for w in new])
    base = np.array([np.mean((y[te] - y[tr].mean()) ** 2) for tr, te in splits])
    best = None
    for s in range(1, max(len(w) for w in new) + 1):
        W = weights[step < s]
        A = np.hstack([np.ones((len(y), 1)), np.cos(X @ W.T), np.sin(X @ W.T)])
        for nu in nus[::-1]:
            errs = []
            for tr, te in splits:
                a = np.linalg.solve(A[tr].T @ A[tr] + nu * np.eye(A.shape[1]), A[tr].T @ y[tr])
                errs.append(np.mean((A[te] @ a - y[te]) ** 2))
            if np.all(np.array(errs) <= 10 * base) and (best is None or np.mean(errs) < best[0]):
                best = (np.mean(errs), s, nu, W, A)
    _, s, nu, W, A = best
    return s, nu, W, np.linalg.solve(A.T @ A + nu * np.eye(A.shape[1]), A.T @ y)


def test_cv_stopping_matches_direct_solves():
    """``stopping="cv"``'s amplitude fit against the readable reference above:
    the same (steps, nu), kept spectra and amplitudes (rtol 1e-8), on spectra
    of two earlier ones and three descents of 4 / 2 / 3 steps."""
    from rflite.greedy import NU_GRID_ESTIMATOR, _amplitude_fit

    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, (90, 3))
    y = np.sin(2 * X[:, 0]) + X[:, 1] + 0.3 * rng.standard_normal(90)
    old = rng.standard_normal((2, 3))
    new = [rng.standard_normal((k, 3)) * (1 + np.arange(k))[:, None] for k in (4, 2, 3)]
    weights = np.vstack([old, *new])
    splits = [(np.setdiff1d(np.arange(90), te), te) for te in np.array_split(np.arange(90), 4)]
    out = _amplitude_fit(X, y, weights, new, None, None, splits, NU_GRID_ESTIMATOR, 0.0, "cv")
    s, nu, W, a = _naive_steps_nu(X, y, weights, new, splits, NU_GRID_ESTIMATOR)
    assert (out[7], out[3]) == (s, nu)
    assert_array_equal(out[0], W)
    assert_allclose(out[1], a, rtol=1e-8)
    assert out[6].shape == (4, NU_GRID_ESTIMATOR.size)  # the kept steps' fold errors
    # "eps" keeps every step, and says no steps were chosen
    eps = _amplitude_fit(X, y, weights, new, None, None, splits, NU_GRID_ESTIMATOR, 0.0)
    assert eps[0].shape == weights.shape and eps[7] is None


def test_regressor_cv_stopping_cuts_descents_back_and_eps_keeps_them():
    """On a noisy target with one relevant input the folds keep fewer steps than
    the descents made (``steps_``), and
    ``stopping="eps"`` is the paper's fit (``gfc`` with the estimator's settings)."""
    from rflite.greedy import GFC_INIT_SCALE, NU_GRID_ESTIMATOR
    from rflite.metropolis import _canonical_order

    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, (150, 5))
    y = X[:, 0] + 0.5 * rng.standard_normal(150)
    kw = dict(n_workers=2, max_steps=8, n_estimators=1, mean_guard=False, random_state=5)
    cut = GFCRegressor(**kw).fit(X, y)
    # the two descents made 6 steps together (eps), the folds kept the first of each
    assert isinstance(cut.steps_, int) and 1 <= cut.steps_ < cut.result_.n_constructed // 2
    assert cut.weights_.shape[0] <= 2 * cut.steps_
    assert cut.cv_results_["fold_test_mse"].shape == (5, NU_GRID_ESTIMATOR.size)
    full = GFCRegressor(stopping="eps", cv=None, **kw).fit(X, y)
    assert full.steps_ is None
    order = _canonical_order(X, y)
    ref = _gfc_in_units_of_y(X[order], y[order] - y.mean(), n_workers=2, max_steps=8,
                             nu_grid=NU_GRID_ESTIMATOR, init_scale=GFC_INIT_SCALE, rng=5)
    _assert_same(full.result_, ref)
    assert ref.steps is None and full.weights_.shape[0] > cut.weights_.shape[0]
    with pytest.raises(ValueError, match="stopping"):
        GFCRegressor(stopping="never").fit(X, y)
