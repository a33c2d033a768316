"""ARFF follows the paper's complex model: modulus errors, modulus arg max, Table 2 settings.

Kammonen et al. (2020): the model is f(x) = sum_k beta_k exp(i w_k . x), the
generalisation error uses |S beta - y| (Sec. 5) and the MNIST classifier takes
arg max_i |f_i(x)| (Case 4).  Table 2 fixes the experiments' settings.
"""

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from rflite import metropolis as mp
from rflite.datasets import make_metropolis1
from rflite.metropolis import ARFFClassifier, ARFFRegressor, generalization_error


def naive_complex_model(model, X):
    """f(x) on the original scale, written out from the sampler's result (standardised data)."""
    r = model.result_
    Xn = (X - model.x_standardizer_.mean) / model.x_standardizer_.scale
    f = np.exp(1j * Xn @ r.frequencies.T) @ r.amplitudes.reshape(len(r.frequencies), -1)
    if model.y_standardizer_ is not None:
        f = f * model.y_standardizer_.scale + model.y_standardizer_.mean
    return f


@pytest.fixture(scope="module")
def regression():
    X, y = make_metropolis1(300, a=0.1, rng=3)
    Xt, yt = make_metropolis1(200, a=0.1, rng=4)
    return ARFFRegressor(8, n_iter=20, random_state=0).fit(X, y), X, y, Xt, yt


def test_regressor_complex_model_and_real_predict(regression):
    model, _, _, Xt, _ = regression
    f = naive_complex_model(model, Xt)[:, 0]
    assert_allclose(model.predict_complex(Xt), f, rtol=1e-9, atol=1e-12)
    assert np.abs(f.imag).max() > 1e-3  # the model really is complex at this K
    assert model.predict(Xt).dtype == np.float64
    assert_array_equal(model.predict(Xt), model.predict_complex(Xt).real)


def test_generalization_error_is_the_modulus(regression):
    """e = sqrt(mean |f - y|^2) / sd_y: the paper's error, larger than the real part's."""
    model, _, _, Xt, yt = regression
    f = naive_complex_model(model, Xt)[:, 0]
    sd = np.std(regression[2], ddof=1)
    expected = math.sqrt(np.mean(np.abs(f - yt) ** 2)) / sd
    real_only = math.sqrt(np.mean((f.real - yt) ** 2)) / sd
    e = generalization_error(model, Xt, yt)
    assert_allclose(e, expected, rtol=1e-10)
    assert e > real_only * (1 + 1e-4)


def test_generalization_error_multi_output_and_bad_input(regression):
    _, X, y, Xt, yt = regression
    Y, Yt = np.column_stack([y, 10 * y]), np.column_stack([yt, 10 * yt])
    m = ARFFRegressor(8, n_iter=10, random_state=0).fit(X, Y)
    r = (m.predict_complex(Xt) - Yt) / np.std(Y, axis=0, ddof=1)
    assert_allclose(generalization_error(m, Xt, Yt), math.sqrt(np.mean(np.abs(r) ** 2)),
                    rtol=1e-10)
    with pytest.raises(ValueError, match="y must have shape"):
        generalization_error(m, Xt, yt)
    with pytest.raises(ValueError, match="model must be a fitted ARFFRegressor"):
        generalization_error(object(), Xt, yt)


def test_sigmoid_model_is_real(regression):
    _, X, y, Xt, _ = regression
    s = ARFFRegressor(8, n_iter=10, activation="sigmoid", random_state=0).fit(X, y)
    assert not np.iscomplexobj(s.predict_complex(Xt))
    assert_array_equal(s.predict(Xt), s.predict_complex(Xt))


def test_classifier_takes_arg_max_of_moduli():
    """Case 4: class = arg max_i |f_i(x)|, which here differs from the real-part arg max."""
    datasets = pytest.importorskip("sklearn.datasets")
    X, y = datasets.load_digits(return_X_y=True)
    X, y = X[:600], y[:600]
    clf = ARFFClassifier(8, n_iter=10, delta=0.1, random_state=0).fit(X[:400], y[:400])
    f = naive_complex_model(clf, X[400:])
    assert_allclose(clf.predict_complex(X[400:]), f, rtol=1e-9, atol=1e-12)
    by_modulus = clf.classes_[np.argmax(np.abs(f), axis=1)]
    by_real = clf.classes_[np.argmax(f.real, axis=1)]
    assert np.any(by_modulus != by_real)  # so the test tells the two rules apart
    assert_array_equal(clf.predict(X[400:]), by_modulus)
    assert_allclose(clf.decision_function(X[400:]), np.abs(f), rtol=1e-12)
    # two classes: |f_1| - |f_0|, positive for classes_[1]
    two = y[:400] < 5
    clf2 = ARFFClassifier(8, n_iter=5, delta=0.1, random_state=0).fit(X[:400], two)
    f2 = np.abs(clf2.predict_complex(X[400:]))
    assert_allclose(clf2.decision_function(X[400:]), f2[:, 1] - f2[:, 0], rtol=1e-12)
    assert_array_equal(clf2.predict(X[400:]), clf2.classes_[(f2[:, 1] > f2[:, 0]).astype(int)])


# ------------------------------------------------------- paper Table 2 settings
class _Recorded(Exception):
    pass


def test_case2_uses_table2_refit_period(monkeypatch, tmp_path):
    """Case 2, Alg. 1: m = 25, M = 2500, delta = 2.4^2/(10 d) (paper Table 2)."""
    from rflite.experiments import Context, run_experiment
    from rflite.experiments import metropolis as ex

    seen = []

    class Recorder:
        def __init__(self, K, **params):
            seen.append(params)
            raise _Recorded

    monkeypatch.setattr(ex, "ARFFRegressor", Recorder)
    with pytest.raises(_Recorded):
        run_experiment("arff-case2", Context(quick=False, out=tmp_path))
    p = seen[0]
    assert p["refit_every"] == 25 and p["n_iter"] == 2500
    assert_allclose(p["delta"], 2.4**2 / 50, rtol=1e-15)


def test_case3_uses_table2_settings(monkeypatch, tmp_path):
    """Case 3: M = 1e4, m = 100; Alg. 1 delta = 0.5; Alg. 2 delta = 0.1, omega_max = inf,
    t0 = M/10 (the default burn-in)."""
    from rflite.experiments import Context, run_experiment
    from rflite.experiments import metropolis as ex

    calls = []

    def fake_arff(X, y, *, n_features, n_iter, callback, **kw):
        calls.append(dict(kw, n_iter=n_iter, n_features=n_features))
        callback(n_iter, np.zeros((n_features, 2)), np.zeros(n_features, complex))
        return mp.ARFFResult(np.zeros((n_features, 2)), np.zeros(n_features, complex),
                             np.zeros(n_iter), np.zeros(n_iter + 1), np.eye(2))

    monkeypatch.setattr(ex, "arff", fake_arff)
    run_experiment("arff-case3", Context(quick=False, out=tmp_path))
    alg1, alg2 = calls
    assert alg1["n_iter"] == alg2["n_iter"] == 10_000 and alg1["n_features"] == 256
    assert alg1["refit_every"] == alg2["refit_every"] == 100
    assert alg1["delta"] == 0.5 and not alg1["adaptive_covariance"]
    assert alg2["delta"] == 0.1 and alg2["adaptive_covariance"]
    assert alg2.get("omega_max", math.inf) == math.inf
    assert alg2.get("burn_in") is None  # arff's default t0 = M/10
