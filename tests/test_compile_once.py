"""Compilation once: ``rflite.warmup()`` compiles what real calls use, one signature each.

numba compiles a kernel once per distinct argument type; a read-only array is a
distinct type from a writeable one, so a kernel fed both is compiled twice for
the same machine code.  These tests count compilations (numba's
``numba:compile`` events), never seconds.
"""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import rflite

#: Representative calls after ``rflite.warmup()`` in a fresh process with an empty
#: numba cache: every default estimator, every activation, the BPDN solvers real
#: and complex, the SHRIMP path, the theory kernels, and GFC on read-only input.
#: Prints the kernels compiled after the warmup (a JSON list).
AFTER_WARMUP = textwrap.dedent('''
    import json, sys, warnings
    import numpy as np
    import rflite
    rflite.warmup()
    from numba.core import event
    compiled = []
    class Listener(event.Listener):
        def on_start(self, ev):
            d = ev.data["dispatcher"]
            compiled.append(f"{d.py_func.__module__}.{d.py_func.__qualname__} {ev.data['args']}")
        def on_end(self, ev):
            pass
    event.register("numba:compile", Listener())
    warnings.simplefilter("ignore")
    from rflite import bp, imp, theory
    from rflite.features import random_feature_map, RandomFeatures
    from rflite.greedy import GFCRegressor, greedy_descent
    from rflite.htp import HARFERegressor
    from rflite.imp import SHRIMPRegressor
    from rflite.bp import SRFERegressor
    from rflite.metropolis import ARFFRegressor, ARFFClassifier
    from rflite.ridge import RandomFeatureRidge
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (80, 3)); y = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2]
    for est in (RandomFeatureRidge(n_features=50), HARFERegressor(n_features=50),
                SHRIMPRegressor(n_features=50), SRFERegressor(n_features=50),
                ARFFRegressor(n_features=8, n_iter=5), GFCRegressor(max_steps=2)):
        est.set_params(random_state=0).fit(X, y).predict(X)
    ARFFClassifier(n_features=8, n_iter=5, random_state=0).fit(X, y > 0).predict(X)
    Xr = X.copy(); Xr.setflags(write=False); yr = y.copy(); yr.setflags(write=False)
    GFCRegressor(max_steps=2, random_state=0).fit(Xr, yr)
    greedy_descent(Xr, yr, np.zeros(80), max_steps=2, rng=0)
    for act in ("sin", "cos", "fourier", "exp", "relu", "tanh", "sigmoid"):
        for q in (1, 3):
            random_feature_map(3, 20, q=q, activation=act, rng=0).transform(X)
    RandomFeatures(n_components=20, random_state=0).fit_transform(X)
    A = rng.standard_normal((20, 60)); b = A[:, :3].sum(1)
    for sigma in (0.0, 0.1):
        bp.bpdn(A, b, sigma=sigma); bp.bpdn(A + 0.5j * A, b + 0j, sigma=sigma)
    imp.shrimp_path(A, b)
    theory.coherence(A); theory.coherence(A + 1j)
    theory.rip_lower_bound(A, 3, method="greedy", n_trials=2, rng=0)
    print(json.dumps(compiled))
''')


def test_every_kernel_module_has_a_warmup():
    import importlib

    for name in rflite._KERNEL_MODULES:
        assert callable(importlib.import_module(f"rflite.{name}")._warmup), name


def test_read_only_input_reuses_the_gfc_kernels():
    """A read-only X (a memory map, a Dask block) runs the writeable signature."""
    from rflite._gfc.kernels import _hyper_objective, _ridge_step
    from rflite.greedy import fold_ids, greedy_descent, hyper_objective

    rng = np.random.default_rng(0)
    X, y = rng.uniform(-1, 1, (30, 2)), rng.standard_normal(30)
    folds = fold_ids(30, 3, 0)
    writeable = hyper_objective(X, y, np.zeros(30), np.ones(2), 1e-3, folds)
    greedy_descent(X, y, np.zeros(30), max_steps=1, rng=0)
    counts = len(_hyper_objective.signatures), len(_ridge_step.signatures)
    X.setflags(write=False)
    y.setflags(write=False)
    frozen = hyper_objective(X, y, np.zeros(30), np.ones(2), 1e-3, folds)
    greedy_descent(X, y, np.zeros(30), max_steps=1, rng=0)
    if hasattr(_hyper_objective, "signatures"):  # not under NUMBA_DISABLE_JIT=1
        assert (len(_hyper_objective.signatures), len(_ridge_step.signatures)) == counts
    assert frozen.value == writeable.value


@pytest.mark.slow(reason="compiles every kernel in a subprocess with an empty numba cache")
def test_nothing_compiles_after_warmup(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"))
    env.pop("NUMBA_DISABLE_JIT", None)
    out = subprocess.run([sys.executable, "-c", AFTER_WARMUP], env=env, check=True,
                         capture_output=True, text=True).stdout
    compiled = json.loads(out.strip().splitlines()[-1])
    assert compiled == []
