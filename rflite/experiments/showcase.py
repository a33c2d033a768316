"""The showcase: every rflite method on the same two problems, one table, two figures.

``python -m rflite`` (no arguments) runs this with the defaults below.  The
problems are HARFE's Friedman-1 variant on :math:`[0,1]^{20}` (five active
inputs, noise sd 1, noise-free test targets) and the airfoil data with 36
appended N(0,1) noise columns (d = 41, the documented split and
standardisation; loaded from the data directory of
:func:`rflite.datasets.load_uci` or the copy shipped with rflite).  Every
method is the estimator exactly as a user gets it,
``Estimator(random_state=seed)``: the defaults choose their own regularisation
from the training rows, so nothing is tuned here (``--quick`` only shrinks
the feature counts).  The paper-scale settings are in the per-method
experiments (``python -m rflite list``).
"""

from __future__ import annotations

import importlib
import time
from typing import NamedTuple

import numpy as np

from rflite.datasets import load_uci, make_friedman1, target_friedman1
from rflite.experiments import atomic_path, register, write_results


class Problem(NamedTuple):
    name: str
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    active: tuple  # 0-based indices of the inputs that matter (for the plots)
    noise: float  # noise level in y's units: SRFE's eta (residual per sample)


class Method(NamedTuple):
    name: str
    module: str  # imported lazily, so one missing module skips one row
    cls: str  # the estimator class, constructed with its defaults
    quick: dict = {}  # smaller settings for --quick only (the test suite's smoke run)


def _problems(quick: bool, seed: int) -> list[Problem]:
    m = 300 if quick else 500
    X, y = make_friedman1(m, d=20, noise=1.0, rng=seed)
    X_test, _ = make_friedman1(1000, d=20, rng=seed + 1)
    friedman = Problem("friedman1-d20", X, y, X_test, target_friedman1(X_test),
                       tuple(range(5)), 1.0)
    air = load_uci("airfoil", rng=seed)
    # noise level of airfoil (standardised target) unknown; 0.5 is about the
    # residual of the published models (test MSE 0.27-0.45)
    airfoil = Problem("airfoil+36 noise", air.X_train, air.y_train, air.X_test, air.y_test,
                      tuple(range(5)), 0.5)
    return [friedman, airfoil]



#: Every method exactly as a user gets it: ``Estimator(random_state=seed)``.
#: Each default chooses its own regularisation from the training rows (a
#: hold-out split or leave-one-out; see each class's docstring), so nothing
#: is tuned here.  ``--quick`` shrinks the feature counts only.
METHODS = [
    Method("RF ridge (baseline)", "rflite.ridge", "RandomFeatureRidge", {"n_features": 300}),
    Method("HARFE", "rflite.htp", "HARFERegressor", {"n_features": 1000}),
    Method("SHRIMP", "rflite.imp", "SHRIMPRegressor", {"n_features": 1000}),
    Method("SRFE", "rflite.bp", "SRFERegressor", {"n_features": 500}),
    Method("ARFF", "rflite.metropolis", "ARFFRegressor", {}),
    Method("GFC", "rflite.greedy", "GFCRegressor", {}),
]


def _make(meth: Method, module, quick: bool, seed: int):
    model = getattr(module, meth.cls)(random_state=seed)
    return model.set_params(**meth.quick) if quick and meth.quick else model


def _chosen(model) -> str:
    """The regularisation the default chose from the data (its ``*_`` attributes)."""
    out = []
    for attr in ("lam_", "s_", "eta_", "n_iter_", "best_step_"):
        value = getattr(model, attr, None)
        if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
            out.append(f"  {attr}={value:.3g}")
    return "".join(out)


def _kept(model) -> int:
    """Features the fitted model uses (nonzero coefficients or constructed features)."""
    for attr in ("n_nonzero_", "n_features_kept_"):
        value = getattr(model, attr, None)
        if value is not None:
            return int(value)
    coef = getattr(model, "coef_", None)
    return int(np.count_nonzero(coef)) if coef is not None else -1


@register("showcase", "every method on Friedman-1 d=20 and airfoil (+36 noise inputs)",
          "~40 s (quick ~20 s), plus JIT on first use", uses_jobs=False)
def showcase(ctx):
    """Fit every method on every problem; print one table; write two figures."""
    problems = _problems(ctx.quick, ctx.seed)
    rows = []
    n_total = len(problems) * len(METHODS)
    k = 0
    for prob in problems:
        for meth in METHODS:
            k += 1
            prefix = f"[{k:2d}/{n_total}] {prob.name:18s} {meth.name:20s}"
            try:
                module = importlib.import_module(meth.module)
            except ImportError as exc:
                ctx.log(f"{prefix} skipped ({exc})")
                continue
            model = _make(meth, module, ctx.quick, ctx.seed)
            t0 = time.perf_counter()
            model.fit(prob.X_train, prob.y_train)
            fit_time = time.perf_counter() - t0
            mse = float(np.mean((model.predict(prob.X_test) - prob.y_test) ** 2))
            row = dict(problem=prob.name, method=meth.name, test_mse=mse,
                       kept=_kept(model), fit_seconds=fit_time, model=model)
            rows.append(row)
            ctx.log(f"{prefix} test MSE {mse:9.4g}  kept {row['kept']:6d}  fit {fit_time:6.2f} s"
                    + _chosen(model))
    _print_table(ctx, rows)
    _plot_comparison(rows, problems, ctx.out / "showcase_comparison.png")
    _plot_importance(rows, problems, ctx.out / "showcase_importance.png")
    ctx.log(f"figures: {ctx.out / 'showcase_comparison.png'}, "
            f"{ctx.out / 'showcase_importance.png'}")
    write_results(ctx, "showcase", ["problem", "method", "test MSE", "kept", "fit s"],
                  [[r["problem"], r["method"], r["test_mse"], r["kept"], r["fit_seconds"]]
                   for r in rows],
                  published="airfoil (MSE on the standardised target): HARFE 0.449 (HARFE "
                            "Table 4), SHRIMP 0.265 (SHRIMP Table 3), at paper scale")
    return [{k: v for k, v in r.items() if k != "model"} for r in rows]


def _print_table(ctx, rows):
    ctx.log("")
    ctx.log(f"{'problem':18s} {'method':20s} {'test MSE':>10s} {'kept':>7s} {'fit s':>8s}"
            "   (default estimators; fit s includes their own choice of regularisation)")
    for r in rows:
        ctx.log(f"{r['problem']:18s} {r['method']:20s} {r['test_mse']:10.4g} "
                f"{r['kept']:7d} {r['fit_seconds']:8.2f}")
    ctx.log("(airfoil: MSE on the standardised target, 1.0 = predicting the mean; "
            "published HARFE 0.449, SHRIMP 0.265 at paper scale)")


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _plot_comparison(rows, problems, path):
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(problems), figsize=(5 * len(problems), 3.6))
    for ax, prob in zip(np.atleast_1d(axes), problems):
        sub = [r for r in rows if r["problem"] == prob.name]
        ax.barh([r["method"] for r in sub], [r["test_mse"] for r in sub], color="tab:blue")
        for i, r in enumerate(sub):
            ax.text(r["test_mse"], i, f" {r['kept']} feat, {r['fit_seconds']:.1f} s",
                    va="center", fontsize=7)
        ax.set_xscale("log")
        ax.invert_yaxis()
        ax.set_title(prob.name)
        ax.set_xlabel("test MSE (log scale)")
    fig.tight_layout()
    with atomic_path(path) as tmp:  # no half-written figure if interrupted
        fig.savefig(tmp, dpi=120)
    plt.close(fig)


def _plot_importance(rows, problems, path):
    plt = _pyplot()
    # a dense weight vector touches every input, so the share of |coef| per
    # input says nothing there (ARFF, GFC): only q-sparse maps are plotted
    sparse = [r for r in rows if hasattr(r["model"], "variable_importance")
              and getattr(r["model"], "feature_map_", None) is not None
              and r["model"].feature_map_.q < r["model"].feature_map_.n_inputs]
    methods = list(dict.fromkeys(r["method"] for r in sparse))
    if not methods:
        return
    fig, axes = plt.subplots(len(problems), len(methods),
                             figsize=(3 * len(methods), 2.4 * len(problems)), squeeze=False)
    for i, prob in enumerate(problems):
        for j, name in enumerate(methods):
            ax = axes[i, j]
            match = [r for r in sparse if r["problem"] == prob.name and r["method"] == name]
            if not match:
                ax.axis("off")
                continue
            usage = match[0]["model"].variable_importance()
            colors = ["tab:red" if v in prob.active else "tab:gray" for v in range(usage.size)]
            ax.bar(np.arange(1, usage.size + 1), 100 * usage, color=colors)
            ax.set_title(f"{name}\n{prob.name}", fontsize=8)
            ax.set_xlabel("input variable", fontsize=7)
            ax.set_ylabel("% of |coef|", fontsize=7)
            ax.tick_params(labelsize=6)
    fig.suptitle("variable importance, q-sparse methods (red: informative inputs)", fontsize=9)
    fig.tight_layout()
    with atomic_path(path) as tmp:  # no half-written figure if interrupted
        fig.savefig(tmp, dpi=120)
    plt.close(fig)
