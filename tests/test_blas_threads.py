"""Same seed, same model with one or two BLAS threads, on a minimal install.

A plain ``pip install rflite`` has only the runtime dependencies, so these
tests run the fits in a subprocess where every module that only the test
extras provide (scikit-learn, dask, pandas, ...) cannot be imported: what a
user of the first README command gets.  Before ``threadpoolctl`` was a runtime
dependency, rflite's BLAS thread limits were silently off there and the
default ``SHRIMPRegressor`` on airfoil scored 0.577 with one BLAS thread and
0.835 with two (same seed).
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]

_SCRIPT = r"""
import importlib.abc, os, sys, warnings

class _Block(importlib.abc.MetaPathFinder):
    blocked = set(os.environ["RFLITE_TEST_BLOCK"].split(","))
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in self.blocked:
            raise ImportError(f"{name} is not installed (simulated minimal install)")
        return None

sys.meta_path.insert(0, _Block())
warnings.simplefilter("ignore")
import importlib
import numpy as np
from rflite.datasets import load_uci

d = load_uci("airfoil", rng=0)
X, y, Xt = d.X_train[:400], d.y_train[:400], d.X_test[:200]
preds = {}
for name in sys.argv[2].split(","):
    module, cls = name.split(".")
    est = getattr(importlib.import_module("rflite." + module), cls)(random_state=0)
    preds[name] = est.fit(X, y).predict(Xt)
np.savez(sys.argv[1], **preds)
"""

ESTIMATORS = (
    "ridge.RandomFeatureRidge", "htp.HARFERegressor", "imp.SHRIMPRegressor",
    "metropolis.ARFFRegressor", "greedy.GFCRegressor", "bp.SRFERegressor",
)


def _requirement_name(req: str) -> str:
    return re.split(r"[\[<>=!~; (]", req, maxsplit=1)[0].strip().lower().replace("_", "-")


def _runtime_closure() -> set[str]:
    """Installed distributions that rflite's runtime dependencies pull in (normalised names)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    todo = [_requirement_name(r) for r in project["dependencies"]]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            reqs = importlib.metadata.requires(name) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        # extras-only requirements ("; extra == ...") are not installed by default
        todo += [_requirement_name(r) for r in reqs if "extra ==" not in r]
    return seen


def _extras_only_modules() -> list[str]:
    """Top-level modules installed here that a plain ``pip install rflite`` would not have."""
    closure = _runtime_closure()
    blocked = set()
    for module, dists in importlib.metadata.packages_distributions().items():
        names = {d.lower().replace("_", "-") for d in dists}
        if module.isidentifier() and not names & closure and module not in sys.stdlib_module_names:
            blocked.add(module)
    blocked.discard("rflite")
    return sorted(blocked)


def test_extras_only_modules_cover_the_test_tools():
    blocked = _extras_only_modules()
    assert {"sklearn", "dask", "pytest"} <= set(blocked)
    assert not {"numpy", "scipy", "numba", "matplotlib", "llvmlite"} & set(blocked)


@pytest.mark.slow(reason="fits every model in subprocesses at 1 and 2 BLAS threads")
def test_default_models_do_not_depend_on_blas_threads(tmp_path):
    """Every default regressor: predictions with 1 and 2 BLAS threads agree.

    Bitwise for the path- and support-based models (a different rounding can
    change a pruning or thresholding decision, and SHRIMP's changed its test
    MSE by 7 %); to 1e-12 relative for ridge and GFC, whose dense solves keep
    the library's BLAS threads and differ in the last bits only.
    """
    script = tmp_path / "fit.py"
    script.write_text(_SCRIPT)
    block = ",".join(_extras_only_modules())
    # both processes at once (half the suite's wall time on two cores); the
    # thread counts are fixed by the environment, so the load cannot change them
    procs = {}
    for n in (1, 2):
        env = dict(os.environ, OPENBLAS_NUM_THREADS=str(n), OMP_NUM_THREADS=str(n),
                   MKL_NUM_THREADS=str(n), RFLITE_TEST_BLOCK=block,
                   PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
        procs[n] = subprocess.Popen([sys.executable, str(script), str(tmp_path / f"t{n}.npz"),
                                     ",".join(ESTIMATORS)], env=env, cwd=tmp_path)
    try:
        codes = {n: p.wait(timeout=600) for n, p in procs.items()}
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
    assert codes == {1: 0, 2: 0}, f"fit script exit codes by BLAS threads: {codes}"
    out = {n: np.load(tmp_path / f"t{n}.npz") for n in procs}
    differ = {}
    for name in ESTIMATORS:
        p1, p2 = out[1][name], out[2][name]
        exact = name not in ("ridge.RandomFeatureRidge", "greedy.GFCRegressor")
        tol = 0.0 if exact else 1e-12 * np.abs(p1).max()
        if np.any(np.abs(p2 - p1) > tol):
            differ[name] = float(np.abs(p2 - p1).max())
    assert not differ, f"largest prediction change from 1 to 2 BLAS threads: {differ}"
