"""The self-tuning estimators: HARFECV, SRFECV, RandomFeatureRidgeCV and the
automatic defaults of HARFERegressor, SRFERegressor and RandomFeatureRidge."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from rflite._core import folds as _cv
from rflite.bp import SRFECV, SRFERegressor, bpdn, bpdn_path
from rflite.htp import HARFECV, HARFERegressor, harfe, harfe_grid
from rflite.ridge import RandomFeatureRidge, RandomFeatureRidgeCV, row_folds, _ridge_fold_scores

sk_ms = pytest.importorskip("sklearn.model_selection")


def _data(m=60, d=3, seed=0, noise=0.1):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (m, d))
    y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + noise * rng.standard_normal(m)
    return X, y


# small, fast versions of each estimator (same code paths as the defaults)
CV_MAKERS = {
    "HARFECV": lambda **kw: HARFECV(n_features=120, ss=[5, 10], lams=[1e-2, 1e-4],
                                    random_state=0, **kw),
    "SRFECV": lambda **kw: SRFECV(n_features=120, random_state=0, **kw),
    "RandomFeatureRidgeCV": lambda **kw: RandomFeatureRidgeCV(n_features=120, random_state=0,
                                                              **kw),
}
DEFAULT_MAKERS = {
    "HARFERegressor": lambda **kw: HARFERegressor(n_features=150, random_state=0, **kw),
    "SRFERegressor": lambda **kw: SRFERegressor(n_features=150, random_state=0, **kw),
    "RandomFeatureRidge": lambda **kw: RandomFeatureRidge(n_features=150, random_state=0, **kw),
}
ALL_MAKERS = {**CV_MAKERS, **DEFAULT_MAKERS}
CHOSEN = {"HARFECV": ("s_", "lam_"), "SRFECV": ("eta_",), "RandomFeatureRidgeCV": ("lam_",),
          "HARFERegressor": ("s_", "lam_"), "SRFERegressor": ("eta_",),
          "RandomFeatureRidge": ("lam_",)}


def _chosen(name, est):
    return tuple(getattr(est, a) for a in CHOSEN[name])


# ------------------------------------------------------------------ cv argument
@pytest.mark.parametrize("name", list(CV_MAKERS))
def test_sklearn_kfold_gives_the_same_choice_as_ours(name):
    X, y = _data()
    a = CV_MAKERS[name](cv=sk_ms.KFold(5, shuffle=True, random_state=0)).fit(X, y)
    b = CV_MAKERS[name](cv=_cv.KFold(5, shuffle=True, random_state=0)).fit(X, y)
    assert _chosen(name, a) == _chosen(name, b)
    assert_allclose(a.cv_results_["mean_test_mse"], b.cv_results_["mean_test_mse"])
    c = CV_MAKERS[name](cv=5).fit(X, y)
    d = CV_MAKERS[name](cv=sk_ms.KFold(5)).fit(X, y)
    assert _chosen(name, c) == _chosen(name, d)
    assert_allclose(c.cv_results_["split4_test_mse"], d.cv_results_["split4_test_mse"])
    # an explicit list of (train, test) pairs, as scikit-learn's checks pass
    e = CV_MAKERS[name](cv=list(sk_ms.KFold(5).split(X))).fit(X, y)
    assert _chosen(name, e) == _chosen(name, c)


@pytest.mark.parametrize("name", list(CV_MAKERS))
def test_cv_results_and_refit(name):
    X, y = _data()
    est = CV_MAKERS[name]().fit(X, y)
    res = est.cv_results_
    n_grid = res["mean_test_mse"].size
    assert n_grid >= 2
    for key in ("std_test_mse", "se_test_mse", "rank_test_mse", "split0_test_mse"):
        assert res[key].shape == (n_grid,)
    best = int(np.argmin(res["mean_test_mse"]))
    assert res["rank_test_mse"][best] == 1
    # the final model is fitted on all rows: predictions and R^2
    assert est.predict(X).shape == y.shape
    assert est.score(X, y) > 0.5


@pytest.mark.parametrize("name", list(CV_MAKERS))
def test_one_standard_error_rule_picks_no_more_complex_point(name):
    X, y = _data(noise=0.3)
    a = CV_MAKERS[name](rule="min").fit(X, y)
    b = CV_MAKERS[name](rule="1se").fit(X, y)
    ia = int(np.argmin(a.cv_results_["mean_test_mse"]))
    mean, se = b.cv_results_["mean_test_mse"], b.cv_results_["se_test_mse"]
    ib = [i for i in range(mean.size) if mean[i] <= mean[ia] + se[ia]][0]
    assert _chosen(name, b) != () and ib <= ia


@pytest.mark.parametrize("name,bad,match", [
    ("HARFECV", dict(rule="max"), "rule"), ("SRFECV", dict(rule="max"), "rule"),
    ("RandomFeatureRidgeCV", dict(rule="max"), "rule"),
    ("HARFECV", dict(cv=1), "cv"), ("SRFECV", dict(cv="five"), "cv"),
    ("RandomFeatureRidgeCV", dict(cv=1), "cv"),
    ("HARFECV", dict(lams=[-1.0]), "lams"), ("RandomFeatureRidgeCV", dict(lams=[]), "lams"),
    ("SRFECV", dict(etas=[-1.0]), "etas"), ("SRFECV", dict(ss=[]), "ss"),
    ("HARFECV", dict(n_jobs=0), "^n_jobs"),
])
def test_bad_parameters_name_themselves(name, bad, match):
    X, y = _data(m=30)
    maker = {"HARFECV": lambda **kw: HARFECV(n_features=50, random_state=0, **kw),
             "SRFECV": lambda **kw: SRFECV(n_features=50, random_state=0, **kw),
             "RandomFeatureRidgeCV": lambda **kw: RandomFeatureRidgeCV(50, **kw)}[name]
    with pytest.raises(ValueError, match=match):
        maker(**bad).fit(X, y)


@pytest.mark.parametrize("est,match", [
    (HARFERegressor(50, s="many"), "s must"), (HARFERegressor(50, lam="big"), "lam must"),
    (SRFERegressor(50, eta="big"), "eta must"), (RandomFeatureRidge(50, lam="x"), "lam must"),
    (SRFERegressor(50, matrix_free=True), "matrix_free"),
])
def test_bad_auto_values(est, match):
    X, y = _data(m=30)
    with pytest.raises(ValueError, match=match):
        est.fit(X, y)


# ----------------------------------------------------------- conventions
@pytest.mark.parametrize("name", list(ALL_MAKERS))
def test_intercept_shift(name):
    X, y = _data()
    a = ALL_MAKERS[name]().fit(X, y)
    b = ALL_MAKERS[name]().fit(X, y + 1000.0)
    # eta's grid is relative to the standard deviation of y: equal to rounding
    assert _chosen(name, a) == pytest.approx(_chosen(name, b), rel=1e-12)
    assert_allclose(b.predict(X), a.predict(X) + 1000.0, rtol=1e-8)


@pytest.mark.parametrize("name", list(ALL_MAKERS))
def test_integer_weights_equal_repeated_rows_and_zero_weight_drops(name):
    X, y = _data(m=40)
    rng = np.random.default_rng(3)
    w = rng.integers(0, 3, X.shape[0]).astype(float)
    a = ALL_MAKERS[name]().fit(X, y, sample_weight=w)
    k = w.astype(int)
    b = ALL_MAKERS[name]().fit(np.repeat(X, k, axis=0), np.repeat(y, k))
    assert _chosen(name, a) == pytest.approx(_chosen(name, b), rel=1e-12)
    Xt, _ = _data(m=20, seed=9)
    assert_allclose(a.predict(Xt), b.predict(Xt), rtol=1e-8, atol=1e-8)
    # zero weight = the row dropped (repeats of the others in a different order too)
    keep = w > 0
    c = ALL_MAKERS[name]().fit(X[keep], y[keep], sample_weight=w[keep])
    assert_allclose(a.predict(Xt), c.predict(Xt), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name", list(ALL_MAKERS))
def test_two_d_y_equals_per_column_fits(name):
    X, y = _data()
    Y = np.column_stack([y, np.cos(3 * X[:, 2])])
    est = ALL_MAKERS[name]().fit(X, Y)
    P = est.predict(X)
    assert P.shape == Y.shape
    assert est.cv_results_["mean_test_mse"].shape[-1] == 2
    # each output is an independent fit with its own choice: the 1-d fit of its column
    for k in range(2):
        one = ALL_MAKERS[name]().fit(X, Y[:, k])
        for a in CHOSEN[name]:
            assert np.ravel(getattr(est, a))[k] == pytest.approx(getattr(one, a), rel=1e-12)
        assert_allclose(one.cv_results_["mean_test_mse"],
                        est.cv_results_["mean_test_mse"][:, k], rtol=1e-8)
        assert_allclose(P[:, k], one.predict(X), rtol=1e-6, atol=1e-8)


def test_auto_equals_explicit_values_it_chose():
    X, y = _data()
    for name, cls, keys in (("HARFERegressor", HARFERegressor, {"s_": "s", "lam_": "lam"}),
                            ("RandomFeatureRidge", RandomFeatureRidge, {"lam_": "lam", "scale_": "scale"})):
        a = DEFAULT_MAKERS[name]().fit(X, y)
        b = cls(n_features=150, random_state=0,
                **{v: getattr(a, k) for k, v in keys.items()}).fit(X, y)
        assert_allclose(a.predict(X), b.predict(X), rtol=1e-10)
        assert hasattr(a, "cv_results_") and not hasattr(b, "cv_results_")


def test_matrix_free_auto_choice_equals_dense():
    X, y = _data()
    a = HARFERegressor(n_features=80, random_state=0).fit(X, y + 5.0)
    b = HARFERegressor(n_features=80, matrix_free=True, random_state=0).fit(X, y + 5.0)
    assert (a.s_, a.lam_) == (b.s_, b.lam_)
    assert_allclose(a.cv_results_["mean_test_mse"], b.cv_results_["mean_test_mse"], rtol=1e-8)
    assert_allclose(a.predict(X), b.predict(X), rtol=1e-9)


@pytest.mark.slow(reason="starts a process pool")
def test_harfecv_two_jobs_equal_serial():
    X, y = _data()
    a = CV_MAKERS["HARFECV"](cv=3).fit(X, y)
    b = CV_MAKERS["HARFECV"](cv=3, n_jobs=2).fit(X, y)
    assert_allclose(a.cv_results_["mean_test_mse"], b.cv_results_["mean_test_mse"])


# ----------------------------------------------------------------- verbose
@pytest.mark.parametrize("name", list(ALL_MAKERS))
def test_verbose_prints_progress_to_stderr_only_when_asked(name, capsys):
    X, y = _data(m=30)
    ALL_MAKERS[name]().fit(X, y)
    out = capsys.readouterr()
    assert out.err == "" and out.out == ""
    ALL_MAKERS[name](verbose=1).fit(X, y)
    out = capsys.readouterr()
    assert out.out == ""
    assert "chose" in out.err and out.err.count("\n") >= 2


# --------------------------------------------------------------- path and grid kernels
def test_bpdn_path_equals_bpdn_at_every_sigma():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((30, 80))
    y = A[:, :3] @ [1.0, -2.0, 0.5] + 0.1 * rng.standard_normal(30)
    sigmas = [100.0, 3.0, 1.0, 0.3, 0.05]
    path = bpdn_path(A, y, sigmas)
    assert path.reached.all()
    for k, s in enumerate(sigmas):
        ref = bpdn(A, y, s)
        assert_allclose(path.coefs[:, k], ref.coef, atol=1e-8)
        assert np.linalg.norm(A @ path.coefs[:, k] - y) <= s * (1 + 1e-8)


def test_bpdn_path_unreachable_and_callback():
    rng = np.random.default_rng(1)
    A = rng.standard_normal((40, 5))  # tall: least-squares residual > 0
    y = rng.standard_normal(40)
    ls = np.linalg.lstsq(A, y, rcond=None)[0]
    r_ls = np.linalg.norm(A @ ls - y)
    path = bpdn_path(A, y, [0.5 * r_ls, 1.01 * r_ls])
    assert path.reached.tolist() == [False, True]
    assert_allclose(path.coefs[:, 0], ls, atol=1e-8)  # the path's end: least squares
    seen = []
    stopped = bpdn_path(A, y, [np.linalg.norm(y) * f for f in (0.99, 0.98, 0.97)],
                        callback=lambda k, c: seen.append(k) or True)
    assert seen == [0] and stopped.reached.tolist() == [True, False, False]
    with pytest.raises(ValueError, match="sigmas"):
        bpdn_path(A, y, [-1.0])


def test_harfe_grid_warm_starts_and_first_point_is_a_cold_fit():
    rng = np.random.default_rng(2)
    A = rng.standard_normal((40, 100)) / np.sqrt(40)
    y = A[:, [1, 5, 9]] @ [1.0, 2.0, -1.0] + 0.01 * rng.standard_normal(40)
    points = [(5, 1e-2), (5, 1e-3), (5, 1e-4), (10, 1e-3)]
    res = harfe_grid(A, y[:, None], 40, points, mu=0.1, max_iter=50, tol=1e-10)[0]
    cold = harfe(A, y, s=5, lam=1e-2)
    assert_allclose(res[0].coef, cold.coef)
    for (s, lam), r in zip(points, res):
        assert np.count_nonzero(r.coef) <= s
        warm = harfe(A, y, s=s, lam=lam, c0=res[points.index((s, lam)) - 1].coef) \
            if points.index((s, lam)) else cold
        assert_allclose(r.coef, warm.coef)
    # the warm start is why later points take few iterations
    assert res[2].n_iter <= cold.n_iter


def test_ridge_fold_scores_match_a_numpy_reference():
    X, y = _data(m=40)
    rng = np.random.default_rng(0)
    A = rng.standard_normal((40, 25))
    Y = y[:, None]
    w = rng.uniform(0.5, 2.0, 40)
    train, test = np.arange(30), np.arange(30, 40)
    lams = [1.0, 1e-2, 1e-4]
    for n_cols in (25, 50):  # primal (N <= m) and dual (N > m) eigendecompositions
        B = A if n_cols == 25 else np.hstack([A, A ** 2])
        got = _ridge_fold_scores(train, test, B, Y, w, lams, True)
        for lam, g in zip(lams, got):
            wt = w[train]
            mu = wt @ B[train] / wt.sum()
            ym = wt @ y[train] / wt.sum()
            Bc = (B[train] - mu) * np.sqrt(wt)[:, None]
            yc = (y[train] - ym) * np.sqrt(wt)
            c = np.linalg.solve(Bc.T @ Bc + lam * wt.sum() * np.eye(B.shape[1]), Bc.T @ yc)
            pred = (B[test] - mu) @ c + ym
            ref = np.dot(w[test], (pred - y[test]) ** 2) / w[test].sum()
            assert g == pytest.approx(ref, rel=1e-8)


def test_row_folds_follow_distinct_rows():
    X, _ = _data(m=30)
    lab = row_folds(X, 5, 0)
    assert set(lab) == set(range(5)) and np.bincount(lab).min() >= 5
    perm = np.random.default_rng(1).permutation(30)
    assert_array_equal(row_folds(X[perm], 5, 0), lab[perm])
    rep = np.repeat(np.arange(30), 3)
    assert_array_equal(row_folds(X[rep], 5, 0), lab[rep])


def test_srfe_fold_path_stops_at_the_first_point_past_the_stop_factor():
    """A fold's homotopy path ends at the first eta whose validation MSE exceeds
    PATH_STOP_FACTOR x the best so far (PATH_PATIENCE = 1): every later point is
    unreached (inf).  With the former patience of 2 one more, and the costliest,
    point was computed on every fold (Friedman-1 1500 x 20: 23 s against 7 s)."""
    from rflite.bp import PATH_PATIENCE, PATH_STOP_FACTOR, SRFECV
    from rflite.datasets import make_friedman1

    assert PATH_PATIENCE == 1
    X, y = make_friedman1(300, d=10, noise=1.0, rng=0)
    model = SRFECV(cv=3, random_state=0).fit(X, y)
    for k in range(3):
        err = model.cv_results_[f"split{k}_test_mse"]
        reached = np.isfinite(err)
        last = int(np.flatnonzero(reached)[-1])
        assert reached[:last + 1].all() and not reached[last + 1:].any()
        assert err[last] > PATH_STOP_FACTOR * err[:last].min()
        best = np.minimum.accumulate(err[:last])
        assert np.all(err[1:last] <= PATH_STOP_FACTOR * best[:-1])  # no earlier stop
