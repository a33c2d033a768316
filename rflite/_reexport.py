"""Public modules whose constants live in the private modules that read them.

When a public module's private machinery moves into a module beside it
(:mod:`rflite.imp` -> ``_imp_path``, ``_imp_select``, ...; :mod:`rflite.metropolis`
-> ``_arff_chain``; :mod:`rflite.bp` -> ``_bp_homotopy``, ``_bp_spgl1``), the
public module re-exports the tunable constants (``rflite.imp.GUARD_RATIO``),
but the code that reads one reads it from its own module.
:func:`reexport` makes setting a re-exported constant on the public
module (``rflite.imp.GUARD_RATIO = 300``, pytest's ``monkeypatch.setattr``)
set it in every home module that holds it too, so the code sees the new
value, as when everything was one module.  (Constants compiled into numba
kernels are frozen at compile time wherever they are set; none of those is
forwarded.)  The public functions and result types defined in the private
modules (``public=``) report the public module as their ``__module__``, for
help() and for pickles that outlive a later move.
"""

from __future__ import annotations

import sys
import types


def reexport(module_name: str, homes, public=()) -> None:
    """Forward assignments of re-exported upper-case constants of ``module_name``,
    and make ``module_name`` the ``__module__`` of the objects in ``public``.

    A name is forwarded to each module of ``homes`` that holds the same
    object under that name when this is called, i.e. at the end of the
    public module's imports.
    """
    for obj in public:
        obj.__module__ = module_name
    public = vars(sys.modules[module_name])
    table = {}
    for home in homes:
        for name, value in vars(home).items():
            if name.isupper() and not name.startswith("_") and public.get(name, home) is value:
                table.setdefault(name, []).append(home)

    class _Module(types.ModuleType):
        def __setattr__(self, name, value):
            for home in table.get(name, ()):
                setattr(home, name, value)
            super().__setattr__(name, value)

    sys.modules[module_name].__class__ = _Module
