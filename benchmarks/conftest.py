"""Shared settings for the benchmarks.

The benchmarks run once as smoke tests in the default suite (pytest-benchmark
is disabled by ``setup.cfg``); ``python -m pytest benchmarks --benchmark-enable``
times them.  Every rflite case sits in the same group as a plain NumPy
implementation of the same maths, so the ratio is measured in one run.
"""

import pytest

import rflite


@pytest.fixture(scope="session", autouse=True)
def _compiled():
    # JIT compilation is benchmarked separately (bench_compile); keep it out of
    # every other timing.
    rflite.warmup()
