"""rflite: sparse and adaptive random-feature models, accelerated with numba.

Import single functions from the flat modules, e.g.
``from rflite.features import random_feature_map``.
"""

# Before any kernel module: numba's cache=True decorators need a writable cache
# directory at import time (a read-only install has none; see rflite._core.cache).
from rflite._core.cache import NumbaCacheWarning, ensure_numba_cache

ensure_numba_cache()
NumbaCacheWarning.__module__ = __name__  # documented and shown as rflite's

from rflite.features import (  # noqa: E402
    FeatureMap,
    FeatureOperator,
    RandomFeatures,
    random_feature_map,
    variable_usage,
)

__version__ = "0.1.0"

__all__ = [
    "FeatureMap", "FeatureOperator", "NumbaCacheWarning", "RandomFeatures",
    "random_feature_map", "variable_usage", "warmup",
]


def warmup() -> None:
    """Compile every numba kernel now, so that later calls (and timings) skip the JIT.

    With ``cache=True`` the compiled code is also written to disk, so this costs
    a few seconds once per installation and well under a second afterwards.
    """
    import importlib

    for name in _KERNEL_MODULES:
        module = importlib.import_module(f"rflite.{name}")
        module._warmup()


#: Modules with numba kernels; each defines ``_warmup()``, compiling its kernels
#: on tiny inputs with the dtypes real calls use.
_KERNEL_MODULES = ("features", "htp", "imp", "bp", "theory", "greedy", "metropolis")
