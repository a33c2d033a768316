"""HARFE's automatic choice: the ridge over all columns as a candidate (insulin)."""

import numpy as np
from numpy.testing import assert_allclose

from rflite.htp import HARFECV, HARFERegressor, harfe
from rflite._htp import select as _htp_select


# ------------------------------------------------------------------ HARFE fallback
def _linear_noisy(m=200, d=30, seed=0):
    # a linear signal spread over many inputs, in noise: sparse q = 2 features
    # lose to ridge over all of them
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, d))
    return X, X @ rng.standard_normal(d) / np.sqrt(d) + rng.standard_normal(m)


def test_harfe_grid_has_the_ridge_fallback_and_it_can_win():
    X, y = _linear_noisy()
    est = HARFERegressor(n_features=400, random_state=0).fit(X, y)
    res = est.cv_results_
    assert np.sum(res["s"] == 400) == 5   # RIDGE_SHIFT_GRID, last in the grid
    assert res["s"][-1] == 400
    if est.s_ == 400:   # the fallback won: the model is the ridge over all columns
        assert est.support_.size == 400 and est.stop_reason_ == "ridge"


def test_harfe_all_columns_is_ridge_and_equals_harfe():
    X, y = _linear_noisy(80, d=4)
    a = HARFERegressor(n_features=50, s=50, lam=1e-2, random_state=0).fit(X, y)
    b = HARFERegressor(n_features=50, s=50, lam=1e-2, matrix_free=True,
                       random_state=0).fit(X, y)
    assert_allclose(a.predict(X), b.predict(X), rtol=1e-8, atol=1e-10)
    # the closed form is HARFE's fixed point with every column kept
    from rflite.htp import _prepare
    A, Yc, _, _, scale = _prepare(a.feature_map_.transform(X), y[:, None], None,
                                  fit_intercept=True, normalize=True)
    ref = harfe(A, Yc[:, 0], s=50, lam=1e-2, max_iter=200)
    assert_allclose(a.coef_, (ref.coef * scale)[a.support_], rtol=1e-6, atol=1e-9)


def test_harfe_fallback_scores_match_matrix_free_and_explicit_ss():
    X, y = _linear_noisy(120, d=6)
    a = HARFERegressor(n_features=150, random_state=0).fit(X, y)
    b = HARFERegressor(n_features=150, matrix_free=True, random_state=0).fit(X, y)
    assert_allclose(a.cv_results_["mean_test_mse"], b.cv_results_["mean_test_mse"],
                    rtol=1e-7)
    # an explicit ss containing every column is scored in closed form too
    cv = HARFECV(n_features=150, ss=[20, 150], lams=[1e-2], cv=3, random_state=0).fit(X, y)
    assert list(cv.cv_results_["s"]) == [20, 150]


def test_ridge_candidate_primal_equals_dual_and_stays_min_m_n_square():
    """The all-column candidates are scored from the smaller Gram matrix.

    With fewer columns than rows the primal ``A^T A`` (N x N) is used instead
    of the m x m kernel, which would otherwise be the largest object of a
    tall fit; both give the same predictions to rounding.
    """
    from rflite.htp import _dual_ridge, _gram, _ridge_predictions

    rng = np.random.default_rng(0)
    shifts = [10.0, 0.5]
    for m, n in ((80, 20), (20, 80)):
        A = rng.standard_normal((m, n))
        B = rng.standard_normal((7, n))
        Y = rng.standard_normal((m, 2))
        K, Kte = _gram(A, B)
        ref = _dual_ridge(K, Kte, Y, shifts)
        got = _ridge_predictions(A, B, Y, shifts)
        direct = [B @ np.linalg.solve(A.T @ A + sh * np.eye(n), A.T @ Y) for sh in shifts]
        for g, r, d in zip(got, ref, direct):
            np.testing.assert_allclose(g, d, rtol=1e-9, atol=1e-12)
            np.testing.assert_allclose(r, d, rtol=1e-9, atol=1e-12)


def test_matrix_free_ridge_candidates_skipped_above_the_row_limit(monkeypatch):
    """Above ``RIDGE_MAX_ROWS_MATRIX_FREE`` training rows a matrix-free fit does
    not form the m x m Gram matrix: the all-column candidates score inf."""
    import rflite.htp as htp
    from rflite.features import random_feature_map

    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (60, 3))
    Y = np.sin(2 * X[:, :1])
    fmap = random_feature_map(3, 30, q=2, rng=0)
    points = [(5, 1e-3), (fmap.n_columns, 1e-2)]
    train, test = np.arange(45), np.arange(45, 60)
    args = (train, test, fmap, X, Y, np.arange(60), points, True, True, 0.1, 50, 1e-8)
    finite = htp._harfe_fold_scores_mf(*args)
    assert np.all(np.isfinite(finite))
    monkeypatch.setattr(_htp_select, "RIDGE_MAX_ROWS_MATRIX_FREE", 40)
    skipped = htp._harfe_fold_scores_mf(*args)
    assert np.isfinite(skipped[0]) and skipped[1] == np.inf
    assert skipped[0] == finite[0]
