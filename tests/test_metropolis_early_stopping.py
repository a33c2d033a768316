"""ARFF estimators' default early stopping and lam chosen on a validation split."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from rflite.metropolis import (
    LAM_GRID,
    PAPER_SETTINGS,
    ARFFClassifier,
    ARFFRegressor,
    Standardizer,
    arff,
)


def _noisy(m=200, d=5, noise=1.0, seed=0):
    """One informative input plus noise: the setting where the paper's chain fits noise."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, d))
    f = np.sin(X[:, 0])
    return X, f + noise * rng.standard_normal(m), f


def _reference_problem():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((120, 3))
    return X, np.sin(2 * X[:, 0]) + 0.3 * rng.standard_normal(120)


#: ``ARFFRegressor(6, n_iter=25, random_state=1)`` fitted to :func:`_reference_problem`
#: with the paper's algorithm, no early stopping and lam = 0.1 (saved numbers).
REF_COEF = np.array([
    -0.03490248942311853 - 0.18564834046724826j, 0.03715906861224777 - 0.08629639379513501j,
    0.05546746207801219 + 0.03189189654994295j, 0.04001203165220972 - 0.07108522337890973j,
    -0.06595349783597813 + 0.28390985431865534j, -0.04240911193215539 - 0.2158372009434038j])
REF_INTERCEPT = -0.06031635044411391
REF_FREQ_ROW0 = np.array([1.5757354692140761, 0.16227437301552133, 1.0522106906101634])


def test_paper_settings_reproduce_previous_behaviour():
    X, y = _reference_problem()
    model = ARFFRegressor(6, n_iter=25, random_state=1, **PAPER_SETTINGS).fit(X, y)
    # the numbers saved from the original code (rounding may differ on other BLAS builds)
    assert_allclose(model.coef_, REF_COEF, rtol=1e-10, atol=1e-13)
    assert_allclose(model.intercept_, REF_INTERCEPT, rtol=1e-12)
    assert_allclose(model.frequencies_[0], REF_FREQ_ROW0, rtol=1e-12)
    # and, bit for bit, Algorithms 1-3 by hand: standardise, arff(), fold back
    xs, ys = Standardizer.fit(X), Standardizer.fit(y)
    res = arff(xs.transform(X), ys.transform(y), n_features=6, n_iter=25, lam=0.1, rng=1)
    assert_array_equal(model.frequencies_, res.frequencies)
    assert_array_equal(model.coef_, res.amplitudes * ys.scale)
    assert model.n_iter_ == 25 and model.lam_ == 0.1 and model.validation_scores_ is None
    # lam="auto" without early stopping is the paper's 0.1
    same = ARFFRegressor(6, n_iter=25, early_stopping=False, random_state=1).fit(X, y)
    assert_array_equal(same.coef_, model.coef_)


def test_early_stopping_stops_on_noisy_data():
    X, y, _ = _noisy()
    model = ARFFRegressor(32, n_iter=400, random_state=0).fit(X, y)
    assert model.n_iter_ < 400
    assert model.best_iteration_ <= model.n_iter_
    scores = model.validation_scores_
    assert scores.shape == model.validation_iterations_.shape and np.all(np.isfinite(scores))
    assert model.validation_iterations_[0] == 0
    assert model.best_iteration_ in model.validation_iterations_
    # stopped n_iter_no_change checks after the best one
    k = int(np.flatnonzero(model.validation_iterations_ == model.best_iteration_)[0])
    assert scores.size - 1 - k == model.n_iter_no_change
    assert model.lam_ in LAM_GRID


def test_early_stopping_beats_the_paper_run_on_noisy_data():
    X, y, _ = _noisy(seed=1)
    Xt, _, ft = _noisy(m=2000, seed=2)
    es = ARFFRegressor(32, n_iter=300, random_state=0).fit(X, y)
    paper = ARFFRegressor(32, n_iter=300, random_state=0, **PAPER_SETTINGS).fit(X, y)
    err_es = np.mean((es.predict(Xt) - ft) ** 2)
    err_paper = np.mean((paper.predict(Xt) - ft) ** 2)
    assert err_es < 0.5 * err_paper
    assert err_es < np.var(ft)  # better than predicting the mean


def test_validation_error_of_kept_state_beats_the_last_state():
    # the kept iteration is the best checked one, not the last
    X, y, _ = _noisy(seed=3)
    model = ARFFRegressor(32, n_iter=300, random_state=0).fit(X, y)
    assert model.validation_scores_.min() <= model.validation_scores_[-1]
    k = int(np.argmin(model.validation_scores_))
    assert model.validation_iterations_[k] == model.best_iteration_


def test_fixed_lam_is_kept_and_fixed_method_chooses_lam():
    X, y, _ = _noisy(m=80)
    model = ARFFRegressor(16, n_iter=30, lam=0.05, random_state=0).fit(X, y)
    assert model.lam_ == 0.05
    fixed = ARFFRegressor(16, method="fixed", random_state=0).fit(X, y)
    assert fixed.lam_ in LAM_GRID and fixed.n_iter_ == 0


def test_row_order_does_not_matter():
    X, y, _ = _noisy(m=60)
    perm = np.random.default_rng(0).permutation(60)
    a = ARFFRegressor(8, n_iter=30, random_state=0).fit(X, y)
    b = ARFFRegressor(8, n_iter=30, random_state=0).fit(X[perm], y[perm])
    assert_array_equal(a.predict(X), b.predict(X))


def test_integer_weights_equal_repeated_rows_exactly():
    X, y, _ = _noisy(m=40)
    w = np.random.default_rng(1).integers(0, 3, 40)
    a = ARFFRegressor(8, n_iter=30, random_state=0).fit(X, y, sample_weight=w)
    b = ARFFRegressor(8, n_iter=30, random_state=0).fit(np.repeat(X, w, axis=0),
                                                        np.repeat(y, w))
    assert_array_equal(a.predict(X), b.predict(X))


@pytest.mark.parametrize("early_stopping", [True, False])
def test_verbose_prints_one_line_per_iteration(capsys, early_stopping):
    X, y, _ = _noisy(m=60)
    model = ARFFRegressor(8, n_iter=20, n_iter_no_change=100, early_stopping=early_stopping,
                          verbose=1, random_state=0).fit(X, y)
    err = capsys.readouterr().err.strip().splitlines()
    lines = [ln for ln in err if ln.startswith("[ARFFRegressor] iteration")]
    assert len(lines) == len(err)
    # early stopping also reports the constant start (iteration 0)
    assert len(lines) == model.n_iter_ + (1 if early_stopping else 0)
    assert lines[-1].startswith(f"[ARFFRegressor] iteration {model.n_iter_}/20")
    assert " s" in lines[-1]
    assert "train" in lines[-1]
    if early_stopping:
        assert "validation" in lines[-1]
    else:  # printing does not change the paper's run
        quiet = ARFFRegressor(8, n_iter=20, early_stopping=False, random_state=0).fit(X, y)
        assert_array_equal(quiet.coef_, model.coef_)
    assert ARFFRegressor(8, n_iter=5, random_state=0).fit(X, y) is not None
    assert capsys.readouterr().err == ""  # silent by default


def test_classifier_early_stopping():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((120, 2))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    clf = ARFFClassifier(16, n_iter=200, random_state=0).fit(X, y)
    assert clf.n_iter_ <= 200 and clf.lam_ in LAM_GRID
    assert clf.score(X, y) > 0.8


@pytest.mark.parametrize("kw, match", [
    (dict(validation_fraction=1.0), "validation_fraction"),
    (dict(validation_fraction=0.0), "validation_fraction"),
    (dict(n_iter_no_change=0), "n_iter_no_change"),
    (dict(tol=-1.0), "tol"),
    (dict(lam="best"), "lam"),
    (dict(early_stopping="yes"), "early_stopping"),
])
def test_bad_early_stopping_parameters(kw, match):
    X, y, _ = _noisy(m=30)
    with pytest.raises(ValueError, match=match):
        ARFFRegressor(4, n_iter=2, **kw).fit(X, y)
