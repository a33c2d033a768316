"""GFCRegressor fitted on Dask arrays: rflite._dask.gfc.

The descents are Dask tasks on the same subsamples as in memory and the
amplitude fit sums per-fold Gram matrices; the Dask fit first sorts its rows
into the in-memory canonical order, so the fits agree whatever the row order:
spectra identical, amplitudes to rounding.
"""

import os
import tempfile

import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from rflite._dask import split as _dask_split
from rflite._dask.split import FeistelPermutation  # noqa: E402
from rflite.datasets import make_friedman_gfc  # noqa: E402
from rflite.greedy import GFCRegressor  # noqa: E402
from rflite.metropolis import _canonical_order  # noqa: E402

from test_dask import rel, sync  # noqa: E402, F401

# actual differences: about 1e-13 (one pass), 1e-12 (two passes)
COEF_RTOL = 1e-10


@pytest.fixture(scope="module")
def data():
    """Rows in the canonical order (the in-memory fit sorts its rows so), targets on a
    1/1024 grid: their sums are exact in any order, so every mean of y on Dask
    has the bits of np.mean's.  The exact comparisons fit without intercept:
    centred targets are no longer on the grid, and the last-bit difference of
    their chunk-summed mean is amplified by the descents' L-BFGS runs and eps
    stopping (test_default_fit_matches_in_memory_to_the_descents_sensitivity)."""
    X, y = make_friedman_gfc(600, rng=0)
    y = np.round(y * 1024) / 1024
    order = _canonical_order(X, y.reshape(-1, 1))
    return X[order], y[order]


def _dask(X, y, rows):
    return da.from_array(X, chunks=(rows, -1)), da.from_array(y, chunks=(rows,) + y.shape[1:])


def _assert_same(est, ref, coef_rtol=COEF_RTOL):
    np.testing.assert_array_equal(est.weights_, ref.weights_)
    assert est.nu_ == ref.nu_
    assert est.steps_ == ref.steps_  # the greedy steps kept (stopping="cv", the default)
    assert rel(est.coef_, ref.coef_) < coef_rtol
    np.testing.assert_allclose(est.intercept_, ref.intercept_, rtol=coef_rtol, atol=1e-9)
    assert (est.n_workers_, est.max_steps_) == (ref.n_workers_, ref.max_steps_)


KW = dict(n_workers=2, max_steps=4, random_state=0, fit_intercept=False)


@pytest.mark.parametrize("rows", [170, 97, 600])
def test_gfc_on_dask_equals_in_memory(sync, data, rows):
    """cv=5 for nu and the mean guard: the same subsamples, spectra, nu and guard
    errors; chunks that do and do not divide m, and a single chunk."""
    X, y = data
    ref = GFCRegressor(**KW).fit(X, y)
    est = GFCRegressor(**KW).fit(*_dask(X, y, rows))
    _assert_same(est, ref)
    np.testing.assert_allclose(est.guard_mse_, ref.guard_mse_, rtol=1e-10)
    assert est.guarded_ == ref.guarded_ is False
    for key in ("mean_test_mse", "fold_test_mse"):
        np.testing.assert_allclose(est.cv_results_[key], ref.cv_results_[key], rtol=1e-9)
    np.testing.assert_allclose(est.result_.train_rmse, ref.result_.train_rmse, rtol=1e-9)
    np.testing.assert_allclose(est.predict(da.from_array(X, chunks=(rows, -1))).compute(),
                               ref.predict(X), rtol=1e-9, atol=1e-9)


def _test_mse(model, X, y):
    pred = model.predict(X)
    return float(np.mean((np.asarray(pred.compute() if hasattr(pred, "compute") else pred)
                          - y) ** 2))


@pytest.mark.slow(reason="default-size GFC fits on Dask and in memory, over 10 s")
def test_default_fit_on_shuffled_rows_equals_in_memory(sync):
    """Defaults (fit_intercept=True, the mean guard, targets off any grid) on rows
    in no particular order: the Dask fit sorts them into the in-memory fit's
    canonical order, follows the int cv's folds there, and decides the guard by
    the in-memory paired rule, so whatever the chunking it constructs the
    in-memory spectra, keeps the same steps and nu, and predicts alike to rounding
    (the amplitudes come from chunk-summed Gram matrices: about 1e-11 apart)."""
    X, y = make_friedman_gfc(600, rng=1)
    Xt, _ = make_friedman_gfc(400, rng=2)
    perm = np.random.default_rng(3).permutation(600)
    X, y = X[perm], y[perm]
    kw = dict(n_workers=2, max_steps=4, random_state=0)
    ref = GFCRegressor(**kw).fit(X, y)
    for rows in (170, 97, 600):
        est = GFCRegressor(**kw).fit(*_dask(X, y, rows))
        assert est.guarded_ == ref.guarded_ is False
        np.testing.assert_array_equal(est.weights_, ref.weights_)
        assert (est.nu_, est.steps_) == (ref.nu_, ref.steps_)
        np.testing.assert_allclose(est.predict(Xt), ref.predict(Xt), rtol=0, atol=1e-9)


@pytest.mark.usefixtures("sync")
def test_default_fit_on_dask_predictions_scale_with_the_targets():
    """On Dask too the default GFCRegressor fits ``a * y`` as ``a`` times its fit
    of ``y`` (a > 0): the unit of the targets is the in-memory fit's (a peak and
    an exact mean square, whatever the chunks), so the same spectra, nu and steps
    and the predictions to rounding."""
    rng = np.random.default_rng(0)
    # 500 rows: the hold-out guard runs (100 held-out rows), and scales too
    X = rng.uniform(-1, 1, (500, 3))
    y = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(500)
    Xt = da.from_array(rng.uniform(-1, 1, (50, 3)), chunks=(20, -1))
    kw = dict(n_workers=2, max_steps=4, random_state=0)
    ref = GFCRegressor(**kw).fit(*_dask(X, y, 130))
    assert ref.guard_mse_ is not None
    want = ref.predict(Xt).compute()
    for a in (1e-3, 2.0, 1e3):
        est = GFCRegressor(**kw).fit(*_dask(X, a * y, 130))
        np.testing.assert_array_equal(est.weights_, ref.weights_)
        assert (est.nu_, est.steps_, est.guarded_) == (ref.nu_, ref.steps_, ref.guarded_)
        np.testing.assert_allclose(est.predict(Xt).compute(), a * want, rtol=1e-10,
                                   atol=1e-10 * a * np.abs(want).max())
        np.testing.assert_allclose(est.guard_mse_, a ** 2 * np.array(ref.guard_mse_),
                                   rtol=1e-10)


def test_exact_means_do_not_depend_on_the_chunks(sync):
    """The centring mean and the starting model are correctly rounded means (integer
    parts per chunk), so the descents see the same targets whatever the chunking."""
    from fractions import Fraction

    from rflite._dask.gfc import exact_means

    rng = np.random.default_rng(0)
    Y = rng.standard_normal((1001, 2)) * 10.0 ** rng.integers(-8, 8, size=(1001, 2))
    want = [float(sum(Fraction(v) for v in Y[:, j]) / 1001) for j in range(2)]
    for rows in (1001, 333, 10, 7):
        got = exact_means(da.from_array(Y, chunks=(rows, 1)))
        assert got.tolist() == want


@pytest.mark.parametrize("m", [600, 300], ids=["hold-out guard", "nested check"])
def test_the_mean_guard_on_noise_gives_the_intercept_only_model(sync, m):
    """Pure-noise targets: the model is the (exact) mean of y, with no feature, as
    in memory.  On 600 rows the guard's held-out GFC loses to the mean; on 300
    (60 held-out rows, too few) the whole fit loses to it on five folds, the
    in-memory nested check run on the client."""
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(m, 4))
    y = np.round(1024 * rng.standard_normal(m)) / 1024
    est = GFCRegressor(n_workers=2, max_steps=4, random_state=0).fit(*_dask(X, y, 70))
    ref = GFCRegressor(n_workers=2, max_steps=4, random_state=0).fit(X, y)
    assert est.guarded_ is True is ref.guarded_
    if m == 600:
        assert est.guard_mse_[0] >= est.guard_mse_[1]
        assert est.weights_.shape == (0, 4)
    else:  # the constructed features stay, with zero amplitudes
        assert est.guard_mse_ is None is ref.guard_mse_
        np.testing.assert_array_equal(est.weights_, ref.weights_)
        assert not np.any(est.coef_)
    # the mean plus the centred targets' mean (zero but for rounding)
    np.testing.assert_allclose(est.intercept_, y.mean(), rtol=1e-14)
    np.testing.assert_allclose(est.predict(da.from_array(X[:7], chunks=(3, -1))).compute(),
                               np.full(7, y.mean()), rtol=1e-14)


def test_two_passes_and_a_given_nu(sync, data):
    """Pass 2's descents evaluate the current model on their subsample in the task
    (no m-vector f).  Pass 1 is the in-memory one; pass 2 starts from amplitudes
    equal to rounding (summed Gram matrices), which its descents may amplify."""
    X, y = data
    kw = dict(KW, nu=0.1, n_passes=2, mean_guard=False, n_estimators=1)
    ref = GFCRegressor(**kw).fit(X, y)
    one = GFCRegressor(**dict(kw, n_passes=1)).fit(X, y)
    est = GFCRegressor(**kw).fit(*_dask(X, y, 170))
    first = one.result_.n_constructed - one.result_.n_pruned
    np.testing.assert_array_equal(est.weights_[:first], one.weights_)
    assert est.result_.n_constructed > one.result_.n_constructed
    Xt, yt = make_friedman_gfc(400, rng=2)
    assert abs(_test_mse(est, Xt, yt) / _test_mse(ref, Xt, yt) - 1.0) < 0.1


@pytest.mark.slow(reason="GFC fits on Dask and in memory, several seconds")
def test_two_d_y_equals_in_memory(sync, data):
    X, y = data
    Y = np.column_stack([y, np.round(1024 * np.cos(X[:, 0])) / 1024])
    ref = GFCRegressor(**KW).fit(X, Y)
    est = GFCRegressor(**KW).fit(*_dask(X, Y, 170))
    _assert_same(est, ref)
    assert est.coef_.shape == ref.coef_.shape == (2 * ref.weights_.shape[0], 2)


class _FeistelGenerator(np.random.Generator):
    """A Generator on the same bit stream whose ``permutation(n)`` is the order of a
    FeistelPermutation keyed from it (position k holds the row i with pi(i) = k)."""

    def permutation(self, n):
        return np.argsort(FeistelPermutation(n, self)(np.arange(n)))


def test_tall_subsamples_equal_in_memory_with_the_same_shuffle(sync, data, monkeypatch):
    """Past CLIENT_SPLIT_MAX_ROWS the subsamples (and the guard's hold-out rows) are
    position ranges of a keyed bijection evaluated chunk by chunk: the in-memory
    fit whose permutations are that bijection's order."""
    import rflite._core.folds
    import rflite._gfc.passes
    import rflite.greedy

    X, y = data
    monkeypatch.setattr(_dask_split, "CLIENT_SPLIT_MAX_ROWS", 0)
    est = GFCRegressor(**KW).fit(*_dask(X, y, 170))
    # every module whose check_rng draws the fit's subsamples or hold-out rows
    for module in (rflite.greedy, rflite._gfc.passes, rflite._core.folds):
        check = module.check_rng
        monkeypatch.setattr(module, "check_rng", lambda r, *a, _c=check, **k: _FeistelGenerator(
            _c(r, *a, **k).bit_generator))
    ref = GFCRegressor(**KW).fit(X, y)
    _assert_same(est, ref)
    np.testing.assert_allclose(est.guard_mse_, ref.guard_mse_, rtol=1e-10)


@pytest.mark.parametrize("kw,fit_kw,match", [
    ({}, {"sample_weight": np.ones(600)}, "sample_weight is not supported"),
    ({"executor": 2}, {}, "executor=2"),
    ({}, {"executor": 2}, "executor=2"),
    ({"cv": [(np.arange(300), np.arange(300, 600))]}, {}, "cv as a list"),
    ({"cv": 1}, {}, "cv"),
    ({"nu": -1.0}, {}, "nu"),
])
def test_bad_settings_are_refused_by_name(sync, data, kw, fit_kw, match):
    X, y = data
    with pytest.raises(ValueError, match=match):
        GFCRegressor(**KW, **kw).fit(*_dask(X, y, 170), **fit_kw)


def test_bad_dask_layouts_are_named(sync, data):
    """Column chunks, unknown chunk sizes and y chunked unlike X: the shared checks."""
    X, y = data
    Xd, yd = _dask(X, y, 170)
    with pytest.raises(ValueError, match="X is chunked along its columns"):
        GFCRegressor(**KW).fit(da.from_array(X, chunks=(170, 5)), yd)
    with pytest.raises(ValueError, match="X has unknown chunk sizes"):
        GFCRegressor(**KW).fit(Xd[Xd[:, 0] > -1], yd)
    with pytest.raises(ValueError, match="y"):
        GFCRegressor(**KW).fit(Xd, da.from_array(y, chunks=100))


def test_nan_in_a_chunk_is_named_before_the_descents(sync, data):
    X, y = data
    X = X.copy()
    X[450, 2] = np.nan
    with pytest.raises(ValueError, match="X contains NaN"):
        GFCRegressor(**KW).fit(*_dask(X, y, 170))


@pytest.mark.slow(reason="starts or uses a LocalCluster")
def test_gfc_on_a_cluster_equals_in_memory(cluster_client, data):
    """The descents run as tasks on two worker processes: same fit."""
    X, y = data
    ref = GFCRegressor(**KW).fit(X, y)
    with cluster_client.as_current(), dask.config.set(scheduler=cluster_client):
        est = GFCRegressor(**KW).fit(*_dask(X, y, 170))
    _assert_same(est, ref)


def _crash_at(block, flag_dir, at):
    """Kill the worker computing this chunk of X on the ``at``-th chunk computation of
    the fit (a cross-process counter of O_EXCL files), once."""
    i = 0
    while True:
        try:
            os.close(os.open(os.path.join(flag_dir, str(i)), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            break
        except FileExistsError:
            i += 1
    if i == at:
        os._exit(1)
    return block


@pytest.mark.slow(reason="kills a worker of its own LocalCluster")
def test_worker_killed_during_the_descents_gives_the_same_fit(own_cluster, data):
    """A worker dies while the guard's descents gather their subsamples (after the
    4-chunk NaN pass): Dask recomputes the lost tasks (seeded, pure) and the fit is
    the one without the crash."""
    X, y = data
    ref = GFCRegressor(**KW).fit(X, y)
    with tempfile.TemporaryDirectory() as tmp:
        Xd = da.from_array(X, chunks=(170, -1)).map_blocks(_crash_at, tmp, 6, dtype=float,
                                                            meta=np.empty((0, 0)))
        est = GFCRegressor(**KW).fit(Xd, da.from_array(y, chunks=170))
        # the 7th chunk computation killed its worker, and the fit went on after it
        assert os.path.exists(os.path.join(tmp, "6")) and len(os.listdir(tmp)) > 7
    _assert_same(est, ref)


def test_a_bag_computes_every_fits_descents_of_a_pass_together(sync, data, monkeypatch):
    """The descents of pass k of every fit of the bag are one
    ``dask.compute`` (not one compute per fit), the fits unchanged."""
    X, y = data
    kw = dict(KW, n_estimators=3, mean_guard=False)
    ref = GFCRegressor(**kw).fit(*_dask(X, y, 170))
    sizes, compute = [], dask.compute

    def counting(*args, **kwargs):
        descents = [a for a in args if "_k_descent" in str(getattr(a, "key", ""))]
        if descents:
            sizes.append(len(descents))
        return compute(*args, **kwargs)

    monkeypatch.setattr(dask, "compute", counting)
    est = GFCRegressor(**kw).fit(*_dask(X, y, 170))
    assert sizes == [3 * est.n_workers_]
    _assert_same(est, ref)
    np.testing.assert_array_equal(est.coef_, ref.coef_)


def test_cv_stopping_cuts_descents_back_on_dask_as_in_memory(sync):
    """stopping="cv" keeping fewer steps than the descents made (eps=0: both run
    their 8 steps; 3 kept on this noisy one-input target): the prefix's Gram
    block of the group sums gives the in-memory choice, spectra and amplitudes."""
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, (150, 5))
    y = np.round((X[:, 0] + 0.5 * rng.standard_normal(150)) * 1024) / 1024
    order = _canonical_order(X, y.reshape(-1, 1))
    X, y = X[order], y[order]
    kw = dict(n_workers=2, max_steps=8, eps=0.0, n_estimators=1, mean_guard=False,
              fit_intercept=False, random_state=0)
    ref = GFCRegressor(**kw).fit(X, y)
    est = GFCRegressor(**kw).fit(*_dask(X, y, 70))
    assert ref.result_.n_constructed == 16 and ref.steps_ < 8
    _assert_same(est, ref)
