"""Loop-level NumPy references, written for readability, that kernels are tested against."""

import numpy as np


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
