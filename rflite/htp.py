r"""HARFE: hard thresholding pursuit for sparse ridge regression on random features.

HARFE (Saha, Schaeffer and Tran, "HARFE: Hard-Ridge Random Feature Expansion",
2023, Algorithm 1) fits an s-sparse coefficient vector to a random-feature
matrix :math:`A \in \mathbb{C}^{m \times N}`:

.. math::

    \min_{c \in \mathbb{C}^N} \|A c - y\|_2^2 + m \lambda \|c\|_2^2
    \quad \text{subject to } \|c\|_0 \le s,

by hard thresholding pursuit on the augmented matrix
:math:`B = [A; \sqrt{m\lambda} I]`: starting from :math:`c^0` (default 0),

.. math::

    S^{n+1} &= \text{indices of the } s \text{ entries of }
        (1 - m\mu\lambda) c^n + \mu A^*(y - A c^n)
        \text{ largest in magnitude}, \\
    c^{n+1} &= \arg\min \{\|y - A z\|_2^2 + m\lambda \|z\|_2^2 :
        \operatorname{supp}(z) \subseteq S^{n+1}\}
        = (A_S^* A_S + m\lambda I)^{-1} A_S^* y \text{ on } S^{n+1}.

It stops when the relative residual :math:`\|A c^n - y\|_2 / \|y\|_2` is at
most ``tol``, when the support repeats (then :math:`c^{n+1} = c^n`, a fixed
point), or after ``max_iter`` iterations.  ``lam = 0`` is plain HTP (Foucart
2011).

The ``lam`` convention
----------------------
Everywhere in rflite ``lam`` is the paper's :math:`\lambda`; the shift on the
diagonal is ``m * lam`` with ``m = A.shape[0]`` (as in
:class:`rflite.ridge.RandomFeatureRidge`).  The values printed in HARFE
Tables 1-3 are :math:`m\lambda` (Table 3 says so; for Tables 1 and 2 it is how
the authors' code used them), so reproduce them with ``lam = printed / m``.

Cost
----
No N x N matrix is formed.  Per iteration: one product :math:`A^* r`
(:math:`mN`), the top-s selection by a partition (:func:`top_s`,
:math:`O(N)`), and a ridge solve on the support.  The support system is kept
between iterations (:class:`rflite._htp.support._SupportSystem`).  For
``s <= m`` its Cholesky factor is updated: the ``k`` columns that left the
support are deleted by Givens rotations (the numba kernel
:func:`rflite._htp.support._chol_delete`), the ``k`` that
entered are appended by a triangular solve, :math:`O(k s^2 + m s k)` instead
of :math:`O(m s^2 + s^3/3)` (typically ``k`` is a few after the first
iterations).  For ``s > m`` the m x m dual system
:math:`A_S A_S^* + m\lambda I` gets a rank-2k update and a new factorisation.
Memory beyond ``A``: the m x s support columns, the s x s factor (or the m x m
dual matrix) and a few length-N vectors.  On the HARFE Table 1 fit
(m = 500, N = 10^4, s = 500) the iteration is then bound by :math:`A^* r`,
a pass over ``A``.

The original code (not reproduced) picked the support by the signed value of
the gradient step instead of its magnitude, formed :math:`A^T A` (N x N) up
front and inverted the support system with a pseudo-inverse.
"""

from __future__ import annotations

import numbers

import numpy as np

from rflite._base import RandomFeatureModel
from rflite._core.backend import is_dask_array
from rflite._core.selection import HOLDOUT_FRACTION, AutoChoice, CVSearch
from rflite._core.validation import check_bool, check_int, check_real
from rflite._htp.select import (  # noqa: F401 - the fold scoring, used by the estimators and tests
    GRAM_BLOCK,
    RIDGE_MAX_ROWS_MATRIX_FREE,
    _apply,
    _column_sq_norms,
    _dual_ridge,
    _gram,
    _harfe_fold_scores,
    _harfe_fold_scores_mf,
    _prepare,
    _ridge_all_columns,
    _ridge_predictions,
    _split_points,
)
from rflite._htp.solver import (  # noqa: F401 - HARFE's solver; the public names are public here
    DEFAULT_MAX_ITER,
    DEFAULT_MU,
    DEFAULT_TOL,
    GRAM_REUSE_FRACTION,
    STOP_REASONS,
    HTPResult,
    _as_operator,
    _check_harfe_args,
    _check_shift,
    _Dense,
    _htp,
    _one_blas_thread,
    _threshold_step,
    _Wrapped,
    harfe,
    harfe_grid,
    top_s,
)
from rflite._core.naming import publish
# _warmup compiles the support kernel for rflite.warmup()
from rflite._htp.support import _adjoint, _SupportSystem, _warmup  # noqa: F401

publish(__name__, HTPResult, harfe, harfe_grid, top_s)

__all__ = [
    "HTPResult",
    "harfe",
    "top_s",
    "HARFERegressor",
    "HARFECV",
    "harfe_grid",
    "DEFAULT_MU",
    "DEFAULT_MAX_ITER",
    "DEFAULT_TOL",
    "GRAM_REUSE_FRACTION",
]

# ---------------------------------------------------------------------- model
#: Default ``lam`` grid of the automatic choice, as shifts ``m * lam`` on the
#: unit-norm columns (divided by the training rows m to give ``lam``), largest
#: (simplest model) first.  HARFE's tables used m * lam from 1e-10 to 2.75.
SHIFT_GRID = (10.0, 1.0, 0.1, 1e-2, 1e-4)

#: Default ``s`` grid of the automatic choice, as fractions of the training
#: rows (rounded, clipped to [1, n_columns]), smallest (simplest) first.
S_FRACTIONS = (0.125, 0.25, 0.5)

#: Shifts ``m * lam`` of the candidates over *all* columns (ridge, ``s`` equal to
#: the number of columns) that the default ``s`` grid adds.  Larger than the
#: sparse grid's: the dense solution needs more shrinkage (insulin's best is
#: 100), and below 0.1 it nearly interpolates (the dual system's condition
#: number then makes the validation errors rounding-dependent).
RIDGE_SHIFT_GRID = (1000.0, 100.0, 10.0, 1.0, 0.1)


#: Share of the rows held out by the default (``"auto"``) choice.
VALIDATION_FRACTION = HOLDOUT_FRACTION


class HARFERegressor(AutoChoice, RandomFeatureModel):
    r"""HARFE: sparse random-feature regression by hard thresholding pursuit.

    Draws ``n_features`` random features :math:`\sin(\langle \omega_j, x\rangle + b_j)`
    with q-sparse weights, divides the columns of the training feature matrix
    by their norms, and fits an s-sparse ridge solution with :func:`harfe`
    (Saha, Schaeffer, Tran 2023, Algorithm 1).  The stored ``coef_`` already
    include the column scaling, so predictions evaluate the raw features.

    Parameters
    ----------
    n_features : int, default 10000
        Number of random features N.
    s : int or "auto", default "auto"
        Sparsity level (number of features kept), ``<= n_features``.
        ``"auto"``: chosen from ``round(f * m)`` for f in
        :data:`S_FRACTIONS` (1/8, 1/4, 1/2 of the training rows m), see
        "The default" below.
    lam : float or "auto", default "auto"
        Ridge parameter :math:`\lambda` (the penalty is ``m * lam``).  HARFE's
        tables print :math:`m\lambda`: pass ``printed / m_train``.
        ``"auto"``: chosen from ``shift / m`` for the shifts
        :data:`SHIFT_GRID` (10 ... 1e-4).
    q : int or None, default 2
        Nonzeros per weight vector (``None``: dense); clipped to d.
    mu, max_iter, tol
        See :func:`harfe`.
    distribution, bias, activation, subsets
        See :func:`rflite.features.random_feature_map`; defaults N(0, 1)
        weights, bias U[0, 2 pi], sin.  (HARFE Table 2 uses
        ``distribution="uniform", bias="weights"``: both U[-1, 1].)
    normalize : bool, default True
        Divide each column by its training-set norm before the solve (as the
        published experiments do).
    matrix_free : bool, default False
        Use :class:`rflite.features.FeatureOperator` instead of building the
        m x N matrix: memory O(m s + N), each iteration re-evaluates the
        features (slower).  Same fit (the same iterates bit for bit when
        the map is sparse, ``d > 4 q``; with ``d <= 4 q`` the BLAS
        pre-activation of selected columns may differ in the last bits, see
        "Selected columns" in :mod:`rflite.features`).  Needs explicit
        ``s`` and ``lam`` (the automatic choice uses the dense matrix).
    fit_intercept : bool, default True
        Dense fits centre ``y`` and every feature column (weighted means)
        before the normalisation and the solve, and recover the intercept
        exactly, :math:`c_0 = \bar y - \bar a_S^T c_S`; the sparsity and the
        ridge penalty apply to ``c`` only.  Matrix-free fits centre through
        an operator :math:`(A - 1\bar a^T)` (the same fit, up to rounding).
        ``False``: no intercept (the paper's model).
    clip_inputs : bool, default False
        Clip each input column of ``predict``'s ``X`` to the training box
        ``[input_min_, input_max_]`` (see ``RandomFeatureModel._clip_inputs``:
        far outside the training data a random-feature model extrapolates in
        no particular way).  Off by default, so that predictions are the model's.
    random_state : None, int, Generator, RandomState or SeedSequence
        See :func:`rflite._core.random.check_rng` (a negative seed is an error).
    verbose : bool or int, default False
        One line per grid point of the automatic choice on stderr
        (:class:`rflite._core.progress.Progress`); 2 also one line per HARFE fit.

    The default
    -----------
    With ``s="auto"`` and/or ``lam="auto"`` the grid of the automatic
    parameters is scored on one hold-out split (a fifth of the distinct rows,
    :func:`rflite.ridge.row_folds` drawn from ``random_state`` after the
    features; repeated rows stay together, so integer ``sample_weight``
    equals repeated rows; when that fifth is under
    :data:`~rflite._core.selection.MIN_HOLDOUT_ROWS` rows, on each of the
    five fifths in turn), warm-starting along the grid
    (:func:`harfe_grid`), the lowest validation MSE wins (:func:`rflite._core.selection.choose`,
    rule ``"min"`` with its predict-the-mean guard) and the model is refitted
    on all rows; :class:`HARFECV` does the same by K-fold.  With
    ``fit_intercept`` the chosen point must beat predicting the training
    mean by more than one standard error of the paired difference of their
    validation errors (:func:`rflite._core.selection.beats_mean`), else the
    model is that mean (``mean_model_``).  The paper's
    noise-free settings are explicit values: Table 2 (Friedman 1) is
    ``HARFERegressor(10_000, s=500, lam=1e-3 / m, q=2, distribution="uniform",
    bias="weights", fit_intercept=False)`` (the values of 0.1 were ``s=500,
    lam=1e-6``, no intercept).

    Attributes
    ----------
    feature_map_, support_, coef_, intercept_
        See :class:`rflite._base.RandomFeatureModel`.  For a 2-d ``y`` each
        output is an independent HARFE fit; ``support_`` is the union of the
        supports and ``coef_`` has shape ``(len(support_), n_targets)`` (zero
        where an output does not use a column).
    s_, lam_
        The values used (the chosen ones for ``"auto"``); arrays with one
        entry per output for a 2-d ``y`` (each output is an independent fit
        with its own choice).
    cv_results_ : dict
        With an automatic choice: the grid (``s``, ``lam``), ``mean_test_mse``
        (the hold-out MSE), ``split0_test_mse`` ... (see :class:`HARFECV`).
    mean_model_ : bool or ndarray of bool (n_targets,)
        True for an output whose automatic choice lost to the training mean
        (the model of that output is the mean, no columns).
    n_iter_, converged_, stop_reason_, residuals_
        From :class:`HTPResult` (lists over outputs for a 2-d ``y``).
    n_features_in_, feature_names_in_, q_
        Input width, data-frame column names, ``q`` clipped to d.

    Notes
    -----
    **Rows and weights.**  The m of the penalty :math:`m\lambda` and of the
    ``s`` fractions is the number of *distinct* training rows of ``X`` (with
    positive weight); for data without repeated rows that is the paper's m.
    ``sample_weight`` (dense fits) scales the rows by :math:`\sqrt{w_i}`
    after centring, and the column normalisation uses the weighted norms.
    Why distinct rows: on unit-norm columns the solution of
    :math:`\min \|Ac - y\|^2 + t\|c\|^2` does not change when every row's
    weight is multiplied by a constant (the normalised columns are the same,
    ``c`` and ``y`` scale together), so the model depends on the relative
    weights only as long as the shift :math:`t = m\lambda` does not move with
    them; counting distinct rows keeps ``t`` fixed under ``c * sample_weight``
    *and* makes a row of integer weight k the same as k copies of it (a sum
    of the weights would double ``t`` for ``2 * sample_weight``, the row
    count would differ between the weights and the copies).  Zero weights
    drop rows.  Matrix-free fits accept only weights that are 0 or 1.

    Examples
    --------
    >>> from rflite.datasets import make_friedman1
    >>> X, y = make_friedman1(200, noise=1.0, rng=0)
    >>> model = HARFERegressor(n_features=2000, s=200, lam=1e-3 / 200, random_state=0)
    >>> model.fit(X, y).n_nonzero_
    200
    """

    _auto_hint = "pass s and lam explicitly"

    def __init__(self, n_features=10000, *, s="auto", lam="auto", q=2, mu=DEFAULT_MU,
                 max_iter=DEFAULT_MAX_ITER, tol=DEFAULT_TOL, distribution="normal",
                 bias="uniform", activation="sin", subsets="random", normalize=True,
                 matrix_free=False, fit_intercept=True, random_state=None, verbose=False,
                 clip_inputs=False):
        self.clip_inputs = clip_inputs
        self.n_features = n_features
        self.s = s
        self.lam = lam
        self.q = q
        self.mu = mu
        self.max_iter = max_iter
        self.tol = tol
        self.distribution = distribution
        self.bias = bias
        self.activation = activation
        self.subsets = subsets
        self.normalize = normalize
        self.matrix_free = matrix_free
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.verbose = verbose

    def _fit_workspace(self, m, n_columns, itemsize, dense):
        """Bytes a fit needs beyond the feature matrix (for ``_check_feature_memory``).

        The support system (:class:`_SupportSystem`): the ``m x s`` support
        columns and the gathered copy they are made from, the ``s x s``
        matrix and factor (``s <= m``) or the ``m x m`` dual matrix and its
        factor (``s > m``), and about eight length-``n_columns`` vectors
        (gradient step, magnitudes, coefficients, norms and scales).
        Matrix-free, one row block of :class:`~rflite.features.FeatureOperator`
        (about ``2**22`` entries) is live at a time, plus its product.  An
        automatic choice keeps a second (fold) copy of the feature matrix.
        """
        s = self.s if isinstance(self.s, numbers.Integral) else n_columns
        s = min(int(s), n_columns)
        k = min(s, m)
        work = 2 * m * s * itemsize + 2 * k * k * itemsize + 8 * n_columns * 8
        if not dense:
            work += 2 * max(1 << 22, n_columns) * itemsize
        if self._search() is not None:
            work += m * n_columns * itemsize
        return work

    # -- the automatic choice (HARFECV overrides these) ------------------------
    def _search(self):
        """``(s_grid or None, lam_grid or None)`` to search, or None (fixed s and lam)."""
        s_auto = isinstance(self.s, str) and self.s == "auto"
        lam_auto = isinstance(self.lam, str) and self.lam == "auto"
        if not (s_auto or lam_auto):
            return None
        return (S_FRACTIONS if s_auto else None), (SHIFT_GRID if lam_auto else None)

    def _check_s_lam(self, n_columns, total, search):
        """Validate fixed ``s`` / ``lam`` (the ones not searched)."""
        s_grid, lam_grid = search if search is not None else (None, None)
        if s_grid is None:
            if isinstance(self.s, str):
                raise ValueError(f"s must be an int >= 1 or 'auto', got {self.s!r}")
            check_int(self.s, "s", minimum=1, maximum=n_columns)
        if lam_grid is None:
            if isinstance(self.lam, str):
                raise ValueError(f"lam must be a float >= 0 or 'auto', got {self.lam!r}")
            lam = check_real(self.lam, "lam", minimum=0.0)
            _check_shift(total, lam, check_real(self.mu, "mu", minimum=0.0, strict=True))

    def _grid_points(self, search, m, n_columns):
        """The ``(s, lam)`` grid: s ascending, lam descending within each s."""
        from rflite._core.selection import check_grid

        s_grid, lam_grid = search
        if s_grid is None:
            ss = np.array([int(self.s)])
        elif self._s_is_fraction():
            f = check_grid(s_grid, "s grid", minimum=0.0)
            ss = np.unique(np.clip(np.round(f * m), 1, n_columns).astype(np.int64))
        else:
            ss = np.unique(check_grid(s_grid, "ss", minimum=1, integer=True))
            if ss.max() > n_columns:
                raise ValueError(f"ss must be <= the number of columns {n_columns}, "
                                 f"got {ss.max()}")
        if lam_grid is None:
            lams = np.array([float(self.lam)])
        elif self._lam_is_shift():
            lams = np.sort(check_grid(lam_grid, "lam grid"))[::-1] / m
        else:
            lams = np.sort(check_grid(lam_grid, "lams"))[::-1]
        points = [(int(s), float(lam)) for s in ss for lam in lams]
        if s_grid is not None and self._s_is_fraction() and ss.max() < n_columns:
            # the ridge fallback: every column, in closed form (RIDGE_SHIFT_GRID)
            if lam_grid is not None and self._lam_is_shift():
                rl = np.sort(np.asarray(RIDGE_SHIFT_GRID))[::-1] / m
            else:
                rl = lams
            points += [(int(n_columns), float(lam)) for lam in rl]
        return points, ss, lams

    def _s_is_fraction(self):
        return True

    def _lam_is_shift(self):
        return True

    def fit(self, X, y, sample_weight=None):
        """Draw the features, centre, normalise the columns and run :func:`harfe`; returns ``self``.

        With ``s`` / ``lam`` ``"auto"`` (or in :class:`HARFECV`), first choose
        them on a hold-out split (K folds for :class:`HARFECV`), then refit on
        all rows.
        """
        self._fit_once(X, y, sample_weight)
        return self._check_choice_against_mean(X, y, sample_weight)

    def _fit_once(self, X, y, sample_weight=None):
        """The fit of :meth:`fit` without the nested check against the mean."""
        from rflite._core.progress import Progress

        if is_dask_array(X):
            return self._fit_dask(X, y, sample_weight)
        from rflite._core.folds import distinct_count, distinct_labels, kept_rows

        self._kept = kept_rows(sample_weight)
        X, Y, w = self._validate_fit(X, y, sample_weight)
        m = X.shape[0]
        n_features = check_int(self.n_features, "n_features", minimum=1)
        n_columns = n_features * (2 if self.activation == "fourier" else 1)
        # the m of the penalty m * lam and of the s fractions counts distinct
        # rows: a row of weight k, its k copies and c * w all give one model
        groups = distinct_labels(X)
        total = distinct_count(groups)
        # validate the solver's parameters before the (expensive) features
        search = self._search()
        self._check_s_lam(n_columns, total, search)
        check_real(self.mu, "mu", minimum=0.0, strict=True)
        normalize = check_bool(self.normalize, "normalize")
        matrix_free = check_bool(self.matrix_free, "matrix_free")
        fit_intercept = check_bool(self.fit_intercept, "fit_intercept")
        progress = Progress(getattr(self, "verbose", False), type(self).__name__)
        if search is not None:
            from rflite._core.parallel import check_executor

            points, ss, lams = self._grid_points(search, total, n_columns)
            rule = self._rule()
            check_executor(self._n_jobs(), "n_jobs")
            check_int(self.max_iter, "max_iter", minimum=1)
            check_real(self.tol, "tol", minimum=0.0)
            for lam in lams[:1]:
                _check_shift(total, lam, self.mu)
        if matrix_free and w is not None:
            raise ValueError("sample_weight other than 0/1 is not supported with "
                             "matrix_free=True (the operator cannot scale rows)")
        self._check_feature_memory(*X.shape, dense=not matrix_free)
        rng = self._rng()
        fmap = self._draw_features(X.shape[1], rng)
        if search is not None:
            chosen = self._choose(fmap, X, Y, w, groups, rng, points, rule, fit_intercept,
                                  normalize, progress)
            use_mean = self.__dict__.pop("_use_mean")
        else:
            use_mean = [False] * Y.shape[1]
            chosen = [(int(self.s), float(self.lam))] * Y.shape[1]
            if hasattr(self, "cv_results_"):
                del self.cv_results_
        del self._kept
        one = getattr(self, "_one_d", True)
        self.s_ = chosen[0][0] if one else np.array([c[0] for c in chosen])
        self.lam_ = chosen[0][1] if one else np.array([c[1] for c in chosen])
        if matrix_free and fit_intercept:
            # the centred operator: the same centring as the dense route
            from rflite._base import _centered_operator

            A, a_mean, scale = _centered_operator(fmap, X, normalize=normalize)
            _, Yc, _, y_mean = self._center_and_weight(None, Y, None)
        elif matrix_free:
            _, Yc, a_mean, y_mean = self._center_and_weight(None, Y, None)
            A = fmap.operator(X)
            norms = A.column_norms()
            scale = np.ones(fmap.n_columns)
            if normalize:
                nz = norms > 0
                scale[nz] = 1.0 / norms[nz]
                A = fmap.operator(X, col_scale=scale)
        else:
            A, Yc, a_mean, y_mean, scale = _prepare(
                fmap.transform(X), Y, w, fit_intercept=fit_intercept, normalize=normalize)
        supports, coefs, results = [], [], []
        for k in range(Yc.shape[1]):
            s, lam = chosen[k]
            # the solver's penalty is A.shape[0] * lam: make it lam * (distinct rows)
            lam_eff = lam * total / m
            if s >= n_columns:
                # every column kept: HARFE's fixed point is the ridge solution
                res = _ridge_all_columns(A, Yc[:, k], lam * total)
            else:
                res = harfe(A, Yc[:, k], s=s, lam=lam_eff, mu=self.mu,
                            max_iter=self.max_iter, tol=self.tol)
            results.append(res)
            supports.append(res.support)
            coefs.append(res.coef[res.support] * scale[res.support])
            progress.line(f"final fit, output {k + 1}/{Yc.shape[1]}: {res.n_iter} iterations, "
                          f"{res.stop_reason}", error=float(res.residuals[-1])
                          if res.residuals.size else 0.0, level=2)
        self.n_iter_ = results[0].n_iter if one else [r.n_iter for r in results]
        self.converged_ = results[0].converged if one else [r.converged for r in results]
        self.stop_reason_ = results[0].stop_reason if one else [r.stop_reason for r in results]
        self.residuals_ = results[0].residuals if one else [r.residuals for r in results]
        # an output whose choice lost to the training mean is that mean
        coefs = [np.zeros_like(c) if u else c for c, u in zip(coefs, use_mean)]
        self.mean_model_ = use_mean[0] if one else np.array(use_mean)
        return self._finish(fmap, supports, coefs, a_mean, y_mean)

    def _choose(self, fmap, X, Y, w, groups, rng, points, rule, fit_intercept, normalize,
                progress):
        """Score ``points`` on the splits, set ``cv_results_``; the chosen (s, lam) per output."""
        import functools

        from rflite._core.selection import cross_validate_grid
        from rflite.ridge import choose_per_output, cv_results_per_output

        splits = self._splits(X, Y, rng)
        if check_bool(self.matrix_free, "matrix_free"):
            # the same choice through operators on the training rows (no m x N matrix)
            func = functools.partial(
                _harfe_fold_scores_mf, fmap=fmap, X=X, Y=Y, groups=groups, points=points,
                fit_intercept=fit_intercept, normalize=normalize, mu=self.mu,
                max_iter=self.max_iter, tol=self.tol)
        else:
            func = functools.partial(
                _harfe_fold_scores, A=fmap.transform(X), Y=Y, w=w, groups=groups,
                points=points,
                fit_intercept=fit_intercept, normalize=normalize, mu=self.mu,
                max_iter=self.max_iter, tol=self.tol)
        scores = cross_validate_grid(func, splits, n_jobs=self._n_jobs(),
                                     progress=progress if progress else None)
        S, choices = choose_per_output(scores, len(points), Y, w, splits, rule,
                                       against_mean=self._compare_with_mean and fit_intercept)
        self._use_mean = [c.use_mean for c in choices]
        if progress:
            for i, (s, lam) in enumerate(points):
                progress.line(f"s={s} lam={lam:.3g}",
                              error=float(np.mean([c.mean[i] for c in choices])))
        self.cv_results_ = cv_results_per_output(
            {"s": np.array([p[0] for p in points]), "lam": np.array([p[1] for p in points])},
            S, choices)
        out = []
        for t, c in enumerate(choices):
            s, lam = points[c.index]
            out.append((int(s), float(lam)))
            progress.line(f"chose s={s} lam={lam:.3g}" + (f" for output {t}" if len(choices) > 1
                                                          else ""), error=float(c.mean[c.index]))
        return out


class HARFECV(CVSearch, HARFERegressor):
    r"""HARFE with ``s`` and ``lam`` chosen by K-fold cross-validation.

    One feature map is drawn (from ``random_state``) and shared by the folds.
    On each fold the training rows are centred and normalised as in
    :class:`HARFERegressor` and HARFE is run at every grid point, ordered by
    ``s`` (ascending) and within one ``s`` from the largest ``lam`` down,
    each fit warm-started from the previous solution (:func:`harfe_grid`,
    :func:`harfe`'s ``c0``).  The validation MSE (weighted by
    ``sample_weight``; per output for a 2-d ``y``) of every point goes to
    :func:`rflite._core.selection.choose`; the model is refitted on all rows with the
    chosen ``s_`` and ``lam_``.

    Parameters
    ----------
    n_features, q, mu, max_iter, tol, distribution, bias, activation, subsets, normalize, fit_intercept, random_state
        As :class:`HARFERegressor` (no ``matrix_free``).
    lams : sequence of float, optional
        ``lam`` values (penalty ``m * lam``; the same ``lam`` on every fold).
        Default: :data:`SHIFT_GRID` divided by the number of training rows.
    ss : sequence of int, optional
        Sparsity levels.  Default: :data:`S_FRACTIONS` of the training rows.
    cv : None, int or splitter, default None
        ``None``: 5 folds over the distinct rows (:func:`rflite.ridge.row_folds`,
        seeded by ``random_state``; integer weights equal repeated rows).  An
        int K is scikit-learn's unshuffled ``KFold(K)``; any object with
        ``split(X, y)`` is used as is.
    rule : {"min", "1se"}, default "min"
        :func:`rflite._core.selection.choose`; "1se" takes the smallest ``s`` (then the
        largest ``lam``) within one standard error of the best.
    n_jobs : None, int or executor
        Folds in parallel (:mod:`rflite._core.parallel`).
    verbose : bool or int, default False
        One line per fold and per grid point on stderr; 2 also per HARFE fit.

    Attributes
    ----------
    s_, lam_ : int, float (arrays over outputs for a 2-d ``y``)
        The chosen values.
    cv_results_ : dict
        ``s``, ``lam`` (one entry per grid point, in the visiting order),
        ``mean_test_mse``, ``std_test_mse``, ``se_test_mse``,
        ``split<k>_test_mse``, ``rank_test_mse``.
    feature_map_, support_, coef_, intercept_, n_iter_, ...
        Of the final fit on all rows (as :class:`HARFERegressor`).
    """

    def __init__(self, n_features=10000, *, lams=None, ss=None, cv=None, rule="min", q=2,
                 mu=DEFAULT_MU, max_iter=DEFAULT_MAX_ITER, tol=DEFAULT_TOL,
                 distribution="normal", bias="uniform", activation="sin", subsets="random",
                 normalize=True, fit_intercept=True, n_jobs=None, verbose=False,
                 random_state=None, clip_inputs=False):
        self.clip_inputs = clip_inputs
        self.n_features = n_features
        self.lams = lams
        self.ss = ss
        self.cv = cv
        self.rule = rule
        self.q = q
        self.mu = mu
        self.max_iter = max_iter
        self.tol = tol
        self.distribution = distribution
        self.bias = bias
        self.activation = activation
        self.subsets = subsets
        self.normalize = normalize
        self.fit_intercept = fit_intercept
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.random_state = random_state

    # HARFERegressor's code reads these; HARFECV always searches, never matrix-free
    matrix_free = False
    s = "auto"
    lam = "auto"

    def _search(self):
        return (S_FRACTIONS if self.ss is None else self.ss,
                SHIFT_GRID if self.lams is None else self.lams)

    def _s_is_fraction(self):
        return self.ss is None

    def _lam_is_shift(self):
        return self.lams is None

