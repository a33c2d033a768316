"""RandomFeatures: kernel approximation, scikit-learn drop-in behaviour, validation.

scikit-learn is a test-only dependency; it is imported here, never by rflite.
"""

import pickle
import warnings

import numpy as np
import pytest

from rflite._features import orf as _orf
from rflite.features import RandomFeatures

sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone  # noqa: E402
from sklearn.kernel_approximation import RBFSampler  # noqa: E402
from sklearn.linear_model import RidgeCV  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402


def exact_kernel(kernel, X, Y, gamma):
    """The kernels of the docstring's table, written out directly."""
    D = X[:, None, :] - Y[None, :, :]
    if kernel == "gaussian":
        return np.exp(-gamma * (D ** 2).sum(-1))
    if kernel == "laplace":
        return np.exp(-gamma * np.abs(D).sum(-1))
    return np.prod(1.0 / (1.0 + gamma ** 2 * D ** 2), axis=-1)


def kernel_error(Z, K):
    """Mean |z(x_i)^T z(x_k) - k(x_i, x_k)| over the pairs i < k."""
    iu = np.triu_indices(K.shape[0], 1)
    return np.abs((Z @ Z.T - K)[iu]).mean()


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    return rng.normal(size=(40, 8))


# gamma per kernel: kernel values on the data mostly in (0.05, 0.9)
GAMMAS = {"gaussian": 1 / 16, "laplace": 1 / 8, "cauchy": 1 / 2}


@pytest.mark.parametrize("kernel", ["gaussian", "laplace", "cauchy"])
def test_kernel_error_decreases_with_n_components(data, kernel):
    gamma = GAMMAS[kernel]
    K = exact_kernel(kernel, data, data, gamma)
    assert 0.02 < K[np.triu_indices(40, 1)].mean() < 0.9  # a non-trivial kernel

    def err(n):
        return np.mean([
            kernel_error(RandomFeatures(n_components=n, gamma=gamma, kernel=kernel,
                                        random_state=s).fit_transform(data), K)
            for s in range(5)
        ])

    small, large = err(64), err(1024)
    # Monte Carlo error ~ 1/sqrt(N): 16x the features, ~4x smaller error
    assert large < 0.4 * small
    assert large < 0.03


@pytest.mark.parametrize("kernel", ["laplace", "cauchy"])
def test_wrong_law_does_not_fit(data, kernel):
    # the laws are not interchangeable: the Cauchy kernel's features do not
    # approximate the Laplace kernel (and vice versa), so the test above can fail
    other = {"laplace": "cauchy", "cauchy": "laplace"}[kernel]
    gamma = GAMMAS[kernel]
    K = exact_kernel(kernel, data, data, gamma)
    Z = RandomFeatures(n_components=4096, gamma=gamma, kernel=other,
                       random_state=0).fit_transform(data)
    Z_right = RandomFeatures(n_components=4096, gamma=gamma, kernel=kernel,
                             random_state=0).fit_transform(data)
    assert kernel_error(Z, K) > 3 * kernel_error(Z_right, K)


def test_same_error_as_rbfsampler(data):
    # 40 seeds each: the per-seed error spreads by ~20 %, the mean of 40 by
    # ~3 % per side, so 10 % on the ratio is about 3 standard deviations
    gamma, n = GAMMAS["gaussian"], 256
    K = exact_kernel("gaussian", data, data, gamma)
    ours = np.mean([kernel_error(RandomFeatures(n_components=n, gamma=gamma, random_state=s)
                                 .fit_transform(data), K) for s in range(40)])
    theirs = np.mean([kernel_error(RBFSampler(n_components=n, gamma=gamma, random_state=s)
                                   .fit_transform(data), K) for s in range(40)])
    assert abs(ours / theirs - 1) < 0.10


def test_orthogonal_lowers_gaussian_error(data):
    gamma, n = GAMMAS["gaussian"], 256  # 32 orthogonal blocks of d = 8 rows
    K = exact_kernel("gaussian", data, data, gamma)

    def err(orthogonal):
        return np.mean([
            kernel_error(RandomFeatures(n_components=n, gamma=gamma, orthogonal=orthogonal,
                                        random_state=s).fit_transform(data), K)
            for s in range(10)
        ])

    plain, orth = err(False), err(True)
    # the ratio is about 0.86-0.89 over disjoint sets of 10 seeds
    assert orth < 0.95 * plain


def test_orthogonal_weights_structure():
    rng = np.random.default_rng(1)
    d, n, scale = 6, 15, 0.7
    W = _orf.orthogonal_gaussian(rng, n, d, scale)
    assert W.shape == (n, d)
    for start in (0, 6):  # the two full blocks: orthogonal rows
        B = W[start:start + d]
        G = B @ B.T
        np.testing.assert_allclose(G - np.diag(np.diag(G)), 0, atol=1e-12)
    # rows are N(0, scale^2 I): E ||w||^2 = d scale^2 (chi_d norms)
    Wbig = _orf.orthogonal_gaussian(np.random.default_rng(2), 6000, d, scale)
    np.testing.assert_allclose((Wbig ** 2).sum(1).mean(), d * scale ** 2, rtol=0.03)
    # and the directions are uniform: the second moment is scale^2 I
    np.testing.assert_allclose(Wbig.T @ Wbig / 6000, scale ** 2 * np.eye(d), atol=0.03)


def test_sparse_weights_approximate_subset_average_kernel():
    # q < d: E_S k(delta_S) over the uniformly random q-subsets S
    rng = np.random.default_rng(3)
    X = rng.normal(size=(12, 3))
    gamma = 0.3
    D2 = (X[:, None, :] - X[None, :, :]) ** 2
    K_sub = np.mean([np.exp(-gamma * D2[..., list(S)].sum(-1))
                     for S in ((0, 1), (0, 2), (1, 2))], axis=0)
    K_full = exact_kernel("gaussian", X, X, gamma)
    Z = RandomFeatures(n_components=20000, gamma=gamma, q=2, random_state=0).fit_transform(X)
    assert kernel_error(Z, K_sub) < 0.01
    assert kernel_error(Z, K_full) > 0.03  # it is a different kernel


def test_gaussian_weights_are_random_feature_maps(data):
    # the plain Gaussian map is exactly the library's random_feature_map with
    # Normal(sqrt(2 gamma)) weights, uniform phases and cos (same streams)
    from rflite.features import Normal, random_feature_map

    for q in (None, 3):
        rf = RandomFeatures(n_components=40, gamma=0.3, q=q, random_state=7).fit(data)
        ref = random_feature_map(8, 40, q=q, distribution=Normal(np.sqrt(0.6)),
                                 bias="uniform", activation="cos", rng=7)
        np.testing.assert_array_equal(rf.feature_map_.supports, ref.supports)
        np.testing.assert_array_equal(rf.feature_map_.values, ref.values)
        np.testing.assert_array_equal(rf.feature_map_.bias, ref.bias)


def test_transform_matches_numpy_reference(data):
    rf = RandomFeatures(n_components=300, gamma=0.2, kernel="laplace", q=3,
                        random_state=4).fit(data)
    W = rf.feature_map_.dense_weights()
    ref = np.sqrt(2 / 300) * np.cos(data @ W.T + rf.feature_map_.bias)
    np.testing.assert_allclose(rf.transform(data), ref, rtol=0, atol=1e-13)
    assert np.count_nonzero(W, axis=1).max() == 3


@pytest.mark.parametrize("q", [None, 1])
def test_fused_kernels_match_numpy_reference(q):
    # dense (BLAS) and sparse (gather) paths, several row blocks and threads,
    # and one row with phases beyond SINCOS_MAX_ABS (the libm fallback)
    rng = np.random.default_rng(6)
    X = rng.uniform(-1, 1, (70, 8))
    X[5] *= 1e6
    rf = RandomFeatures(n_components=3000, gamma=2.0, q=q, random_state=1).fit(X)
    assert rf.feature_map_.uses_blas == (q is None)
    assert np.abs(X[5] @ rf.feature_map_.dense_weights().T).max() > 2.0 ** 19
    W, b = rf.feature_map_.dense_weights(), rf.feature_map_.bias
    ref = np.sqrt(2 / 3000) * np.cos(X @ W.T + b)
    amp = np.sqrt(2 / 3000)
    for n_threads in (1, 2):
        Z = rf._cos_features(X, amp, n_threads=n_threads)
        # 1-ulp sincos, and the phase's rounding (BLAS order) times |phase|
        tol = 4 * 8 * np.finfo(float).eps * np.abs(X @ np.abs(W).T + b).max(1, keepdims=True)
        assert np.all(np.abs(Z - ref) <= amp * (tol + 1e-15))
    np.testing.assert_array_equal(rf._cos_features(X, amp, n_threads=1),
                                  rf._cos_features(X, amp, n_threads=2))
    # same values as the library's FeatureMap.transform, scaled
    np.testing.assert_allclose(rf.transform(X), amp * rf.feature_map_.transform(X),
                               rtol=0, atol=1e-15)


def test_transform_of_new_data_consistent(data):
    rf = RandomFeatures(n_components=50, random_state=0).fit(data)
    Z = rf.transform(data)
    np.testing.assert_array_equal(rf.transform(data[7:19]), Z[7:19])
    # fit uses only the shape (fixed gamma): weights do not depend on the values
    rf2 = RandomFeatures(n_components=50, random_state=0).fit(data[::-1] * 3)
    np.testing.assert_array_equal(rf2.transform(data), Z)
    # prefix stability: the first 50 features of a larger map
    big = RandomFeatures(n_components=80, random_state=0).fit(data).transform(data)
    np.testing.assert_allclose(big[:, :50] * np.sqrt(80 / 50), Z, rtol=1e-14, atol=1e-15)


def test_q_larger_than_d_clipped(data):
    a = RandomFeatures(n_components=20, q=100, random_state=0).fit(data)
    b = RandomFeatures(n_components=20, random_state=0).fit(data)
    assert a.q_ == b.q_ == data.shape[1]
    np.testing.assert_array_equal(a.transform(data), b.transform(data))


def test_gamma_scale(data):
    rf = RandomFeatures(gamma="scale", random_state=0).fit(data)
    assert rf.gamma_ == pytest.approx(1 / (data.shape[1] * data.var()))
    assert RandomFeatures(gamma="scale").fit(np.ones((4, 2))).gamma_ == 1.0


def test_float32(data):
    rf = RandomFeatures(n_components=64, random_state=0).fit(data)
    rf32 = RandomFeatures(n_components=64, random_state=0, dtype="float32").fit(data)
    Z32 = rf32.transform(data)
    assert Z32.dtype == np.float32
    np.testing.assert_allclose(Z32, rf.transform(data), atol=1e-6)


def test_pipeline_ridgecv_clone_pickle():
    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, (200, 4))
    y = np.sin(3 * X[:, 0]) + X[:, 1] ** 2 + 0.05 * rng.normal(size=200)
    pipe = make_pipeline(RandomFeatures(n_components=300, gamma=0.5, random_state=0),
                         RidgeCV(alphas=np.logspace(-6, 1, 8)))
    pipe.fit(X[:150], y[:150])
    assert pipe.score(X[150:], y[150:]) > 0.9
    # RBFSampler in its place behaves the same way
    sk = make_pipeline(RBFSampler(n_components=300, gamma=0.5, random_state=0),
                       RidgeCV(alphas=np.logspace(-6, 1, 8))).fit(X[:150], y[:150])
    assert pipe.score(X[150:], y[150:]) > sk.score(X[150:], y[150:]) - 0.05

    params = pipe.get_params()
    assert params["randomfeatures__n_components"] == 300
    pipe2 = clone(pipe).set_params(randomfeatures__kernel="laplace")
    assert pipe2.steps[0][1].kernel == "laplace" and not hasattr(pipe2.steps[0][1],
                                                                 "feature_map_")
    restored = pickle.loads(pickle.dumps(pipe))
    np.testing.assert_array_equal(restored.predict(X), pipe.predict(X))


def test_feature_names(data):
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(data[:, :3], columns=["a", "b", "c"])
    rf = RandomFeatures(n_components=5, random_state=0).fit(df)
    np.testing.assert_array_equal(rf.feature_names_in_, ["a", "b", "c"])
    np.testing.assert_array_equal(rf.get_feature_names_out(),
                                  [f"randomfeatures{i}" for i in range(5)])
    Z = rf.transform(df)
    with pytest.raises(ValueError, match="same order"):
        rf.transform(df[["b", "a", "c"]])
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        np.testing.assert_array_equal(rf.transform(data[:, :3]), Z)
    with pytest.raises(ValueError, match="input_features"):
        rf.get_feature_names_out(["x", "y", "z"])
    # refit on an array forgets the names
    rf.fit(data[:, :3])
    assert not hasattr(rf, "feature_names_in_")
    with pytest.warns(UserWarning, match="fitted without feature names"):
        rf.transform(df)


@pytest.mark.parametrize("params, name", [
    ({"n_components": 0}, "n_components"),
    ({"n_components": 2.5}, "n_components"),
    ({"gamma": -1.0}, "gamma"),
    ({"gamma": "auto"}, "gamma"),
    ({"gamma": np.inf}, "gamma"),
    ({"kernel": "rbf"}, "kernel"),
    ({"q": 0}, "q"),
    ({"orthogonal": "yes"}, "orthogonal"),
    ({"orthogonal": True, "kernel": "laplace"}, "orthogonal"),
    ({"orthogonal": True, "q": 2}, "orthogonal"),
    ({"dtype": "int64"}, "dtype"),
    ({"random_state": -1}, "random_state"),
])
def test_bad_parameters(data, params, name):
    rf = RandomFeatures(**params)  # the constructor only stores
    with pytest.raises(ValueError, match=name):
        rf.fit(data)


def test_transform_errors(data):
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError, match="not fitted"):
        RandomFeatures().transform(data)
    with pytest.raises(NotFittedError):
        RandomFeatures().get_feature_names_out()
    rf = RandomFeatures(n_components=4).fit(data)
    with pytest.raises(ValueError, match="X has 3 features"):
        rf.transform(data[:, :3])


def test_repr_shows_non_default_parameters():
    assert repr(RandomFeatures()) == "RandomFeatures()"
    assert repr(RandomFeatures(kernel="cauchy", n_components=7)) == \
        "RandomFeatures(n_components=7, kernel='cauchy')"


@pytest.mark.slow(reason="scikit-learn check_estimator suite")
def test_check_estimator():
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(RandomFeatures(n_components=20, random_state=0))


@pytest.mark.slow(reason="runs in a subprocess")
def test_pickle_in_fresh_process(data, tmp_path):
    import subprocess
    import sys

    rf = RandomFeatures(n_components=30, kernel="cauchy", random_state=1).fit(data)
    path = tmp_path / "rf.pkl"
    path.write_bytes(pickle.dumps(rf))
    np.save(tmp_path / "X.npy", data)
    code = ("import pickle, sys, numpy as np; rf = pickle.load(open(sys.argv[1], 'rb'));"
            "np.save(sys.argv[3], rf.transform(np.load(sys.argv[2])))")
    subprocess.run([sys.executable, "-c", code, str(path), str(tmp_path / "X.npy"),
                    str(tmp_path / "Z.npy")], check=True, env=_env())
    np.testing.assert_array_equal(np.load(tmp_path / "Z.npy"), rf.transform(data))


def _env():
    import os

    import rflite

    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(rflite.__file__))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    return env

