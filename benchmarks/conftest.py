"""Shared settings for the benchmarks.

The benchmarks run once as smoke tests in the slow lane (pytest-benchmark
is disabled by ``setup.cfg``); ``python -m pytest benchmarks --benchmark-enable``
times them.  Every rflite case sits in the same group as a plain NumPy
implementation of the same maths, so the ratio is measured in one run, and
``benchmarks/gate.py`` compares those ratios between two runs (see its
docstring for the command).

Naming convention the gate relies on: a benchmark whose test name (including
its parameter id, e.g. ``bench_rflite[d100-q2-rflite-1thread]``) contains
``rflite`` is the rflite side of its group; every other benchmark in the group
is a reference.

References run with ONE BLAS thread (:func:`_one_blas_thread_for_references`):
on the shared 2-core machine a threaded BLAS in the reference measures the
thread pool and the load, not the algorithm; rflite cases keep their own
threading (which is part of what rflite ships).
"""

import contextlib

import pytest

import rflite

# benchmarks/ is on sys.path for its conftest (pytest's default "prepend"
# import mode): the gate's own rule decides which side a benchmark is on.
from gate import is_rflite


@pytest.fixture(scope="session", autouse=True)
def _compiled():
    # JIT compilation is benchmarked separately (bench_compile); keep it out of
    # every other timing.
    rflite.warmup()


def blas_limit(test_name: str, fixturenames) -> contextlib.AbstractContextManager:
    """The BLAS thread limit a test runs under: one thread for a reference benchmark.

    A reference is a test that uses the ``benchmark`` fixture and whose name
    (``request.node.name``, parameter id included) does not contain
    ``"rflite"`` (:func:`gate.is_rflite`); it gets threadpoolctl's
    ``threadpool_limits(1, user_api="blas")``.  Everything else (rflite cases,
    summaries, agreement checks) gets a null context and keeps its threading.
    """
    if "benchmark" not in fixturenames or is_rflite(test_name):
        return contextlib.nullcontext()
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn
        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")


@pytest.fixture(autouse=True)
def _one_blas_thread_for_references(request):
    """Run every reference benchmark with one BLAS thread (see :func:`blas_limit`).

    The limit covers the test's function-scoped fixtures and its body, i.e.
    everything the benchmark times; module-scoped problem set-up is outside it.
    """
    with blas_limit(request.node.name, request.fixturenames):
        yield
