"""GFCRegressor's self-tuning defaults: small samples, cv, verbose, weights."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from rflite._core.folds import KFold
from rflite.datasets import make_friedman_gfc
from rflite.greedy import NU_GRID_ESTIMATOR, GFCRegressor, gfc


def _data(m, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, d))
    return X, np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.standard_normal(m)


def test_gfc_function_unchanged():
    """gfc() with its defaults is unaffected by the estimator's self-tuning (saved numbers)."""
    X, y = make_friedman_gfc(400, rng=3)
    res = gfc(X, y, n_workers=3, max_steps=3, rng=11)
    assert res.weights.shape == (9, 10)
    assert_allclose(res.weights[0, :3], [-1.0018522876035945, -0.8919096855369394,
                                         0.03379150036580804], rtol=1e-8)
    assert_allclose(res.coef_cos[:3], [-0.7095128033119503, 0.05657978475681896,
                                       0.3058561234584561], rtol=1e-8)
    assert res.nu == pytest.approx(0.1668100537200059, rel=1e-12)
    assert res.intercept == pytest.approx(11.370075198731444, rel=1e-10)
    assert res.cv_mse is None


@pytest.mark.parametrize("m", [10, 15, 20, 30])
def test_small_samples_fit(m):
    X, y = _data(m)
    model = GFCRegressor(random_state=0).fit(X, y)
    assert model.n_workers_ == 1
    assert 1 <= model.max_steps_ <= max(1, m // 2)
    pred = model.predict(X)
    assert pred.shape == (m,) and np.all(np.isfinite(pred))
    assert model.cv_results_["fold_test_mse"].shape == (5, NU_GRID_ESTIMATOR.size)


def test_small_sample_gfc_function_shrinks_folds():
    X, y = _data(12)
    res = gfc(X, y, n_workers=2, max_steps=2, rng=0)  # 6 rows per descent, 3 folds
    assert res.weights.shape[1] == 3
    with pytest.raises(ValueError, match="subsample"):
        gfc(X, y, n_workers=12, rng=0)  # one row per descent


def test_one_sample_is_refused():
    with pytest.raises(ValueError, match="n_samples=1"):
        GFCRegressor().fit(np.ones((1, 2)), [1.0])


def test_large_samples_keep_the_paper_workers_and_steps():
    X, y = _data(260)
    model = GFCRegressor(max_steps=2, random_state=0).fit(X, y)
    assert model.n_workers_ == 5 and model.max_steps_ == 2


def test_sklearn_kfold_gives_the_same_choice():
    from sklearn.model_selection import KFold as SKFold

    X, y = _data(80)
    kw = dict(max_steps=2, random_state=0)
    ours = GFCRegressor(cv=KFold(5, shuffle=True, random_state=0), **kw).fit(X, y)
    theirs = GFCRegressor(cv=SKFold(5, shuffle=True, random_state=0), **kw).fit(X, y)
    assert ours.nu_ == theirs.nu_
    assert_array_equal(ours.cv_results_["fold_test_mse"], theirs.cv_results_["fold_test_mse"])
    assert_array_equal(ours.predict(X), theirs.predict(X))
    five = GFCRegressor(cv=5, **kw).fit(X, y)
    sk5 = GFCRegressor(cv=SKFold(5), **kw).fit(X, y)
    assert five.nu_ == sk5.nu_
    assert_array_equal(five.cv_results_["mean_test_mse"], sk5.cv_results_["mean_test_mse"])


def test_cv_results_and_choice():
    X, y = _data(100)
    model = GFCRegressor(max_steps=3, random_state=0).fit(X, y)
    cvr = model.cv_results_
    assert_array_equal(cvr["nu"], NU_GRID_ESTIMATOR)
    # cv_results_ are the first fit's of the bag; nu_ has every fit's choice
    assert model.nu_[0] == NU_GRID_ESTIMATOR[np.argmin(cvr["mean_test_mse"])]
    assert model.nu_ == tuple(r.nu for r in model.results_) and len(model.nu_) == 5
    assert_allclose(cvr["mean_test_mse"], cvr["fold_test_mse"].mean(axis=0))
    assert GFCRegressor(nu=0.5, max_steps=1, random_state=0).fit(X, y).cv_results_ is None


def test_integer_weights_equal_repeated_rows_and_row_order_is_irrelevant():
    X, y = _data(40)
    w = np.random.default_rng(2).integers(0, 3, 40)
    kw = dict(max_steps=2, cv=3, random_state=0)
    a = GFCRegressor(**kw).fit(X, y, sample_weight=w)
    # the same folds for nu: each given row's copies stay in its fold
    owner = np.repeat(np.arange(40), w)
    splits = [(np.flatnonzero(np.isin(owner, tr)), np.flatnonzero(np.isin(owner, te)))
              for tr, te in KFold(3).split(X)]
    b = GFCRegressor(**{**kw, "cv": splits}).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    assert_array_equal(a.predict(X), b.predict(X))
    perm = np.random.default_rng(3).permutation(40)
    c = GFCRegressor(max_steps=2, cv=None, random_state=0).fit(X[perm], y[perm])
    d = GFCRegressor(max_steps=2, cv=None, random_state=0).fit(X, y)
    assert_array_equal(c.predict(X), d.predict(X))


def test_verbose_prints_one_line_per_step(capsys):
    X, y = _data(120)
    model = GFCRegressor(max_steps=3, verbose=1, random_state=0).fit(X, y)
    err = capsys.readouterr().err.strip().splitlines()
    steps = [ln for ln in err if " step " in ln]
    # one per constructed feature of every fit of the bag
    assert len(steps) == sum(r.n_constructed for r in model.results_)
    assert all(ln.startswith("[GFC] fit ") and " worker " in ln and "train" in ln
               and "validation" in ln for ln in steps)
    passes = [ln for ln in err if " pass 1/1" in ln]
    # one per fit of the bag, labelled with the fit
    assert [ln.split()[2] for ln in passes] == [f"{j}/5:" for j in range(1, 6)]
    assert all("nu" in ln for ln in passes)
    GFCRegressor(max_steps=1, random_state=0).fit(X, y)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("cv, match", [(1, "cv"), ("five", "cv"), ([(np.arange(3), [])], "cv")])
def test_bad_cv(cv, match):
    X, y = _data(30)
    with pytest.raises(ValueError, match=match):
        GFCRegressor(cv=cv, max_steps=1).fit(X, y)
