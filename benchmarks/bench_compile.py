"""JIT compile time of every kernel (``rflite.warmup()``), cold and from the disk cache.

Each round runs a fresh interpreter, so import time is included; ``cold`` points
numba at an empty cache directory, ``cached`` reuses one filled beforehand: the
directory of ``cold``'s first round when it ran (a cold compile is most of these
two cases' time, about 13 s in the default suite's single smoke round), else
one it fills itself.
"""

import os
import subprocess
import sys

import pytest

CODE = "import rflite; rflite.warmup()"


def _run(cache_dir):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir))
    subprocess.run([sys.executable, "-c", CODE], env=env, check=True)


@pytest.fixture(scope="module")
def cache_root(tmp_path_factory):
    return tmp_path_factory.mktemp("numba-cache")


@pytest.mark.benchmark(group="compile")
def bench_compile_cold(benchmark, cache_root):
    counter = iter(range(10**6))

    def cold():
        _run(cache_root / f"cold{next(counter)}")

    benchmark.pedantic(cold, rounds=3, iterations=1)


@pytest.mark.benchmark(group="compile")
def bench_compile_cached(benchmark, cache_root):
    filled = cache_root / "cold0"
    if not filled.is_dir():  # run on its own: fill a cache first
        _run(filled)
    benchmark.pedantic(_run, args=(filled,), rounds=3, iterations=1)
