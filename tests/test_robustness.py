"""Robustness audit, scikit-learn compatibility and solver invariants.

Three parts:

1. A table-driven audit: every public function and estimator (:data:`TARGETS`)
   is called on every input class of :data:`INPUT_CLASSES` (NaN / inf in X or
   y, 1-d and 3-d X, string / object-with-None / sparse / complex X, empty
   arrays (0 rows, 0 columns), mismatched lengths, integer / bool / float32 /
   read-only / Fortran-ordered / non-contiguous / list input, one and two
   samples, constant, zero and duplicate columns, constant and zero y, huge
   (1e200) and tiny (1e-300) values) plus the per-target "parameter larger
   than possible" and "feature matrix that cannot fit in memory" requests.  The outcome must be either a finite result
   (equal to the float64 C-ordered result where the input only changed
   representation) or a ``ValueError`` / ``MemoryError`` (``TypeError`` for
   non-numeric input) whose message names the offending parameter; never a
   numba error, ``ZeroDivisionError``, ``IndexError``, a numpy
   "invalid value" / "divide by zero" warning or a silent NaN.
2. ``sklearn.utils.estimator_checks.check_estimator`` on every estimator
   class, with an explicit skip list, and every regressor inside
   ``Pipeline(StandardScaler(), est)`` under ``GridSearchCV``.
3. hypothesis property tests of what the solvers guarantee mathematically.
"""

from __future__ import annotations

import re
import tracemalloc
import warnings

import numpy as np
import pytest
import scipy.sparse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.utils.estimator_checks import parametrize_with_checks

from rflite.bp import SRFECV, SRFERegressor, bpdn, srfe
from rflite.features import random_feature_map
from rflite.greedy import GFCRegressor, gfc, greedy_descent
from rflite.htp import HARFECV, HARFERegressor, harfe
from rflite.imp import SHRIMPCV, SHRIMPRegressor, shrimp_path
from rflite.metropolis import ARFFClassifier, ARFFRegressor, arff
from rflite.ridge import RandomFeatureRidge, RandomFeatureRidgeCV
from rflite.theory import coherence, rip_lower_bound

M, D, N = 30, 4, 24  # samples, input dimension, columns of a solver's matrix A
HUGE = 10**11  # features whose m x N matrix (~ 24 TB) cannot fit anywhere


# =========================================================================
# the audit table
# =========================================================================
def _xy_data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1.0, 1.0, (M, D))
    y = np.sin(2.0 * X[:, 0]) + X[:, 1] * X[:, 2]
    return X, y


def _ay_data():
    rng = np.random.default_rng(1)
    A = rng.standard_normal((M, N)) / np.sqrt(M)
    c = np.zeros(N)
    c[[2, 7, 11]] = [1.0, -2.0, 0.5]
    y = A @ c + 0.01 * rng.standard_normal(M)
    return A, y


class Target:
    """One public entry point: how to call it and what a big request looks like.

    ``kind`` is ``"X"`` for functions of a design matrix ``X`` (d inputs) and
    ``"A"`` for solvers of a matrix ``A`` (its columns are the features, so
    the first argument is named ``A`` in their errors).  ``call(X, y, **kw)``
    returns the arrays whose finiteness is checked.  ``too_large`` maps
    overrides that ask for more than possible to the parameter the error
    must name; ``huge`` are overrides asking for a feature matrix that cannot
    fit in memory (``None``: not applicable).
    """

    def __init__(self, name, kind, call, *, too_large=(), huge=None, uses_y=True,
                 audit=True):
        self.name, self.kind, self.call = name, kind, call
        self.too_large = list(too_large)
        self.huge = huge
        self.uses_y = uses_y
        self.audit = audit  # False: only the memory test

    def __repr__(self):
        return self.name


def _fit_predict(make):
    def call(X, y, **kw):
        est = make(**kw).fit(X, y)
        return (est.predict(X), est.coef_)
    return call


def _fit_classify(X, y, **kw):
    # two classes, keeping y's dtype, NaN / inf and (empty) shape
    y = np.asarray(y)
    labels = np.where(np.isfinite(y), np.arange(y.size).reshape(y.shape) % 2, y).astype(y.dtype)
    est = ARFFClassifier(**{"n_features": 8, "n_iter": 4, "random_state": 0, **kw})
    est.fit(X, labels)
    return (est.decision_function(X),)


def _transform(X, y, n_features=16, rows=None):
    d = np.shape(X)[1] if np.ndim(X) == 2 and np.shape(X)[1] > 0 else D
    fmap = random_feature_map(d, n_features, q=min(2, d), rng=0)
    return (fmap.transform(X),)


def _huge_transform(X, y, n_features=16, rows=None):
    # a modest map (10^6 features, ~40 MB of weights) on a broadcast (no copy)
    # input of 10^6 rows: the 10^12-entry result must be refused up front
    fmap = random_feature_map(D, n_features, q=2, rng=0)
    return (fmap.transform(np.broadcast_to(X[:1], (rows, D))),)


TARGETS = [
    Target("random_feature_map.transform", "X", _transform, uses_y=False,
           too_large=[({"n_features": 0}, "n_features")]),
    Target("FeatureMap.transform[huge]", "X", _huge_transform, audit=False,
           huge={"n_features": 10**6, "rows": 10**6}),
    Target("HARFERegressor[matrix_free]", "X",
           _fit_predict(lambda **kw: HARFERegressor(**{"q": 1, "matrix_free": True, **kw})),
           audit=False, huge={"n_features": HUGE, "s": 5}),
    Target("SRFERegressor[matrix_free]", "X",
           _fit_predict(lambda **kw: SRFERegressor(**{"q": 1, "matrix_free": True, **kw})),
           audit=False, huge={"n_features": HUGE}),
    Target("RandomFeatureRidge", "X",
           _fit_predict(lambda **kw: RandomFeatureRidge(**{"n_features": 20, "random_state": 0,
                                                           **kw})),
           too_large=[], huge={"n_features": HUGE}),
    Target("harfe", "A", lambda A, y, **kw: (harfe(A, y, **{"s": 3, "lam": 1e-3, **kw}).coef,),
           too_large=[({"s": N + 1}, "s")]),
    Target("HARFERegressor", "X",
           _fit_predict(lambda **kw: HARFERegressor(**{"n_features": 30, "s": 5, "q": 1,
                                                       "random_state": 0, **kw})),
           too_large=[({"s": 31}, "s")],
           huge={"n_features": HUGE, "s": 5}),
    Target("shrimp_path", "A",
           lambda A, y, **kw: tuple(shrimp_path(A, y, **{"prune_rate": 0.3, **kw}).coefs),
           too_large=[({"min_features": N + 1}, "min_features")]),
    Target("SHRIMPRegressor", "X",
           _fit_predict(lambda **kw: SHRIMPRegressor(**{"n_features": 12, "q": 1,
                                                        "random_state": 0, **kw})),
           too_large=[({"min_features": 25}, "min_features")],
           huge={"n_features": HUGE}),
    Target("bpdn", "A", lambda A, y, **kw: (bpdn(A, y, **{"sigma": 0.05, **kw}).coef,)),
    Target("srfe", "A",
           lambda A, y, **kw: (srfe(A, y, **{"eta": 0.01, "s": 3, "refit": "lstsq",
                                             **kw}).coef,),
           too_large=[({"s": N + 1}, "s")]),
    Target("SRFERegressor", "X",
           _fit_predict(lambda **kw: SRFERegressor(**{"n_features": 20, "eta": 0.01,
                                                      "random_state": 0, **kw})),
           too_large=[({"s": 21}, "s")], huge={"n_features": HUGE}),
    Target("arff", "X",
           lambda X, y, **kw: arff(X, y, **{"n_features": 8, "n_iter": 4, "rng": 0,
                                             **kw})[:2],
           huge={"n_features": 10**7}),
    Target("ARFFRegressor", "X",
           _fit_predict(lambda **kw: ARFFRegressor(**{"n_features": 8, "n_iter": 4,
                                                      "random_state": 0, **kw})),
           huge={"n_features": 10**7}),
    Target("ARFFClassifier", "X", _fit_classify, huge={"n_features": 10**7}),
    Target("greedy_descent", "X",
           lambda X, y, **kw: greedy_descent(X, y, 0.0, **{"max_steps": 1, "n_folds": 2,
                                                            "rng": 0, **kw})[:2],
           too_large=[({"n_folds": M + 1}, "n_folds")]),
    Target("gfc", "X",
           lambda X, y, **kw: gfc(X, y, **{"n_workers": 2, "max_steps": 1, "n_folds": 2,
                                           "rng": 0, **kw})[:4],
           # n_folds larger than a subsample shrinks (GFC works on small samples)
           too_large=[({"subsample": M + 1}, "subsample")]),
    Target("GFCRegressor", "X",
           _fit_predict(lambda **kw: GFCRegressor(**{"n_workers": 2, "max_steps": 1,
                                                     "n_folds": 2, "random_state": 0, **kw})),
           # n_workers is capped by the sample size, subsample is not
           too_large=[({"subsample": M + 1}, "subsample")]),
    Target("coherence", "A", lambda A, y, **kw: (coherence(A, **kw),), uses_y=False),
    Target("rip_lower_bound", "A",
           lambda A, y, **kw: (rip_lower_bound(A, **{"s": 2, "n_trials": 4, "rng": 0,
                                                     **kw}).delta,),
           too_large=[({"s": N + 1}, "s")], uses_y=False),
]


def _nan(a, where, value):
    a = np.array(a, dtype=float)
    a[where] = value
    return a


def _with_none(X):
    X = X.astype(object)
    X[0, 0] = None
    return X


def _readonly(a):
    a = np.array(a)
    a.flags.writeable = False
    return a


def _dup(X):
    return np.column_stack([X, X[:, :1]])


def _const(X):
    return np.column_stack([X, np.full(X.shape[0], 3.0)])


def _zero(X):
    return np.column_stack([X, np.zeros(X.shape[0])])


# name -> (transform (X, y) -> (X, y), expectation)
# expectation: "error:<names>" must raise naming one of the names ("X" reads
# "A" for matrix solvers); "same" must succeed and equal the result on the
# float64 C-ordered equivalent; "finite" must succeed or raise naming a
# listed name ("finite:<names>").
INPUT_CLASSES = {
    "nan_X": (lambda X, y: (_nan(X, (1, 1), np.nan), y), "error:X"),
    "inf_X": (lambda X, y: (_nan(X, (2, 0), np.inf), y), "error:X"),
    "nan_y": (lambda X, y: (X, _nan(y, 3, np.nan)), "error:y"),
    "inf_y": (lambda X, y: (X, _nan(y, 0, -np.inf)), "error:y"),
    "1d_X": (lambda X, y: (X[:, 0], y), "error:X"),
    "3d_X": (lambda X, y: (X[:, :, None], y), "error:X"),
    "string_X": (lambda X, y: (np.full(X.shape, "a"), y), "error:X"),
    "sparse_X": (lambda X, y: (scipy.sparse.csr_matrix(X), y), "error:X"),
    "object_with_None": (lambda X, y: (_with_none(X), y), "error:X"),
    "complex_X": (lambda X, y: (X + 0.5j, y), "finite:X"),
    "zero_rows": (lambda X, y: (X[:0], y[:0]), "error:X,y"),
    "zero_columns": (lambda X, y: (X[:, :0], y), "error:X"),
    "y_length_mismatch": (lambda X, y: (X, y[:-1]), "error:X,y"),
    "int": (lambda X, y: (np.round(3 * X).astype(np.int64), np.round(3 * y).astype(np.int32)),
            "same"),
    "float32": (lambda X, y: (X.astype(np.float32), y.astype(np.float32)), "same"),
    "readonly": (lambda X, y: (_readonly(X), _readonly(y)), "same"),
    "fortran": (lambda X, y: (np.asfortranarray(X), y), "same"),
    "noncontiguous": (lambda X, y: (np.repeat(X, 2, axis=1)[:, ::2], y[::-1][::-1]), "same"),
    "bool": (lambda X, y: (X > 0, y), "same"),
    "list_input": (lambda X, y: (X.tolist(), y.tolist()), "same"),
    "single_sample": (lambda X, y: (X[:1], y[:1]),
                      "finite:X,y,validation_fraction,n_folds,subsample,n_workers"),
    "two_samples": (lambda X, y: (X[:2], y[:2]),
                    "finite:X,y,validation_fraction,n_folds,subsample,n_workers"),
    "constant_column": (lambda X, y: (_const(X), y), "finite:"),
    "zero_column": (lambda X, y: (_zero(X), y), "finite:A"),
    "duplicate_columns": (lambda X, y: (_dup(X), y), "finite:"),
    "constant_y": (lambda X, y: (X, np.full_like(y, 2.5)), "finite:y"),
    "huge_X": (lambda X, y: (1e200 * X, y), "finite:X"),
    "huge_values": (lambda X, y: (X, 1e200 * y), "finite:y"),
    "tiny_values": (lambda X, y: (X, 1e-300 * y), "finite:y"),
    "zero_y": (lambda X, y: (X, np.zeros_like(y)), "finite:y"),
}

#: exact reference (float64, C order) for the "same" classes
_REPR = {
    "int": lambda X, y: (np.round(3 * X), np.round(3 * y)),
    "bool": lambda X, y: ((X > 0).astype(float), y),
    "float32": lambda X, y: (X.astype(np.float32).astype(float),
                             y.astype(np.float32).astype(float)),
}


def _names(spec, kind):
    names = [n for n in spec.split(":", 1)[1].split(",") if n]
    if kind == "A":
        names = ["A" if n == "X" else n for n in names]
    return names


def _names_parameter(exc, names):
    msg = str(exc)
    return any(re.search(rf"(?<![A-Za-z_]){re.escape(n)}(?![A-Za-z_])", msg) for n in names)


def _run(call, *args, **kw):
    """Call and return ``(result, exception)``; numpy arithmetic warnings are failures."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        try:
            out = call(*args, **kw)
        except (ValueError, MemoryError, TypeError) as exc:
            assert not type(exc).__module__.startswith("numba"), f"numba error: {exc}"
            out, err = None, exc
        else:
            err = None
    bad = [w for w in rec if w.category is RuntimeWarning]
    assert not bad, f"numpy warning (silent NaN/inf risk): {bad[0].message}"
    return out, err


def _all_finite(out):
    for a in out:
        a = np.asarray(a)
        assert np.issubdtype(a.dtype, np.number) and np.all(np.isfinite(a)), \
            f"non-finite result {a!r}"


def _audit_ids():
    for t in TARGETS:
        if not t.audit:
            continue
        for cls in INPUT_CLASSES:
            if not t.uses_y and (cls.endswith("_y") or cls in ("y_length_mismatch",)):
                continue
            if cls == "zero_column" and t.kind != "A":
                continue
            yield pytest.param(t, cls, id=f"{t.name}-{cls}")


@pytest.mark.parametrize("target,cls", list(_audit_ids()))
def test_input_class(target, cls):
    X0, y0 = _ay_data() if target.kind == "A" else _xy_data()
    transform, expect = INPUT_CLASSES[cls]
    X, y = transform(X0, y0)
    out, err = _run(target.call, X, y)
    if expect.startswith("error"):
        assert err is not None, f"{target.name} accepted {cls}"
        if cls != "string_X":
            assert isinstance(err, ValueError), repr(err)
        assert _names_parameter(err, _names(expect, target.kind)), \
            f"error does not name {_names(expect, target.kind)}: {err}"
    elif expect == "same":
        assert err is None, f"{target.name} rejected {cls}: {err!r}"
        _all_finite(out)
        Xr, yr = _REPR.get(cls, lambda X, y: (X, y))(X0, y0)
        ref, err_ref = _run(target.call, np.ascontiguousarray(Xr, dtype=float),
                            np.asarray(yr, dtype=float))
        assert err_ref is None
        for a, b in zip(out, ref):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
        if cls == "readonly":
            assert not X.flags.writeable  # the caller's array was not unlocked
    else:
        if err is not None:
            names = _names(expect, target.kind)
            assert names and _names_parameter(err, names), f"{target.name} on {cls}: {err!r}"
        else:
            _all_finite(out)


def _too_large_ids():
    for t in TARGETS:
        for kw, name in t.too_large:
            yield pytest.param(t, kw, name, id=f"{t.name}-{name}={next(iter(kw.values()))}")


@pytest.mark.parametrize("target,kw,name", list(_too_large_ids()))
def test_parameter_larger_than_possible(target, kw, name):
    X, y = _ay_data() if target.kind == "A" else _xy_data()
    _, err = _run(target.call, X, y, **kw)
    assert isinstance(err, ValueError), f"{target.name} accepted {kw}"
    assert _names_parameter(err, [name]), str(err)


@pytest.mark.parametrize("target", [t for t in TARGETS if t.huge is not None], ids=repr)
def test_feature_matrix_too_large_for_memory(target):
    X, y = _xy_data()
    tracemalloc.start()
    try:
        _, err = _run(target.call, X, y, **target.huge)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert isinstance(err, MemoryError), f"{target.name}: {err!r}"
    assert "n_features" in str(err) or "n_columns" in str(err), str(err)
    assert "GiB" in str(err)  # our own up-front estimate, not numpy's failed allocation
    assert peak < 200 * 2**20, f"allocated {peak / 2**20:.0f} MiB before refusing"


# =========================================================================
# scikit-learn compatibility
# =========================================================================
#: Every estimator with its default arguments (check_estimator must pass
#: as users get them; scikit-learn's checks set random_state themselves).
ESTIMATORS = {
    cls.__name__: cls for cls in (
        RandomFeatureRidge, RandomFeatureRidgeCV, HARFERegressor, HARFECV, SHRIMPRegressor,
        SHRIMPCV, SRFERegressor, SRFECV, ARFFRegressor, ARFFClassifier, GFCRegressor)
}

#: Checks each estimator is allowed to fail, with the reason.  Empty unless a
#: check tests something the model does not promise.
SKIPPED_CHECKS: dict[str, dict[str, str]] = {name: {} for name in ESTIMATORS}


@pytest.mark.slow(reason="scikit-learn check_estimator suite, one test per check")
@pytest.mark.filterwarnings("ignore:Estimator .* does not inherit from:UserWarning")
@parametrize_with_checks([cls() for cls in ESTIMATORS.values()],
                         expected_failed_checks=lambda est: SKIPPED_CHECKS[type(est).__name__])
def test_check_estimator(estimator, check):
    # warnings stay on: check_supervised_y_2d counts DataConversionWarnings
    check(estimator)


REGRESSOR_GRIDS = {
    "RandomFeatureRidge": {"est__lam": [1e-4, 1e-2]},
    "HARFERegressor": {"est__s": [5, 10]},
    "SHRIMPRegressor": {"est__prune_rate": [0.2, 0.4]},
    "SRFERegressor": {"est__eta": [1e-2, 1e-1]},
    "ARFFRegressor": {"est__lam": [0.01, 0.1]},
    "GFCRegressor": {"est__max_steps": [1, 2]},
}


@pytest.mark.slow(reason="scikit-learn GridSearchCV over a Pipeline: dozens of fits per estimator")
@pytest.mark.parametrize("name", list(REGRESSOR_GRIDS))
def test_pipeline_grid_search(name):
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, (80, 3))
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1]
    pipe = Pipeline([("scale", StandardScaler()), ("est", ESTIMATORS[name]())])
    search = GridSearchCV(pipe, REGRESSOR_GRIDS[name], cv=3).fit(X, y)
    assert set(search.best_params_) == set(REGRESSOR_GRIDS[name])
    pred = search.predict(X)
    assert pred.shape == (80,) and np.all(np.isfinite(pred))
    assert np.isfinite(search.best_score_)


@pytest.mark.slow(reason="scikit-learn GridSearchCV over a Pipeline: dozens of fits")
def test_classifier_pipeline_grid_search():
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, (90, 2))
    y = np.where(X[:, 0] * X[:, 1] > 0, "a", "b")
    pipe = Pipeline([("scale", StandardScaler()), ("est", ESTIMATORS["ARFFClassifier"]())])
    search = GridSearchCV(pipe, {"est__lam": [0.01, 0.1]}, cv=3).fit(X, y)
    assert set(search.predict(X)) <= {"a", "b"}


# =========================================================================
# solver invariants (hypothesis)
# =========================================================================
_SETTINGS = settings(max_examples=25, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow])


@st.composite
def problems(draw, min_cols=2):
    m = draw(st.integers(2, 12))
    n = draw(st.integers(min_cols, 16))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, n))
    if draw(st.booleans()):  # duplicate a column (coherence 1)
        A[:, -1] = A[:, 0]
    y = rng.standard_normal(m) * draw(st.sampled_from([1e-3, 1.0, 1e3]))
    return A, y


@_SETTINGS
@given(problems(), st.integers(1, 16), st.sampled_from([0.0, 1e-4, 1e-2, 1.0]),
       st.booleans())
def test_harfe_sparse_and_residual_bounded(prob, s, lam, warm):
    """HTP returns an s-sparse vector whose ridge objective is at most ||y||^2.

    Guaranteed for every lam >= 0 and any start ``c0``: the output is the last
    iterate (``max_iter >= 1``), i.e. the ridge solution on its support S,
    c_S = argmin_c ||A_S c - y||^2 + m lam ||c||^2, whose objective is at most
    that of c = 0, hence ||A c - y||^2 + m lam ||c||^2 <= ||y||^2 and in
    particular ||A c - y|| <= ||y|| (every recorded relative residual <= 1).
    (With a numerically singular A_S the pseudo-inverse fallback solves the
    same problem on the range of A_S, so the bound still holds up to
    rounding.)  Not guaranteed without RIP-type conditions: a monotone residual
    sequence, convergence in ``max_iter``, or recovery of a sparse ``c``.
    """
    A, y = prob
    m, n = A.shape
    s = min(s, n)
    c0 = np.random.default_rng(n).standard_normal(n) if warm else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # IllConditionedWarning on duplicated columns
        res = harfe(A, y, s=s, lam=lam, max_iter=20, c0=c0)
    assert np.all(np.isfinite(res.coef))
    assert np.count_nonzero(res.coef) <= s and res.support.size <= s
    assert set(np.flatnonzero(res.coef)) <= set(res.support.tolist())
    ysq = float(y @ y)
    r = A @ res.coef - y
    objective = float(r @ r) + m * lam * float(res.coef @ res.coef)
    assert objective <= ysq * (1 + 1e-8) + 1e-300
    assert np.all(np.asarray(res.residuals) <= 1 + 1e-8)


@_SETTINGS
@given(problems(), st.floats(0.05, 0.9), st.integers(1, 4))
def test_shrimp_path_shrinks_and_nests(prob, prune_rate, min_features):
    """SHRIMP prunes a fixed fraction (at least one) per step, down to min_features.

    Guaranteed by construction (Algorithm 1): the kept counts follow
    :func:`prune_counts` (strictly decreasing, ending at ``min_features``),
    P_t is a subset of P_{t-1}, each c_t is finite and supported on P_t, and
    magnitude pruning removes the smallest |c_{t-1}|: every removed entry is
    at most every kept one, up to the ranking's tie grid (``TIE_RTOL`` of the
    largest magnitude: near-ties go by column index).  (Not guaranteed: a
    monotone training or validation error along the path.)
    """
    from rflite.imp import TIE_RTOL, prune_counts

    A, y = prob
    min_features = min(min_features, A.shape[1])
    path = shrimp_path(A, y, prune_rate=prune_rate, min_features=min_features)
    counts = np.asarray(path.n_kept)
    np.testing.assert_array_equal(
        counts, prune_counts(A.shape[1], prune_rate, min_features=min_features))
    assert counts[0] == A.shape[1] and counts[-1] == min_features
    assert np.all(np.diff(counts) < 0)
    for t in range(1, len(path.supports)):
        prev, cur = path.supports[t - 1], path.supports[t]
        assert set(cur.tolist()) <= set(prev.tolist())
        assert len(cur) == counts[t]
        mag = dict(zip(prev.tolist(), np.abs(path.coefs[t - 1]).tolist()))
        removed = [mag[j] for j in prev.tolist() if j not in set(cur.tolist())]
        tie = 2 * TIE_RTOL * max(mag.values())
        assert max(removed) <= min(mag[j] for j in cur.tolist()) + tie
    for t, c in enumerate(path.coefs):
        assert np.all(np.isfinite(c))
        dense = path.dense_coef(t)
        assert set(np.flatnonzero(dense)) <= set(path.supports[t].tolist())


@_SETTINGS
@given(problems(), st.sampled_from([0.0, 0.01, 0.3, 0.9, 2.0]))
def test_bpdn_satisfies_constraint(prob, rel_sigma):
    """BPDN's answer is feasible to the accuracy its ``stop_reason`` certifies.

    Mathematically the minimiser satisfies ||A c - y|| <= sigma whenever the
    constraint set is non-empty (always, for A of full row rank), and c = 0 is
    the unique solution once sigma >= ||y||.  Numerically the solver promises
    (module constants): the certified stops (``bp.CERTIFIED``: "homotopy",
    "linprog", "polished", "optimal", "zero_solution", with a duality gap <=
    OPT_TOL) and the feasible uncertified "bp_solution" and "lp_inexact" give
    ||r|| <= sigma (1 + FEAS_TOL) + BP_TOL ||y||; SPGL1's "root_found" gives ||r|| <= sigma + OPT_TOL max(1,
    ||r||); "sigma_unreachable" must mean that least squares cannot get below
    sigma either; "max_iter" / "line_search" promise nothing but must say so.
    In every case the reported ``residual_norm`` is the true one.
    """
    from rflite.bp import BP_TOL, CERTIFIED, FEAS_TOL, OPT_TOL

    A, y = prob
    ynorm = float(np.linalg.norm(y))
    sigma = rel_sigma * ynorm
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = bpdn(A, y, sigma)
    assert np.all(np.isfinite(res.coef))
    r = float(np.linalg.norm(A @ res.coef - y))
    assert res.residual_norm == pytest.approx(r, rel=1e-8, abs=1e-12 * ynorm)
    slack = 1e-12 * ynorm  # rounding of A @ c
    if res.stop_reason in CERTIFIED | {"bp_solution", "lp_inexact"}:
        assert r <= sigma * (1 + FEAS_TOL) + BP_TOL * ynorm + slack
        if res.stop_reason in CERTIFIED:
            assert res.certified and res.duality_gap <= OPT_TOL
    elif res.stop_reason == "root_found":
        assert r <= sigma + OPT_TOL * max(1.0, r) + slack
    elif res.stop_reason == "sigma_unreachable":
        c_ls = np.linalg.lstsq(A, y, rcond=None)[0]
        assert np.linalg.norm(A @ c_ls - y) > sigma * (1 + FEAS_TOL)
    else:
        assert res.stop_reason in ("max_iter", "line_search")
    if np.linalg.matrix_rank(A) == A.shape[0]:
        assert res.stop_reason != "sigma_unreachable"  # full row rank: always feasible
    if rel_sigma >= 1.0:
        assert res.stop_reason == "zero_solution" and not np.any(res.coef)
