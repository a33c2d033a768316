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

The descents live in :mod:`rflite._gfc.descent`, the passes of a fit in
:mod:`rflite._gfc.passes`, the amplitude fit (with :func:`gfc_design` and
:func:`ridge_cv`) in :mod:`rflite._gfc.amplitudes` and the estimator's fit in
:mod:`rflite._gfc.estimator`; this module re-exports their public names.
"""

from __future__ import annotations

import copy
import numbers

from typing import NamedTuple

import numpy as np

from rflite._base import RandomFeatureModel
from rflite._core.backend import dask_backend, is_dask_array
from rflite._core.folds import _canonical_order  # noqa: F401 - re-exported
from rflite._core.linalg import ridge_solve
from rflite._core.parallel import check_executor, map_tasks
from rflite._core.progress import Progress
from rflite._core.random import check_rng
from rflite._core.validation import (MAX_ABS, check_array, check_bool, check_choice, check_int,
                                     check_real, check_X_y)
from rflite._gfc.amplitudes import (  # noqa: F401 - the public names and the fit's steps re-exported
    NU_GRID, NU_RULE, _amplitude_fit, _best_nu, _choose_nu, _choose_steps_nu, _fourier_map,
    _kept_columns, _prefix_columns, _ridge_cv_prefixes, _ridge_cv_splits, _step_index,
    gfc_design, ridge_cv,
)
from rflite._gfc.descent import (  # noqa: F401 - the result type, fold_ids and constants re-exported
    LAM_BOUNDS, LAM_INIT, LBFGS_MAXITER, DescentResult, _check_folds, _descent_task,
    _DescentTask, _greedy_descent, fold_ids, kernel_input,
)
from rflite._gfc.estimator import (  # noqa: F401 - the estimator's defaults re-exported
    GFC_INIT_SCALE, GUARD_FRACTION, GUARD_MIN_ROWS, NU_GRID_ESTIMATOR, ROWS_PER_STEP,
    ROWS_PER_WORKER, TARGET_GRID_BITS, _fit_gfc, _follow_splits, _guard_errors,
    _guard_settings, _store_bags,
)
from rflite._gfc.kernels import _hyper_objective, _ridge_step
from rflite._gfc.passes import (  # noqa: F401 - the result type, the passes re-exported
    ETA_RELATIVE, STOPPINGS, GFCResult, _bag_rngs, _check_splits, _draw_samples, _gfc_fits,
    _GFCRun, _intercept_only, _lock_step,
)
from rflite._core.naming import publish
from rflite.features import FeatureMap

publish(__name__, DescentResult, fold_ids, GFCResult, gfc_design, ridge_cv)

__all__ = [
    "LAM_INIT", "LAM_BOUNDS", "LBFGS_MAXITER", "NU_GRID", "BANDWIDTHS", "ETA_RELATIVE",
    "ROWS_PER_WORKER", "ROWS_PER_STEP", "GFC_INIT_SCALE", "NU_GRID_ESTIMATOR",
    "TARGET_GRID_BITS", "MEASURES", "STOPPINGS", "HyperObjective", "DescentResult", "GFCResult",
    "RFFResult", "hyper_objective", "fold_ids", "greedy_descent", "gfc", "gfc_design",
    "ridge_cv", "rff_ridge_cv", "GFCRegressor",
]

#: Bandwidths :math:`\sigma` of the random-Fourier baselines, frequencies
#: :math:`\omega = \omega_0 / \sigma` (Appendix C.2).
BANDWIDTHS = np.logspace(-3, 2, 10)

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
    value, grad = _hyper_objective(kernel_input(X), kernel_input(y), kernel_input(f),
                                   kernel_input(w), lam, folds, k)
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
       \eta` (at least one is kept) and set :math:`f` to the current model (the
       remaining amplitudes are not refitted, as in the paper).

    The descents are tasks for ``executor`` with per-task seeds from
    :class:`numpy.random.SeedSequence` ``spawn`` and subsamples drawn here, so
    the result is bit-identical whatever executor runs them.

    ``y`` is used as given, and the fit depends on its units: each greedy
    step penalises the weight of the current model (no unit) and the new
    feature's amplitudes (units of ``y``) with one :math:`\lambda`, searched
    from :data:`LAM_INIT` within :data:`LAM_BOUNDS`.  :class:`GFCRegressor`
    runs it on targets divided by their scale, which makes its model of
    :math:`c\,y` (:math:`c > 0`) :math:`c` times its model of ``y``.

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
    r"""Greedy feature construction regressor (Oglic and Gaertner 2016, Algorithm 2).

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
    the order of the rows and ``sample_weight`` gives the repeated rows (each
    row repeated by the smallest integers in the weights' proportions, so
    ``c * sample_weight`` is the same fit; zero drops a row; weights in no
    integer proportion raise ``ValueError``).  The whole fit has both
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
    One fit's test error varies with the seed as much as between methods,
    because every spectrum is fitted on a subsample of ``m / n_workers``
    rows; the mean of five fits with independent seeds has a fifth of the
    seed's share of that variance, for five times the cost (the
    ``defaults-real`` and ``compare`` experiments measure the default
    against scikit-learn's ``RidgeCV`` on the shared real sets).  The model
    keeps every fit's features (five times as many columns) with its
    amplitudes divided by five; it costs five fits (and
    five in the guard), which run in lock step: each pass's descents of all
    the fits are one batch for ``executor`` (:func:`_gfc_fits`).
    ``n_estimators=1`` is one fit.

    The guard against the mean (``mean_guard=True``, the default): the
    cross-validation of :math:`\\nu` scores features that were constructed on
    every row, so it cannot tell when the constructed features fit noise
    (on ``load_uci("insulin")`` GFC scored 1.14 x the test MSE of predicting
    the mean).  So ``fit`` first runs the same GFC on a random 80 % of the
    rows (:data:`GUARD_FRACTION` held out, drawn from ``random_state``) and,
    unless its held-out errors beat those of the training rows' mean by more
    than one standard error of the paired difference
    (:func:`rflite._core.selection.beats_mean`), fits the intercept-only
    model (no features, ``guarded_`` True); otherwise it fits on all rows as
    below.  It costs one more GFC fit on 80 % of the rows and runs when the
    hold-out has at least :data:`~rflite._core.selection.MIN_HOLDOUT_ROWS`
    rows (after integer weights are expanded).  On fewer rows the fit on all
    rows is made first and then cross-validated as a whole against the mean
    on five folds (nested cross-validation,
    :meth:`rflite._base.RandomFeatureModel._check_against_mean`, five more
    fits on 80 % of the rows); an output that loses becomes the mean
    (``guarded_`` True).  On Dask arrays the hold-out guard runs from
    :data:`GUARD_MIN_ROWS` rows on, with the plain comparison of the two
    errors.
    ``mean_guard=False`` (what :func:`gfc` does) skips it.

    The units of ``y``: every GFC fit (the guard's too) works on the
    targets of one output, centred when ``fit_intercept``, divided by their
    scale :math:`\\sigma`, their root mean square (once centred, the weighted
    standard deviation of ``y``; 1 when every target is 0), and rounded to
    multiples of :math:`2^{-24}` (:data:`TARGET_GRID_BITS`): :math:`z_i =
    \\mathrm{round}(2^{24} (y_i - \\bar y) / \\sigma) / 2^{24}`.  The fitted
    amplitudes and bias amplitude are multiplied back by :math:`\\sigma`
    (the intercept is :math:`\\bar y + \\sigma a_0`), the errors by
    :math:`\\sigma^2`.  So every tolerance of the fit is relative to the
    scale of ``y``, and the model of :math:`c\\,y` for any :math:`c > 0` is
    :math:`c` times the model of ``y``: the same spectra, ``nu_`` and
    ``steps_``, and the predictions to rounding (on Dask as in memory).  On
    ``y`` as given (what :func:`gfc` does) that fails because a greedy step
    penalises the weight :math:`c_0` of the current model :math:`f`, which
    has no unit, and the new feature's amplitudes :math:`c_1, c_2`, in units
    of ``y``, with one :math:`\\lambda` (:func:`hyper_objective`) searched
    from :data:`LAM_INIT` within :data:`LAM_BOUNDS`, fixed numbers: the
    spectra found depend on the units.  The grid is there because the
    descents amplify a change in the last bits of their targets as much as a
    change of seed, and :math:`c\\,y / \\sigma(c\\,y)` differs from
    :math:`y / \\sigma(y)` in such bits; on the grid they are equal, but for
    a target within rounding of the midpoint between two grid points (odds
    of about :math:`10^{-8}` per row).  The rounding moves a target by at
    most :math:`2^{-25} \\sigma`, far below what the fit resolves; the
    training and CV errors (``train_rmse``, ``cv_results_``) are those
    against the rounded targets.  :math:`\\nu` (a penalty on the amplitudes
    of the columns ``[1, cos, sin]``, which have no unit, against a squared
    error in the same units as those amplitudes) and ``eps`` (a relative
    improvement) have no unit; ``eta`` is an amplitude in units of ``y``
    (the fit compares :math:`\\eta / \\sigma` with its amplitudes).

    A row-chunked Dask ``X`` fits on the cluster (:mod:`rflite._dask.gfc`:
    every descent a Dask task on its subsample, the amplitudes from one pass
    of per-fold Gram sums; no ``sample_weight`` or ``executor`` there).

    Reproducing the paper: :func:`gfc` with its defaults (the experiments in
    :mod:`rflite.experiments.gfc` call it); this class equals
    ``gfc(X, z, nu_grid=NU_GRID_ESTIMATOR, init_scale=GFC_INIT_SCALE, stopping="cv", ...)``
    on the scaled targets ``z`` (above) and the rows in canonical order, its
    amplitudes, bias amplitude and errors multiplied back by :math:`\\sigma`
    (:math:`\\sigma^2`), when ``n_estimators=1``, ``cv=None`` and
    ``mean_guard=False`` (or when the guard keeps the features).

    Parameters
    ----------
    n_passes, max_steps, n_workers, nu, eta, eps, n_folds, subsample
        See :func:`gfc`; ``n_workers`` and ``max_steps`` are upper limits
        (above).  ``eta`` is in units of ``y``; ``nu`` and ``eps`` have none
        (above: the units of ``y``).
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
        :func:`gfc`), or a live executor or Dask client.  A live one is not
        part of the model's state: ``clone`` and ``copy.deepcopy`` share it,
        ``pickle`` leaves it out (the unpickled model has ``executor=None``).
        ``fit(..., executor=...)`` uses one for that fit only.
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
        chosen :math:`\\nu` and its CV error) on stderr; these errors are
        those of the scaled targets (in units of :math:`\\sigma^2`), the
        guard's line is in units of ``y**2``.
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

    _weights_as_rows = True

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

    def _live_executor(self) -> bool:
        """Whether ``executor`` is a live object (a pool or client), not None or an int."""
        return self.executor is not None and not isinstance(self.executor, numbers.Integral)

    def __getstate__(self):
        # a live executor (locks, processes, sockets) is not part of the state
        state = self.__dict__.copy()
        if self._live_executor():
            state["executor"] = None
        return state

    def __deepcopy__(self, memo):
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        for key, value in self.__dict__.items():  # the copy shares the executor
            setattr(new, key, value if key == "executor" else copy.deepcopy(value, memo))
        return new

    def __sklearn_clone__(self):
        params = self.get_params(deep=False)
        executor = params.pop("executor")
        return type(self)(executor=executor, **copy.deepcopy(params))

    def fit(self, X, y, sample_weight=None, *, executor=None):
        """Construct the features and fit their amplitudes; returns ``self``.

        ``executor`` (optional) overrides the constructor's for this fit
        only and is not stored (a live executor or Dask client belongs here).
        """
        _fit_gfc(self, X, y, sample_weight, executor=executor)
        if check_bool(self.mean_guard, "mean_guard") and check_bool(self.fit_intercept,
                                                                    "fit_intercept"):
            # fewer than MIN_HOLDOUT_ROWS rows for the guard's hold-out: the
            # whole fit is cross-validated against the mean instead
            lose = self._check_against_mean(X, y, sample_weight, GUARD_FRACTION)
            if lose is not None and lose.any():
                Progress(self.verbose, "GFC").line(
                    "mean guard: the fit loses to the mean on 5 folds -> intercept only")
                guarded = np.atleast_1d(self.guarded_) | lose
                self.guarded_ = bool(guarded[0]) if getattr(self, "_one_d", True) \
                    else [bool(g) for g in guarded]
        return self

    def _store(self, bags, guarded, guard, guard_mse, y_mean):
        """Set the fitted attributes from one bag of :class:`GFCResult` per output
        (also the Dask fit); returns ``self``."""
        return _store_bags(self, bags, guarded, guard, guard_mse, y_mean)

    def _guard_settings(self, m, use_cv, *, scale, nu=None, eps=None):
        """Keyword arguments of the guard's GFC fit on its ``m`` training rows (also on Dask),
        whose targets are divided by ``scale``."""
        return _guard_settings(self, m, use_cv, scale=scale, nu=nu, eps=eps)

    def _report_guard(self, out, keep=None):
        # the guard's own greedy steps are not printed: one summary line
        keep = out[0] < out[1] if keep is None else keep
        Progress(self.verbose, "GFC").line(
            f"mean guard: held-out MSE {out[0]:.4g}, mean's {out[1]:.4g}"
            + ("" if keep else " -> intercept only"))

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


def _warmup():
    """Compile the kernels (one signature each)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 2))
    y = rng.standard_normal(20)
    hyper_objective(X, y, np.ones(20), np.ones(2), 1e-3, fold_ids(20, 2, 0))
    _ridge_step(X, y, np.ones(20), np.ones(2), 1e-3)
