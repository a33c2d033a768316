r"""ARFF (:class:`rflite.metropolis.ARFFRegressor`) fitted on a Dask ``X`` (issue 16, private).

The Metropolis loop of Kammonen et al. (*Adaptive random Fourier features
with Metropolis sampling*, 2020, Algorithms 1-2) runs on the client exactly
as in memory (:func:`rflite.metropolis._metropolis`: the same random draws in
the same order, the same accept test); only the chain's products with the
N x K feature matrix :math:`S = e^{i X \omega^T}` become distributed passes,
each a tree sum of per-chunk partial results computed by the in-memory
kernels (:func:`rflite._arff_kernels._features`, ``_gram``, ``_rhs``):

* a proposal: :math:`S'^* S'` (K x K, one ``zherk`` per chunk) and
  :math:`S'^* y`, one pass; the amplitudes
  :math:`(S'^*S' + \lambda N I)\beta' = S'^* y` are solved on the client;
* a refit: the same for the current frequencies, one pass (in memory only
  the Gram rows of the changed features are redone; the full Gram costs the
  same pass here);
* the training error :math:`\frac{1}{Np}\sum |S\beta - y|^2`, one pass.

So an iteration costs two passes (three on refit iterations), and nothing of
size N x K exists anywhere: a task holds one chunk of ``X`` and its features.

Scope: the paper's algorithm on all rows (``early_stopping=False``;
``lam="auto"`` then means the paper's ``lam``), ``method="metropolis"``,
``activation="exp"``, no ``sample_weight``; the other settings are refused
with a ``ValueError`` naming the parameter.  The default early stopping
needs a canonical (sorted) row order and a held-out split of the rows,
which a Dask fit does not have.
"""

from __future__ import annotations

import time

import numpy as np

from rflite._dask import SPLIT_EVERY, _prepare
from rflite._numerics import check_bool, check_choice
from rflite.metropolis import _Chain

__all__ = ["fit_arff"]


def _k_gram(Xb, Yb, omega, activation):
    r"""One chunk's :math:`[S^* S, S^* Y]` flattened to a (1, K^2 + K p) row."""
    from rflite._arff_kernels import _features, _gram, _rhs

    S = _features(np.ascontiguousarray(Xb, dtype=np.float64), omega, activation)
    return np.concatenate([_gram(S).ravel(), _rhs(S, np.asarray(Yb)).ravel()])[None, :]


def _k_error(Xb, Yb, omega, beta, activation):
    r"""One chunk's :math:`\sum |S\beta - Y|^2` as a (1, 1) array."""
    from rflite._arff_kernels import _features

    r = _features(np.ascontiguousarray(Xb, dtype=np.float64), omega, activation) @ beta \
        - np.asarray(Yb)
    return np.array([[float(np.sum(r.real * r.real + r.imag * r.imag))]])


class _DaskChain(_Chain):
    """:class:`rflite.metropolis._Chain` with distributed products (the accept test
    and the state update are the base class's).

    ``X`` (N x d) and ``Y`` (N x p) are Dask arrays with the same row chunks;
    ``omega``, ``beta``, ``rhs`` and the K x K systems live on the client.
    ``pass_seconds`` records ``(kind, seconds)`` per pass.
    """

    def __init__(self, X, Y, K, shift, activation):  # no S: nothing N x K is kept
        from rflite import _arff_kernels

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
        from rflite._arff_kernels import _solve

        G_p, rhs_p = self._gram_pass(omega_p, "proposal")
        beta_p = _solve(G_p, rhs_p, self.shift)
        n_acc = self._accept_test(beta_p, omega_p, u, gamma, omega_max)
        if n_acc:
            self._take_accepted(omega_p, beta_p, rhs_p)
            self.stale = True
        return n_acc

    def refit(self):
        """Amplitudes for the current frequencies (the full Gram, one pass, if they moved)."""
        from rflite._arff_kernels import _solve

        if self.stale:
            self.G, self.rhs = self._gram_pass(self.omega, "refit")
            self.stale = False
        self.beta = _solve(self.G, self.rhs, self.shift)
        self.fresh = True

    def train_error(self) -> float:
        import dask.array as da

        out = da.map_blocks(
            _k_error, self.X, self.Y, omega=self.omega.copy(), beta=self.beta.copy(),
            activation=self.activation, chunks=((1,) * self.X.numblocks[0], (1,)),
            dtype=np.float64, meta=np.empty((0, 0)), token="rflite-arff-error")
        return float(self._sum(out, "train_error")[0]) / (self.N * self.p)


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
    pass), runs :func:`rflite.metropolis._metropolis` with a
    :class:`_DaskChain`, and stores the result as the in-memory fit does.
    Sets ``dask_passes_`` and ``dask_fit_seconds_``.
    """
    from rflite.metropolis import (LAM_PAPER, Standardizer, _blas_limit,
                                   _check_arff_params, _metropolis)

    if check_bool(est.early_stopping, "early_stopping"):
        raise ValueError("early_stopping=True (the default) is not available for Dask arrays "
                         "(it needs a sorted row order and a held-out split of the rows); "
                         "pass early_stopping=False for the paper's algorithm on all rows")
    method = check_choice(est.method, "method", ("metropolis", "fixed"))
    if method != "metropolis":
        raise ValueError(f"method={method!r} is not available for Dask arrays; "
                         "use method='metropolis'")
    if est.activation != "exp":
        raise ValueError(f"activation={est.activation!r} is not available for Dask arrays; "
                         "use activation='exp'")
    X, Y, one_d = _prepare(est, X, y, sample_weight)
    if isinstance(est.lam, str):
        est._check_lam(False)  # validates "auto"
        lam = LAM_PAPER
    else:
        lam = est._check_lam(False)[0]
    K, n_iter, delta, gamma, lam, refit_every, adaptive, burn_in, omega_max, activation = \
        _check_arff_params(X.shape, est.n_features, est.n_iter, est.delta, est.gamma, lam,
                           est.refit_every, est.adaptive_covariance, est.burn_in,
                           est.omega_max, est.activation, None)
    center_y = check_bool(est.fit_intercept, "fit_intercept")
    t0 = time.perf_counter()
    x_std = _standardizer(X, "X")
    t_std = _standardizer(Y, "y")
    if not center_y:
        t_std = Standardizer(np.zeros_like(t_std.mean), t_std.scale)
    Xn = (X - x_std.mean) / x_std.scale
    Tn = (Y - t_std.mean) / t_std.scale
    chains = []

    def chain_class(*args):
        chains.append(_DaskChain(*args))
        return chains[-1]

    with _blas_limit(X.shape[0] * K * K):  # the in-memory fit's BLAS threads
        res = _metropolis(Xn, Tn, one_d, K, n_iter, delta, gamma, lam, refit_every, adaptive,
                          burn_in, omega_max, activation, est._rng(), None, None,
                          chain_class=chain_class)
    est.n_iter_ = res.acceptance.size
    est.best_iteration_ = est.n_iter_
    est.validation_scores_ = None
    est._store(res, x_std, t_std, lam, X.shape[1])
    if one_d:
        est.coef_ = est.coef_[:, 0]
        est.intercept_ = float(est.intercept_[0])
    est.dask_passes_ = chains[0].pass_seconds
    est.dask_fit_seconds_ = time.perf_counter() - t0
    return est
