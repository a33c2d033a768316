r"""Out of the box: every default and self-tuning estimator against scikit-learn's ridge.

The defaults' acceptance table.  On Friedman-1 (d = 20, the showcase's problem)
and on the six shared real sets (the documented ``load_uci`` splits and
standardisation), every rflite regressor is fitted exactly as a user gets it
(``Estimator(random_state=seed)``, nothing else set) and compared with

* predicting the training mean,
* scikit-learn's ``RidgeCV(alphas=np.logspace(-6, 6, 25))`` on the same
  inputs (efficient leave-one-out over the alphas),
* ``RBFSampler(gamma=1/d, n_components=2000) + RidgeCV`` (random Fourier
  features of the Gaussian kernel with the median-free "scale" bandwidth
  :math:`\gamma = 1/(d\,\mathrm{Var}\,x) = 1/d` for standardised inputs).

The criterion: test MSE no worse than 1.1 x RidgeCV and no worse
than the mean.  scikit-learn is needed for the references (``pip install
"rflite[test]"``); rflite itself does not import it.
"""

from __future__ import annotations

import importlib
import json
import time

import numpy as np

from rflite.experiments import atomic_path, register, write_results

#: (module, class) of every estimator in the table, defaults first.
ESTIMATORS = [
    ("rflite.ridge", "RandomFeatureRidge"),
    ("rflite.htp", "HARFERegressor"),
    ("rflite.imp", "SHRIMPRegressor"),
    ("rflite.bp", "SRFERegressor"),
    ("rflite.metropolis", "ARFFRegressor"),
    ("rflite.greedy", "GFCRegressor"),
    ("rflite.htp", "HARFECV"),
    ("rflite.imp", "SHRIMPCV"),
    ("rflite.bp", "SRFECV"),
]

#: The defaults' criterion: at most this many times RidgeCV's test MSE.
RIDGE_FACTOR = 1.1


def _problems(quick: bool, seed: int):
    from rflite.datasets import UCI_DATASETS, load_uci, make_friedman1, target_friedman1

    X, y = make_friedman1(300 if quick else 500, d=20, noise=1.0, rng=seed)
    X_test, _ = make_friedman1(1000, d=20, rng=seed + 1)
    probs = [("friedman1-d20", X, y, X_test, target_friedman1(X_test))]
    names = ["housing", "propulsion"] if quick else list(UCI_DATASETS)
    for name in names:
        b = load_uci(name, rng=seed)
        probs.append((name, b.X_train, b.y_train, b.X_test, b.y_test))
    return probs


def _references(X, y, X_test, seed):
    from sklearn.kernel_approximation import RBFSampler
    from sklearn.linear_model import RidgeCV
    from sklearn.pipeline import make_pipeline

    alphas = np.logspace(-6, 6, 25)
    preds = {"mean": np.full(X_test.shape[0], y.mean())}
    preds["RidgeCV"] = RidgeCV(alphas=alphas).fit(X, y).predict(X_test)
    rbf = make_pipeline(RBFSampler(gamma=1.0 / X.shape[1], n_components=2000,
                                   random_state=seed), RidgeCV(alphas=alphas))
    preds["RBFSampler+RidgeCV"] = rbf.fit(X, y).predict(X_test)
    return preds


def _fit_one(task):
    """One (problem, estimator) cell: test MSE and fit seconds, or the error message."""
    module, cls, X, y, X_test, y_test, seed = task
    try:
        est = getattr(importlib.import_module(module), cls)
    except (ImportError, AttributeError) as exc:
        return {"error": f"not available ({exc})"}
    t0 = time.perf_counter()
    try:
        model = est(random_state=seed).fit(X, y)
    except Exception as exc:  # a failing default is a result of this table, not a crash
        return {"error": f"{type(exc).__name__}: {exc}"}
    seconds = time.perf_counter() - t0
    mse = float(np.mean((model.predict(X_test) - y_test) ** 2))
    return {"test_mse": mse, "fit_seconds": seconds}


@register("defaults-real", "every default / CV estimator vs RidgeCV and RBFSampler+RidgeCV "
          "on Friedman-1 and the six real sets", "~10 min on 2 cores with --jobs 2 (quick ~2 min)")
def defaults_real(ctx):
    from rflite._core.parallel import map_tasks

    try:
        importlib.import_module("sklearn")
    except ImportError:
        raise ValueError("defaults-real compares with scikit-learn: pip install "
                         "'rflite[test]' (scikit-learn is not a runtime dependency)") from None
    problems = _problems(ctx.quick, ctx.seed)
    rows = []
    for name, X, y, X_test, y_test in problems:
        refs = {k: float(np.mean((p - y_test) ** 2))
                for k, p in _references(X, y, X_test, ctx.seed).items()}
        ctx.log(f"{name}: m={X.shape[0]} d={X.shape[1]}  mean {refs['mean']:.4g}  "
                f"RidgeCV {refs['RidgeCV']:.4g}  RBFSampler+RidgeCV "
                f"{refs['RBFSampler+RidgeCV']:.4g}")
        tasks = [(mod, cls, X, y, X_test, y_test, ctx.seed) for mod, cls in ESTIMATORS]
        for (mod, cls), res in zip(ESTIMATORS, map_tasks(_fit_one, tasks, executor=ctx.jobs)):
            row = dict(problem=name, estimator=cls, **refs, **res)
            if "test_mse" in res:
                row["vs_ridge"] = res["test_mse"] / refs["RidgeCV"]
                row["ok"] = bool(res["test_mse"] <= RIDGE_FACTOR * refs["RidgeCV"]
                                 and res["test_mse"] <= refs["mean"])
                ctx.log(f"  {cls:20s} test MSE {res['test_mse']:10.4g}  "
                        f"{row['vs_ridge']:7.2f}x RidgeCV  fit {res['fit_seconds']:7.2f} s"
                        f"  {'ok' if row['ok'] else 'MISSES'}")
            else:
                ctx.log(f"  {cls:20s} {res['error']}")
            rows.append(row)
    _print_table(ctx, rows, problems)
    with atomic_path(ctx.out / "defaults_real.json") as tmp:
        tmp.write_text(json.dumps(rows, indent=1))
    _write_results(ctx, rows, problems)
    return rows


def _table(rows, problems):
    """The table both outputs show: ``(label, [(test MSE or None, ok)] per problem)``.

    The references (predicting the mean, RidgeCV, RBFSampler + RidgeCV), then
    one row per estimator; ``None`` where an estimator did not run.
    """
    names = [p[0] for p in problems]
    by = {(r["problem"], r["estimator"]): r for r in rows}
    table = [(ref, [(next(r[ref] for r in rows if r["problem"] == n), True) for n in names])
             for ref in ("mean", "RidgeCV", "RBFSampler+RidgeCV")]
    for _, cls in ESTIMATORS:
        cells = [(by[(n, cls)]["test_mse"], by[(n, cls)]["ok"])
                 if "test_mse" in by.get((n, cls), {}) else (None, False) for n in names]
        table.append((cls, cells))
    return table


def _write_results(ctx, rows, problems):
    """The printed table as a results file: test MSE, a row per estimator, a column per problem."""
    table = [[label] + ["n/a" if v is None else (v if ok else f"{v:.4g} (miss)")
                        for v, ok in cells] for label, cells in _table(rows, problems)]
    write_results(ctx, "defaults-real", ["estimator (test MSE)"] + [p[0] for p in problems],
                  table)


def _print_table(ctx, rows, problems):
    """Markdown table: test MSE per estimator (columns: problems)."""
    names = [p[0] for p in problems]
    ctx.log("")
    ctx.log("| estimator | " + " | ".join(names) + " |")
    ctx.log("|---|" + "---|" * len(names))
    for label, cells in _table(rows, problems):
        text = ["n/a" if v is None else f"{v:.4g}" + ("" if ok else " (miss)") for v, ok in cells]
        ctx.log(f"| {label} | " + " | ".join(text) + " |")
    n_ok = sum(bool(r.get("ok")) for r in rows)
    n_run = sum("test_mse" in r for r in rows)
    ctx.log(f"{n_ok} of {n_run} fits within {RIDGE_FACTOR}x RidgeCV and no worse than the mean")
