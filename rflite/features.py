r"""Random weights and random-feature matrices.

A random-feature map sends an input :math:`x \in \mathbb{R}^d` to

.. math::

    \phi(x)_j = \sigma(\langle \omega_j, x \rangle + b_j), \qquad j = 1, \dots, N,

with weights :math:`\omega_j` drawn from a distribution :math:`\rho`, biases
:math:`b_j` and an activation :math:`\sigma`.  On data ``X`` (m x d) this gives
the feature matrix :math:`A = \sigma(X W^T + b)` (m x N) on which the sparse
solvers of :mod:`rflite.htp`, :mod:`rflite.imp` and :mod:`rflite.bp` work.

Weights are *q-sparse* when every :math:`\omega_j` has exactly ``q`` nonzero
entries (HARFE, Saha, Schaeffer and Tran 2023, Sec. 2; SHRIMP, Xie, Shi,
Schaeffer and Ward 2022, Def. 3).  A :class:`FeatureMap` stores them compactly
as ``supports`` and ``values`` (both N x q), so that building ``A`` costs
:math:`O(m N q)` rather than :math:`O(m N d)`.

Reproducibility
---------------
A map drawn with :func:`random_feature_map` takes one draw from ``rng`` and
derives three child streams from it: supports, weight values and biases, each
consumed feature by feature.  Hence the first ``N`` features of a map with
``N' > N`` features equal the map with ``N`` features (*prefix stability*), so
sweeps over ``N`` compare nested models.  (The "all subsets" design of SHRIMP's
Def. 3 depends on ``N`` through ``N // C(d, q)`` and is not prefix stable.)

Speed
-----
For sparse maps (``d > DENSE_RATIO * q``) the pre-activation
:math:`X W^T + b` is computed by a numba gather kernel in row blocks that stay
in cache.  When ``q`` is close to ``d`` (``d <= DENSE_RATIO * q``) it is a
BLAS product instead: for ``sin``, ``cos`` and ``fourier`` in float64 one
512 x 512 output tile at a time, each followed by its sincos while in cache
(:func:`_fill_blas_trig`); for the other activations a few large
calls before the row blocks, so that Ctrl-C is honoured between them.  The
activations ``sin``, ``cos`` and ``fourier`` in float64 are fused into the same
pass by the vectorised :func:`rflite._core.sincos.sincos` (``sin_only`` /
``cos_only`` where one of the two is needed: the same values, one polynomial
instead of two; several times faster than ``numpy.sin``), with ``math.sin``/``cos`` for rows whose
phases exceed :data:`rflite._core.sincos.SINCOS_MAX_ABS`; the other activations,
float32 output and ``exp`` go through NumPy's ufuncs (``tanh``, ``expit``,
``sin``/``cos``).  Row blocks are handed to a small thread pool (the kernels
and the ufuncs release the GIL), which doubles throughput on two cores; the
result does not depend on the number of threads, and Ctrl-C cancels the
queued blocks.

Kernel approximation
--------------------
:class:`RandomFeatures` is a scikit-learn style transformer (a drop-in for
``sklearn.kernel_approximation.RBFSampler``) that draws the weights of the
Gaussian, Laplace or Cauchy kernel (spectral laws in :mod:`rflite._features.orf`),
optionally q-sparse or orthogonal (Yu et al. 2016), and builds
:math:`\sqrt{2/N} \cos(X W^T + b)` by the same BLAS / gather, sincos and
thread-pool scheme as :meth:`FeatureMap.transform`, the amplitude fused in.

Selected columns
----------------
:meth:`FeatureMap.columns` evaluates only the requested features.  On the
gather path (``d > DENSE_RATIO * q``) each entry is computed by the same
operations in the same order as in :meth:`FeatureMap.transform`, so
``columns(X, S)`` is bitwise equal to ``transform(X)[:, S]`` (tested).  On the
BLAS path (``d <= DENSE_RATIO * q``) it is not: BLAS may sum the ``d``
products of an entry in a different order for a different set of columns
(OpenBLAS picks kernels by shape), so entries can differ by the rounding of
the pre-activation, a few ulp of its magnitude (up to 9e-16 seen; tested to
``4 * d * eps * max|phase|``).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.sparse.linalg import LinearOperator

from rflite._core.backend import dask_backend, is_dask_array
from rflite._core.estimator import EstimatorMixin, feature_names
from rflite._core.exceptions import _not_fitted_error_class
from rflite._core.memory import check_memory
from rflite._core.random import check_rng, spawn_streams
from rflite._core.sincos import SINCOS_MAX_ABS  # noqa: F401 - importable here as before
from rflite._core.validation import (  # noqa: F401 - MAX_ABS importable here as before
    MAX_ABS, check_array, check_bool, check_choice, check_int,
)
from rflite._features import orf as _orf
from rflite._features.checks import _check_columns, _check_out
from rflite._features.distributions import (  # noqa: F401 - public here, helpers too
    MAX_WEIGHT_SCALE,
    Normal,
    Uniform,
    _check_distribution,
)
from rflite._features.fill import (  # noqa: F401 - constants and helpers re-exported
    BLAS_CHUNK_MULADDS,
    BLOCK_ENTRIES,
    THREAD_MIN_ENTRIES,
    TILE_ROWS_COLS,
    TRIG_KINDS,
    _activate,
    _fill_blas_trig,
    _fill_map,
    _phases_in_range,
    _run_blocks,
    _threaded,
)
from rflite._features.kernels import (  # noqa: F401 - importable here as before
    _partial_fisher_yates, _preactivation, _trig_pick, _trig_rows,
)
from rflite._features.orf import MAX_GAMMA  # noqa: F401 - public here
from rflite._features.supports import (  # noqa: F401 - public here, the check too
    _check_distinct_rows,
    all_subsets_supports,
    sample_supports,
)
from rflite._core.naming import publish

publish(__name__, Normal, Uniform, sample_supports, all_subsets_supports)

__all__ = [
    "ACTIVATIONS",
    "BIASES",
    "Normal",
    "Uniform",
    "FeatureMap",
    "FeatureOperator",
    "RandomFeatures",
    "random_feature_map",
    "sample_supports",
    "all_subsets_supports",
    "variable_usage",
]

#: Supported activations.  ``"fourier"`` gives ``[cos(Z), sin(Z)]`` (2N real
#: columns, the SHRIMP dictionary); ``"exp"`` gives the complex ``exp(iZ)``.
ACTIVATIONS = ("sin", "cos", "fourier", "exp", "relu", "tanh", "sigmoid")

#: Bias options: no bias, phase uniform on [0, 2 pi], or drawn from the weight
#: distribution.
BIASES = ("none", "uniform", "weights")

#: Use a BLAS product for the pre-activation when ``d <= DENSE_RATIO * q``
#: (BLAS does ~d multiply-adds per entry at a far higher rate than the gather
#: kernel's ~q; the crossover on the benchmark shapes is near d = 4q).
DENSE_RATIO = 4


# ---------------------------------------------------------------- feature map
class FeatureMap:
    r"""A fixed random-feature map :math:`x \mapsto \sigma(W x + b)` stored compactly.

    Parameters
    ----------
    supports : (N, q) int array
        Input variables each feature depends on (distinct within a row).
    values : (N, q) float array
        The nonzero weight entries, aligned with ``supports``.
    bias : (N,) float array
    activation : str
        One of :data:`ACTIVATIONS`.
    n_inputs : int
        The input dimension ``d``.

    Notes
    -----
    ``n_columns`` is ``N``, or ``2N`` for ``"fourier"`` whose columns are
    ``[cos(Z), sin(Z)]``: column ``j`` and ``j + N`` come from feature ``j``.
    Use :func:`random_feature_map` to draw one.

    Examples
    --------
    >>> fmap = random_feature_map(5, 100, q=2, activation="sin", rng=0)
    >>> A = fmap.transform(np.zeros((3, 5)))
    >>> A.shape
    (3, 100)
    """

    def __init__(self, supports, values, bias, activation: str, n_inputs: int):
        self.n_inputs = check_int(n_inputs, "n_inputs", minimum=1)
        self.activation = check_choice(activation, "activation", ACTIVATIONS)
        raw = np.asarray(supports)
        if raw.size and not np.issubdtype(raw.dtype, np.integer):
            raise ValueError(f"supports must be integer input indices, got dtype {raw.dtype}")
        supports = np.ascontiguousarray(raw, dtype=np.int64)
        values = np.ascontiguousarray(check_array(values, "values", ndim=2, min_rows=0))
        bias = np.ascontiguousarray(check_array(bias, "bias", ndim=1, min_rows=0))
        if supports.ndim != 2 or supports.shape != values.shape:
            raise ValueError(
                f"supports and values must have the same (N, q) shape, got "
                f"{supports.shape} and {values.shape}"
            )
        if bias.shape[0] != supports.shape[0]:
            raise ValueError(f"bias must have length N={supports.shape[0]}, got {bias.shape[0]}")
        if supports.size and (supports.min() < 0 or supports.max() >= self.n_inputs):
            raise ValueError(f"supports must lie in [0, {self.n_inputs}), got out-of-range index")
        _check_distinct_rows(supports)
        self.supports = supports
        self.values = values
        self.bias = bias
        self._dense_w = None
        self._phase_bound = None

    # -- shape -------------------------------------------------------------
    @property
    def n_features(self) -> int:
        """Number of random features N (weight vectors)."""
        return self.supports.shape[0]

    @property
    def q(self) -> int:
        """Number of nonzero entries per weight vector."""
        return self.supports.shape[1]

    @property
    def n_columns(self) -> int:
        """Number of columns of the feature matrix (2N for ``"fourier"``)."""
        return 2 * self.n_features if self.activation == "fourier" else self.n_features

    @property
    def is_complex(self) -> bool:
        """Whether the feature matrix is complex (``"exp"`` activation)."""
        return self.activation == "exp"

    @property
    def uses_blas(self) -> bool:
        """Whether the pre-activation is a dense BLAS product (q close to d)."""
        return self.n_inputs <= DENSE_RATIO * self.q

    def __repr__(self) -> str:
        return (
            f"FeatureMap(n_features={self.n_features}, n_inputs={self.n_inputs}, "
            f"q={self.q}, activation={self.activation!r})"
        )

    # -- weights -----------------------------------------------------------
    def dense_weights(self) -> np.ndarray:
        """The dense N x d weight matrix ``W`` (cached after the first call)."""
        if self._dense_w is None:
            W = np.zeros((self.n_features, self.n_inputs))
            np.put_along_axis(W, self.supports, self.values, axis=1)
            self._dense_w = W
        return self._dense_w

    def phase_bound(self, x_max: float) -> float:
        r"""A bound on every phase :math:`|x^\top w_j + b_j|` for inputs with
        :math:`\max_k |x_k| \le` ``x_max``: ``x_max`` :math:`\max_j \|w_j\|_1 +
        \max_j |b_j|` (the map's part cached after the first call)."""
        if getattr(self, "_phase_bound", None) is None:  # (maps pickled before it existed)
            l1 = float(np.abs(self.values).sum(axis=1).max()) if self.values.size else 0.0
            b = float(np.abs(self.bias).max()) if self.bias.size else 0.0
            self._phase_bound = (l1, b)
        l1, b = self._phase_bound
        return x_max * l1 + b

    def column_features(self, columns=None) -> np.ndarray:
        """Index of the feature (weight vector) behind each column."""
        if columns is None:
            columns = np.arange(self.n_columns)
        columns = self._check_columns(columns)
        return columns % self.n_features

    def subset(self, features) -> FeatureMap:
        """A new map made of the given features (rows), in the given order."""
        features = np.asarray(features, dtype=np.int64)
        if features.ndim != 1 or (
            features.size and (features.min() < 0 or features.max() >= self.n_features)
        ):
            raise ValueError(f"features must be a 1-d array of indices in [0, {self.n_features})")
        return FeatureMap(
            self.supports[features], self.values[features], self.bias[features],
            self.activation, self.n_inputs,
        )

    # -- transforms --------------------------------------------------------
    def transform(self, X, *, out=None, dtype=np.float64, n_threads=None) -> np.ndarray:
        r"""Feature matrix :math:`A = \sigma(X W^T + b)` (m x ``n_columns``).

        Parameters
        ----------
        X : (m, d) array_like
            Inputs; train and test data are transformed identically.
        out : ndarray, optional
            C-contiguous (m, ``n_columns``) array of the result dtype to write
            into (no allocation).
        dtype : {numpy.float64, numpy.float32}
            Precision of the result (complex64/128 for ``"exp"``).  The
            pre-activation is always accumulated in float64.
        n_threads : int, optional
            Threads over row blocks; default ``os.cpu_count()``.  The result
            does not depend on it.
        """
        X = self._check_X(X)
        out = self._check_out(out, X.shape[0], self.n_columns, dtype)
        self._fill(X, None, out, n_threads)
        return out

    def columns(self, X, columns, *, dtype=np.float64) -> np.ndarray:
        """Dense ``A[:, columns]`` (m x len(columns)) without building all of ``A``.

        Bitwise equal to ``transform(X)[:, columns]`` when the map is sparse
        (``uses_blas`` false); with ``uses_blas`` the entries agree to the
        rounding of the pre-activation (see "Selected columns" in the module
        notes).
        """
        X = self._check_X(X)
        columns = self._check_columns(columns)
        out = self._check_out(None, X.shape[0], columns.size, dtype)
        self._fill(X, columns, out, None)
        return out

    def operator(self, X, *, col_scale=None, block_rows=None) -> FeatureOperator:
        """Matrix-free :class:`FeatureOperator` for this map on ``X``."""
        return FeatureOperator(self, X, col_scale=col_scale, block_rows=block_rows)

    # -- internals ---------------------------------------------------------
    def _check_X(self, X) -> np.ndarray:
        X = check_array(X, "X", ndim=2)
        if X.shape[1] != self.n_inputs:
            raise ValueError(
                f"X has {X.shape[1]} features, but FeatureMap is expecting {self.n_inputs} "
                f"features as input (X must have {self.n_inputs} columns, got shape {X.shape})"
            )
        return np.ascontiguousarray(X)

    def _check_columns(self, columns) -> np.ndarray:
        return _check_columns(columns, self.n_columns)

    def _check_out(self, out, m, n, dtype):
        return _check_out(out, m, n, dtype, self.is_complex)

    def _fill(self, X, columns, out, n_threads, amp=1.0):
        r"""Write the features of ``X`` (all, or ``columns``) into ``out``; ``amp``
        scales sin / cos / fourier outputs in the same pass (``RandomFeatures``'
        :math:`\sqrt{2/N}`; exact for the default 1.0)."""
        _fill_map(self, X, columns, out, n_threads, amp)


def random_feature_map(
    d: int,
    n_features: int,
    *,
    q: int | None = None,
    subsets: str = "random",
    distribution="normal",
    bias: str = "uniform",
    activation: str = "sin",
    rng=None,
) -> FeatureMap:
    r"""Draw a random-feature map with dense or q-sparse weights.

    Parameters
    ----------
    d : int
        Input dimension.
    n_features : int
        Number of features N (weight vectors).
    q : int, optional
        Nonzeros per weight vector, ``1 <= q <= d``; ``None`` means dense
        (``q = d``).
    subsets : {"random", "all"}
        ``"random"``: an independent uniformly random q-subset per feature
        (HARFE).  ``"all"``: SHRIMP's Def. 3, ``N // C(d, q)`` features on
        every q-subset, falling back to ``"random"`` when ``C(d, q) > N``.
    distribution : "normal", "uniform", Normal or Uniform
        Distribution :math:`\rho` of the nonzero entries (default
        :math:`N(0, 1)`; SHRIMP uses ``Normal(scale=1/sqrt(q))``).
    bias : {"uniform", "none", "weights"}
        Phase uniform on :math:`[0, 2\pi]`, zero, or drawn from
        ``distribution`` (HARFE Table 2 uses U[-1, 1] for both).
    activation : str
        One of :data:`ACTIVATIONS`.
    rng : None, int, Generator, RandomState or SeedSequence
        See :func:`rflite._core.random.check_rng` (a negative seed is an error).

    Returns
    -------
    FeatureMap
    """
    d = check_int(d, "d", minimum=1)
    n_features = check_int(n_features, "n_features", minimum=1)
    q = d if q is None else check_int(q, "q", minimum=1, maximum=d)
    check_choice(subsets, "subsets", ("random", "all"))
    dist = _check_distribution(distribution)
    check_choice(bias, "bias", BIASES)
    check_choice(activation, "activation", ACTIVATIONS)
    # supports (int64) + values + bias: refuse before drawing anything
    check_memory((n_features, 2 * q + 1), np.float64,
                 f"the random weights (n_features={n_features})", "use fewer features")
    support_rng, value_rng, bias_rng = spawn_streams(check_rng(rng), 3)
    if subsets == "all":
        supports = all_subsets_supports(d, n_features, q, support_rng)
    else:
        supports = sample_supports(d, n_features, q, support_rng)
    n = supports.shape[0]
    values = dist.sample(value_rng, (n, q))
    if bias == "uniform":
        b = bias_rng.uniform(0.0, 2.0 * np.pi, n)
    elif bias == "weights":
        b = dist.sample(bias_rng, n)
    else:
        b = np.zeros(n)
    return FeatureMap(supports, values, b, activation, d)


# ----------------------------------------------------------------- operator
class FeatureOperator(LinearOperator):
    r"""Matrix-free feature matrix :math:`A\,\mathrm{diag}(s)` of a map on fixed data.

    Products :math:`A c` and :math:`A^* r` are computed row block by row
    block, each block built by the same kernel as :meth:`FeatureMap.transform`
    and multiplied by BLAS, so memory is :math:`O(\text{block} \cdot N + m + N)`
    and the m x N matrix never exists.  Each product re-evaluates the
    features: :math:`O(m N q)` plus :math:`m N` activations.

    Parameters
    ----------
    fmap : FeatureMap
    X : (m, d) array_like
    col_scale : (n_columns,) array, optional
        Column scaling :math:`s` (e.g. the reciprocal training column norms
        HARFE divides by).  Default: none.
    block_rows : int, optional
        Rows per block; default keeps a block near 32 MB.
    """

    def __init__(self, fmap: FeatureMap, X, *, col_scale=None, block_rows=None):
        self.fmap = fmap
        self.X = fmap._check_X(X)
        m, n = self.X.shape[0], fmap.n_columns
        if col_scale is not None:
            col_scale = check_array(col_scale, "col_scale", ndim=1)
            if col_scale.shape[0] != n:
                raise ValueError(f"col_scale must have length {n}, got {col_scale.shape[0]}")
        self.col_scale = col_scale
        if block_rows is None:
            block_rows = max(1, (1 << 22) // max(1, n))
        self.block_rows = check_int(block_rows, "block_rows", minimum=1)
        dtype = np.complex128 if fmap.is_complex else np.float64
        super().__init__(dtype=dtype, shape=(m, n))

    def _blocks(self):
        m = self.shape[0]
        for r0 in range(0, m, self.block_rows):
            r1 = min(m, r0 + self.block_rows)
            A = self.fmap.transform(self.X[r0:r1], n_threads=None)
            if self.col_scale is not None:
                A *= self.col_scale
            yield r0, r1, A

    def _matmat(self, C):
        C = np.asarray(C)
        out = np.empty((self.shape[0], C.shape[1]), dtype=np.result_type(self.dtype, C))
        for r0, r1, A in self._blocks():
            out[r0:r1] = A @ C
        return out

    def _matvec(self, c):
        return self._matmat(np.asarray(c).reshape(-1, 1)).ravel()

    def _rmatmat(self, R):
        R = np.asarray(R)
        out = np.zeros((self.shape[1], R.shape[1]), dtype=np.result_type(self.dtype, R))
        for r0, r1, A in self._blocks():
            out += A.conj().T @ R[r0:r1]
        return out

    def _rmatvec(self, r):
        return self._rmatmat(np.asarray(r).reshape(-1, 1)).ravel()

    def columns(self, columns) -> np.ndarray:
        """Dense ``(A diag(s))[:, columns]``, m x len(columns)."""
        columns = self.fmap._check_columns(columns)
        A = self.fmap.columns(self.X, columns)
        if self.col_scale is not None:
            A *= self.col_scale[columns]
        return A

    def column_norms(self) -> np.ndarray:
        """Euclidean norm of every column of ``A diag(s)``, block by block."""
        sq = np.zeros(self.shape[1])
        for _, _, A in self._blocks():
            sq += np.einsum("ij,ij->j", A.real, A.real)
            if np.iscomplexobj(A):
                sq += np.einsum("ij,ij->j", A.imag, A.imag)
        return np.sqrt(sq)

    def todense(self) -> np.ndarray:
        """The full matrix (for tests and small problems only)."""
        return self.columns(np.arange(self.shape[1]))


# ---------------------------------------------------------- variable usage
def variable_usage(fmap: FeatureMap, coef, *, columns=None, weighting="magnitude"):
    r"""Share of the coefficient mass carried by each input variable.

    The mass of feature :math:`j` is :math:`|c_j|` (summed over its cos and
    sin columns for ``"fourier"``) with ``weighting="magnitude"``, or 1 for
    every feature with a nonzero coefficient with ``weighting="count"`` (the
    occurrence rate of HARFE Fig. 4).  It is split equally among the ``q``
    variables in the feature's support; the result sums to 1 (HARFE Fig. 4-5,
    SHRIMP Fig. 4).

    Parameters
    ----------
    fmap : FeatureMap
    coef : array_like
        Coefficients of all ``n_columns`` columns, or of ``columns`` only.
    columns : array_like of int, optional
        Column indices ``coef`` refers to (a sparse coefficient vector).
    weighting : {"magnitude", "count"}

    Returns
    -------
    usage : (d,) ndarray summing to 1 (all zeros if ``coef`` is zero)
    """
    check_choice(weighting, "weighting", ("magnitude", "count"))
    coef = check_array(coef, "coef", ndim=1, allow_complex=True, min_rows=0)
    cols = np.arange(fmap.n_columns) if columns is None else fmap._check_columns(columns)
    if cols.shape[0] != coef.shape[0]:
        raise ValueError(f"coef must have length {cols.shape[0]}, got {coef.shape[0]}")
    mass = np.zeros(fmap.n_features)
    np.add.at(mass, cols % fmap.n_features, np.abs(coef))
    if weighting == "count":
        mass = (mass > 0).astype(float)
    usage = np.zeros(fmap.n_inputs)
    np.add.at(usage, fmap.supports.ravel(), np.repeat(mass / fmap.q, fmap.q))
    total = usage.sum()
    return usage / total if total > 0 else usage


# -------------------------------------------------------------- transformer


class RandomFeatures(EstimatorMixin):
    r"""Random Fourier features of a shift-invariant kernel: a drop-in for ``RBFSampler``.

    ``fit`` draws ``n_components`` weights :math:`\omega_j` from the spectral
    law of the kernel and phases :math:`b_j \sim U[0, 2\pi]`; ``transform``
    returns

    .. math::

        z(x) = \sqrt{2 / N}\, \big(\cos(\omega_j^T x + b_j)\big)_{j=1}^{N},
        \qquad E\, z(x)^T z(y) = k(x - y),

    the same output form as scikit-learn's ``RBFSampler`` (``N`` =
    ``n_components`` columns; Rahimi and Recht 2007, "Random features for
    large-scale kernel machines", Sec. 3 and Fig. 1).  The spectral laws
    (Bochner's theorem; the names are easy to confuse):

    ==============  ===========================================  ==============================
    ``kernel``      :math:`k(x, y)`, :math:`\delta = x - y`      law of :math:`\omega`
    ==============  ===========================================  ==============================
    ``"gaussian"``  :math:`\exp(-\gamma \|\delta\|_2^2)`         :math:`N(0, 2\gamma I)`
    ``"laplace"``   :math:`\exp(-\gamma \|\delta\|_1)`           iid Cauchy(0, :math:`\gamma`)
    ``"cauchy"``    :math:`\prod_j 1/(1 + \gamma^2 \delta_j^2)`  iid Laplace(0, :math:`\gamma`)
    ==============  ===========================================  ==============================

    (the Gaussian row is ``RBFSampler``'s kernel and law), i.e. the *Laplace*
    kernel comes from *Cauchy* weights and the *Cauchy*
    kernel from *Laplace* weights (see :mod:`rflite._features.orf`).  Rahimi and
    Recht's Fig. 1 is the case :math:`\gamma = 1`, up to its normalisation.

    The matrix is built as :meth:`FeatureMap.transform` builds it (activation
    ``"cos"``): a BLAS product for dense weights (``q_ > d / DENSE_RATIO``),
    the fused sparse gather for q-sparse ones, then the vectorised sincos
    kernel (about 1 ns an entry against ~15 ns for ``numpy.cos``) in row
    blocks on a thread pool, with the amplitude :math:`\sqrt{2/N}` applied
    in the same pass (:mod:`rflite._features.orf` kernels).

    Parameters
    ----------
    n_components : int, default 100
        Number of features ``N`` (output columns).
    gamma : float or "scale", default 1.0
        Kernel parameter :math:`\gamma > 0` (table above).  ``"scale"`` uses
        ``1 / (n_features_in_ * X.var())`` as ``RBFSampler`` does (1 when
        ``X`` is constant).
    kernel : {"gaussian", "laplace", "cauchy"}, default "gaussian"
        The kernel approximated, with the spectral law of the table above.
    q : int or None, default None
        Nonzero entries per weight vector (HARFE's q-sparse weights, on a
        uniformly random q-subset of the inputs per feature); ``None`` means
        dense.  A ``q`` larger than the input dimension ``d`` is clipped to
        ``d`` (recorded in ``q_``).  With ``q < d`` the features approximate
        the average of the kernel over the q-subsets ``S``,
        :math:`E_S\, k(\delta_S)` (``k`` evaluated on the coordinates in
        ``S`` only, e.g. :math:`E_S \exp(-\gamma \|\delta_S\|^2)`), a sum of
        q-variable kernels, at :math:`O(m N q)` instead of :math:`O(m N d)`.
    orthogonal : bool, default False
        Orthogonal random features (Yu et al. 2016, "Orthogonal Random
        Features", Sec. 3): blocks of ``d`` weight rows taken from the
        orthogonal factor of the QR decomposition of a Gaussian matrix and
        rescaled by :math:`\chi_d`-distributed norms (:func:`rflite._features.orf.
        orthogonal_gaussian`).  Each row keeps the law
        :math:`N(0, 2\gamma I)`, so the estimate stays unbiased, and its
        variance for the Gaussian kernel is lower.  Only for
        ``kernel="gaussian"`` with dense weights: the Cauchy and Laplace
        product laws are not rotation invariant, so orthogonalising their
        draws would change the kernel; those combinations raise
        ``ValueError``.
    random_state : None, int, Generator, RandomState or SeedSequence
        See :func:`rflite._core.random.check_rng`.  As in
        :func:`random_feature_map`, the first ``N`` features of a map with
        more features equal the map with ``N`` (not with ``orthogonal``).
    dtype : {"float64", "float32"}, default "float64"
        Precision of the output.  float32 goes through NumPy's ``cos``
        (slower than the float64 sincos kernel) and halves the memory.

    Attributes
    ----------
    feature_map_ : FeatureMap
        The drawn weights and phases (activation ``"cos"``).
    gamma_ : float
        The kernel parameter used (``gamma``, or the value of ``"scale"``).
    q_ : int
        Nonzeros per weight vector after clipping (``d`` when dense).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``fit`` got DataFrame-like input with string column names
        (``X.columns``); ``transform`` then checks names and order as
        scikit-learn does.

    Notes
    -----
    scikit-learn conventions (``get_params`` / ``set_params``, ``clone``,
    pickling, ``Pipeline``) without importing scikit-learn.  Unlike
    ``RBFSampler``, the draws use :class:`numpy.random.Generator` streams, so
    the same seed gives different (equally distributed) weights.

    Examples
    --------
    >>> X = np.random.default_rng(0).normal(size=(5, 3))
    >>> Z = RandomFeatures(n_components=2000, gamma=0.5, random_state=0).fit_transform(X)
    >>> K = np.exp(-0.5 * ((X[:, None] - X[None]) ** 2).sum(-1))
    >>> bool(np.abs(Z @ Z.T - K).max() < 0.1)
    True
    """

    def __init__(self, *, n_components=100, gamma=1.0, kernel="gaussian", q=None,
                 orthogonal=False, random_state=None, dtype="float64"):
        self.n_components = n_components
        self.gamma = gamma
        self.kernel = kernel
        self.q = q
        self.orthogonal = orthogonal
        self.random_state = random_state
        self.dtype = dtype

    def __sklearn_tags__(self):
        # only scikit-learn calls this, so importing it here adds no runtime dependency
        from sklearn.utils import InputTags, Tags, TargetTags, TransformerTags

        return Tags(estimator_type=None, target_tags=TargetTags(required=False),
                    transformer_tags=TransformerTags(), input_tags=InputTags())

    # -- fit / transform -------------------------------------------------------
    def fit(self, X, y=None):
        """Draw the weights for inputs like ``X`` (``y`` is ignored).

        Only the shape of ``X`` is used, and its variance for
        ``gamma="scale"``.

        Returns
        -------
        self
        """
        n = check_int(self.n_components, "n_components", minimum=1)
        kernel = check_choice(self.kernel, "kernel", _orf.KERNELS)
        orthogonal = check_bool(self.orthogonal, "orthogonal")
        dtype = self._check_dtype()
        if self.q is not None:
            check_int(self.q, "q", minimum=1)
        names = feature_names(X)
        if names is not None:
            self.feature_names_in_ = names
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        lazy = is_dask_array(X)
        X = dask_backend().check_dask_X(X) if lazy else check_array(X, "X", ndim=2)
        d = X.shape[1]
        q = d if self.q is None else min(int(self.q), d)
        gamma = _orf._resolve_gamma(self.gamma, X, lazy)
        if orthogonal and kernel != "gaussian":
            raise ValueError(
                f"orthogonal=True needs kernel='gaussian' (rotation-invariant weights), "
                f"got kernel={kernel!r}")
        if orthogonal and q < d:
            raise ValueError(
                f"orthogonal=True needs dense weights (q=None or q >= d={d}), got q={self.q}")
        rng = check_rng(self.random_state, "random_state")
        supports, values, bias = _orf._draw_weights(rng, n, d, q, kernel, gamma, orthogonal)
        self.feature_map_ = FeatureMap(supports, values, bias, "cos", d)
        self.gamma_ = gamma
        self.q_ = q
        self.dtype_ = dtype
        self.n_features_in_ = d
        return self

    def transform(self, X):
        r"""The features :math:`\sqrt{2/N} \cos(X W^T + b)`, m x ``n_components``.

        A row-chunked :class:`dask.array.Array` ``X`` gives a lazy Dask array
        with ``X``'s row chunks and one column chunk, each chunk built on its
        worker from the (broadcast) transformer as the in-memory transform of
        its rows: nothing of size m x N is formed on the client.
        """
        self._check_fitted()
        if is_dask_array(X):
            return dask_backend().transform(self, X, self.feature_map_.n_features, self.dtype_)
        self._check_feature_names(X)
        return self._transform_chunk(X)

    def _transform_chunk(self, X, n_threads=None):
        """:meth:`transform` of a NumPy ``X`` (also each Dask chunk's)."""
        X = check_array(X, "X", ndim=2)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input")
        amp = math.sqrt(2.0 / self.feature_map_.n_features)
        if self.dtype_ != np.float64:
            out = self.feature_map_.transform(X, dtype=self.dtype_, n_threads=n_threads)
            out *= np.float32(amp)
            return out
        return self._cos_features(np.ascontiguousarray(X), amp, n_threads)

    def _cos_features(self, X, amp, n_threads=None):
        r"""``amp * cos(X W^T + b)`` in float64: :meth:`FeatureMap.transform`'s
        kernels (the BLAS product or the sparse gather, the thread
        pool and Ctrl-C handling) with the amplitude applied in the same pass
        as the cosine."""
        fmap = self.feature_map_
        out = fmap._check_out(None, X.shape[0], fmap.n_features, np.float64)
        fmap._fill(X, None, out, n_threads, amp=amp)
        return out

    def fit_transform(self, X, y=None) -> np.ndarray:
        """``fit(X).transform(X)``."""
        return self.fit(X, y).transform(X)

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        """Output names ``randomfeatures0``, ... (scikit-learn's class-name prefix rule).

        ``input_features``, if given, must match the input features seen in
        ``fit`` (they do not enter the output names, as for ``RBFSampler``).
        """
        self._check_fitted()
        if input_features is not None:
            names = np.asarray(input_features, dtype=object)
            fitted = getattr(self, "feature_names_in_", None)
            if fitted is not None and (names.shape != fitted.shape or np.any(names != fitted)):
                raise ValueError("input_features is not equal to feature_names_in_")
            if names.shape != (self.n_features_in_,):
                raise ValueError(
                    f"input_features should have length equal to number of features "
                    f"({self.n_features_in_}), got {names.size}")
        prefix = type(self).__name__.lower()
        return np.asarray([f"{prefix}{i}" for i in range(self.feature_map_.n_features)],
                          dtype=object)

    def _check_fitted(self):
        if hasattr(self, "feature_map_"):
            return
        # also scikit-learn's NotFittedError when scikit-learn is loaded
        error = _not_fitted_error_class()
        raise error(f"this {type(self).__name__} instance is not fitted yet; call fit first")

    def _check_dtype(self):
        try:
            dtype = np.dtype(self.dtype)
        except TypeError:
            dtype = None
        if dtype not in (np.dtype(np.float64), np.dtype(np.float32)):
            raise ValueError(f"dtype must be 'float64' or 'float32', got {self.dtype!r}")
        return dtype


# ------------------------------------------------------------------ kernels
def _warmup():
    """Compile the feature kernels (one float64 signature each) on every fill path:
    sparse sin (the fused sincos kernel), sparse non-trigonometric (the
    pre-activation kernel), selected Fourier columns (the cos/sin pick), dense
    sin (BLAS, then the in-place sincos) and the matrix-free operator."""
    X = np.zeros((2, 12))
    for q, activation in ((1, "sin"), (1, "tanh"), (12, "sin")):
        random_feature_map(12, 4, q=q, activation=activation, rng=0).transform(X)
    fourier = random_feature_map(12, 4, q=1, activation="fourier", rng=0)
    fourier.columns(X, np.array([0, 5]))
    fourier.operator(X).matvec(np.ones(8))
    random_feature_map(12, 4, q=1, rng=0).operator(X).matvec(np.ones(4))
