"""Shared plumbing of the synthetic generators of :mod:`rflite.datasets`.

Input checks, the input samplers, and :func:`_generate`, which fixes the
order of the random stream every generator documents: ``X`` first, then
``n_samples`` standard normals for the noise, always.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from rflite._core.random import check_rng
from rflite._core.validation import check_array, check_int, check_real


class Sample(NamedTuple):
    """A synthetic sample: inputs ``X`` (n_samples, d) and targets ``y`` (n_samples,)."""

    X: np.ndarray
    y: np.ndarray


def _check_X(X, *, d_min: int, d_exact: int | None = None) -> np.ndarray:
    """Coerce ``X`` to a finite float64 (m, d) array with enough columns."""
    X = check_array(X, "X", ndim=2, min_rows=0)
    if d_exact is not None and X.shape[1] != d_exact:
        raise ValueError(f"X must have exactly {d_exact} column(s), got shape {X.shape}")
    if X.shape[1] < d_min:
        raise ValueError(f"X must have at least {d_min} column(s), got shape {X.shape}")
    return X


def _uniform(lo: float, hi: float):
    def draw(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
        return rng.uniform(lo, hi, size=(n, d))

    draw.__doc__ = f"x ~ U[{lo:g}, {hi:g}]^d"
    return draw


def _normal(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    """x ~ N(0, I_d)."""
    return rng.standard_normal((n, d))


def _generate(target, sampler, n_samples, d, noise, rng, **target_kw) -> Sample:
    """Validate, draw ``X`` then the noise, and evaluate the target."""
    rng = check_rng(rng)
    X = sampler(rng, n_samples, d)
    e = rng.standard_normal(n_samples)
    y = target(X, **target_kw) + noise * e
    return Sample(X, y)


def _check_common(n_samples, noise, d=None, d_min=1):
    n_samples = check_int(n_samples, "n_samples", minimum=1)
    if d is not None:
        d = check_int(d, "d", minimum=d_min)
    noise = check_real(noise, "noise", minimum=0.0)
    return n_samples, d, noise
