r"""SRFE (:class:`rflite.bp.SRFERegressor`) fitted on a Dask ``X`` (issue 16, private).

Split out of :mod:`rflite._dask` like the SHRIMP and HARFE machinery.  The
fit is the in-memory one with the feature matrix replaced by the distributed
operator: one pass validates ``X`` and ``y`` and gives the (weighted) column
means and sums of squares (centring, ``normalize``), then
:func:`rflite.bp._srfe` solves

.. math::

    \min_c \|c\|_1 \quad \text{s.t.} \quad \|\sqrt{W}(A_c D c - y_c)\|_2
    \le \eta \sqrt{\textstyle\sum_i w_i}

(Def. 4 of Xie, Shi, Schaeffer and Ward 2022; Hashemi et al. 2023 for SRFE;
:math:`A_c` the centred features, :math:`D` the column scaling, ``W`` the
``sample_weight``) on :func:`rflite._dask.as_linear_operator`, whose every
product is one pass over the data.  The BPDN solvers were written for
underdetermined systems: they keep length-m vectors (the residual, ``A c``,
the support columns) on the client, so this suits m up to what the client
holds as a few vectors and N columns, not the m = 10^8 of HARFE on Dask.

``eta="auto"`` (the default) and :class:`rflite.bp.SRFECV` choose ``eta``
by following one homotopy path per fold on the dense fold matrices; on Dask
that is refused with a ``ValueError`` telling to pass ``eta``.
"""

from __future__ import annotations

import math
import time

import numpy as np

from rflite._dask import (
    DaskFeatureOperator, _centring, _prepare, _weighted_rows, as_linear_operator)
from rflite._numerics import check_bool, check_int, check_real


def fit_srfe(est, X, y, sample_weight=None):
    """:meth:`rflite.bp.SRFERegressor.fit` on a Dask ``X`` (and ``y``, ``sample_weight``).

    Same centring, row weighting (:math:`\\sqrt{w}` inside the chunk tasks),
    column normalisation and noise level :math:`\\sigma = \\eta\\sqrt{\\sum_i
    w_i}` as the dense in-memory fit, so the same BPDN problem up to the
    order of the sums over rows.  Sets what the in-memory fit sets, plus
    ``dask_passes_`` and ``dask_fit_seconds_``.
    """
    from rflite.bp import _srfe, _warn_unreachable

    if est._search() is not None:
        what = "SRFECV" if hasattr(est, "cv") else "eta='auto'"
        raise ValueError(f"{what} chooses eta from homotopy paths on dense fold matrices, "
                         "which is not available for Dask arrays; pass eta=<float> (e.g. "
                         "the noise standard deviation, or the eta_ of an in-memory fit on "
                         "a sample)")
    X, Y, one_d, W, total = _prepare(est, X, y, sample_weight, weights=True)
    m = X.shape[0]
    n_features = check_int(est.n_features, "n_features", minimum=1)
    n_columns = n_features * (2 if est.activation == "fourier" else 1)
    if isinstance(est.eta, str):
        raise ValueError(f"eta must be a float >= 0 or 'auto', got {est.eta!r}")
    eta = check_real(est.eta, "eta", minimum=0.0)
    est._check_post(n_columns)
    normalize = check_bool(est.normalize, "normalize")
    check_bool(est.matrix_free, "matrix_free")  # Dask fits are always matrix-free
    fit_intercept = check_bool(est.fit_intercept, "fit_intercept")
    rng = est._rng()
    fmap = est._draw_features(X.shape[1], rng)
    t0 = time.perf_counter()
    y_mean, a_mean, scale, first = _centring(fmap, X, Y, W, total, fit_intercept, normalize)
    op = DaskFeatureOperator(fmap, X, col_mean=a_mean, col_scale=scale, row_weight=W)
    A = as_linear_operator(op)
    # the solvers keep length-m vectors on the client (module notes)
    Yc = np.asarray(_weighted_rows(Y - y_mean if fit_intercept else Y, W).compute())
    supports, coefs, results = [], [], []
    for k in range(Yc.shape[1]):
        # sigma = eta * sqrt(rows) in the solver: make it eta * sqrt(sum w)
        res = _srfe(A, Yc[:, k], eta=eta * math.sqrt(total / m), s=est.s, refit=est.refit,
                    lam=est.lam, tol=est.tol, max_iter=est.max_iter, polish=True)
        _warn_unreachable(res.bpdn, eta * math.sqrt(total), total)
        coef = res.coef * scale
        support = np.flatnonzero(coef)
        results.append(res)
        supports.append(support)
        coefs.append(coef[support])
    if hasattr(est, "cv_results_"):
        del est.cv_results_
    est.eta_ = eta if one_d else np.full(Y.shape[1], eta)
    est.s_ = est.s if one_d else [est.s] * Y.shape[1]
    est.result_ = results[0] if one_d else results
    est.n_iter_ = results[0].bpdn.n_iter if one_d else [r.bpdn.n_iter for r in results]
    est.dask_passes_ = first.pass_seconds + op.pass_seconds
    est.dask_fit_seconds_ = time.perf_counter() - t0
    return est._finish(fmap, supports, coefs, a_mean, y_mean)
