"""The defaults' automatic choices against the training mean (rflite._core.selection).

A default estimator chooses its regularisation from the data and then asks
whether the chosen model beats predicting the training mean
(:func:`rflite._core.selection.beats_mean`, a paired rule with a standard
error); on few rows the whole fit is cross-validated against the mean
(:func:`rflite._core.selection.nested_loses_to_mean`).  On pure noise the
defaults must return the mean, on an outlying target they must do no worse
than the mean, and on a clear signal they must keep a model.
"""

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose

from rflite._core.selection import (AutoChoice, MIN_HOLDOUT_ROWS, beats_mean, choose,
                                    paired_difference)
from rflite.bp import SRFERegressor
from rflite.greedy import GFCRegressor
from rflite.htp import HARFERegressor
from rflite.imp import SHRIMPRegressor
from rflite.metropolis import ARFFRegressor
from rflite.ridge import RandomFeatureRidge, RandomFeatureRidgeCV

# the defaults, made cheaper where the dictionary size does not matter to the choice
DEFAULTS = {
    "ridge": lambda seed: RandomFeatureRidge(n_features=200, random_state=seed),
    "harfe": lambda seed: HARFERegressor(n_features=200, random_state=seed),
    "shrimp": lambda seed: SHRIMPRegressor(random_state=seed),
    "srfe": lambda seed: SRFERegressor(n_features=200, random_state=seed),
    "arff": lambda seed: ARFFRegressor(n_features=50, n_iter=100, random_state=seed),
    "gfc": lambda seed: GFCRegressor(max_steps=5, random_state=seed),
}


def noise(n, seed, n_test=300):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, (n, 3))
    return X, rng.standard_normal(n), rng.uniform(-1.0, 1.0, (n_test, 3))


def quiet_fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y)


# ------------------------------------------------------------------ the rule
def test_paired_difference_is_the_usual_standard_error_and_integer_weights_repeat_rows():
    rng = np.random.default_rng(0)
    a, b = rng.random(12), rng.random(12)
    d = a - b
    mu, se = paired_difference(a, b)
    assert_allclose([mu, se], [d.mean(), d.std(ddof=1) / np.sqrt(d.size)], rtol=1e-12)
    # a row of integer weight k counts as its k copies once identical rows are
    # merged, and a constant factor on the weights changes nothing
    w = np.array([1.0, 2.0, 3.0] * 4)
    rep = np.repeat(np.arange(12), w.astype(int))
    weighted = paired_difference(a, b, w, np.arange(12))
    assert_allclose(paired_difference(a[rep], b[rep], None, rep), weighted, rtol=1e-12)
    assert_allclose(paired_difference(a, b, 0.01 * w), weighted, rtol=1e-12)
    # Kish's effective count: weights summing to 1 are not one sample
    n = w.sum() ** 2 / (w @ w)
    v = np.average((d - np.average(d, weights=w)) ** 2, weights=w)
    assert_allclose(weighted[1], np.sqrt(v / (n - 1)), rtol=1e-12)
    assert np.isfinite(paired_difference(a, b, w / w.sum())[1])
    # one sample: no standard error, and the mean is kept
    assert paired_difference([0.0], [1.0])[1] == np.inf
    assert not beats_mean([0.0], [1.0])
    assert paired_difference([np.inf], [1.0]) == (np.inf, np.inf)


def test_beats_mean_needs_a_margin_of_one_standard_error():
    base = np.ones(20)
    assert beats_mean(np.full(20, 0.5), base)  # the same gain on every row
    rng = np.random.default_rng(1)
    # a mean gain of 0.1 against a standard error near 0.45
    assert not beats_mean(base - 0.1 + 2.0 * rng.standard_normal(20), base)


def test_choose_against_mean_on_folds():
    scores = np.array([[0.5, 0.9], [0.6, 1.0], [0.4, 0.8]])
    base = np.array([1.0, 1.1, 0.9])
    assert not choose(scores, baseline=base, against_mean=True).use_mean
    assert choose(scores, baseline=np.array([0.5, 0.5, 0.5]), against_mean=True).use_mean
    assert not choose(scores, baseline=np.array([0.5, 0.5, 0.5])).use_mean  # not asked
    with pytest.raises(ValueError, match="baseline"):
        choose(scores, against_mean=True)


def test_auto_choice_uses_all_folds_when_its_hold_out_is_small():
    X = np.random.default_rng(2).uniform(size=(60, 2))
    splits = AutoChoice()._splits(X, None, np.random.default_rng(0))
    assert len(splits) == 5
    assert sorted(np.concatenate([te for _, te in splits]).tolist()) == list(range(60))
    big = np.random.default_rng(3).uniform(size=(5 * MIN_HOLDOUT_ROWS, 2))
    assert len(AutoChoice()._splits(big, None, np.random.default_rng(0))) == 1


# -------------------------------------------------------- the estimators
@pytest.mark.parametrize("name", ["ridge", "harfe", "shrimp", "srfe"])
def test_default_is_the_mean_on_pure_noise(name):
    for seed in range(3):
        X, y, Xt = noise(40, seed)
        est = quiet_fit(DEFAULTS[name](seed), X, y)
        assert_allclose(est.predict(Xt), np.full(len(Xt), y.mean()), rtol=1e-9, atol=1e-12,
                        err_msg=f"{name}, seed {seed}")


@pytest.mark.slow(reason="ARFF's and GFC's fits with the nested check, a few seconds "
                         "for three seeds")
@pytest.mark.parametrize("name", ["arff", "gfc"])
def test_default_is_the_mean_on_pure_noise_slow(name):
    test_default_is_the_mean_on_pure_noise(name)


@pytest.mark.parametrize("name", ["ridge", "harfe", "shrimp", "srfe", "arff", "gfc"])
def test_default_is_no_worse_than_the_mean_with_an_outlying_target(name):
    X, y, Xt = noise(40, 0)
    y[20] = 1e3
    yt = np.random.default_rng(9).standard_normal(len(Xt))
    est = quiet_fit(DEFAULTS[name](0), X, y)
    mse = np.mean((est.predict(Xt) - yt) ** 2)
    assert mse <= np.mean((y.mean() - yt) ** 2) * (1 + 1e-9)


@pytest.mark.parametrize("name", ["ridge", "harfe", "shrimp", "srfe", "gfc"])
def test_default_keeps_a_clear_signal_on_few_rows(name):
    rng = np.random.default_rng(5)
    X = rng.uniform(-1.0, 1.0, (60, 3))
    y = np.sin(3 * X[:, 0]) + 0.1 * rng.standard_normal(60)
    est = quiet_fit(DEFAULTS[name](0), X, y)
    Xt = rng.uniform(-1.0, 1.0, (300, 3))
    yt = np.sin(3 * Xt[:, 0])
    assert np.mean((est.predict(Xt) - yt) ** 2) < 0.2 * np.var(yt)
    assert est.coef_.size > 0


def test_mean_model_attribute_and_the_cv_estimator_unchanged():
    X, y, _ = noise(40, 1)
    est = quiet_fit(RandomFeatureRidge(n_features=200, random_state=1), X, y)
    assert est.mean_model_ is True and est.coef_.size == 0
    assert_allclose(est.intercept_, y.mean())
    # RandomFeatureRidgeCV keeps its choice whatever the mean scores
    cv = quiet_fit(RandomFeatureRidgeCV(n_features=200, random_state=1), X, y)
    assert cv.mean_model_ is False and cv.coef_.size > 0
    # a 2-d y: one decision per output
    rng = np.random.default_rng(3)
    Y = np.column_stack([y, np.sin(3 * X[:, 0]) + 0.05 * rng.standard_normal(40)])
    two = quiet_fit(RandomFeatureRidge(n_features=200, random_state=1), X, Y)
    assert two.mean_model_.tolist() == [True, False]
    assert_allclose(two.coef_[:, 0], 0.0)


def test_paper_settings_are_not_checked():
    """Explicit parameters (and SHRIMP's refit="min_norm") fit as before: no mean."""
    X, y, _ = noise(40, 2)
    fixed = quiet_fit(RandomFeatureRidge(n_features=200, lam=1e-3, random_state=0), X, y)
    assert fixed.mean_model_ is False and fixed.coef_.size > 0
    paper = quiet_fit(SHRIMPRegressor(n_features=300, q=1, refit="min_norm",
                                      random_state=0), X, y)
    assert paper.refit_ == "min_norm" and paper.coef_.size > 0
