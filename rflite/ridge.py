r"""Plain random-feature ridge regression: the baseline every sparse model is compared with.

.. math::

    \min_{c \in \mathbb{R}^N} \; \|A c - y\|_2^2 + m \lambda \|c\|_2^2,
    \qquad A = \sigma(X W^T + b),

with dense or q-sparse random weights (Rahimi and Recht 2008; with q-sparse
weights, the dictionary of HARFE, Saha et al. 2023).  ``lam`` is
:math:`\lambda` (it is multiplied by ``m`` internally).

Choosing ``lam`` from the data
------------------------------
``lam="auto"`` (the default of :class:`RandomFeatureRidge`) and
:class:`RandomFeatureRidgeCV` score every ``lam`` of a grid on K folds from
**one eigendecomposition per fold**: with the centred, weighted training
features :math:`\tilde A = U\,\mathrm{diag}(e)^{1/2} V^*`, the coefficients
at every shift are :math:`c(\lambda) = V\,\mathrm{diag}(1/(e + \lambda'))\,V^*
\tilde A^* \tilde y` (Gram matrix of size ``min(m, N)``), so the validation
predictions of the whole grid cost one product each.  The rule is
:func:`rflite._core.selection.choose`.

The weight scale is chosen in the same folds: ``scale="auto"`` (the default
with ``lam="auto"``) and :class:`RandomFeatureRidgeCV` multiply the drawn
weights by each factor of :data:`SCALE_GRID` (0.25, 0.5, 1, 2; a bandwidth
grid, :math:`\sigma(s\,Wx + b)` is the kernel of bandwidth :math:`1/s`) and
score the whole ``lam`` grid of every factor from one eigendecomposition per
fold and factor, choosing the pair ``(scale_, lam_)`` by the same rule.  The
N(0, 1) weights suit some sets and not others: on ``load_uci("ccpp")`` even
the best ``lam`` leaves them at 1.2 x ``RidgeCV`` while a quarter of the
scale gives 0.95 x; on ``housing`` the quarter scale is 1.1-1.8 x.

The default folds (``cv=None``) are :func:`row_folds`: K folds over the
*distinct rows* of ``X`` (identical rows always land in the same fold), so
that integer ``sample_weight`` equals repeated rows for the choice too.  An
int ``cv`` is scikit-learn's unshuffled ``KFold``.
"""

from __future__ import annotations

import functools
import numbers

import numpy as np

from rflite._core.backend import is_dask_array
from rflite._base import RandomFeatureModel
from rflite._core.selection import CVSearch, choose, cross_validate_grid
from rflite._core.progress import Progress
from rflite._core.folds import SplitList, cv_splits
from rflite._core.blas import blas_threads
from rflite._core.validation import check_int, check_real
from rflite._core.random import check_rng
from rflite._core.linalg import ridge_fit, shifted_eigenvalues
from rflite._core.folds import (  # noqa: F401 - public here
    DEFAULT_FOLDS, grouped_splits, kept_rows, resolve_splits, row_folds)
from rflite._core.selection import check_grid, fold_baseline  # noqa: F401 - public here

__all__ = ["RandomFeatureRidge", "RandomFeatureRidgeCV", "LAMBDA_GRID", "SCALE_GRID",
           "row_folds", "scaled_map", "stacked_map"]

#: Default grid of ``lam`` (penalty ``m * lam``) for ``lam="auto"`` and
#: :class:`RandomFeatureRidgeCV`, largest (simplest model) first.
LAMBDA_GRID = tuple(np.logspace(1, -10, 23))

#: Default factors of the weight scale searched with ``lam`` (``scale="auto"`` /
#: :class:`RandomFeatureRidgeCV`), smallest (smoothest features) first so that
#: ties go to the smoother model.
SCALE_GRID = (0.25, 0.5, 1.0, 2.0)


# --------------------------------------------------------------- fold scores
def _ridge_grid_predict(A_tr, Y_tr, w_tr, A_te, shifts, fit_intercept):
    """Validation predictions (n_grid, n_test, n_targets) at every shift from one eigh."""
    if fit_intercept:
        mu = A_tr.mean(axis=0) if w_tr is None else (w_tr @ A_tr) / w_tr.sum()
        ym = Y_tr.mean(axis=0) if w_tr is None else (w_tr @ Y_tr) / w_tr.sum()
        A_tr = A_tr - mu
        A_te = A_te - mu
        Y_tr = Y_tr - ym
    else:
        ym = np.zeros(Y_tr.shape[1])
    if w_tr is not None:
        sw = np.sqrt(w_tr)[:, None]
        A_tr = A_tr * sw
        Y_tr = Y_tr * sw
    AH = A_tr.conj().T
    m, n = A_tr.shape
    if n <= m:
        e, V = np.linalg.eigh(AH @ A_tr)
        b = V.conj().T @ (AH @ Y_tr)
        P = A_te @ V
    else:
        e, U = np.linalg.eigh(A_tr @ AH)
        b = U.conj().T @ Y_tr
        P = A_te @ (AH @ U)
    e = np.maximum(e.real, 0.0)
    out = np.empty((len(shifts), A_te.shape[0], Y_tr.shape[1]))
    for k, sh in enumerate(shifts):
        pred = P @ (b / shifted_eigenvalues(e, sh)[:, None])
        out[k] = pred.real + ym
    return out


def _ridge_fold_scores(train, test, A, Y, w, lams, fit_intercept):
    """Validation MSE of every ``lam`` on one fold (module level: picklable)."""
    from rflite._core.selection import weighted_mse

    w_tr = None if w is None else w[train]
    total = train.size if w_tr is None else float(w_tr.sum())
    # many small eigendecompositions: BLAS threads cost more than they give
    # (on a busy machine a small threaded eigh waits far longer than it computes)
    with blas_threads(1):
        preds = _ridge_grid_predict(A[train], Y[train], w_tr, A[test],
                                    [total * lam for lam in lams], fit_intercept)
    w_te = None if w is None else w[test]
    # grid-major, one error per output: each output gets its own choice
    return [weighted_mse(Y[test, t], p[:, t], w_te) for p in preds for t in range(Y.shape[1])]


def choose_per_output(scores, n_grid, Y, w, splits, rule, *, against_mean=False):
    """Per-output choices from fold scores laid out grid-major (n_folds, n_grid * n_targets).

    Returns ``(S, choices)`` with ``S`` of shape (n_folds, n_grid, n_targets)
    and one :class:`rflite._core.selection.CVChoice` per output (each output of a 2-d
    ``y`` is an independent fit, so it gets its own regularisation, as
    scikit-learn's ``RidgeCV(alpha_per_target=True)``).  ``against_mean``:
    each choice also says whether its point loses to the training mean
    (``use_mean``, :func:`rflite._core.selection.beats_mean` on the folds).
    """
    T = Y.shape[1]
    S = np.asarray(scores, dtype=float).reshape(len(splits), n_grid, T)
    base = np.array([[fold_baseline(Y[:, [t]], w, tr, te) for t in range(T)]
                     for tr, te in splits])
    return S, [choose(S[:, :, t], rule=rule, baseline=base[:, t], against_mean=against_mean)
               for t in range(T)]


def cv_results_per_output(grid: dict, S, choices) -> dict:
    """:func:`cv_results` for one output; with several, each entry gets a trailing output axis."""
    if S.shape[2] == 1:
        return cv_results(grid, S[:, :, 0], choices[0])
    per = [cv_results(grid, S[:, :, t], c) for t, c in enumerate(choices)]
    res = {k: np.asarray(v) for k, v in grid.items()}
    for key in per[0]:
        if key not in grid:
            res[key] = np.stack([r[key] for r in per], axis=-1)
    return res


def select_lambda(A, Y, w, lams, splits, *, fit_intercept, rule="min", n_jobs=None,
                  progress=None, against_mean=False):
    """``(S, choices)`` of the ridge grid ``lams`` over ``splits`` (:func:`choose_per_output`)."""
    func = functools.partial(_ridge_fold_scores, A=A, Y=Y, w=w, lams=list(lams),
                             fit_intercept=fit_intercept)
    scores = cross_validate_grid(func, splits, n_jobs=n_jobs, progress=progress)
    return choose_per_output(scores, len(lams), Y, w, splits, rule, against_mean=against_mean)


def scaled_map(fmap, factor):
    """``fmap`` with every weight multiplied by ``factor`` (same supports and bias)."""
    from rflite.features import FeatureMap

    if factor == 1.0:
        return fmap
    return FeatureMap(fmap.supports, fmap.values * factor, fmap.bias, fmap.activation,
                      fmap.n_inputs)


def select_scale_and_lambda(fmap, X, Y, w, scales, lams, splits, *, fit_intercept,
                            rule="min", n_jobs=None, progress=None, against_mean=False):
    """Joint ``(scale, lam)`` choice per output: ``(S, choices)`` (:func:`choose_per_output`).

    The grid is scale-major (``len(scales) * len(lams)`` points, index
    ``i * len(lams) + j``); each factor's features are formed once and every
    fold scores all of its ``lams`` from one eigendecomposition
    (:func:`_ridge_fold_scores`).  Each output of a 2-d ``y`` gets its own
    pair, as its 1-d fit would (:func:`stacked_map` holds their features).
    """
    blocks = []
    for factor in scales:
        A = scaled_map(fmap, float(factor)).transform(X)
        func = functools.partial(_ridge_fold_scores, A=A, Y=Y, w=w, lams=list(lams),
                                 fit_intercept=fit_intercept)
        blocks.append(np.asarray(cross_validate_grid(func, splits, n_jobs=n_jobs,
                                                     progress=progress), dtype=float))
        del A
    n_lam = len(lams)
    return choose_per_output(np.concatenate(blocks, axis=1), len(scales) * n_lam, Y, w,
                             splits, rule, against_mean=against_mean)


def stacked_map(fmap, factors):
    """One map holding ``fmap`` scaled by each of ``factors`` (blocks in that order).

    Returns ``(map, columns)`` with ``columns[b]`` the columns of block ``b``
    (``"fourier"`` maps put every cosine before every sine).
    """
    from rflite.features import FeatureMap

    if len(factors) == 1:
        one = scaled_map(fmap, factors[0])
        return one, [np.arange(one.n_columns)]
    K, n = len(factors), fmap.n_features
    big = FeatureMap(np.vstack([fmap.supports] * K),
                     np.vstack([fmap.values * f for f in factors]),
                     np.concatenate([fmap.bias] * K), fmap.activation, fmap.n_inputs)
    cols = []
    for b in range(K):
        idx = b * n + np.arange(n)
        cols.append(np.concatenate([idx, K * n + idx]) if big.n_columns == 2 * K * n else idx)
    return big, cols


def cv_results(grid: dict, scores, choice) -> dict:
    """``cv_results_``: the grid, mean / std / standard error and the per-fold errors."""
    res = {k: np.asarray(v) for k, v in grid.items()}
    res["mean_test_mse"] = choice.mean
    finite = np.all(np.isfinite(scores), axis=0)
    res["std_test_mse"] = np.where(finite, np.where(finite, scores, 0.0).std(axis=0), np.inf)
    res["se_test_mse"] = choice.se
    for k, row in enumerate(scores):
        res[f"split{k}_test_mse"] = row
    res["rank_test_mse"] = np.argsort(np.argsort(choice.mean, kind="stable"),
                                      kind="stable") + 1
    return res


# ------------------------------------------------------------------ estimators
class RandomFeatureRidge(RandomFeatureModel):
    r"""Ridge regression on all N random features (no sparsity).

    Parameters
    ----------
    n_features : int, default 1000
        Number of random features N.
    lam : float or "auto", default "auto"
        Ridge parameter :math:`\lambda >= 0` (the penalty is ``m * lam``).
        ``"auto"`` chooses it from the data: 5-fold cross-validation over
        :data:`LAMBDA_GRID` (1e1 ... 1e-10) with the folds of
        :func:`row_folds` (drawn from ``random_state`` after the features)
        and the ``"min"`` rule, each fold scoring the whole grid from one
        eigendecomposition (module notes); the choice is ``lam_``.  With
        ``fit_intercept`` the chosen point must then beat predicting the
        training mean by more than one standard error of the paired
        difference of their fold errors
        (:func:`rflite._core.selection.beats_mean`), else the model is that
        mean (``mean_model_``, no columns).
        :class:`RandomFeatureRidgeCV` is the same with its own grid and
        ``cv``.  To reproduce a paper setting pass the float, e.g.
        ``RandomFeatureRidge(n, lam=1e-3, q=None, fit_intercept=False)``.
    scale : float or "auto", default "auto"
        Factor multiplying every drawn weight (features
        :math:`\sigma(s\,Wx + b)`: ``1/s`` is the kernel's bandwidth).
        ``"auto"`` with ``lam="auto"`` chooses it jointly with ``lam`` in the
        same folds from :data:`SCALE_GRID` (0.25, 0.5, 1, 2; one
        eigendecomposition per fold and factor, module notes); with a float
        ``lam`` it is 1 (no search, the paper settings).  The choice is
        ``scale_``; ``scale=1.0`` keeps the weights as drawn.  Dask input
        (:mod:`rflite._dask.backend`) makes the same search on the same folds,
        one pass of fold statistics per factor.
    q : int or None, default 2
        Nonzeros per weight vector (None: dense).  Dense N(0, 1) weights on
        more than a few standardised inputs give features of very high
        frequency (test MSE 0.86 on ``load_uci("airfoil", rng=0)`` vs 0.47
        with q = 2 at ``scale=1``; 0.60 vs 0.43 with ``scale="auto"``),
        hence the default 2 (HARFE's dictionary).
    distribution, bias, activation, subsets
        See :func:`rflite.features.random_feature_map`.
    fit_intercept : bool, default True
        Centre ``y`` and the feature columns (weighted means) before the
        solve and recover the intercept exactly as
        :math:`c_0 = \bar y - \bar a^T c` (the penalty leaves it out).
    clip_inputs : bool, default False
        Clip each input column of ``predict``'s ``X`` to the training box
        ``[input_min_, input_max_]`` (see ``RandomFeatureModel._clip_inputs``:
        far outside the training data a random-feature model extrapolates in
        no particular way).  Off by default, so that predictions are the model's.
    random_state : None, int, Generator, RandomState or SeedSequence
        See :func:`rflite._core.random.check_rng` (a negative seed is an error).
    verbose : bool or int, default False
        ``lam="auto"``: one line per fold on stderr (:class:`rflite._core.progress.Progress`).

    Attributes
    ----------
    feature_map_, support_, coef_, intercept_
        ``coef_`` is (N,) for a 1-d ``y`` and (N, n_targets) for a 2-d one
        (the outputs are independent fits; with one ``lam`` for all of them,
        one solve with n_targets right-hand sides).
    lam_ : float or ndarray (n_targets,)
        The ``lam`` used (the chosen one for ``"auto"``; with a 2-d ``y``
        one per output, each chosen on its own validation errors, since the
        outputs are independent fits).
    scale_ : float or ndarray (n_targets,)
        The weight factor used (``feature_map_`` holds the scaled weights).
        With a 2-d ``y`` one per output, each chosen as its 1-d fit would;
        outputs choosing different factors get a block each in
        ``feature_map_`` (:func:`stacked_map`), ``coef_`` zero off an
        output's block.
    cv_results_ : dict
        ``lam="auto"`` only: see :class:`RandomFeatureRidgeCV`.
    mean_model_ : bool or ndarray of bool (n_targets,)
        True for an output whose ``lam="auto"`` choice lost to the training
        mean (its coefficients are zero, its intercept the mean).
    n_features_in_, feature_names_in_, q_
        As in scikit-learn; ``q`` clipped to the number of inputs.

    Notes
    -----
    ``sample_weight`` minimises :math:`\sum_i w_i (a_i^T c + c_0 - y_i)^2 +
    \lambda (\sum_i w_i) \|c\|^2` (rows scaled by :math:`\sqrt{w_i}`, the
    penalty scaled by :math:`\sum w` instead of m), so integer weights equal
    repeated rows (also for ``"auto"``: folds over distinct rows, weighted
    validation errors) and a zero weight equals a dropped row.

    Examples
    --------
    >>> from rflite.datasets import make_friedman1
    >>> X, y = make_friedman1(200, d=20, rng=0)
    >>> model = RandomFeatureRidge(n_features=500, q=2, lam=1e-3, random_state=0).fit(X, y)
    >>> model.n_nonzero_
    500
    """

    def __init__(self, n_features=1000, *, lam="auto", scale="auto", q=2, distribution="normal",
                 bias="uniform", activation="sin", subsets="random", fit_intercept=True,
                 random_state=None, verbose=False, clip_inputs=False):
        self.clip_inputs = clip_inputs
        self.n_features = n_features
        self.lam = lam
        self.scale = scale
        self.q = q
        self.distribution = distribution
        self.bias = bias
        self.activation = activation
        self.subsets = subsets
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.verbose = verbose

    def _fit_workspace(self, m, n_columns, itemsize, dense):
        """Bytes a fit needs beyond the feature matrix (for ``_check_feature_memory``).

        :func:`rflite._core.linalg.ridge_fit` forms the ``min(m, N)`` square
        Gram matrix and :func:`~rflite._core.linalg.ridge_solve` one copy of it
        to factorise; the vectors are negligible but counted.  The ``"auto"``
        choice adds a centred copy of the training rows and the fold's
        eigenvectors.
        """
        k = min(m, n_columns)
        work = 2 * k * k * itemsize + 4 * (m + n_columns) * itemsize
        if self._grid() is not None:
            work += m * n_columns * itemsize + 2 * k * k * itemsize
        return work

    # the grid and folds of the automatic choice (RandomFeatureRidgeCV overrides)
    def _grid(self):
        return LAMBDA_GRID if isinstance(self.lam, str) and self.lam == "auto" else None

    def _cv(self):
        return None

    def _scales(self):
        """Factors to search with ``lam`` (a 1-d array), or one fixed factor (a float)."""
        if isinstance(self.scale, str):
            if self.scale != "auto":
                raise ValueError(f"scale must be a float > 0 or 'auto', got {self.scale!r}")
            return SCALE_GRID if self._grid() is not None else 1.0
        return check_real(self.scale, "scale", minimum=0.0, strict=True)

    def _checked_scales(self):
        """:meth:`_scales` validated: one float factor, or an ascending grid of factors > 0."""
        scales = self._scales()
        if isinstance(scales, float):
            return scales
        grid = check_grid(scales, "scales", order="ascending")
        if np.any(grid <= 0):
            raise ValueError(f"scales must be > 0, got {scales!r}")
        return grid

    def _rule(self):
        return "min"

    def _n_jobs(self):
        return None

    #: ``lam="auto"`` keeps the chosen point only when it beats the training
    #: mean on the folds (:func:`rflite._core.selection.beats_mean`);
    #: :class:`RandomFeatureRidgeCV` takes its choice as it is.
    _compare_with_mean = True

    def _progress_name(self):
        return type(self).__name__

    def _check_lam(self):
        if isinstance(self.lam, str):
            if self.lam != "auto":
                raise ValueError(f"lam must be a float >= 0 or 'auto', got {self.lam!r}")
            return None
        return check_real(self.lam, "lam", minimum=0.0)

    def fit(self, X, y, sample_weight=None):
        """Draw the features, choose ``lam`` if asked, solve the (weighted, centred) ridge problem.

        With ``lam="auto"`` on fewer than ``DEFAULT_FOLDS * MIN_HOLDOUT_ROWS``
        distinct rows the choice is then checked against the training mean
        by nested cross-validation
        (:meth:`rflite._base.RandomFeatureModel._check_against_mean`).
        """
        self._fit_once(X, y, sample_weight)
        if (self._compare_with_mean and self._grid() is not None and self.fit_intercept
                and not np.all(getattr(self, "mean_model_", True))):
            self._check_against_mean(X, y, sample_weight, 1.0 / DEFAULT_FOLDS)
        return self

    def _fit_once(self, X, y, sample_weight=None):
        """The fit of :meth:`fit` without the nested check against the mean."""
        if is_dask_array(X):
            return self._fit_dask(X, y, sample_weight)
        kept = kept_rows(sample_weight)
        X, Y, w = self._validate_fit(X, y, sample_weight)
        check_int(self.n_features, "n_features", minimum=1)
        grid = self._grid()
        lam = None if grid is not None else self._check_lam()
        scales = self._checked_scales()
        if grid is not None:
            from rflite._core.parallel import check_executor

            grid = check_grid(grid, "lams", order="descending")
            rule = self._rule()
            check_executor(self._n_jobs(), "n_jobs")
        progress = Progress(getattr(self, "verbose", False), self._progress_name())
        total = X.shape[0] if w is None else float(w.sum())
        for value in ([lam] if grid is None else [grid.max()]):
            if not np.isfinite(total * value):
                raise ValueError(f"lam={value:g} overflows float64 in the penalty m * lam "
                                 f"(m={total:g}); lam must be far smaller")
        self._check_feature_memory(*X.shape)
        rng = self._rng()
        fmap = self._draw_features(X.shape[1], rng)
        use_mean = [False] * Y.shape[1]
        if grid is not None:
            from rflite._core.validation import check_bool

            against = self._compare_with_mean and check_bool(self.fit_intercept,
                                                             "fit_intercept")
        if grid is not None and not isinstance(scales, float):
            splits = resolve_splits(self._cv(), X, Y, rng, kept=kept)
            S, choices = select_scale_and_lambda(
                fmap, X, Y, w, scales, grid, splits, rule=rule, n_jobs=self._n_jobs(),
                fit_intercept=check_bool(self.fit_intercept, "fit_intercept"),
                progress=progress if progress else None, against_mean=against)
            use_mean = [c.use_mean for c in choices]
            factors = [float(scales[c.index // grid.size]) for c in choices]
            lams = [float(grid[c.index % grid.size]) for c in choices]
            self.cv_results_ = cv_results_per_output(
                {"scale": np.repeat(scales, grid.size), "lam": np.tile(grid, scales.size)},
                S, choices)
            # outputs choosing different factors: one map with a block per factor
            distinct = sorted(set(factors))
            fmap, blocks = stacked_map(fmap, distinct)
            out_cols = [blocks[distinct.index(f)] for f in factors]
            A = fmap.transform(X)
            for t, c in enumerate(choices):
                progress.line(f"chose scale={factors[t]:.3g} lam={lams[t]:.3g}"
                              + (f" for output {t}" if len(lams) > 1 else ""),
                              error=float(c.mean[c.index]))
        elif grid is not None:
            factors = [scales] * Y.shape[1]
            fmap = scaled_map(fmap, scales)
            out_cols = None
            A = fmap.transform(X)
            splits = resolve_splits(self._cv(), X, Y, rng, kept=kept)
            S, choices = select_lambda(
                A, Y, w, grid, splits, rule=rule, n_jobs=self._n_jobs(),
                fit_intercept=check_bool(self.fit_intercept, "fit_intercept"),
                progress=progress if progress else None, against_mean=against)
            use_mean = [c.use_mean for c in choices]
            lams = [float(grid[c.index]) for c in choices]
            self.cv_results_ = cv_results_per_output({"lam": grid}, S, choices)
            for t, c in enumerate(choices):
                progress.line(f"chose lam={lams[t]:.3g}" + (f" for output {t}" if len(lams) > 1
                                                              else ""),
                              error=float(c.mean[c.index]))
        else:
            factors = [scales] * Y.shape[1]
            fmap = scaled_map(fmap, scales)
            out_cols = None
            A = fmap.transform(X)
            lams = [lam] * Y.shape[1]
            if hasattr(self, "cv_results_"):
                del self.cv_results_
        self.lam_ = lams[0] if getattr(self, "_one_d", True) else np.array(lams)
        self.scale_ = factors[0] if getattr(self, "_one_d", True) else np.array(factors)
        self.mean_model_ = use_mean[0] if getattr(self, "_one_d", True) else np.array(use_mean)
        A, Yc, a_mean, y_mean = self._center_and_weight(A, Y, w)
        if out_cols is not None and len(set(factors)) > 1:
            C = [np.zeros(out_cols[t].size) if use_mean[t]
                 else ridge_fit(A[:, out_cols[t]], Yc[:, t], total * lams[t])
                 for t in range(Yc.shape[1])]
            return self._finish(fmap, out_cols, C, a_mean, y_mean)
        if len(set(lams)) == 1:
            # one solve for all outputs: the Gram matrix is shared
            C = ridge_fit(A, Yc, total * lams[0]).reshape(fmap.n_columns, -1)
        else:
            C = np.column_stack([ridge_fit(A, Yc[:, t], total * lams[t])
                                 for t in range(Yc.shape[1])])
        # an output whose choice lost to the training mean is that mean
        C[:, np.asarray(use_mean, dtype=bool)] = 0.0
        cols = np.arange(fmap.n_columns)
        return self._finish(fmap, [cols] * C.shape[1], list(C.T), a_mean, y_mean)


class RandomFeatureRidgeCV(CVSearch, RandomFeatureRidge):
    r"""Random-feature ridge with ``lam`` chosen by K-fold cross-validation.

    Every fold scores the whole grid ``lams`` from one eigendecomposition of
    its Gram matrix (module notes), then the model is refitted on all rows
    with the chosen ``lam_``.  The features are drawn once (from
    ``random_state``) and shared by the folds, as scikit-learn's ``LassoCV``
    shares its grid.

    Parameters
    ----------
    n_features, q, distribution, bias, activation, subsets, fit_intercept, random_state
        As :class:`RandomFeatureRidge`.
    lams : sequence of float, optional
        The grid (default :data:`LAMBDA_GRID`); give it largest first, the
        rules break ties towards the first (simplest) point.
    scales : sequence of float, optional
        Factors of the drawn weights searched jointly with ``lams`` (default
        :data:`SCALE_GRID`, 0.25 ... 2; module notes); ``scales=[1.0]``
        chooses ``lam`` alone.  Give them smallest first
        (ties go to the smoother features).  Dask arrays make the same
        search on the same folds (one pass of fold statistics per factor).
    cv : None, int or splitter, default None
        ``None``: 5 folds over the distinct rows (:func:`row_folds`, seeded by
        ``random_state``; integer weights equal repeated rows).  An int K is
        scikit-learn's unshuffled ``KFold(K)``; any object with
        ``split(X, y)`` (e.g. ``sklearn.model_selection.KFold``) is used as is.
    rule : {"min", "1se"}, default "min"
        See :func:`rflite._core.selection.choose`.
    n_jobs : None, int or executor
        Folds in parallel (:mod:`rflite._core.parallel`).
    verbose : bool or int, default False
        One line per fold on stderr.

    Attributes
    ----------
    lam_ : float or ndarray (n_targets,)
        The chosen ``lam`` (one per output of a 2-d ``y``).
    scale_ : float or ndarray (n_targets,)
        The chosen weight factor (one per output of a 2-d ``y``).
    cv_results_ : dict
        ``scale`` and ``lam`` (the joint grid, scale-major), ``mean_test_mse``, ``std_test_mse``,
        ``se_test_mse``, ``split<k>_test_mse``, ``rank_test_mse`` (shape
        (n_grid,), or (n_grid, n_targets) for a 2-d ``y``).
    feature_map_, support_, coef_, intercept_, n_features_in_, feature_names_in_, q_
        Of the final fit on all rows.
    """

    def __init__(self, n_features=1000, *, lams=None, scales=None, cv=None, rule="min", q=2,
                 distribution="normal", bias="uniform", activation="sin", subsets="random",
                 fit_intercept=True, n_jobs=None, verbose=False, random_state=None,
                 clip_inputs=False):
        self.clip_inputs = clip_inputs
        self.n_features = n_features
        self.lams = lams
        self.scales = scales
        self.cv = cv
        self.rule = rule
        self.q = q
        self.distribution = distribution
        self.bias = bias
        self.activation = activation
        self.subsets = subsets
        self.fit_intercept = fit_intercept
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.random_state = random_state

    def _grid(self):
        return LAMBDA_GRID if self.lams is None else self.lams

    def _scales(self):
        return SCALE_GRID if self.scales is None else self.scales

    def _cv(self):
        return self.cv
