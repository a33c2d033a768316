"""Every default estimator in memory against Dask: the same model, and the time.

``python benchmarks/backends.py [--rows M | --data NAME] [--cluster | --cluster-only]
[--on-workers] [--only NAME,...]`` fits ``Estimator(random_state=0)`` for each default and
CV estimator on one problem, in memory and on a Dask array of the same rows
(synchronous scheduler; with ``--cluster`` also a 2-process ``LocalCluster``,
with ``--cluster-only`` that cluster alone),
and prints one row per estimator and backend: fit seconds, whether the kept
columns (``support_``) are the same, and the largest differences of the
coefficients and of the predictions on the training rows.  The problem is
``y = sin(2 x_0) + x_1 x_2`` plus noise on uniform inputs in [-1, 1]^5, or
the training rows of a shared real set (``--data housing``; needs the
data folder that :func:`rflite.datasets.load_uci` reads).

A Dask ``X`` of at most ``rflite._core.backend.LOCAL_FIT_MAX_ROWS`` rows is
fitted in memory (the same model by construction); ``--on-workers`` sets
the limit to 0, so that every fit runs the distributed code.  The same seed
gives the same model there too: the same support, and coefficients and
predictions that differ by the rounding of sums taken in another order.
"""

from __future__ import annotations

import argparse
import contextlib
import time
import warnings

import numpy as np

ESTIMATORS = (
    ("rflite.ridge", "RandomFeatureRidge"), ("rflite.htp", "HARFERegressor"),
    ("rflite.imp", "SHRIMPRegressor"), ("rflite.bp", "SRFERegressor"),
    ("rflite.metropolis", "ARFFRegressor"), ("rflite.greedy", "GFCRegressor"),
    ("rflite.ridge", "RandomFeatureRidgeCV"), ("rflite.htp", "HARFECV"),
    ("rflite.imp", "SHRIMPCV"), ("rflite.bp", "SRFECV"),
)


def problem(m: int, d: int = 5, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (m, d))
    return X, np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.05 * rng.standard_normal(m)


def _timed_fit(cls, X, y):
    t = time.perf_counter()
    est = cls(random_state=0).fit(X, y)
    return est, time.perf_counter() - t


def compare(cls, X, y, Xd, yd):
    """``(seconds in memory, seconds on Dask, same support, coef diff, prediction diff)``."""
    ref, t_mem = _timed_fit(cls, X, y)
    est, t_dask = _timed_fit(cls, Xd, yd)
    p_ref, p_est = ref.predict(X), np.asarray(est.predict(Xd).compute())
    same = np.array_equal(np.sort(ref.support_), np.sort(est.support_))
    c_diff = (float(np.max(np.abs(ref.coef_ - est.coef_))) if same and ref.coef_.size
              else float("nan"))
    return t_mem, t_dask, same, c_diff, float(np.max(np.abs(p_ref - p_est)))


def main(argv=None) -> None:
    import importlib

    import dask
    import dask.array as da

    from rflite._core.backend import fits_on_workers

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=300)
    parser.add_argument("--cluster", action="store_true")
    parser.add_argument("--cluster-only", action="store_true")
    parser.add_argument("--only", default="")
    parser.add_argument("--data", default="")
    parser.add_argument("--on-workers", action="store_true")
    args = parser.parse_args(argv)
    if args.data:
        from rflite.datasets import load_uci

        X, y = load_uci(args.data, rng=0)[:2]  # one fixed split: rows comparable across runs
    else:
        X, y = problem(args.rows)
    rows = max(1, X.shape[0] // 3)
    Xd = da.from_array(X, chunks=(rows, -1))
    yd = da.from_array(y, chunks=rows)
    backends = [] if args.cluster_only else [
        ("synchronous", lambda: dask.config.set(scheduler="synchronous"))]
    if args.cluster or args.cluster_only:
        from distributed import Client, LocalCluster

        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True)
        client = Client(cluster)
        backends.append(("2-process cluster", lambda: dask.config.set(scheduler=client)))
    only = set(filter(None, args.only.split(",")))
    print(f"{'estimator':22s} {'backend':18s} {'memory s':>9s} {'dask s':>9s} "
          f"{'same support':>12s} {'max |dcoef|':>11s} {'max |dpred|':>11s}", flush=True)
    warnings.simplefilter("ignore")
    with fits_on_workers() if args.on_workers else contextlib.nullcontext():
        for module, name in ESTIMATORS:
            if only and name not in only:
                continue
            cls = getattr(importlib.import_module(module), name)
            for label, scheduler in backends:
                with scheduler():
                    t_mem, t_dask, same, dc, dp = compare(cls, X, y, Xd, yd)
                print(f"{name:22s} {label:18s} {t_mem:9.2f} {t_dask:9.2f} {str(same):>12s} "
                      f"{dc:11.1e} {dp:11.1e}", flush=True)


if __name__ == "__main__":
    main()
