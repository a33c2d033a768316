"""``NUMBA_DISABLE_JIT=1`` works for every module.

With the JIT disabled every kernel runs as plain Python, which is how kernels
are debugged and how coverage of jitted code is measured (stumpy's
``test.sh``).  Each test runs a fresh interpreter with the variable set (numba
reads it at import) and a small fit of each algorithm module, on tiny shapes
because un-jitted kernels are slow.
"""

from __future__ import annotations

import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import rflite

pytestmark = pytest.mark.slow(reason="subprocesses with the JIT disabled")

ROOT = Path(rflite.__file__).resolve().parents[1]

#: Every module of the package, found on disk (so a new module is covered too).
MODULES = sorted(
    ["rflite"]
    + [m.name for m in pkgutil.walk_packages(rflite.__path__, "rflite.")]
)
#: ``rflite.__main__`` runs the command line when imported; ``python -m rflite
#: list`` covers it in the metropolis test.  The metropolis modules have their
#: own test, so that a failure there does not hide the state of the others.
SEPARATE = {"rflite.metropolis", "rflite.experiments.metropolis", "rflite.__main__"}


def _run_nojit(code: str, timeout: float = 300) -> subprocess.CompletedProcess:
    env = dict(os.environ, NUMBA_DISABLE_JIT="1", OPENBLAS_NUM_THREADS="1")
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT)


PRELUDE = """
import numba, numpy as np
assert numba.config.DISABLE_JIT, "NUMBA_DISABLE_JIT was not seen"
rng = np.random.default_rng(0)
X = rng.standard_normal((24, 3))
y = np.sin(X[:, 0]) + 0.5 * X[:, 1]
"""


def test_every_module_imports_without_jit():
    mods = [m for m in MODULES if m not in SEPARATE]
    code = PRELUDE + "import importlib\n" + "".join(
        f"importlib.import_module({m!r})\n" for m in mods) + "print('IMPORTED')\n"
    proc = _run_nojit(code)
    assert proc.returncode == 0 and "IMPORTED" in proc.stdout, proc.stderr[-3000:]


def test_small_fits_without_jit():
    code = PRELUDE + """
from rflite.features import random_feature_map
from rflite.htp import harfe
from rflite.imp import shrimp_path
from rflite.bp import bpdn
from rflite.greedy import gfc
from rflite.theory import coherence
from rflite.ridge import RandomFeatureRidge

fmap = random_feature_map(3, 30, q=2, rng=0)
A = fmap.transform(X)
assert A.shape == (24, 30) and np.all(np.isfinite(A))
Ac = random_feature_map(3, 30, q=2, activation="exp", rng=1).transform(X)
assert np.iscomplexobj(Ac)

res = harfe(A, y, s=5, lam=1e-3)
assert res.support.size == 5 and np.all(np.isfinite(res.coef))

path = shrimp_path(A, y, prune_rate=0.3, min_features=3)
assert len(path.supports) >= 2

l1 = bpdn(A / np.linalg.norm(A, axis=0), y, 0.5 * np.linalg.norm(y))
assert np.all(np.isfinite(l1.coef))

g = gfc(X, y, n_passes=1, max_steps=2, n_workers=2, rng=0)
assert np.isfinite(g.train_rmse)

mu = coherence(Ac)
assert 0.0 <= mu <= 1.0 + 1e-12

model = RandomFeatureRidge(n_features=20, random_state=0).fit(X, y)
assert np.all(np.isfinite(model.predict(X)))
print("FITS-OK")
"""
    proc = _run_nojit(code)
    assert proc.returncode == 0 and "FITS-OK" in proc.stdout, proc.stderr[-3000:]


def test_metropolis_without_jit():
    """ARFF, fixed RFF and the whole experiment registry (which imports every
    experiment module).  ``import rflite.metropolis`` must not rely on
    ``_accept_kernel.py_func``, which does not exist when the JIT is disabled."""
    code = PRELUDE + """
import importlib
for m in ("rflite.metropolis", "rflite.experiments.metropolis"):
    importlib.import_module(m)
from rflite.experiments import registry
assert "arff-case1" in registry()
from rflite.metropolis import arff, fixed_rff
r = fixed_rff(X, y, n_features=8, rng=0)
assert np.all(np.isfinite(r.frequencies))
a = arff(X, y, n_features=8, n_iter=3, rng=0)
assert np.all(np.isfinite(a.frequencies))
print("ARFF-OK")
"""
    proc = _run_nojit(code)
    assert proc.returncode == 0 and "ARFF-OK" in proc.stdout, proc.stderr[-3000:]
