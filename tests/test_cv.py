"""The shared cross-validation machinery (rflite._core.folds, rflite._core.selection)."""

import numpy as np
import pytest

from rflite._core.folds import KFold, check_cv, cv_splits, holdout_split
from rflite._core.progress import Progress
from rflite._core.selection import choose, cross_validate_grid, weighted_mse

sk_ms = pytest.importorskip("sklearn.model_selection")


@pytest.mark.parametrize("n", [10, 23])
@pytest.mark.parametrize("kw", [dict(n_splits=5), dict(n_splits=3, shuffle=True, random_state=0),
                                dict(n_splits=4, shuffle=True, random_state=7)])
def test_kfold_matches_scikit_learn(n, kw):
    X = np.zeros((n, 1))
    ours = list(KFold(**kw).split(X))
    theirs = list(sk_ms.KFold(**kw).split(X))
    assert len(ours) == len(theirs)
    for (a, b), (c, d) in zip(ours, theirs):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, d)


def test_int_cv_is_unshuffled_kfold_and_splitters_pass_through():
    X = np.zeros((12, 1))
    a = cv_splits(3, X)
    b = cv_splits(sk_ms.KFold(3), X)
    for (p, q), (r, s) in zip(a, b):
        np.testing.assert_array_equal(p, r)
        np.testing.assert_array_equal(q, s)
    assert isinstance(check_cv(None), KFold) and check_cv(None).n_splits == 5


@pytest.mark.parametrize("bad", [1, 0, True, "five", 2.5])
def test_bad_cv_names_the_parameter(bad):
    with pytest.raises(ValueError, match="cv"):
        check_cv(bad)


def test_cv_splits_refuses_empty_or_out_of_range_folds():
    class Bad:
        def split(self, X, y=None):
            yield np.arange(3), np.array([], dtype=int)

    with pytest.raises(ValueError, match="empty test"):
        cv_splits(Bad(), np.zeros((5, 1)))

    class Outside:
        def split(self, X, y=None):
            yield np.arange(3), np.array([7])

    with pytest.raises(ValueError, match="outside"):
        cv_splits(Outside(), np.zeros((5, 1)))


def test_choose_min_and_one_standard_error_rule():
    scores = np.array([[1.0, 0.50, 0.40], [1.2, 0.60, 0.46]])
    c = choose(scores)
    assert c.index == 2 and c.best == 2
    np.testing.assert_allclose(c.mean, [1.1, 0.55, 0.43])
    np.testing.assert_allclose(c.se, np.std(scores, axis=0, ddof=1) / np.sqrt(2))
    # grid point 1 is within one SE of the best only if its mean <= 0.43 + 0.03
    scores2 = np.array([[1.0, 0.44, 0.40], [1.2, 0.46, 0.46]])
    assert choose(scores2, rule="1se").index == 1
    assert choose(scores2, rule="min").index == 2


def test_choose_never_picks_a_point_that_blows_up_on_a_fold():
    scores = np.array([[0.1, 0.2], [500.0, 0.3]])  # point 0 is best on average? no: guard
    c = choose(np.array([[0.01, 0.2], [1.5, 0.3]]), baseline=[1.0, 1.0], mean_factor=1.0)
    assert c.index == 1 and not c.guarded
    c = choose(scores, baseline=[0.01, 0.01], mean_factor=1.0)
    assert c.guarded and c.index == 1  # every point fails: lowest mean
    c = choose(np.array([[np.nan, 1.0]]))
    assert c.index == 1


@pytest.mark.slow(reason="starts a process pool")
def test_cross_validate_grid_serial_equals_pool():
    X = np.arange(20.0)
    splits = cv_splits(4, X)
    serial = cross_validate_grid(_fold_scores, splits)
    pooled = cross_validate_grid(_fold_scores, splits, n_jobs=2)
    np.testing.assert_array_equal(serial, pooled)
    assert serial.shape == (4, 3)


def _fold_scores(train, test):
    return [train.sum(), test.sum(), len(test)]


def test_progress_prints_one_line_per_fold(capsys):
    splits = cv_splits(3, np.zeros(9))
    cross_validate_grid(_fold_scores, splits, progress=Progress(1, "T"))
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and err[0].startswith("[T] fold 1/3")
    cross_validate_grid(_fold_scores, splits, progress=Progress(0, "T"))
    assert capsys.readouterr().err == ""


def test_holdout_and_weighted_mse():
    tr, va = holdout_split(20, 0.25, np.random.default_rng(0))
    assert len(va) == 5 and len(tr) == 15 and not set(tr) & set(va)
    with pytest.raises(ValueError, match="validation_fraction"):
        holdout_split(20, 1.5, np.random.default_rng(0))
    assert weighted_mse([0, 0], [1, 3], [3, 1]) == pytest.approx((3 + 9) / 4)
    assert weighted_mse([0.0], [3 + 4j]) == pytest.approx(25.0)


def test_a_list_of_pairs_is_a_splitter():
    pairs = [(np.array([0, 1, 2]), np.array([3, 4])), (np.array([2, 3, 4]), np.array([0, 1]))]
    got = cv_splits(pairs, np.zeros((5, 1)))
    assert len(got) == 2
    np.testing.assert_array_equal(got[1][1], [0, 1])
