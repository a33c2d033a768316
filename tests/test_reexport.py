"""Public modules re-export the constants of their private machinery, and setting
one on the public module reaches the code that reads it (rflite._reexport)."""

import importlib

import pytest

SPLITS = {
    "rflite.imp": ("rflite._imp_factor", "rflite._imp_guard", "rflite._imp_path",
                   "rflite._imp_select"),
    "rflite.metropolis": ("rflite._arff_chain",),
}


@pytest.mark.parametrize("public", sorted(SPLITS))
def test_constants_reexported_and_forwarded(public, monkeypatch):
    mod = importlib.import_module(public)
    for home_name in SPLITS[public]:
        home = importlib.import_module(home_name)
        names = [n for n in dir(home) if n.isupper() and not n.startswith("_")
                 and isinstance(getattr(home, n), (int, float, str))
                 and not isinstance(getattr(home, n), bool)]
        assert names, home_name
        for name in names:
            assert getattr(mod, name) == getattr(home, name), (public, name)
            new = "x" if isinstance(getattr(home, name), str) else getattr(home, name) + 1
            monkeypatch.setattr(mod, name, new)
            assert getattr(home, name) == new, (public, home_name, name)


def test_moved_public_names_keep_their_home():
    import pickle

    import numpy as np

    from rflite.metropolis import ARFFResult

    res = ARFFResult(*(np.zeros(1),) * 5)
    assert ARFFResult.__module__ == "rflite.metropolis"
    assert type(pickle.loads(pickle.dumps(res))) is ARFFResult
