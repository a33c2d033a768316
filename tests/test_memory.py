"""Memory: the peak of a fit is estimated up front, against every limit that applies.

- :func:`rflite._core.memory.available_memory` reads ``RLIMIT_AS`` (``ulimit -v``)
  and cgroup v1 / v2 limits, not only ``MemAvailable``;
- a fit that cannot fit is refused before anything large is allocated, with
  the library's ``MemoryError`` naming ``n_features`` (subprocesses under
  ``ulimit -v``);
- validation makes no full-size temporary (``check_array``'s max-abs test),
  and the ridge solve no extra copies of the Gram matrix.
"""

import os
import subprocess
import sys
import textwrap
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from rflite._core import linalg
from rflite._core import memory
from rflite._core import validation

ROOT = Path(__file__).resolve().parents[1]

#: ``ulimit -v`` for the subprocesses, in KiB: room for Python, NumPy, numba
#: and OpenBLAS (about 0.55 GB of address space here) but not for a 3.7 GiB
#: feature matrix.
ULIMIT_KB = 2_000_000

posix_only = pytest.mark.skipif(sys.platform != "linux", reason="ulimit -v and /proc")


def _run_limited(code: str, ulimit_kb: int = ULIMIT_KB) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1")
    script = f"ulimit -v {ulimit_kb}; exec {sys.executable} -c \"$RFLITE_TEST_CODE\""
    env["RFLITE_TEST_CODE"] = textwrap.dedent(code)
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=120)


@pytest.mark.slow(reason="subprocess under a memory limit")
@posix_only
def test_available_memory_reads_rlimit_as():
    res = _run_limited("""
        from rflite._core.memory import available_memory
        print(available_memory())
    """)
    assert res.returncode == 0, res.stderr
    assert int(res.stdout) < ULIMIT_KB * 1024


@pytest.mark.slow(reason="subprocess under a memory limit")
@posix_only
@pytest.mark.parametrize("estimator", ["HARFERegressor", "RandomFeatureRidge"])
def test_fit_refused_up_front_under_ulimit(estimator):
    """A 2000 x 250000 fit (3.7 GiB) under a 1.9 GB address-space limit: the
    library's MemoryError naming n_features, raised by the up-front check."""
    res = _run_limited(f"""
        import traceback
        import numpy as np
        from rflite.htp import HARFERegressor
        from rflite.ridge import RandomFeatureRidge
        X = np.random.default_rng(0).uniform(-1, 1, (2000, 5))
        try:
            {estimator}(n_features=250_000, random_state=0).fit(X, X[:, 0])
        except MemoryError as exc:
            print("MemoryError:", exc)
            print("raised in", traceback.extract_tb(exc.__traceback__)[-2].name)
    """)
    assert res.returncode == 0, res.stderr
    assert "MemoryError:" in res.stdout, res.stdout
    assert "n_features=250000" in res.stdout and "use fewer features" in res.stdout
    assert "raised in _check_feature_memory" in res.stdout


@pytest.mark.slow(reason="subprocess under a memory limit")
@posix_only
def test_ridge_refused_when_matrix_fits_but_peak_does_not():
    """The estimate covers the peak (matrix plus the Gram workspace), not only
    the matrix: with room for the 4000 x 4000 matrix (122 MiB) but not for it
    and the two 122 MiB Gram matrices, the fit is refused before drawing."""
    res = _run_limited("""
        import resource
        import numpy as np
        from rflite.ridge import RandomFeatureRidge
        X = np.random.default_rng(0).uniform(-1, 1, (4000, 5))
        RandomFeatureRidge(n_features=20, random_state=0).fit(X[:50], X[:50, 0])
        for line in open("/proc/self/status"):
            if line.startswith("VmSize:"):
                used = int(line.split()[1]) * 1024
        matrix = 4000 * 4000 * 8
        resource.setrlimit(resource.RLIMIT_AS, (used + matrix + (150 << 20), -1))
        try:
            RandomFeatureRidge(n_features=4000, random_state=0).fit(X, X[:, 0])
            print("fitted")
        except MemoryError as exc:
            print("MemoryError:", exc)
    """, ulimit_kb="unlimited")
    assert res.returncode == 0, res.stderr
    assert "MemoryError:" in res.stdout and "peak of the fit" in res.stdout, res.stdout
    assert "n_features=4000" in res.stdout


def _fake_cgroup(tmp_path, monkeypatch, *, v2=None, v1=None):
    """A fake /sys/fs/cgroup tree and /proc/self/cgroup for one process."""
    proc = tmp_path / "cgroup"
    lines = []
    if v2 is not None:
        base = tmp_path / "v2"
        (base / "job").mkdir(parents=True)
        (base / "memory.max").write_text("max\n")
        (base / "job" / "memory.max").write_text(f"{v2[0]}\n")
        (base / "job" / "memory.current").write_text(f"{v2[1]}\n")
        lines.append("0::/job")
        monkeypatch.setattr(memory, "_CGROUP_V2_ROOTS", (str(base),))
    else:
        monkeypatch.setattr(memory, "_CGROUP_V2_ROOTS", (str(tmp_path / "none"),))
    if v1 is not None:
        base = tmp_path / "v1"
        (base / "a" / "b").mkdir(parents=True)
        (base / "memory.limit_in_bytes").write_text("9223372036854771712\n")  # no limit
        (base / "a" / "memory.limit_in_bytes").write_text(f"{v1[0]}\n")  # parent's limit
        (base / "a" / "memory.usage_in_bytes").write_text(f"{v1[1]}\n")
        (base / "a" / "b" / "memory.limit_in_bytes").write_text("9223372036854771712\n")
        lines.append("4:memory:/a/b")
        monkeypatch.setattr(memory, "_CGROUP_V1_ROOTS", (str(base),))
    else:
        monkeypatch.setattr(memory, "_CGROUP_V1_ROOTS", (str(tmp_path / "none"),))
    proc.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(memory, "_PROC_SELF_CGROUP", str(proc))


def test_available_memory_reads_cgroup_v2(tmp_path, monkeypatch):
    _fake_cgroup(tmp_path, monkeypatch, v2=(1 << 30, 1 << 28))
    assert memory._cgroup_available() == (1 << 30) - (1 << 28)
    assert memory.available_memory() <= (1 << 30) - (1 << 28)


def test_available_memory_reads_cgroup_v1_parent_limit(tmp_path, monkeypatch):
    _fake_cgroup(tmp_path, monkeypatch, v1=(3 << 29, 1 << 29))
    assert memory._cgroup_available() == 1 << 30
    assert memory.available_memory() <= 1 << 30


def test_no_cgroup_limit(tmp_path, monkeypatch):
    _fake_cgroup(tmp_path, monkeypatch)
    assert memory._cgroup_available() is None
    assert memory.available_memory() > 0


def _peak_bytes(fn, *args):
    tracemalloc.start()
    try:
        fn(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_check_array_makes_no_full_size_temporary():
    A = np.random.default_rng(0).normal(size=(2000, 2000))  # 32 MB
    assert _peak_bytes(validation.check_array, A, "A") < A.nbytes / 4
    assert validation.max_abs(A) == np.abs(A).max()
    for bad in (np.nan, np.inf, -np.inf):
        B = A.copy()
        B[-1, -1] = bad
        with pytest.raises(ValueError, match="A contains NaN or infinite"):
            validation.check_array(B, "A")
    C = A * (1 + 1j)
    assert validation.max_abs(C) == np.abs(C).max()
    assert validation.max_abs(np.arange(-5.0, 3.0)) == 5.0


def test_ridge_fit_workspace_is_two_gram_matrices():
    """ridge_fit on a real m x N matrix: the Gram matrix and one copy to factorise,
    no copy of A (``A.conj()``) and no |M| temporary."""
    rng = np.random.default_rng(0)
    A = rng.normal(size=(300, 2000))
    y = rng.normal(size=300)
    gram = 300 * 300 * 8
    assert _peak_bytes(linalg.ridge_fit, A, y, 1e-3) < 2 * gram + 0.5 * gram


@posix_only
@pytest.mark.parametrize("make, matrix", [
    # SHRIMP: 1000 x 2 * 4000 real columns (61 MiB); peak 4x the matrix
    ("SHRIMPRegressor(n_features=4000, subsets='random', n_steps=1, random_state=0)",
     1000 * 8000 * 8),
    # ARFF: S is 1000 x 4000 complex (61 MiB); peak about 3x S plus the Gram copies
    ("ARFFRegressor(n_features=4000, n_iter=1, random_state=0)", 1000 * 4000 * 16),
])
@pytest.mark.slow(reason="subprocess under a memory limit")
def test_shrimp_and_arff_refused_when_matrix_fits_but_peak_does_not(make, matrix):
    """SHRIMP's and ARFF's estimates are their fits' peaks (about
    4x and 3x the feature matrix), so with room for the matrix plus a
    little, the fit is refused up front with a MemoryError naming n_features."""
    res = _run_limited(f"""
        import resource
        import numpy as np
        from rflite.imp import SHRIMPRegressor
        from rflite.metropolis import ARFFRegressor
        X = np.random.default_rng(0).uniform(-1, 1, (1000, 5))
        for line in open("/proc/self/status"):
            if line.startswith("VmSize:"):
                used = int(line.split()[1]) * 1024
        resource.setrlimit(resource.RLIMIT_AS, (used + {matrix} + (100 << 20), -1))
        try:
            {make}.fit(X, X[:, 0])
            print("fitted")
        except MemoryError as exc:
            print("MemoryError:", exc)
    """, ulimit_kb="unlimited")
    assert res.returncode == 0, res.stderr
    assert "MemoryError:" in res.stdout and "n_features=4000" in res.stdout, res.stdout
    assert "peak of the fit" in res.stdout
