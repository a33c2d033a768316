"""Tests for rflite.datasets: synthetic generators and the UCI loader.

Tolerances: closed-form targets are compared with ``rtol=1e-12`` against
hand-computed values and sklearn's formulas (``1e-10`` where inputs went
through an affine map and back); training standardisation is checked to
``atol=1e-10`` (mean 0, std 1 of a few hundred float64 numbers); distribution
checks of random draws use bounds of 6 standard errors.
"""

from __future__ import annotations

import math
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.io
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

from rflite import datasets as D

SPECS = D.SYNTHETIC_DATASETS
NAMES = sorted(SPECS)

# Independent statement of the data sets' README (1-based columns), used to
# recompute the preprocessing from the raw files.
README = {
    # name: (file, reader, inputs (1-based, inclusive ranges), target, n_train, n_test, n_noise)
    "propulsion": ("propulsion.txt", "ws", [(3, 8), (10, 18)], 2, 200, 200, 0),
    "airfoil": ("airfoil.txt", "ws", [(1, 5)], 6, 750, 750, 36),
    "ccpp": ("ccpp.mat", ("XTrain", "YTrain"), None, None, 2000, 2000, 55),
    "housing": ("housing.txt", "ws", [(2, 3), (5, 14)], 1, 256, 250, 0),
    "speech": ("parkinson21.txt", "comma", [(1, 14), (20, 26)], 15, 520, 520, 0),
    "insulin": ("epidata.mat", ("snp_data", "insulin_data"), None, None, 256, 250, 0),
}
README_D = {"propulsion": 15, "airfoil": 41, "ccpp": 59, "housing": 12, "speech": 21,
            "insulin": 50}

SHARED_UCI = D._DEFAULT_DATA_DIR / "uci"
HAVE_DATA = all((SHARED_UCI / v[0]).is_file() for v in README.values())
needs_data = pytest.mark.skipif(not HAVE_DATA, reason=f"shared data not found at {SHARED_UCI}")


def _supports_d(name):
    return not SPECS[name].d_fixed


# =========================================================================
# synthetic: shapes, reproducibility, noise convention
# =========================================================================
@pytest.mark.parametrize("name", NAMES)
def test_shapes_and_dtype(name):
    spec = SPECS[name]
    X, y = spec.make(37, rng=0)
    assert X.shape == (37, spec.d)
    assert y.shape == (37,)
    assert X.dtype == np.float64 and y.dtype == np.float64
    assert np.all(np.isfinite(X)) and np.all(np.isfinite(y))
    assert isinstance(spec.make(3, rng=0), D.Sample)


@pytest.mark.parametrize("name", [n for n in NAMES if _supports_d(n)])
def test_custom_dimension(name):
    d = SPECS[name].d + 3
    X, y = SPECS[name].make(11, d=d, rng=1)
    assert X.shape == (11, d) and y.shape == (11,)


@pytest.mark.parametrize("name", NAMES)
def test_seeded_reproducibility(name):
    make = SPECS[name].make
    a, b, c = make(50, rng=123), make(50, rng=123), make(50, rng=124)
    assert_array_equal(a.X, b.X)
    assert_array_equal(a.y, b.y)
    assert not np.array_equal(a.X, c.X)
    # A Generator is used, not copied: two calls on it give different data,
    # and the same as two calls on an identically seeded generator.
    g1, g2 = np.random.default_rng(5), np.random.default_rng(5)
    first, second = make(20, rng=g1), make(20, rng=g1)
    assert not np.array_equal(first.X, second.X)
    assert_array_equal(make(20, rng=g2).X, first.X)
    assert_array_equal(make(20, rng=g2).X, second.X)


@pytest.mark.parametrize("name", NAMES)
def test_noise_convention(name):
    """X does not depend on noise; y = target(X) + noise * e with the same e."""
    spec = SPECS[name]
    clean = spec.make(64, noise=0.0, rng=7)
    assert_array_equal(clean.y, spec.target(clean.X))
    noisy1 = spec.make(64, noise=1.0, rng=7)
    noisy3 = spec.make(64, noise=3.0, rng=7)
    assert_array_equal(noisy1.X, clean.X)
    e = noisy1.y - clean.y
    assert_allclose(noisy3.y - clean.y, 3.0 * e, rtol=1e-9, atol=1e-9)
    assert np.std(e) > 0.5  # standard normal noise, 64 draws


def test_noise_is_standard_normal():
    X, y = D.make_harfe1(20000, noise=0.5, rng=3)
    e = (y - D.target_harfe1(X)) / 0.5
    se = 1 / math.sqrt(len(e))
    assert abs(e.mean()) < 6 * se
    assert abs(e.std() - 1.0) < 6 * se


def test_make_synthetic_dispatch():
    a = D.make_synthetic("shrimp7", 10, d=6, noise=0.1, rng=2)
    b = D.make_shrimp7(10, d=6, noise=0.1, rng=2)
    assert_array_equal(a.X, b.X)
    assert_array_equal(a.y, b.y)


@settings(max_examples=25, deadline=None)
@given(
    name=st.sampled_from(NAMES),
    n=st.integers(1, 30),
    seed=st.integers(0, 2**32 - 1),
)
def test_property_shapes_and_determinism(name, n, seed):
    spec = SPECS[name]
    X, y = spec.make(n, rng=seed)
    assert X.shape == (n, spec.d) and y.shape == (n,)
    X2, y2 = spec.make(n, rng=seed)
    assert_array_equal(X, X2)
    assert_array_equal(y, y2)


# =========================================================================
# synthetic: input distributions
# =========================================================================
UNIFORM_BOX = {
    **{f"harfe{i}": (-1.0, 1.0) for i in range(1, 5)},
    **{f"shrimp{i}": (-1.0, 1.0) for i in (1, 2, 3, 4, 5, 7)},
    "shrimp6": (-np.pi, np.pi),
    "shrimp_support": (-1.0, 1.0),
    "friedman1": (0.0, 1.0),
    "friedman2": (0.0, 1.0),
    "friedman3": (0.0, 1.0),
    "friedman_gfc": (0.0, 1.0),
}


@pytest.mark.parametrize("name", sorted(UNIFORM_BOX))
def test_uniform_inputs_in_box(name):
    lo, hi = UNIFORM_BOX[name]
    X, _ = SPECS[name].make(4000, rng=11)
    assert X.min() >= lo and X.max() <= hi
    # fills the box: mean and variance of U[lo, hi] per column, 6 standard errors
    n = X.shape[0]
    width = hi - lo
    sd = width / math.sqrt(12)
    assert np.all(np.abs(X.mean(0) - (lo + hi) / 2) < 6 * sd / math.sqrt(n))
    assert X.min() < lo + 0.01 * width and X.max() > hi - 0.01 * width


@pytest.mark.parametrize("name", ["metropolis1", "metropolis2", "metropolis3"])
def test_normal_inputs(name):
    X, _ = SPECS[name].make(20000, rng=4)
    se = 1 / math.sqrt(X.shape[0])
    assert np.all(np.abs(X.mean(0)) < 6 * se)
    assert np.all(np.abs(X.std(0) - 1) < 6 * se)
    if X.shape[1] > 1:
        C = np.corrcoef(X.T)
        assert np.all(np.abs(C - np.eye(X.shape[1])) < 6 * se)


def test_2dplanes_inputs():
    X, _ = D.make_2dplanes(6000, rng=0)
    assert X.shape == (6000, 10)
    assert set(np.unique(X[:, 0])) == {-1.0, 1.0}
    for j in range(1, 10):
        vals, counts = np.unique(X[:, j], return_counts=True)
        assert_array_equal(vals, [-1.0, 0.0, 1.0])
        assert np.all(np.abs(counts / 6000 - 1 / 3) < 6 * math.sqrt(2 / 9 / 6000))
    assert abs((X[:, 0] == 1).mean() - 0.5) < 6 * 0.5 / math.sqrt(6000)


def test_gfc_defaults():
    X, y = D.make_friedman_gfc(rng=0)
    assert X.shape == (D.GFC_N_SAMPLES, 10) == (40768, 10)
    e = y - D.target_friedman1(X)
    assert abs(e.std() - 1.0) < 0.05  # noise N(0, 1) is part of the definition
    X, y = D.make_2dplanes(rng=0)
    assert X.shape == (40768, 10)
    assert abs((y - D.target_2dplanes(X)).std() - 1.0) < 0.05


# =========================================================================
# synthetic: formulas
# =========================================================================
def test_friedman1_matches_sklearn():
    from sklearn.datasets import make_friedman1

    for d in (5, 10, 20):
        X, y = make_friedman1(300, n_features=d, noise=0.0, random_state=0)
        assert_allclose(D.target_friedman1(X), y, rtol=1e-12, atol=0)


@pytest.mark.parametrize("which", [2, 3])
def test_friedman23_match_sklearn(which):
    from sklearn.datasets import make_friedman2, make_friedman3

    sk = {2: make_friedman2, 3: make_friedman3}[which]
    target = {2: D.target_friedman2, 3: D.target_friedman3}[which]
    Z, y = sk(500, noise=0.0, random_state=1)
    U = (Z - D.FRIEDMAN23_OFFSET) / D.FRIEDMAN23_SCALE
    assert U.min() >= 0 and U.max() <= 1
    assert_allclose(D.friedman23_inputs(U), Z, rtol=1e-12)
    assert_allclose(target(U), y, rtol=1e-10, atol=0)
    # and sklearn's formula written out on our own unit-cube sample
    X, yy = (D.make_friedman2 if which == 2 else D.make_friedman3)(200, rng=2)
    z1 = 100 * X[:, 0]
    z2 = 520 * np.pi * X[:, 1] + 40 * np.pi
    z3 = X[:, 2]
    z4 = 10 * X[:, 3] + 1
    r = z2 * z3 - 1 / (z2 * z4)
    expect = (z1**2 + r**2) ** 0.5 if which == 2 else np.arctan(r / z1)
    assert_allclose(yy, expect, rtol=1e-12)


def _row(x):
    return np.asarray(x, dtype=float)[None, :]


# (target, x, expected) with values worked out by hand
HAND = [
    (D.target_harfe1, np.zeros(5), 1.0),
    (D.target_harfe1, np.ones(5), 1 / math.sqrt(6)),
    (D.target_harfe2, np.ones(5), math.sqrt(6)),
    (D.target_harfe3, [0.5, -1.0, 1.0, 0.3, 0.7], -0.25),
    (D.target_harfe4, np.zeros(100), 100.0),
    (D.target_harfe4, [-1.0, 1.0, 0.0], 2 * math.exp(-1) + 1),
    (D.target_friedman1, [0.5, 1.0, 0.5, 0.0, 0.0, 9.0], 10.0),
    (D.target_friedman1, [0.0, 0.0, 0.0, 1.0, 1.0], 5.0 + 10.0 + 5.0),
    (D.target_shrimp1, np.zeros(10), 1.0),
    (D.target_shrimp1, [1.0, 2.0, 3.0, 0.0], 6.0 + 1.0),
    (D.target_shrimp2, [0.0, math.pi / 2, 5.0], 2.0),
    (D.target_shrimp3, [1.0, 0.0, 7.0], -1.0),
    (D.target_shrimp4, [1.0, 0.0, 0.0], -1.0 - 1.0 + 1.0),
    (D.target_shrimp5, np.zeros(3), 2.0),
    (D.target_shrimp5, [1.0, 0.5, 0.0], 0.0 + 2 / math.pi),
    (D.target_shrimp6, [math.pi / 2, math.pi / 2, 1.0], 1.0 + 7.0 + 0.1),
    (D.target_shrimp7, [0.0, 1.0, 2.0, 3.0, 4.0], 2.0 + 3.0 + (2.0 + 3.0 + 4.0)),
    (D.target_shrimp_support, [9.0, math.pi / 2, 0.0, math.pi / 2, 9.0], 2.0 + 3.0 + 4.0),
    (D.target_metropolis1, [0.0], 0.0),
    (D.target_metropolis3, [0.0, 0.0], 1.0),
    (D.target_metropolis3, [1 / 32, 32.0], math.exp(-1.0)),
    (D.target_2dplanes, [1, 1, 1, 1, 1, 1, 1, 0, 0, 0], 3.0 + 3.0 + 2.0 + 1.0),
    (D.target_2dplanes, [-1, 1, 1, 1, 1, 1, 1, 0, 0, 0], -3.0 + 3.0 + 2.0 + 1.0),
    (D.target_2dplanes, [-1, 0, 0, 0, -1, 0, 1, 1, 1, 1], -3.0 - 3.0 + 1.0),
]


@pytest.mark.parametrize("target,x,expected", HAND, ids=lambda v: getattr(v, "__name__", ""))
def test_hand_computed_values(target, x, expected):
    assert_allclose(target(_row(x)), [expected], rtol=1e-12, atol=1e-15)


def test_sinc_is_normalised():
    # sinc(1) = sin(pi)/pi = 0 in numpy's convention (unnormalised would give sin 1).
    assert_allclose(D.target_shrimp5(_row([0.0, 1.0, 0.0])), [1.0], atol=1e-15)


def test_sine_integral_targets():
    # Si(t) -> pi/2 for large t: Si(1000) = pi/2 - cos(1000)/1000 + O(1e-6)
    x = 1.0
    expect = (math.pi / 2 - math.cos(1000.0) / 1000.0) * math.exp(-0.5)
    assert_allclose(D.target_metropolis1(_row([x])), [expect], rtol=1e-5)
    # case 2 uses x_1 / a in Si and the whole |x|^2 in the Gaussian
    from scipy.special import sici

    x = np.array([0.3, 0.2, -0.1, 0.5, 1.0])
    expect = sici(0.3 / 0.1)[0] * math.exp(-0.5 * float(x @ x))
    assert_allclose(D.target_metropolis2(_row(x)), [expect], rtol=1e-12)
    assert_allclose(D.target_metropolis2(_row(x), a=0.5), [sici(0.6)[0] * math.exp(-0.5 * x @ x)])
    # odd in x_1
    assert_allclose(D.target_metropolis1(_row([-0.2])), -D.target_metropolis1(_row([0.2])))


@pytest.mark.parametrize(
    "target,d,active",
    [
        (D.target_harfe3, 5, {0, 1, 2}),
        (D.target_friedman1, 20, {0, 1, 2, 3, 4}),
        (D.target_shrimp2, 10, {0, 1}),
        (D.target_shrimp3, 10, {0, 1}),
        (D.target_shrimp4, 10, {0, 1, 2}),
        (D.target_shrimp5, 10, {0, 1, 2}),
        (D.target_shrimp6, 10, {0, 1, 2}),
        (D.target_shrimp_support, 5, {1, 2, 3}),
        (D.target_metropolis3, 2, {0, 1}),
        (D.target_2dplanes, 10, set(range(7))),
    ],
)
def test_active_variables(target, d, active):
    """Perturbing an inactive column leaves f unchanged; an active one changes it."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-0.9, 0.9, size=(50, d))
    if target is D.target_2dplanes:
        X = rng.integers(-1, 2, size=(50, d)).astype(float)
        X[:, 0] = np.where(np.arange(50) % 2 == 0, 1.0, -1.0)
    if target is D.target_metropolis3:
        X[:, 0] *= 0.05
    f = target(X)
    for j in range(d):
        Xp = X.copy()
        Xp[:, j] = -Xp[:, j] * 0.5 + 0.07 if target is not D.target_2dplanes else -Xp[:, j]
        if j == 0 and target is D.target_2dplanes:
            continue  # x1 switches the plane; checked by the hand values
        changed = not np.allclose(target(Xp), f, rtol=0, atol=0)
        assert changed == (j in active), f"column {j}"


# =========================================================================
# bad input
# =========================================================================
@pytest.mark.parametrize("name", NAMES)
def test_bad_n_samples_and_noise(name):
    make = SPECS[name].make
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="n_samples"):
            make(bad)
    with pytest.raises(ValueError, match="noise"):
        make(5, noise=-0.1)
    with pytest.raises(ValueError, match="noise"):
        make(5, noise=float("nan"))
    with pytest.raises(ValueError, match="rng"):
        make(5, rng="seed")


@pytest.mark.parametrize(
    "make,d_bad",
    [
        (D.make_harfe1, 0), (D.make_harfe3, 2), (D.make_friedman1, 4),
        (D.make_shrimp1, 0), (D.make_shrimp2, 1), (D.make_shrimp4, 2),
        (D.make_shrimp7, 3), (D.make_shrimp_support, 3), (D.make_metropolis2, 0),
    ],
)
def test_d_too_small(make, d_bad):
    with pytest.raises(ValueError, match=r"\bd\b"):
        make(5, d=d_bad)


def test_bad_targets_and_names():
    with pytest.raises(ValueError, match="X"):
        D.target_friedman1(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="X"):
        D.target_friedman2(np.zeros((3, 5)))
    with pytest.raises(ValueError, match="X"):
        D.target_shrimp1(np.zeros(3))
    with pytest.raises(ValueError, match="X"):
        D.target_harfe1(np.full((2, 3), np.nan))
    with pytest.raises(ValueError, match=r"^a must"):
        D.make_metropolis1(5, a=0.0)
    with pytest.raises(ValueError, match="name"):
        D.make_synthetic("friedman4", 10)
    with pytest.raises(ValueError, match="name"):
        D.load_uci("boston")
    with pytest.raises(ValueError, match="n_noise"):
        D.load_uci("airfoil", n_noise=-1)


# =========================================================================
# UCI loader
# =========================================================================
def _raw(name, uci_dir):
    file, reader, inputs, target, *_ = README[name]
    path = Path(uci_dir) / file
    if isinstance(reader, tuple):
        mat = scipy.io.loadmat(path)
        return mat[reader[0]].astype(float), mat[reader[1]].astype(float).ravel()
    table = np.loadtxt(path, delimiter="," if reader == "comma" else None)
    cols = [c - 1 for lo, hi in inputs for c in range(lo, hi + 1)]
    X, y = table[:, cols], table[:, target - 1]
    if name == "propulsion":
        y = np.log(y)
    return X, y


@pytest.fixture(scope="module")
def loaded():
    if not HAVE_DATA:
        pytest.skip("shared data not available")
    return {name: D.load_uci(name, rng=0) for name in README}


@needs_data
@pytest.mark.parametrize("name", sorted(README))
def test_uci_shapes(loaded, name):
    ds = loaded[name]
    _, _, _, _, n_train, n_test, n_noise = README[name]
    d = README_D[name]
    assert ds.X_train.shape == (n_train, d) and ds.X_test.shape == (n_test, d)
    assert ds.y_train.shape == (n_train,) and ds.y_test.shape == (n_test,)
    assert ds.d == d == D.UCI_DATASETS[name].d
    assert ds.n_noise == n_noise == D.UCI_DATASETS[name].n_noise
    assert ds.name == name
    info = D.UCI_DATASETS[name]
    assert (info.n_train, info.n_test) == (n_train, n_test)
    for arr in ds[:4]:
        assert arr.dtype == np.float64 and np.all(np.isfinite(arr))


@needs_data
@pytest.mark.parametrize("name", sorted(README))
def test_uci_train_standardised(loaded, name):
    ds = loaded[name]
    k = ds.d - ds.n_noise
    Xo = ds.X_train[:, :k]
    assert_allclose(Xo.mean(0), 0.0, atol=1e-10)
    std = Xo.std(0)
    const = ds.x_std == 1.0  # only constant columns keep a unit scale
    assert_allclose(std[~const], 1.0, atol=1e-10)
    assert_allclose(std[const], 0.0, atol=1e-10)
    assert_allclose(ds.y_train.mean(), 0.0, atol=1e-10)
    assert_allclose(ds.y_train.std(), 1.0, atol=1e-10)
    if ds.n_noise:
        Z = np.vstack([ds.X_train[:, k:], ds.X_test[:, k:]]).ravel()
        se = 1 / math.sqrt(Z.size)
        assert abs(Z.mean()) < 6 * se and abs(Z.std() - 1) < 6 * se


@needs_data
def test_uci_constant_column_is_propulsion_12(loaded):
    ds = loaded["propulsion"]
    inputs = [c for lo, hi in README["propulsion"][2] for c in range(lo, hi + 1)]
    const_cols = [inputs[j] for j in np.flatnonzero(ds.x_std == 1.0)]
    assert const_cols == [12]
    assert_array_equal(ds.X_train[:, inputs.index(12)], 0.0)


@needs_data
@pytest.mark.parametrize("name", sorted(README))
def test_uci_matches_independent_preprocessing(loaded, name):
    """Recompute from the raw file: seeded shuffle, rows, columns, train stats."""
    ds = loaded[name]
    _, _, _, _, n_train, n_test, n_noise = README[name]
    X, y = _raw(name, SHARED_UCI)
    rng = np.random.default_rng(0)
    perm = rng.permutation(X.shape[0])
    tr, te = perm[:n_train], perm[n_train:n_train + n_test]
    mu, sd = X[tr].mean(0), X[tr].std(0)
    const = np.ptp(X[tr], axis=0) == 0  # centred on their value, not scaled
    mu[const], sd[const] = X[tr][0, const], 1.0
    k = X.shape[1]
    assert_allclose(ds.X_train[:, :k], (X[tr] - mu) / sd, rtol=1e-12, atol=1e-12)
    # the test set is standardised with the TRAINING statistics
    assert_allclose(ds.X_test[:, :k], (X[te] - mu) / sd, rtol=1e-12, atol=1e-12)
    assert_allclose(ds.y_test, (y[te] - y[tr].mean()) / y[tr].std(), rtol=1e-12, atol=1e-12)
    assert_allclose([ds.y_mean, ds.y_std], [y[tr].mean(), y[tr].std()], rtol=1e-12)
    assert_allclose(ds.x_mean, mu, rtol=1e-12, atol=1e-300)
    # mapping back recovers the raw target
    assert_allclose(ds.y_test * ds.y_std + ds.y_mean, y[te], rtol=1e-12)
    if n_noise:
        Ztr = rng.standard_normal((n_train, n_noise))
        Zte = rng.standard_normal((n_test, n_noise))
        assert_array_equal(ds.X_train[:, k:], Ztr)
        assert_array_equal(ds.X_test[:, k:], Zte)


@needs_data
def test_uci_reproducible_and_options(loaded):
    a = D.load_uci("airfoil", rng=0)
    for x, y in zip(a[:4], loaded["airfoil"][:4]):
        assert_array_equal(x, y)
    b = D.load_uci("airfoil", rng=1)
    assert not np.array_equal(a.y_train, b.y_train)
    c = D.load_uci("airfoil", rng=0, n_noise=0)
    assert c.d == 5 and c.X_train.shape == (750, 5)
    assert_array_equal(c.X_train, a.X_train[:, :5])
    h = D.load_uci("housing", rng=0, n_noise=3)
    assert h.d == 15 and h.X_test.shape == (250, 15)
    s1 = D.load_uci("housing", rng=0, ddof=1)
    assert_allclose(s1.X_train.std(0, ddof=1), 1.0, atol=1e-10)
    assert_allclose(s1.y_train.std(ddof=1), 1.0, atol=1e-10)


def test_uci_table():
    assert set(D.UCI_DATASETS) == set(README)
    for name, info in D.UCI_DATASETS.items():
        assert info.file == "uci/" + README[name][0]
        assert set(info.published) == {"HARFE", "SHRIMP", "SALSA", "SRFE", "Lasso"}
        assert set(info.harfe_params) == {"N", "s", "m_lambda", "q"}
        if info.inputs is not None:
            assert len(info.inputs) + info.n_noise == info.d
    assert D.UCI_DATASETS["propulsion"].published["HARFE"] == 4.17e-5
    assert D.UCI_DATASETS["insulin"].published["Lasso"] == 1.110
    assert D.UCI_DATASETS["speech"].published["SHRIMP"] is None
    assert D.UCI_DATASETS["airfoil"].harfe_params == {"N": 80000, "s": 5000, "m_lambda": 1.0,
                                                       "q": 2}
    assert D.UCI_DATASETS["housing"].shrimp_q == 7


# ------------------------------------------------------------- data lookup
def _fake_housing(directory: Path, *, nested: bool, scale: float = 1.0) -> Path:
    """A random 506 x 14 whitespace table standing in for housing.txt."""
    target = directory / "uci" if nested else directory
    target.mkdir(parents=True, exist_ok=True)
    table = np.random.default_rng(int(scale * 10)).uniform(1, 2, size=(506, 14)) * scale
    np.savetxt(target / "housing.txt", table)
    return target / "housing.txt"


@pytest.fixture
def isolated(monkeypatch, tmp_path):
    """No env var, and a default location that does not exist."""
    monkeypatch.delenv(D.DATA_ENV_VAR, raising=False)
    monkeypatch.setattr(D, "_DEFAULT_DATA_DIR", tmp_path / "no-default")
    monkeypatch.setattr(D, "_PACKAGED_DATA_DIR", tmp_path / "no-package-copy")
    return tmp_path


def test_lookup_argument_flat_and_nested(isolated):
    flat = _fake_housing(isolated / "flat", nested=False)
    nested = _fake_housing(isolated / "nested", nested=True)
    assert D.uci_path("housing", isolated / "flat") == flat
    assert D.uci_path("housing", str(isolated / "nested")) == nested
    ds = D.load_uci("housing", isolated / "flat", 0)
    assert ds.X_train.shape == (256, 12)
    assert_allclose(ds.y_train.std(), 1.0, atol=1e-10)


def test_lookup_env_var_and_precedence(isolated, monkeypatch):
    env_file = _fake_housing(isolated / "env", nested=True, scale=2.0)
    arg_file = _fake_housing(isolated / "arg", nested=False, scale=3.0)
    monkeypatch.setenv(D.DATA_ENV_VAR, str(isolated / "env"))
    assert D.uci_path("housing") == env_file
    assert D.uci_path("housing", isolated / "arg") == arg_file
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from_env = D.load_uci("housing", rng=0)
        from_arg = D.load_uci("housing", isolated / "arg", rng=0)
    assert 2.5 < from_env.y_mean < 4.5  # uniform(1, 2) * 2
    assert 4.0 < from_arg.y_mean < 6.0  # uniform(1, 2) * 3


def test_lookup_default_and_fallback_warning(isolated, monkeypatch):
    default_file = _fake_housing(isolated / "default", nested=True)
    monkeypatch.setattr(D, "_DEFAULT_DATA_DIR", isolated / "default")
    assert D.uci_path("housing") == default_file
    (isolated / "empty").mkdir()
    with pytest.warns(UserWarning, match="data_dir argument"):
        assert D.uci_path("housing", isolated / "empty") == default_file
    monkeypatch.setenv(D.DATA_ENV_VAR, str(isolated / "empty"))
    with pytest.warns(UserWarning, match=D.DATA_ENV_VAR):
        assert D.uci_path("housing") == default_file


def test_lookup_not_found_names_all_locations(isolated, monkeypatch):
    (isolated / "empty").mkdir()
    monkeypatch.setenv(D.DATA_ENV_VAR, str(isolated / "env-missing"))
    with pytest.raises(FileNotFoundError) as exc:
        D.load_uci("housing", isolated / "empty")
    msg = str(exc.value)
    assert str(isolated / "empty") in msg
    assert str(isolated / "env-missing") in msg and D.DATA_ENV_VAR in msg
    assert str(isolated / "no-default") in msg
    assert "housing.txt" in msg
    monkeypatch.delenv(D.DATA_ENV_VAR)
    with pytest.raises(FileNotFoundError, match="not set"):
        D.uci_path("housing")


def test_lookup_real_default_location():
    assert D._DEFAULT_DATA_DIR == Path(D.__file__).resolve().parents[2] / "shared" / "data"


@needs_data
def test_copy_in_data_dir_gives_same_split(tmp_path, loaded):
    shutil.copy(SHARED_UCI / "epidata.mat", tmp_path / "epidata.mat")
    ds = D.load_uci("insulin", tmp_path, 0)
    assert_array_equal(ds.X_train, loaded["insulin"].X_train)
    assert_array_equal(ds.y_test, loaded["insulin"].y_test)


def test_packaged_copies_are_found_and_identical(monkeypatch, tmp_path):
    monkeypatch.delenv(D.DATA_ENV_VAR, raising=False)
    monkeypatch.setattr(D, "_DEFAULT_DATA_DIR", tmp_path / "no-default")
    for name in ("housing", "airfoil"):
        path = D.uci_path(name)
        assert path.parent == D._PACKAGED_DATA_DIR
        shared = Path(__file__).resolve().parents[2] / "shared" / "data" / "uci" / path.name
        if shared.is_file():
            assert path.read_bytes() == shared.read_bytes()
    with pytest.raises(FileNotFoundError):
        D.uci_path("ccpp")


# -------------------------------------------------------------- bad data files
def _write_housing(directory: Path, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "housing.txt"
    path.write_text(text)
    return path


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_values_in_a_data_file_are_refused(isolated, bad):
    table = np.random.default_rng(0).uniform(1, 2, size=(506, 14))
    table[300, 4] = bad
    d = isolated / "nonfinite"
    d.mkdir()
    np.savetxt(d / "housing.txt", table)
    with pytest.raises(ValueError) as exc:
        D.load_uci("housing", d, 0)
    msg = str(exc.value)
    assert str(d / "housing.txt") in msg and "NaN or infinite" in msg
    assert "row 301, column 5" in msg and "name='housing'" in msg


def test_ddof_at_least_the_training_rows_is_refused(isolated):
    d = isolated / "ok"
    _fake_housing(d, nested=False)
    n_train = D.UCI_DATASETS["housing"].n_train
    ok = D.load_uci("housing", d, 0, ddof=n_train - 1)
    assert np.isfinite(ok.y_std) and np.all(np.isfinite(ok.X_train))
    for ddof in (n_train, n_train + 5):
        with pytest.raises(ValueError, match=f"ddof={ddof} must be smaller than the {n_train}"):
            D.load_uci("housing", d, 0, ddof=ddof)


@pytest.mark.parametrize("text, what", [
    ("1 2 3\n4 five 6\n", "not a table of numbers"),
    ("1 2 3\n4 5\n", "not a table of numbers"),
    ("", "no data"),
    (b"\xff\xfe\x00garbage\x00".decode("latin-1"), "not a table of numbers"),
])
def test_corrupt_text_file_error_names_the_file(isolated, text, what):
    path = _write_housing(isolated / "corrupt", text)
    with pytest.raises(ValueError) as exc:
        D.load_uci("housing", path.parent, 0)
    assert str(path) in str(exc.value) and what in str(exc.value)


def test_corrupt_mat_file_error_names_the_file(isolated):
    d = isolated / "mat"
    d.mkdir()
    path = d / "epidata.mat"
    path.write_bytes(b"MATLAB 5.0 MAT-file, truncated" + bytes(40))
    with pytest.raises(ValueError) as exc:
        D.load_uci("insulin", d, 0)
    assert str(path) in str(exc.value) and "not a readable MATLAB .mat file" in str(exc.value)
    assert "name='insulin'" in str(exc.value)
    # a valid .mat file without the expected variables
    import scipy.io
    scipy.io.savemat(path, {"other": np.ones((3, 3))})
    with pytest.raises(ValueError, match="missing; the file holds \\['other'\\]") as exc:
        D.load_uci("insulin", d, 0)
    assert str(path) in str(exc.value)
    scipy.io.savemat(path, {"snp_data": np.ones((600, 50)), "insulin_data": np.full(600, np.nan)})
    with pytest.raises(ValueError, match="NaN or infinite value.*entry 1"):
        D.load_uci("insulin", d, 0)
