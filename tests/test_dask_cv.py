"""sample_weight and the CV estimators on Dask arrays: rflite._dask.backend, rflite._dask.auto.

Every distributed result is compared with the in-memory fit on the same data:
weighted HARFE and ridge to 1e-10, HARFECV / RandomFeatureRidgeCV with an
int or splitter ``cv`` choosing the same parameters (their folds are the
in-memory folds).
"""


import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from rflite._dask import backend as _dask
from rflite.datasets import make_friedman1  # noqa: E402
from rflite.htp import HARFECV, HARFERegressor  # noqa: E402
from rflite.ridge import RandomFeatureRidge, RandomFeatureRidgeCV  # noqa: E402

# the shared tolerances, `rel`, the synchronous-scheduler and LocalCluster fixtures
from test_dask import CHUNKS, RTOL, rel, sync  # noqa: E402, F401
from rflite._dask import operator as _dask_operator


@pytest.fixture(scope="module")
def data():
    X, y = make_friedman1(240, d=6, noise=0.1, rng=0)
    w = np.random.default_rng(5).uniform(0.2, 3.0, 240)
    w[[3, 100, 101, 239]] = 0.0  # zero weights: dropped rows in memory
    return X, y, w


def to_dask(X, y, w, rows, dask_w=True):
    Xd = da.from_array(X, chunks=(rows, -1))
    yd = da.from_array(y, chunks=(rows,) + ((y.shape[1],) if y.ndim == 2 else ()))
    if w is None or not dask_w:
        return Xd, yd, w
    return Xd, yd, da.from_array(w, chunks=rows)


# ------------------------------------------------------------- sample_weight
@pytest.mark.parametrize("rows,dask_w", [(60, True), (70, False), (240, True)])
def test_weighted_harfe_matches_in_memory(sync, data, rows, dask_w):
    X, y, w = data
    for kw in ({}, dict(fit_intercept=False), dict(normalize=False)):
        kw = dict(n_features=150, s=15, lam=1e-4, random_state=0, **kw)
        ref = HARFERegressor(**kw).fit(X, y, sample_weight=w)
        est = HARFERegressor(**kw).fit(*to_dask(X, y, w, rows, dask_w))
        np.testing.assert_array_equal(est.support_, ref.support_)
        assert rel(est.coef_, ref.coef_) < RTOL
        assert abs(est.intercept_ - ref.intercept_) < RTOL * max(abs(ref.intercept_), 1)
        assert (est.n_iter_, est.stop_reason_) == (ref.n_iter_, ref.stop_reason_)
        # and the weights matter: the unweighted fit differs
        plain = HARFERegressor(**kw).fit(X, y)
        assert rel(plain.coef_, ref.coef_) > 1e-6


@pytest.mark.parametrize("rows", [60, 240])
def test_harfe_on_dask_counts_distinct_rows_like_memory(sync, data, rows):
    # c * w, repeated rows and the plain fit: one model on Dask, as in memory
    X, y, _ = data
    kw = dict(n_features=150, s=15, lam=1e-3, random_state=0)
    ref = HARFERegressor(**kw).fit(X, y)
    Xr, yr = np.repeat(X, 2, axis=0), np.repeat(y, 2)
    for est in (HARFERegressor(**kw).fit(*to_dask(X, y, np.full(len(y), 0.3), rows)),
                HARFERegressor(**kw).fit(*to_dask(Xr, yr, None, rows))):
        np.testing.assert_array_equal(est.support_, ref.support_)
        assert rel(est.coef_, ref.coef_) < RTOL


def test_weighted_harfe_complex_features_and_2d_y(sync, data):
    X, y, w = data
    kw = dict(n_features=100, s=12, lam=1e-4, activation="exp", random_state=2)
    ref = HARFERegressor(**kw).fit(X, y, sample_weight=w)
    est = HARFERegressor(**kw).fit(*to_dask(X, y, w, 70))
    np.testing.assert_array_equal(est.support_, ref.support_)
    assert rel(est.coef_, ref.coef_) < RTOL
    Y = np.column_stack([y, np.sin(X[:, 0])])
    kw = dict(n_features=120, s=12, lam=1e-4, random_state=1)
    ref = HARFERegressor(**kw).fit(X, Y, sample_weight=w)
    est = HARFERegressor(**kw).fit(*to_dask(X, Y, w, 70))
    for a, b in zip(est.support_, ref.support_):
        np.testing.assert_array_equal(a, b)
    assert rel(est.coef_, ref.coef_) < RTOL


@pytest.mark.parametrize("rows", CHUNKS)
def test_weighted_ridge_matches_in_memory(sync, data, rows):
    X, y, w = data
    for kw in ({}, dict(fit_intercept=False)):
        kw = dict(n_features=60, lam=1e-3, random_state=0, **kw)
        ref = RandomFeatureRidge(**kw).fit(X, y, sample_weight=w)
        est = RandomFeatureRidge(**kw).fit(*to_dask(X, y, w, rows))
        assert rel(est.coef_, ref.coef_) < RTOL
        assert abs(est.intercept_ - ref.intercept_) <= RTOL * abs(ref.intercept_)
    # integer weights = repeated rows, on Dask too
    k = np.random.default_rng(1).integers(0, 3, 240)
    est = RandomFeatureRidge(n_features=60, lam=1e-3, random_state=0).fit(
        *to_dask(X, y, k.astype(float), rows))
    rep = RandomFeatureRidge(n_features=60, lam=1e-3, random_state=0).fit(
        np.repeat(X, k, axis=0), np.repeat(y, k))
    assert rel(est.coef_, rep.coef_) < 1e-9


def test_weights_of_one_equal_no_weights(sync, data):
    X, y, _ = data
    Xd, yd, _ = to_dask(X, y, np.ones(240), 70)
    a = HARFERegressor(n_features=80, s=10, lam=1e-4, random_state=0).fit(Xd, yd)
    b = HARFERegressor(n_features=80, s=10, lam=1e-4, random_state=0).fit(
        Xd, yd, sample_weight=da.ones(240, chunks=70))
    np.testing.assert_array_equal(a.support_, b.support_)
    assert rel(b.coef_, a.coef_) < RTOL


def test_weighted_auto_choices_match_in_memory_with_the_same_folds(sync, data):
    """scale="auto", lam="auto" with weights (some zero): the in-memory folds and choice."""
    X, y, w = data
    assert np.any(w == 0)
    est = RandomFeatureRidge(n_features=60, random_state=0).fit(*to_dask(X, y, w, 70))
    ref = RandomFeatureRidge(n_features=60, random_state=0).fit(X, y, sample_weight=w)
    assert (est.scale_, est.lam_) == (ref.scale_, ref.lam_)
    np.testing.assert_allclose(est.cv_results_["mean_test_mse"],
                               ref.cv_results_["mean_test_mse"], rtol=1e-5)
    assert rel(est.coef_, ref.coef_) < 1e-8


# ------------------------------------------------------------ CV estimators
HARFE_CV = dict(n_features=80, ss=[8, 24], lams=[1e-2, 1e-5], random_state=0)


def _check_same_cv(est, ref, grid_keys, rtol):
    for key in grid_keys:
        np.testing.assert_array_equal(est.cv_results_[key], ref.cv_results_[key])
    np.testing.assert_allclose(est.cv_results_["mean_test_mse"],
                               ref.cv_results_["mean_test_mse"], rtol=rtol)
    np.testing.assert_array_equal(est.cv_results_["rank_test_mse"],
                                  ref.cv_results_["rank_test_mse"])


@pytest.mark.parametrize("rows", [70, 240])
def test_harfecv_int_cv_matches_in_memory(sync, data, rows):
    X, y, _ = data
    ref = HARFECV(cv=3, **HARFE_CV).fit(X, y)
    est = HARFECV(cv=3, **HARFE_CV).fit(*to_dask(X, y, None, rows)[:2])
    assert (est.s_, est.lam_) == (ref.s_, ref.lam_)
    _check_same_cv(est, ref, ["s", "lam"], 1e-9)
    np.testing.assert_array_equal(est.support_, ref.support_)
    assert rel(est.coef_, ref.coef_) < RTOL


@pytest.mark.slow(reason="cross-validated Dask fits, several seconds")
def test_harfecv_splitter_and_weights_match_in_memory(sync, data):
    from sklearn.model_selection import KFold

    X, y, w = data
    cv = KFold(3, shuffle=True, random_state=0)
    ref = HARFECV(cv=cv, **HARFE_CV).fit(X, y, sample_weight=w)
    est = HARFECV(cv=cv, **HARFE_CV).fit(*to_dask(X, y, w, 70))
    assert (est.s_, est.lam_) == (ref.s_, ref.lam_)
    _check_same_cv(est, ref, ["s", "lam"], 1e-9)
    np.testing.assert_array_equal(est.support_, ref.support_)
    assert rel(est.coef_, ref.coef_) < RTOL
    # an int cv with zero weights: KFold over the kept rows, as in memory
    ref = HARFECV(cv=4, **HARFE_CV).fit(X, y, sample_weight=w)
    est = HARFECV(cv=4, **HARFE_CV).fit(*to_dask(X, y, w, 60, dask_w=False))
    assert (est.s_, est.lam_) == (ref.s_, ref.lam_)
    _check_same_cv(est, ref, ["s", "lam"], 1e-9)


def test_harfecv_2d_y_chooses_per_output(sync, data):
    X, y, _ = data
    Y = np.column_stack([y, np.sin(3 * X[:, 0])])
    ref = HARFECV(cv=3, **HARFE_CV).fit(X, Y)
    est = HARFECV(cv=3, **HARFE_CV).fit(*to_dask(X, Y, None, 70)[:2])
    np.testing.assert_array_equal(est.s_, ref.s_)
    np.testing.assert_array_equal(est.lam_, ref.lam_)
    np.testing.assert_allclose(est.cv_results_["mean_test_mse"],
                               ref.cv_results_["mean_test_mse"], rtol=1e-9)
    assert rel(est.coef_, ref.coef_) < RTOL


@pytest.mark.parametrize("rows", CHUNKS)
def test_ridgecv_int_cv_matches_in_memory(sync, data, rows):
    X, y, w = data
    for sw in (None, w):
        ref = RandomFeatureRidgeCV(n_features=60, scales=[1.0], cv=5, random_state=0).fit(
            X, y, sample_weight=sw)
        est = RandomFeatureRidgeCV(n_features=60, scales=[1.0], cv=5, random_state=0).fit(
            *to_dask(X, y, sw if sw is not None else np.ones(240), rows)[:2],
            sample_weight=sw)
        assert est.lam_ == ref.lam_
        # validation errors from Gram statistics (differences): ~1e-6 relative
        _check_same_cv(est, ref, ["lam"], 1e-5)
        assert rel(est.coef_, ref.coef_) < 1e-8


def test_ridgecv_splitter_rule_and_2d_y(sync, data):
    from sklearn.model_selection import KFold

    from rflite._core.folds import KFold as OurKFold

    X, y, _ = data
    Y = np.column_stack([y, np.sin(3 * X[:, 0])])
    Xd, Yd, _ = to_dask(X, Y, np.ones(240), 70)
    lams = np.logspace(-8, 1, 10)
    a = RandomFeatureRidgeCV(n_features=60, scales=[1.0], lams=lams, rule="1se", random_state=0,
                             cv=KFold(4, shuffle=True, random_state=0)).fit(Xd, Yd)
    b = RandomFeatureRidgeCV(n_features=60, scales=[1.0], lams=lams, rule="1se", random_state=0,
                             cv=OurKFold(4, shuffle=True, random_state=0)).fit(Xd, Yd)
    ref = RandomFeatureRidgeCV(n_features=60, scales=[1.0], lams=lams, rule="1se", random_state=0,
                               cv=KFold(4, shuffle=True, random_state=0)).fit(X, Y)
    np.testing.assert_array_equal(a.lam_, ref.lam_)
    np.testing.assert_array_equal(b.lam_, ref.lam_)
    assert rel(a.coef_, ref.coef_) < 1e-8


def test_folds_are_the_in_memory_folds(sync, data):
    """An int cv gives scikit-learn's contiguous KFold blocks, as group labels per row."""
    from sklearn.model_selection import KFold

    X, y, _ = data
    Xd = da.from_array(X, chunks=(70, -1))
    folds = _dask.make_folds(5, Xd, y, None, None, None)
    lab = folds.labels.compute()[:, 0]
    for f, (tr, te) in enumerate(KFold(5).split(X)):
        groups_te = np.flatnonzero(folds.member[:, f] == 2)
        np.testing.assert_array_equal(np.flatnonzero(np.isin(lab, groups_te)), te)
        groups_tr = np.flatnonzero(folds.member[:, f] == 1)
        np.testing.assert_array_equal(np.flatnonzero(np.isin(lab, groups_tr)), tr)


@pytest.mark.parametrize("rows", [60, 70, 240])
@pytest.mark.parametrize("weighted", [False, True])
def test_int_cv_folds_are_built_chunk_by_chunk(sync, data, rows, weighted):
    """An int cv (and an unshuffled KFold) labels each chunk's rows from its offset
    among the kept rows: the in-memory folds over the rows of positive weight, with
    no m-long array on the client or in the graph."""
    from rflite._core.folds import KFold

    X, y, w = data
    m = X.shape[0]
    Xd = da.from_array(X, chunks=(rows, -1))
    Wd = da.from_array(w.reshape(-1, 1), chunks=(rows, 1)) if weighted else None
    kept = np.flatnonzero(w > 0) if weighted else np.arange(m)
    for cv in (5, KFold(4), 240 - 4 * weighted):
        folds = _dask.make_folds(cv, Xd, y, Wd, None, None)
        lab = folds.labels.compute()[:, 0]
        K = cv if isinstance(cv, int) else cv.n_splits
        for f, (tr, te) in enumerate(KFold(K).split(kept)):
            groups_te = np.flatnonzero(folds.member[:, f] == 2)
            np.testing.assert_array_equal(np.flatnonzero(np.isin(lab, groups_te)), kept[te])
            groups_tr = np.flatnonzero(folds.member[:, f] == 1)
            np.testing.assert_array_equal(np.flatnonzero(np.isin(lab, groups_tr)), kept[tr])
    with pytest.raises(ValueError, match="n_splits=241 greater than the number of samples"):
        _dask.make_folds(241, Xd, y, Wd, None, None)


def test_int_cv_labels_are_not_shipped_in_the_graph(sync):
    """The labels' graph layer holds per-chunk tasks, not an (m,) array: the old
    route built the labels on the client and embedded them (8 bytes a row)."""
    import pickle

    m = 20_000
    Xd = da.zeros((m, 6), chunks=(3000, 6))
    for W in (None, da.ones((m, 1), chunks=(3000, 1))):
        labels = _dask.make_folds(5, Xd, np.zeros(m), W, None, None).labels
        layer = dict(labels.__dask_graph__().layers[labels.name])
        assert len(pickle.dumps(layer)) < m  # the (m,) int64 labels are 8 m bytes
        assert np.bincount(labels.compute()[:, 0]).tolist() == [4000] * 5


# ------------------------------------------------------------ LocalCluster
@pytest.mark.slow(reason="starts or uses a LocalCluster")
def test_weighted_cv_on_a_cluster_matches_in_memory(cluster_client, data):
    X, y, w = data
    kw = dict(n_features=60, ss=[8], lams=[1e-2, 1e-5], random_state=0)
    ref = HARFECV(cv=3, **kw).fit(X, y, sample_weight=w)
    ref_r = RandomFeatureRidgeCV(n_features=40, scales=[1.0], cv=3, random_state=0).fit(X, y, sample_weight=w)
    with cluster_client.as_current(), dask.config.set(scheduler=cluster_client):
        Xd, yd, wd = to_dask(X, y, w, 70)
        est = HARFECV(cv=3, **kw).fit(Xd, yd, sample_weight=wd)
        est_r = RandomFeatureRidgeCV(n_features=40, scales=[1.0], cv=3, random_state=0).fit(
            Xd, yd, sample_weight=wd)
    assert (est.s_, est.lam_) == (ref.s_, ref.lam_)
    np.testing.assert_array_equal(est.support_, ref.support_)
    assert rel(est.coef_, ref.coef_) < RTOL
    assert est_r.lam_ == ref_r.lam_
    assert rel(est_r.coef_, ref_r.coef_) < 1e-8


# ------------------------------------------------- row blocks inside a task
def test_row_blocks_inside_a_chunk_give_the_same_fit(sync, data, monkeypatch):
    """Chunk tasks evaluate their features in row blocks (_State.blocks): tiny blocks, same fit."""
    X, y, w = data
    kw = dict(n_features=150, s=15, lam=1e-4, random_state=0)
    ref = HARFERegressor(**kw).fit(X, y, sample_weight=w)
    ref_r = RandomFeatureRidge(n_features=60, lam=1e-3, random_state=0).fit(X, y, sample_weight=w)
    monkeypatch.setattr(_dask_operator, "BLOCK_ENTRIES", 7 * 150)  # 7-row blocks, a short last one
    state = _dask._State(ref.feature_map_, None, None, 1)
    assert [r1 - r0 for r0, r1, _ in state.blocks(X[:20])] == [7, 7, 6]
    est = HARFERegressor(**kw).fit(*to_dask(X, y, w, 70))
    np.testing.assert_array_equal(est.support_, ref.support_)
    assert rel(est.coef_, ref.coef_) < RTOL
    est_r = RandomFeatureRidge(n_features=60, lam=1e-3, random_state=0).fit(*to_dask(X, y, w, 70))
    assert rel(est_r.coef_, ref_r.coef_) < RTOL
    # the fold statistics pass (group Gram matrices) in blocks too
    ref_cv = RandomFeatureRidgeCV(n_features=40, scales=[1.0], cv=3, random_state=0).fit(X, y, sample_weight=w)
    monkeypatch.setattr(_dask_operator, "BLOCK_ENTRIES", 7 * 40)
    est_cv = RandomFeatureRidgeCV(n_features=40, scales=[1.0], cv=3, random_state=0).fit(*to_dask(X, y, w, 70))
    assert est_cv.lam_ == ref_cv.lam_
    np.testing.assert_allclose(est_cv.cv_results_["mean_test_mse"],
                               ref_cv.cv_results_["mean_test_mse"], rtol=1e-5)


def test_cv_arguments_are_validated_on_dask(sync, data):
    X, y, _ = data
    Xd, yd, _ = to_dask(X, y, None, 70)
    with pytest.raises(ValueError, match="an int >= 1 or -1, or an Executor, got 0"):
        RandomFeatureRidgeCV(n_features=20, cv=3, n_jobs=0).fit(Xd, yd)
    with pytest.raises(ValueError, match="rule"):
        HARFECV(n_features=20, cv=3, rule="best").fit(Xd, yd)
    with pytest.raises(ValueError, match="cv"):
        RandomFeatureRidgeCV(n_features=20, cv="five").fit(Xd, yd)


def test_harfecv_default_grid_with_numpy_weights_is_bitwise_the_in_memory_grid(sync, data):
    """Default lams are shifts / sum(w): the same sum as in memory, so lam_ is equal."""
    X, y, w = data
    kw = dict(n_features=40, ss=[8], cv=3, random_state=0)
    ref = HARFECV(**kw).fit(X, y, sample_weight=w)
    est = HARFECV(**kw).fit(da.from_array(X, chunks=(70, -1)), y, sample_weight=w)
    np.testing.assert_array_equal(est.cv_results_["lam"], ref.cv_results_["lam"])
    assert est.lam_ == ref.lam_


def test_ridge_weight_scale_on_dask_is_applied_or_searched(sync):
    """A float ``scale`` is applied on Dask as in memory; a ``scales`` grid is searched
    on the same folds with the same choice."""
    from rflite.ridge import RandomFeatureRidge, RandomFeatureRidgeCV

    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, (120, 3))
    y = np.sin(2 * X[:, 0]) + X[:, 1]
    Xd, yd = to_dask(X, y, None, 40)[:2]
    ref = RandomFeatureRidge(n_features=30, scale=0.5, lam=1e-3, random_state=0).fit(X, y)
    est = RandomFeatureRidge(n_features=30, scale=0.5, lam=1e-3, random_state=0).fit(Xd, yd)
    assert est.scale_ == 0.5
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-9, atol=1e-12)
    kw = dict(n_features=20, scales=[0.5, 1.0, 3.0], cv=3, random_state=0)
    ref = RandomFeatureRidgeCV(**kw).fit(X, y)
    est = RandomFeatureRidgeCV(**kw).fit(Xd, yd)
    assert (est.scale_, est.lam_) == (ref.scale_, ref.lam_)
    np.testing.assert_array_equal(est.cv_results_["scale"], ref.cv_results_["scale"])
    np.testing.assert_allclose(est.cv_results_["mean_test_mse"],
                               ref.cv_results_["mean_test_mse"], rtol=1e-6)
    assert rel(est.coef_, ref.coef_) < 1e-8
