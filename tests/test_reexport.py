"""Public modules re-export the constants of their private machinery, and setting
one on the public module reaches the code that reads it (rflite._reexport)."""

import importlib

import pytest

#: public module -> (home modules, whether every constant of the homes is public)
SPLITS = {
    "rflite.imp": (("rflite._imp.factor", "rflite._imp.guard", "rflite._imp.path",
                    "rflite._imp.select"), True),
    "rflite.metropolis": (("rflite._arff.chain",), True),
    "rflite.greedy": (("rflite._gfc.descent",), True),
    "rflite.htp": (("rflite._htp.select",), True),
    "rflite.features": (("rflite._features.fill",), True),
    "rflite._dask.backend": (("rflite._dask.operator",), True),
    "rflite.theory": (("rflite._theory.kernels",), True),
    "rflite.bp": (("rflite._bp.homotopy", "rflite._bp.spgl1", "rflite._bp.lp", "rflite._bp.path"),
                  False),
}


def _constants(module):
    return {n: v for n, v in vars(module).items()
            if n.isupper() and not n.startswith("_") and isinstance(v, (int, float, str))
            and not isinstance(v, bool)}


@pytest.mark.parametrize("public", sorted(SPLITS))
def test_constants_reexported_and_forwarded(public, monkeypatch):
    mod = importlib.import_module(public)
    homes, complete = SPLITS[public]
    forwarded = 0
    for home_name in homes:
        home = importlib.import_module(home_name)
        for name, value in _constants(home).items():
            if complete:
                assert hasattr(mod, name), (public, home_name, name)
            if getattr(mod, name, None) is not value:
                continue
            new = "x" if isinstance(value, str) else value + 1
            monkeypatch.setattr(mod, name, new)
            assert getattr(home, name) == new, (public, home_name, name)
            monkeypatch.undo()
            forwarded += 1
    assert forwarded, public


def test_moved_public_names_keep_their_home():
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
    ("rflite.metropolis", ("ARFFResult",)),
    ("rflite.bp", ("BPDNPath", "bpdn_path")),
    ("rflite.greedy", ("DescentResult", "fold_ids")),
    ("rflite.theory", ("RIPEstimate",)),
])
def test_public_names_defined_in_private_modules_name_the_public_one(public, names):
    mod = importlib.import_module(public)
    for name in names:
        assert getattr(mod, name).__module__ == public, (public, name)
