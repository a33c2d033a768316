"""Loop-level NumPy references, written for readability, that kernels are tested against."""

import numpy as np
import scipy.optimize


def dense_weights(supports, values, d):
    """W (N x d) from the compact (supports, values) storage, one entry at a time."""
    N, q = supports.shape
    W = np.zeros((N, d))
    for j in range(N):
        for k in range(q):
            W[j, supports[j, k]] = values[j, k]
    return W


def feature_matrix(X, W, b, activation):
    """sigma(X W^T + b) with the activation written out."""
    Z = X @ W.T + b
    if activation == "sin":
        return np.sin(Z)
    if activation == "cos":
        return np.cos(Z)
    if activation == "fourier":
        return np.hstack([np.cos(Z), np.sin(Z)])
    if activation == "exp":
        return np.exp(1j * Z)
    if activation == "relu":
        return np.where(Z > 0, Z, 0.0)
    if activation == "tanh":
        return np.tanh(Z)
    if activation == "sigmoid":
        return 1.0 / (1.0 + np.exp(-Z))
    raise ValueError(activation)


def variable_usage(supports, n_features, d, coef, weighting="magnitude"):
    """Per-variable share of |coef| mass, feature by feature."""
    mass = np.zeros(n_features)
    for col, c in enumerate(coef):
        mass[col % n_features] += abs(c)
    usage = np.zeros(d)
    for j in range(n_features):
        w = mass[j] if weighting == "magnitude" else float(mass[j] > 0)
        for v in supports[j]:
            usage[v] += w / supports.shape[1]
    return usage / usage.sum() if usage.sum() > 0 else usage


def complex_bpdn_dual(A, y, sigma):
    """Optimal value of complex BPDN from its dual, by SciPy's SLSQP on 2m reals (a reference):
    max Re(y^* w) - sigma ||w|| s.t. |a_j^* w|^2 <= 1, w = u + i v."""
    import scipy.optimize

    m = A.shape[0]
    AH = A.conj().T

    def split(v):
        return v[:m] + 1j * v[m:]

    def obj(v):
        w = split(v)
        return -np.vdot(y, w).real + sigma * np.linalg.norm(w)

    def obj_jac(v):
        w = split(v)
        g = np.concatenate([-y.real, -y.imag])
        return g + sigma * v / np.linalg.norm(w) if sigma > 0 else g

    def cons(v):
        return 1.0 - np.abs(AH @ split(v)) ** 2

    def cons_jac(v):
        t = np.conj(AH @ split(v))[:, None] * AH
        return -2.0 * np.hstack([t.real, -t.imag])

    w0 = 0.5 * y / np.abs(AH @ y).max()
    res = scipy.optimize.minimize(obj, np.concatenate([w0.real, w0.imag]), jac=obj_jac,
                                  method="SLSQP",
                                  constraints=[{"type": "ineq", "fun": cons, "jac": cons_jac}],
                                  options={"ftol": 1e-15, "maxiter": 3000})
    assert cons(res.x).min() >= -1e-9
    return -res.fun


def q1_fourier_problem(seed, m=30, d=4, N=400):
    """SHRIMP's q = 1 fourier dictionary (all subsets, N(0, 1), no bias, 2N columns)
    on uniform inputs, with the target cos(x_0) + sin(x_1)."""
    from rflite.features import random_feature_map

    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (m, d))
    fmap = random_feature_map(d, N, q=1, subsets="all", distribution="normal", bias="none",
                              activation="fourier", rng=seed)
    return fmap.transform(X), np.cos(X[:, 0]) + np.sin(X[:, 1])


def bpdn_dual_slsqp(A, y, sigma):
    """Optimal value of the real BPDN dual max y.w - sigma ||w||, ||A^T w||_inf <= 1 (SLSQP).

    An independent reference: a general NLP solver on the m-dimensional dual
    (strong duality: its optimum equals the optimal ||c||_1).
    """
    ones = np.ones(A.shape[1])
    res = scipy.optimize.minimize(
        lambda w: -(y @ w) + sigma * np.linalg.norm(w), y / np.abs(A.T @ y).max(),
        jac=lambda w: -y + sigma * w / np.linalg.norm(w), method="SLSQP",
        constraints=[{"type": "ineq", "fun": lambda w: ones - A.T @ w, "jac": lambda w: -A.T},
                     {"type": "ineq", "fun": lambda w: ones + A.T @ w, "jac": lambda w: A.T}],
        options={"ftol": 1e-15, "maxiter": 1000})
    assert np.abs(A.T @ res.x).max() <= 1 + 1e-9
    return -res.fun
