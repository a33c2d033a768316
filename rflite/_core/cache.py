"""Make numba's on-disk cache work on read-only installs.

Every rflite kernel is ``@njit(cache=True)``.  numba picks a *cache locator*
when the decorator runs, at import: ``NUMBA_CACHE_DIR`` if set and writable,
else the ``__pycache__`` beside the source file, else the user-wide cache
(``$XDG_CACHE_HOME`` or ``~/.cache``).  If none is writable (a read-only
container image, a service account whose ``HOME`` does not exist) the
decorator raises ``RuntimeError: cannot cache function ...: no locator
available`` and ``import rflite`` fails.

:func:`ensure_numba_cache` runs in ``rflite/__init__.py`` before any kernel
module is imported.  It asks numba's own locator classes whether one of them
can serve a file of this package (so the answer is numba's, not a copy of its
rules); if none can, it points numba's cache at a private directory under
:func:`tempfile.gettempdir` and warns once with :class:`NumbaCacheWarning`.
The directory is set in ``numba.config.CACHE_DIR`` and in the environment
variable ``NUMBA_CACHE_DIR``, so that process-pool workers started later
inherit it silently instead of warning again; it is numba's process-wide
setting, so other numba code imported afterwards in the same process caches
there too.
"""

from __future__ import annotations

import os
import stat
import tempfile
from rflite._core.exceptions import warn

__all__ = ["NumbaCacheWarning", "ensure_numba_cache"]


class NumbaCacheWarning(RuntimeWarning):
    """numba cannot cache beside rflite or in NUMBA_CACHE_DIR; a temporary cache is used."""


def _probe():  # a plain function of this package for numba's locators to place
    pass


def _writable_dir(path: str) -> bool:
    """True if ``path`` exists or can be made, and a file can be created in it."""
    try:
        os.makedirs(path, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
    except OSError:
        return False
    return True


def _numba_can_cache(source_file: str) -> bool:
    """Whether one of numba's cache locators accepts ``source_file`` now."""
    from numba.core import caching, config

    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    classes = getattr(impl, "_locator_classes", None)
    if classes is None:  # an unknown numba layout: the public locators, in numba's order
        classes = [getattr(caching, n) for n in
                   ("UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator")
                   if hasattr(caching, n)]
    if config.CACHE_LOCATOR_CLASSES:  # the user chose the locators; leave them alone
        return True
    for cls in classes:
        try:
            if cls.from_function(_probe, source_file) is not None:
                return True
        except Exception:  # a locator that cannot even be asked is not usable
            continue
    return False


def _private_temp_cache() -> str | None:
    """A cache directory under the temporary directory that only this user can write.

    ``<tmp>/rflite-numba-cache-<uid>`` is reused across runs (so the cache
    still saves compile time) only when it is a real directory owned by this
    user and not writable by others: numba's cache files are pickles, and a
    directory someone else could write into must not be loaded from.
    Otherwise a fresh :func:`tempfile.mkdtemp` directory is used.  ``None`` if
    no temporary directory is writable at all.
    """
    uid = os.getuid() if hasattr(os, "getuid") else 0
    path = os.path.join(tempfile.gettempdir(), f"rflite-numba-cache-{uid}")
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.lstat(path)
        if (stat.S_ISDIR(st.st_mode) and st.st_uid == uid
                and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and _writable_dir(path)):
            return path
    except OSError:
        pass
    try:
        return tempfile.mkdtemp(prefix="rflite-numba-cache-")
    except OSError:
        return None


def ensure_numba_cache() -> str | None:
    """Give numba a writable cache for rflite's kernels, warning once if it had none.

    Returns
    -------
    str or None
        The cache directory chosen when numba's own locators had nowhere to
        write, else ``None`` (numba's default placement is kept).

    Warns
    -----
    NumbaCacheWarning
        Once per process, when the cache is moved to a temporary directory,
        saying why and where.  If not even a temporary directory is writable
        the warning says so and import will fail in numba, as before.
    """
    if os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0"):
        return None  # nothing is compiled, nothing is cached
    from numba.core import config

    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sincos.py")
    user_dir = config.CACHE_DIR
    if _numba_can_cache(here):
        return None
    path = _private_temp_cache()
    if user_dir:
        why = f"NUMBA_CACHE_DIR={user_dir!r} is not writable"
    else:
        why = (f"neither {os.path.dirname(here)!r} nor the user cache directory "
               "(HOME/XDG_CACHE_HOME) is writable and NUMBA_CACHE_DIR is not set")
    if path is None:
        warn(f"rflite: {why}, and no temporary directory is writable either; "
                      "numba cannot cache rflite's kernels. Set NUMBA_CACHE_DIR to a "
                      "writable directory.", NumbaCacheWarning)
        return None
    config.CACHE_DIR = path
    os.environ["NUMBA_CACHE_DIR"] = path
    warn(f"rflite: {why}; the numba cache for compiled kernels is {path!r} "
                  "instead (set NUMBA_CACHE_DIR to choose a permanent one).",
                  NumbaCacheWarning)
    return path
