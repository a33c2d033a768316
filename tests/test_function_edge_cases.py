"""Public functions on edge cases: each test guards against one of these failure modes.

- ``bpdn_path`` on a dictionary with an exactly duplicated (or negated)
  column returned a point up to 9.7x the optimal l1 norm with ``reached``
  True, or stopped above sigma ("full" support); SRFERegressor's final fit
  used that point unchecked;
- ``bpdn`` / ``basis_pursuit`` / ``srfe`` certified ``c = 0`` as optimal when
  ``A^T y = 0`` although ``||y|| > sigma`` (complex data: NumPy warnings);
- ``lasso`` said ``"optimal"`` (certified) with a gap above ``tol``;
- ``FeatureMap`` accepted repeated or fractional supports (the two transform
  paths then disagreed), a boolean column mask of the wrong length, an
  array as ``activation``;
- ``row_folds`` accepted ``n_folds <= 0`` and merged distinct rows whose
  projections rounded equal; ``top_s`` mishandled NaN and a bad ``s``;
  ``coherence`` called columns of tiny entries zero.
"""

import warnings

import numpy as np
import pytest

from rflite.bp import SRFERegressor, SigmaUnreachableWarning, basis_pursuit, bpdn, bpdn_path, \
    lasso, srfe
from rflite.features import FeatureMap
from rflite.htp import top_s
from rflite.ridge import row_folds
from rflite.theory import coherence


def _duplicated(seed, m, n):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, n))
    A[:, n - 1] = A[:, 0] * (1.0 if seed % 2 else -1.0)
    y = rng.standard_normal(m)
    ls = np.linalg.norm(A @ np.linalg.lstsq(A, y, rcond=None)[0] - y)
    sigma = ls + 0.5 * (np.linalg.norm(y) - ls) * rng.uniform(0.05, 1)
    return A, y, sigma


# cases of a sweep (200 seeds per shape) that expose the failure: l1 up to
# 9.7x the certified optimum, or the path ending above sigma
@pytest.mark.parametrize("seed,m,n", [(117, 7, 7), (10, 5, 8), (30, 5, 8), (47, 5, 8),
                                      (12, 5, 8)])
def test_bpdn_path_with_duplicated_columns_is_optimal(seed, m, n):
    A, y, sigma = _duplicated(seed, m, n)
    path = bpdn_path(A, y, [sigma])
    c = path.coefs[:, 0]
    ref = bpdn(A, y, sigma)
    assert ref.certified
    assert path.reached[0]
    np.testing.assert_allclose(np.linalg.norm(A @ c - y), sigma, rtol=1e-8)
    np.testing.assert_allclose(np.abs(c).sum(), ref.l1_norm, rtol=1e-6)


def test_bpdn_path_sweep_with_duplicates_matches_the_certified_solver():
    worst = 1.0
    for seed in range(60):
        for m, n in ((7, 7), (5, 8), (8, 5)):
            A, y, sigma = _duplicated(seed, m, n)
            c = bpdn_path(A, y, [sigma]).coefs[:, 0]
            worst = max(worst, np.abs(c).sum() / bpdn(A, y, sigma).l1_norm)
    assert worst < 1 + 1e-6, worst


def test_srfe_regressor_final_fit_is_certified():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (60, 3))
    y = np.sin(2 * X[:, 0]) + 0.05 * rng.standard_normal(60)
    est = SRFERegressor(n_features=40, random_state=0).fit(X, y)
    res = est.result_.bpdn
    assert res.certified and res.duality_gap <= est.tol, (res.stop_reason, res.duality_gap)


@pytest.mark.parametrize("dtype", [float, complex])
def test_zero_solution_only_when_feasible(dtype):
    A = np.array([[1.0, 1.0], [0.0, 0.0]], dtype=dtype)
    y = np.array([0.0, 1.0], dtype=dtype)  # orthogonal to both columns
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        res = bpdn(A, y, 0.5)
    assert res.stop_reason == "sigma_unreachable" and not res.certified
    assert [w.category for w in rec] == [SigmaUnreachableWarning]
    assert bpdn(A, y, 1.5).stop_reason == "zero_solution"  # ||y|| = 1 <= sigma


def test_basis_pursuit_and_srfe_on_orthogonal_targets_are_not_certified():
    with pytest.warns(SigmaUnreachableWarning):
        res = basis_pursuit(np.array([[1.0, 1.0], [0.0, 0.0]]), np.array([0.0, 1.0]))
    assert not res.certified
    with pytest.warns(SigmaUnreachableWarning):
        fit = srfe(np.zeros((3, 4)), np.ones(3), eta=0.01)
    assert not fit.bpdn.certified


def test_lasso_certified_means_gap_within_tol():
    for seed in range(40):
        rng = np.random.default_rng(seed)
        A, y = rng.standard_normal((4, 8)), rng.standard_normal(4)
        if seed % 2:
            A = A + 1j * rng.standard_normal((4, 8))
            y = y + 1j * rng.standard_normal(4)
        tau = 1.5 * np.abs(np.linalg.pinv(A) @ y).sum()
        for method in ("auto", "spgl1"):
            res = lasso(A, y, tau, method=method)
            assert not res.certified or res.duality_gap <= 1e-6, (seed, method, res)


# ---------------------------------------------------------------- features
def test_feature_map_refuses_repeated_or_fractional_supports():
    with pytest.raises(ValueError, match="distinct within each row; row 1"):
        FeatureMap([[0, 1], [2, 2]], [[1.0, 2.0], [1.0, 2.0]], [0.0, 0.0], "relu", 3)
    with pytest.raises(ValueError, match="integer input indices"):
        FeatureMap([[0.9, 1.9]], [[1.0, 2.0]], [0.0], "relu", 3)
    # unsorted but distinct rows are fine
    FeatureMap([[2, 0]], [[1.0, 2.0]], [0.0], "relu", 3)


def test_feature_map_column_mask_and_array_activation():
    fm = FeatureMap([[0, 1], [1, 2]], [[1.0, 2.0], [3.0, 4.0]], [0.0, 0.0], "relu", 3)
    X = np.ones((2, 3))
    np.testing.assert_array_equal(fm.columns(X, np.array([False, True])),
                                  fm.transform(X)[:, [1]])
    with pytest.raises(ValueError, match="boolean columns mask must have shape"):
        fm.columns(X, np.array([False, True, True]))
    with pytest.raises(ValueError, match="activation must be one of"):
        FeatureMap([[0, 1]], [[1.0, 2.0]], [0.0], np.array(["relu"]), 3)


# ------------------------------------------------------- folds, top_s, theory
def test_row_folds_checks_n_folds_and_keeps_distinct_rows_apart():
    with pytest.raises(ValueError, match="n_folds"):
        row_folds(np.ones((3, 2)), 0, 0)
    X = np.array([[1e20, 1.0], [1e20, 2.0], [1e20, 3.0], [0.0, 0.0]])
    labels = row_folds(X, 4, 0)
    assert np.unique(labels).size == 4  # four distinct rows, four folds
    # repeated rows still share a fold
    Xr = np.vstack([X, X[:2]])
    lr = row_folds(Xr, 4, 0)
    assert lr[4] == lr[0] and lr[5] == lr[1]


def test_top_s_nan_and_bad_s():
    with pytest.raises(ValueError, match="NaN"):
        top_s(np.array([np.nan, 1.0, 2.0]), 2)
    with pytest.raises(ValueError, match="s must be >= 1"):
        top_s(np.array([1.0, 2.0, 3.0]), 0)
    with pytest.raises(ValueError, match="s must be an integer"):
        top_s(np.array([1.0, 2.0, 3.0]), 2.0)
    np.testing.assert_array_equal(top_s(np.array([0.5, 2.0, 0.5, 1.0]), 3), [0, 1, 3])


def test_coherence_of_tiny_columns_is_scale_invariant():
    A = np.array([[1.0, 1.0], [0.0, 1.0]])
    assert coherence(A * 1e-200) == pytest.approx(coherence(A), rel=1e-15)
    with pytest.raises(ValueError, match="zero column"):
        coherence(np.array([[1.0, 0.0], [1.0, 0.0]]))


def test_plain_linear_operator_is_refused_by_name():
    sla = pytest.importorskip("scipy.sparse.linalg")
    from rflite.imp import shrimp_path
    from rflite.htp import harfe

    A = sla.aslinearoperator(np.ones((5, 4)))
    with pytest.raises(TypeError, match="without columns"):
        harfe(A, np.ones(5), s=2, lam=0.1)
    with pytest.raises(TypeError, match="without columns"):
        shrimp_path(A, np.ones(5))


# -------------------------------------------------------- ARFF, GFC, theory
def test_arff_early_stopping_scores_each_refit_once():
    """A step accepting nothing left the last refit "fresh": it was scored again
    at non-refit iterations, each repeat counted as a check without improvement."""
    from rflite.metropolis import ARFFRegressor

    rng = np.random.default_rng(1)
    X = rng.standard_normal((80, 3))
    y = np.sin(2 * X[:, 0]) + 0.3 * rng.standard_normal(80)
    est = ARFFRegressor(2, n_iter=300, refit_every=10, gamma=40.0, delta=1.0,
                        n_iter_no_change=5, random_state=0).fit(X, y)
    its = np.asarray(est.validation_iterations_)
    assert np.all(np.diff(its) > 0)
    assert np.all((its % 10 == 0) | (its == est.n_iter_)), its
    assert len(est.validation_scores_) == its.size


def test_thm5_max_sparsity_meets_the_requirement_at_boundaries():
    from rflite.theory import shrimp_thm5_coherence_requirement, shrimp_thm5_max_sparsity

    for s in (1, 2, 7, 1000):
        edge = shrimp_thm5_coherence_requirement(s)  # correctly rounded
        assert shrimp_thm5_max_sparsity(edge) == s
        above = float(np.nextafter(edge, 1.0))
        got = shrimp_thm5_max_sparsity(above)
        assert got == s - 1
        assert got == 0 or shrimp_thm5_coherence_requirement(got) >= above


def test_gfc_transform_before_fit_and_arff_mixed_labels():
    from rflite._base import NotFittedError
    from rflite.greedy import GFCRegressor
    from rflite.metropolis import ARFFClassifier

    with pytest.raises(NotFittedError):
        GFCRegressor().transform(np.ones((3, 2)))
    with pytest.raises(ValueError, match="one orderable type"):
        ARFFClassifier().fit(np.ones((60, 2)), np.array([1, "a"] * 30, dtype=object))


def test_uncertified_infeasible_bpdn_on_an_operator_warns():
    """On an operator the least-squares test behind "sigma_unreachable" is not
    run: a max_iter stop far above sigma came back without any warning (a Dask
    SRFE fit with complex features, 121 s, residual twice eta)."""
    from rflite.bp import InfeasibleResultWarning
    from rflite.features import random_feature_map

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (60, 3))
    y = np.sin(3 * X[:, 0]) + 0.3 * rng.standard_normal(60)
    op = random_feature_map(3, 8, activation="exp", rng=0).operator(X)
    with pytest.warns(InfeasibleResultWarning, match="not certified"):
        res = bpdn(op, y.astype(complex), 0.01, max_iter=20)
    assert not res.certified and res.residual_norm > 0.01
