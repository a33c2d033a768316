r"""The fit of :class:`~rflite.imp.SHRIMPRegressor` (private machinery of :mod:`rflite.imp`).

One fit is: validate and collapse the rows (:func:`_fit_setup`), split them
and draw the features (:func:`_fit_prepare`), run the pruning path of each
prune rate and output on the training part (:func:`_fit_paths`), choose the
step by the guarded held-out score (:func:`_fit_choose`) and refit the
chosen support on all rows (:func:`_fit_finish`).  ``q="auto"``
(:func:`_fit_auto_q`) and :func:`~rflite.imp.select_shrimp`'s hold-out grid
(:func:`_fit_rates`) are several of these sharing one split.  The refit
rules (:data:`REFITS`) and the orders of ``q="auto"`` (:data:`AUTO_QS`) are
re-exported by :mod:`rflite.imp`.
"""

from __future__ import annotations

import types
import warnings

import numpy as np

from rflite._core.folds import kept_rows
from rflite._core.linalg import ridge_fit
from rflite._core.progress import Progress
from rflite._core.random import spawn_streams
from rflite._core.selection import beats_mean
from rflite._core.validation import check_bool, check_choice, check_int, check_real
from rflite._imp.guard import (_center_weight_like, _collapse_rows, _guarded_choice,
                               _ridge_family,
                               _guarded_refit, _guarded_step_scores, _holdout_ridge_errors,
                               _row_error_moments, _target_stats, _warn_magnitude)
from rflite._imp.path import _blas_threads, _shared_paths
from rflite._imp.select import _auto_n_features, _check_memory_for

__all__ = ["REFITS", "AUTO_QS"]


#: Refit rules of :class:`~rflite.imp.SHRIMPRegressor` / :class:`~rflite.imp.SHRIMPCV` (``refit=``):
#: ``"auto"`` (default: the paper's minimum-norm refit unless it is
#: numerically singular, :func:`rflite._imp.guard._out_of_proportion`, then a ridge refit with
#: the penalty chosen on held-out rows), ``"min_norm"`` (the paper's refit,
#: always; truncated like the path's solves and the authors'
#: ``numpy.linalg.pinv`` at :math:`10^{-15}\sigma_{\max}`), ``"ridge"``
#: (always the held-out ridge refit) and ``"none"`` (keep
#: the path's coefficients, fitted without the validation rows; SHRIMPRegressor
#: only).  ``True`` / ``False`` (rflite <= 0.1's boolean ``refit``) mean
#: ``"min_norm"`` / ``"none"``.
REFITS = ("auto", "min_norm", "ridge", "none")


#: The orders that ``SHRIMPRegressor(q="auto")`` (the default) chooses between
#: on its validation rows: additive and pairwise features, the default grid of
#: :class:`~rflite.imp.SHRIMPCV`.  On the shared real sets (seeds 0-2) q = 2 validated
#: better on airfoil, ccpp and most propulsion, housing and speech splits, q = 1
#: on insulin (the paper's own choices: q = 2 there, q = 1 for insulin).
AUTO_QS = (1, 2)


def _check_refit(refit, *, allow_none: bool = True) -> str:
    """Normalise ``refit`` (True: "min_norm", False: "none"); ``ValueError`` naming it."""
    if refit is True or (isinstance(refit, np.bool_) and bool(refit)):
        return "min_norm"
    if refit is False or (isinstance(refit, np.bool_) and not bool(refit)):
        refit = "none"
    options = REFITS if allow_none else tuple(r for r in REFITS if r != "none")
    if not isinstance(refit, str) or refit not in options:
        raise ValueError(f"refit must be one of {options} (or a bool), got {refit!r}")
    return refit


def _shrimp_workspace(est, m, n_columns, itemsize, dense):
    """Bytes a fit needs beyond the feature matrix (for ``_check_feature_memory``).

    The peak is about 4x the ``m x n_columns`` matrix: the training and
    validation matrices, their centred and weighted versions and the
    path's transposed working copy
    (:func:`~rflite.imp.shrimp_path` owns one), plus the path's square
    factors, ``k x k`` with ``k = min(m, n_columns)``: ``m x m`` on the
    over-parameterised steps, at most ``n_columns`` square on the others.
    """
    k = min(m, n_columns)
    return 3 * m * n_columns * itemsize + 3 * k * k * 8


def _fit_auto_q(est, X, y, sample_weight):
    """``q="auto"``: one fit per order in :data:`AUTO_QS` (clipped to d), the
    lowest validation MSE kept (the smaller q on ties).

    Every candidate is ``SHRIMPRegressor(q=q, random_state=seed)`` with the
    other parameters unchanged and one seed for all (``random_state``
    itself when it is an int, else one integer drawn from it), so they
    share the validation rows and the kept fit is exactly that
    estimator's; only its warnings are re-emitted.  Works on Dask arrays
    too (each candidate is a distributed fit).
    """
    check_choice(est.q, "q", ("auto",))
    # (no np.shape: array-likes with __array__ only; a Dask X stays lazy)
    shape = X.shape if hasattr(X, "shape") else np.asarray(X).shape
    d = int(shape[1]) if len(shape) == 2 else 1
    qs = sorted({min(q, max(d, 1)) for q in AUTO_QS})
    seed = est.random_state
    if not (isinstance(seed, (int, np.integer)) and not isinstance(seed, bool)):
        seed = int(est._rng().integers(2**63))
    params = dict(est.get_params(deep=False), random_state=seed)
    progress = Progress(est.verbose, type(est).__name__)
    best, scores = None, []  # only the best fit so far is kept (paths are large)
    for q in qs:
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            fit = type(est)(**dict(params, q=q))
            # the candidates choose; est's own fit checks the choice once
            fit._skip_mean_check = True
            fit.fit(X, y, sample_weight)
        score = float(np.mean(fit.validation_mse_))
        scores.append(score if np.isfinite(score) else np.inf)
        progress.line(f"q={q} candidate", error=scores[-1])
        if best is None or scores[-1] < min(scores[:-1]):
            best = (q, fit, record)
        del fit
    progress.line(f"q={best[0]} kept")
    for w in best[2]:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    state = dict(best[1].__dict__)
    state.pop("_skip_mean_check", None)
    state["q"], state["random_state"] = est.q, est.random_state
    # fitted attributes (scikit-learn's "name_") of an earlier fit that this
    # one does not set (feature_names_in_ after a DataFrame) must not
    # survive it; other attributes (set by a caller) stay
    for name in [k for k in vars(est) if k.endswith("_") and not k.startswith("__")
                 and k not in state]:
        delattr(est, name)
    est.__dict__.update(state)
    est.q_scores_ = dict(zip(qs, scores))
    return est


def _check_against_mean(est, X, y, sample_weight):
    r"""Nested cross-validation of the default fit against the training mean; returns ``est``.

    The step, the penalty and q of the default are chosen on a hold-out of
    ``validation_fraction`` of the rows: a few rows at small m (four of 40
    at the default 0.1), too few for its error, the lowest of hundreds of
    candidates, to say whether the chosen model beats the training mean.
    So when the hold-out has fewer than
    :data:`~rflite._core.selection.MIN_HOLDOUT_ROWS` rows, the whole fit
    (its own hold-out choice included) is cross-validated against the mean
    (:meth:`rflite._base.RandomFeatureModel._check_against_mean`) and an
    output that loses becomes the training mean (``refit_ == "mean"``).
    Applies to the guarded refits (``refit="auto"`` / ``"ridge"``) with an
    intercept; the paper's ``refit="min_norm"`` is left as fitted.
    """
    one = getattr(est, "_one_d", True)
    used = [est.refit_] if one else list(est.refit_)
    if est.refit not in ("auto", "ridge") or not est.fit_intercept or all(
            u == "mean" for u in used):
        return est
    lose = est._check_against_mean(X, y, sample_weight, float(est.validation_fraction))
    if lose is not None and lose.any():
        used = ["mean" if b else u for u, b in zip(used, lose)]
        est.refit_ = used[0] if one else used
    return est


def _fit_rates(est, X, y, rates, split):
    """Fit with the best prune rate of ``rates`` (the hold-out grid of
    :func:`~rflite.imp.select_shrimp`).

    Returns the validation MSE of every rate, each what
    ``SHRIMPRegressor(prune_rate=p, ...).fit(X, y).validation_mse_`` gives;
    ``est`` ends fitted as with ``prune_rate`` = the first rate of the
    lowest score (when every score is NaN: the first rate).  The split,
    features, transposed matrices and the t = 0 solve are shared by the
    rates, and only the chosen rate is refitted on all rows.  ``split`` is
    :func:`~rflite._imp.guard._distinct_row_split`, passed by the estimator
    as :mod:`rflite.imp` names it (:func:`_fit_prepare`).
    """
    X, Y, w, frac, refit = _fit_setup(est, X, y, None)
    with _blas_threads(X.shape[0]):
        st = _fit_prepare(est, X, Y, w, frac, split)
        all_paths = _fit_paths(est, st, tuple(rates))
        # the rates share the t = 0 solve: its scores are computed once
        memos = [{} for _ in range(st.Y.shape[1])]
        chosen = [_fit_choose(est, st, paths, refit, memos) for paths in all_paths]
        one = getattr(est, "_one_d", True)
        scores = [c[2][0] if one else c[2] for c in chosen]
        best = 0
        for i, v in enumerate(scores):
            if v < scores[best]:
                best = i
        est.prune_rate = rates[best]
        _fit_finish(est, st, all_paths[best], refit, chosen[best])
    return scores


def _check_regressor_params(est):
    """Validate the path's parameters (in memory and on Dask): ``(validation_fraction, refit)``."""
    if est.n_features is not None:
        check_int(est.n_features, "n_features", minimum=1)
    if est.q is not None:
        check_int(est.q, "q", minimum=1)
    check_choice(est.subsets, "subsets", ("auto", "all", "random"))
    check_choice(est.rule, "rule", ("1se_ridge", "min"))
    refit = _check_refit(est.refit)
    frac = check_real(est.validation_fraction, "validation_fraction", minimum=0.0,
                      strict=True)
    if not frac < 1.0:
        raise ValueError(f"validation_fraction must be in (0, 1), got {frac}")
    return frac, refit


def _rows_of(input_rows, distinct):
    """The rows of ``X`` as passed whose distinct row is one of ``distinct`` (sorted)."""
    inverse, kept = input_rows
    rows = np.flatnonzero(np.isin(inverse, distinct))
    return rows if kept is None else kept[rows]


def _fit_setup(est, X, y, sample_weight):
    """Validation of :meth:`fit`: ``(X, Y, w, validation_fraction, refit)``, rows collapsed."""
    kept = kept_rows(sample_weight)
    X, Y, w = est._validate_fit(X, y, sample_weight)
    # the model depends on the data only through its weighted distinct rows
    X, Y, w, inverse = _collapse_rows(X, Y, w, return_inverse=True)
    # each distinct row's rows of X as passed, for train_indices_ / validation_indices_
    est._input_rows = inverse, (None if kept is None else np.flatnonzero(kept))
    m, d = X.shape
    check_bool(est.clip_inputs, "clip_inputs")
    frac, refit = _check_regressor_params(est)
    if m < 2:
        raise ValueError(f"X must have at least 2 distinct samples for SHRIMPRegressor's "
                         f"validation split, got n_samples={m}")
    # the path materialises the (n_columns x m) training matrix
    est._n_weights = (est.n_features if est.n_features is not None
                       else _auto_n_features(m, d, est.q))
    _check_memory_for(est, m, d, est._n_weights)
    est._record_input_range(X)
    return X, Y, w, frac, refit


def _fit_one(est, X, Y, w, frac, refit, split):
    """One fit at ``est.prune_rate`` on the rows of :func:`_fit_setup`; returns ``est``."""
    st = _fit_prepare(est, X, Y, w, frac, split)
    paths = _fit_paths(est, st, (est.prune_rate,))[0]
    return _fit_finish(est, st, paths, refit)


def _fit_prepare(est, X, Y, w, frac, split):
    """Split, features and the centred training / validation matrices (no prune rate).

    ``split(X, Y, w, frac, rng)`` returns the training and validation rows:
    :func:`~rflite._imp.guard._distinct_row_split`, looked up in
    :mod:`rflite.imp` by the estimator at each fit, so that replacing it
    there (a keyed shuffle shared with the Dask fit) reaches this split.
    """
    split_rng, feat_rng, path_rng = spawn_streams(est._rng(), 3)
    progress = Progress(est.verbose, type(est).__name__)
    tr, val = split(X, Y, w, frac, split_rng)
    fmap = est._draw_features(X.shape[1], feat_rng)
    w_tr = None if w is None else w[tr]
    w_val = None if w is None else w[val]
    A_tr, Y_tr, a_mean, y_mean = est._center_and_weight(fmap.transform(X[tr]), Y[tr], w_tr)
    A_val, Y_val = _center_weight_like(fmap.transform(X[val]), Y[val], a_mean, y_mean, w_val)
    # the validation MSE per unit weight: integer weights = repeated rows
    val_scale = Y_val.shape[0] / (np.sum(w_val) if w_val is not None else Y_val.shape[0])
    est.target_mean_, est.target_scale_ = _target_stats(Y, w)
    return types.SimpleNamespace(
        X=X, Y=Y, w=w, tr=tr, val=val, fmap=fmap, w_tr=w_tr, w_val=w_val, A_tr=A_tr,
        Y_tr=Y_tr, a_mean=a_mean, y_mean=y_mean, A_val=A_val, Y_val=Y_val,
        val_scale=val_scale, path_rng=path_rng, path_state=path_rng.bit_generator.state,
        progress=progress)


def _fit_paths(est, st, rates):
    """The paths of every prune rate in ``rates`` (one list over the outputs per rate).

    The rates share the t = 0 solve (:func:`_shared_paths`); each path is
    the one a fit with that ``prune_rate`` alone computes.
    """
    out = [[] for _ in rates]
    for k in range(st.Y.shape[1]):
        if st.Y.shape[1] > 1:
            st.progress.line(f"output {k + 1}/{st.Y.shape[1]}")
        # every output starts from the same pruning stream: output k of a
        # 2-d fit is the 1-d fit of column k
        st.path_rng.bit_generator.state = st.path_state
        paths = _shared_paths(
            st.A_tr, st.Y_tr[:, k], rates, A_val=st.A_val, y_val=st.Y_val[:, k],
            n_steps=est.n_steps, min_features=est.min_features, schedule=est.schedule,
            method=est.method, track_spectrum=est.track_spectrum, rng=st.path_rng,
            progress=st.progress,
        )
        for i, path in enumerate(paths):
            out[i].append(path._replace(val_mse=path.val_mse * st.val_scale))
    return out


def _fit_choose(est, st, paths, refit, memos=None):
    """The step of every output: ``(bests, step_lams, mses, use_mean)``.

    ``memos``: one dict per output, shared by calls on paths that start
    from the same solve (:func:`rflite._imp.guard._guarded_step_scores`).
    """
    Y_tr, Y_val, val_scale = st.Y_tr, st.Y_val, st.val_scale
    A_tr, A_val, a_mean = st.A_tr, st.A_val, st.a_mean
    bests = [p.best_step for p in paths]
    step_lams = [None] * len(paths)
    mses = [float(p.val_mse[b]) for p, b in zip(paths, bests)]
    use_mean = [False] * len(paths)
    if refit in ("auto", "ridge"):
        # choose the step by the validation error of the model the user gets
        for k, path in enumerate(paths):
            scores, lam_at, families = _guarded_step_scores(
                A_tr, Y_tr[:, k], A_val, Y_val[:, k], path, a_mean,
                est.target_scale_[k], est.activation, refit, val_scale,
                memo=None if memos is None else memos[k])
            chosen = _guarded_choice(
                scores, lam_at, families, path, est.rule,
                lambda S, c, k=k: _row_error_moments(A_val[:, S] @ c - Y_val[:, k],
                                                     st.w_val))
            if chosen is not None:
                bests[k], step_lams[k], mses[k] = chosen
            # the model only when it beats predicting the training mean on the
            # validation rows by more than the standard error of the paired
            # difference (beats_mean): its error is the lowest of many
            # candidates scored on those rows, the mean's is one candidate's
            baseline = float(np.mean(Y_val[:, k] ** 2)) * val_scale
            if est.fit_intercept and (chosen is None or not beats_mean(
                    _validation_row_errors(st, paths[k], bests[k], step_lams[k], k),
                    _unscaled(Y_val[:, k] ** 2, st.w_val), st.w_val)):
                use_mean[k], mses[k] = True, baseline
    return bests, step_lams, mses, use_mean


def _validation_row_errors(st, path, t, lam, k):
    r"""Squared error of each validation row for output ``k`` of step ``t``'s chosen model.

    The minimum-norm coefficients of the path (``lam`` None) or the ridge
    fit :math:`\min_c \|A_{P_t} c - y\|^2 + \lambda \|c\|^2` on the
    training part (``lam`` the chosen penalty): the model whose validation
    error chose the step, row by row, per unit weight.
    """
    S = path.supports[t]
    if lam is None:
        pred = st.A_val[:, S] @ path.coefs[t]
    else:
        pred = _ridge_family(st.A_tr[:, S], st.Y_tr[:, k], st.A_val[:, S], [lam])[0][:, 0]
    return _unscaled((pred - st.Y_val[:, k]) ** 2, st.w_val)


def _unscaled(sq, w):
    r"""Squared residuals of :math:`\sqrt{w}`-scaled rows back to per-row errors."""
    return sq if w is None else sq / w


def _fit_finish(est, st, paths, refit, chosen=None):
    """Choose the steps (or take ``chosen``), refit on all rows, set the attributes.

    Releases the full matrices of ``st``: call it once, last.
    """
    bests, step_lams, mses, use_mean = (chosen if chosen is not None
                                        else _fit_choose(est, st, paths, refit))
    X, Y, w, fmap, tr = st.X, st.Y, st.w, st.fmap, st.tr
    A_tr, Y_tr, A_val, Y_val = st.A_tr, st.Y_tr, st.A_val, st.Y_val
    a_mean, y_mean, w_tr, val_scale = st.a_mean, st.y_mean, st.w_tr, st.val_scale
    val = st.val
    supports = [np.zeros(0, np.int64) if e else p.supports[b]
                for p, b, e in zip(paths, bests, use_mean)]
    coefs = [np.zeros(0) if e else p.coefs[b] for p, b, e in zip(paths, bests, use_mean)]
    used = ["mean" if e else "none" for e in use_mean]
    lams = [None] * len(coefs)
    if refit != "none" and not all(use_mean):
        # the held-out pieces of the chosen columns, for the guard's penalty
        held = [(A_tr[:, S], Y_tr[:, k], A_val[:, S], Y_val[:, k],
                 None if a_mean is None else a_mean[S], est.target_scale_[k])
                for k, S in enumerate(supports)]
        # the full matrices are no longer needed (st is spent)
        del A_tr, A_val
        st.A_tr = st.A_val = None
        # refit on all rows, centred with the means of all rows: only the
        # kept columns are evaluated (never a second m x n_columns matrix)
        union = np.unique(np.concatenate(supports))
        A_U, Y_all, u_mean, y_mean = est._center_and_weight(
            fmap.columns(X, union), Y, w)
        a_mean = None
        if u_mean is not None:
            a_mean = np.zeros(fmap.n_columns, dtype=u_mean.dtype)
            a_mean[union] = u_mean
        w_all = float(np.sum(w)) if w is not None else float(X.shape[0])
        w_trs = float(np.sum(w_tr)) if w_tr is not None else float(tr.size)
        for k, S in enumerate(supports):
            if use_mean[k]:
                continue
            A_S = A_U[:, np.searchsorted(union, S)]
            am = None if a_mean is None else a_mean[S]
            if step_lams[k] is not None:
                # the penalty chosen with the step, scaled from the training
                # part's weight to all rows' (the same penalty per unit weight)
                lam = step_lams[k] * w_all / w_trs
                coefs[k], used[k], lams[k] = ridge_fit(A_S, Y_all[:, k], lam), "ridge", lam
                lams[k] = lam / w_all
                continue
            c, used[k], lams[k] = _guarded_refit(
                A_S, Y_all[:, k], am, refit, est.target_scale_[k], est.activation,
                lambda lam_grid, k=k: _holdout_ridge_errors(held[k], lam_grid, w_trs / w_all,
                                                            val_scale))
            coefs[k] = c
            if lams[k] is not None:
                lams[k] = lams[k] / w_all
    else:
        del A_tr, A_val
        if all(use_mean):
            # the intercept-only model: the (weighted) mean of all rows
            a_mean, y_mean = None, np.average(Y, axis=0, weights=w)
    one = getattr(est, "_one_d", True)
    est.path_ = paths[0] if one else paths
    est.best_step_ = bests[0] if one else bests
    est.validation_mse_ = mses[0] if one else mses
    est.refit_ = used[0] if one else used
    est.ridge_lam_ = lams[0] if one else lams
    est.train_indices_, est.validation_indices_ = (_rows_of(est._input_rows, tr),
                                                   _rows_of(est._input_rows, val))
    del est._input_rows
    est._finish(fmap, supports, coefs, a_mean, y_mean)
    st.progress.line(
        f"chosen step {bests[0] if one else bests} refitted on all rows "
        f"({used[0] if one else ', '.join(used)})", error=float(np.mean(mses)))
    _warn_magnitude(est, a_mean)
    return est
