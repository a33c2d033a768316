"""HARFE reproductions: Tables 1 and 2 (synthetic), Fig. 4 (importance), Tables 3-4 (real).

Conventions (those of :mod:`rflite.htp`): the ridge values
printed in HARFE Tables 1-3 are :math:`m\\lambda`, so every fit here passes
``lam = printed / m_train`` to :func:`rflite.htp.harfe`; the columns of the
feature matrix are divided by their training norms (the same scaling for the
test features); Friedman 2 and 3 live on :math:`[0, 1]^4`; test errors are
measured against noise-free targets.

Besides the published numbers (and those of the authors' code), the full
runs print two diagnostics for every
entry, the same rule for all of them (no per-entry tuning):

* ``valid``: :math:`m\\lambda` chosen from :data:`LAM_GRID` on a 20 % hold-out
  of the training set, then refitted on all of it;
* ``orig-rule``: the published code's support rule emulated on the same
  features (it keeps the entries of the gradient step whose *signed* value
  exceeds the s-th largest magnitude, so fewer than s features): evidence of
  where the published numbers come from when the correct rule does differently.

Entries more than 2x off the paper also get a sweep over :data:`SWEEP_GRID`.
What the full runs show (seed 0): 10 of the 12 Table 1 entries and Friedman
2 and 3 are within 2x of the paper at the printed m*lambda; Table 1 (q=1,
sum exp) at 2.5x, (q=5, 1/sqrt) at 2.9x and Friedman 1 at 2.8x are not.  On
those the orig-rule emulation lands on the published / authors' numbers, and
the hold-out m*lambda brings all three within 2x (Friedman 1 below the
paper): with magnitude-based supports the printed m*lambda is simply not the
best value there.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from rflite import datasets
from rflite._core.linalg import IllConditionedWarning
from rflite._core.parallel import map_tasks
from rflite.experiments import atomic_path, register, write_results
from rflite.experiments.srfe import print_srfe_rows
from rflite.features import random_feature_map
from rflite.htp import HARFERegressor, harfe

#: :math:`m\lambda` values tried by the hold-out diagnostic.
LAM_GRID = (1e-1, 1e-2, 1e-4, 1e-6, 1e-8, 1e-10)

#: :math:`m\lambda` values of the sweep printed for entries more than 2x off.
SWEEP_GRID = (1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-8, 1e-10, 0.0)

#: Table 1: (dataset, d, printed m*lambda) per column.
TABLE1_COLUMNS = (("harfe1", 5, 1e-4), ("harfe2", 5, 1e-10), ("harfe3", 5, 1e-10),
                  ("harfe4", 100, 1e-1))
TABLE1_LABELS = ("1/sqrt(1+|x|^2)", "sqrt(1+|x|^2)", "x1x2/(1+x3^6)", "sum exp(-|xi|)")
#: Published Table 1 (HARFE, lambda > 0), relative test error in %, by q.
TABLE1_PUBLISHED = {1: (3.20, 1.00, 100.0, 1.10), 3: (0.73, 0.18, 3.40, 2.01),
                    5: (0.57, 1.00, 7.70, 2.20)}
#: The authors' code on the same setup, median of 10 (spec, "What the original code achieves").
TABLE1_ORIGINAL = {1: (3.08, 1.03, 105.0, 1.41), 3: (0.88, 0.24, 2.35, 2.07),
                   5: (0.71, 0.31, 8.93, 2.45)}

#: Table 2: (dataset, noise sd, N, printed m*lambda, published MSE, original code MSE).
TABLE2_ROWS = (("friedman1", 1.0, 10_000, 1e-3, 1.52, 1.56),
               ("friedman2", 125.0, 2000, 5e-3, 1.31e3, 1232.0),
               ("friedman3", 0.1, 2000, 1e-5, 10.90e-3, 11.07e-3))


# ------------------------------------------------------------------ helpers
def _normalised(fmap, X_train, X_test):
    """Training and test feature matrices, columns divided by the training norms."""
    A = fmap.transform(X_train)
    norms = np.linalg.norm(A, axis=0)
    scale = 1.0 / np.where(norms > 0, norms, 1.0)  # a zero column stays zero
    A *= scale
    B = fmap.transform(X_test)
    B *= scale
    return A, B


def _fit(A, y, s, m_lam, rule="magnitude"):
    """Coefficients of HARFE on ``A`` with shift ``m_lam`` (= m * lambda)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IllConditionedWarning)
        if rule == "magnitude":
            return harfe(A, y, s=s, lam=m_lam / A.shape[0]).coef
        return _original_rule(A, y, s, m_lam)


def _original_rule(A, y, s, shift, mu=0.1, max_iter=50):
    """The published code's support rule, for diagnosis only (not rflite's algorithm).

    Support = entries of the gradient step whose signed value is at least the
    s-th largest magnitude (so only positive entries, fewer than s); ridge solve
    on it.  Plain NumPy, stops on a repeated support.
    """
    c = np.zeros(A.shape[1])
    support = None
    for _ in range(max_iter):
        g = (1 - mu * shift) * c + mu * (A.T @ (y - A @ c))
        thr = np.partition(np.abs(g), g.size - s)[g.size - s]
        new = np.flatnonzero(g >= thr)
        if support is not None and np.array_equal(new, support):
            break
        support = new
        AS = A[:, support]
        c = np.zeros_like(c)
        if support.size:
            M = AS.T @ AS
            M.flat[:: support.size + 1] += shift
            c[support] = np.linalg.lstsq(M, AS.T @ y, rcond=None)[0]
    return c


def _holdout_shift(A, y, s, rng):
    """m*lambda from :data:`LAM_GRID` with the lowest MSE on a 20 % hold-out."""
    perm = rng.permutation(A.shape[0])
    n_val = A.shape[0] // 5
    val, train = perm[:n_val], perm[n_val:]
    A_tr = np.ascontiguousarray(A[train])
    errs = [np.mean((A[val] @ _fit(A_tr, y[train], s, shift) - y[val]) ** 2)
            for shift in LAM_GRID]
    return LAM_GRID[int(np.argmin(errs))]


def _relative_error(B, y_test):
    """coef -> relative test error in % (HARFE eq. 21)."""
    return lambda coef: 100 * np.linalg.norm(B @ coef - y_test) / np.linalg.norm(y_test)


def _mse(B, y_test):
    """coef -> test MSE (HARFE eq. 22)."""
    return lambda coef: float(np.mean((B @ coef - y_test) ** 2))


def _spread(values):
    """Median and the 25-75 % range, as a short string."""
    q1, med, q3 = np.percentile(values, [25, 50, 75])
    return med, f"{med:.3g} [{q1:.3g}, {q3:.3g}]"


def _verdict(ours, published):
    ratio = ours / published
    if ratio <= 1.0:
        return ratio, "better"
    return ratio, "within 2x" if ratio <= 2.0 else "OUT (>2x)"


# ------------------------------------------------------------------ Table 1
@register(
    "harfe-table1",
    "HARFE Table 1: relative test error, 4 functions x q = 1, 3, 5",
    "~6 min with the SRFE rows (quick ~15 s)",
)
def harfe_table1(ctx):
    """Median relative test error (%) over repetitions, beside the published Table 1."""
    if ctx.quick:
        runs, n_diag, m, N, s = 1, 1, 200, 2000, 200
    else:
        runs, n_diag, m, N, s = 10, 10, 500, 10_000, 500
    ctx.log(f"m_train = m_test = {m}, N = {N}, s = {s}, mu = 0.1, 50 iterations, "
            f"sin, weights N(0,1), bias U[0,2pi], x ~ U[-1,1]^d; {runs} run(s) per entry; "
            "printed lambda = m*lambda")
    if ctx.quick:
        ctx.log("(quick: reduced sizes, not comparable with the published numbers)")
    results = {}
    for q in (1, 3, 5):
        for col, (name, d, m_lam) in enumerate(TABLE1_COLUMNS):
            t0 = time.perf_counter()

            def problem(run, q=q, col=col):
                return _table1_problem(ctx.seed, q, col, run, m, N)

            errs, shifts, valid_errs, orig_errs = _repetitions(
                ctx, _table1_problem, [(ctx.seed, q, col, run, m, N) for run in range(runs)],
                s, m_lam, n_diag)
            med, txt = _spread(errs)
            pub = TABLE1_PUBLISHED[q][col]
            ratio, verdict = _verdict(med, pub)
            v_med = float(np.median(valid_errs))
            o_med = float(np.median(orig_errs))
            results[(q, name)] = {
                "median": med, "all": errs, "published": pub,
                "original_code": TABLE1_ORIGINAL[q][col], "ratio": ratio,
                "valid_median": v_med, "valid_shifts": shifts, "orig_rule_median": o_med,
            }
            ctx.log(f"q={q} {TABLE1_LABELS[col]:>16s} (d={d:3d}, m*lam={m_lam:g}): "
                    f"ours {txt} | paper {pub:g} | authors' code {TABLE1_ORIGINAL[q][col]:g} "
                    f"| ratio {ratio:.2f} {verdict} | valid {v_med:.3g} "
                    f"(m*lam {', '.join(f'{v:g}' for v in sorted(set(shifts)))}) "
                    f"| orig-rule {o_med:.3g}  [{time.perf_counter() - t0:.1f} s]")
            if ratio > 2.0:
                results[(q, name)]["sweep"] = _sweep(ctx, problem, n_diag, s, np.median)
    _table1_summary(ctx, results)
    results["srfe"] = print_srfe_rows(ctx, "harfe-table1")
    rows = [["HARFE", q, TABLE1_LABELS[col], r["median"], r["valid_median"], r["published"],
             r["original_code"], r["ratio"]]
            for q in (1, 3, 5) for col, (name, _, _) in enumerate(TABLE1_COLUMNS)
            for r in [results[(q, name)]]]
    for q in (1, 3, 5):
        srfe = results["srfe"][f"harfe-table1-q{q}"]
        for col, (ours, pub) in enumerate(zip(srfe["ours"], srfe["published"])):
            rows.append(["SRFE", q, TABLE1_LABELS[col], ours, None, pub, None, ours / pub])
    write_results(ctx, "harfe-table1",
                  ["method", "q", "function", "rflite", "rflite with hold-out m*lambda", "paper",
                   "authors' code", "ratio"], rows,
                  published="HARFE Table 1 (Saha, Schaeffer, Tran 2023): median relative test "
                            "error in %, and its SRFE rows; authors' code: their published code "
                            "on the same setup")
    return results


def _repetition(task):
    """One repetition of a table entry, runnable on any executor (``--jobs``).

    ``task = (make_problem, args, s, m_lam, diagnose)``; returns the error at
    the printed m*lambda and, when ``diagnose``, ``(hold-out m*lambda, its
    error, error of the original signed-support rule)``.  The repetition's
    seed is part of ``args``, so results do not depend on where it runs.
    """
    make_problem, args, s, m_lam, diagnose = task
    A, y, err, rng = make_problem(*args)
    main = err(_fit(A, y, s, m_lam))
    if not diagnose:
        return main, None
    shift = _holdout_shift(A, y, s, rng)
    return main, (shift, err(_fit(A, y, s, shift)), err(_fit(A, y, s, m_lam, rule="original")))


def _repetitions(ctx, make_problem, args, s, m_lam, n_diag):
    """Run one :func:`_repetition` per entry of ``args`` (through ``map_tasks``).

    Returns the test errors of all runs and, for the first ``n_diag`` runs, the
    diagnostics: hold-out chosen ``m*lambda``, its error and the original-rule error.
    """
    tasks = [(make_problem, a, s, m_lam, run < n_diag) for run, a in enumerate(args)]
    errs, diags = [], []
    for err, diag in map_tasks(_repetition, tasks, executor=ctx.jobs):
        errs.append(err)
        if diag is not None:
            diags.append(diag)
    shifts, valid, orig = (list(col) for col in zip(*diags)) if diags else ([], [], [])
    return errs, shifts, valid, orig


def _table1_problem(seed, q, col, run, m, N):
    """One repetition of a Table 1 entry: (A, y, error function, rng)."""
    name, d, _ = TABLE1_COLUMNS[col]
    spec = datasets.SYNTHETIC_DATASETS[name]
    rng = np.random.default_rng([seed, q, col, run])
    X, y = spec.make(m, d=d, rng=rng)
    X_test, _ = spec.make(m, d=d, rng=rng)
    fmap = random_feature_map(d, N, q=q, rng=rng)
    A, B = _normalised(fmap, X, X_test)
    return A, y, _relative_error(B, spec.target(X_test)), rng


def _sweep(ctx, problem, runs, s, summary):
    """Error for every m*lambda of :data:`SWEEP_GRID` on the same repetitions."""
    errs = {shift: [] for shift in SWEEP_GRID}
    for run in range(runs):
        A, y, err, _ = problem(run)
        for shift in SWEEP_GRID:
            errs[shift].append(err(_fit(A, y, s, shift)))
    out = {shift: float(summary(v)) for shift, v in errs.items()}
    ctx.log(f"    sweep over m*lam ({summary.__name__} of {runs} runs): "
            + ", ".join(f"{k:g}: {v:.3g}" for k, v in out.items()))
    return out


def _table1_summary(ctx, results):
    ctx.log("\nTable 1, median relative test error (%): ours / paper (ratio)")
    ctx.log("q  " + " | ".join(f"{lab:>22s}" for lab in TABLE1_LABELS))
    for q in (1, 3, 5):
        cells = []
        for name, _, _ in TABLE1_COLUMNS:
            r = results[(q, name)]
            cells.append(f"{r['median']:7.3g} / {r['published']:<5g} ({r['ratio']:.2f})")
        ctx.log(f"{q}  " + " | ".join(f"{c:>22s}" for c in cells))


# ------------------------------------------------------------------ Table 2
@register(
    "harfe-table2",
    "HARFE Table 2: test MSE on Friedman 1, 2, 3 (q = 2)",
    "~3 min with the SRFE rows (quick ~3 s)",
)
def harfe_table2(ctx):
    """Mean and median test MSE over repetitions, beside the published Table 2."""
    runs, n_diag = (2, 1) if ctx.quick else (100, 20)
    s = 200
    ctx.log(f"m_train = 200, m_test = 1000, s = {s}, q = 2, weights and bias U[-1,1], "
            f"mu = 0.1, 50 iterations, {runs} run(s) (diagnostics on {n_diag}); "
            "printed lambda = m*lambda; MSE against noise-free test targets")
    results = {}
    for row, (name, noise, N, m_lam, pub, orig) in enumerate(TABLE2_ROWS):
        if ctx.quick:
            N = min(N, 2000)
        t0 = time.perf_counter()

        def problem(run, row=row, N=N):
            return _table2_problem(ctx.seed, row, run, N)

        mses, shifts, valid, orig_rule = _repetitions(
            ctx, _table2_problem, [(ctx.seed, row, run, N) for run in range(runs)],
            s, m_lam, n_diag)
        mean = float(np.mean(mses))
        med, txt = _spread(mses)
        ratio, verdict = _verdict(mean, pub)
        results[name] = {
            "mean": mean, "median": med, "all": mses, "published": pub, "original_code": orig,
            "ratio": ratio, "valid_mean": float(np.mean(valid)), "valid_shifts": shifts,
            "orig_rule_mean": float(np.mean(orig_rule)),
        }
        ctx.log(f"{name} (N={N}, noise {noise:g}, m*lam={m_lam:g}): mean {mean:.4g}, "
                f"median {txt} | paper {pub:.4g} | authors' code {orig:.4g} | ratio "
                f"{ratio:.2f} {verdict} | valid {np.mean(valid):.4g} "
                f"(m*lam {', '.join(f'{v:g}' for v in sorted(set(shifts)))}) "
                f"| orig-rule {np.mean(orig_rule):.4g}  [{time.perf_counter() - t0:.1f} s]")
        if ratio > 2.0:
            results[name]["sweep"] = _sweep(ctx, problem, n_diag, s, np.mean)
    results["srfe"] = print_srfe_rows(ctx, "harfe-table2")
    rows = [["HARFE", name, r["mean"], r["valid_mean"], r["published"], r["original_code"],
             r["ratio"]] for name, r in results.items() if name != "srfe"]
    srfe = results["srfe"]["harfe-table2"]
    rows += [["SRFE", col, ours, None, pub, None, ours / pub]
             for col, ours, pub in zip(srfe["columns"], srfe["ours"], srfe["published"])]
    write_results(ctx, "harfe-table2",
                  ["method", "data set", "rflite (mean test MSE)", "rflite with hold-out m*lambda",
                   "paper", "authors' code", "ratio"], rows,
                  published="HARFE Table 2 (Saha, Schaeffer, Tran 2023): mean test MSE, q = 2, "
                            "and its SRFE rows; authors' code: their published code on the "
                            "same setup")
    return results


def _table2_problem(seed, row, run, N, m=200, m_test=1000, q=2):
    """One repetition of a Table 2 row: (A, y, MSE function, rng)."""
    name, noise = TABLE2_ROWS[row][:2]
    spec = datasets.SYNTHETIC_DATASETS[name]
    rng = np.random.default_rng([seed, row, run])
    X, y = spec.make(m, noise=noise, rng=rng)
    X_test, _ = spec.make(m_test, rng=rng)
    fmap = random_feature_map(X.shape[1], N, q=q, distribution="uniform", bias="weights",
                              rng=rng)
    A, B = _normalised(fmap, X, X_test)
    return A, y, _mse(B, spec.target(X_test)), rng


# ------------------------------------------------------------------- Fig. 4
def _importance_run(task):
    """One Fig. 4 fit: (share of |coef|, share of kept features) per variable."""
    seed, run, m, N, s, d = task
    rng = np.random.default_rng([seed, run])
    X, y = datasets.make_friedman1(m, d=d, noise=1.0, rng=rng)
    model = HARFERegressor(N, s=s, lam=1e-3 / m, q=2, fit_intercept=False,
                           random_state=rng).fit(X, y)
    return model.variable_importance("magnitude"), model.variable_importance("count")


@register(
    "harfe-importance",
    "HARFE Fig. 4: variable importance on Friedman-1, d = 20, q = 2",
    "~15 s (quick ~4 s)",
)
def harfe_importance(ctx):
    """Share of |coef| (and of kept features) per variable, averaged over runs.

    Fig. 4's own settings are not all given in the paper; here: m = 500,
    N = 10^4, s = 500, noise sd 1, weights N(0, 1), bias U[0, 2 pi],
    m*lambda = 1e-3, mu = 0.1.
    """
    runs, m, N, s = (1 if ctx.quick else 5), 500, 10_000, 500
    d = 20
    tasks = [(ctx.seed, run, m, N, s, d) for run in range(runs)]
    shares = map_tasks(_importance_run, tasks, executor=ctx.jobs)
    mag = sum(sh[0] for sh in shares) / runs
    count = sum(sh[1] for sh in shares) / runs
    top5 = np.sort(np.argsort(-mag)[:5]) + 1
    ctx.log(f"m = {m}, N = {N}, s = {s}, q = 2, {runs} run(s)")
    ctx.log("variable   " + " ".join(f"{j + 1:5d}" for j in range(d)))
    ctx.log("|coef| %   " + " ".join(f"{100 * v:5.1f}" for v in mag))
    ctx.log("kept %     " + " ".join(f"{100 * v:5.1f}" for v in count))
    ok = set(top5.tolist()) == {1, 2, 3, 4, 5}
    ctx.log(f"top five by |coef| share: {top5.tolist()} "
            f"({'= x1..x5, as in the paper' if ok else 'differs from x1..x5'})")
    path = ctx.out / "harfe_importance.png"
    _plot_importance(mag, count, path)
    ctx.log(f"figure: {path}")
    write_results(ctx, "harfe-importance", ["variable", "share of |coef| %", "share of kept %"],
                  [[j + 1, 100 * mag[j], 100 * count[j]] for j in range(d)],
                  published="HARFE Fig. 4: the top five variables are x1..x5 (here: "
                            f"{', '.join(f'x{v}' for v in top5.tolist())})")
    return {"magnitude": mag, "count": count, "top5": top5.tolist(), "top5_correct": ok}


def _plot_importance(mag, count, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    d = mag.size
    x = np.arange(1, d + 1)
    fig, ax = plt.subplots(figsize=(8, 3.2))
    ax.bar(x - 0.2, 100 * mag, width=0.4, label="share of |coef|")
    ax.bar(x + 0.2, 100 * count, width=0.4, label="share of kept features")
    ax.axhline(100 / d, color="grey", lw=0.8, ls="--", label="uniform")
    ax.set_xticks(x)
    ax.set_xlabel("input variable")
    ax.set_ylabel("%")
    ax.set_title("HARFE on Friedman-1, d = 20, q = 2 (x1..x5 active)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    with atomic_path(path) as tmp:  # no half-written figure if interrupted
        fig.savefig(tmp, dpi=120)
    plt.close(fig)


# ------------------------------------------------------------- Tables 3-4
def _real_run(task):
    """One shuffle of one real data set with Table 3's hyper-parameters: test MSE."""
    name, seed, run, N, s, hp = task
    ds = datasets.load_uci(name, rng=np.random.default_rng([seed, run]))
    model = HARFERegressor(
        N, s=s, lam=hp["m_lambda"] / ds.X_train.shape[0], q=hp["q"],
        distribution="uniform", bias="weights", fit_intercept=False,
        random_state=np.random.default_rng([seed, run, 1]),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IllConditionedWarning)
        model.fit(ds.X_train, ds.y_train)
    return float(np.mean((model.predict(ds.X_test) - ds.y_test) ** 2))


@register(
    "harfe-real",
    "HARFE Tables 3-4: test MSE on the six shared UCI sets",
    "~3 min (quick ~10 s)",
)
def harfe_real(ctx):
    """Test MSE with Table 3's (N, s, m*lambda, q), beside the published Table 4.

    Table 3 does not give the weight distribution: all six sets use weights
    and bias U[-1, 1] (Table 2's choice; on propulsion, housing and speech it
    beat N(0, 1) weights with U[0, 2 pi] bias in a 3-shuffle check), sin.  Mean
    over 3 seeded shuffles (quick: 1, with N and s divided by 10).
    """
    runs = 1 if ctx.quick else 3
    results = {}
    for name, info in datasets.UCI_DATASETS.items():
        hp = info.harfe_params
        N, s = (hp["N"] // 10, hp["s"] // 10) if ctx.quick else (hp["N"], hp["s"])
        mses = []
        t0 = time.perf_counter()
        try:
            tasks = [(name, ctx.seed, run, N, s, hp) for run in range(runs)]
            mses = map_tasks(_real_run, tasks, executor=ctx.jobs)
        except FileNotFoundError as exc:
            ctx.log(f"{name}: skipped ({exc})")
            continue
        pub = info.published["HARFE"]
        mean = float(np.mean(mses))
        results[name] = {"mean": mean, "all": mses, "published": pub}
        ctx.log(f"{name:10s} N={N:6d} s={s:5d} m*lam={hp['m_lambda']:g} q={hp['q']}: "
                f"test MSE {mean:.4g} (runs {', '.join(f'{v:.3g}' for v in mses)}) | "
                f"paper {pub:g} | SALSA {info.published['SALSA']:g} "
                f"[{time.perf_counter() - t0:.1f} s]")
    write_results(ctx, "harfe-real", ["data set", "rflite (mean test MSE)", "paper", "SALSA"],
                  [[name, r["mean"], r["published"],
                    datasets.UCI_DATASETS[name].published["SALSA"]]
                   for name, r in results.items()],
                  published="HARFE Table 4 (Saha, Schaeffer, Tran 2023), test MSE on the "
                            "standardised target; SALSA as printed there")
    return results
