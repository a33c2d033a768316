"""scikit-learn conventions shared by every rflite estimator.

Each test runs over all regressors with small settings; what a method cannot
promise exactly (ARFF's joint multi-output fit, integer-only weights of the
methods with internal randomness, SHRIMP's split over distinct rows) is
tested for what its docstring promises instead.
"""

import copy
import os
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest

from rflite._core.exceptions import EffectiveFeaturesWarning, QClippedWarning
from rflite._base import FeatureNamesWarning
from rflite.bp import SRFERegressor
from rflite.greedy import GFCRegressor
from rflite.htp import HARFERegressor
from rflite.imp import SHRIMPRegressor
from rflite.metropolis import ARFFClassifier, ARFFRegressor
from rflite.ridge import RandomFeatureRidge

REGRESSORS = {
    "ridge": lambda: RandomFeatureRidge(n_features=40, random_state=0),
    "harfe": lambda: HARFERegressor(n_features=40, s=8, q=1, random_state=0),
    "srfe": lambda: SRFERegressor(n_features=40, eta=0.05, random_state=0),
    "shrimp": lambda: SHRIMPRegressor(n_features=12, q=1, random_state=0),
    "arff": lambda: ARFFRegressor(8, n_iter=10, random_state=0),
    "gfc": lambda: GFCRegressor(n_workers=2, max_steps=1, n_folds=2, random_state=0),
}
#: methods that scale rows by sqrt(w) (weights may be any non-negative reals)
ROW_SCALED = {"ridge", "harfe", "srfe", "shrimp"}
#: methods that fit each output independently (ARFF shares its frequencies)
PER_OUTPUT = {"ridge", "harfe", "srfe", "shrimp", "gfc"}


def _data(m=50, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(m, d))
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, -1] ** 2 + 0.05 * rng.normal(size=m)
    return X, y


@pytest.fixture(params=list(REGRESSORS))
def name(request):
    return request.param


def test_intercept_recovered(name):
    X, y = _data()
    a = REGRESSORS[name]().fit(X, y).predict(X)
    b = REGRESSORS[name]().fit(X, y + 1000.0).predict(X)
    np.testing.assert_allclose(b, a + 1000.0, rtol=1e-8)
    # and the model does have an intercept (not fixed at 0)
    assert abs(REGRESSORS[name]().fit(X, y + 1000.0).intercept_) > 100


def test_no_intercept_is_the_old_model():
    X, y = _data()
    model = RandomFeatureRidge(n_features=40, fit_intercept=False, random_state=0).fit(X, y)
    assert model.intercept_ == 0.0


def _int_weights(m, seed=1):
    w = np.random.default_rng(seed).integers(0, 4, size=m).astype(float)
    w[:3] = [0.0, 2.0, 3.0]  # at least one dropped and two repeated rows
    return w


def test_integer_weights_equal_repeated_rows(name):
    X, y = _data()
    w = _int_weights(len(y))
    k = w.astype(int)
    a = REGRESSORS[name]().fit(X, y, sample_weight=w).predict(X)
    b = REGRESSORS[name]().fit(np.repeat(X, k, axis=0), np.repeat(y, k)).predict(X)
    np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-8 * np.abs(b).max())


def test_zero_weight_drops_rows(name):
    X, y = _data()
    w = np.ones(len(y))
    w[::5] = 0.0
    a = REGRESSORS[name]().fit(X, y, sample_weight=w).predict(X)
    b = REGRESSORS[name]().fit(X[w > 0], y[w > 0]).predict(X)
    np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-8 * np.abs(b).max())


@pytest.mark.parametrize("name", sorted(ROW_SCALED))
def test_real_weights_are_scale_invariant(name):
    # the model depends on the relative weights only, for non-integer weights too
    X, y = _data()
    w = np.random.default_rng(2).uniform(0.1, 2.0, size=len(y))
    est = REGRESSORS[name]()
    a = est.fit(X, y, sample_weight=w).predict(X)
    b = est.fit(X, y, sample_weight=3.7 * w).predict(X)
    # the fits see the same relative weights, bit for bit
    np.testing.assert_array_equal(a, b)


def test_relative_weights_remove_the_last_bits_of_a_factor():
    from rflite._core.validation import relative_weights

    w = np.random.default_rng(4).uniform(0.5, 2.0, 1000)
    for c in (2.0, 3.7, 0.1, 1e-300 / 2.0 ** -1000):
        np.testing.assert_array_equal(relative_weights(c * w), relative_weights(w))
    k = np.array([0.0, 1.0, 2.0, 3.0, 7.0])
    np.testing.assert_array_equal(relative_weights(k), k)  # integers with a 1: unchanged
    np.testing.assert_allclose(relative_weights(w), w / w.min(), rtol=2.0 ** -30)


def test_shrimp_default_with_real_weights_is_scale_free():
    # the pruning path's choices turn on near-ties: before the weights were
    # made relative, 2 * w (sqrt(2) rounding on every row) chose another step
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (300, 5))
    y = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(300)
    w = rng.uniform(0.5, 2.0, 300)
    a = SHRIMPRegressor(random_state=0).fit(X, y, sample_weight=w)
    b = SHRIMPRegressor(random_state=0).fit(X, y, sample_weight=2.0 * w)
    assert a.best_step_ == b.best_step_
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


@pytest.mark.parametrize("factor", [2.0, 0.5, 0.1])
def test_constant_factor_on_weights_changes_nothing(name, factor):
    # c * w and w: the same model for every estimator, the repeating ones too
    X, y = _data()
    w = _int_weights(len(y))
    a = REGRESSORS[name]().fit(X, y, sample_weight=w).predict(X)
    b = REGRESSORS[name]().fit(X, y, sample_weight=factor * w).predict(X)
    rtol = 1e-5 if name == "shrimp" else 1e-8
    np.testing.assert_allclose(b, a, rtol=rtol, atol=rtol * np.abs(a).max())


@pytest.mark.parametrize("make", [
    lambda: HARFERegressor(n_features=60, s=8, lam=1e-2, q=1, random_state=0),
    lambda: HARFERegressor(n_features=60, q=1, random_state=0),
], ids=["explicit", "auto"])
def test_harfe_counts_distinct_rows(make):
    # the penalty m * lam and the s fractions count distinct rows: doubling every
    # weight, repeating every row twice and the plain fit are one model
    X, y = _data()
    plain = make().fit(X, y)
    doubled = make().fit(X, y, sample_weight=np.full(len(y), 2.0))
    copies = make().fit(np.repeat(X, 2, axis=0), np.repeat(y, 2))
    for other in (doubled, copies):
        assert other.s_ == plain.s_ and other.lam_ == pytest.approx(plain.lam_, rel=1e-12)
        np.testing.assert_allclose(other.predict(X), plain.predict(X), rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("name", ["arff", "gfc"])
def test_weights_in_no_integer_proportion_refused_where_rows_are_repeated(name):
    X, y = _data()
    w = np.random.default_rng(3).uniform(0.5, 2.0, size=len(y))
    with pytest.raises(ValueError, match="sample_weight.*integer proportion"):
        REGRESSORS[name]().fit(X, y, sample_weight=w)


@pytest.mark.parametrize("bad, match", [
    (np.ones(3), "sample_weight"),
    (-np.ones(50), "sample_weight"),
    (np.full(50, np.nan), "sample_weight"),
    (np.zeros(50), "sample_weight"),
])
def test_sample_weight_validated(bad, match):
    X, y = _data()
    with pytest.raises(ValueError, match=match):
        RandomFeatureRidge(n_features=10).fit(X, y, sample_weight=bad)


def test_two_d_y(name):
    X, y = _data()
    Y = np.c_[y, np.cos(3 * X[:, -1])]
    P = REGRESSORS[name]().fit(X, Y).predict(X)
    assert P.shape == (len(y), 2)
    one = REGRESSORS[name]().fit(X, y).predict(X)
    assert one.shape == (len(y),)
    if name in PER_OUTPUT:
        # SHRIMP's minimum-norm interpolants are ill-conditioned: its refit on
        # the union of the outputs' columns rounds differently (~1e-7 relative)
        rtol = 1e-5 if name == "shrimp" else 1e-8
        for k in range(2):
            pk = REGRESSORS[name]().fit(X, Y[:, k]).predict(X)
            np.testing.assert_allclose(P[:, k], pk, rtol=rtol, atol=rtol * np.abs(pk).max())
    else:
        # ARFF: one joint fit (shared frequencies); each output still fits its column
        model = REGRESSORS[name]().fit(X, Y)
        assert model.coef_.shape[1] == 2


def test_union_support_layout(name):
    X, y = _data()
    Y = np.c_[y, np.cos(3 * X[:, -1])]
    model = REGRESSORS[name]().fit(X, Y)
    assert model.coef_.shape == (model.support_.size, 2)
    assert np.all(np.diff(model.support_) > 0)  # each kept column evaluated once


def test_q_clipped(name):
    if name in ("arff", "gfc"):
        pytest.skip("no q parameter")
    X, y = _data(d=1)
    est = REGRESSORS[name]().set_params(q=2)
    with pytest.warns(QClippedWarning, match="q=2"):
        est.fit(X, y)
    assert est.q_ == 1 and est.q == 2


def test_shrimp_effective_features_warned():
    X, y = _data(d=3)
    est = SHRIMPRegressor(n_features=10, q=2, subsets="all", random_state=0)
    with pytest.warns(EffectiveFeaturesWarning, match="n_features=10"):
        est.fit(X, y)
    assert est.n_features_ == 9  # C(3, 2) = 3 subsets x (10 // 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", EffectiveFeaturesWarning)
        SHRIMPRegressor(n_features=9, q=2, subsets="all", random_state=0).fit(X, y)


def test_repr_shows_changed_parameters_only():
    assert repr(HARFERegressor()) == "HARFERegressor()"
    assert repr(HARFERegressor(500, lam=0.1, random_state=3)) == \
        "HARFERegressor(n_features=500, lam=0.1, random_state=3)"
    assert repr(ARFFRegressor(8, fit_intercept=False)) == \
        "ARFFRegressor(n_features=8, fit_intercept=False)"
    assert repr(GFCRegressor(max_steps=1)) == "GFCRegressor(max_steps=1)"


def test_warning_classes_subclass_standard_ones():
    from rflite._core.cache import NumbaCacheWarning
    from rflite._core.validation import DataConversionWarning
    from rflite._core.linalg import IllConditionedWarning
    from rflite.bp import SigmaUnreachableWarning
    from rflite.metropolis import ParallelFallbackWarning

    for cls in (NumbaCacheWarning, DataConversionWarning, IllConditionedWarning,
                SigmaUnreachableWarning, ParallelFallbackWarning, FeatureNamesWarning,
                QClippedWarning, EffectiveFeaturesWarning):
        assert issubclass(cls, (UserWarning, RuntimeWarning)), cls
    X, y = _data(d=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        with pytest.raises(QClippedWarning):
            RandomFeatureRidge(n_features=5, q=3).fit(X, y)


# ------------------------------------------------------------ data frames
pd = pytest.importorskip("pandas")


def _frame():
    X, y = _data()
    return pd.DataFrame(X, columns=["a", "b", "c"]), y


def test_feature_names_like_sklearn(name):
    from sklearn.linear_model import Ridge

    df, y = _frame()
    ours = REGRESSORS[name]().fit(df, y)
    ref = Ridge().fit(df, y)
    np.testing.assert_array_equal(ours.feature_names_in_, ref.feature_names_in_)
    assert ours.n_features_in_ == ref.n_features_in_ == 3
    # same numbers as the array fit
    np.testing.assert_allclose(ours.predict(df), REGRESSORS[name]().fit(
        df.to_numpy(), y).predict(df.to_numpy()), rtol=1e-12)
    reordered = df[["b", "a", "c"]]
    renamed = df.rename(columns={"c": "z"})
    for bad in (reordered, renamed):
        with pytest.raises(ValueError) as sk_err:
            ref.predict(bad)
        with pytest.raises(ValueError) as our_err:
            ours.predict(bad)
        assert str(our_err.value) == str(sk_err.value)
    # fitted with names, predicting without: both warn (a UserWarning)
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        ref.predict(df.to_numpy())
    with pytest.warns(FeatureNamesWarning, match="does not have valid feature names"):
        ours.predict(df.to_numpy())
    # fitted without names, predicting with: both warn
    plain = REGRESSORS[name]().fit(df.to_numpy(), y)
    with pytest.warns(FeatureNamesWarning, match="fitted without feature names"):
        plain.predict(df)
    assert not hasattr(plain, "feature_names_in_")


def test_classifier_feature_names():
    df, y = _frame()
    clf = ARFFClassifier(8, n_iter=5, random_state=0).fit(df, (y > y.mean()).astype(int))
    assert list(clf.feature_names_in_) == ["a", "b", "c"]
    with pytest.raises(ValueError, match="same order"):
        clf.predict(df[["c", "b", "a"]])


# ------------------------------------------------- clone / pickle / deepcopy
@pytest.mark.slow(reason="one subprocess per estimator")
def test_clone_pickle_deepcopy_in_fresh_process(name, tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    from sklearn.base import clone

    X, y = _data()
    est = REGRESSORS[name]()
    if name == "gfc":
        # a live executor at fit time is used, never stored
        with ThreadPoolExecutor(2) as ex:
            est.fit(X, y, executor=ex)
    else:
        est.fit(X, y)
    expected = est.predict(X)
    copies = [est, copy.deepcopy(est)]
    path = tmp_path / "models.pkl"
    path.write_bytes(pickle.dumps((copies, X, clone(est))))
    code = (
        "import pickle, sys, numpy as np\n"
        f"models, X, unfitted = pickle.loads(open({str(path)!r}, 'rb').read())\n"
        "np.save(sys.argv[1], np.stack([m.predict(X) for m in models]))\n"
        "assert not hasattr(unfitted, 'coef_')\n"
        "np.save(sys.argv[2], unfitted.fit(X, np.load(sys.argv[3])).predict(X))\n"
    )
    np.save(tmp_path / "y.npy", y)
    env = dict(os.environ, PYTHONPATH=os.getcwd() + os.pathsep + os.environ.get(
        "PYTHONPATH", ""))
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "p.npy"),
                    str(tmp_path / "q.npy"), str(tmp_path / "y.npy")],
                   check=True, env=env, cwd=os.getcwd())
    got = np.load(tmp_path / "p.npy")
    for row in got:
        np.testing.assert_array_equal(row, expected)
    np.testing.assert_allclose(np.load(tmp_path / "q.npy"), expected, rtol=1e-10)


@pytest.mark.parametrize("cls, kw", [
    (HARFERegressor, dict(n_features=60, s=10, q=1)),
    (SRFERegressor, dict(n_features=60, eta=0.05, normalize=True)),
])
def test_matrix_free_centres_like_dense(cls, kw):
    # the centred operator (A - 1 mu^T) diag(s) gives the dense fit
    X, y = _data()
    a = cls(random_state=0, **kw).fit(X, y + 50.0)
    b = cls(random_state=0, matrix_free=True, **kw).fit(X, y + 50.0)
    np.testing.assert_array_equal(a.support_, b.support_)
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-9)
    assert abs(a.intercept_) > 1.0
    with pytest.raises(ValueError, match="sample_weight"):
        cls(random_state=0, matrix_free=True, **kw).fit(
            X, y, sample_weight=np.linspace(0.5, 2.0, len(y)))


@pytest.mark.parametrize("make", [lambda: ARFFRegressor(random_state=0),
                                  lambda: GFCRegressor(max_steps=2, random_state=0)],
                         ids=["arff", "gfc"])
def test_default_checked_against_the_mean_on_repeated_rows(make):
    # the nested check's folds hold weights whose common divisor exceeds 1 (a
    # fold without the weight-1 row): they must still be fitted as the rows
    rng = np.random.RandomState(42)
    X, y = rng.rand(15, 30), rng.randint(0, 3, size=15).astype(float)
    sw = rng.randint(0, 5, size=15).astype(float)
    a = make().fit(X, y, sample_weight=sw)
    b = make().fit(X.repeat(sw.astype(int), axis=0), y.repeat(sw.astype(int)))
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("name", ["arff", "gfc"])
def test_weights_in_a_proportion_without_a_unit_weight_repeat_rows(name):
    # 3 : 7 has no weight 1: the counts are the weights, for 0.1 * w too
    X, y = _data()
    w = np.where(np.arange(len(y)) % 2, 3.0, 7.0)
    k = w.astype(int)
    b = REGRESSORS[name]().fit(np.repeat(X, k, axis=0), np.repeat(y, k)).predict(X)
    for c in (1.0, 0.1):
        a = REGRESSORS[name]().fit(X, y, sample_weight=c * w).predict(X)
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-8 * np.abs(b).max())
