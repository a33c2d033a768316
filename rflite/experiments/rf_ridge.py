"""Random-feature ridge regression with dense vs q-sparse weights on Friedman-1, d = 20.

The target is HARFE's Fig. 4 function
:math:`g(x) = 10 \\sin(\\pi x_1 x_2) + 20 (x_3 - 1/2)^2 + 10 x_4 + 5 x_5` on
:math:`[0, 1]^{20}` (15 inactive inputs).  Low-order sparse weights (q = 1, 2, 3)
match its additive structure; dense weights (q = 20) mix all inputs.  There is no
published number for plain ridge on this problem; HARFE's sparse fits are the
comparison (``harfe-importance``).
"""

from __future__ import annotations

import time

import numpy as np

from rflite._core.parallel import map_tasks
from rflite.datasets import make_friedman1, target_friedman1
from rflite.experiments import atomic_path, register, write_results
from rflite.ridge import RandomFeatureRidge

#: Ridge parameters (lambda, penalty m * lambda) tried on a validation split.
LAMBDAS = (1e-6, 1e-4, 1e-2, 1e-1, 1.0)


def _fit_best(X, y, q, n_features, seed):
    """Pick lambda on a 20 % validation split, refit on everything."""
    n_val = len(y) // 5
    best = None
    for lam in LAMBDAS:
        model = RandomFeatureRidge(n_features, lam=lam, q=q, fit_intercept=False,
                                   random_state=seed)
        model.fit(X[n_val:], y[n_val:])
        err = np.mean((model.predict(X[:n_val]) - y[:n_val]) ** 2)
        if best is None or err < best[0]:
            best = (err, lam)
    t0 = time.perf_counter()
    model = RandomFeatureRidge(n_features, lam=best[1], q=q, fit_intercept=False,
                               random_state=seed).fit(X, y)
    return model, best[1], time.perf_counter() - t0


def _repetition(task):
    """One (seed, q) cell, runnable on any executor (``--jobs``): MSE, lambda, time, top 5."""
    seed, q, n_features, m_train = task
    X, y = make_friedman1(m_train, d=20, noise=1.0, rng=seed)
    X_test, _ = make_friedman1(1000, d=20, rng=10_000 + seed)
    y_test = target_friedman1(X_test)  # noise-free test targets
    model, lam, fit_time = _fit_best(X, y, q, n_features, seed)
    mse = float(np.mean((model.predict(X_test) - y_test) ** 2))
    top5 = np.sort(np.argsort(model.variable_importance())[::-1][:5] + 1)
    return mse, lam, fit_time, top5


@register(
    "rf-ridge-friedman",
    "random-feature ridge, dense vs q-sparse weights, Friedman-1 d=20",
    "~40 s (quick ~3 s)",
)
def rf_ridge_friedman(ctx):
    """Test MSE, chosen lambda and fit time per q, median over repetitions."""
    reps, n_features, m_train = (1, 400, 200) if ctx.quick else (5, 2000, 500)
    qs = (1, 2, 3, 5, 20)
    results = {q: [] for q in qs}
    tasks = [(ctx.seed + rep, q, n_features, m_train) for rep in range(reps) for q in qs]
    for (seed, q, *_), row in zip(tasks, map_tasks(_repetition, tasks, executor=ctx.jobs)):
        results[q].append(row)
        ctx.log(f"  rep {seed - ctx.seed + 1}/{reps} q={q:2d}: test MSE {row[0]:.3f} "
                f"(lambda {row[1]:g}, fit {row[2]:.2f} s)")
    ctx.log(f"\nFriedman-1 d=20, m={m_train}, N={n_features}, noise sd 1, "
            f"median over {reps} run(s); published: none for plain ridge")
    ctx.log(f"{'q':>3} {'test MSE':>10} {'fit s':>7}  top-5 variables (1-based, by |coef| share)")
    summary = {}
    for q in qs:
        mse = float(np.median([r[0] for r in results[q]]))
        fit = float(np.median([r[2] for r in results[q]]))
        top = results[q][0][3]
        summary[q] = {"test_mse": mse, "fit_seconds": fit, "top5": top.tolist()}
        ctx.log(f"{q:3d} {mse:10.3f} {fit:7.2f}  {top.tolist()}")
    _plot(summary, ctx.out / "rf_ridge_friedman.png")
    ctx.log(f"figure: {ctx.out / 'rf_ridge_friedman.png'}")
    write_results(ctx, "rf-ridge-friedman", ["q", "test MSE", "fit s", "top-5 variables"],
                  [[q, r["test_mse"], r["fit_seconds"], r["top5"]] for q, r in summary.items()])
    return summary


def _plot(summary, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    qs = list(summary)
    fig, ax = plt.subplots(figsize=(4.5, 3.2))
    ax.bar([str(q) for q in qs], [summary[q]["test_mse"] for q in qs], color="tab:blue")
    ax.set_xlabel("q (nonzeros per weight; 20 = dense)")
    ax.set_ylabel("test MSE (noise-free target)")
    ax.set_title("RF ridge on Friedman-1, d = 20")
    fig.tight_layout()
    with atomic_path(path) as tmp:  # no half-written figure if interrupted
        fig.savefig(tmp, dpi=120)
    plt.close(fig)
