r"""Choosing a method: every default rflite estimator beside what a user would pick instead.

On the shared real sets (the documented ``load_uci`` splits and
standardisation) and two synthetic targets (Friedman 1 with d = 10 and noise
sd 1, and SHRIMP's f7 with d = 10 and noise sd 0.1; noise-free test targets),
every rflite regressor is fitted exactly as a user gets it,
``Estimator(random_state=seed)``, beside scikit-learn's

* ``RidgeCV(alphas=np.logspace(-6, 6, 25))`` (linear, leave-one-out over the
  alphas),
* ``HistGradientBoostingRegressor(random_state=seed)`` (its defaults, with
  early stopping from 10 000 rows),
* ``Nystroem(gamma=1/d, n_components=min(500, m)) + RidgeCV`` (a low-rank
  Gaussian-kernel ridge; :math:`\gamma = 1/d` is the "scale" bandwidth of
  standardised inputs),
* ``GridSearchCV(KernelRidge(kernel="rbf"))`` over
  :data:`KRR_ALPHAS` x :data:`KRR_GAMMAS` / d, 5-fold (exact kernel ridge,
  cross-validated),
* ``GaussianProcessRegressor(C * RBF + WhiteKernel, normalize_y=True)``
  (hyper-parameters by marginal likelihood, one optimizer start).

The table: test MSE and fit seconds (the whole ``fit``, including each
method's own choice of hyper-parameters).  ``--quick`` runs two real sets and
smaller synthetic samples, and the quick settings of the showcase for the
rflite estimators (fewer features); the full run uses the defaults unchanged.
scikit-learn is needed for its rows (``pip install "rflite[test]"``); without
it only the rflite rows run.
"""

from __future__ import annotations

import importlib
import time

import numpy as np

from rflite.experiments import register, write_results

#: (label, module, class, quick settings) of every rflite estimator, defaults first.
RFLITE = [
    ("RandomFeatureRidge", "rflite.ridge", "RandomFeatureRidge", {"n_features": 300}),
    ("HARFERegressor", "rflite.htp", "HARFERegressor", {"n_features": 1000}),
    ("SHRIMPRegressor", "rflite.imp", "SHRIMPRegressor", {"n_features": 1000}),
    ("SRFERegressor", "rflite.bp", "SRFERegressor", {"n_features": 500}),
    ("ARFFRegressor", "rflite.metropolis", "ARFFRegressor", {}),
    ("GFCRegressor", "rflite.greedy", "GFCRegressor", {}),
]

#: The scikit-learn regressors, in the order of the table.
SKLEARN = ["RidgeCV", "HistGradientBoosting", "Nystroem+RidgeCV", "KernelRidge (RBF, CV)",
           "GaussianProcess (RBF+White)"]

#: Grids of the cross-validated kernel ridge: alpha, and gamma in units of 1/d.
KRR_ALPHAS = (1e-3, 1e-2, 1e-1, 1.0)
KRR_GAMMAS = (0.1, 1.0, 10.0)

#: Real sets of the quick form (the full run uses all six).
QUICK_SETS = ("housing", "propulsion")


def _problems(ctx):
    """``(name, X, y, X_test, y_test)`` for the synthetic targets and every loadable real set."""
    from rflite.datasets import (
        UCI_DATASETS,
        load_uci,
        make_friedman1,
        make_shrimp7,
        target_friedman1,
        target_shrimp7,
    )

    m = 300 if ctx.quick else 1000
    seed = ctx.seed
    X, y = make_friedman1(m, d=10, noise=1.0, rng=seed)
    Xt, _ = make_friedman1(1000, d=10, rng=seed + 1)
    probs = [("friedman1-d10", X, y, Xt, target_friedman1(Xt))]
    X, y = make_shrimp7(m, d=10, noise=0.1, rng=seed)
    Xt, _ = make_shrimp7(1000, d=10, rng=seed + 1)
    probs.append(("shrimp-f7-d10", X, y, Xt, target_shrimp7(Xt)))
    for name in (QUICK_SETS if ctx.quick else tuple(UCI_DATASETS)):
        try:
            b = load_uci(name, rng=seed)
        except FileNotFoundError as exc:
            ctx.log(f"{name}: skipped ({str(exc).splitlines()[0]})")
            continue
        probs.append((name, b.X_train, b.y_train, b.X_test, b.y_test))
    return probs


def _sklearn_model(label, d, m, seed):
    from sklearn.ensemble import HistGradientBoostingRegressor
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, WhiteKernel
    from sklearn.gaussian_process.kernels import ConstantKernel as C
    from sklearn.kernel_approximation import Nystroem
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.linear_model import RidgeCV
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline

    alphas = np.logspace(-6, 6, 25)
    if label == "RidgeCV":
        return RidgeCV(alphas=alphas)
    if label == "HistGradientBoosting":
        return HistGradientBoostingRegressor(random_state=seed)
    if label == "Nystroem+RidgeCV":
        return make_pipeline(Nystroem(gamma=1.0 / d, n_components=min(500, m), random_state=seed),
                             RidgeCV(alphas=alphas))
    if label == "KernelRidge (RBF, CV)":
        grid = {"alpha": list(KRR_ALPHAS), "gamma": [g / d for g in KRR_GAMMAS]}
        return GridSearchCV(KernelRidge(kernel="rbf"), grid, cv=5,
                            scoring="neg_mean_squared_error")
    if label == "GaussianProcess (RBF+White)":
        kernel = C(1.0) * RBF(length_scale=np.sqrt(d)) + WhiteKernel(noise_level=0.1)
        return GaussianProcessRegressor(kernel=kernel, normalize_y=True, random_state=seed)
    raise ValueError(f"unknown scikit-learn method {label!r}")


def _fit_one(task):
    """One (problem, method) cell: test MSE and fit seconds, or the error message."""
    kind, label, X, y, X_test, y_test, seed, quick = task
    try:
        if kind == "rflite":
            _, module, cls, small = next(r for r in RFLITE if r[0] == label)
            model = getattr(importlib.import_module(module), cls)(random_state=seed)
            if quick and small:
                model.set_params(**small)
        else:
            model = _sklearn_model(label, X.shape[1], X.shape[0], seed)
    except (ImportError, AttributeError) as exc:
        return {"error": f"not available ({exc})"}
    t0 = time.perf_counter()
    try:
        model.fit(X, y)
    except Exception as exc:  # a failing fit is a result of this table, not a crash
        return {"error": f"{type(exc).__name__}: {exc}"}
    seconds = time.perf_counter() - t0
    return {"test_mse": float(np.mean((model.predict(X_test) - y_test) ** 2)),
            "fit_seconds": seconds}


@register("compare", "every default rflite estimator vs RidgeCV, gradient boosting, Nystroem, "
          "kernel ridge and a Gaussian process on the real sets and two synthetic targets",
          "~15 min on 2 cores (estimated; quick ~1.5 min); scikit-learn rows need [test]")
def compare(ctx):
    """Fit every method on every problem; print and write one table (test MSE, fit seconds)."""
    from rflite._core.parallel import map_tasks

    methods = [("rflite", label) for label, *_ in RFLITE]
    try:
        importlib.import_module("sklearn")
    except ImportError:
        ctx.log("compare: scikit-learn is not installed, so its regressors are skipped "
                "(pip install 'rflite[test]'); running the rflite rows only")
    else:
        methods += [("sklearn", label) for label in SKLEARN]
    if ctx.quick:
        ctx.log("(quick: two real sets, 300 synthetic training rows, fewer rflite features)")
    rows = []
    for name, X, y, X_test, y_test in _problems(ctx):
        ctx.log(f"{name}: m = {X.shape[0]}, d = {X.shape[1]}, {X_test.shape[0]} test rows")
        tasks = [(kind, label, X, y, X_test, y_test, ctx.seed, ctx.quick)
                 for kind, label in methods]
        for (kind, label), res in zip(methods, map_tasks(_fit_one, tasks, executor=ctx.jobs)):
            if "test_mse" in res:
                ctx.log(f"  {label:28s} test MSE {res['test_mse']:10.4g}  "
                        f"fit {res['fit_seconds']:7.2f} s")
            else:
                ctx.log(f"  {label:28s} {res['error']}")
            rows.append(dict(problem=name, method=label, library=kind, **res))
    _print_table(ctx, rows)
    write_results(ctx, "compare", ["data set", "method", "test MSE", "fit s"],
                  [[r["problem"], r["method"], r.get("test_mse", r.get("error")),
                    r.get("fit_seconds")] for r in rows])
    return rows


def _print_table(ctx, rows):
    ctx.log("")
    ctx.log(f"{'data set':16s} {'method':28s} {'test MSE':>10s} {'fit s':>8s}")
    for r in rows:
        if "test_mse" in r:
            ctx.log(f"{r['problem']:16s} {r['method']:28s} {r['test_mse']:10.4g} "
                    f"{r['fit_seconds']:8.2f}")
        else:
            ctx.log(f"{r['problem']:16s} {r['method']:28s} {'n/a':>10s} {'':>8s}")
    ctx.log("(test MSE against noise-free targets for the synthetic sets and on the "
            "standardised target for the real ones: 1.0 is about predicting the mean)")
