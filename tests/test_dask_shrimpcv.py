"""SHRIMPCV fitted on Dask arrays: rflite._dask.shrimpcv.

The folds are the in-memory ones; every fold's paths run on triangular
factors of its rows.  On well-conditioned (q >= 2) dictionaries the choice,
the support and the minimum-norm coefficients equal the in-memory fit's
(coefficients to 1e-9); the ridge penalties come from power iterations on
the factors (another start vector), so the grid scores agree to 1e-2 (a few 1e-3 in practice).
"""

import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from rflite.datasets import make_friedman1  # noqa: E402
from rflite.imp import SHRIMPCV  # noqa: E402

# the shared `rel`, the synchronous-scheduler and LocalCluster fixtures, and
# distinct sorted rows (SHRIMP's in-memory fit sorts them; see test_dask)
from test_dask import rel, sorted_rows, sync  # noqa: E402, F401


@pytest.fixture(scope="module")
def data():
    X, y = sorted_rows(*make_friedman1(300, d=5, noise=0.1, rng=0))
    w = np.random.default_rng(7).uniform(0.3, 3.0, X.shape[0])
    return X, y, w


def _assert_same(est, ref):
    assert (est.q_, est.prune_rate_, est.best_step_, est.best_index_) == \
        (ref.q_, ref.prune_rate_, ref.best_step_, ref.best_index_)
    np.testing.assert_array_equal(est.support_, ref.support_)
    assert est.refit_ == ref.refit_
    # the fold models of the chosen point, averaged in (average_folds=True)
    assert est.n_models_ == ref.n_models_ == (1 if est.refit_ == "mean" else len(
        est.cv_results_["baseline_mse"]) + 1)
    assert rel(est.coef_, ref.coef_) < 1e-9
    np.testing.assert_allclose(est.intercept_, ref.intercept_, rtol=1e-9)
    if ref.fit_intercept:  # the prediction check's centre (without an intercept: 0 on Dask)
        np.testing.assert_allclose(est.target_mean_, ref.target_mean_, rtol=1e-9, atol=1e-12)
    a, b = est.cv_results_["mean_test_mse"], ref.cv_results_["mean_test_mse"]
    np.testing.assert_array_equal(np.isinf(a), np.isinf(b))
    fin = np.isfinite(b)
    np.testing.assert_allclose(a[fin], b[fin], rtol=1e-2)
    np.testing.assert_allclose(est.cv_results_["baseline_mse"], ref.cv_results_["baseline_mse"],
                               rtol=1e-12)


@pytest.mark.parametrize("kw,weighted,rows", [
    ({"qs": (2,), "refit": "auto"}, False, 70),
    ({"qs": (2, 3), "refit": "min_norm", "prune_rates": (0.2, 0.4)}, False, 300),
    ({"qs": (2,), "refit": "auto", "cv": 3}, True, 64),
], ids=["auto", "min-norm-grid", "weighted-cv3"])
def test_shrimpcv_on_dask_equals_in_memory(data, kw, weighted, rows, sync):
    X, y, w = data
    w = w if weighted else None
    params = {"n_features": 25, "random_state": 0, **kw}
    ref = SHRIMPCV(**params).fit(X, y, sample_weight=w)
    wd = None if w is None else da.from_array(w, chunks=rows)
    est = SHRIMPCV(**params).fit(da.from_array(X, chunks=(rows, -1)),
                                 da.from_array(y, chunks=rows), sample_weight=wd)
    _assert_same(est, ref)
    kinds = [k for k, _ in est.dask_passes_]
    n_q, n_folds = len(params["qs"]), params.get("cv", 5)
    # per q one statistics pass and one TSQR per fold, then the final TSQR
    assert kinds.count("tsqr") == n_q * n_folds + 1
    lazy = est.predict(da.from_array(X, chunks=(rows, -1))).compute()
    np.testing.assert_allclose(lazy, ref.predict(X), rtol=1e-6, atol=1e-9)


@pytest.mark.slow(reason="starts or uses a LocalCluster")
def test_shrimpcv_splitter_on_a_local_cluster(data, cluster_client):
    """A shuffling splitter's folds are the in-memory ones; the fit runs on the workers."""
    from sklearn.model_selection import KFold

    X, y, _ = data
    params = dict(n_features=25, qs=(2,), cv=KFold(4, shuffle=True, random_state=1),
                  random_state=0)
    ref = SHRIMPCV(**params).fit(X, y)
    with cluster_client.as_current(), dask.config.set(scheduler=cluster_client):
        est = SHRIMPCV(**params).fit(da.from_array(X, chunks=(70, -1)),
                                     da.from_array(y, chunks=70))
    _assert_same(est, ref)


def test_default_shrimpcv_with_fewer_rows_than_columns_is_the_in_memory_fit(sync):
    """The default n_features on 200 rows in no order, with copies: every fold's
    training part has fewer distinct rows than the maps have columns, so the Dask
    fit is the in-memory fit on the rows computed to the client, bit for bit (from
    the TSQR factors the minimum-norm paths prune differently: predictions 0.9
    apart on a real set)."""
    X, y = make_friedman1(180, d=5, noise=0.3, rng=2)
    X, y = np.vstack([X, X[:20]]), np.concatenate([y, y[:20]])
    perm = np.random.default_rng(3).permutation(X.shape[0])
    X, y = X[perm], y[perm]
    ref = SHRIMPCV(random_state=0).fit(X, y)
    est = SHRIMPCV(random_state=0).fit(da.from_array(X, chunks=(70, -1)),
                                       da.from_array(y, chunks=70))
    assert est.n_features_ == ref.n_features_
    np.testing.assert_array_equal(est.support_, ref.support_)
    np.testing.assert_array_equal(est.coef_, ref.coef_)
    assert [k for k, _ in est.dask_passes_] == ["rows to the client"]
