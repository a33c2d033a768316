r"""Adaptive random Fourier features with Metropolis sampling (ARFF).

The model is a one-hidden-layer network with Fourier activation

.. math::

    f(x) = \sum_{k=1}^{K} \beta_k e^{i \omega_k \cdot x} \in \mathbb{C},

whose amplitudes, for fixed frequencies, solve the Tikhonov least-squares
problem (Kammonen, Kiessling, Plechac, Sandberg, Szepessy 2020, eq. (28)-(29))

.. math::

    \hat\beta = \arg\min_{\beta \in \mathbb{C}^K}
        N^{-1} \|S \beta - y\|_2^2 + \lambda \|\beta\|_2^2
    \iff (S^* S + \lambda N I) \hat\beta = S^* y,
    \qquad S_{nk} = e^{i \omega_k \cdot x_n}.

The frequencies are sampled by a random-walk Metropolis chain per feature
whose acceptance test :math:`|\hat\beta'_k|^\gamma / |\hat\beta_k|^\gamma > u`
makes the frequencies equidistribute the amplitudes, i.e. approach the density
:math:`p_* \propto |\hat f|` that minimises the constant of the
:math:`O(K^{-1})` generalisation error bound (Remark 3.2, Algorithm 1);
Algorithm 2 adapts the proposal covariance to the running covariance of the
visited frequencies.  Algorithm 3 (standardisation by the training mean and
standard deviation, ``ddof = 1``) lives in the model classes
:class:`ARFFRegressor` and :class:`ARFFClassifier`, which fold it into the
stored feature map so that predictions come out on the original scale.

The model is complex, and so is the paper's error: the training error in
:class:`ARFFResult` is :math:`N^{-1} \sum_n |f(x_n) - y_n|^2` (the modulus,
as the paper's generalisation error :math:`e_K` uses
:math:`|(S_{\rm test} \hat\beta)_n - \tilde y_n|`), the experiments report
that error, and :class:`ARFFClassifier` takes the arg max of the moduli
:math:`|f_i(x)|` (Case 4).  :meth:`ARFFRegressor.predict` returns the real
part :math:`\mathrm{Re} f(x)` because the targets are real and
:math:`|\mathrm{Re} f(x) - y| \le |f(x) - y|` for real ``y``: the real part is
never a worse real-valued prediction, and scikit-learn's regressors and
:math:`R^2` need real outputs.  The complex model itself is
:meth:`ARFFRegressor.predict_complex`.

(Here, as in the paper, ``N`` is the number of training points and ``K`` the
number of features.)

The estimators' defaults are not the paper's: the paper's settings assume
noise-free targets, and on noisy data the chain drifts into frequencies that
fit the noise.  By default the estimators hold out a validation split, run the
chain from :math:`\omega = 0` with a small step, score every refitted state
on the validation rows (each :math:`\lambda` of :data:`LAM_GRID`), stop when
that stops improving and keep the best frequencies and :math:`\lambda`
(scikit-learn's ``early_stopping``; see :class:`ARFFRegressor`).
``early_stopping=False`` (:data:`PAPER_SETTINGS`) runs the paper's algorithms
exactly, as the experiments do.

Cost
----
One Metropolis iteration builds the proposal features (``N K`` sines and
cosines in a numba kernel that also forms :math:`\omega \cdot x`), their Gram
matrix :math:`S'^* S'` with one BLAS ``zherk`` (``N K^2 / 2`` complex
multiply-adds, half a general product; ``dsyrk`` for the real sigmoid
variant), :math:`S'^* y` (``N K p``) and a Cholesky solve (``K^3 / 6``
complex), then runs the accept kernel (``O(K (d + p))``).  Nothing of size
``N x K`` is allocated per iteration: proposals go into a second buffer, and
after the accept test either the accepted columns are copied into the current
features or, when most were accepted, the buffers and Gram matrices are
swapped and the rejected columns copied back.  The Gram matrix of the current
frequencies is only brought up to date at a refit, recomputing the rows of the
columns that changed (``N K n_changed``, or one full ``zherk`` if more than
half did), so a refit every ``refit_every`` iterations adds at most one more
Gram matrix and solve.  For ``N = 10^4``, ``K = 256`` one iteration is about
``3 * 10^8`` complex multiply-adds plus ``2.6 * 10^6`` sine/cosine pairs;
at one BLAS thread that is about 2.5x faster than a plain NumPy iteration
(``S^* S`` by a general product, ``numpy.linalg.solve``, Python accept
loop), and about 2x at ``K = 1024`` (``benchmarks/bench_metropolis.py``).
A whole Algorithm 1 fit at ``N = 10^4``, ``K = 256``, ``M = 1000``
therefore takes about a minute.

Threads and processes
---------------------
The complex features and the accept test have parallel numba kernels; how
they are launched safely from several threads and in forked processes is
described in :mod:`rflite._arff.kernels`, which holds them.

The chain and its checks live in :mod:`rflite._arff.chain`, Algorithm 3's
standardisation in :mod:`rflite._arff.standardize` and the fit shared by the
estimators (early stopping included) in :mod:`rflite._arff.estimator`; this
module re-exports their public names.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from rflite._arff.chain import (  # noqa: F401  (ARFFResult, the constants, _Chain, ... re-exported)
    ACTIVATIONS, DELTA_NUMERATOR, LAM_RULE, PEAK_GRAM_FACTOR, PEAK_S_FACTOR, ARFFResult, _Chain,
    _check_arff_params, _check_data, _check_labels, _check_omega_max, _check_sizes, _fixed_rff,
    _lam_scores, _metropolis, _ProgressMonitor, _sample_arff, _ValidationMonitor,
    _validation_mse,
)
from rflite._arff.estimator import DELTA_EARLY, LAM_GRID, LAM_PAPER, _ARFFBase  # noqa: F401
from rflite._arff.kernels import (  # noqa: F401 - the layer names and kernels used by tests re-exported
    FORK_SAFE_LAYERS, ParallelFallbackWarning, _accept_kernel, _blas_limit, _cis_block,
    _cis_parallel, _cis_serial, _features, _gram, _launch_parallel, _rhs, _row_sq_norms, _solve,
    _train_error,
)
from rflite._arff.standardize import SD_FLOOR, Standardizer  # noqa: F401 - public here
from rflite._base import refuse_dask
from rflite._core.backend import is_dask_array
from rflite._core.folds import _canonical_order  # noqa: F401 - re-exported
from rflite._core.metrics import r2_score
from rflite._core.validation import check_array, check_bool, check_choice, check_real
from rflite._core.naming import publish

__all__ = [
    "ARFFResult",
    "LAM_GRID",
    "LAM_PAPER",
    "LAM_RULE",
    "DELTA_EARLY",
    "PAPER_SETTINGS",
    "arff",
    "fixed_rff",
    "fourier_amplitudes",
    "generalization_error",
    "Standardizer",
    "ARFFRegressor",
    "ARFFClassifier",
    "ACTIVATIONS",
    "DELTA_NUMERATOR",
    "FORK_SAFE_LAYERS",
    "ParallelFallbackWarning",
    "SD_FLOOR",
]

publish(__name__, ARFFResult, Standardizer, ParallelFallbackWarning)

#: Estimator settings that run the paper's algorithms exactly, without the
#: early-stopping defaults (all rows, no validation split, ``lam = 0.1``, the
#: paper's step ``2.4^2 / d``): ``ARFFRegressor(K, n_iter=M, **PAPER_SETTINGS)``.
#: The paper experiments (:mod:`rflite.experiments.metropolis`) pass them.
PAPER_SETTINGS = {"early_stopping": False, "lam": LAM_PAPER}


# =========================================================================
# public functions
# =========================================================================
def arff(
    X,
    y,
    *,
    n_features: int,
    n_iter: int,
    delta: float | None = None,
    gamma: float | None = None,
    lam: float = 0.1,
    refit_every: int = 10,
    adaptive_covariance: bool = False,
    burn_in: int | None = None,
    omega_max: float = math.inf,
    activation: str = "exp",
    rng=None,
    callback: Callable | None = None,
    _monitor=None,
) -> ARFFResult:
    r"""Adaptive random Fourier features: Metropolis sampling of the frequencies.

    Algorithm 1 of Kammonen et al. (2020), and Algorithm 2 with
    ``adaptive_covariance=True``.  Starting from :math:`\omega = 0`, each
    iteration proposes :math:`\omega' = \omega + \delta r`,
    :math:`r \sim N(0, \bar C)` independently for every feature, solves

    .. math::

        (S'^* S' + \lambda N I) \hat\beta' = S'^* y

    for all K proposal amplitudes at once, and accepts feature k when

    .. math::

        \frac{\|\hat\beta'_k\|_2^\gamma}{\|\hat\beta_k\|_2^\gamma} > u_k,
        \qquad u_k \sim U[0, 1],
        \qquad \text{and } \|\omega'_k\|_2 < \omega_{\max},

    where the norm runs over the outputs for a multi-output ``y`` (the paper's
    MNIST variant, eq. (31)).  Every ``refit_every`` iterations, and at the end,
    the amplitudes are re-solved for the current frequencies.

    The data are used as given: standardise them first (Algorithm 3), or use
    :class:`ARFFRegressor` / :class:`ARFFClassifier`, which do.

    Parameters
    ----------
    X : (N, d) array_like
        Training inputs.
    y : (N,) or (N, p) array_like
        Real targets; a 2-d ``y`` fits ``p`` outputs on shared frequencies.
    n_features : int >= 1
        Number of features K.
    n_iter : int >= 0
        Number of Metropolis iterations M (the paper: ``T / delta^2``).
    delta : float > 0, optional
        Proposal step; default :data:`DELTA_NUMERATOR` ``/ d`` (paper Sec. 4).
    gamma : float >= 0, optional
        Exponent of the accept test; default ``3 d - 2`` (Remark 3.2; at least
        0).  ``gamma = 0`` accepts every proposal.
    lam : float > 0, default 0.1
        Tikhonov parameter :math:`\lambda` (the shift is :math:`\lambda N`).
    refit_every : int >= 1, default 10
        Re-solve the amplitudes for the current frequencies every this many
        iterations (the paper's ``m``).
    adaptive_covariance : bool, default False
        Algorithm 2: after ``burn_in`` iterations propose with the running
        covariance of all frequencies visited so far.
    burn_in : int >= 0, optional
        The paper's :math:`t_0`; default ``n_iter // 10``.
    omega_max : float > 0, default inf
        Reject proposals with :math:`\|\omega'_k\|_2 \ge \omega_{\max}`.
    activation : {"exp", "sigmoid"}
        ``"sigmoid"`` uses :math:`S_{nk} = 1 / (1 + e^{-\omega_k \cdot [x_n, 1]})`
        (a constant-1 input is appended as a bias, paper Experiment 5); the
        defaults of ``delta`` and ``gamma`` still use the original ``d``.
    rng : None, int or numpy.random.Generator
        Each iteration draws ``K x d'`` standard normals, then ``K`` uniforms.
    callback : callable, optional
        ``callback(i, frequencies, amplitudes)`` after iteration ``i``
        (1-based); the arrays are the live state, copy them to keep them.

    Returns
    -------
    ARFFResult

    Notes
    -----
    Per-iteration cost (see the module notes): ``N K^2 / 2`` complex
    multiply-adds for the proposal Gram matrix by BLAS ``zherk``, ``K^3 / 6``
    for its Cholesky factorisation (:func:`rflite._core.linalg.ridge_solve`), and
    ``O(N K (d + p))`` for the features, right-hand side and training error.
    Refits reuse the current Gram matrix and recompute only the rows of the
    features accepted since the previous refit.

    Safe to call from several threads at once and from any executor's workers
    (threads, ``spawn``, ``forkserver`` or ``fork`` process pools, dask,
    MPI): results equal a serial call bit for bit; in a ``fork`` child of a
    process whose numba layer is GNU OpenMP the parallel kernels run serially
    (module notes, "Threads and processes").

    References
    ----------
    A. Kammonen, J. Kiessling, P. Plechac, M. Sandberg, A. Szepessy, "Adaptive
    random Fourier features with Metropolis sampling", Foundations of Data
    Science 2(3):309-332, 2020, Algorithms 1 and 2, Remark 3.2, Sec. 5.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 1))
    >>> y = np.cos(3 * X[:, 0])
    >>> res = arff(X, y, n_features=16, n_iter=50, delta=0.5, rng=0)
    >>> res.frequencies.shape, bool(res.train_error[-1] < 1e-2 * y.var())
    ((16, 1), True)
    """
    return _sample_arff(X, y, n_features, n_iter, delta, gamma, lam, refit_every,
                        adaptive_covariance, burn_in, omega_max, activation, rng, callback,
                        _monitor)


def fixed_rff(X, y, *, n_features: int, scale: float = 1.0, lam: float = 0.1,
              activation: str = "exp", rng=None) -> ARFFResult:
    r"""Plain random Fourier features: frequencies :math:`\omega_k \sim N(0, s^2 I)`.

    The baseline of the paper's Experiment 3 (RFF1, RFF2): the same amplitude
    problem as :func:`arff` on fixed, normally distributed frequencies.

    Parameters
    ----------
    X, y, n_features, lam, activation, rng
        As in :func:`arff`.
    scale : float > 0, default 1
        Standard deviation ``s`` of every frequency entry.

    Returns
    -------
    ARFFResult
        With an empty ``acceptance``, ``train_error`` of length 1 and the
        covariance ``s^2 I``.

    Notes
    -----
    Thread- and fork-safe like :func:`arff` (module notes, "Threads and
    processes").
    """
    return _fixed_rff(X, y, n_features, scale, lam, activation, rng)


def fourier_amplitudes(X, y, frequencies, *, lam: float = 0.1,
                       activation: str = "exp") -> np.ndarray:
    r"""Amplitudes :math:`\hat\beta` of eq. (29) for given frequencies.

    Solves :math:`(S^* S + \lambda N I) \hat\beta = S^* y` with the Gram matrix
    by BLAS and a Cholesky factorisation (:func:`rflite._core.linalg.ridge_solve`).
    For ``"sigmoid"`` the frequencies have ``d + 1`` columns (the last one
    multiplies a constant-1 input).
    """
    X, Y, one_d = _check_data(X, y)
    activation = check_choice(activation, "activation", ACTIVATIONS)
    if activation == "sigmoid":
        X = np.hstack([X, np.ones((X.shape[0], 1))])
    W = check_array(frequencies, "frequencies", ndim=2)
    if W.shape[1] != X.shape[1]:
        raise ValueError(f"frequencies must have {X.shape[1]} columns, got shape {W.shape}")
    lam = check_real(lam, "lam", minimum=0.0, strict=True)
    with _blas_limit(X.shape[0] * W.shape[0] ** 2):
        S = _features(X, W, activation)
        beta = _solve(_gram(S), _rhs(S, Y), lam * X.shape[0])
    return beta[:, 0] if one_d else beta


def generalization_error(model, X, y) -> float:
    r"""The paper's generalisation error of a fitted :class:`ARFFRegressor`, per point.

    .. math::

        e = \Bigl(\frac{1}{\tilde N p} \sum_{n=1}^{\tilde N} \sum_{j=1}^{p}
            \frac{|f_j(\tilde x_n) - \tilde y_{nj}|^2}{\sigma_j^2}\Bigr)^{1/2},

    the modulus of the complex model's residual (Kammonen et al. 2020, Sec. 5,
    :math:`e_K = |S_{\rm test} \hat\beta - \tilde y|`) on the scale
    standardised by the training statistics (Algorithm 3: :math:`\sigma_j`
    is the training standard deviation of output j), as a root *mean* square
    instead of the paper's root sum of squares so that it does not grow with
    the test-set size (:math:`e_K = \sqrt{\tilde N}\, e` for one output).
    It is at least the error of the real predictions, since
    :math:`|\mathrm{Re} f - y| \le |f - y|`.

    Parameters
    ----------
    model : ARFFRegressor
        Fitted.
    X : (m, d) array_like
    y : (m,) or (m, p) array_like
        Real test targets on the original scale, shaped as in ``fit``.
    """
    if not isinstance(model, ARFFRegressor):
        raise ValueError(f"model must be a fitted ARFFRegressor, got {type(model).__name__}")
    f = model.predict_complex(X)
    y = check_array(y, "y", ndim=(1, 2))
    if y.shape != f.shape:
        raise ValueError(f"y must have shape {f.shape} (the model's outputs for X), "
                         f"got {y.shape}")
    r = (f - y) / model.y_standardizer_.scale
    return float(np.sqrt(np.mean(r.real**2 + r.imag**2)))


# =========================================================================
# Algorithm 3 and the estimators
# =========================================================================
class ARFFRegressor(_ARFFBase):
    r"""Adaptive random Fourier feature regression (Algorithms 1-3).

    Standardises ``X`` and ``y`` with the training mean and standard deviation
    (``ddof = 1``, Algorithm 3), samples frequencies with :func:`arff`
    (``method="metropolis"``) or draws them from :math:`N(0, s^2 I)`
    (``method="fixed"``, plain RFF, :func:`fixed_rff`), and folds the
    standardisation into ``feature_map_`` / ``coef_`` / ``intercept_`` so that

    .. math:: f(x) = \sigma(W x + b)\, c + c_0 \in \mathbb{C},
        \qquad \hat y(x) = \mathrm{Re} f(x)

    are on the original scale: :meth:`predict_complex` gives the paper's
    complex model :math:`f`, :meth:`predict` its real part (for real targets
    :math:`|\mathrm{Re} f - y| \le |f - y|`, so the real part is never the
    worse real-valued prediction; the paper's error :math:`|f - y|` is
    :func:`generalization_error`).  ``y`` may be 2-d: the natural joint form
    of the method, one set of frequencies shared by all outputs, one
    amplitude vector per output, the accept test on the amplitude norm over
    outputs (the paper's Case 4); it is *not* the same as one fit per output.

    Intercept: with ``fit_intercept=True`` (default) Algorithm 3 centres and
    scales ``y`` by its training mean and standard deviation, so
    ``intercept_`` is the mean of ``y`` (the frequencies' amplitudes fit the
    centred target); shifting ``y`` shifts the predictions and nothing else.
    ``fit_intercept=False`` only scales ``y`` (``intercept_ = 0``).

    Default fit (``early_stopping=True``): the paper's algorithms assume
    noise-free data and run a fixed number of iterations with
    :math:`\lambda = 0.1`; on noisy data the chain keeps moving towards
    frequencies that fit the noise.  By default, as scikit-learn's
    ``MLPRegressor`` / ``SGDRegressor`` with ``early_stopping=True``, the
    (standardised) rows are put in a canonical order and
    ``validation_fraction`` of them are held out
    (:func:`rflite._core.folds.holdout_split`); the chain runs on the rest, starting at
    :math:`\omega = 0` (the constant model) with the small step
    ``delta = DELTA_EARLY / sqrt(d)`` (:data:`DELTA_EARLY`) so that it passes
    through the low frequencies slowly.  At every refit (every
    ``refit_every`` iterations, when the amplitudes solve the current
    frequencies' problem) the amplitudes are solved on the training part for
    every :math:`\lambda` of :data:`LAM_GRID` (``lam="auto"``; one
    eigendecomposition) and scored on the validation part, where the largest
    :math:`\lambda` whose validation MSE is within one standard error (over
    the validation rows) of the best is taken (:data:`LAM_RULE`, the
    one-standard-error rule of :func:`rflite._core.selection.choose`: it keeps
    ``insulin`` (d = 50, 51 validation rows) below the mean predictor where
    the plain minimum over 19 values does not); the run stops once
    the best validation MSE has not improved by ``tol`` for
    ``n_iter_no_change`` consecutive checks, or after ``n_iter``
    iterations.  The frequencies and :math:`\lambda` of the best check are
    kept and the amplitudes re-solved on all rows.  The validation MSE is that
    of :meth:`predict` (the real part) for the regressor and of the complex
    one-hot outputs for the classifier.

    Reproducing the paper: ``early_stopping=False`` (with ``lam="auto"``
    meaning the paper's 0.1 and ``delta=None`` the paper's ``2.4^2 / d``)
    runs Algorithms 1-3 on all rows exactly as :func:`arff` does;
    ``ARFFRegressor(K, n_iter=M, **PAPER_SETTINGS)`` with the paper's ``K``,
    ``M``, ``delta``, ``refit_every`` is bit for bit the previous
    behaviour of this class (the experiments in
    :mod:`rflite.experiments.metropolis` do this).

    ``sample_weight``: zero-weight rows are dropped and each row is repeated
    by the smallest integers in the weights' proportions
    (:func:`rflite._core.validation.repetition_counts`; the Metropolis
    sampler, the validation split and the standardisation then see exactly
    the repeated-rows data), so ``c * sample_weight`` is the same fit and
    integer weights with greatest common divisor 1 are the repeated rows;
    weights in no integer proportion raise ``ValueError``.  ``feature_names_in_`` /
    ``n_features_in_`` as in scikit-learn.

    Parameters
    ----------
    n_features : int, default 128
        K.
    n_iter : int, default 1000
        Maximum number of Metropolis iterations (the paper's M); with early
        stopping most fits stop long before.
    delta : float > 0, optional
        Proposal step; default ``DELTA_EARLY / sqrt(d)`` with early stopping,
        the paper's ``DELTA_NUMERATOR / d`` without.
    lam : float > 0 or "auto", default "auto"
        Tikhonov parameter.  ``"auto"``: the sampler uses the paper's
        :data:`LAM_PAPER` = 0.1, and with early stopping the final ``lam_`` is
        chosen from :data:`LAM_GRID` on the validation split; without, 0.1.
        A number is used throughout (early stopping then only stops).
    gamma, refit_every, adaptive_covariance, burn_in, omega_max, activation
        See :func:`arff`.
    method : {"metropolis", "fixed"}
        ``"fixed"`` draws the frequencies once (no iterations; early stopping
        then only chooses ``lam``).
    scale : float
        Frequency standard deviation for ``method="fixed"`` (in standardised
        input units).
    early_stopping : bool, default True
        Stop the iterations and choose ``lam`` on a validation split (above).
    validation_fraction : float in (0, 1), default 0.2
        Share of the rows held out for early stopping (at least one row).
    n_iter_no_change : int >= 1, default 5
        Validation checks (one per refit) without an improvement of ``tol``
        before stopping.
    tol : float >= 0, default 1e-4
        Improvement of the validation MSE (standardised ``y``) that counts.
    fit_intercept : bool, default True
    verbose : int, default 0
        ``>= 1``: one line per iteration on stderr (iteration, elapsed
        seconds, training error of the chain's state and, at the checks, the
        validation error and the best ``lam``).
    random_state : None, int or numpy.random.Generator

    Attributes
    ----------
    feature_map_ : FeatureMap
        The fitted frequencies on the original input scale.
    coef_ : (K,) or (K, p) ndarray
    intercept_ : float or (p,) ndarray
    result_ : ARFFResult
        The sampler's output on standardised data (frequencies of the best
        iteration, amplitudes re-solved on all rows, acceptance and training
        errors of the run).
    x_standardizer_, y_standardizer_ : Standardizer
    n_iter_ : int
        Iterations run.
    best_iteration_ : int
        Iteration whose frequencies were kept (``n_iter_`` without early
        stopping).
    lam_ : float
        Ridge parameter of the final amplitudes.
    validation_scores_ : ndarray or None
        Validation MSE at each check (None without early stopping), at the
        iterations ``validation_iterations_`` (0 is the constant start).

    Examples
    --------
    >>> from rflite.datasets import make_metropolis1
    >>> X, y = make_metropolis1(300, rng=0)
    >>> model = ARFFRegressor(16, n_iter=30, random_state=0).fit(X, y)
    >>> model.predict(X).shape
    (300,)
    """

    def __init__(self, n_features=128, *, n_iter=1000, method="metropolis", scale=1.0,
                 delta=None, gamma=None, lam="auto", refit_every=10,
                 adaptive_covariance=False, burn_in=None, omega_max=math.inf,
                 activation="exp", early_stopping=True, validation_fraction=0.2,
                 n_iter_no_change=5, tol=1e-4, fit_intercept=True, verbose=0,
                 random_state=None, clip_inputs=False):
        super().__init__(n_features, n_iter=n_iter, method=method, scale=scale, delta=delta,
                         gamma=gamma, lam=lam, refit_every=refit_every,
                         adaptive_covariance=adaptive_covariance, burn_in=burn_in,
                         omega_max=omega_max, activation=activation,
                         early_stopping=early_stopping,
                         validation_fraction=validation_fraction,
                         n_iter_no_change=n_iter_no_change, tol=tol, verbose=verbose,
                         random_state=random_state)
        self.clip_inputs = clip_inputs
        self.fit_intercept = fit_intercept

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True  # a 2-d y fits p outputs on shared frequencies
        return tags

    def fit(self, X, y, sample_weight=None):
        """Standardise, sample the frequencies, solve the amplitudes; returns ``self``."""
        if is_dask_array(X):
            self._fit_dask(X, y, sample_weight)
        else:
            self._fit_in_memory(X, y, sample_weight)
        if check_bool(self.early_stopping, "early_stopping") and self.fit_intercept:
            # few validation rows: the whole fit is cross-validated against the mean
            self._check_against_mean(X, y, sample_weight, float(self.validation_fraction))
        return self

    def _fit_in_memory(self, X, y, sample_weight):
        """:meth:`fit` on NumPy input, without the nested check against the mean."""
        X, Y, w = self._validate_fit(X, y, sample_weight)
        X, Y = self._repeat_rows(X, Y, w)
        one_d = self._one_d
        X, Y, _ = _check_data(X, Y)
        T = Y[:, 0] if one_d else Y
        # fit_intercept=False: scale only, the amplitudes fit y itself, no offset
        self._fit_targets(X, T, center_y=check_bool(self.fit_intercept, "fit_intercept"))
        if one_d:
            self.coef_ = self.coef_[:, 0]
            self.intercept_ = float(self.intercept_[0])
        self.mean_model_ = False if one_d else np.zeros(Y.shape[1], dtype=bool)

    def predict(self, X) -> np.ndarray:
        """Real predictions :math:`\\mathrm{Re} f(x)` on the original scale, (m,) or (m, p).

        The targets are real, and :math:`|\\mathrm{Re} f - y| \\le |f - y|`:
        dropping the imaginary part (which the fit drives towards 0) never
        makes a real prediction worse.  The complex :math:`f` is
        :meth:`predict_complex`.
        """
        out = self._decision(X)
        return out.real if np.iscomplexobj(out) else out

    def score(self, X, y, sample_weight=None) -> float:
        """:math:`R^2` of the real predictions, as :meth:`rflite._base.RandomFeatureModel.score`."""
        return r2_score(y, self.predict(X), sample_weight)


class ARFFClassifier(_ARFFBase):
    r"""Multi-class classification by one-hot least squares on ARFF features.

    The paper's MNIST experiment (Sec. 5, Case 4, eq. (31)): one amplitude
    vector per class on shared frequencies, the accept test on the Euclidean
    norm of the K-th amplitudes over the classes, and, as in the paper, the
    predicted class the arg max of the moduli of the complex outputs,

    .. math:: \hat y(x) = \arg\max_i \Bigl|\sum_{k=1}^K \hat\beta_k^i
              s(\omega_k \cdot x)\Bigr|.

    Inputs are standardised by Algorithm 3 (constant columns only centred);
    the one-hot targets are not.  Parameters and the default early stopping
    as :class:`ARFFRegressor` (no ``fit_intercept``); the validation error is
    the mean of :math:`|f_i(x) - t_i|^2` over the one-hot outputs, the
    paper's objective.  ``ARFFClassifier(K, n_iter=M, **PAPER_SETTINGS)``
    runs the paper's Case 4 exactly.
    """

    _estimator_type = "classifier"
    _validation_part = "modulus"

    def fit(self, X, y, sample_weight=None):
        """One-hot encode ``y``, standardise ``X``, fit; returns ``self``.

        ``sample_weight``: zero weights drop rows, the others repeat them in
        proportion (as the regressor).
        """
        from rflite._core.estimator import feature_names as _feature_names

        if is_dask_array(X):
            return self._fit_dask(X, y, sample_weight)
        refuse_dask(self, X, y, sample_weight)  # a Dask y or weight with a NumPy X
        from rflite._core.validation import check_sample_weight

        names = _feature_names(X)
        X = check_array(X, "X", ndim=2, min_rows=2)
        y = _check_labels(y)
        w = check_sample_weight(sample_weight, X.shape[0])
        if y.ndim == 1 and y.shape[0] == X.shape[0] and w is not None:
            keep = w > 0
            X, y, w = X[keep], y[keep], w[keep]
            X, y2 = self._repeat_rows(X, y[:, None], w)
            y = y2[:, 0]
        if names is not None:
            self.feature_names_in_ = names
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        if y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise ValueError(
                f"y must be 1-d with one label per row of X, got X {X.shape} and y {y.shape}"
            )
        try:
            classes, codes = np.unique(y, return_inverse=True)
        except TypeError:  # labels that cannot be ordered, e.g. a mix of str and int
            kinds = sorted({type(v).__name__ for v in np.asarray(y, dtype=object).ravel()})
            raise ValueError(f"y: class labels must be of one orderable type, got {kinds}") \
                from None
        if classes.size < 2:
            raise ValueError(f"y must contain at least 2 classes, got {classes.size}")
        T = np.zeros((X.shape[0], classes.size))
        T[np.arange(X.shape[0]), codes] = 1.0
        self.classes_ = classes
        return self._fit_targets(np.ascontiguousarray(X), T, center_y=None)

    def decision_function(self, X) -> np.ndarray:
        """Moduli :math:`|f_i(x)|` of the fitted one-hot outputs, (m, n_classes).

        The paper's class scores (Case 4); :meth:`predict` is their arg max.
        With two classes, scikit-learn's convention: the (m,) difference
        ``|f_1| - |f_0|``, positive for ``classes_[1]``.
        """
        out = abs(self._decision(X))  # (abs: lazy on a Dask X)
        return out[:, 1] - out[:, 0] if out.shape[1] == 2 else out

    def predict(self, X) -> np.ndarray:
        """The class whose output has the largest modulus (the paper's arg max);
        a lazy Dask array for a Dask ``X``."""
        self._check_fitted()
        index = abs(self._decision(X)).argmax(axis=1)
        if is_dask_array(index):
            classes = self.classes_
            return index.map_blocks(lambda b: classes[b], dtype=classes.dtype)
        return self.classes_[index]

    def score(self, X, y) -> float:
        """Accuracy on ``(X, y)`` (computed, for Dask arrays, chunk by chunk)."""
        hit = self.predict(X) == (y if is_dask_array(y) else np.asarray(y))
        return float(hit.mean())


def _warmup():
    """Compile the kernels (one signature each)."""
    out = np.empty((2, 2), dtype=np.complex128, order="F")
    _cis_block(np.zeros((1, 2)), np.ones((2, 1)), out, 0, 2)
    _launch_parallel(_cis_parallel, _cis_serial, np.zeros((1, 2)), np.ones((2, 1)), out, 1)
    acc = np.empty(2, dtype=np.bool_)
    _accept_kernel(np.ones(2), np.ones(2), np.zeros((2, 1)), np.zeros(2), 1.0, math.inf, acc)
