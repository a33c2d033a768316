r"""ARFF (:class:`rflite.metropolis.ARFFRegressor`) fitted on a Dask ``X`` (private).

The Metropolis loop of Kammonen et al. (*Adaptive random Fourier features
with Metropolis sampling*, 2020, Algorithms 1-2) runs on the client exactly
as in memory (:func:`rflite._arff.chain._metropolis`: the same random draws in
the same order, the same accept test); only the chain's products with the
N x K feature matrix :math:`S = e^{i X \omega^T}` become distributed passes,
each a tree sum of per-chunk partial results computed by the in-memory
kernels (:func:`rflite._arff.kernels._features`, ``_gram``, ``_rhs``):

* a proposal: :math:`S'^* S'` (K x K, one ``zherk`` per chunk) and
  :math:`S'^* y`, one pass; the amplitudes
  :math:`(S'^*S' + \lambda N I)\beta' = S'^* y` are solved on the client;
* a refit: the same for the current frequencies, one pass (in memory only
  the Gram rows of the changed features are redone; the full Gram costs the
  same pass here);
* the training error :math:`\frac{1}{Np}\sum |S\beta - y|^2`, one pass.

So an iteration costs two passes (three on refit iterations), and nothing of
size N x K exists anywhere: a task holds one chunk of ``X`` and its features.

The default early stopping runs too (:func:`_fit_early`): the hold-out split
of the in-memory fit (drawn on the client over the row indices, so the
index arrays are m-long there; past
:data:`rflite._dask.split.CLIENT_SPLIT_MAX_ROWS` rows a keyed bijection of
the indices evaluated chunk by chunk instead, with the same validation
count: :func:`rflite._dask.split.holdout_rows`), the chain on the training
rows, and after every refit one pass over the validation rows scoring the current
frequencies for every ``lam`` of the grid at once
(:class:`_DaskValidationMonitor`: the per-row errors stay on the workers,
only their sums and sums of squares travel, and the ``"1se"`` rule is
applied to those moments by :func:`rflite._core.selection.choose_stats`).  As
in memory, the rows are first sorted into the canonical order
(:func:`rflite._dask.split.canonical_rows`: one pass, the distinct rows
merged on the client), so the split does not depend on the row order or
the chunking; past :data:`rflite._dask.split.CANONICAL_MAX_BYTES` of
distinct rows they stay in the order given.

:class:`~rflite.metropolis.ARFFClassifier` (:func:`fit_arff_classifier`)
runs the same chain on one-hot targets built lazily from the labels (the
classes from one pass), unscaled as in memory.

Scope: ``method="metropolis"``, ``activation="exp"``, no ``sample_weight``;
the other settings are refused with a ``ValueError`` naming the parameter.
"""

from __future__ import annotations

import functools
import time

import numpy as np

from rflite._dask.operator import SPLIT_EVERY
from rflite._dask.prepare import _prepare
from rflite._core.validation import DataConversionWarning, check_bool, check_choice
from rflite._arff.chain import _Chain, _ValidationMonitor
from rflite._core.exceptions import warn

__all__ = ["fit_arff", "fit_arff_classifier"]


def _k_gram(Xb, Yb, omega, activation):
    r"""One chunk's :math:`[S^* S, S^* Y]` flattened to a (1, K^2 + K p) row."""
    from rflite._arff.kernels import _features, _gram, _rhs

    S = _features(np.ascontiguousarray(Xb, dtype=np.float64), omega, activation)
    return np.concatenate([_gram(S).ravel(), _rhs(S, np.asarray(Yb)).ravel()])[None, :]


def _k_error(Xb, Yb, omega, beta, activation):
    r"""One chunk's :math:`\sum |S\beta - Y|^2` as a (1, 1) array."""
    from rflite._arff.kernels import _features

    r = _features(np.ascontiguousarray(Xb, dtype=np.float64), omega, activation) @ beta \
        - np.asarray(Yb)
    return np.array([[float(np.sum(r.real * r.real + r.imag * r.imag))]])


class _DaskChain(_Chain):
    """:class:`rflite._arff.chain._Chain` with distributed products (the accept test
    and the state update are the base class's).

    ``X`` (N x d) and ``Y`` (N x p) are Dask arrays with the same row chunks;
    ``omega``, ``beta``, ``rhs`` and the K x K systems live on the client.
    ``pass_seconds`` records ``(kind, seconds)`` per pass.
    """

    def __init__(self, X, Y, K, shift, activation):  # no S: nothing N x K is kept
        from rflite._arff import kernels as _arff_kernels

        self.X, self.Y, self.shift, self.activation = X, Y, shift, activation
        self.N, self.p = X.shape[0], Y.shape[1]
        self.pass_seconds = []
        self.omega = np.zeros((K, X.shape[1]))
        self.accept = np.empty(K, dtype=np.bool_)
        self.parallel_accept = K >= _arff_kernels.PARALLEL_MIN_FEATURES
        self.G, self.rhs = self._gram_pass(self.omega, "gram")
        self.beta = _arff_kernels._solve(self.G, self.rhs, shift)
        self.stale = False
        self.fresh = True
        self.n_refits = 0

    def _sum(self, out, kind):
        t0 = time.perf_counter()
        total = np.asarray(out.sum(axis=0, split_every=SPLIT_EVERY).compute())
        self.pass_seconds.append((kind, time.perf_counter() - t0))
        return total

    def _gram_pass(self, omega, kind):
        import dask.array as da

        K, p = omega.shape[0], self.p
        length = K * K + K * p
        out = da.map_blocks(
            _k_gram, self.X, self.Y, omega=omega, activation=self.activation,
            chunks=((1,) * self.X.numblocks[0], (length,)), dtype=np.complex128,
            meta=np.empty((0, 0), np.complex128), token="rflite-arff-gram")
        total = self._sum(out, kind)
        return total[:K * K].reshape(K, K), total[K * K:].reshape(K, p)

    def step(self, omega_p, u, gamma, omega_max) -> int:
        """Proposal amplitudes (one pass), the accept test; returns the accept count."""
        from rflite._arff.kernels import _solve

        G_p, rhs_p = self._gram_pass(omega_p, "proposal")
        beta_p = _solve(G_p, rhs_p, self.shift)
        n_acc = self._accept_test(beta_p, omega_p, u, gamma, omega_max)
        if n_acc:
            self._take_accepted(omega_p, beta_p, rhs_p)
            self.stale = True
        return n_acc

    def refit(self):
        """Amplitudes for the current frequencies (the full Gram, one pass, if they moved)."""
        from rflite._arff.kernels import _solve

        if self.stale:
            self.G, self.rhs = self._gram_pass(self.omega, "refit")
            self.stale = False
        self.beta = _solve(self.G, self.rhs, self.shift)
        self.fresh = True
        self.n_refits += 1

    def train_error(self) -> float:
        import dask.array as da

        out = da.map_blocks(
            _k_error, self.X, self.Y, omega=self.omega.copy(), beta=self.beta.copy(),
            activation=self.activation, chunks=((1,) * self.X.numblocks[0], (1,)),
            dtype=np.float64, meta=np.empty((0, 0)), token="rflite-arff-error")
        return float(self._sum(out, "train_error")[0]) / (self.N * self.p)


def _k_val_moments(Xb, Yb, omega, B, p, part):
    r"""Per grid point j: the sums over a chunk's rows of :math:`e_i` and :math:`e_i^2`,
    :math:`e_i` the mean over the p outputs of :math:`|\mathrm{Re}(S B_j)_i - y_i|^2`
    (``part="real"``) or :math:`|(S B_j)_i - y_i|^2`; a (1, 2J) row."""
    from rflite._arff.kernels import _features

    P = _features(np.ascontiguousarray(Xb, dtype=np.float64), omega, "exp") @ B
    Y = np.asarray(Yb, dtype=np.float64)
    J = P.shape[1] // p
    out = np.empty(2 * J)
    for j in range(J):
        r = P[:, j * p:(j + 1) * p]
        r = (r.real - Y) if part == "real" else (r - Y)
        e = (r.real * r.real + r.imag * r.imag).mean(axis=1) if np.iscomplexobj(r) else \
            (r * r).mean(axis=1)
        out[j], out[J + j] = e.sum(), (e * e).sum()
    return out[None, :]


class _DaskValidationMonitor(_ValidationMonitor):
    """:class:`rflite._arff.chain._ValidationMonitor` scoring on Dask validation rows.

    One pass per scored iteration: the validation errors of every ``lam`` of
    the grid (or of the chain's amplitudes) as sums and sums of squares of
    the per-row errors, from which the mean and standard error of
    ``"1se"`` follow (the in-memory monitor keeps the per-row matrix).
    """

    def __init__(self, Xv, Yv, activation, n_iter_no_change, tol, part, progress, n_iter,
                 lam_grid=None):
        # the base class's state and stop rule; its NumPy validation arrays are
        # replaced by the Dask ones (a 1-row stand-in avoids computing them)
        super().__init__(np.zeros((1, Xv.shape[1])), np.zeros((1, Yv.shape[1])), activation,
                         n_iter_no_change, tol, part, progress, n_iter, lam_grid)
        self.Xv, self.Yv = Xv, Yv

    def _moments(self, omega, Bs):
        import dask.array as da

        p = self.Yv.shape[1]
        B = np.hstack(Bs)
        J = len(Bs)
        out = da.map_blocks(
            _k_val_moments, self.Xv, self.Yv, omega=omega.copy(), B=B, p=p, part=self.part,
            chunks=((1,) * self.Xv.numblocks[0], (2 * J,)), dtype=np.float64,
            meta=np.empty((0, 0)), token="rflite-arff-validation")
        tot = np.asarray(out.sum(axis=0, split_every=SPLIT_EVERY).compute())
        return tot[:J], tot[J:]

    def record(self, i, omega, beta, train_error, G=None, rhs=None, N=None) -> bool:
        from rflite._core.selection import choose_stats
        from rflite._arff.chain import LAM_RULE

        n = self.Xv.shape[0]
        lam = None
        if self.lam_grid is not None:
            # the in-memory _lam_scores: one eigendecomposition serves every lam
            e, V = np.linalg.eigh(G)
            e = np.maximum(e, 0.0)
            proj = V.conj().T @ rhs
            s1, s2 = self._moments(omega, [V @ (proj / (e + lam_j * N)[:, None])
                                           for lam_j in self.lam_grid])
            mean = s1 / n
            with np.errstate(invalid="ignore", divide="ignore"):
                se = np.sqrt(np.maximum(s2 - n * mean ** 2, 0.0) / (n - 1) / n) if n > 1 \
                    else np.zeros_like(mean)
            # the grid from the simplest model (largest lam), as in memory
            c = choose_stats(mean[::-1], se[::-1], rule=LAM_RULE)
            j = len(self.lam_grid) - 1 - c.index
            score, lam = float(c.mean[c.index]), float(self.lam_grid[j])
        else:
            s1, _ = self._moments(omega, [beta])
            score = float(s1[0] / n)
        return self._update(i, score, lam, omega, train_error)


def _standardizer(A, name):
    """Algorithm 3's training mean and sd (ddof 1) of a Dask ``A`` (N x k), one pass;
    NaN / inf named by ``name``."""
    import dask
    import dask.array as da

    from rflite.metropolis import SD_FLOOR, Standardizer

    bad = (~da.isfinite(A)).sum()
    mean, sd, n_bad = dask.compute(A.mean(axis=0), A.std(axis=0, ddof=1), bad)
    if n_bad:
        raise ValueError(f"{name} contains NaN or infinite values ({int(n_bad)} entries)")
    return Standardizer(np.asarray(mean), np.where(np.asarray(sd) < SD_FLOOR, 1.0, sd))


def fit_arff(est, X, y, sample_weight=None):
    """:meth:`rflite.metropolis.ARFFRegressor.fit` on a Dask ``X`` (and ``y``).

    Standardises ``X`` and ``y`` by Algorithm 3 (means and sds from one
    pass), runs :func:`rflite._arff.chain._metropolis` with a
    :class:`_DaskChain`, and stores the result as the in-memory fit does.
    Sets ``dask_passes_`` and ``dask_fit_seconds_``.
    """
    early = _check_settings(est)
    X, Y, one_d = _prepare(est, X, y, sample_weight)
    _fit_targets(est, X, Y, one_d, early,
                 center_y=check_bool(est.fit_intercept, "fit_intercept"))
    if one_d:
        est.coef_ = est.coef_[:, 0]
        est.intercept_ = float(est.intercept_[0])
    est.mean_model_ = False if one_d else np.zeros(Y.shape[1], dtype=bool)
    return est


def fit_arff_classifier(est, X, y, sample_weight=None):
    """:meth:`rflite.metropolis.ARFFClassifier.fit` on a Dask ``X`` (and labels ``y``).

    The classes come from one pass over ``y`` (``da.unique``); the one-hot
    targets are built lazily chunk by chunk (never on the client) and fitted
    unscaled, as in memory, by the regressor's distributed chain.  Integer
    labels only (Dask holds numeric arrays); ``sample_weight`` is refused.
    """
    import dask
    import dask.array as da

    early = _check_settings(est)
    X, Y, one_d = _prepare(est, X, y, sample_weight)
    if not one_d:
        if Y.shape[1] != 1:
            raise ValueError(f"y must be 1-d with one label per row of X, got shape {y.shape}")
        warn(  # as the in-memory _check_labels
            "A column-vector y was passed when a 1d array was expected; flattened to "
            f"shape ({y.shape[0]},)", DataConversionWarning)
    labels = Y[:, 0]
    classes, n_bad, n_frac = dask.compute(
        da.unique(labels), (~da.isfinite(labels)).sum(), (labels != da.round(labels)).sum())
    if n_bad:
        raise ValueError("y contains NaN or infinite values; class labels must be finite")
    if n_frac:
        raise ValueError(
            "Unknown label type: y is continuous (non-integral float labels); "
            "ARFFClassifier needs class labels, use ARFFRegressor for regression")
    if classes.size < 2:
        raise ValueError(f"y must contain at least 2 classes, got {classes.size}")
    # labels of an integer y were made float64 by check_dask_y: give them back
    # their own dtype (exact: they are integral)
    est.classes_ = classes.astype(y.dtype) if np.dtype(y.dtype).kind in "biu" else classes
    T = (labels[:, None] == classes[None, :]).astype(np.float64)
    return _fit_targets(est, X, T, False, early, center_y=None)


def _check_settings(est) -> bool:
    """Refuse, by name, the settings without a Dask fit (before any pass); returns
    ``early_stopping``."""
    early = check_bool(est.early_stopping, "early_stopping")
    method = check_choice(est.method, "method", ("metropolis", "fixed"))
    if method != "metropolis":
        raise ValueError(f"method={method!r} is not available for Dask arrays; "
                         "use method='metropolis'")
    if est.activation != "exp":
        raise ValueError(f"activation={est.activation!r} is not available for Dask arrays; "
                         "use activation='exp'")
    return early


def _fit_targets(est, X, Y, one_d, early, *, center_y):
    """Standardise, run the distributed chain, store: the in-memory ``_fit_targets``.

    ``early``: ``early_stopping`` as :func:`_check_settings` returned it;
    ``center_y``: True centres and scales ``Y``, False only scales it, None
    leaves it as it is (the classifier's one-hot targets).
    """
    from rflite._core.progress import Progress
    from rflite.metropolis import Standardizer, _blas_limit, _check_arff_params, _metropolis

    lam, lam_grid = est._check_lam(early)
    K, n_iter, delta, gamma, lam, refit_every, adaptive, burn_in, omega_max, activation = \
        _check_arff_params(X.shape, est.n_features, est.n_iter, est.delta, est.gamma, lam,
                           est.refit_every, est.adaptive_covariance, est.burn_in,
                           est.omega_max, est.activation, None)
    t0 = time.perf_counter()
    if early:
        # the in-memory fit's canonical row order before anything is computed
        # from the rows: its hold-out is then drawn over the same positions
        X, Y = _canonical(X, Y)
    x_std = _standardizer(X, "X")
    t_std = None
    if center_y is not None:
        t_std = _standardizer(Y, "y")
        if not center_y:
            t_std = Standardizer(np.zeros_like(t_std.mean), t_std.scale)
    Xn = (X - x_std.mean) / x_std.scale
    Tn = Y if t_std is None else (Y - t_std.mean) / t_std.scale
    chains = []

    def chain_class(*args):
        chains.append(_DaskChain(*args))
        return chains[-1]

    rng = est._rng()
    with _blas_limit(X.shape[0] * K * K):  # the in-memory fit's BLAS threads
        if early:
            res, lam = _fit_early(est, Xn, Tn, one_d, K, n_iter, gamma, lam, lam_grid,
                                  refit_every, adaptive, burn_in, omega_max, rng, chain_class,
                                  Progress(est.verbose, type(est).__name__))
        else:
            res = _metropolis(Xn, Tn, one_d, K, n_iter, delta, gamma, lam, refit_every,
                              adaptive, burn_in, omega_max, activation, rng, None, None,
                              chain_class=chain_class)
            est.n_iter_ = res.acceptance.size
            est.best_iteration_ = est.n_iter_
            est.validation_scores_ = None
    est._store(res, x_std, t_std, lam, X.shape[1])
    est.dask_passes_ = [p for c in chains for p in c.pass_seconds]
    est.dask_fit_seconds_ = time.perf_counter() - t0
    return est


def _canonical(X, Y):
    """``(X, Y)`` in the in-memory fits' canonical row order
    (:func:`rflite._dask.split.canonical_rows`; as given past its size limit)."""
    from rflite._dask.split import canonical_rows, reorder_rows

    canon = canonical_rows(X, Y)
    if canon is None:
        return X, Y
    return reorder_rows(X, canon.order), reorder_rows(Y, canon.order)


def _fit_early(est, Xn, Tn, one_d, K, n_iter, gamma, lam, lam_grid, refit_every, adaptive,
               burn_in, omega_max, rng, chain_class, progress):
    """:meth:`rflite.metropolis._ARFFBase._fit_early_stopping` on Dask: ``(result, lam)``."""
    from rflite._arff.kernels import _solve
    from rflite._dask.split import holdout_rows, take_rows
    from rflite.metropolis import ARFFResult, _check_arff_params, _metropolis

    N = Xn.shape[0]
    split = functools.partial(holdout_rows, Xn.chunks[0])
    train, val, n_no_change, tol, delta = est._early_setup(Xn.shape, rng, split=split)
    Xt, Tt, Xv, Tv = (take_rows(Xn, train), take_rows(Tn, train), take_rows(Xn, val),
                      take_rows(Tn, val))
    # the training part's checks, as arff() makes them in memory (delta above)
    delta = _check_arff_params(Xt.shape, K, n_iter, delta, gamma, lam, refit_every, adaptive,
                               burn_in, omega_max, "exp", None)[2]
    monitor = _DaskValidationMonitor(Xv, Tv, "exp", n_no_change, tol, est._validation_part,
                                     progress, n_iter, lam_grid)
    res = _metropolis(Xt, Tt, one_d, K, n_iter, delta, gamma, lam, refit_every, adaptive,
                      burn_in, omega_max, "exp", rng, None, monitor, chain_class=chain_class)
    omega = monitor.best_omega
    est.n_iter_ = res.acceptance.size
    est.best_iteration_ = monitor.best_iteration
    est.validation_scores_ = np.array(monitor.scores)
    est.validation_iterations_ = np.array(monitor.iterations, dtype=np.int64)
    best_lam = lam if monitor.best_lam is None else monitor.best_lam
    # the amplitudes of the best frequencies on all rows: one more pass
    chain = chain_class(Xn, Tn, K, best_lam * N, "exp")
    G, rhs = chain._gram_pass(omega, "final")
    beta = _solve(G, rhs, best_lam * N)
    return ARFFResult(omega, beta[:, 0] if one_d else beta, res.acceptance, res.train_error,
                      res.covariance), best_lam

