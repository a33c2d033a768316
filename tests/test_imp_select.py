"""SHRIMP selection shares the q-only work between prune rates, bit for bit.

The shared paths, the hold-out grid of :func:`select_shrimp` and the fold
scores of :class:`SHRIMPCV` must equal one independent computation per grid
point exactly (``assert_array_equal``), not just closely.
"""

import warnings

import numpy as np
import pytest

from rflite._imp import select as _imp_select
from rflite._imp.factor import _MinNormSolver
from rflite.imp import (
    SHRIMPCV,
    SHRIMPRegressor,
    SHRIMPSelection,
    _fit_candidate,
    _shared_paths,
    select_shrimp,
    shrimp_path,
)

RATES = (0.15, 0.25, 0.35)


def _problem(m=80, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (m, d))
    y = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.01 * rng.standard_normal(m)
    return X, y


def _same_path(a, b):
    assert a.n_kept.tolist() == b.n_kept.tolist()
    assert a.solver == b.solver
    assert a.best_step == b.best_step
    for s, t in zip(a.supports, b.supports):
        np.testing.assert_array_equal(s, t)
    for s, t in zip(a.coefs, b.coefs):
        np.testing.assert_array_equal(s, t)
    np.testing.assert_array_equal(a.train_mse, b.train_mse)
    np.testing.assert_array_equal(a.val_mse, b.val_mse)


@pytest.mark.parametrize("method", ["magnitude", "random", "naive"])
@pytest.mark.parametrize("shape", [(30, 200), (30, 40)])
def test_shared_paths_equal_separate_paths(method, shape):
    rng = np.random.default_rng(1)
    A = rng.standard_normal(shape)
    y = A[:, :3] @ np.array([1.0, -2.0, 3.0])
    V = rng.standard_normal((10, shape[1]))
    yv = V[:, :3] @ np.array([1.0, -2.0, 3.0])
    shared = _shared_paths(A, y, RATES, A_val=V, y_val=yv, method=method,
                           rng=np.random.default_rng(5))
    for p, path in zip(RATES, shared):
        ref = shrimp_path(A, y, prune_rate=p, A_val=V, y_val=yv, method=method,
                          rng=np.random.default_rng(5))
        _same_path(path, ref)


def test_shared_paths_rank_deficient_start():
    # a rank-deficient wide matrix: the shared t = 0 state is the SVD route
    rng = np.random.default_rng(2)
    A = rng.standard_normal((25, 6)) @ rng.standard_normal((6, 150))
    y = A[:, 0] - A[:, 5]
    shared = _shared_paths(A, y, RATES)
    assert shared[0].solver[0] == "svd"
    for p, path in zip(RATES, shared):
        _same_path(path, shrimp_path(A, y, prune_rate=p))


def test_solver_copy_is_independent():
    rng = np.random.default_rng(3)
    At = rng.standard_normal((60, 20))
    y = rng.standard_normal(20)
    solver = _MinNormSolver(20)
    solver.solve(At, y)
    assert solver.mode == "gram"
    twin = solver.copy()
    G = solver.G.copy()
    twin.prune(np.arange(50), At[50:])
    np.testing.assert_array_equal(solver.G, G)  # the original is untouched
    assert twin.G is not solver.G


def _reference_grid(X, y, qs, rates, seed, **params):
    models = [[_fit_candidate((X, y, dict(q=q, prune_rate=p, random_state=seed, **params)))
               for p in rates] for q in qs]
    scores = np.array([[mod.validation_mse_ for mod in row] for row in models])
    best = None
    for row in models:
        for mod in row:
            if best is None or mod.validation_mse_ < best.validation_mse_:
                best = mod
    return scores, best


@pytest.mark.parametrize("params", [
    dict(n_features=150, refit="min_norm", subsets="all", fit_intercept=False),
    dict(n_features=120),
    dict(n_features=120, refit="ridge"),
])
def test_select_holdout_equals_per_point_fits(params):
    X, y = _problem()
    qs = (1, 2, 3)
    seed = int(np.random.default_rng(0).integers(0, 2**63 - 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sel = select_shrimp(X, y, qs=qs, prune_rates=RATES, cv="holdout", random_state=0,
                            **params)
        scores, best = _reference_grid(X, y, qs, RATES, seed, **params)
        np.testing.assert_array_equal(sel.val_mse, scores)
        assert (sel.q, sel.prune_rate) == (best.q, best.prune_rate)
        assert sel.model.best_step_ == best.best_step_
        np.testing.assert_array_equal(sel.model.support_, best.support_)
        np.testing.assert_array_equal(sel.model.coef_, best.coef_)
        assert sel.model.intercept_ == best.intercept_
        Xt, _ = _problem(40, seed=9)
        np.testing.assert_array_equal(sel.model.predict(Xt), best.predict(Xt))
    assert sel.model.get_params() == best.get_params()


@pytest.mark.slow(reason="starts a process pool")
def test_select_holdout_callback_and_executor():
    X, y = _problem(60, 3)
    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = select_shrimp(X, y, qs=(1, 2), prune_rates=RATES, n_features=80, cv="holdout",
                          random_state=1, callback=lambda q, p, v: seen.append((q, p, v)))
        b = select_shrimp(X, y, qs=(1, 2), prune_rates=RATES, n_features=80, cv="holdout",
                          random_state=1, executor=2)
    assert isinstance(a, SHRIMPSelection)
    assert [(q, p) for q, p, _ in seen] == [(q, p) for q in (1, 2) for p in RATES]
    np.testing.assert_array_equal(a.val_mse, b.val_mse)
    np.testing.assert_array_equal(a.model.coef_, b.model.coef_)


def test_fit_rates_2d_targets_equal_fits():
    X, y = _problem(70, 3)
    Y = np.column_stack([y, np.cos(X[:, 0])])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = SHRIMPRegressor(n_features=90, q=2, random_state=4)
        scores = est._fit_rates(X, Y, RATES)
        for p, s in zip(RATES, scores):
            ref = SHRIMPRegressor(n_features=90, q=2, prune_rate=p, random_state=4).fit(X, Y)
            assert s == ref.validation_mse_
        ref = SHRIMPRegressor(n_features=90, q=2, prune_rate=est.prune_rate,
                              random_state=4).fit(X, Y)
    np.testing.assert_array_equal(est.coef_, ref.coef_)


def test_cv_fold_scores_equal_per_rate():
    X, y = _problem(60, 3)
    cv = SHRIMPCV(n_features=60, qs=(1, 2), prune_rates=RATES, cv=3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cv.fit(X, y)
    fmaps = []
    from rflite.imp import _shrimp_map
    from rflite._core.random import spawn_streams

    for q, s in zip((1, 2), spawn_streams(np.random.default_rng(0), 2)):
        cv._n_weights = 60
        fmaps.append(_shrimp_map(cv, 3, q, s))
    Y = y[:, None]
    tr, te = np.arange(20, 60), np.arange(20)
    kw = dict(X=X, Y=Y, w=None, n_steps=None, min_features=1, schedule="paper",
              fit_intercept=True, refit="auto")
    together = _imp_select._cv_fold_scores(tr, te, fmaps=fmaps, rates=RATES, **kw)
    apart = np.concatenate([_imp_select._cv_fold_scores(tr, te, fmaps=[fm], rates=(p,), **kw)
                            for fm in fmaps for p in RATES])
    np.testing.assert_array_equal(together, apart)


def test_shrimpcv_results_with_non_finite_fold_errors_are_quiet():
    """Grid points with non-finite fold errors (housing has many) must not
    leak numpy's "invalid value encountered in subtract" from the
    ``cv_results_`` standard deviations: they are inf / nan quietly."""
    from rflite.datasets import load_uci
    from rflite.imp import SHRIMPCV

    b = load_uci("housing", rng=0)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="invalid value", category=RuntimeWarning)
        model = SHRIMPCV(random_state=0).fit(b.X_train, b.y_train)
    res = model.cv_results_
    S = np.stack([res[f"split{k}_test_mse"] for k in range(5)])
    bad = ~np.all(np.isfinite(S), axis=0)
    assert bad.any()  # the case this test is about
    assert np.all(np.isinf(res["mean_test_mse"][bad]))
    assert np.all(np.isfinite(res["std_test_mse"][~bad]))
    assert np.isfinite(res["mean_test_mse"][model.best_index_])
