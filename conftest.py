"""Repository-level pytest settings.

``setup.cfg`` collects doctests from every module (``--doctest-modules``) in
``tests``, ``benchmarks`` and ``rflite``; both test folders have a
``conftest.py`` and neither is a package, so collecting the two files as
doctest modules under the same name ``conftest`` stopped the whole-suite run
with "import file mismatch".  They hold no doctests: skip them as modules
(pytest still loads them as conftest plugins).
"""

collect_ignore = ["tests/conftest.py", "benchmarks/conftest.py"]
