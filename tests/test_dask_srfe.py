"""SRFE fitted on Dask arrays: rflite._dask.srfe.

Every distributed fit is compared with the in-memory fit on the same data
(same seed): the same BPDN problem up to the order of the sums over rows, so
the same support and coefficients to 1e-10 (about 1e-12 at worst, with
weights and normalised columns).
"""

import warnings

import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from rflite._dask.backend import DaskFeatureOperator  # noqa: E402
from rflite.bp import SRFECV, SRFERegressor  # noqa: E402
from rflite.features import random_feature_map  # noqa: E402

# the shared tolerances, `rel`, the synchronous-scheduler and LocalCluster fixtures,
# and the weighted Friedman-1 data (zero weights included) of the Dask CV tests
from test_dask import RTOL, rel, sync  # noqa: E402, F401
from test_dask_cv import data, to_dask  # noqa: E402, F401


def _model(**kw):
    return SRFERegressor(**{"n_features": 60, "eta": 0.5, "random_state": 0, **kw})


def _assert_same(dist, mem, X):
    np.testing.assert_array_equal(dist.support_, mem.support_)
    assert rel(dist.coef_, mem.coef_) <= RTOL
    np.testing.assert_allclose(dist.intercept_, mem.intercept_, rtol=RTOL, atol=1e-12)
    assert dist.result_.bpdn.stop_reason == mem.result_.bpdn.stop_reason
    lazy = dist.predict(da.from_array(X, chunks=(70, -1)))
    np.testing.assert_allclose(lazy.compute(), mem.predict(X), rtol=1e-9, atol=1e-12)


#: (row chunks, options, weighted): every chunking on the plain fit, each
#: option once (weighted), chunks that divide m = 240, do not, and one chunk
CASES = [(60, {}, False), (70, {}, False), (240, {}, False), (60, {}, True),
         (70, {"normalize": True}, True),
         (70, {"fit_intercept": False, "eta": 1.5}, True),
         (240, {"s": 8, "refit": "lstsq"}, True)]


@pytest.mark.slow(reason="Dask-vs-memory fits, several seconds each")
@pytest.mark.parametrize("rows,kw,weighted", CASES)
def test_srfe_on_dask_equals_in_memory(data, rows, kw, weighted, sync):
    X, y, w = data
    w = w if weighted else None
    mem = _model(**kw).fit(X, y, sample_weight=w)
    assert mem.result_.bpdn.stop_reason == "homotopy"  # a certified, sparse solve
    Xd, yd, wd = to_dask(X, y, w, rows)
    dist = _model(**kw).fit(Xd, yd, sample_weight=wd)
    _assert_same(dist, mem, X)
    assert dist.eta_ == mem.eta_
    assert dist.dask_passes_ and dist.dask_fit_seconds_ > 0


def test_srfe_on_dask_2d_y_and_numpy_weights(data, sync):
    X, y, w = data
    Y = np.column_stack([y, np.sin(X[:, 0])])
    mem = _model().fit(X, Y, sample_weight=w)
    Xd, Yd, _ = to_dask(X, Y, None, 70)
    dist = _model().fit(Xd, Yd, sample_weight=w)  # a NumPy weight vector
    np.testing.assert_array_equal(dist.support_, mem.support_)
    assert rel(dist.coef_, mem.coef_) <= RTOL


@pytest.mark.slow(reason="starts or uses a LocalCluster")
def test_srfe_on_a_local_cluster(data, cluster_client):
    X, y, w = data
    mem = _model(normalize=True).fit(X, y, sample_weight=w)
    with cluster_client.as_current(), dask.config.set(scheduler=cluster_client):
        Xd, yd, wd = to_dask(X, y, w, 70)
        dist = _model(normalize=True).fit(Xd, yd, sample_weight=wd)
        _assert_same(dist, mem, X)


@pytest.mark.slow(reason="cross-validated Dask fits, several seconds each")
@pytest.mark.parametrize("weighted,rows", [(False, 70), (True, 240)])
def test_srfecv_on_dask_chooses_like_in_memory(data, weighted, rows, sync):
    """SRFECV(cv=3): the in-memory folds, one path per fold, the same choice and fit."""
    X, y, w = data
    w = w if weighted else None
    kw = dict(n_features=60, cv=3, random_state=0)
    ref = SRFECV(**kw).fit(X, y, sample_weight=w)
    Xd, yd, wd = to_dask(X, y, w, rows)
    est = SRFECV(**kw).fit(Xd, yd, sample_weight=wd)
    assert est.eta_ == pytest.approx(ref.eta_, rel=1e-12)
    np.testing.assert_allclose(est.cv_results_["mean_test_mse"],
                               ref.cv_results_["mean_test_mse"], rtol=1e-8)
    np.testing.assert_array_equal(est.support_, ref.support_)
    assert rel(est.coef_, ref.coef_) <= 1e-8
    assert est.result_.bpdn.stop_reason == ref.result_.bpdn.stop_reason


@pytest.mark.slow(reason="eta search on Dask and in memory, over 10 s")
def test_default_srfe_chooses_eta_like_in_memory(data, sync):
    """eta="auto" on Dask validates on the in-memory folds of the distinct rows
    (here all five: a fifth is under MIN_HOLDOUT_ROWS rows) and chooses alike."""
    X, y, _ = data
    est = SRFERegressor(n_features=60, random_state=0).fit(*to_dask(X, y, None, 70)[:2])
    ref = SRFERegressor(n_features=60, random_state=0).fit(X, y)
    assert len([k for k in ref.cv_results_ if k.startswith("split")]) == 5
    assert est.eta_ == pytest.approx(ref.eta_, rel=1e-12)
    np.testing.assert_allclose(est.cv_results_["mean_test_mse"],
                               ref.cv_results_["mean_test_mse"], rtol=1e-8)
    assert not ref.mean_model_
    np.testing.assert_array_equal(est.support_, ref.support_)
    assert rel(est.coef_, ref.coef_) <= 1e-8


def test_default_srfe_on_noise_is_the_mean_on_dask(sync):
    """The in-memory test against the training mean runs on Dask too (``mean_model_``)."""
    rng = np.random.default_rng(0)
    X, y = rng.uniform(-1, 1, (600, 2)), rng.normal(size=600)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = SRFERegressor(n_features=20, random_state=0).fit(X, y)
        est = SRFERegressor(n_features=20, random_state=0).fit(*to_dask(X, y, None, 100)[:2])
    assert ref.mean_model_ and est.mean_model_
    np.testing.assert_allclose(np.asarray(est.predict(X)), ref.predict(X), atol=1e-14)


def test_srfe_bad_dask_input_is_named(data, sync):
    X, y, _ = data
    with pytest.raises(ValueError, match="X"):
        _model().fit(da.from_array(X, chunks=(70, 3)), da.from_array(y, chunks=70))
    with pytest.raises(ValueError, match="eta"):
        SRFERegressor(n_features=20, eta=-1.0).fit(*to_dask(X, y, None, 70)[:2])


def test_weighted_operator_products_are_one_matrix(data, sync):
    """``A c``, ``A[:, S]`` and ``A^* r`` of a row-weighted operator are products
    with the same matrix :math:`\\sqrt{W} A` (``A c`` and the columns ignored the
    weights before)."""
    X, y, w = data
    fmap = random_feature_map(6, 30, q=2, rng=1)
    Xd, _, wd = to_dask(X, y, w, 70)
    op = DaskFeatureOperator(fmap, Xd, row_weight=wd)
    A = np.sqrt(w)[:, None] * fmap.transform(X)
    c = np.random.default_rng(2).normal(size=30)
    r = np.random.default_rng(3).normal(size=240)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(op.matvec(c).compute(), A @ c, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(op.columns([1, 7]).compute(), A[:, [1, 7]], rtol=1e-12,
                                   atol=1e-14)
        np.testing.assert_allclose(op.rmatvec(r), A.T @ r, rtol=1e-12, atol=1e-12)



@pytest.mark.parametrize("rows,weighted,eta,how", [(60, False, 2.0, "barrier"),
                                                  (70, True, 2.0, "barrier"),
                                                  (240, False, 2.0, "barrier"),
                                                  (70, False, 1.0, "homotopy")])
@pytest.mark.slow(reason="Dask-vs-memory fits, several seconds each")
def test_complex_srfe_on_dask_equals_in_memory(data, rows, weighted, eta, how, sync):
    """Complex features: the barrier's point is only tol-optimal (the two fits
    agreed to 2.6e-8); both are now their support's exact KKT solution.  At
    eta = 1 the barrier stalls and both follow the solution path."""
    X, y, w = data
    w = w if weighted else None
    mem = _model(activation="exp", eta=eta).fit(X, y, sample_weight=w)
    assert mem.result_.bpdn.stop_reason == how  # certified
    assert mem.result_.bpdn.duality_gap < 1e-10
    Xd, yd, wd = to_dask(X, y, w, rows)
    dist = _model(activation="exp", eta=eta).fit(Xd, yd, sample_weight=wd)
    _assert_same(dist, mem, X)


def test_unreachable_eta_on_dask_is_found_up_front(data, sync):
    """240 rows, 60 complex features, eta below the least-squares residual: in
    memory "sigma_unreachable" at once; on Dask SPGL1 ran to max_iter (9 min),
    then warned.  Now one Gram pass decides, and the fits agree."""
    from rflite.bp import SigmaUnreachableWarning

    X, y, _ = data
    with pytest.warns(SigmaUnreachableWarning):
        mem = _model(activation="exp", eta=0.3, max_iter=300).fit(X, y)
    Xd, yd, _ = to_dask(X, y, None, 70)
    with pytest.warns(SigmaUnreachableWarning) as record:
        dist = _model(activation="exp", eta=0.3, max_iter=300).fit(Xd, yd)
    # attributed to the user's fit call, as in memory (was rflite's decorator)
    assert record[0].filename == __file__
    assert dist.result_.bpdn.stop_reason == mem.result_.bpdn.stop_reason == "sigma_unreachable"
    assert rel(dist.coef_, mem.coef_) <= RTOL


@pytest.mark.slow(reason="starts or uses a LocalCluster")
def test_complex_srfe_on_a_local_cluster(data, cluster_client):
    X, y, w = data
    mem = _model(activation="exp", eta=2.0).fit(X, y)
    with cluster_client.as_current(), dask.config.set(scheduler=cluster_client):
        Xd, yd, _ = to_dask(X, y, None, 70)
        dist = _model(activation="exp", eta=2.0).fit(Xd, yd)
        _assert_same(dist, mem, X)


@pytest.mark.slow(reason="full fits on Dask and in memory, over 5 s")
def test_uncertified_srfe_warns_in_memory_and_on_dask(sync, monkeypatch):
    """200 rows of 300 sin features at eta = 0.05: the homotopy cannot
    certify (the centred dictionary's condition is ~1e14) and SPGL1 stops on
    its root test, gap 7.7e-5 against tol 1e-6.  The estimator returned that
    point silently (the gap only in ``result_``); now it warns, and a
    certified fit does not.  On Dask the same check follows the final solve
    (shown on a certified solve relabelled as stopped at ``max_iter``: the
    uncertified solve itself takes ~25 s on the synchronous scheduler)."""
    from rflite import bp
    from rflite.bp import UncertifiedResultWarning
    from rflite.datasets import make_friedman1

    X, y = make_friedman1(200, d=5, noise=0.1, rng=0)
    kw = dict(n_features=300, eta=0.05, random_state=0)
    with pytest.warns(UncertifiedResultWarning, match="root_found") as record:
        mem = SRFERegressor(**kw).fit(X, y)
    assert record[0].filename == __file__
    assert not mem.result_.bpdn.certified and mem.result_.bpdn.duality_gap > mem.tol
    with warnings.catch_warnings():
        warnings.simplefilter("error", UncertifiedResultWarning)
        ok = SRFERegressor(**dict(kw, eta=0.5)).fit(X, y)
        assert ok.result_.bpdn.certified
        Xd, yd = da.from_array(X, chunks=(70, -1)), da.from_array(y, chunks=70)
        SRFERegressor(**dict(kw, eta=0.5)).fit(Xd, yd)
    solve = bp._srfe

    def stopped(*args, **kwargs):
        res = solve(*args, **kwargs)
        return res._replace(bpdn=res.bpdn._replace(stop_reason="max_iter"))

    monkeypatch.setattr(bp, "_srfe", stopped)
    with pytest.warns(UncertifiedResultWarning, match="max_iter") as record:
        SRFERegressor(**dict(kw, eta=0.5)).fit(Xd, yd)
    assert record[0].filename == __file__


@pytest.mark.slow(reason="cross-validated Dask fits, several seconds each")
def test_complex_srfecv_on_dask_chooses_like_in_memory(sync):
    """Complex features with the automatic eta (a ValueError before): the
    Dask folds solve the same grid as memory and choose the same eta."""
    from test_bp_complex import _ThirdFolds, complex_auto_data

    X, y = complex_auto_data()
    kw = dict(n_features=30, activation="exp", cv=_ThirdFolds(), random_state=0)
    mem = SRFECV(**kw).fit(X, y)
    dist = SRFECV(**kw).fit(da.from_array(X, chunks=(50, -1)), da.from_array(y, chunks=50))
    np.testing.assert_allclose(dist.eta_, mem.eta_, rtol=1e-12)  # the grid's sd: rounding
    np.testing.assert_allclose(dist.cv_results_["mean_test_mse"],
                               mem.cv_results_["mean_test_mse"], rtol=1e-8)
    _assert_same(dist, mem, X)
