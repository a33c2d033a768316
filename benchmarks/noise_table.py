"""Do the default estimators lose to the training mean on pure noise?

Run as ``python benchmarks/noise_table.py`` (``--quick`` for 4 seeds and
n in {20, 40}; ``--only SHRIMP,HARFE`` restricts the estimators).

For each default estimator (``Estimator(random_state=seed)``, nothing else
set) and each training size n in {20, 40, 100, 300}, 12 seeds: X uniform on
[-1, 1]^3, y standard normal and independent of X, a test set of 2000 rows
from the same distribution.  Printed: the median and the maximum over the
seeds of

    test MSE of the estimator / test MSE of predicting the training mean,

so 1.00 is the best any estimator can do in expectation.  An estimator whose
automatic choice (of its penalty, step, sparsity or stopping time) is honest
stays within a few per cent of 1 in the median and never far above it.

Then the outlier case: n = 40 noise rows with one target replaced by 1e3;
the test targets are noise.  Printed: the estimator's test MSE, the training
mean's, and whether the fit warned.

Not a test (no assertions) and not collected by pytest: a measurement to
run before and after a change to the estimators' automatic choices.  ARFF
and GFC are the slowest defaults (a few seconds per fit at n = 300).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

SIZES = (20, 40, 100, 300)
SEEDS = 12
N_TEST = 2000
D = 3


def estimators():
    """Name -> class of the six default estimators."""
    from rflite.bp import SRFERegressor
    from rflite.greedy import GFCRegressor
    from rflite.htp import HARFERegressor
    from rflite.imp import SHRIMPRegressor
    from rflite.metropolis import ARFFRegressor
    from rflite.ridge import RandomFeatureRidge

    return {"RandomFeatureRidge": RandomFeatureRidge, "HARFERegressor": HARFERegressor,
            "SHRIMPRegressor": SHRIMPRegressor, "SRFERegressor": SRFERegressor,
            "ARFFRegressor": ARFFRegressor, "GFCRegressor": GFCRegressor}


def noise_data(n, seed):
    """``(X, y, X_test, y_test)``: inputs uniform on [-1, 1]^3, targets N(0, 1) noise."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, (n, D))
    y = rng.standard_normal(n)
    Xt = rng.uniform(-1.0, 1.0, (N_TEST, D))
    yt = rng.standard_normal(N_TEST)
    return X, y, Xt, yt


def ratio(cls, n, seed):
    """Test MSE of ``cls(random_state=seed)`` over the training mean's, on noise."""
    X, y, Xt, yt = noise_data(n, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pred = cls(random_state=seed).fit(X, y).predict(Xt)
    return float(np.mean((pred - yt) ** 2) / np.mean((y.mean() - yt) ** 2))


def outlier(cls, seed=0, n=40):
    """``(test MSE, mean's test MSE, warned)`` with one training target of 1e3."""
    X, y, Xt, yt = noise_data(n, seed)
    y = y.copy()
    y[n // 2] = 1e3
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        pred = cls(random_state=seed).fit(X, y).predict(Xt)
    mse = float(np.mean((pred - yt) ** 2))
    return mse, float(np.mean((y.mean() - yt) ** 2)), [type(w.message).__name__ for w in record]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4 seeds, n in {20, 40}")
    parser.add_argument("--only", default=None, help="comma-separated name fragments")
    args = parser.parse_args(argv)
    sizes = SIZES[:2] if args.quick else SIZES
    seeds = range(4 if args.quick else SEEDS)
    ests = estimators()
    if args.only:
        keys = [k.lower() for k in args.only.split(",")]
        ests = {n: c for n, c in ests.items() if any(k in n.lower() for k in keys)}
    print(f"test MSE / training mean's test MSE, median / max over {len(seeds)} seeds "
          f"(pure noise, d = {D})")
    print(f"{'default':<20}" + "".join(f"{'n = ' + str(n):>16}" for n in sizes) + "   time")
    for name, cls in ests.items():
        t0 = time.perf_counter()
        cells = []
        for n in sizes:
            r = np.array([ratio(cls, n, s) for s in seeds])
            cells.append(f"{np.median(r):7.3f} / {r.max():6.3f}")
        print(f"{name:<20}" + "".join(f"{c:>16}" for c in cells)
              + f"   {time.perf_counter() - t0:5.1f}s", flush=True)
    print("\noutlier case (n = 40 noise rows, one target 1e3, seed 0)")
    for name, cls in ests.items():
        mse, base, warned = outlier(cls)
        print(f"{name:<20} test MSE {mse:10.1f}   training mean {base:8.1f}   "
              f"warnings: {', '.join(sorted(set(warned))) or 'none'}", flush=True)


if __name__ == "__main__":
    main()
