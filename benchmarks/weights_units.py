"""Do the estimators depend on the scale of ``sample_weight`` or the units of ``y``?

Run as ``python benchmarks/weights_units.py`` (``--only HARFE,GFC`` restricts
the rows).

For each estimator (defaults, and the explicit-parameter forms whose penalty
is stated in the documentation) on one smooth problem (300 rows, 5 inputs
uniform on [-1, 1], ``y = sin(2 x0) + x1 x2 + 0.1 noise``), the largest
relative change of the test predictions

    max |p' - p| / max |p|

when the fit is repeated with

* ``2 * w``: every weight doubled (``w`` integer 1..3 for the methods that
  realise weights by repeating rows, else uniform on [0.5, 2]);
* ``y x 0.001`` and ``y x 1000``: the targets in other units (the predictions
  divided back by the factor).

A model that depends only on the relative weights and whose fit scales with
``y`` prints rounding-level numbers (below 1e-8).  For the classifier the
number is the share of test labels that change.

Not a test (no assertions) and not collected by pytest: a measurement to run
before and after a change to how weights and targets enter the fits.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

M, D, N_TEST = 300, 5, 500
FACTORS = (1e-3, 1e3)


def estimators():
    """Name -> (constructor, whether weights must be integers)."""
    from rflite.bp import SRFERegressor
    from rflite.greedy import GFCRegressor
    from rflite.htp import HARFECV, HARFERegressor
    from rflite.imp import SHRIMPRegressor
    from rflite.metropolis import ARFFClassifier, ARFFRegressor
    from rflite.ridge import RandomFeatureRidge

    return {
        "RandomFeatureRidge()": (lambda: RandomFeatureRidge(random_state=0), False),
        "RandomFeatureRidge(lam=1e-3)": (lambda: RandomFeatureRidge(lam=1e-3, random_state=0),
                                         False),
        "HARFERegressor()": (lambda: HARFERegressor(random_state=0), False),
        "HARFERegressor(s=40, lam=1e-3)": (
            lambda: HARFERegressor(s=40, lam=1e-3, random_state=0), False),
        "HARFECV()": (lambda: HARFECV(random_state=0), False),
        "SHRIMPRegressor()": (lambda: SHRIMPRegressor(random_state=0), False),
        "SRFERegressor()": (lambda: SRFERegressor(random_state=0), False),
        "ARFFRegressor()": (lambda: ARFFRegressor(random_state=0), True),
        "ARFFClassifier()": (lambda: ARFFClassifier(random_state=0), True),
        "GFCRegressor()": (lambda: GFCRegressor(random_state=0), True),
    }


def problem():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (M, D))
    y = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(M)
    Xt = rng.uniform(-1, 1, (N_TEST, D))
    w_int = rng.integers(1, 4, M).astype(float)
    w_real = rng.uniform(0.5, 2.0, M)
    return X, y, Xt, w_int, w_real


def _relative(p, p0):
    return float(np.abs(p - p0).max() / max(np.abs(p0).max(), np.finfo(float).tiny))


def row(make, integer, X, y, Xt, w_int, w_real):
    """``[2 * w, y x 0.001, y x 1000]`` changes of one estimator."""
    w = w_int if integer else w_real
    classifier = getattr(make(), "_estimator_type", "") == "classifier"
    target = (y > np.median(y)).astype(int) if classifier else y
    base = make().fit(X, target, sample_weight=w).predict(Xt)
    doubled = make().fit(X, target, sample_weight=2 * w).predict(Xt)
    if classifier:
        return [float(np.mean(doubled != base)), float("nan"), float("nan")]
    p0 = make().fit(X, y).predict(Xt)
    out = [_relative(doubled, base)]
    for a in FACTORS:
        out.append(_relative(make().fit(X, a * y).predict(Xt) / a, p0))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated name prefixes")
    args = parser.parse_args(argv)
    data = problem()
    print(f"{'estimator':32s} {'2 * w':>10s} {'y x 0.001':>10s} {'y x 1000':>10s}")
    for name, (make, integer) in estimators().items():
        if args.only and not any(name.startswith(p) for p in args.only.split(",")):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                vals = row(make, integer, *data)
            except ValueError as exc:
                print(f"{name:32s} refused: {exc}"[:110])
                continue
        print(f"{name:32s} " + " ".join(f"{v:10.1e}" for v in vals), flush=True)


if __name__ == "__main__":
    main()
