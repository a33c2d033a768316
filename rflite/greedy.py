r"""Greedy feature construction (GFC) with cosine-wave features.

Oglic and Gaertner, "Greedy Feature Construction", NIPS 2016.  A regression
function is built as a linear model on constructed features

.. math::

    \phi_w(x) = a_1 \sin(w^\top x) + a_2 \cos(w^\top x)

(a cosine wave :math:`a \cos(w^\top x + b)` with the phase eliminated, paper
eq. (5)).  :func:`greedy_descent` is Algorithm 1: starting from estimates
:math:`f_0` at the sample points it repeatedly fits

.. math::

    \min_{w, c} \; \frac{1}{s} \sum_{i=1}^s
        \big(c_0 f_{k-1,i} + c_1 \sin(w^\top x_i) + c_2 \cos(w^\top x_i) - y_i\big)^2
        + \lambda \|c\|_2^2

where the amplitudes :math:`c` are the ridge solution and the spectrum
:math:`w` and the ridge parameter :math:`\lambda` are hyper-parameters chosen
by L-BFGS-B on a k-fold validation error (one fold trains, the other
:math:`k - 1` validate, Sec. 2.5), with the analytic gradient of Appendix C.1
(implicit differentiation through the ridge solution, :math:`\Omega = \|c\|^2`):
see :func:`hyper_objective`.  :func:`gfc` is Algorithm 2: a bias feature, the
mean as initial estimate, ``n_workers`` greedy descents on random subsamples
(independent tasks on any :class:`concurrent.futures.Executor`), a ridge fit of
all amplitudes and pruning of the features with amplitude below ``eta``.
:func:`rff_ridge_cv` is the random-Fourier-feature baseline of Appendix C.2.
:class:`GFCRegressor` runs :func:`gfc` with the amplitudes' :math:`\nu`
cross-validated over ``cv`` (scikit-learn's splitters work), capped numbers
of descents and steps on small samples, and the rows in a canonical order
(see its docstring).

Cost
----
One evaluation of the hyper-parameter objective and gradient is one numba pass
over the sample: :math:`O(s d)` for :math:`X w` and :math:`X^\top \alpha`,
:math:`O(s k)` for the k 3 x 3 ridge systems and validation sums.  The sines and
cosines are computed once and shared by the k folds, and the gradient with
respect to :math:`w` is a single weighted sum :math:`X^\top \alpha` with
per-point weights :math:`\alpha` gathered over the folds.
"""

from __future__ import annotations

import copy
import numbers
from typing import NamedTuple

import numpy as np
import scipy.linalg
import scipy.optimize

from rflite._gfc import descent as _gfc_descent
from rflite._base import RandomFeatureModel
from rflite._core.progress import Progress
from rflite._core.folds import check_cv, cv_splits
from rflite._core.selection import choose
from rflite._gfc.descent import (  # noqa: F401 - the result type, fold_ids and constants re-exported
    LAM_BOUNDS,
    LAM_INIT,
    LBFGS_MAXITER,
    DescentResult,
    _check_folds,
    _descent_task,
    _DescentTask,
    _greedy_descent,
    fold_ids,
)
from rflite._gfc.kernels import _hyper_objective, _ridge_step
from rflite._core.validation import (
    MAX_ABS, check_array, check_bool, check_choice, check_int, check_real, check_X_y,
)
from rflite._core.random import check_rng, spawn_streams
from rflite._core.linalg import ridge_solve
from rflite._core.blas import shared_blas_limit
from rflite._core.parallel import check_executor, executor_scope, map_tasks, spawn_seeds
from rflite._core.backend import dask_backend, is_dask_array
from rflite._reexport import reexport
from rflite.features import FeatureMap
from rflite.metropolis import _canonical_order

# setting LAM_INIT etc. here sets them where the descent reads them
reexport(__name__, (_gfc_descent,), public=(DescentResult, fold_ids))

__all__ = [
    "LAM_INIT",
    "LAM_BOUNDS",
    "LBFGS_MAXITER",
    "NU_GRID",
    "BANDWIDTHS",
    "ETA_RELATIVE",
    "ROWS_PER_WORKER",
    "ROWS_PER_STEP",
    "GFC_INIT_SCALE",
    "NU_GRID_ESTIMATOR",
    "MEASURES",
    "STOPPINGS",
    "HyperObjective",
    "DescentResult",
    "GFCResult",
    "RFFResult",
    "hyper_objective",
    "fold_ids",
    "greedy_descent",
    "gfc",
    "gfc_design",
    "ridge_cv",
    "rff_ridge_cv",
    "GFCRegressor",
]

#: Ridge parameters :math:`\nu` (penalty :math:`\nu \|a\|^2`) cross-validated
#: for the amplitudes of GFC and of the random-Fourier baselines (Appendix C.2).
NU_GRID = np.logspace(-3, 2, 10)
#: The :math:`\nu` :class:`GFCRegressor` cross-validates: the paper's grid
#: extended upwards, since on noisy data the cross-validation asked for the
#: paper grid's largest value (housing, insulin, airfoil with noise inputs).
NU_GRID_ESTIMATOR = np.logspace(-3, 5, 17)
#: :class:`GFCRegressor` starts every greedy step at :math:`w \sim N(0, s^2 I/d)`
#: with this ``s`` instead of the paper's 1.  L-BFGS-B moves a spectrum only
#: where the validation gradient points, so with the paper's start the
#: components on irrelevant inputs stay near their random initial values: on
#: airfoil with 36 appended noise inputs most of the constructed spectra's
#: squared norm sits on the noise inputs and GFC falls behind ridge.  Smaller
#: starts help the sets with irrelevant inputs and hurt those (housing) whose
#: spectra need large components; 0.1 is the best compromise.  (``s = 0`` does not
#: move: the sine column and its gradient vanish at w = 0.)
GFC_INIT_SCALE = 0.1
#: Rule choosing :math:`\nu` over explicit ``cv`` folds (:func:`rflite._core.selection.choose`).
#: "1se" over-smooths where the signal is strong (housing) and gains little
#: where it is weak (insulin, where it only approaches the mean predictor).
NU_RULE = "min"
#: How many greedy steps of each descent the amplitude fit keeps: ``"eps"``
#: all of them (the paper: a descent stops when its training error improves
#: by less than ``eps``), ``"cv"`` the first s of every descent of the pass,
#: s chosen jointly with :math:`\nu` by the same folds
#: (:func:`_choose_steps_nu`; :class:`GFCRegressor`'s default).
STOPPINGS = ("cv", "eps")
#: Share of the rows :class:`GFCRegressor`'s guard against the mean holds out.
GUARD_FRACTION = 0.2
#: Fewest rows on which the guard runs: below, its hold-out (under 20 rows)
#: decides by noise more than by the model, and the extra fit doubled the cost
#: of scikit-learn's estimator checks (69 -> 107 s) for nothing.
GUARD_MIN_ROWS = 100
#: Bandwidths :math:`\sigma` of the random-Fourier baselines, frequencies
#: :math:`\omega = \omega_0 / \sigma` (Appendix C.2).
BANDWIDTHS = np.logspace(-3, 2, 10)
#: Default feature cut-off: ``eta = ETA_RELATIVE * (max(y) - min(y))`` (Appendix C.1).
ETA_RELATIVE = 1e-6
#: :class:`GFCRegressor` runs at most ``m // ROWS_PER_WORKER`` greedy descents
#: (at least one), so that each subsample keeps enough rows for its internal
#: folds; from ``m = 5 * ROWS_PER_WORKER`` on the paper's 5 workers run.
ROWS_PER_WORKER = 50
#: :class:`GFCRegressor` makes at most ``s // ROWS_PER_STEP`` greedy steps on a
#: subsample of ``s`` rows (each step fits d + 4 parameters); the paper's 20
#: from 40 rows on.
ROWS_PER_STEP = 2
#: Spectral measures of the baselines (standard forms; the kernels are the
#: Gaussian, the product of Cauchy kernels and the l1 Laplace kernel).
MEASURES = ("gaussian", "laplace", "cauchy")


class HyperObjective(NamedTuple):
    """k-fold validation error of one greedy step and its gradient.

    Attributes
    ----------
    value : float
        :math:`E(w, \\lambda)`, the mean over folds of the validation MSE.
    grad_w : (d,) ndarray
        :math:`\\partial E / \\partial w`.
    grad_lam : float
        :math:`\\partial E / \\partial \\lambda`.
    """

    value: float
    grad_w: np.ndarray
    grad_lam: float


class GFCResult(NamedTuple):
    """Result of :func:`gfc` (Algorithm 2).

    The model is ``intercept + cos(X W^T) @ coef_cos + sin(X W^T) @ coef_sin``.

    Attributes
    ----------
    weights : (L, d) ndarray
        Spectra of the kept features.
    intercept : float
        Amplitude of the bias feature.
    coef_cos, coef_sin : (L,) ndarray
        Amplitudes of :math:`\\cos(w_l^\\top x)` and :math:`\\sin(w_l^\\top x)`.
    nu : float
        Ridge parameter of the last amplitude fit (given or cross-validated).
    n_constructed : int
        Features constructed by all greedy descents (before pruning).
    n_pruned : int
        Features removed because their amplitude was below ``eta`` (those
        of the steps ``stopping="cv"`` did not keep are not counted).
    train_rmse : float
        Root mean squared training error of the final model.
    cv_mse : (n_folds, len(NU_GRID)) ndarray or None
        Validation MSE of every :data:`NU_GRID` value on every fold of the
        last pass's choice of :math:`\nu` (None when ``nu`` was given); with
        ``stopping="cv"``, on the kept steps' features.
    steps : int or None
        ``stopping="cv"``: the steps of every descent the last pass kept
        (None otherwise).
    """

    weights: np.ndarray
    intercept: float
    coef_cos: np.ndarray
    coef_sin: np.ndarray
    nu: float
    n_constructed: int
    n_pruned: int
    train_rmse: float
    cv_mse: np.ndarray | None = None
    steps: int | None = None


class RFFResult(NamedTuple):
    """Result of :func:`rff_ridge_cv`.

    Attributes
    ----------
    feature_map : FeatureMap
        ``"fourier"`` map (columns ``[cos(X W^T), sin(X W^T)]``) at the chosen
        bandwidth.
    intercept : float
    coef : (2 n_features,) ndarray
    bandwidth, nu : float
        The cross-validated bandwidth and ridge parameter.
    cv_mse : (n_bandwidths, n_nu) ndarray
        Cross-validated MSE of every pair.
    """

    feature_map: FeatureMap
    intercept: float
    coef: np.ndarray
    bandwidth: float
    nu: float
    cv_mse: np.ndarray


# --------------------------------------------------------------------- public
def hyper_objective(X, y, f, w, lam, folds) -> HyperObjective:
    r"""k-fold validation error of one greedy step and its analytic gradient.

    With :math:`z_w(x) = (f, \sin(w^\top x), \cos(w^\top x))` and, for fold
    :math:`j` as training sample :math:`T_j` (``folds == j``) and the others as
    validation sample :math:`V_j`,

    .. math::

        P_j = Z_{T_j}^\top Z_{T_j} + |T_j| \lambda I, \quad
        c_j = P_j^{-1} Z_{T_j}^\top y_{T_j}, \quad
        E(w, \lambda) = \frac{1}{k} \sum_{j=1}^k \frac{1}{|V_j|}
            \sum_{i \in V_j} (c_j^\top z_w(x_i) - y_i)^2 .

    The gradient is Appendix C.1 of Oglic and Gaertner (2016) with
    :math:`\Omega = \|c\|^2` (``D = I``): with
    :math:`t_j = P_j^{-1} \frac{1}{|V_j|} \sum_{V_j} r_i z_w(x_i)`,
    :math:`\partial E_j / \partial \theta = \frac{2}{|V_j|} \sum_{V_j} r_i
    \frac{\partial z_w(x_i)}{\partial \theta} c_j
    + 2 t_j^\top (\partial q_j / \partial \theta - \partial P_j / \partial \theta\, c_j)`,
    so :math:`\partial E_j / \partial \lambda = -2 |T_j| t_j^\top c_j`.

    Parameters
    ----------
    X : (s, d) array_like
    y, f : (s,) array_like
        Targets and current estimates at the sample points.
    w : (d,) array_like
        Spectrum.
    lam : float > 0
        Ridge parameter.
    folds : (s,) int array_like
        Fold of every point, values ``0 .. k-1``, ``k >= 2``, every fold non-empty.

    Returns
    -------
    HyperObjective
        ``(value, grad_w, grad_lam)``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, (100, 3)); y = np.cos(X @ [1.0, 2.0, 0.0])
    >>> obj = hyper_objective(X, y, np.zeros(100), np.ones(3), 1e-3, fold_ids(100, 5, 0))
    >>> obj.grad_w.shape
    (3,)
    """
    X, y = check_X_y(X, y)
    s, d = X.shape
    f = check_array(f, "f", ndim=1)
    if f.shape[0] != s:
        raise ValueError(f"f must have length {s}, got {f.shape[0]}")
    w = check_array(w, "w", ndim=1)
    if w.shape[0] != d:
        raise ValueError(f"w must have length d={d}, got {w.shape[0]}")
    lam = check_real(lam, "lam", minimum=0.0, strict=True)
    folds, k = _check_folds(folds, s)
    value, grad = _hyper_objective(
        np.ascontiguousarray(X), y, f, np.ascontiguousarray(w), lam, folds, k
    )
    return HyperObjective(float(value), grad[:d].copy(), float(grad[d]))


def greedy_descent(X, y, f0, *, max_steps=20, eps=0.01, n_folds=5, rng=None) -> DescentResult:
    r"""Greedy functional descent with cosine-wave features (Algorithm 1).

    For ``k = 1 .. max_steps``: draw :math:`w \sim N(0, I/d)` and
    :math:`\lambda` = :data:`LAM_INIT`, minimise the k-fold validation error
    :func:`hyper_objective` over :math:`(w, \log \lambda)` with L-BFGS-B
    (:data:`LBFGS_MAXITER` iterations, :math:`\lambda` within
    :data:`LAM_BOUNDS`), refit the amplitudes on the whole sample,

    .. math::

        c = (Z_w^\top Z_w + s \lambda I)^{-1} Z_w^\top y, \qquad
        f_{k,i} = c_0 f_{k-1,i} + c_1 \sin(w^\top x_i) + c_2 \cos(w^\top x_i),

    keep :math:`w`, and stop once
    :math:`|\mathcal{E}(f_k) - \mathcal{E}(f_{k-1})| / \max(\mathcal{E}(f_k),
    \mathcal{E}(f_{k-1})) < \epsilon` (training MSE; the feature of the last
    step is kept, as in the paper).

    Parameters
    ----------
    X : (s, d) array_like
    y : (s,) array_like
    f0 : (s,) array_like or float
        Initial estimates at the sample points (a scalar is broadcast).
    max_steps : int >= 1
        ``p``, the maximum number of descent steps (paper: 20).
    eps : float >= 0
        Precision of the stopping rule (paper: 0.01).
    n_folds : int >= 2
        Folds of the hyper-parameter objective (one trains, the rest validate).
    rng : None, int, Generator, RandomState or SeedSequence
        See :func:`rflite._core.random.check_rng` (a negative seed is an error).
        The fold split and the initial spectra.

    Returns
    -------
    DescentResult

    References
    ----------
    D. Oglic, T. Gaertner, "Greedy Feature Construction", NIPS 2016,
    Algorithm 1, Sec. 2.5 and Appendix C.1.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, (400, 2)); y = np.cos(X @ [3.0, -1.0])
    >>> res = greedy_descent(X, y, np.zeros(400), max_steps=3, rng=0)
    >>> res.weights.shape[1]
    2
    """
    X, y = check_X_y(X, y)
    s = X.shape[0]
    f0 = check_array(f0, "f0", ndim=(0, 1))
    if f0.ndim == 0:
        f0 = np.full(s, float(f0))
    if f0.shape[0] != s:
        raise ValueError(f"f0 must have length {s}, got {f0.shape[0]}")
    max_steps = check_int(max_steps, "max_steps", minimum=1)
    eps = check_real(eps, "eps", minimum=0.0)
    n_folds = check_int(n_folds, "n_folds", minimum=2)
    if s < 2 * n_folds:
        raise ValueError(
            f"X needs at least 2 * n_folds = {2 * n_folds} rows, got n_samples={s}"
        )
    return _greedy_descent(
        np.ascontiguousarray(X), y, np.array(f0, dtype=np.float64), max_steps, eps, n_folds,
        check_rng(rng),
    )


def gfc(X, y, *, n_passes=1, max_steps=20, n_workers=5, nu=None, eta=None, eps=0.01,
        n_folds=5, subsample=None, cv=None, nu_grid=NU_GRID, init_scale=1.0, stopping="eps",
        executor=None, rng=None, verbose=0) -> GFCResult:
    r"""Greedy feature construction (Algorithm 2).

    :math:`W = \{\text{bias}\}`, :math:`f_i = \bar y`; then ``n_passes`` times:

    1. ``n_workers`` independent :func:`greedy_descent` runs, each on a random
       subsample :math:`S_j` with estimates :math:`f_{S_j}`, add their spectra
       to :math:`W`;
    2. fit the amplitudes of all features by ridge regression,

       .. math::

           a^* = \arg\min_a \sum_{k=1}^m \Big(a_0 + \sum_l a_l^c \cos(w_l^\top x_k)
               + a_l^s \sin(w_l^\top x_k) - y_k\Big)^2 + \nu \|a\|_2^2,

       with :math:`\nu` from :data:`NU_GRID` by cross-validation unless
       given (``cv``; the rule "min" of :func:`rflite._core.selection.choose`, which
       never picks a :math:`\nu` whose error on a fold exceeds ten times that
       of predicting the training mean);
    3. drop the features with amplitude :math:`\sqrt{(a_l^c)^2 + (a_l^s)^2} <
       \eta` (at least one is kept) and set :math:`f = ` the current model (the
       remaining amplitudes are not refitted, as in the paper).

    The descents are tasks for ``executor`` with per-task seeds from
    :class:`numpy.random.SeedSequence` ``spawn`` and subsamples drawn here, so
    the result is bit-identical whatever executor runs them.

    Parameters
    ----------
    X : (m, d) array_like
    y : (m,) array_like
    n_passes : int >= 1
        ``T`` (paper: 1).
    max_steps : int >= 1
        ``p`` per descent (paper: 20).
    n_workers : int >= 1
        ``M`` descents per pass (paper: 5 for 100 features, 25 for 500).
    nu : float > 0, optional
        Ridge parameter of the amplitude fit; default: cross-validated.
    eta : float >= 0, optional
        Feature cut-off; default ``ETA_RELATIVE * (max(y) - min(y))``.
    eps, n_folds
        Passed to :func:`greedy_descent`; a subsample with fewer than
        ``2 n_folds`` rows uses ``max(2, rows // 2)`` folds (small samples
        work down to subsamples of 2 rows).
    subsample : int, optional
        Size of each :math:`S_j`.  Default: the rows are randomly partitioned
        into ``n_workers`` disjoint chunks of ``m // n_workers`` (the data
        splitting of parallel SGD the paper follows); an int draws each
        :math:`S_j` independently without replacement.
    init_scale : float > 0, default 1
        Every greedy step starts its spectrum at :math:`w \sim N(0, s^2 I / d)`
        with ``s = init_scale`` (the paper: 1; :class:`GFCRegressor` uses
        :data:`GFC_INIT_SCALE`).
    nu_grid : 1-d array_like of positive floats, default :data:`NU_GRID`
        The :math:`\nu` cross-validated when ``nu`` is not given.
    stopping : {"eps", "cv"}, default "eps"
        ``"eps"`` (the paper): the amplitude fit takes every feature the
        descents constructed, each descent having stopped when its training
        error improved by less than ``eps`` or after ``max_steps``.
        ``"cv"``: the first s steps of every descent of the pass, s chosen
        with :math:`\nu` by the same folds (:func:`_choose_steps_nu`; the
        features of earlier passes are kept); ignored when ``nu`` is given.
    cv : None, int, splitter or list of (train, test) index pairs
        Folds of the cross-validation of :math:`\nu`.  ``None`` (the
        paper's code path, used by the experiments): ``min(n_folds, m)``
        random folds drawn from ``rng``; an int K: unshuffled K-fold
        (scikit-learn's ``KFold(K)``); any object with ``split(X, y)``
        (scikit-learn's splitters) or an explicit list of index pairs.
    executor : None, int or concurrent.futures.Executor
        ``None`` serial; an int ``n_jobs`` a local process pool;
        ``distributed.Client(...).get_executor()`` a Dask cluster;
        ``mpi4py.futures.MPIPoolExecutor()`` MPI.  See :mod:`rflite._core.parallel`.
    rng : None, int, Generator, RandomState or SeedSequence
        See :func:`rflite._core.random.check_rng` (a negative seed is an error).
    verbose : int, default 0
        ``>= 1``: one line per greedy step of every descent (worker, step,
        elapsed seconds, training MSE and the step's validation objective)
        and one per pass (the chosen :math:`\nu` and its CV error), on
        stderr (from the workers' processes when an executor runs them).

    Returns
    -------
    GFCResult

    References
    ----------
    D. Oglic, T. Gaertner, "Greedy Feature Construction", NIPS 2016,
    Algorithm 2 and Appendix C.1 (defaults).

    Examples
    --------
    >>> from rflite.datasets import make_friedman_gfc
    >>> X, y = make_friedman_gfc(2000, rng=0)
    >>> res = gfc(X, y, n_workers=2, max_steps=5, rng=0)
    >>> res.weights.shape[1]
    10
    """
    return _gfc_fits(X, y, [rng], n_passes=n_passes, max_steps=max_steps, n_workers=n_workers,
                     nu=nu, eta=eta, eps=eps, n_folds=n_folds, subsample=subsample, cv=cv,
                     nu_grid=nu_grid, init_scale=init_scale, stopping=stopping,
                     executor=executor, verbose=verbose)[0]


def _gfc_fits(X, y, rngs, *, n_passes=1, max_steps=20, n_workers=5, nu=None, eta=None,
              eps=0.01, n_folds=5, subsample=None, cv=None, nu_grid=NU_GRID, init_scale=1.0,
              stopping="eps", executor=None, verbose=0) -> list:
    """:func:`gfc` once per generator of ``rngs`` (a bag), the fits in lock step.

    Pass k of every fit runs its descents as tasks of one
    :func:`~rflite._core.parallel.map_tasks`, so a bag of B fits keeps up to
    ``B * n_workers`` descents in flight; each fit draws only from its own
    generator, in the order :func:`gfc` does, so fit j is exactly
    ``gfc(X, y, rng=rngs[j], ...)`` whatever runs the tasks.
    """
    X, y = check_X_y(X, y)
    m, d = X.shape
    n_passes = check_int(n_passes, "n_passes", minimum=1)
    max_steps = check_int(max_steps, "max_steps", minimum=1)
    n_workers = check_int(n_workers, "n_workers", minimum=1)
    n_folds = check_int(n_folds, "n_folds", minimum=2)
    eps = check_real(eps, "eps", minimum=0.0)
    if nu is not None:
        nu = check_real(nu, "nu", minimum=0.0, strict=True)
    if eta is None:
        eta = ETA_RELATIVE * float(y.max() - y.min())
    eta = check_real(eta, "eta", minimum=0.0)
    if subsample is None:
        size = m // n_workers
    else:
        size = check_int(subsample, "subsample", minimum=1, maximum=m)
    if size < 2:
        raise ValueError(
            f"subsample size {size} (n_samples={m}, n_workers={n_workers}, subsample={subsample}) "
            f"must be at least 2 (a descent needs two folds of one row)"
        )
    # small samples: fewer, smaller folds rather than an error
    descent_folds = n_folds if size >= 2 * n_folds else max(2, size // 2)
    executor = check_executor(executor)
    progress = Progress(verbose, "GFC")
    init_scale = check_real(init_scale, "init_scale", minimum=0.0, strict=True)
    nu_grid = check_array(nu_grid, "nu_grid", ndim=1)
    if nu_grid.size == 0 or np.any(nu_grid <= 0):
        raise ValueError(f"nu_grid must be a non-empty array of positive floats, got {nu_grid}")
    X = np.ascontiguousarray(X)
    splits = None
    if nu is None and cv is not None:
        splits = _check_splits(cv, X, y)
    opts = dict(max_steps=max_steps, n_workers=n_workers, nu=nu, eta=eta, eps=eps,
                n_folds=descent_folds, subsample=subsample, size=size, splits=splits,
                nu_grid=nu_grid, init_scale=init_scale, cv_folds=n_folds,
                stopping=check_choice(stopping, "stopping", STOPPINGS))
    runs = [_GFCRun(X, y, check_rng(r), opts, progress if progress else None,
                    f"fit {j + 1}/{len(rngs)} " if len(rngs) > 1 else "")
            for j, r in enumerate(rngs)]
    with executor_scope(executor, n_workers * len(runs)) as pool:  # one pool for all passes
        _lock_step(runs, n_passes,
                   lambda tasks: map_tasks(_descent_task, tasks, executor=pool), progress)
    return [run.result() for run in runs]


def _lock_step(runs, n_passes, compute, progress):
    """Run the passes of every fit of ``runs`` together (also the Dask fit).

    Each run has ``pass_tasks()`` (its next pass's descents) and
    ``finish_pass(results)`` (the amplitude fit; returns nu's CV errors or
    None); ``compute(tasks)`` runs the tasks of all runs' pass as one batch and
    returns their results in order.  ``progress`` (or None) prints one line
    per fit and pass.
    """
    bag = len(runs) > 1
    for k in range(n_passes):
        tasks = [run.pass_tasks() for run in runs]
        results = compute([t for ts in tasks for t in ts])
        start = 0
        for j, (run, ts) in enumerate(zip(runs, tasks)):
            cv_mse = run.finish_pass(results[start:start + len(ts)])
            start += len(ts)
            if progress:
                progress.line(f"{f'fit {j + 1}/{len(runs)}: ' if bag else ''}pass "
                              f"{k + 1}/{n_passes}: {run.weights.shape[0]} features, "
                              f"nu {run.nu_used:.3g}"
                              + (f", the first {run.steps} steps of each descent kept"
                                 if run.steps is not None else ""),
                              error=float(cv_mse.mean(axis=0).min()) if cv_mse is not None
                              else None)


class _GFCRun:
    """The state of one GFC fit between passes (:func:`_gfc_fits`).

    Draws from ``rng`` in :func:`gfc`'s order: the folds of nu (when
    cross-validated on random folds), then per pass the subsamples and the
    descents' seeds (:meth:`pass_tasks`).
    """

    def __init__(self, X, y, rng, opts, progress=None, label=""):
        m, d = X.shape
        self.X, self.y, self.rng, self.opts = X, y, rng, opts
        self.progress, self.label = progress, label
        self.weights = np.empty((0, d))
        self.f = np.full(m, y.mean())
        self.n_constructed = self.n_pruned = 0
        self.cv_folds = (fold_ids(m, min(opts["cv_folds"], m), rng)
                         if opts["nu"] is None and opts["splits"] is None else None)
        self.a = self.nu_used = self.cv_mse = self.steps = None

    def pass_tasks(self):
        """The descents of the next pass (Algorithm 2, lines 3-4), as tasks."""
        o, progress, label = self.opts, self.progress, self.label
        n = o["n_workers"]
        samples = _draw_samples(self.X.shape[0], self.rng, n, o["size"], o["subsample"])
        seeds = spawn_seeds(self.rng, n)
        return [
            _DescentTask(self.X[S], self.y[S], self.f[S], o["max_steps"], o["eps"],
                         o["n_folds"], seed,
                         None if progress is None else (progress, f"{label}worker {j + 1}/{n}"),
                         o["init_scale"])
            for j, (S, seed) in enumerate(zip(samples, seeds))
        ]

    def finish_pass(self, results):
        """Lines 5-7 from the pass's descents; returns the nu CV errors (or None)."""
        o = self.opts
        new = [r.weights for r in results]
        weights = np.vstack([self.weights, *new])
        with shared_blas_limit(1):
            (self.weights, self.a, self.f, self.nu_used, n_new, n_cut, self.cv_mse,
             self.steps) = _amplitude_fit(self.X, self.y, weights, new, o["nu"],
                                          self.cv_folds, o["splits"], o["nu_grid"], o["eta"],
                                          o["stopping"])
        self.n_constructed += n_new
        self.n_pruned += n_cut
        return self.cv_mse

    def result(self) -> GFCResult:
        L, a = self.weights.shape[0], self.a
        return GFCResult(
            weights=self.weights, intercept=float(a[0]), coef_cos=a[1:L + 1].copy(),
            coef_sin=a[L + 1:].copy(), nu=float(self.nu_used), n_constructed=self.n_constructed,
            n_pruned=self.n_pruned, train_rmse=float(np.sqrt(np.mean((self.f - self.y) ** 2))),
            cv_mse=self.cv_mse, steps=self.steps,
        )


def _check_splits(cv, X, y):
    """``cv`` as validated ``(train, test)`` pairs: an explicit list, or via :func:`cv_splits`."""
    if isinstance(cv, (list, tuple)):
        m = X.shape[0]
        out = []
        for k, pair in enumerate(cv):
            try:
                train, test = (np.asarray(part) for part in pair)
            except (TypeError, ValueError):
                raise ValueError(f"cv must be None, an int, a splitter or a list of "
                                 f"(train, test) index pairs; item {k} is {pair!r}") from None
            for part in (train, test):
                if part.size == 0 or part.min() < 0 or part.max() >= m:
                    raise ValueError(f"cv: fold {k} is empty or indexes rows outside 0..{m - 1}")
            out.append((train.astype(np.int64), test.astype(np.int64)))
        if not out:
            raise ValueError("cv produced no folds")
        return out
    return cv_splits(cv, X, y)


def _amplitude_fit(X, y, weights, new, nu, cv_folds, splits, nu_grid, eta, stopping="eps"):
    """Lines 5-7 of a pass: the amplitudes of all features, nu, the cut-off.

    With ``stopping="cv"`` (and ``nu`` not given) only the first s steps of
    every descent of the pass enter, s chosen with nu (:func:`_choose_steps_nu`).
    Returns ``(weights, amplitudes, model values, nu, constructed, pruned,
    fold errors of the kept features or None, s or None)``.

    Runs with one BLAS thread (the caller's limit), as the descents do: its
    Grams and eigendecompositions are a few hundred columns wide, where
    OpenBLAS's threads cost more in start-up and synchronisation than they
    save (several times slower on a 2-core machine).
    """
    A = gfc_design(X, weights)
    cv_mse = steps = None
    n_new = sum(len(w) for w in new)
    if nu is not None:
        nu_used = nu
    elif stopping == "cv":
        step = _step_index(weights.shape[0], new)
        prefixes = [_prefix_columns(step, s) for s in range(1, max(len(w) for w in new) + 1)]
        if splits is None:  # gfc's random folds: the lowest mean error, as _best_nu
            folds = [(np.flatnonzero(cv_folds != j), np.flatnonzero(cv_folds == j))
                     for j in range(int(cv_folds.max()) + 1)]
            tables = [t.mean(axis=0) for t in _ridge_cv_prefixes(A, y, nu_grid, folds,
                                                                 prefixes)]
            base = None
        else:
            tables = _ridge_cv_prefixes(A, y, nu_grid, splits, prefixes)
            base = [float(np.mean((y[te] - y[tr].mean()) ** 2)) for tr, te in splits]
        steps, nu_used = _choose_steps_nu(tables, base, nu_grid)
        cv_mse = None if splits is None else tables[steps - 1]
        kept = step < steps
        if not kept.all():
            weights, A = weights[kept], A[:, prefixes[steps - 1]]
    elif splits is None:
        nu_used = _best_nu(A, y, nu_grid, cv_folds)
    else:
        cv_mse = _ridge_cv_splits(A, y, nu_grid, splits)
        base = [float(np.mean((y[te] - y[tr].mean()) ** 2)) for tr, te in splits]
        nu_used = _choose_nu(cv_mse, base, nu_grid)
    a = ridge_solve(A.T @ A, A.T @ y, nu_used)
    L = weights.shape[0]
    keep, cols = _kept_columns(a, L, eta)
    # line 7: the model on the kept features (pruned amplitudes are below eta)
    f = A[:, cols] @ a[cols]
    return (weights[keep], a[cols], f, nu_used, n_new, int(L - keep.sum()), cv_mse, steps)


def _step_index(n_weights, new) -> np.ndarray:
    """Greedy step of every spectrum of ``vstack([earlier, *new])``: -1 for the
    earlier passes' (always kept), 0, 1, ... along each descent of ``new``."""
    n_old = n_weights - sum(len(w) for w in new)
    return np.concatenate([np.full(n_old, -1, np.int64)]
                          + [np.arange(len(w), dtype=np.int64) for w in new])


def _prefix_columns(step, s) -> np.ndarray:
    """Columns of ``[1, cos, sin]`` (:func:`gfc_design`) of the spectra with ``step < s``."""
    idx = np.flatnonzero(step < s)
    return np.concatenate([[0], 1 + idx, 1 + step.size + idx])


def _choose_steps_nu(tables, baseline, nu_grid):
    r"""``(s, nu)`` of ``stopping="cv"`` from the fold errors of every prefix.

    ``tables[s - 1]`` holds the errors of the features of the first s steps
    of every descent: ``(n_folds, len(nu_grid))`` per fold with explicit
    folds (``baseline`` their mean-prediction errors), chosen by
    :data:`NU_RULE` of :func:`rflite._core.selection.choose` with the grid ordered from
    the simplest model (fewer steps, then larger :math:`\nu`), the rule that
    chooses :math:`\nu` alone (:func:`_choose_nu`); or ``(len(nu_grid),)``
    mean errors over :func:`gfc`'s random folds (``baseline`` None), the
    lowest (fewer steps, then smaller :math:`\nu`, on ties, as
    :func:`_best_nu`).
    """
    n_nu = nu_grid.size
    if baseline is None:
        flat = np.concatenate([np.asarray(t, dtype=float) for t in tables])
        flat = np.where(np.isfinite(flat), flat, np.inf)
        s, j = divmod(int(np.argmin(flat)), n_nu)
        return s + 1, float(nu_grid[j])
    c = choose(np.concatenate([t[:, ::-1] for t in tables], axis=1), rule=NU_RULE,
               baseline=baseline)
    s, j = divmod(c.index, n_nu)
    return s + 1, float(nu_grid[n_nu - 1 - j])


def _draw_samples(m, rng, n_workers, size, subsample):
    """Row indices of a pass's descents (line 3): disjoint parts of one shuffle, or
    independent draws of ``size`` rows without replacement (``subsample`` given)."""
    if subsample is None:
        perm = rng.permutation(m)
        return [np.sort(perm[j * size:(j + 1) * size]) for j in range(n_workers)]
    return [np.sort(rng.choice(m, size, replace=False)) for _ in range(n_workers)]


def _choose_nu(cv_mse, baseline, nu_grid) -> float:
    """:data:`NU_RULE` over the folds' errors ``(n_folds, len(nu_grid))``: the
    one-prefix case of :func:`_choose_steps_nu` (largest nu first)."""
    return _choose_steps_nu([cv_mse], baseline, nu_grid)[1]


def _kept_columns(a, L, eta):
    """Line 6: features with amplitude at least ``eta`` (at least one): ``(keep, cols)``,
    ``cols`` the kept columns of ``[1, cos, sin]``."""
    amp = np.hypot(a[1:L + 1], a[L + 1:])
    keep = amp >= eta
    if not keep.any():
        keep[np.argmax(amp)] = True
    return keep, np.concatenate([[0], 1 + np.flatnonzero(keep), 1 + L + np.flatnonzero(keep)])


def gfc_design(X, weights) -> np.ndarray:
    """Design matrix ``[1, cos(X W^T), sin(X W^T)]`` (m x (2L + 1)) of GFC features."""
    X = check_array(X, "X", ndim=2)
    weights = check_array(weights, "weights", ndim=2, min_rows=0)
    if weights.shape[1] != X.shape[1]:
        raise ValueError(f"weights must have {X.shape[1]} columns, got shape {weights.shape}")
    Z = X @ weights.T
    return np.hstack([np.ones((X.shape[0], 1)), np.cos(Z), np.sin(Z)])


def ridge_cv(A, y, nus, folds) -> np.ndarray:
    r"""k-fold cross-validated MSE of ridge regression for every :math:`\nu` in ``nus``.

    For fold :math:`j`, :math:`a_j(\nu) = (A_{-j}^\top A_{-j} + \nu I)^{-1}
    A_{-j}^\top y_{-j}` from one eigendecomposition of the training Gram
    :math:`A^\top A - A_j^\top A_j`, so each extra :math:`\nu` costs
    :math:`O(n^2)`.  Returns the mean over folds of the held-out MSE,
    shape ``(len(nus),)``.
    """
    A = check_array(A, "A", ndim=2)
    y = check_array(y, "y", ndim=1)
    nus = np.atleast_1d(check_array(nus, "nus", ndim=(0, 1)))
    if np.any(nus <= 0):
        raise ValueError(f"nus must be positive, got {nus}")
    folds, k = _check_folds(folds, A.shape[0])
    G = A.T @ A
    r = A.T @ y
    err = np.zeros(nus.size)
    for j in range(k):
        idx = np.flatnonzero(folds == j)
        Aj, yj = A[idx], y[idx]
        e, V = scipy.linalg.eigh(G - Aj.T @ Aj, check_finite=False)
        e = np.maximum(e, 0.0)
        proj = V.T @ (r - Aj.T @ yj)
        pred = (Aj @ V) @ (proj[:, None] / (e[:, None] + nus[None, :]))
        err += np.mean((pred - yj[:, None]) ** 2, axis=0)
    return err / k


def _ridge_cv_prefixes(A, y, nus, splits, prefixes) -> list:
    """:func:`_ridge_cv_splits` on the columns of every prefix (``stopping="cv"``).

    One training Gram matrix per fold serves every prefix, whose own Gram is
    its principal block (for all columns: the matrix itself, so those errors
    are :func:`_ridge_cv_splits`'s); no copy of ``A``'s columns is kept.
    Returns one ``(n_folds, len(nus))`` array per prefix.
    """
    out = [np.empty((len(splits), nus.size)) for _ in prefixes]
    for k, (tr, te) in enumerate(splits):
        At = A[tr]
        G, r, Ae = At.T @ At, At.T @ y[tr], A[te]
        del At
        for table, cols in zip(out, prefixes):
            full = cols.size == A.shape[1]
            e, V = scipy.linalg.eigh(G if full else G[np.ix_(cols, cols)], check_finite=False)
            e = np.maximum(e, 0.0)
            proj = V.T @ (r if full else r[cols])
            pred = ((Ae if full else Ae[:, cols]) @ V) @ (proj[:, None]
                                                         / (e[:, None] + nus[None, :]))
            table[k] = np.mean((pred - y[te][:, None]) ** 2, axis=0)
    return out


def _ridge_cv_splits(A, y, nus, splits) -> np.ndarray:
    """Validation MSE ``(n_folds, len(nus))`` of ridge on ``A`` for explicit splits.

    As :func:`ridge_cv` (one eigendecomposition per fold serves every
    :math:`\nu`), with any ``(train, test)`` pairs instead of fold ids: the
    one-prefix case of :func:`_ridge_cv_prefixes` (all columns).
    """
    return _ridge_cv_prefixes(A, y, nus, splits, [np.arange(A.shape[1])])[0]


def rff_ridge_cv(X, y, *, n_features=100, measure="gaussian", bandwidths=BANDWIDTHS,
                 nus=NU_GRID, n_folds=5, cv_max=None, executor=None, rng=None) -> RFFResult:
    r"""Random Fourier features + ridge, bandwidth and ridge by cross-validation.

    Frequencies :math:`\omega_l = \omega_{0,l} / \sigma` with :math:`\omega_{0,l}`
    drawn once from the standard spectral ``measure`` (``"gaussian"``: N(0, I),
    the Gaussian kernel; ``"laplace"``: i.i.d. Laplace(0, 1) entries, the
    kernel :math:`\prod_i 1 / (1 + \delta_i^2)`; ``"cauchy"``: i.i.d. standard
    Cauchy entries, the kernel :math:`\exp(-\|\delta\|_1)`), features
    ``[1, cos(X Omega^T), sin(X Omega^T)]`` and the ridge penalty
    :math:`\nu \|a\|^2`; :math:`(\sigma, \nu)` minimise the ``n_folds``-fold CV
    error over ``bandwidths x nus`` (Appendix C.2: ``logspace(-3, 2, 10)``),
    then the model is refitted on all of ``X``.  The bandwidths are independent
    tasks for ``executor`` (see :func:`rflite._core.parallel.map_tasks`).

    Parameters
    ----------
    X, y : training data
    n_features : int
        Number of frequencies (``2 n_features`` columns plus the bias).
    measure : {"gaussian", "laplace", "cauchy"}
    bandwidths, nus : 1-d array_like of positive floats
    n_folds : int >= 2
    cv_max : int, optional
        Cross-validate on a random subset of at most ``cv_max`` rows (the
        final fit always uses all rows).
    executor : None, int or Executor
    rng : None, int, Generator, RandomState or SeedSequence
        See :func:`rflite._core.random.check_rng` (a negative seed is an error).

    Returns
    -------
    RFFResult

    References
    ----------
    A. Rahimi, B. Recht, "Random features for large-scale kernel machines",
    NIPS 2007; Oglic and Gaertner (2016), Appendix C.2.
    """
    X, y = check_X_y(X, y)
    m, d = X.shape
    n_features = check_int(n_features, "n_features", minimum=1)
    check_choice(measure, "measure", MEASURES)
    bandwidths = check_array(bandwidths, "bandwidths", ndim=1)
    nus = check_array(nus, "nus", ndim=1)
    if np.any(bandwidths <= 0):
        raise ValueError(f"bandwidths must be positive, got {bandwidths}")

    if np.any(nus <= 0):
        raise ValueError(f"nus must be positive, got {nus}")
    n_folds = check_int(n_folds, "n_folds", minimum=2, maximum=m)
    executor = check_executor(executor)
    rng = check_rng(rng)
    W0 = _spectral_sample(measure, rng, (n_features, d))
    with np.errstate(over="ignore"):
        w_max = float(np.abs(W0).max()) / float(bandwidths.min())
    if not w_max <= MAX_ABS:
        # frequencies omega_0 / bandwidth beyond MAX_ABS overflow in X Omega^T
        raise ValueError(
            f"bandwidths has a value too small, {bandwidths.min():g}: the frequencies "
            f"omega_0 / bandwidth reach {w_max:.3g} > MAX_ABS = {MAX_ABS:g}"
        )
    rows = np.arange(m)
    if cv_max is not None:
        cv_max = check_int(cv_max, "cv_max", minimum=2 * n_folds)
        if cv_max < m:
            rows = np.sort(rng.choice(m, cv_max, replace=False))
    folds = fold_ids(rows.size, n_folds, rng)
    Xc, yc = np.ascontiguousarray(X[rows]), y[rows]
    tasks = [(Xc, yc, W0 / bw, nus, folds) for bw in bandwidths]
    cv = np.array(map_tasks(_rff_cv_task, tasks, executor=executor))
    ib, inu = np.unravel_index(np.argmin(cv), cv.shape)
    W = W0 / bandwidths[ib]
    A = gfc_design(X, W)
    a = ridge_solve(A.T @ A, A.T @ y, float(nus[inu]))
    fmap = _fourier_map(W)
    return RFFResult(fmap, float(a[0]), a[1:].copy(), float(bandwidths[ib]), float(nus[inu]), cv)


# -------------------------------------------------------------------- model
class GFCRegressor(RandomFeatureModel):
    """Greedy feature construction regressor (Oglic and Gaertner 2016, Algorithm 2).

    ``fit`` runs :func:`gfc`; the fitted model is a ``"fourier"``
    :class:`~rflite.features.FeatureMap` (columns ``[cos(X W^T), sin(X W^T)]``,
    no phases) with ``coef_`` on its columns and the bias amplitude as
    ``intercept_``.  :meth:`transform` gives the constructed features so any
    linear model can be fitted on them.

    Regularisation from the data, as in the paper: every greedy step chooses
    its spectrum and ridge parameter :math:`\\lambda` by minimising a k-fold
    validation error (``n_folds``; :func:`hyper_objective`), each descent
    stops when its training error stops improving by ``eps``, and the
    amplitudes' ridge parameter :math:`\\nu` is chosen from :data:`NU_GRID`
    by cross-validation over ``cv`` (``cv_results_``; the "min" rule of
    :func:`rflite._core.selection.choose`, which never picks a :math:`\\nu` that fits some
    fold worse than ten times predicting the mean).

    Small samples: the number of descents is at most ``m //``
    :data:`ROWS_PER_WORKER` and the steps per descent at most ``s //``
    :data:`ROWS_PER_STEP` (``s`` the rows per descent), and a descent whose
    sample has fewer than ``2 n_folds`` rows uses fewer folds; so ten rows
    fit (one descent, five steps) and from 250 rows on the paper's 5 x 20 run
    unchanged (``n_workers_``, ``max_steps_`` record what ran).

    The rows are put in a canonical (lexicographic) order before the random
    subsamples and folds are drawn, so that the descents do not depend on
    the order of the rows and integer ``sample_weight`` (a row of weight k is
    repeated k times, zero drops it; non-integer weights raise
    ``ValueError``) gives the repeated rows.  The whole fit has both
    properties exactly when the choice of :math:`\nu` has them too: with
    ``cv=None`` (folds drawn on the canonical rows) or ``nu`` given.  An int
    ``cv`` (the default 5: scikit-learn's unshuffled ``KFold``) or a splitter
    takes its folds on the rows as given, so the chosen :math:`\nu` -- and
    the fit -- can follow the row order, and a weight-k row is not k rows
    there (a row permutation can move the predictions).

    Departures from the paper's settings, each justified at its constant:
    every greedy step starts its spectrum at :math:`w \\sim N(0, s^2 I/d)`
    with ``s =`` :data:`GFC_INIT_SCALE` = 0.1 instead of 1 (with the paper's
    start the spectra kept most of their weight on irrelevant inputs),
    :math:`\\nu` is chosen from the wider :data:`NU_GRID_ESTIMATOR`, and the
    model is the average of ``n_estimators = 5`` independent GFC fits (each
    with its own subsamples, starts and folds; bagging without resampling).
    One fit's test error varies with the seed as much as between methods
    (propulsion, ``load_uci`` split 0: 0.19 .. 1.9 x RidgeCV's test MSE over
    eight seeds), because every spectrum is fitted on a subsample of
    ``m / n_workers`` rows.  Test MSE over RidgeCV's of the default
    estimator on the ``load_uci`` splits 0 / 1 / 2 (``random_state`` = the
    split; one fit -> the mean of five): Friedman-1 (d = 20, 500 rows)
    1.27 / 1.14 / 1.22 -> 0.98 / 1.00 / 0.99, airfoil 1.08 / 1.47 / 1.24 ->
    0.93 / 0.99 / 1.01, ccpp 1.10 / 1.04 / 1.14 -> 0.96 / 0.94 / 0.94,
    housing 1.05 / 0.99 / 1.32 -> 0.88 / 0.95 / 0.89, propulsion 0.22 / 1.25
    / 1.83 -> 0.13 / 0.64 / 0.51, speech 0.60 / 0.67 / 0.74 -> 0.40 / 0.44 /
    0.32, insulin (the guard's mean) 1.15 / 1.08 / 1.14 -> 1.15 (the mean) /
    1.05 / 1.14.  The model keeps every fit's features (five times as many
    columns) with its amplitudes divided by five; it costs five fits (and
    five in the guard), which run in lock step: each pass's descents of all
    the fits are one batch for ``executor`` (:func:`_gfc_fits`).
    ``n_estimators=1`` is one fit.

    The guard against the mean (``mean_guard=True``, the default): the
    cross-validation of :math:`\\nu` scores features that were constructed on
    every row, so it cannot tell when the constructed features fit noise
    (on ``load_uci("insulin")`` GFC scored 1.14 x the test MSE of predicting
    the mean).  So ``fit`` first runs the same GFC on a random 80 % of the
    rows (:data:`GUARD_FRACTION` held out, drawn from ``random_state``) and,
    when its held-out MSE is not below that of the training rows' mean, fits
    the intercept-only model (no features, ``guarded_`` True); otherwise it
    fits on all rows as below.  It costs one more GFC fit on 80 % of the rows
    and runs from :data:`GUARD_MIN_ROWS` (100) rows on (after integer weights
    are expanded).
    ``mean_guard=False`` (what :func:`gfc` does) skips it.

    A row-chunked Dask ``X`` fits on the cluster (:mod:`rflite._dask.gfc`:
    every descent a Dask task on its subsample, the amplitudes from one pass
    of per-fold Gram sums; no ``sample_weight`` or ``executor`` there).

    Reproducing the paper: :func:`gfc` with its defaults (the experiments in
    :mod:`rflite.experiments.gfc` call it); this class equals
    ``gfc(X, y, nu_grid=NU_GRID_ESTIMATOR, init_scale=GFC_INIT_SCALE, stopping="cv", ...)``
    on the rows in canonical order when ``n_estimators=1``, ``cv=None`` and
    ``mean_guard=False`` (or when the guard keeps the features).

    Parameters
    ----------
    n_passes, max_steps, n_workers, nu, eta, eps, n_folds, subsample
        See :func:`gfc`; ``n_workers`` and ``max_steps`` are upper limits
        (above).
    stopping : {"cv", "eps"}, default "cv"
        ``"cv"``: how many greedy steps of every descent the amplitude fit
        keeps is chosen with :math:`\nu` by the same folds (``cv``;
        :func:`gfc`'s ``stopping``), so that a descent that went on fitting
        noise is cut back (``steps_``).  ``"eps"``: every step the descents
        made (the paper's stopping: training error improving by less than
        ``eps``, or ``max_steps``).  Cutting descents back lowers the test
        MSE on most of the shared sets and costs little where it does not.
    n_estimators : int >= 1, default 5
        Independent GFC fits averaged (above).  The first uses
        ``random_state`` as :func:`gfc`'s ``rng``, the others streams spawned
        from it; the guard averages the same number of fits on its 80 %.
    cv : int, splitter, list of (train, test) pairs or None, default 5
        Folds for :math:`\\nu` (ignored when ``nu`` is given): an int K is
        scikit-learn's unshuffled ``KFold(K)`` on the rows as given (at most
        one fold per row), a splitter's ``split(X, y)`` is used as it is;
        ``None`` draws :func:`gfc`'s random folds from ``random_state``.
    executor : None or int
        ``None`` serial, an int ``n_jobs`` a local process pool (see
        :func:`gfc`).  Keep it picklable so that ``clone``, ``pickle`` and
        ``GridSearchCV`` work: pass a live executor or Dask client to
        ``fit(..., executor=...)`` instead, which is used for that fit only
        and never stored.
    fit_intercept : bool, default True
        Centre ``y`` by its (weighted) mean before :func:`gfc`; the intercept
        is that mean plus the bias amplitude, so shifting ``y`` shifts the
        predictions and nothing else.  The constructed features are not
        centred (GFC builds them inside its own solve).  ``False``: the
        paper's algorithm on ``y`` as given (the bias feature still fits an
        offset, penalised by ``nu``).
    clip_inputs : bool, default False
        Clip each input column of ``predict``'s ``X`` to the training box
        ``[input_min_, input_max_]`` (see ``RandomFeatureModel._clip_inputs``:
        far outside the training data a random-feature model extrapolates in
        no particular way).  Off by default, so that predictions are the model's.
    mean_guard : bool, default True
        The guard against predicting the mean (above); per output of a 2-d ``y``.
    verbose : int, default 0
        ``>= 1``: one line per greedy step (worker, step, elapsed seconds,
        training MSE, the step's validation objective) and per pass (the
        chosen :math:`\\nu` and its CV error) on stderr.
    random_state : None, int, Generator, RandomState or SeedSequence
        See :func:`rflite._core.random.check_rng` (a negative seed is an error).

    Attributes
    ----------
    result_ : GFCResult
        The first fit of the bag (a list over outputs for a 2-d ``y``).
    results_ : list of GFCResult
        Every fit of the bag (one list per output for a 2-d ``y``; a single
        intercept-only result where the guard chose the mean).
    weights_ : (L, d) ndarray
        Spectra of the constructed features (all fits and outputs stacked).
    nu_ : float or tuple of floats
        The amplitude penalty of each fit of the bag (a float for one fit; a
        list over outputs for a 2-d ``y``).
    steps_ : int, tuple of ints or None
        ``stopping="cv"``: the greedy steps per descent each fit kept (its
        last pass), as ``nu_``; None with ``"eps"``, a given ``nu`` or the
        guard's mean.
    cv_results_ : dict or None
        ``nu`` (the grid), ``mean_test_mse``, ``std_test_mse``,
        ``se_test_mse`` and ``fold_test_mse`` (n_folds x n_grid) of the
        choice of :math:`\\nu` (first fit of the first output; with
        ``stopping="cv"`` on the kept steps' features; None when ``nu`` was
        given or ``cv=None``).
    n_workers_, max_steps_ : int
        Descents run and their step limit after the small-sample caps.
    guarded_ : bool
        The guard chose the intercept-only model (a list over outputs of a
        2-d ``y``).
    guard_mse_ : tuple (gfc, mean) or None
        Held-out MSE of the guard's GFC fit and of the mean (lists over
        outputs of a 2-d ``y``; None when the guard did not run).
    feature_map_, support_, coef_, intercept_
        As in every rflite model.  A 2-d ``y`` runs one independent GFC per
        output; their features are stacked into one map and ``coef_`` is
        (2L, n_targets), zero where an output does not use a feature.
    n_features_in_, feature_names_in_
        Input width and data-frame column names.

    Examples
    --------
    >>> from rflite.datasets import make_friedman_gfc
    >>> X, y = make_friedman_gfc(2000, rng=0)
    >>> model = GFCRegressor(n_workers=2, max_steps=5, random_state=0).fit(X, y)
    >>> model.transform(X).shape[1] == 2 * model.weights_.shape[0]
    True
    """

    def __init__(self, *, n_passes=1, max_steps=20, n_workers=5, n_estimators=5, nu=None,
                 eta=None, eps=0.01, stopping="cv", n_folds=5, subsample=None, cv=5,
                 executor=None, fit_intercept=True, mean_guard=True, verbose=0,
                 random_state=None, clip_inputs=False):
        self.n_estimators = n_estimators
        self.stopping = stopping
        self.clip_inputs = clip_inputs
        self.mean_guard = mean_guard
        self.n_passes = n_passes
        self.max_steps = max_steps
        self.n_workers = n_workers
        self.nu = nu
        self.eta = eta
        self.eps = eps
        self.n_folds = n_folds
        self.subsample = subsample
        self.cv = cv
        self.executor = executor
        self.fit_intercept = fit_intercept
        self.verbose = verbose
        self.random_state = random_state

    def fit(self, X, y, sample_weight=None, *, executor=None):
        """Construct the features and fit their amplitudes; returns ``self``.

        ``executor`` (optional) overrides the constructor's for this fit
        only and is not stored (a live executor or Dask client belongs here).
        """
        from rflite._core.validation import check_sample_weight

        if is_dask_array(X):
            return self._fit_dask(X, y, sample_weight, executor=executor)
        X_raw, y_raw = X, y
        X, Y, w = self._validate_fit(X, y, sample_weight)
        if X.shape[0] < 2 and (w is None or w.sum() < 2):
            raise ValueError(f"X must have at least 2 samples (rows of positive weight) for "
                             f"GFCRegressor, got n_samples={X.shape[0]}")
        check_choice(self.stopping, "stopping", STOPPINGS)
        n_workers = check_int(self.n_workers, "n_workers", minimum=1)
        max_steps = check_int(self.max_steps, "max_steps", minimum=1)
        check_int(self.n_folds, "n_folds", minimum=2)
        # folds for nu on the rows as given (zero weights included), then
        # followed through the dropped, repeated and reordered rows
        splits = None
        if self.nu is None and self.cv is not None:
            X_arr, y_arr = np.asarray(X_raw), np.asarray(y_raw)
            n_raw = X_arr.shape[0]
            cv = self.cv
            if isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
                check_cv(cv)  # the error names cv
                cv = min(int(cv), n_raw)  # at most one fold per row
            splits = _check_splits(cv, X_arr, y_arr)
            w_raw = check_sample_weight(sample_weight, n_raw)
        X, Y = self._repeat_rows(X, Y, w)
        order = _canonical_order(X, Y)
        X, Y = np.ascontiguousarray(X[order]), Y[order]
        if splits is not None:
            splits = _follow_splits(splits, w_raw, order)
        m = X.shape[0]
        self.n_workers_ = min(n_workers, max(1, m // ROWS_PER_WORKER))
        size = m // self.n_workers_ if self.subsample is None else min(
            check_int(self.subsample, "subsample", minimum=1), m)
        self.max_steps_ = min(max_steps, max(1, size // ROWS_PER_STEP))
        _, Yc, _, y_mean = self._center_and_weight(None, Y, None)
        ex = self.executor if executor is None else executor
        guard = check_bool(self.mean_guard, "mean_guard") and m >= GUARD_MIN_ROWS
        n_estimators = check_int(self.n_estimators, "n_estimators", minimum=1)
        bags, guarded, guard_mse = [], [], []
        for k in range(Yc.shape[1]):
            if guard:
                mse = self._guard_errors(X, Yc[:, k], splits is not None, ex, n_estimators)
                guard_mse.append(mse)
                if mse[0] >= mse[1]:
                    # the constructed features lose to the mean on held-out rows
                    bags.append([_intercept_only(X.shape[1], Yc[:, k])])
                    guarded.append(True)
                    continue
            guarded.append(False)
            bags.append(_gfc_fits(
                X, Yc[:, k], _bag_rngs(self._rng(), n_estimators), n_passes=self.n_passes,
                max_steps=self.max_steps_, n_workers=self.n_workers_, nu=self.nu,
                eta=self.eta, eps=self.eps, n_folds=self.n_folds, subsample=self.subsample,
                cv=splits, nu_grid=NU_GRID_ESTIMATOR, init_scale=GFC_INIT_SCALE,
                stopping=self.stopping, executor=ex, verbose=self.verbose))
        return self._store(bags, guarded, guard, guard_mse, y_mean)

    def _store(self, bags, guarded, guard, guard_mse, y_mean):
        """Set the fitted attributes from one bag (a list of :class:`GFCResult`,
        averaged) per output (also the Dask fit)."""
        # stack every fit's features into one map: columns [cos(X W^T), sin(X W^T)]
        W = np.concatenate([r.weights for bag in bags for r in bag], axis=0)
        L = W.shape[0]
        supports, coefs = [], []
        start = 0
        for bag in bags:
            lk = sum(r.weights.shape[0] for r in bag)
            idx = np.arange(start, start + lk)
            supports.append(np.concatenate([idx, idx + L]))
            # the bag's model is the mean of its fits' models
            coefs.append(np.concatenate([r.coef_cos for r in bag] + [r.coef_sin for r in bag])
                         / len(bag))
            start += lk
        one = getattr(self, "_one_d", True)
        results = [bag[0] for bag in bags]
        self.result_ = results[0] if one else results
        self.results_ = bags[0] if one else bags
        self.weights_ = W
        nus = [bag[0].nu if len(bag) == 1 else tuple(r.nu for r in bag) for bag in bags]
        self.nu_ = nus[0] if one else nus
        steps = [None if bag[0].steps is None else bag[0].steps if len(bag) == 1
                 else tuple(r.steps for r in bag) for bag in bags]
        self.steps_ = steps[0] if one else steps
        self.guarded_ = guarded[0] if one else guarded
        self.guard_mse_ = None if not guard else (guard_mse[0] if one else guard_mse)
        self.cv_results_ = None
        if results[0].cv_mse is not None:
            S = results[0].cv_mse
            k = S.shape[0]
            self.cv_results_ = {
                "nu": NU_GRID_ESTIMATOR.copy(), "mean_test_mse": S.mean(axis=0),
                "std_test_mse": S.std(axis=0),
                "se_test_mse": S.std(axis=0, ddof=1) / np.sqrt(k) if k > 1 else
                np.zeros(S.shape[1]),
                "fold_test_mse": S,
            }
        intercepts = y_mean + np.array([np.mean([r.intercept for r in bag]) for bag in bags])
        self._finish(_fourier_map(W), supports, coefs, None, intercepts)
        # GFC's model keeps every constructed column (the bias carries the offset)
        return self

    def _guard_errors(self, X, y, use_cv, executor, n_estimators):
        """``(gfc, mean)`` held-out MSEs of the guard: the bag of GFC fits on 80 % of the rows."""
        from rflite._core.folds import holdout_split

        rng = self._rng()
        tr, va = holdout_split(X.shape[0], GUARD_FRACTION, rng)
        pred = np.zeros(va.size)
        for res in _gfc_fits(X[tr], y[tr], _bag_rngs(rng, n_estimators),
                             **self._guard_settings(tr.size, use_cv), executor=executor):
            a = np.concatenate([[res.intercept], res.coef_cos, res.coef_sin])
            pred += gfc_design(X[va], res.weights) @ a / n_estimators
        out = (float(np.mean((pred - y[va]) ** 2)), float(np.mean((y[tr].mean() - y[va]) ** 2)))
        self._report_guard(out)
        return out

    def _guard_settings(self, m, use_cv, nu=None, eps=None):
        """Keyword arguments of the guard's GFC fit on its ``m`` training rows (also on Dask)."""
        n_workers = min(self.n_workers_, max(1, m // ROWS_PER_WORKER))
        size = m // n_workers if self.subsample is None else min(int(self.subsample), m)
        return dict(n_passes=self.n_passes,
                    max_steps=min(self.max_steps_, max(1, size // ROWS_PER_STEP)),
                    n_workers=n_workers, nu=self.nu if nu is None else nu, eta=self.eta,
                    eps=self.eps if eps is None else eps, n_folds=self.n_folds,
                    subsample=None if self.subsample is None else size,
                    cv=min(5, m) if use_cv else None, nu_grid=NU_GRID_ESTIMATOR,
                    init_scale=GFC_INIT_SCALE, stopping=self.stopping)

    def _report_guard(self, out):
        # the guard's own greedy steps are not printed: one summary line
        Progress(self.verbose, "GFC").line(
            f"mean guard: held-out MSE {out[0]:.4g}, mean's {out[1]:.4g}"
            + (" -> intercept only" if out[0] >= out[1] else ""))

    def transform(self, X):
        """Constructed features ``[cos(X W^T), sin(X W^T)]`` (m x 2L), without the bias.

        A row-chunked :class:`dask.array.Array` ``X`` gives a lazy Dask array
        with its row chunks (as :meth:`predict` does), each chunk the
        in-memory transform of its rows.
        """
        self._check_fitted()
        if is_dask_array(X):
            return dask_backend().transform(self, X, self.feature_map_.n_columns)
        return self._transform_chunk(X)

    def _transform_chunk(self, X, n_threads=None):
        return self.feature_map_.transform(self._validate_predict(X), n_threads=n_threads)

    def fit_transform(self, X, y) -> np.ndarray:
        """``fit(X, y).transform(X)``."""
        return self.fit(X, y).transform(X)

    def __sklearn_tags__(self):
        # a regressor that is also a transformer (its constructed features)
        from sklearn.utils import TransformerTags

        tags = super().__sklearn_tags__()
        tags.transformer_tags = TransformerTags()
        return tags


# ------------------------------------------------------------------ private
def _intercept_only(d, y) -> GFCResult:
    """The guard's model: no features, the mean of ``y`` as intercept."""
    empty = np.zeros(0)
    return GFCResult(weights=np.zeros((0, d)), intercept=float(y.mean()), coef_cos=empty,
                     coef_sin=empty, nu=float("nan"), n_constructed=0, n_pruned=0,
                     train_rmse=float(np.sqrt(np.mean((y - y.mean()) ** 2))), cv_mse=None)


def _bag_rngs(rng, n) -> list:
    """Generators of a bag's ``n`` fits: ``rng`` itself for the first (so one fit is
    :func:`gfc` with ``rng``) and streams spawned from a copy of it for the others
    (``rng`` is not advanced by the spawning)."""
    if n == 1:
        return [rng]
    twin = np.random.Generator(copy.deepcopy(rng.bit_generator))
    return [rng] + spawn_streams(twin, n - 1)


def _follow_splits(splits, w, order):
    """``(train, test)`` pairs over the given rows, mapped to the fitted rows.

    The fit drops zero-weight rows, repeats a row of weight k k times
    (adjacent) and then reorders the rows by ``order``; each copy of a row
    stays in its row's part.  Folds left with an empty part are dropped.
    """
    n = len(w) if w is not None else None
    if w is None:
        owner = np.arange(order.size)
    else:
        keep = w > 0
        reps = np.rint(w[keep]).astype(np.int64)
        owner = np.repeat(np.flatnonzero(keep), reps)  # given row of every repeated row
    owner = owner[order]  # given row of every fitted row
    out = []
    for train, test in splits:
        tr = np.flatnonzero(np.isin(owner, train))
        te = np.flatnonzero(np.isin(owner, test))
        if tr.size and te.size:
            out.append((tr, te))
    if not out:
        raise ValueError(f"cv: no fold keeps rows of positive weight on both sides "
                         f"({n if n is not None else order.size} rows)")
    return out


def _rff_cv_task(task) -> np.ndarray:
    """CV errors over the ``nus`` of one bandwidth (module level, for executors)."""
    X, y, W, nus, folds = task
    return ridge_cv(gfc_design(X, W), y, nus, folds)


def _spectral_sample(measure, rng, size):
    if measure == "gaussian":
        return rng.standard_normal(size)
    if measure == "laplace":
        return rng.laplace(0.0, 1.0, size)
    return rng.standard_cauchy(size)


def _fourier_map(weights) -> FeatureMap:
    L, d = weights.shape
    supports = np.tile(np.arange(d, dtype=np.int64), (L, 1))
    return FeatureMap(supports, weights, np.zeros(L), "fourier", d)


def _best_nu(A, y, nus, folds) -> float:
    return float(nus[np.argmin(ridge_cv(A, y, nus, folds))])


def _warmup():
    """Compile the kernels (one signature each)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 2))
    y = rng.standard_normal(20)
    hyper_objective(X, y, np.ones(20), np.ones(2), 1e-3, fold_ids(20, 2, 0))
    _ridge_step(X, y, np.ones(20), np.ones(2), 1e-3)
