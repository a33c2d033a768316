"""ARFF under threads, fork-based process pools and with the JIT disabled.

Concurrent fits must equal serial ones bit for bit, a fork-context pool
must work after the parent ran a parallel kernel, and so must
``NUMBA_DISABLE_JIT=1``.  numba's threading layer is chosen once per
process, so these run in subprocesses, with the thresholds for the parallel
kernels lowered so that small, fast problems take the parallel paths.
"""

import os
import pathlib
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import rflite
from rflite._arff import kernels as kern
from rflite import metropolis as mp

ROOT = str(pathlib.Path(rflite.__file__).resolve().parents[1])

PRELUDE = """
import numpy as np
import numba
import rflite.metropolis as mp
import rflite._arff.kernels as kern
kern.PARALLEL_MIN_ENTRIES = 0   # the threaded feature kernel for any size
kern.PARALLEL_MIN_FEATURES = 0  # the threaded accept kernel for any K
rng = np.random.default_rng(0)
X = rng.standard_normal((2000, 3))
y = np.sin(2 * X[:, 0]) + np.cos(X[:, 1])

def fit(seed):
    if seed % 2:
        r = mp.arff(X, y, n_features=48, n_iter=6, delta=0.5, rng=seed)
    else:
        r = mp.fixed_rff(X, y, n_features=48, scale=2.0, rng=seed)
    return np.concatenate([r.frequencies.ravel(), r.amplitudes.view(float), r.train_error])
"""


def run_python(code, layer=None, **env_extra):
    """Run ``code`` in a fresh interpreter importing this checkout's rflite."""
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("NUMBA_THREADING_LAYER", None)
    env.pop("NUMBA_DISABLE_JIT", None)
    if layer is not None:
        env["NUMBA_THREADING_LAYER"] = layer
    env.update(env_extra)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


@pytest.mark.slow(reason="threaded, forked or no-JIT runs in a subprocess")
@pytest.mark.parametrize("layer", [None, "workqueue"])
def test_four_threads_equal_serial_bit_for_bit(layer):
    """4 threads fitting at once (parallel feature and accept kernels, BLAS) = serial.

    Guards against the workqueue layer aborting the process ("Concurrent access
    has been detected") and, with the default layer, BLAS thread limits entered
    and left by the threads interleaving so that some fits differ in the last bits.
    The user's NUMBA_THREADING_LAYER is kept.
    """
    out = run_python(PRELUDE + f"""
from concurrent.futures import ThreadPoolExecutor
seeds = range(8)
serial = [fit(s) for s in seeds]
for _ in range(4):
    with ThreadPoolExecutor(4) as ex:
        threaded = list(ex.map(fit, seeds))
    for a, b in zip(serial, threaded):
        assert np.array_equal(a, b), np.abs(a - b).max()
layer = numba.threading_layer()
assert {layer!r} is None or layer == {layer!r}, layer
print("OK", layer)
""", layer=layer)
    assert out.startswith("OK")


@pytest.mark.slow(reason="threaded, forked or no-JIT runs in a subprocess")
@pytest.mark.parametrize("layer", [None, "workqueue"])
def test_fork_pool_after_parallel_kernel(layer):
    """A fork-context ProcessPoolExecutor works after the parent ran the parallel kernel.

    With numba's GNU OpenMP layer a forked worker would abort ("fork()
    called from a process already using GNU OpenMP") and the parent get
    BrokenProcessPool; a fork-unsafe layer makes the child run the same
    kernel serially (same numbers) with one ParallelFallbackWarning.
    """
    out = run_python(PRELUDE + """
import multiprocessing, warnings
from concurrent.futures import ProcessPoolExecutor

def task(seed):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        res = [fit(seed), fit(seed + 1)]
    return res, [x.category.__name__ for x in w]

if __name__ == "__main__":
    parent = [fit(0), fit(1)]          # starts numba's threading layer here
    layer = numba.threading_layer()
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as ex:
        (child, caught), _ = list(ex.map(task, [0, 2]))
    for a, b in zip(parent, child):
        assert np.array_equal(a, b)
    expect = [] if layer in mp.FORK_SAFE_LAYERS else ["ParallelFallbackWarning"]
    assert caught == expect, (layer, caught)
    print("OK", layer)
""", layer=layer)
    assert out.startswith("OK")


def test_fallback_runs_serial_kernel_with_one_warning(monkeypatch):
    """In a process marked as forked from a fork-unsafe layer: serial kernel, same numbers."""
    rng = np.random.default_rng(2)
    X = rng.standard_normal((300, 2))
    W = 3 * rng.standard_normal((20, 2))
    monkeypatch.setattr(kern, "PARALLEL_MIN_ENTRIES", 0)
    ref = mp._features(X, W, "exp")
    monkeypatch.setattr(kern, "_FORKED_UNSAFE", True)
    monkeypatch.setattr(kern, "_FALLBACK_WARNED", False)
    monkeypatch.setattr(kern, "_cis_parallel", None)  # must not be launched
    with pytest.warns(mp.ParallelFallbackWarning, match="run serially"):
        S = mp._features(X, W, "exp")
    assert_array_equal(S, ref)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_array_equal(mp._features(X, W, "exp"), ref)  # warned once per process


@pytest.mark.slow(reason="threaded, forked or no-JIT runs in a subprocess")
def test_jit_disabled_import_and_fit():
    """NUMBA_DISABLE_JIT=1: the module imports and a tiny fit (every kernel, the
    parallel ones included) matches the compiled one."""
    code = """
import numpy as np
import rflite.metropolis as mp
import rflite._arff.kernels as kern
kern.PARALLEL_MIN_ENTRIES = 0
kern.PARALLEL_MIN_FEATURES = 0
rng = np.random.default_rng(0)
X = rng.standard_normal((60, 2))
y = np.cos(2 * X[:, 0])
a = mp.arff(X, y, n_features=6, n_iter=4, delta=0.5, rng=1)
f = mp.fixed_rff(X, y, n_features=6, rng=1)
p = mp.ARFFRegressor(6, n_iter=3, random_state=1).fit(X, y).predict(X[:5])
np.save(OUT, np.concatenate([a.amplitudes.view(float), a.train_error,
                             f.amplitudes.view(float), p]))
"""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.npy")
        run_python(f"OUT = {out!r}\n" + code, NUMBA_DISABLE_JIT="1")
        nojit = np.load(out)
        run_python(f"OUT = {out!r}\n" + code)
        jit = np.load(out)
    # the same arithmetic in Python and LLVM, up to contraction and sum order
    assert_allclose(nojit, jit, rtol=1e-9, atol=1e-12)
