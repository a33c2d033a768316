"""Selection grids and splitters: the order a grid is given in does not change the
choice, and KFold refuses arguments it would ignore, as scikit-learn's does."""

import numpy as np
import pytest

from rflite._core.folds import KFold
from rflite._core.selection import check_grid
from rflite.greedy import NU_GRID, gfc
from rflite.ridge import RandomFeatureRidgeCV


def test_kfold_refuses_random_state_without_shuffle():
    with pytest.raises(ValueError, match="random_state=0 has no effect with shuffle=False"):
        KFold(3, random_state=0)
    folds = list(KFold(3, shuffle=True, random_state=0).split(np.zeros((9, 1))))
    assert len(folds) == 3


def test_kfold_refuses_like_scikit_learn():
    model_selection = pytest.importorskip("sklearn.model_selection")
    with pytest.raises(ValueError):
        model_selection.KFold(3, random_state=0)
    with pytest.raises(ValueError):
        KFold(3, random_state=0)


@pytest.mark.parametrize("order,expected", [("ascending", [1.0, 2.0, 3.0]),
                                            ("descending", [3.0, 2.0, 1.0]),
                                            (None, [2.0, 3.0, 1.0])])
def test_check_grid_orders(order, expected):
    np.testing.assert_array_equal(check_grid([2.0, 3.0, 1.0], "g", order=order), expected)


def test_check_grid_refuses_unknown_order():
    with pytest.raises(ValueError, match="order"):
        check_grid([1.0], "g", order="up")


def _noisy(m=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (m, 3))
    return X, np.sin(3 * X[:, 0]) + 0.3 * rng.standard_normal(m)


def test_ridge_cv_choice_does_not_depend_on_the_grid_order():
    """The 1se rule takes the first grid point within a standard error: the grid
    is read from the largest penalty (simplest model) whatever order it came in."""
    X, y = _noisy()
    lams = [1e-6, 1e-4, 1e-2, 1.0, 10.0]
    kw = dict(n_features=80, scales=[1.0], cv=4, rule="1se", random_state=0)
    up = RandomFeatureRidgeCV(lams=lams, **kw).fit(X, y)
    down = RandomFeatureRidgeCV(lams=lams[::-1], **kw).fit(X, y)
    assert up.lam_ == down.lam_
    np.testing.assert_array_equal(up.predict(X), down.predict(X))


def test_gfc_choice_does_not_depend_on_the_nu_grid_order(monkeypatch):
    """Tied fold errors (every nu scores the same here) go to the same nu
    whatever order the grid is given in."""
    from rflite._gfc import amplitudes

    monkeypatch.setattr(amplitudes, "ridge_cv", lambda A, y, nus, folds: np.zeros(len(nus)))
    X, y = _noisy(80, seed=1)
    kw = dict(n_passes=1, max_steps=3, n_workers=2, eps=0.0, rng=0)
    grid = np.asarray(NU_GRID)
    perm = np.random.default_rng(0).permutation(grid.size)
    a = gfc(X, y, nu_grid=grid, **kw)
    b = gfc(X, y, nu_grid=grid[perm], **kw)
    assert a.nu == b.nu == grid.min()
    np.testing.assert_array_equal(a.coef_cos, b.coef_cos)
