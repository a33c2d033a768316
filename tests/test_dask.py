"""Fits and predictions on Dask arrays: rflite._dask.backend.

Every distributed result is compared with the in-memory path on the same
data, on the synchronous scheduler and on a 2-process LocalCluster.
"""

import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from rflite._dask import backend as _dask
from rflite._dask.backend import DaskFeatureOperator  # noqa: E402
from rflite.bp import SRFERegressor  # noqa: E402
from rflite.datasets import make_friedman1  # noqa: E402
from rflite.features import random_feature_map  # noqa: E402
from rflite.htp import HARFERegressor, harfe  # noqa: E402
from rflite.ridge import RandomFeatureRidge  # noqa: E402

RTOL = 1e-10
#: row chunks: divides m = 240, does not divide it, a single chunk
CHUNKS = [60, 70, 240]


def rel(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-300))


@pytest.fixture
def sync():
    with dask.config.set(scheduler="synchronous"):
        yield


@pytest.fixture
def on_cluster(cluster_client):
    with cluster_client.as_current(), dask.config.set(scheduler=cluster_client):
        yield cluster_client


@pytest.fixture(scope="module")
def data():
    X, y = make_friedman1(240, d=6, noise=0.1, rng=0)
    return X, y


def to_dask(X, y, rows):
    return da.from_array(X, chunks=(rows, -1)), da.from_array(y, chunks=(rows,))


def sorted_rows(X, y):
    """The distinct rows of ``(X, y)`` in ``np.unique`` order, the order SHRIMP's fits
    sort their rows into (``imp._collapse_rows``; on Dask ``canonical_rows``)."""
    key = np.unique(np.column_stack([X, y]), axis=0)
    return np.ascontiguousarray(key[:, :-1]), np.ascontiguousarray(key[:, -1])


# ------------------------------------------------------------- import policy
@pytest.mark.slow(reason="runs in a subprocess")
def test_import_rflite_does_not_import_dask():
    code = ("import sys, rflite, rflite.htp, rflite.ridge, rflite.imp, rflite.bp, "
            "rflite.metropolis, rflite.greedy, rflite._dask.backend\n"
            "bad = [m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')]\n"
            "assert not bad, bad\n")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(_dask.__file__)))
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


def test_is_dask_array():
    assert _dask.is_dask_array(da.zeros(3))
    assert not _dask.is_dask_array(np.zeros(3))


# ---------------------------------------------------------------- operator
@pytest.mark.parametrize("activation", ["sin", "exp", "fourier"])
@pytest.mark.parametrize("rows", CHUNKS)
def test_operator_matches_dense(sync, data, activation, rows):
    X, y = data
    fmap = random_feature_map(6, 30, q=2, activation=activation, rng=1)
    A = fmap.transform(X)
    n = A.shape[1]
    mean = A.mean(axis=0)
    scale = np.linspace(0.5, 2.0, n)
    Ac = (A - mean) * scale
    Xd, yd = to_dask(X, y, rows)
    op = DaskFeatureOperator(fmap, Xd, col_mean=mean, col_scale=scale)
    assert op.shape == A.shape and op.dtype == A.dtype
    assert rel(op.rmatvec(yd), Ac.conj().T @ y) < 1e-12
    assert rel(op.rmatvec(y), Ac.conj().T @ y) < 1e-12
    c = np.zeros(n, dtype=A.dtype)
    c[[1, 5, 7]] = [1.0, -2.0, 0.5]
    mv = op.matvec(c)
    assert _dask.is_dask_array(mv) and mv.chunks[0] == Xd.chunks[0]
    assert rel(mv.compute(), Ac @ c) < 1e-12
    S = np.array([3, 0, 9, 4])
    cols = op.columns(S)
    assert _dask.is_dask_array(cols) and cols.chunks[0] == Xd.chunks[0]
    assert rel(cols.compute(), Ac[:, S]) < 1e-15
    assert rel(op.column_norms(), np.linalg.norm(Ac, axis=0)) < 1e-12
    G, b = op.gram(S, yd, rows=np.array([1, 3]))
    assert rel(G, Ac[:, S[[1, 3]]].conj().T @ Ac[:, S]) < 1e-12
    assert rel(b, Ac[:, S[[1, 3]]].conj().T @ y) < 1e-12
    assert rel(op.gram(S), Ac[:, S].conj().T @ Ac[:, S]) < 1e-12
    g, rr = op.gradient(yd, S, c[S])
    r = y - Ac[:, S] @ c[S]
    assert rel(g, Ac.conj().T @ r) < 1e-12
    assert abs(rr - np.vdot(r, r).real) < 1e-10 * rr
    assert abs(op.residual_norm(yd, S, c[S]) - np.linalg.norm(r)) < 1e-10 * np.linalg.norm(r)
    Gf, Bf = op.full_gram(yd)
    assert rel(Gf, Ac.conj().T @ Ac) < 1e-12 and rel(Bf[:, 0], Ac.conj().T @ y) < 1e-12


def test_chunk_kernels_build_the_dense_features(sync, data):
    """The per-chunk features are the in-memory kernel's, entry for entry."""
    X, _ = data
    fmap = random_feature_map(6, 30, q=2, activation="sin", rng=1)
    Xd = da.from_array(X, chunks=(70, -1))
    cols = DaskFeatureOperator(fmap, Xd).columns(np.arange(30)).compute()
    np.testing.assert_array_equal(cols, fmap.transform(X))


# ------------------------------------------------------------------ HARFE
@pytest.mark.parametrize("activation", ["sin", "exp"])
@pytest.mark.parametrize("rows", CHUNKS)
def test_harfe_function_matches_in_memory(sync, data, activation, rows):
    X, y = data
    fmap = random_feature_map(6, 200, q=2, activation=activation, rng=2)
    A = fmap.transform(X)
    norms = np.linalg.norm(A, axis=0)
    ref = harfe(A / norms, y, s=20, lam=1e-4, max_iter=30)
    Xd, yd = to_dask(X, y, rows)
    res = harfe(DaskFeatureOperator(fmap, Xd, col_scale=1 / norms), yd, s=20, lam=1e-4,
                max_iter=30)
    np.testing.assert_array_equal(res.support, ref.support)
    assert rel(res.coef, ref.coef) < RTOL
    assert (res.n_iter, res.stop_reason) == (ref.n_iter, ref.stop_reason)
    np.testing.assert_allclose(res.residuals, ref.residuals, rtol=1e-8)


def test_harfe_function_tol_max_iter_c0_and_zero_target(sync, data):
    X, y = data
    fmap = random_feature_map(6, 100, q=2, rng=3)
    A = fmap.transform(X)
    Xd, yd = to_dask(X, y, 70)
    op = DaskFeatureOperator(fmap, Xd)
    for kw in (dict(max_iter=2), dict(tol=0.5), dict(max_iter=3, c0=np.eye(100)[4])):
        ref = harfe(A, y, s=10, lam=1e-3, **kw)
        res = harfe(op, yd, s=10, lam=1e-3, **kw)
        np.testing.assert_array_equal(res.support, ref.support)
        assert rel(res.coef, ref.coef) < RTOL
        assert (res.n_iter, res.stop_reason) == (ref.n_iter, ref.stop_reason), kw
        np.testing.assert_allclose(res.residuals, ref.residuals, rtol=1e-8)
    zero = harfe(op, da.zeros(240, chunks=70), s=5, lam=0.0)
    assert zero.stop_reason == "zero_target" and not zero.coef.any()


@pytest.mark.parametrize("activation,rows", [("sin", 60), ("sin", 70), ("sin", 240),
                                             ("exp", 70), ("fourier", 70)])
def test_harfe_regressor_matches_in_memory(sync, data, activation, rows):
    X, y = data
    kw = dict(n_features=150, s=15, lam=1e-4, q=2, activation=activation, random_state=0)
    ref = HARFERegressor(**kw).fit(X, y)
    Xd, yd = to_dask(X, y, rows)
    est = HARFERegressor(**kw).fit(Xd, yd)
    np.testing.assert_array_equal(est.support_, ref.support_)
    assert rel(est.coef_, ref.coef_) < RTOL
    assert abs(est.intercept_ - ref.intercept_) < RTOL * abs(ref.intercept_)
    assert (est.n_iter_, est.stop_reason_) == (ref.n_iter_, ref.stop_reason_)
    pred = est.predict(Xd)
    assert _dask.is_dask_array(pred) and pred.chunks[0] == Xd.chunks[0]
    assert rel(pred.compute(), ref.predict(X)) < 1e-10
    # a NumPy y with a Dask X works too
    est2 = HARFERegressor(**kw).fit(Xd, y)
    np.testing.assert_array_equal(est2.coef_, est.coef_)


def test_harfe_regressor_options(sync, data):
    X, y = data
    Y = np.column_stack([y, np.sin(X[:, 0])])
    Xd = da.from_array(X, chunks=(70, -1))
    Yd = da.from_array(Y, chunks=(70, 2))
    for kw in (dict(fit_intercept=False), dict(normalize=False), {}):
        kw = dict(n_features=120, s=12, lam=1e-4, random_state=1, **kw)
        ref = HARFERegressor(**kw).fit(X, Y)
        est = HARFERegressor(**kw).fit(Xd, Yd)
        np.testing.assert_array_equal(est.support_, ref.support_)
        assert rel(est.coef_, ref.coef_) < RTOL
        assert rel(est.intercept_ + 1, ref.intercept_ + 1) < RTOL
        assert est.predict(Xd).shape == (240, 2)


def test_verbose_dask_fits_report_every_pass(sync, data, capsys):
    """A long Dask fit is not silent: one numbered line per distributed pass."""
    X, y = data
    Xd, yd = to_dask(X, y, 70)
    kw = dict(n_features=120, s=12, lam=1e-4, max_iter=2, tol=0.0, random_state=1)
    est = HARFERegressor(**kw, verbose=1).fit(Xd, yd)
    lines = [ln for ln in capsys.readouterr().err.splitlines() if "pass" in ln]
    kinds = [ln.split(":")[1].split(",")[0].strip() for ln in lines]
    # validation + means first, then one A^T r pass per iteration (and support Grams)
    assert kinds[0] == "first" and kinds.count("gradient") == 2
    assert kinds == [kind for kind, _ in est.dask_passes_]
    assert all(ln.startswith("[HARFERegressor] pass ") and "4 chunks" in ln for ln in lines)
    assert [int(ln.split()[2].rstrip(":")) for ln in lines] == list(range(1, len(lines) + 1))
    from rflite.imp import SHRIMPCV

    for cls, kw2 in ((RandomFeatureRidge, dict(n_features=50, lam=1e-3)),
                     (SRFERegressor, dict(n_features=50, eta=0.5)),
                     (SHRIMPCV, dict(n_features=25, qs=(2,)))):
        cls(**kw2, random_state=0, verbose=1).fit(Xd, yd)
        assert f"[{cls.__name__}] pass 1: " in capsys.readouterr().err
    HARFERegressor(**kw).fit(Xd, yd)
    assert capsys.readouterr().err == ""


def test_same_seed_same_result(sync, data):
    X, y = data
    Xd, yd = to_dask(X, y, 70)
    a = HARFERegressor(n_features=100, s=10, lam=1e-4, random_state=5).fit(Xd, yd)
    b = HARFERegressor(n_features=100, s=10, lam=1e-4, random_state=5).fit(Xd, yd)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    # another chunking sums in another order: the same fit to rounding
    c = HARFERegressor(n_features=100, s=10, lam=1e-4, random_state=5).fit(*to_dask(X, y, 33))
    np.testing.assert_array_equal(a.support_, c.support_)
    assert rel(a.coef_, c.coef_) < RTOL


def test_out_of_core_memmap(sync, data, tmp_path):
    """Data on disk (a .npy memmap behind the Dask array), the local scheduler."""
    X, y = data
    np.save(tmp_path / "X.npy", X)
    Xm = np.load(tmp_path / "X.npy", mmap_mode="r")
    Xd = da.from_array(Xm, chunks=(70, -1))
    kw = dict(n_features=100, s=10, lam=1e-4, random_state=0)
    ref = HARFERegressor(**kw).fit(X, y)
    est = HARFERegressor(**kw).fit(Xd, da.from_array(y, chunks=70))
    np.testing.assert_array_equal(est.support_, ref.support_)
    assert rel(est.coef_, ref.coef_) < RTOL


# ------------------------------------------------------------------ ridge
@pytest.mark.parametrize("activation,rows", [("sin", 60), ("sin", 70), ("sin", 240),
                                             ("exp", 70)])
def test_ridge_matches_in_memory(sync, data, activation, rows):
    X, y = data
    kw = dict(n_features=60, lam=1e-4, q=2, activation=activation, random_state=0)
    ref = RandomFeatureRidge(**kw).fit(X, y)
    Xd, yd = to_dask(X, y, rows)
    est = RandomFeatureRidge(**kw).fit(Xd, yd)
    assert rel(est.coef_, ref.coef_) < RTOL
    assert abs(est.intercept_ - ref.intercept_) < RTOL * abs(ref.intercept_)
    # validation + means, then the Gram
    assert [kind for kind, _ in est.dask_passes_] == ["first", "full_gram"]
    assert rel(est.predict(Xd).compute(), ref.predict(X)) < 1e-10


# ----------------------------------------------------------------- SHRIMP
@pytest.mark.parametrize("rows,refit", [(60, True), (70, False), (240, True)])
def test_shrimp_matches_in_memory(sync, rows, refit):
    """Well-conditioned dictionary (q = 2): the TSQR path equals the in-memory path."""
    from rflite.imp import SHRIMPRegressor

    X, y = sorted_rows(*make_friedman1(400, d=6, noise=0.1, rng=0))
    kw = dict(n_features=30, q=2, subsets="random", refit=refit, random_state=0)
    ref = SHRIMPRegressor(**kw).fit(X, y)
    est = SHRIMPRegressor(**kw).fit(*to_dask(X, y, rows))
    assert est.best_step_ == ref.best_step_
    np.testing.assert_array_equal(est.support_, ref.support_)
    assert rel(est.coef_, ref.coef_) < 1e-9
    assert abs(est.intercept_ - ref.intercept_) < 1e-9 * abs(ref.intercept_)
    # the prediction check's centre (MagnitudeWarning), as in memory
    np.testing.assert_allclose(est.target_mean_, ref.target_mean_, rtol=1e-12)
    np.testing.assert_allclose(est.path_.val_mse, ref.path_.val_mse, rtol=1e-9)
    np.testing.assert_allclose(est.path_.train_mse, ref.path_.train_mse, rtol=1e-9)
    np.testing.assert_array_equal(est.validation_indices_, ref.validation_indices_)
    kinds = [k for k, _ in est.dask_passes_]
    assert kinds == ["split_sums", "tsqr"] + (["tsqr"] if refit else [])


@pytest.mark.parametrize("rows,refit,dask_w", [(60, "auto", True), (70, "none", False),
                                               (240, "min_norm", True)])
def test_weighted_shrimp_matches_in_memory(sync, rows, refit, dask_w):
    """sample_weight on Dask: weighted means, sqrt(w) rows in the TSQR, validation
    error per unit weight, as the in-memory weighted fit (distinct sorted rows and
    positive weights, so that the two draw the same split)."""
    from rflite.imp import SHRIMPRegressor

    X, y = sorted_rows(*make_friedman1(400, d=6, noise=0.1, rng=0))
    w = np.random.default_rng(7).uniform(0.3, 3.0, X.shape[0])
    kw = dict(n_features=30, q=2, subsets="random", refit=refit, random_state=0)
    ref = SHRIMPRegressor(**kw).fit(X, y, sample_weight=w)
    Xd, yd = to_dask(X, y, rows)
    wd = da.from_array(w, chunks=rows) if dask_w else w
    est = SHRIMPRegressor(**kw).fit(Xd, yd, sample_weight=wd)
    assert est.best_step_ == ref.best_step_
    np.testing.assert_array_equal(est.support_, ref.support_)
    assert est.refit_ == ref.refit_
    # a guarded ridge refit's penalty comes from power iterations started from
    # another vector on the factors (fit_shrimp's notes: penalties to ~1e-3)
    tol = 1e-3 if ref.refit_ == "ridge" else 1e-9
    assert rel(est.coef_, ref.coef_) < tol
    assert abs(est.intercept_ - ref.intercept_) < tol * abs(ref.intercept_)
    np.testing.assert_allclose(est.path_.val_mse, ref.path_.val_mse, rtol=1e-9)
    np.testing.assert_allclose(est.validation_mse_, ref.validation_mse_, rtol=tol)
    np.testing.assert_array_equal(est.validation_indices_, ref.validation_indices_)
    if refit == "auto":
        # rule="1se_ridge": one pass for the validation rows' error moments
        # (here it moves the penalty 10x, in both fits alike), one for the
        # paired test against the mean
        assert [k for k, _ in est.dask_passes_] == ["split_sums", "tsqr",
                                                    "val_error_moments", "paired_moments",
                                                    "tsqr"]
    # and the weights matter: the unweighted fit differs
    plain = SHRIMPRegressor(**kw).fit(Xd, yd)
    assert rel(plain.path_.val_mse, est.path_.val_mse) > 1e-3


def test_tsqr_factor(sync, data):
    """The TSQR tree gives R with R^T R = [A, y]^T [A, y] (split rows apart)."""
    X, y = data
    fmap = random_feature_map(6, 12, q=2, activation="fourier", rng=4)
    A = fmap.transform(X)
    Xd, yd = to_dask(X, y, 17)  # 15 chunks: two levels of the tree
    is_val = np.zeros(240, bool)
    is_val[::7] = True
    V = da.from_array(is_val.reshape(-1, 1), chunks=(Xd.chunks[0], (1,)))
    op = DaskFeatureOperator(fmap, Xd)
    cols = np.arange(24)
    w = np.random.default_rng(6).uniform(0.5, 2.0, 240)
    Wd = da.from_array(w.reshape(-1, 1), chunks=(Xd.chunks[0], (1,)))
    R_tr, R_val = _dask._tsqr(Xd, yd.reshape(-1, 1), V, Wd, op._state_node(), cols,
                              np.zeros(1), True, split_every=4)
    for R, rows in ((R_tr, ~is_val), (R_val, is_val)):
        # rows scaled by sqrt(w): R^T R is the weighted Gram
        M = np.sqrt(w[rows])[:, None] * np.column_stack([A[rows], y[rows]])
        assert np.allclose(np.triu(R), R)
        assert rel(R.T @ R, M.T @ M) < 1e-12


# ------------------------------------------------------------- BPDN / SRFE
def test_bpdn_and_srfe_on_the_dask_operator(sync):
    from rflite.bp import bpdn, srfe

    X, y = make_friedman1(120, d=6, noise=0.1, rng=0)
    fmap = random_feature_map(6, 200, q=2, rng=0)
    A = fmap.transform(X)
    norms = np.linalg.norm(A, axis=0)
    A /= norms
    op = _dask.as_linear_operator(
        DaskFeatureOperator(fmap, da.from_array(X, chunks=(50, -1)), col_scale=1 / norms))
    sigma = 0.1 * np.linalg.norm(y)
    ref, res = bpdn(A, y, sigma), bpdn(op, y, sigma)
    assert res.stop_reason == ref.stop_reason
    assert rel(res.coef, ref.coef) < RTOL
    ref, res = srfe(A, y, eta=sigma), srfe(op, y, eta=sigma)
    np.testing.assert_array_equal(np.flatnonzero(res.coef), np.flatnonzero(ref.coef))
    assert rel(res.coef, ref.coef) < RTOL


# ------------------------------------------------------ prediction (others)
def test_every_estimator_predicts_lazily(sync, data):
    from rflite.bp import SRFERegressor
    from rflite.imp import SHRIMPRegressor
    from rflite.metropolis import ARFFRegressor

    X, y = data
    Xd = da.from_array(X, chunks=(70, -1))
    for est in (SHRIMPRegressor(n_features=60, random_state=0),
                SRFERegressor(n_features=60, random_state=0),
                ARFFRegressor(n_features=8, n_iter=3, random_state=0)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, y)
        pred = est.predict(Xd)
        assert _dask.is_dask_array(pred), type(est).__name__
        # the same features; only the rounding of A_S c (BLAS on a chunk, not on all
        # rows) differs, bounded by eps |A_S| |c| (SHRIMP's interpolant has huge c)
        bound = np.abs(est.feature_map_.columns(X, est.support_)) @ np.abs(est.coef_)
        assert np.all(np.abs(pred.compute() - est.predict(X)) <= 1e-13 * bound + 1e-12)


# -------------------------------------------------------------- bad input
def _boom(block):
    raise RuntimeError("computed before the input was checked")


def _untouchable(shape, chunks):
    """A Dask array whose chunks raise if anything computes them."""
    return da.zeros(shape, chunks=chunks).map_blocks(_boom, dtype=float)


def test_bad_input_raises_before_computing(sync):
    est = HARFERegressor(n_features=20, s=5)
    y = _untouchable((100,), 50)
    with pytest.raises(ValueError, match=r"X is chunked along its columns.*rechunk"):
        est.fit(_untouchable((100, 4), (50, 2)), y)
    X = _untouchable((100, 4), (50, 4))
    with pytest.raises(ValueError, match=r"y must be chunked along rows like X"):
        est.fit(X, _untouchable((100,), 40))
    with pytest.raises(ValueError, match=r"y must have length m=100"):
        est.fit(X, _untouchable((90,), 45))
    Xn = X[da.from_array(np.ones(100, bool), chunks=50)]
    assert np.isnan(Xn.shape[0])
    with pytest.raises(ValueError, match=r"X has unknown chunk sizes.*compute_chunk_sizes"):
        est.fit(Xn, y)
    with pytest.raises(ValueError, match=r"X must be real"):
        est.fit(X.astype(complex), y)
    # sample_weight: checked on the client (NumPy) or on the weights alone (Dask),
    # before any chunk of X or y is computed
    with pytest.raises(ValueError, match=r"Negative values in data passed to sample_weight"):
        est.fit(X, y, sample_weight=-np.ones(100))
    with pytest.raises(ValueError, match=r"sample_weight.shape == \(90,\), expected \(100,\)"):
        est.fit(X, y, sample_weight=np.ones(90))
    with pytest.raises(ValueError, match=r"sample_weight must be chunked along rows like X"):
        est.fit(X, y, sample_weight=_untouchable((100,), 40))
    with pytest.raises(ValueError, match=r"sample_weight has unknown chunk sizes"):
        est.fit(X, y, sample_weight=da.ones(100, chunks=50)[da.from_array(
            np.ones(100, bool), chunks=50)])
    w = da.from_array(np.r_[np.ones(99), -2.0], chunks=50)
    with pytest.raises(ValueError, match=r"Negative values in data passed to sample_weight "
                                         r"\(min -2\)"):
        est.fit(X, y, sample_weight=w)
    with pytest.raises(ValueError, match=r"sample_weight contains NaN"):
        est.fit(X, y, sample_weight=da.from_array(np.r_[np.ones(99), np.nan], chunks=50))
    with pytest.raises(ValueError, match=r"sample_weight must have a positive sum"):
        RandomFeatureRidge(n_features=20).fit(X, y, sample_weight=da.zeros(100, chunks=50))
    with pytest.raises(ValueError, match=r"lam"):
        HARFERegressor(n_features=20, s=5, lam=-1.0).fit(X, y)
    with pytest.raises(ValueError, match=r"X is chunked along its columns"):
        RandomFeatureRidge(n_features=20).fit(_untouchable((100, 4), (50, 2)), y)


@pytest.mark.parametrize("where", ["X", "y"])
def test_nan_in_a_chunk_is_named(sync, data, where):
    X, y = data
    X, y = X.copy(), y.copy()
    (X if where == "X" else y)[150] = np.nan
    Xd, yd = to_dask(X, y, 70)
    for est in (HARFERegressor(n_features=20, s=5), RandomFeatureRidge(n_features=20)):
        with pytest.raises(ValueError, match=rf"^{where} contains NaN"):
            est.fit(Xd, yd)


def test_predict_checks_X(sync, data):
    X, y = data
    est = HARFERegressor(n_features=20, s=5, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="X has 3 features"):
        est.predict(da.zeros((10, 3), chunks=(5, 3)))
    with pytest.raises(ValueError, match="chunked along its columns"):
        est.predict(da.zeros((10, 6), chunks=(5, 3)))


# ------------------------------------------------ default (self-tuning) estimators
@pytest.mark.parametrize("rows", [7, 70, 300])
def test_default_folds_on_dask_are_the_in_memory_folds(sync, rows):
    """row_folds of the kept rows, whatever the chunking and the row order."""
    from rflite._core.folds import row_folds
    from rflite._dask.split import distinct_row_folds, fold_label_array

    X, _ = make_friedman1(300, d=5, rng=1)
    X[10] = X[200]
    X[11, 0] = -0.0
    X[12] = X[11]
    X[12, 0] = 0.0
    w = np.ones(300)
    w[[3, 40]] = 0.0
    for weights in (None, w):
        kept = slice(None) if weights is None else weights > 0
        ref = row_folds(X[kept], 5, np.random.default_rng(3))
        Wd = None if weights is None else da.from_array(weights.reshape(-1, 1), chunks=(rows, 1))
        found, labels = distinct_row_folds(da.from_array(X, chunks=(rows, 5)), Wd, 5,
                                           np.random.default_rng(3))
        lab = fold_label_array(da.from_array(X, chunks=(rows, 5)), found, labels, 5).compute()
        np.testing.assert_array_equal(lab[kept, 0], ref)
        if weights is not None:
            # a dropped row belongs to no fold
            assert set(lab[~kept, 0]) == {5}
        assert lab[10, 0] == lab[200, 0] and lab[11, 0] == lab[12, 0]
    perm = np.random.default_rng(0).permutation(300)
    found, labels = distinct_row_folds(da.from_array(X[perm], chunks=(rows, 5)), None, 5,
                                       np.random.default_rng(3))
    lab = fold_label_array(da.from_array(X[perm], chunks=(rows, 5)), found, labels, 5)
    np.testing.assert_array_equal(lab.compute()[:, 0], row_folds(X, 5, np.random.default_rng(3))[perm])


@pytest.mark.parametrize("rows", [70, 240])
def test_default_ridge_chooses_scale_and_lam_like_in_memory(sync, data, rows):
    """scale="auto", lam="auto" on Dask: the in-memory default's folds, grid and choice."""
    X, y = data
    est = RandomFeatureRidge(n_features=60, random_state=0).fit(*to_dask(X, y, rows))
    ref = RandomFeatureRidge(n_features=60, random_state=0).fit(X, y)
    assert (est.scale_, est.lam_, est.mean_model_) == (ref.scale_, ref.lam_, ref.mean_model_)
    # the chosen lam is small here (coefficients ~1e2, an intercept ~1e2 that
    # cancels them): the solve's condition number times the rounding of the
    # differently ordered sums, ~1e-10 in the coefficients and the predictions
    assert rel(est.coef_, ref.coef_) < 1e-8
    assert rel(np.asarray(est.predict(X)), ref.predict(X)) < 1e-8
    # the errors come from Gram statistics (differences): agreement to ~1e-6 relative
    np.testing.assert_array_equal(est.cv_results_["scale"], ref.cv_results_["scale"])
    np.testing.assert_allclose(est.cv_results_["mean_test_mse"],
                               ref.cv_results_["mean_test_mse"], rtol=1e-5)
    np.testing.assert_array_equal(est.cv_results_["rank_test_mse"][:1],
                                  ref.cv_results_["rank_test_mse"][:1])
    kinds = [k for k, _ in est.dask_passes_]
    assert kinds[0] == "first" and kinds[-1] == "full_gram"
    assert kinds.count("group_stats") == 4  # one per factor of SCALE_GRID
    # 2-d y whose outputs choose different factors: one (scale, lam) per output
    Y = np.column_stack([y, np.sin(10 * X[:, 0])])
    est2 = RandomFeatureRidge(n_features=60, random_state=0).fit(
        da.from_array(X, chunks=(rows, -1)), da.from_array(Y, chunks=(rows, 2)))
    ref2 = RandomFeatureRidge(n_features=60, random_state=0).fit(X, Y)
    np.testing.assert_array_equal(est2.scale_, ref2.scale_)
    assert len(set(ref2.scale_)) == 2
    np.testing.assert_array_equal(est2.lam_, ref2.lam_)
    np.testing.assert_array_equal(est2.support_, ref2.support_)
    assert rel(est2.coef_, ref2.coef_) < 1e-8
    assert rel(np.asarray(est2.predict(X)), ref2.predict(X)) < 1e-8


def test_default_ridge_on_noise_is_the_mean_on_dask(sync):
    """The in-memory test against the training mean runs on Dask too (``mean_model_``)."""
    rng = np.random.default_rng(0)
    X, y = rng.uniform(-1, 1, (300, 3)), rng.normal(size=300)
    ref = RandomFeatureRidge(n_features=40, random_state=0).fit(X, y)
    est = RandomFeatureRidge(n_features=40, random_state=0).fit(*to_dask(X, y, 70))
    assert ref.mean_model_ and est.mean_model_
    np.testing.assert_allclose(np.asarray(est.predict(X)), ref.predict(X), atol=1e-14)


def test_default_harfe_chooses_s_and_lam_like_in_memory(sync):
    """s="auto", lam="auto" on Dask: the in-memory hold-out (a fifth of the distinct
    rows, 100 here), grid and choice."""
    X, y = make_friedman1(500, d=6, noise=0.1, rng=0)
    est = HARFERegressor(n_features=80, random_state=0).fit(*to_dask(X, y, 70))
    ref = HARFERegressor(n_features=80, random_state=0).fit(X, y)
    res = est.cv_results_
    assert [k for k in res if k.startswith("split")] == ["split0_test_mse"]
    np.testing.assert_array_equal(res["s"], ref.cv_results_["s"])
    np.testing.assert_array_equal(res["lam"], ref.cv_results_["lam"])
    assert (est.s_, est.lam_) == (ref.s_, ref.lam_)
    np.testing.assert_array_equal(est.support_, ref.support_)
    assert rel(est.coef_, ref.coef_) < RTOL
    np.testing.assert_allclose(res["mean_test_mse"], ref.cv_results_["mean_test_mse"],
                               rtol=1e-9)


def test_default_shrimp_resolves_its_defaults_like_in_memory(sync):
    """refit="auto" (the guarded choice) on Dask = in memory on a well-conditioned dictionary."""
    from rflite.imp import SHRIMPRegressor

    X, y = sorted_rows(*make_friedman1(400, d=6, noise=0.1, rng=0))
    kw = dict(n_features=30, q=2, subsets="random", random_state=0)  # refit="auto"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = SHRIMPRegressor(**kw).fit(X, y)
        est = SHRIMPRegressor(**kw).fit(*to_dask(X, y, 70))
    assert est.refit_ == ref.refit_
    assert est.best_step_ == ref.best_step_
    np.testing.assert_array_equal(est.support_, ref.support_)
    # the guard's ridge penalties are sigma_max^2 10^-k with sigma_max from 30 power
    # iterations (imp._spectral_norm) started from A^T 1 in memory and from R^T 1 on
    # Dask (the TSQR factor stands for A): the same penalty to ~1e-4, hence the
    # coefficients of a ridge refit to ~1e-3 (a minimum-norm refit agrees to 1e-9)
    if ref.refit_ == "ridge":
        assert abs(est.ridge_lam_ - ref.ridge_lam_) < 1e-2 * ref.ridge_lam_
    assert rel(est.coef_, ref.coef_) < (1e-2 if ref.refit_ == "ridge" else 1e-9)
    assert abs(est.validation_mse_ - ref.validation_mse_) < 1e-2 * ref.validation_mse_
    np.testing.assert_allclose(est.target_scale_, ref.target_scale_, rtol=1e-12)


def test_default_shrimp_n_features_none(sync):
    """n_features=None: the in-memory N on the distinct rows; the over-parameterised
    path (4m columns for m rows) has fewer training rows than columns, so the Dask
    fit runs the in-memory fit on the rows computed to the client: the same model
    bit for bit, on shuffled rows with copies and zero weights too."""
    from rflite.imp import SHRIMPRegressor

    X, y = make_friedman1(150, d=5, noise=0.3, rng=2)
    X, y = np.vstack([X, X[:20]]), np.concatenate([y, y[:20]])  # 20 rows twice
    perm = np.random.default_rng(4).permutation(X.shape[0])
    X, y = X[perm], y[perm]
    w = np.ones(X.shape[0])
    w[:5] = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = SHRIMPRegressor(random_state=0).fit(X, y, sample_weight=w)
        est = SHRIMPRegressor(random_state=0).fit(*to_dask(X, y, 40), sample_weight=w)
    assert est.n_features_ == ref.n_features_  # 2 x the 145 distinct rows of positive weight
    assert est.refit_ == ref.refit_ and est.best_step_ == ref.best_step_
    np.testing.assert_array_equal(est.validation_indices_, ref.validation_indices_)
    np.testing.assert_array_equal(est.support_, ref.support_)
    np.testing.assert_array_equal(est.coef_, ref.coef_)
    assert est.intercept_ == ref.intercept_
    assert [k for k, _ in est.dask_passes_] == ["rows to the client"]


def test_shrimp_tsqr_split_is_the_in_memory_split_on_shuffled_rows(sync):
    """The TSQR route (more training rows than columns) on rows in no order, with
    copies and zero weights: the distinct rows of (X, y) are dealt by the in-memory
    rule, so the same validation rows, path, choice and support as in memory."""
    from rflite.imp import SHRIMPRegressor

    X, y = make_friedman1(400, d=6, noise=0.1, rng=0)
    X, y = np.vstack([X, X[:30]]), np.concatenate([y, y[:30]])
    perm = np.random.default_rng(5).permutation(X.shape[0])
    X, y = X[perm], y[perm]
    w = np.random.default_rng(6).integers(0, 3, X.shape[0]).astype(float)
    kw = dict(n_features=30, q=2, subsets="random", random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = SHRIMPRegressor(**kw).fit(X, y, sample_weight=w)
        est = SHRIMPRegressor(**kw).fit(*to_dask(X, y, 70),
                                        sample_weight=da.from_array(w, chunks=70))
    np.testing.assert_array_equal(est.validation_indices_, ref.validation_indices_)
    np.testing.assert_array_equal(est.train_indices_, ref.train_indices_)
    assert est.best_step_ == ref.best_step_ and est.refit_ == ref.refit_
    np.testing.assert_array_equal(est.support_, ref.support_)
    np.testing.assert_allclose(est.path_.val_mse, ref.path_.val_mse, rtol=1e-9)
    assert "tsqr" in [k for k, _ in est.dask_passes_]


def test_auto_options_not_supported_on_dask_are_named(sync, data):
    from rflite.htp import HARFECV
    from rflite.ridge import RandomFeatureRidgeCV

    X, y = data
    Xd, yd = to_dask(X, y, 70)
    # the CV class has no lam: the message names its search and what to use instead
    with pytest.raises(ValueError, match="the lams search on Dask input needs real features.*"
                                         "RandomFeatureRidge with an explicit lam"):
        RandomFeatureRidgeCV(n_features=20, cv=3, activation="exp").fit(Xd, yd)
    with pytest.raises(ValueError, match="cv must be an int >= 2"):
        HARFECV(n_features=20, cv=1).fit(Xd, yd)
    with pytest.raises(ValueError, match="lam='auto' on Dask input needs real features"):
        RandomFeatureRidge(n_features=20, activation="exp").fit(Xd, yd)
    with pytest.raises(ValueError, match="s must be an int >= 1 or 'auto'"):
        HARFERegressor(n_features=20, s="best").fit(Xd, yd)


# ----------------------------------------------------------- LocalCluster
# The worker-kill test runs on a cluster of its own: the nanny of an in-process
# LocalCluster may fail to respawn the killed worker ("cannot pickle
# '_asyncio.Future'", dask/distributed#3345), which would leave a shared cluster
# with one worker for the tests after it.
def _crash_once(block, flag):
    """Kill the worker process computing this chunk, the first time only.

    The flag is created atomically (``O_EXCL``): with a check-then-create,
    both workers could see no flag at the same moment and both exit, losing
    every copy of the broadcast feature state (seen once in a fresh-clone run).
    """
    try:
        os.close(os.open(flag, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return block
    os._exit(1)


@pytest.mark.slow(reason="kills a worker of its own LocalCluster")
def test_worker_killed_during_fit_gives_the_same_result(own_cluster, data):
    X, y = data
    kw = dict(n_features=100, s=10, lam=1e-4, random_state=0)
    ref = HARFERegressor(**kw).fit(X, y)
    with tempfile.TemporaryDirectory() as tmp:
        flag = os.path.join(tmp, "crashed")
        Xd = da.from_array(X, chunks=(70, -1)).map_blocks(_crash_once, flag, dtype=float,
                                                               meta=np.empty((0, 0)))
        est = HARFERegressor(**kw).fit(Xd, da.from_array(y, chunks=70))
        assert os.path.exists(flag)  # a worker did die mid-pass
    np.testing.assert_array_equal(est.support_, ref.support_)
    assert rel(est.coef_, ref.coef_) < RTOL


@pytest.mark.slow(reason="starts or uses a LocalCluster")
def test_cluster_matches_in_memory_and_sync(on_cluster, data):
    X, y = data
    kw = dict(n_features=150, s=15, lam=1e-4, q=2, random_state=0)
    ref = HARFERegressor(**kw).fit(X, y)
    Xd, yd = to_dask(X, y, 70)
    est = HARFERegressor(**kw).fit(Xd, yd)
    np.testing.assert_array_equal(est.support_, ref.support_)
    assert rel(est.coef_, ref.coef_) < RTOL
    with dask.config.set(scheduler="synchronous"):
        local = HARFERegressor(**kw).fit(Xd, yd)
    np.testing.assert_array_equal(est.support_, local.support_)
    assert rel(est.coef_, local.coef_) < 1e-12
    assert rel(est.predict(Xd).compute(), ref.predict(X)) < 1e-10
    from rflite.imp import SHRIMPRegressor

    kws = dict(n_features=30, q=2, subsets="random", refit="min_norm", random_state=0)
    Xs, ys = sorted_rows(X, y)
    s_ref = SHRIMPRegressor(**kws).fit(Xs, ys)
    s_est = SHRIMPRegressor(**kws).fit(*to_dask(Xs, ys, 70))
    np.testing.assert_array_equal(s_est.support_, s_ref.support_)
    assert rel(s_est.coef_, s_ref.coef_) < 1e-9
    # ridge scale="auto", lam="auto" on the cluster: the in-memory choice
    r = RandomFeatureRidge(n_features=50, random_state=0).fit(Xd, yd)
    r_ref = RandomFeatureRidge(n_features=50, random_state=0).fit(X, y)
    assert (r.scale_, r.lam_) == (r_ref.scale_, r_ref.lam_)
    assert rel(r.coef_, r_ref.coef_) < 1e-8
    # the complex features on the cluster
    kw["activation"] = "exp"
    ref = HARFERegressor(**kw).fit(X, y)
    est = HARFERegressor(**kw).fit(Xd, yd)
    np.testing.assert_array_equal(est.support_, ref.support_)
    assert rel(est.coef_, ref.coef_) < RTOL


# ------------------------------------------------------------- experiment
@pytest.mark.slow(reason="starts or uses a LocalCluster; experiment in its quick form")
@pytest.mark.local_dask_fit  # as a user runs it: the experiment itself fits on the workers
def test_scale_experiment_quick(tmp_path, cluster_client, monkeypatch, capsys):
    """The registered ``scale`` experiment, on the module's cluster given by address."""
    from rflite.experiments import Context, registry, run_experiment
    from rflite.experiments import scale

    assert "scale" in registry()
    monkeypatch.setattr(scale, "QUICK_SIZES", (3000,))
    res = run_experiment("scale", Context(quick=True, out=tmp_path,
                                          scheduler=cluster_client.scheduler.address))
    assert {(r["m"], r["model"]) for r in res["rows"]} == {
        (3000, "harfe"), (3000, "shrimp"), (3000, "ridge")}
    for r in res["rows"]:
        assert r["workers"] == 2 and r["peak_mb_per_worker"] > 0, (r["workers"], r["peak_mb_per_worker"])
        # how far the fit raised the workers' memory: finite, below the peak
        assert np.isfinite(r["added_mb_per_worker"])
        assert r["added_mb_per_worker"] <= r["peak_mb_per_worker"]
        assert 0 < r["client_peak_mb"] < 200  # the client's allocations during the fit
    assert (tmp_path / "scale.json").exists()
    out = capsys.readouterr().out
    assert "peak MB/worker" in out and "client MB" in out
    # the experiment's client is gone, the cluster is not
    assert len(cluster_client.scheduler_info()["workers"]) == 2


@pytest.mark.slow(reason="starts or uses a LocalCluster; experiment in its quick form")
@pytest.mark.local_dask_fit  # as a user runs it: the experiment itself fits on the workers
def test_scale_wide_experiment_quick(tmp_path, cluster_client, monkeypatch):
    """``scale-wide``: the HARFE rows only, at the quick shape, with its own JSON."""
    from rflite.experiments import Context, registry, run_experiment
    from rflite.experiments import scale

    assert "scale-wide" in registry()
    monkeypatch.setattr(scale, "QUICK_SIZES", (3000,))
    res = run_experiment("scale-wide", Context(quick=True, out=tmp_path,
                                               scheduler=cluster_client.scheduler.address))
    assert [(r["m"], r["model"]) for r in res["rows"]] == [(3000, "harfe")]
    row = res["rows"][0]
    assert row["n_full_passes"] == scale.WIDE_ITER and row["overhead"] > 0
    assert (tmp_path / "scale_wide.json").exists()


@pytest.mark.parametrize("make,which", [
    (make, which) for make in ("GFCRegressor", "HARFE-numpy-X", "ARFFClassifier")
    for which in ("y", "sample_weight")])
def test_in_memory_fits_refuse_dask_input_instead_of_loading_it(which, make, sync):
    """Every fit refuses a Dask y or weight with a NumPy X by name (GFC loaded
    them silently; a Dask X fits on Dask, tests/test_dask_gfc.py)."""
    from rflite.greedy import GFCRegressor
    from rflite.metropolis import ARFFClassifier

    est = {"GFCRegressor": GFCRegressor(random_state=0),
           "ARFFClassifier": ARFFClassifier(4, n_iter=2, random_state=0),
           "HARFE-numpy-X": HARFERegressor(n_features=10, s=3, lam=1e-3)}[make]
    rng = np.random.default_rng(0)
    X, y, w = rng.normal(size=(120, 3)), (rng.normal(size=120) > 0) * 1.0, np.ones(120)
    args = {"X": X, "y": y, "sample_weight": w}
    args[which] = da.from_array(args[which], chunks=40)
    with pytest.raises(ValueError, match=f"^{which} is a Dask array .*fits in memory"):
        est.fit(args["X"], args["y"], sample_weight=args["sample_weight"])



def test_lazy_predict_of_an_intercept_only_model(sync):
    """A model with no feature kept (GFC's mean guard on pure noise) predicts
    lazily on Dask too (the coefficient reshape failed on 0 coefficients)."""
    from rflite.greedy import GFCRegressor

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(120, 3)), rng.normal(size=120)
    model = GFCRegressor(max_steps=2, n_passes=1, random_state=0).fit(X, y)
    assert model.guarded_ and np.asarray(model.coef_).size == 0
    lazy = model.predict(da.from_array(X, chunks=40))
    np.testing.assert_allclose(lazy.compute(), model.predict(X), rtol=1e-12, atol=1e-12)


# ------------------------------------------------------ RandomFeatures on Dask
@pytest.mark.parametrize("params", [{}, {"q": 2}, {"orthogonal": True}, {"dtype": "float32"},
                                    {"gamma": "scale"}])
def test_random_features_transform_is_lazy_and_equals_in_memory(sync, data, params):
    """``RandomFeatures`` on a Dask X: ``fit`` reads only its shape (its variance for
    gamma="scale"), ``transform`` is lazy with X's row chunks, each chunk the
    in-memory transform of its rows (same bits), for chunks that do and do not
    divide m."""
    from rflite.features import RandomFeatures

    X, _ = data
    ref = RandomFeatures(n_components=300, random_state=0, **params).fit(X)
    expected = ref.transform(X)
    for rows in CHUNKS:
        Xd = da.from_array(X, chunks=(rows, -1))
        est = RandomFeatures(n_components=300, random_state=0, **params).fit(Xd)
        if params.get("gamma") == "scale":  # a tree-reduced variance: rounding only
            assert est.gamma_ == pytest.approx(ref.gamma_, rel=1e-13)
            est.feature_map_ = ref.feature_map_
        else:
            np.testing.assert_array_equal(est.feature_map_.values, ref.feature_map_.values)
        Z = est.transform(Xd)
        assert _dask.is_dask_array(Z) and Z.chunks == (Xd.chunks[0], (300,))
        assert Z.dtype == expected.dtype
        # each chunk is the in-memory transform of its rows; on the dense (BLAS)
        # path the product of a 70-row block may differ from that of all 240 rows
        # in the last bit of a pre-activation (|feature| <= sqrt(2/300) = 0.082)
        atol = 0 if params.get("dtype") else 1e-15
        np.testing.assert_allclose(Z.compute(), expected, rtol=0, atol=atol)
        for a, b in zip(da.from_array(X, chunks=(rows, -1)).blocks, Z.blocks):
            np.testing.assert_array_equal(b.compute(), ref.transform(a.compute()))
        np.testing.assert_allclose(est.fit_transform(Xd).compute(), expected, rtol=0, atol=atol)


def test_random_features_on_dask_never_computes_X_for_fit_or_graph(sync):
    from rflite.features import RandomFeatures

    X = _untouchable((100, 4), (50, 4))
    est = RandomFeatures(n_components=20, random_state=0).fit(X)
    Z = est.transform(X)  # lazy: nothing computed yet
    assert Z.shape == (100, 20)
    with pytest.raises(RuntimeError, match="computed before"):
        Z.compute()
    with pytest.raises(ValueError, match=r"X is chunked along its columns"):
        est.transform(_untouchable((100, 4), (50, 2)))
    with pytest.raises(ValueError, match=r"X has 3 features, but RandomFeatures is expecting 4"):
        est.transform(_untouchable((100, 3), (50, 3)))
    with pytest.raises(ValueError, match=r"X is chunked along its columns"):
        RandomFeatures(n_components=20).fit(_untouchable((100, 4), (50, 2)))
    bad = np.ones((100, 4))
    bad[70, 1] = np.nan
    with pytest.raises(ValueError, match=r"^X contains NaN"):
        est.transform(da.from_array(bad, chunks=(50, 4))).compute()
    with pytest.raises(ValueError, match=r"^X contains NaN.*gamma='scale'"):
        RandomFeatures(gamma="scale").fit(da.from_array(bad, chunks=(50, 4)))


@pytest.mark.slow(reason="starts or uses a LocalCluster")
def test_random_features_transform_on_the_cluster(on_cluster, data):
    from rflite.features import RandomFeatures

    X, _ = data
    est = RandomFeatures(n_components=200, q=3, random_state=1).fit(X)
    Z = est.transform(da.from_array(X, chunks=(70, -1)))
    np.testing.assert_array_equal(Z.compute(), est.transform(X))


def test_gfc_transform_is_lazy(sync, data):
    """GFCRegressor.transform on a Dask X: lazy, X's row chunks, each chunk the
    in-memory transform of its rows; bad input named before computing."""
    from rflite.greedy import GFCRegressor

    X, y = data
    est = GFCRegressor(n_workers=2, max_steps=3, random_state=0).fit(X, y)
    Xd = da.from_array(X, chunks=(70, -1))
    Z = est.transform(Xd)
    assert _dask.is_dask_array(Z) and Z.chunks == (Xd.chunks[0], (est.feature_map_.n_columns,))
    np.testing.assert_allclose(Z.compute(), est.transform(X), rtol=0, atol=1e-15)
    for a, b in zip(Xd.blocks, Z.blocks):
        np.testing.assert_array_equal(b.compute(), est.transform(a.compute()))
    with pytest.raises(ValueError, match="X has 3 features"):
        est.transform(_untouchable((100, 3), (50, 3)))


# ------------------------------------------------ small Dask fits run in memory
def _small_estimators():
    from rflite.greedy import GFCRegressor
    from rflite.htp import HARFECV
    from rflite.imp import SHRIMPRegressor
    from rflite.metropolis import ARFFRegressor

    return {
        "ridge": lambda: RandomFeatureRidge(n_features=100, random_state=0),
        "harfe": lambda: HARFERegressor(n_features=150, random_state=0),
        "harfecv": lambda: HARFECV(n_features=100, random_state=0),
        "shrimp": lambda: SHRIMPRegressor(n_features=60, random_state=0),
        "srfe": lambda: SRFERegressor(n_features=100, random_state=0),
        "arff": lambda: ARFFRegressor(16, n_iter=20, random_state=0),
        "gfc": lambda: GFCRegressor(max_steps=2, n_workers=2, random_state=0),
    }


@pytest.mark.local_dask_fit
@pytest.mark.parametrize("name", list(_small_estimators()))
def test_small_dask_fit_is_the_in_memory_fit(sync, name):
    # the automatic choices included: the same seed gives the same model, bit for bit
    X, y = make_friedman1(300, d=5, noise=0.5, rng=1)
    w = np.random.default_rng(2).integers(1, 3, 300).astype(float)
    make = _small_estimators()[name]
    ref = make().fit(X, y, sample_weight=w)
    est = make().fit(da.from_array(X, chunks=(70, -1)), da.from_array(y, chunks=70),
                     sample_weight=da.from_array(w, chunks=70))
    np.testing.assert_array_equal(est.coef_, ref.coef_)
    np.testing.assert_array_equal(est.predict(X), ref.predict(X))
    assert not hasattr(est, "dask_fit_seconds_")


@pytest.mark.local_dask_fit
def test_dask_fits_above_the_row_limit_run_on_the_workers(sync, monkeypatch):
    import rflite._core.backend as backend

    X, y = make_friedman1(240, d=5, noise=0.5, rng=1)
    monkeypatch.setattr(backend, "LOCAL_FIT_MAX_ROWS", 239)
    est = RandomFeatureRidge(n_features=50, lam=1e-3, random_state=0).fit(
        da.from_array(X, chunks=(60, -1)), da.from_array(y, chunks=60))
    assert est.dask_fit_seconds_ > 0
    monkeypatch.setattr(backend, "LOCAL_FIT_MAX_ROWS", 240)
    est = RandomFeatureRidge(n_features=50, lam=1e-3, random_state=0).fit(
        da.from_array(X, chunks=(60, -1)), da.from_array(y, chunks=60))
    assert not hasattr(est, "dask_fit_seconds_")


@pytest.mark.parametrize("rows_kept", [300, 120])
def test_nested_check_against_the_mean_runs_on_dask_input(sync, rows_kept):
    """A default fit on fewer than MIN_HOLDOUT_ROWS / share distinct rows is
    cross-validated against the mean on Dask input too, on the rows computed to
    the client: the same mask as on NumPy input (with zero weights dropping rows)."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (300, 4))
    y = rng.standard_normal(300)
    w = (np.arange(300) < rows_kept).astype(float)
    est = RandomFeatureRidge(n_features=40, random_state=0).fit(X, y, sample_weight=w)
    ref = est._check_against_mean(X, y, w, 0.2)
    got = est._check_against_mean(*to_dask(X, y, 70), da.from_array(w, chunks=70), 0.2)
    assert ref is not None and got is not None
    np.testing.assert_array_equal(got, ref)
