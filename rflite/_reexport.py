"""Public modules whose constants live in the private modules that read them.

When a public module's private machinery moves into a module beside it
(:mod:`rflite.imp` -> ``_imp_path``, ``_imp_select``, ...; :mod:`rflite.metropolis`
-> ``_arff_chain``), the public module re-exports the tunable constants
(``rflite.imp.GUARD_RATIO``), but the code that reads one reads it from its
own module.  :func:`forward_constants` makes setting a constant on the public
module (``rflite.imp.GUARD_RATIO = 300``, pytest's ``monkeypatch.setattr``)
set it in its home module too, so the code sees the new value, as when
everything was one module.
"""

from __future__ import annotations

import sys
import types


def forward_constants(module_name: str, homes) -> None:
    """Forward assignments of the upper-case names of ``homes`` on ``module_name``.

    Call at the end of the public module, after it has imported the
    constants from ``homes`` (a sequence of modules).
    """
    table = {name: home for home in homes
             for name in dir(home) if name.isupper() and not name.startswith("_")}

    class _Module(types.ModuleType):
        def __setattr__(self, name, value):
            home = table.get(name)
            if home is not None:
                setattr(home, name, value)
            super().__setattr__(name, value)

    sys.modules[module_name].__class__ = _Module
