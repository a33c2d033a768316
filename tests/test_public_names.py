"""Public modules: plain modules whose re-exported objects name them, and whose
constants are the objects their private homes define and read.

A module constant is read, when a fit runs, from the module that defines it
(its home); setting it there reaches the code.  The public modules re-export
them for reading and documentation, with no class swap on the module.
"""

import importlib
import sys
import types

import pytest

PUBLIC = ("rflite", "rflite.features", "rflite.ridge", "rflite.htp", "rflite.imp", "rflite.bp",
          "rflite.metropolis", "rflite.greedy", "rflite.theory", "rflite.datasets",
          "rflite.exceptions", "rflite._dask.backend")


@pytest.mark.parametrize("public", PUBLIC)
def test_public_modules_are_plain_modules(public):
    assert type(importlib.import_module(public)) is types.ModuleType


@pytest.mark.parametrize("public", PUBLIC)
def test_reexported_constants_are_their_homes_objects(public):
    """Every upper-case constant a public module re-exports is, by identity, the
    one its home module defines (no copy that a setting could split from)."""
    mod = importlib.import_module(public)
    names = getattr(mod, "__all__", [n for n in vars(mod) if n.isupper()])
    checked = 0
    for name in names:
        value = getattr(mod, name)
        if not name.isupper() or isinstance(value, (types.ModuleType, type)):
            continue
        homes = [m for m in list(sys.modules.values())
                 if getattr(m, "__name__", "").startswith("rflite.")
                 and name in vars(m) and vars(m)[name] is value]
        assert homes, (public, name)
        checked += 1
    assert checked or public in ("rflite", "rflite.exceptions"), public


def test_setting_a_constant_in_its_home_reaches_the_reader(monkeypatch):
    """LP_MAX_ENTRIES is read at call time by the BPDN dispatch: set to 0 in its
    home, basis pursuit on a small dictionary takes the column-generation LP."""
    import numpy as np

    from rflite._bp import lp as _bp_lp
    from rflite.bp import basis_pursuit

    rng = np.random.default_rng(0)
    A = rng.standard_normal((10, 40))
    y = A[:, :3] @ np.array([1.0, -1.0, 0.5])
    assert basis_pursuit(A, y).stop_reason != "linprog"  # the default route: SPGL1 / homotopy
    monkeypatch.setattr(_bp_lp, "LP_MAX_ENTRIES", 0)
    assert basis_pursuit(A, y).stop_reason == "linprog"


def test_moved_public_names_keep_their_home():
    """A result type defined in a private module pickles under the public name."""
    import pickle

    import numpy as np

    from rflite.metropolis import ARFFResult

    res = ARFFResult(*(np.zeros(1),) * 5)
    assert ARFFResult.__module__ == "rflite.metropolis"
    assert type(pickle.loads(pickle.dumps(res))) is ARFFResult


@pytest.mark.parametrize("name", ["_dask.backend", "_dask.operator", "_dask.prepare", "_dask.htp",
                                  "_dask.auto", "_dask.split", "_dask.shrimp", "_dask.shrimpcv",
                                  "_dask.srfe", "_dask.gfc", "_dask.arff"])
@pytest.mark.slow(reason="one subprocess per module")
def test_every_dask_module_imports_first(name):
    """A Dask worker imports whichever module its first unpickled task names
    (a kernel of ``_dask.shrimp``, a fold table of ``_dask.auto``): each one must
    import on its own in a fresh process, without a circular-import error."""
    import subprocess
    import sys

    pytest.importorskip("dask")
    run = subprocess.run([sys.executable, "-c", f"import rflite.{name}"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]


@pytest.mark.parametrize("public,names", [
    ("rflite.imp", ("SHRIMPPath", "prune_counts", "SHRIMPSelection", "select_shrimp")),
    ("rflite.metropolis", ("ARFFResult", "Standardizer")),
    ("rflite.bp", ("BPDNPath", "bpdn_path", "L1Result", "SRFEResult", "SigmaUnreachableWarning")),
    ("rflite.greedy", ("DescentResult", "fold_ids", "GFCResult", "gfc_design", "ridge_cv")),
    ("rflite.theory", ("RIPEstimate", "Conditions", "HarfeRiskBound", "harfe_min_samples",
                       "shrimp_prop7_bounds", "rahimi_recht_epsilon")),
    ("rflite.features", ("Normal", "Uniform", "sample_supports", "all_subsets_supports")),
    ("rflite.datasets", ("Sample", "UCIInfo", "UCIDataset", "make_shrimp1", "target_shrimp7",
                         "make_metropolis1", "target_metropolis3")),
])
def test_public_names_defined_in_private_modules_name_the_public_one(public, names):
    mod = importlib.import_module(public)
    for name in names:
        assert getattr(mod, name).__module__ == public, (public, name)
