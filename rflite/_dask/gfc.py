r"""Greedy feature construction on Dask arrays (private).

:meth:`rflite.greedy.GFCRegressor.fit` on a row-chunked Dask ``X``
(:func:`fit_gfc`).  Algorithm 2 of Oglic and Gaertner (2016) is already a
distributed algorithm: each pass runs ``n_workers`` greedy descents on
disjoint random subsamples (the data splitting of parallel SGD), then fits
the amplitudes of all constructed features by ridge regression on every
row.  On Dask:

* a descent is one Dask task holding its subsample (``size`` x d numbers:
  the rows of ``X``, ``y`` and the current model ``f`` evaluated there) and
  running the in-memory :func:`rflite._gfc.descent._greedy_descent`
  unchanged; the ``n_workers`` tasks of a pass run side by side on the
  cluster.  The subsamples are the in-memory ones (a client permutation of
  the row indices) up to :data:`rflite._dask.split.CLIENT_SPLIT_MAX_ROWS`
  rows, then ranges of positions under a keyed bijection
  (:mod:`rflite._dask.split`), so no m-long array is drawn on the client;
* the amplitude fit is one pass: per cross-validation group, the Gram
  matrix of the design :math:`[1, \cos(XW^\top), \sin(XW^\top)]`, its
  right-hand side and the target moments (:func:`rflite._dask.auto.group_stats`);
  every fold's validation error for every :math:`\nu` of the grid follows on
  the client from those sums (:math:`\|A_V a - y_V\|^2 = a^\top G_V a -
  2 a^\top b_V + y_V^\top y_V`), and the final ridge solve uses the sum over
  all groups;
* the current model :math:`f` (line 7 of Algorithm 2) is never stored as an
  m-vector: it is the kept spectra and amplitudes, evaluated on a subsample
  inside its descent task.

The descents amplify a last-bit change of their targets like a change of
seed, so the centring mean and the starting model are correctly rounded
means (:func:`exact_means`: integer parts per chunk, summed exactly) and
the first pass's spectra do not depend on the chunking; later passes start
from amplitudes equal to rounding (summed Gram matrices).  For the same
reason the unit of the targets is the in-memory fit's to the bit (its peak,
a maximum, and its mean square, a correctly rounded mean:
:func:`_dask_target_scale`), and each chunk of the targets is divided by it
and rounded to the grid by the in-memory function
(:func:`rflite._gfc.estimator._scaled_targets`).  The rows are first sorted
into the canonical order of the in-memory fit
(:func:`rflite._dask.split.canonical_rows`, one pass; the folds of ``cv``
taken over the rows as given and followed to their sorted places, as in
memory), and the mean guard runs when it runs in memory and decides by the
same paired rule (:func:`rflite._core.selection.standard_error` of the
differences' moments); so below the sorting limit
(:data:`rflite._dask.split.CANONICAL_MAX_BYTES`) the fit is the in-memory
one, whatever the row order and chunking: the same subsamples, descents,
folds and choices, amplitudes to rounding (tests).
``sample_weight`` is refused (the in-memory fit repeats rows by their
integer weights, which has no chunk-local form), and so is an ``executor``:
the descents are tasks of the active Dask scheduler.
"""

from __future__ import annotations

import numbers

import numpy as np


def _k_descent(Xs, ys, weights, amps, f0, max_steps, eps, n_folds, seed, init_scale):
    """One greedy descent on a materialised subsample: a :class:`DescentResult`."""
    from rflite._gfc.descent import _descent_task, _DescentTask
    from rflite.greedy import gfc_design

    Xs = np.ascontiguousarray(Xs, dtype=np.float64)
    ys = np.asarray(ys, dtype=np.float64).reshape(-1)
    fs = gfc_design(Xs, weights) @ amps if weights.shape[0] else np.full(ys.shape[0], f0)
    return _descent_task(_DescentTask(Xs, ys, fs, max_steps, eps, n_folds, seed, None,
                                      init_scale))


def _k_exact_parts(Yb):
    """(1, k * 2 * buckets) int64: :func:`rflite._core.metrics.exact_sum_parts` of each column."""
    from rflite._core.metrics import exact_sum_parts

    Yb = np.asarray(Yb, dtype=np.float64)
    return np.concatenate([exact_sum_parts(Yb[:, j]).ravel()
                           for j in range(Yb.shape[1])]).reshape(1, -1)


def exact_means(Y) -> np.ndarray:
    """Correctly rounded column means of a Dask (m, k) ``Y``, whatever its chunks.

    The descents amplify a last-bit change of their targets like a change of
    seed, so the centring mean and the starting model must not depend on how
    ``Y`` is chunked: integer parts per chunk, summed exactly over the chunks.
    """
    from rflite._core.metrics import EXACT_SUM_BUCKETS, exact_total

    k = Y.shape[1]
    Y = Y.rechunk({1: -1})
    width = 2 * k * EXACT_SUM_BUCKETS
    parts = Y.map_blocks(_k_exact_parts, chunks=((1,) * Y.numblocks[0], (width,)),
                         dtype=np.int64, meta=np.empty((0, 0), np.int64),
                         token="rflite-exact-parts")
    total = np.asarray(parts.sum(axis=0).compute()).reshape(k, 2, EXACT_SUM_BUCKETS)
    return np.array([exact_total(total[j], Y.shape[0]) for j in range(k)])


def _k_model(Xb, weights, amps):
    """The model ``[1, cos(X W^T), sin(X W^T)] a`` on one chunk (rows,)."""
    from rflite.greedy import gfc_design

    return gfc_design(np.asarray(Xb, dtype=np.float64), weights) @ amps


def _subsamples(X, rng, n_workers, size, subsample):
    """Row selections of the pass's descents (:meth:`rflite.greedy._GFCRun.pass_tasks`'s draws)."""
    from rflite._dask.split import (CLIENT_SPLIT_MAX_ROWS, FeistelPermutation, RowSelection,
                                    position_mask)

    from rflite.greedy import _draw_samples

    m, chunks = X.shape[0], X.chunks[0]
    if m <= CLIENT_SPLIT_MAX_ROWS:
        return _draw_samples(m, rng, n_workers, size, subsample)
    if subsample is None:  # consecutive ranges of one shuffle: a random partition
        perm = FeistelPermutation(m, rng)
        return [RowSelection(position_mask(chunks, perm, j * size, (j + 1) * size), size)
                for j in range(n_workers)]
    # independent draws without replacement: one keyed shuffle each
    return [RowSelection(position_mask(chunks, FeistelPermutation(m, rng), 0, size), size)
            for _ in range(n_workers)]


def _fold_errors(st, folds, fold_ids, nus, prefixes=(None,)):
    """Validation MSE ``(n_folds, len(nus))`` of the ridge amplitudes, from group
    sums: one array per column set of ``prefixes``.

    :func:`rflite.greedy._ridge_cv_prefixes` on the sums: per fold one
    training and one validation Gram matrix serve every column set (a
    principal block; ``None``, all of ``[1, cos, sin]``), and one
    eigendecomposition of a set's training block every :math:`\\nu`.  The
    sets are the kept steps of ``stopping="cv"``
    (:func:`rflite.greedy._prefix_columns`).
    """
    import scipy.linalg

    G, b, yy, n = _bias_gram(st)
    out = [np.empty((len(fold_ids), nus.size)) for _ in prefixes]
    for i, f in enumerate(fold_ids):
        sums = folds.sums(G, f, 1), folds.sums(b, f, 1), folds.sums(G, f, 2), folds.sums(b, f, 2)
        yy_va, n_va = float(folds.sums(yy, f, 2)), float(folds.sums(n, f, 2))
        for table, c in zip(out, prefixes):
            G_tr, b_tr, G_va, b_va = sums if c is None else (
                sums[0][np.ix_(c, c)], sums[1][c], sums[2][np.ix_(c, c)], sums[3][c])
            e, V = scipy.linalg.eigh(G_tr, check_finite=False)
            e = np.maximum(e, 0.0)
            C = V @ ((V.T @ b_tr)[:, None] / (e[:, None] + nus[None, :]))  # (p, n_nu)
            sse = np.einsum("pk,pq,qk->k", C, G_va, C) - 2.0 * (b_va @ C) + yy_va
            table[i] = np.maximum(sse, 0.0) / n_va
    return out


def _bias_gram(st):
    """Per group: Gram matrix and right-hand side of ``[1, A]``, ``y^T y``, row count."""
    n = st["w"]
    a = st["a"].real
    G = np.empty((n.size, a.shape[1] + 1, a.shape[1] + 1))
    G[:, 0, 0], G[:, 0, 1:], G[:, 1:, 0], G[:, 1:, 1:] = n, a, a, st["G"]
    b = np.concatenate([st["y"][:, :1], st["B"][:, :, 0]], axis=1)
    return G, b, st["yy"][:, 0], n


def _gfc_dask_fits(X, y, rngs, *, n_passes, max_steps, n_workers, nu, eta, eps, n_folds,
                   subsample, cv, nu_grid, init_scale, est, progress, stopping="eps"):
    """:func:`rflite.greedy.gfc` on a Dask ``X`` and (m, 1) ``y`` (checked), once per
    generator of ``rngs`` (a bag): a list of ``GFCResult``.

    The fits go in lock step, as in memory (:func:`rflite.greedy._gfc_fits`):
    the descents of pass k of every fit are computed together (one
    ``dask.compute``, up to ``len(rngs) * n_workers`` tasks side by side), and
    each fit draws only from its own generator, so fit j is the one fit with
    ``rngs[j]`` alone.
    """
    import dask

    from rflite._core.validation import check_int, check_real
    from rflite.greedy import ETA_RELATIVE, _lock_step

    m = X.shape[0]
    y_min, y_max = (float(v) for v in dask.compute(y.min(), y.max()))
    if eta is None:
        eta = ETA_RELATIVE * (y_max - y_min)
    eta = check_real(eta, "eta", minimum=0.0)
    size = m // n_workers if subsample is None else check_int(subsample, "subsample", minimum=1,
                                                              maximum=m)
    opts = dict(max_steps=max_steps, n_workers=n_workers, nu=nu, eta=eta, eps=eps,
                n_folds=n_folds if size >= 2 * n_folds else max(2, size // 2),
                subsample=subsample, size=size, cv=cv, nu_grid=nu_grid,
                init_scale=init_scale, stopping=stopping)
    runs = [_DaskGFCRun(X, y, r, opts, est, n_folds) for r in rngs]
    _lock_step(runs, n_passes, lambda tasks: dask.compute(*tasks), progress)
    return [run.result() for run in runs]


class _DaskGFCRun:
    """One Dask GFC fit between passes (:func:`_gfc_dask_fits`); draws from ``rng``
    in the in-memory order: the folds of nu, then per pass the subsamples and
    the descents' seeds."""

    def __init__(self, X, y, rng, opts, est, n_folds):
        import dask.array as da

        from rflite._dask.auto import _Folds, make_folds

        m, d = X.shape
        self.X, self.y, self.rng, self.opts = X, y, rng, opts
        if opts["nu"] is None:
            self.folds = make_folds(opts["cv"], X, y, None, rng, est, n_folds=min(n_folds, m))
        else:  # one group: the sums over all rows
            self.folds = _Folds(da.zeros((m, 1), dtype=np.int64, chunks=(X.chunks[0], (1,))),
                                np.ones((1, 1), dtype=np.int8))
        self.weights, self.amps = np.empty((0, d)), np.zeros(1)
        self.f0 = float(exact_means(y)[0])
        self.n_constructed = self.n_pruned = 0
        self.cv_mse = self.nu_used = self.steps = None
        self.sse = 0.0

    def pass_tasks(self):
        """The descents of the next pass as ``dask.delayed`` tasks."""
        import dask

        from rflite._dask.split import take_rows
        from rflite._core.parallel import spawn_seeds

        o, X, y = self.opts, self.X, self.y
        samples = _subsamples(X, self.rng, o["n_workers"], o["size"], o["subsample"])
        seeds = spawn_seeds(self.rng, o["n_workers"])
        return [dask.delayed(_k_descent, pure=False)(
            take_rows(X, S), take_rows(y, S), self.weights, self.amps, self.f0, o["max_steps"],
            o["eps"], o["n_folds"], seed, o["init_scale"]) for S, seed in zip(samples, seeds)]

    def finish_pass(self, results):
        """The amplitude fit (one pass of group sums); returns the nu CV errors (or None)."""
        from rflite._dask.auto import _baselines, _usable_folds, group_stats
        from rflite._core.linalg import ridge_solve
        from rflite.greedy import (_choose_nu, _choose_steps_nu, _fourier_map, _kept_columns,
                                   _prefix_columns, _step_index)

        o, folds = self.opts, self.folds
        new = [r.weights for r in results]
        weights = np.vstack([self.weights, *new])
        L = weights.shape[0]
        st, _ = group_stats(_fourier_map(weights), self.X, self.y, None, folds,
                            with_features=True, gram=True)
        cols = None  # the columns of [1, cos, sin] the amplitudes are fitted on
        if o["nu"] is not None:
            self.nu_used = o["nu"]
        elif o["stopping"] == "cv":
            # rflite.greedy._amplitude_fit's choice of (steps, nu), on the sums
            fold_ids = _usable_folds(folds, st, range(folds.member.shape[1]))
            step = _step_index(L, new)
            prefixes = [_prefix_columns(step, s) for s in range(1, max(len(w) for w in new) + 1)]
            tables = _fold_errors(st, folds, fold_ids, o["nu_grid"],
                                  [None if c.size == 1 + 2 * L else c for c in prefixes])
            if o["cv"] is None:
                self.steps, self.nu_used = _choose_steps_nu(
                    [t.mean(axis=0) for t in tables], None, o["nu_grid"])
            else:
                self.steps, self.nu_used = _choose_steps_nu(
                    tables, list(_baselines(folds, st, fold_ids)[:, 0]), o["nu_grid"])
                self.cv_mse = tables[self.steps - 1]
            kept, cols = step < self.steps, prefixes[self.steps - 1]
            weights, L = weights[kept], int(kept.sum())
            if kept.all():
                cols = None
        else:
            fold_ids = _usable_folds(folds, st, range(folds.member.shape[1]))
            errors = _fold_errors(st, folds, fold_ids, o["nu_grid"])[0]
            if o["cv"] is None:  # gfc's random folds: the smallest mean error (_best_nu)
                self.nu_used = float(o["nu_grid"][np.argmin(errors.mean(axis=0))])
            else:
                self.cv_mse = errors
                self.nu_used = _choose_nu(
                    errors, list(_baselines(folds, st, fold_ids)[:, 0]), o["nu_grid"])
        G, b, yy, _ = (v.sum(axis=0) for v in _bias_gram(st))
        if cols is not None:
            G, b = G[np.ix_(cols, cols)], b[cols]
        a = ridge_solve(G, b, self.nu_used)
        keep, cols = _kept_columns(a, L, o["eta"])
        self.weights, self.amps = weights[keep], a[cols]
        amps = self.amps
        self.sse = float(amps @ G[np.ix_(cols, cols)] @ amps - 2.0 * amps @ b[cols] + float(yy))
        self.n_constructed += sum(len(w) for w in new)
        self.n_pruned += int(L - keep.sum())
        return self.cv_mse

    def result(self):
        from rflite.greedy import GFCResult

        L, amps, m = self.weights.shape[0], self.amps, self.X.shape[0]
        return GFCResult(weights=self.weights, intercept=float(amps[0]),
                         coef_cos=amps[1:L + 1].copy(), coef_sin=amps[L + 1:].copy(),
                         nu=float(self.nu_used), n_constructed=self.n_constructed,
                         n_pruned=self.n_pruned,
                         train_rmse=float(np.sqrt(max(self.sse, 0.0) / m)), cv_mse=self.cv_mse,
                         steps=self.steps)


def _guard_errors(est, X, y, use_cv, nu, eps, n_estimators, scale):
    """:func:`rflite._gfc.estimator._guard_errors` on Dask: ``(gfc, mean)`` held-out MSEs
    of the bag of ``n_estimators`` fits on 80 % of the rows and of the mean (``y``: the
    targets divided by ``scale``; the MSEs multiplied back by ``scale**2``)."""
    import dask

    from rflite._core.selection import standard_error
    from rflite._dask.split import holdout_rows, take_rows
    from rflite._gfc.estimator import _unscaled_errors
    from rflite.greedy import GUARD_FRACTION, _bag_rngs

    rng = est._rng()
    tr, va = holdout_rows(X.chunks[0], X.shape[0], GUARD_FRACTION, rng)
    Xt, yt = take_rows(X, tr), take_rows(y, tr)
    Xv, yv = take_rows(X, va), take_rows(y, va)[:, 0]
    pred = 0.0
    for res in _gfc_dask_fits(Xt, yt, _bag_rngs(rng, n_estimators),
                              **est._guard_settings(tr.size, use_cv, scale=scale, nu=nu,
                                                    eps=eps), est=est, progress=None):
        a = np.concatenate([[res.intercept], res.coef_cos, res.coef_sin]) / n_estimators
        pred = pred + Xv.map_blocks(_k_model, weights=res.weights, amps=a, drop_axis=1,
                                    dtype=np.float64, meta=np.empty(0),
                                    token="rflite-gfc-model")
    # the held-out rows' predictions, kept: two passes read them
    pred, yv = dask.persist(pred, yv)
    e_fit, e_mean = (pred - yv) ** 2, (float(exact_means(yt)[0]) - yv) ** 2
    mse_fit, mse_mean, mu = (float(v) for v in dask.compute(
        e_fit.mean(), e_mean.mean(), (e_fit - e_mean).mean()))
    # the in-memory rule (rflite._core.selection.beats_mean) from the moments of
    # the paired differences: a second pass for their variance about the mean
    var = float(((e_fit - e_mean - mu) ** 2).mean().compute())
    out = _unscaled_errors((mse_fit, mse_mean), scale)
    keep = bool(mu + standard_error(var, va.size) < 0.0)
    est._report_guard(out, keep)
    return (*out, keep)


def fit_gfc(est, X, y, sample_weight=None, executor=None):
    """:meth:`rflite.greedy.GFCRegressor.fit` on a Dask ``X`` (module notes); returns ``est``."""
    from rflite._core.progress import Progress
    from rflite._core.folds import check_cv
    from rflite._dask.prepare import _prepare
    from rflite._core.validation import MAX_ABS, check_bool, check_choice, check_int, check_real
    from rflite._gfc.estimator import _scaled_eta, _scaled_targets, _unscaled
    from rflite._gfc.estimator import _uses_guard
    from rflite.greedy import (GFC_INIT_SCALE, NU_GRID_ESTIMATOR,
                               ROWS_PER_STEP, ROWS_PER_WORKER, STOPPINGS, _bag_rngs,
                               _intercept_only)

    import dask

    X, Y, one_d = _prepare(est, X, y, sample_weight)  # refuses sample_weight by name
    ex = est.executor if executor is None else executor
    if ex is not None:
        raise ValueError(f"executor={ex!r} is for in-memory fits; on Dask input GFCRegressor's "
                         f"descents are tasks of the active Dask scheduler (pass executor=None)")
    m, d = X.shape
    if m < 2:
        raise ValueError(f"X must have at least 2 samples for GFCRegressor, got n_samples={m}")
    check_choice(est.stopping, "stopping", STOPPINGS)
    n_workers = check_int(est.n_workers, "n_workers", minimum=1)
    max_steps = check_int(est.max_steps, "max_steps", minimum=1)
    n_passes = check_int(est.n_passes, "n_passes", minimum=1)
    n_folds = check_int(est.n_folds, "n_folds", minimum=2)
    nu = None if est.nu is None else check_real(est.nu, "nu", minimum=0.0, strict=True)
    eps = check_real(est.eps, "eps", minimum=0.0)
    cv = est.cv
    if nu is None and isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
        check_cv(cv)  # the error names cv
        cv = min(int(cv), m)
    if isinstance(cv, (list, tuple)):
        raise ValueError("cv as a list of (train, test) index pairs is not available for Dask "
                         "input; pass an int or a splitter")
    est.n_workers_ = min(n_workers, max(1, m // ROWS_PER_WORKER))
    size = m // est.n_workers_ if est.subsample is None else min(
        check_int(est.subsample, "subsample", minimum=1), m)
    est.max_steps_ = min(max_steps, max(1, size // ROWS_PER_STEP))
    fit_intercept = check_bool(est.fit_intercept, "fit_intercept")
    bad_x = (~(abs(X) <= MAX_ABS)).sum()
    bad_y = (~(abs(Y) <= MAX_ABS)).sum()
    bad_x, bad_y = dask.compute(bad_x, bad_y)
    if bad_x:
        raise ValueError(f"X contains NaN, infinity or a value too large (|x| > {MAX_ABS:g}) "
                         f"in {int(bad_x)} entries")
    if bad_y:
        raise ValueError(f"y contains NaN, infinity or a value too large (|y| > {MAX_ABS:g}) "
                         f"in {int(bad_y)} entries")
    X, Y, cv = _canonical(X, Y, cv if nu is None else None, cv)
    y_mean = exact_means(Y) if fit_intercept else np.zeros(Y.shape[1])
    Yc = Y - y_mean
    guard = _uses_guard(est, m)
    use_cv = nu is None and cv is not None
    n_estimators = check_int(est.n_estimators, "n_estimators", minimum=1)
    bags, guarded, guard_mse = [], [], []
    for k in range(Yc.shape[1]):
        yk = Yc[:, k:k + 1]
        # the in-memory fit's unit and targets, whatever the chunks
        scale = _dask_target_scale(yk)
        zk = yk.map_blocks(_scaled_targets, scale, dtype=np.float64)
        if guard:
            *mse, keep = _guard_errors(est, X, zk, use_cv, nu, eps, n_estimators, scale)
            guard_mse.append(tuple(mse))
            if not keep:
                yk_mean, yk_ss = float(exact_means(yk)[0]), float((yk ** 2).mean().compute())
                bags.append([_intercept_only_moments(d, yk_mean, yk_ss, _intercept_only)])
                guarded.append(True)
                continue
        guarded.append(False)
        bags.append([_unscaled(res, scale) for res in _gfc_dask_fits(
            X, zk, _bag_rngs(est._rng(), n_estimators), n_passes=n_passes,
            max_steps=est.max_steps_, n_workers=est.n_workers_, nu=nu,
            eta=_scaled_eta(est.eta, scale), eps=eps, n_folds=n_folds,
            subsample=est.subsample, cv=cv, nu_grid=NU_GRID_ESTIMATOR,
            init_scale=GFC_INIT_SCALE, est=est, progress=Progress(est.verbose, "GFC"),
            stopping=est.stopping)])
    return est._store(bags, guarded, guard, guard_mse, y_mean)


def _canonical(X, Y, cv, cv_given):
    """``(X, Y, cv)`` with the rows in the in-memory fit's canonical order.

    The in-memory fit sorts its rows (:func:`rflite._core.folds._canonical_order`)
    before it draws subsamples and hold-outs, and takes the folds of ``cv``
    over the rows as given, followed to their sorted places
    (:func:`rflite._gfc.estimator._follow_splits`); so does this, with the
    order from :func:`rflite._dask.split.canonical_rows`.  Past that
    function's size limit the rows stay as given.
    """
    from rflite._core.backend import is_dask_array
    from rflite._core.folds import SplitList, cv_splits
    from rflite._dask.split import canonical_rows, reorder_rows
    from rflite._gfc.estimator import _follow_splits

    canon = canonical_rows(X, Y)
    if canon is None:
        return X, Y, cv_given
    m = X.shape[0]
    if cv is not None:
        # a splitter may read y (stratification); KFold reads only the count
        yy = np.zeros(m) if isinstance(cv, numbers.Integral) else np.asarray(
            Y[:, 0].compute() if is_dask_array(Y) else Y[:, 0])
        cv_given = SplitList(_follow_splits(cv_splits(cv, np.zeros((m, 1)), yy), None,
                                            canon.order))
    return reorder_rows(X, canon.order), reorder_rows(Y, canon.order), cv_given


def _dask_target_scale(y) -> float:
    """:func:`rflite._gfc.estimator._target_scale` of a Dask (m, 1) ``y``: the peak and
    the correctly rounded mean square (:func:`exact_means`), the in-memory value."""
    from rflite._gfc.estimator import _peak_squares, _target_scale

    peak = float(abs(y).max().compute())
    squares = y.map_blocks(_peak_squares, peak, dtype=np.float64)
    return _target_scale(peak, float(exact_means(squares)[0]))


def _intercept_only_moments(d, mean, mean_sq, intercept_only):
    """:func:`rflite.greedy._intercept_only` from the moments of ``y`` (no m-vector)."""
    res = intercept_only(d, np.zeros(1))
    return res._replace(intercept=mean, train_rmse=float(np.sqrt(max(mean_sq - mean ** 2, 0.0))))
