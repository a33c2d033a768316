"""JIT compile time of every kernel (``rflite.warmup()``), cold and from the disk cache.

Each round runs a fresh interpreter, so import time is included; ``cold`` points
numba at an empty cache directory, ``cached`` reuses one filled beforehand.
"""

import os
import subprocess
import sys

import pytest

CODE = "import rflite; rflite.warmup()"


def _run(cache_dir):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir))
    subprocess.run([sys.executable, "-c", CODE], env=env, check=True)


@pytest.mark.benchmark(group="compile")
def bench_compile_cold(benchmark, tmp_path):
    counter = iter(range(10**6))

    def cold():
        _run(tmp_path / f"cold{next(counter)}")

    benchmark.pedantic(cold, rounds=3, iterations=1)


@pytest.mark.benchmark(group="compile")
def bench_compile_cached(benchmark, tmp_path):
    _run(tmp_path)  # fill the cache
    benchmark.pedantic(_run, args=(tmp_path,), rounds=3, iterations=1)
