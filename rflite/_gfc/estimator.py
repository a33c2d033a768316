r"""The fit of :class:`~rflite.greedy.GFCRegressor` (private machinery of :mod:`rflite.greedy`).

The estimator's defaults (:data:`NU_GRID_ESTIMATOR`, :data:`GFC_INIT_SCALE`,
the sizes per worker and step), its rows (zero weights dropped, integer
weights repeated, a canonical order, the folds of :math:`\nu` followed
through all that: :func:`_follow_splits`), the guard against the mean
(:func:`_guard_errors`), the bag of fits per output (:func:`_fit_gfc`),
stored as one feature map (:func:`_store_bags`), and the unit of ``y`` every
fit works in (:func:`_target_scale`, :func:`_scaled_targets`,
:func:`_unscaled`; the Dask fit uses the same functions).
:mod:`rflite.greedy` re-exports the constants.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from rflite._core.backend import is_dask_array
from rflite._core.folds import _canonical_order, check_cv
from rflite._core.metrics import exact_sum_parts, exact_total
from rflite._core.selection import MIN_HOLDOUT_ROWS
from rflite._core.validation import check_bool, check_choice, check_int, check_real
from rflite._gfc.amplitudes import _fourier_map, gfc_design
from rflite._gfc.passes import STOPPINGS, _bag_rngs, _check_splits, _gfc_fits, _intercept_only

#: The :math:`\nu` :class:`~rflite.greedy.GFCRegressor` cross-validates: the paper's grid
#: extended upwards, since on noisy data the cross-validation asked for the
#: paper grid's largest value (housing, insulin, airfoil with noise inputs).
NU_GRID_ESTIMATOR = np.logspace(-3, 5, 17)

#: :class:`~rflite.greedy.GFCRegressor` starts every greedy step at :math:`w \sim N(0, s^2 I/d)`
#: with this ``s`` instead of the paper's 1.  L-BFGS-B moves a spectrum only
#: where the validation gradient points, so with the paper's start the
#: components on irrelevant inputs stay near their random initial values: on
#: airfoil with 36 appended noise inputs most of the constructed spectra's
#: squared norm sits on the noise inputs and GFC falls behind ridge.  Smaller
#: starts help the sets with irrelevant inputs and hurt those (housing) whose
#: spectra need large components; 0.1 is the best compromise.  (``s = 0`` does not
#: move: the sine column and its gradient vanish at w = 0.)
GFC_INIT_SCALE = 0.1

#: Share of the rows :class:`~rflite.greedy.GFCRegressor`'s guard against the mean holds out
#: (when that is at least :data:`~rflite._core.selection.MIN_HOLDOUT_ROWS` rows).
GUARD_FRACTION = 0.2

#: Fewest rows on which the guard runs: below, its hold-out (under 20 rows)
#: decides by noise more than by the model, and the extra fit doubled the cost
#: of scikit-learn's estimator checks (69 -> 107 s) for nothing.
GUARD_MIN_ROWS = 100

#: :class:`~rflite.greedy.GFCRegressor` runs at most ``m // ROWS_PER_WORKER`` greedy descents
#: (at least one), so that each subsample keeps enough rows for its internal
#: folds; from ``m = 5 * ROWS_PER_WORKER`` on the paper's 5 workers run.
ROWS_PER_WORKER = 50

#: :class:`~rflite.greedy.GFCRegressor` makes at most ``s // ROWS_PER_STEP`` greedy steps on a
#: subsample of ``s`` rows (each step fits d + 4 parameters); the paper's 20
#: from 40 rows on.
ROWS_PER_STEP = 2

#: :class:`~rflite.greedy.GFCRegressor` fits the targets divided by their scale
#: (:func:`_target_scale`) and rounded to multiples of ``2**-TARGET_GRID_BITS``
#: (:func:`_scaled_targets`).  The descents amplify a change in the last bits
#: of their targets as much as a change of seed, and ``c * y`` divided by its
#: scale differs from ``y`` divided by its own in those bits; the grid makes
#: the two equal (unless a value lies within rounding of the middle between
#: two grid points: odds of about 1e-8 per row).  The rounding moves a target
#: by at most ``2**-25`` of the scale, far below what a fit resolves.
TARGET_GRID_BITS = 24


def _follow_splits(splits, w, order):
    """``(train, test)`` pairs over the given rows, mapped to the fitted rows.

    The fit drops zero-weight rows, repeats each row by its count
    (:func:`rflite._core.validation.repetition_counts`, copies adjacent) and
    then reorders the rows by ``order``; each copy of a row stays in its
    row's part.  Folds left with an empty part are dropped.
    """
    from rflite._core.validation import repetition_counts

    if w is None:
        owner = np.arange(order.size)
    else:
        keep = w > 0
        reps = repetition_counts(w[keep])  # the fit's own counts
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
                         f"({order.size} rows)")
    return out


def _target_scale(peak, mean_square) -> float:
    r"""The unit :math:`\sigma` of the targets (centred, when the intercept is fitted) of a fit.

    :math:`\sigma = p \sqrt{\tfrac1m \sum_i (y_i / p)^2}`, the root mean
    square of the targets (once centred, their weighted standard deviation:
    the rows are repeated by their integer weights), from ``peak``
    :math:`p = \max_i |y_i|` and ``mean_square``, the correctly rounded mean
    of :func:`_peak_squares` (so that it does not depend on how the rows are
    summed, in memory or in chunks; dividing by :math:`p` keeps tiny and huge
    units from underflowing or overflowing); 1 when every target is 0.  For
    :math:`c > 0`, :math:`\sigma(c y) = c\,\sigma(y)` up to rounding.
    """
    return peak * math.sqrt(mean_square) if peak > 0.0 else 1.0


def _peak_squares(y, peak) -> np.ndarray:
    """``(y / peak)**2``, whose mean :func:`_target_scale` takes (``y**2`` when ``peak`` is 0)."""
    return (np.asarray(y, dtype=np.float64) / (peak if peak > 0.0 else 1.0)) ** 2


def _in_memory_scale(y) -> float:
    """:func:`_target_scale` of an in-memory 1-d ``y`` (its mean square from exact parts)."""
    peak = float(np.max(np.abs(y)))
    return _target_scale(peak, exact_total(exact_sum_parts(_peak_squares(y, peak)), y.size))


def _scaled_targets(y, scale) -> np.ndarray:
    """``y / scale`` rounded to multiples of ``2**-TARGET_GRID_BITS``: what a fit's
    descents and amplitudes see (any block of rows: the Dask fit maps it over chunks)."""
    grid = 2.0 ** TARGET_GRID_BITS
    return np.rint(np.asarray(y, dtype=np.float64) / scale * grid) / grid


def _scaled_eta(eta, scale):
    """The cut-off ``eta`` (units of ``y``; None, the default) in the unit of the fit."""
    return None if eta is None else check_real(eta, "eta", minimum=0.0) / scale


def _unscaled(res, scale):
    """A :class:`~rflite.greedy.GFCResult` fitted on ``y / scale``, in units of ``y``:
    amplitudes, intercept and training RMSE times ``scale``, the CV errors times
    ``scale**2`` (spectra, nu and steps have no unit)."""
    return res._replace(intercept=res.intercept * scale, coef_cos=res.coef_cos * scale,
                        coef_sin=res.coef_sin * scale, train_rmse=res.train_rmse * scale,
                        cv_mse=None if res.cv_mse is None else res.cv_mse * scale ** 2)


def _unscaled_errors(errors, scale) -> tuple:
    """Mean squared errors of a fit on ``y / scale``, in units of ``y**2``."""
    return tuple(float(e) * scale ** 2 for e in errors)


def _fit_gfc(est, X, y, sample_weight=None, *, executor=None):
    """Construct the features and fit their amplitudes; returns ``est``.

    ``executor`` (optional) overrides the constructor's for this fit
    only and is not stored (a live executor or Dask client belongs here).
    """
    from rflite._core.validation import check_sample_weight

    if is_dask_array(X):
        return est._fit_dask(X, y, sample_weight, executor=executor)
    X_raw, y_raw = X, y
    X, Y, w = est._validate_fit(X, y, sample_weight)
    if X.shape[0] < 2 and (w is None or w.sum() < 2):
        raise ValueError(f"X must have at least 2 samples (rows of positive weight) for "
                         f"GFCRegressor, got n_samples={X.shape[0]}")
    check_choice(est.stopping, "stopping", STOPPINGS)
    n_workers = check_int(est.n_workers, "n_workers", minimum=1)
    max_steps = check_int(est.max_steps, "max_steps", minimum=1)
    check_int(est.n_folds, "n_folds", minimum=2)
    # folds for nu on the rows as given (zero weights included), then
    # followed through the dropped, repeated and reordered rows
    splits = None
    if est.nu is None and est.cv is not None:
        X_arr, y_arr = np.asarray(X_raw), np.asarray(y_raw)
        n_raw = X_arr.shape[0]
        cv = est.cv
        if isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
            check_cv(cv)  # the error names cv
            cv = min(int(cv), n_raw)  # at most one fold per row
        splits = _check_splits(cv, X_arr, y_arr)
        w_raw = check_sample_weight(sample_weight, n_raw)
    X, Y = est._repeat_rows(X, Y, w)
    order = _canonical_order(X, Y)
    X, Y = np.ascontiguousarray(X[order]), Y[order]
    if splits is not None:
        splits = _follow_splits(splits, w_raw, order)
    m = X.shape[0]
    est.n_workers_ = min(n_workers, max(1, m // ROWS_PER_WORKER))
    size = m // est.n_workers_ if est.subsample is None else min(
        check_int(est.subsample, "subsample", minimum=1), m)
    est.max_steps_ = min(max_steps, max(1, size // ROWS_PER_STEP))
    _, Yc, _, y_mean = est._center_and_weight(None, Y, None)
    ex = est.executor if executor is None else executor
    guard = _uses_guard(est, m)
    n_estimators = check_int(est.n_estimators, "n_estimators", minimum=1)
    bags, guarded, guard_mse = [], [], []
    for k in range(Yc.shape[1]):
        # every fit works in the unit of this output (TARGET_GRID_BITS)
        scale = _in_memory_scale(Yc[:, k])
        z = _scaled_targets(Yc[:, k], scale)
        if guard:
            *mse, keep = _guard_errors(est, X, z, splits is not None, ex, n_estimators, scale)
            guard_mse.append(tuple(mse))
            if not keep:
                # the constructed features lose to the mean on held-out rows
                bags.append([_intercept_only(X.shape[1], Yc[:, k])])
                guarded.append(True)
                continue
        guarded.append(False)
        bags.append([_unscaled(res, scale) for res in _gfc_fits(
            X, z, _bag_rngs(est._rng(), n_estimators), n_passes=est.n_passes,
            max_steps=est.max_steps_, n_workers=est.n_workers_, nu=est.nu,
            eta=_scaled_eta(est.eta, scale), eps=est.eps, n_folds=est.n_folds,
            subsample=est.subsample, cv=splits, nu_grid=NU_GRID_ESTIMATOR,
            init_scale=GFC_INIT_SCALE, stopping=est.stopping, executor=ex,
            verbose=est.verbose)])
    return _store_bags(est, bags, guarded, guard, guard_mse, y_mean)


def _store_bags(est, bags, guarded, guard, guard_mse, y_mean):
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
    one = getattr(est, "_one_d", True)
    results = [bag[0] for bag in bags]
    est.result_ = results[0] if one else results
    est.results_ = bags[0] if one else bags
    est.weights_ = W
    nus = [bag[0].nu if len(bag) == 1 else tuple(r.nu for r in bag) for bag in bags]
    est.nu_ = nus[0] if one else nus
    steps = [None if bag[0].steps is None else bag[0].steps if len(bag) == 1
             else tuple(r.steps for r in bag) for bag in bags]
    est.steps_ = steps[0] if one else steps
    est.guarded_ = guarded[0] if one else guarded
    est.guard_mse_ = None if not guard else (guard_mse[0] if one else guard_mse)
    est.cv_results_ = None
    if results[0].cv_mse is not None:
        S = results[0].cv_mse
        k = S.shape[0]
        est.cv_results_ = {
            "nu": NU_GRID_ESTIMATOR.copy(), "mean_test_mse": S.mean(axis=0),
            "std_test_mse": S.std(axis=0),
            "se_test_mse": S.std(axis=0, ddof=1) / np.sqrt(k) if k > 1 else
            np.zeros(S.shape[1]),
            "fold_test_mse": S,
        }
    intercepts = y_mean + np.array([np.mean([r.intercept for r in bag]) for bag in bags])
    est._finish(_fourier_map(W), supports, coefs, None, intercepts)
    # GFC's model keeps every constructed column (the bias carries the offset)
    return est


def _uses_guard(est, m) -> bool:
    """Does a fit on ``m`` rows run the hold-out guard (also on Dask)?

    ``mean_guard`` and enough rows: the guard needs
    :data:`~rflite._core.selection.MIN_HOLDOUT_ROWS` held-out rows; on fewer
    rows :meth:`GFCRegressor.fit` cross-validates the whole fit against the
    mean instead.
    """
    return check_bool(est.mean_guard, "mean_guard") and m >= GUARD_MIN_ROWS and \
        m * GUARD_FRACTION >= MIN_HOLDOUT_ROWS


def _guard_errors(est, X, y, use_cv, executor, n_estimators, scale):
    """``(gfc, mean, keep)`` of the guard: held-out MSEs of the bag of GFC fits on 80 % of
    the rows and of the training rows' mean, and whether the fit beats the mean on
    those rows by one standard error of the paired difference of their row errors
    (:func:`rflite._core.selection.beats_mean`).  ``y``: the targets divided by
    ``scale`` (:func:`_scaled_targets`); the MSEs are multiplied back to units of
    the targets before scaling (``scale**2``)."""
    from rflite._core.selection import beats_mean

    from rflite._core.folds import holdout_split

    rng = est._rng()
    tr, va = holdout_split(X.shape[0], GUARD_FRACTION, rng)
    pred = np.zeros(va.size)
    for res in _gfc_fits(X[tr], y[tr], _bag_rngs(rng, n_estimators),
                         **_guard_settings(est, tr.size, use_cv, scale=scale),
                         executor=executor):
        a = np.concatenate([[res.intercept], res.coef_cos, res.coef_sin])
        pred += gfc_design(X[va], res.weights) @ a / n_estimators
    e_fit, e_mean = (pred - y[va]) ** 2, (y[tr].mean() - y[va]) ** 2
    out = _unscaled_errors((np.mean(e_fit), np.mean(e_mean)), scale)
    keep = beats_mean(e_fit, e_mean)
    est._report_guard(out, keep)
    return (*out, keep)


def _guard_settings(est, m, use_cv, *, scale, nu=None, eps=None):
    """Keyword arguments of the guard's GFC fit on its ``m`` training rows (also on Dask),
    whose targets are divided by ``scale``."""
    n_workers = min(est.n_workers_, max(1, m // ROWS_PER_WORKER))
    size = m // n_workers if est.subsample is None else min(int(est.subsample), m)
    return dict(n_passes=est.n_passes,
                max_steps=min(est.max_steps_, max(1, size // ROWS_PER_STEP)),
                n_workers=n_workers, nu=est.nu if nu is None else nu,
                eta=_scaled_eta(est.eta, scale),
                eps=est.eps if eps is None else eps, n_folds=est.n_folds,
                subsample=None if est.subsample is None else size,
                cv=min(5, m) if use_cv else None, nu_grid=NU_GRID_ESTIMATOR,
                init_scale=GFC_INIT_SCALE, stopping=est.stopping)
