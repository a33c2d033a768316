"""Ctrl-C during ``FeatureMap.transform`` stops it at once.

Each case runs the same transform over and over in a subprocess (for up to
60 s), sends SIGINT about 0.5 s after the first one started and checks that
the process is gone soon after: queued row blocks are cancelled and the BLAS
pre-activation is split into interruptible calls.  The bound (2.5 s after the
signal) is generous for a busy machine; one uninterrupted transform takes
0.4-8 s depending on the machine.  (A single transform would not do: on a
fast machine the fused BLAS + sincos path can finish it before the signal.)
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow(reason="signals sent to subprocesses")

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import sys, time
import numpy as np
from rflite.features import random_feature_map
d, q, m, n, activation = {d}, {q}, {m}, {n}, {activation!r}
fmap = random_feature_map(d, n, q=q, activation=activation, rng=0)
X = np.random.default_rng(0).uniform(-1, 1, (m, d))
fmap.transform(X[:8], n_threads=2)  # compile before the clock starts
print("start", flush=True)
t = time.perf_counter()
try:
    while time.perf_counter() - t < 60:  # the signal must land during the work
        fmap.transform(X, n_threads=2)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(130)
print("finished", time.perf_counter() - t, flush=True)
"""

CASES = {
    # d > 4q: sparse gather kernel, many queued row blocks in the thread pool
    "gather-blocks": dict(d=2000, q=400, m=2000, n=5000, activation="tanh"),
    # d <= 4q: the pre-activation is BLAS, which cannot be interrupted mid-call
    "blas-preactivation": dict(d=1000, q=None, m=2000, n=10000, activation="sin"),
}

def _sigint_default():
    """``preexec_fn``: SIGINT back to its default in the child.

    A run started in the background by a non-interactive shell (``cmd &``,
    ``nohup``, some CI runners) inherits SIGINT *ignored*, and Python then
    installs no KeyboardInterrupt handler, so the test would measure the
    environment, not rflite.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)



@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("case", list(CASES))
def test_sigint_stops_transform_within_seconds(case):
    env = dict(os.environ, PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="2")
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD.format(**CASES[case])],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT,
        preexec_fn=_sigint_default,
    )
    try:
        assert proc.stdout.readline().strip() == "start", proc.stderr.read()
        time.sleep(0.5)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        elapsed = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "interrupted" in out, (out, err)
    assert proc.returncode == 130
    assert elapsed < 2.5, f"the process exited {elapsed:.1f} s after SIGINT"
