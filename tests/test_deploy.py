"""Deployment faults: read-only installs and signals, in subprocesses.

Each test starts a fresh interpreter, because what is under test (numba's cache
locators at import time, signal handling, worker processes) is per process.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import rflite

PACKAGE = Path(rflite.__file__).resolve().parent

#: A small fit through a ``cache=True`` kernel module (features) and an algorithm
#: (HARFE); prints a marker so the test knows the script got to the end.
SMALL_FIT = """
import warnings, numpy as np
import rflite
from rflite.features import random_feature_map
from rflite.htp import harfe
rng = np.random.default_rng(0)
X = rng.standard_normal((30, 3)); y = np.sin(X[:, 0])
fmap = random_feature_map(3, 40, q=1, rng=0)
res = harfe(fmap.transform(X), y, s=5, lam=1e-3)
assert np.all(np.isfinite(res.coef))
print("FIT-OK", flush=True)
"""

# preexec_fn restoring SIGINT in children (see there)
from test_interrupt import _sigint_default  # noqa: E402

pytestmark = pytest.mark.slow(reason="subprocess deployment and signal tests")



def _readonly_env(tmp: Path) -> tuple[dict, Path]:
    """An environment in which the package dir and HOME are unwritable, and a cache
    dir the process cannot write.

    The package is copied into ``tmp`` (so no stale ``__pycache__`` of the
    worktree can serve the cache).  A normal user gets a read-only copy through
    chmod.  Root ignores file modes, so for root every ``__pycache__`` of the
    copy is a regular file and HOME lies under a regular file: creating a
    directory there fails with ENOTDIR whoever asks, which is the failure
    numba's locators see in a read-only install.  (Dropping privileges with
    setpriv is not enough: the unprivileged user often cannot read root's
    Python installation at all.)  ``XDG_CACHE_HOME`` is cleared so that numba's
    user-wide locator looks under HOME.
    """
    dst = tmp / "site"
    shutil.copytree(PACKAGE, dst / "rflite",
                    ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("NUMBA_") and k not in ("XDG_CACHE_HOME", "PYTHONPATH")}
    env.update(PYTHONPATH=str(dst), PYTHONDONTWRITEBYTECODE="1")
    if os.geteuid() == 0:
        blocked = tmp / "blocked"
        blocked.write_text("a file, so that nothing can be created below it\n")
        for pkg in [dst / "rflite", *(d for d in (dst / "rflite").rglob("*") if d.is_dir())]:
            (pkg / "__pycache__").write_text("")
        env["HOME"] = str(blocked / "home")
        ro_cache = blocked / "cache"
    else:
        env["HOME"] = "/nonexistent"
        ro_cache = tmp / "ro-cache"
        ro_cache.mkdir()
        for p in [*tmp.rglob("*"), tmp]:
            p.chmod(0o555 if p.is_dir() else 0o444)
    return env, ro_cache


@pytest.fixture(scope="module")
def readonly_install():
    """One read-only copy of the package for the module's tests (the second run then
    loads the kernels from the temporary cache the first one wrote)."""
    d = Path(tempfile.mkdtemp(prefix="rflite-ro-"))
    env, ro_cache = _readonly_env(d)
    yield d, env, ro_cache
    for p in [d, *d.rglob("*")]:
        if p.is_dir():
            p.chmod(0o755)
    shutil.rmtree(d, ignore_errors=True)


def test_read_only_install_imports_and_fits(readonly_install):
    """A read-only install imports and fits: ``import rflite.features`` must not
    raise ``RuntimeError: cannot cache function ...: no locator available``."""
    tmp, env, _ = readonly_install
    cmd = [sys.executable, "-W", "always", "-c", SMALL_FIT]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300, cwd=tmp)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "FIT-OK" in proc.stdout
    # exactly one warning, saying where the cache went
    assert proc.stderr.count("NumbaCacheWarning") == 1, proc.stderr
    assert "numba cache" in proc.stderr


def test_read_only_numba_cache_dir_does_not_break_import(readonly_install):
    """A ``NUMBA_CACHE_DIR`` the process cannot write is treated like no cache dir."""
    tmp, env, ro_cache = readonly_install
    env = dict(env, NUMBA_CACHE_DIR=str(ro_cache))
    cmd = [sys.executable, "-W", "always", "-c", SMALL_FIT]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300, cwd=tmp)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "FIT-OK" in proc.stdout
    assert proc.stderr.count("NumbaCacheWarning") == 1, proc.stderr
    assert "NUMBA_CACHE_DIR" in proc.stderr


# ----------------------------------------------------------------------- signals

def _children(pid: int) -> set[int]:
    """PIDs of the live (non-zombie) descendants of ``pid``, from /proc."""
    parent = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            parent[int(entry)] = int(fields[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {c for c, p in parent.items() if p in frontier} - found
        found |= frontier
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc to find child processes")
@pytest.mark.parametrize("sig, group", [(signal.SIGTERM, False), (signal.SIGINT, False),
                                        (signal.SIGINT, True)],
                         ids=["SIGTERM", "SIGINT", "Ctrl-C-to-group"])
def test_signal_during_pool_start_up_leaves_no_process(tmp_path, sig, group):
    """SIGTERM while ``--jobs 2`` workers start must not kill only the
    parent, leaving the workers and the resource tracker running.  ``group``
    sends the signal to the whole process group, as a terminal's Ctrl-C does."""
    out = tmp_path / "figs"
    cmd = [sys.executable, "-m", "rflite", "run", "theory-coherence", "--quick",
           "--jobs", "2", "--out", str(out)]
    # Output to files, not pipes: a leftover worker would hold a pipe open and
    # make the wait below measure the wrong process.
    stdout, stderr = open(tmp_path / "out.txt", "w"), open(tmp_path / "err.txt", "w")
    proc = subprocess.Popen(cmd, stdout=stdout, stderr=stderr,
                            cwd=Path(__file__).resolve().parents[1], start_new_session=True,
                            preexec_fn=_sigint_default)
    try:
        seen: set[int] = set()
        deadline = time.monotonic() + 120
        # wait until the pool is starting: two workers (plus the resource tracker)
        while time.monotonic() < deadline and proc.poll() is None:
            seen |= _children(proc.pid)
            if len(seen) >= 3:
                break
            time.sleep(0.02)
        assert proc.poll() is None, "the run ended before its pool started"
        assert len(seen) >= 3, f"pool never started: children {seen}"
        if group:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            pytest.fail(f"python -m rflite still running 20 s after {sig.name}")
        err = (tmp_path / "err.txt").read_text()
        assert proc.returncode == 128 + sig, err[-2000:]
        assert "Traceback" not in err, err[-2000:]
        # every process it started is gone (allow them a moment to be reaped)
        deadline = time.monotonic() + 10
        left = {p for p in seen if _alive(p)}
        while left and time.monotonic() < deadline:
            time.sleep(0.05)
            left = {p for p in left if _alive(p)}
        assert not left, f"processes left behind after {sig.name}: {sorted(left)}"
        # and no half-written figure under its final name, nor a stray temporary
        if out.exists():
            assert not [p for p in out.iterdir() if ".part" in p.name]
    finally:
        seen = locals().get("seen", set())
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for p in seen:  # the test failed: do not leave its processes running
            if _alive(p):
                os.kill(p, signal.SIGKILL)
        stdout.close()
        stderr.close()


def _fail_or_block(task):
    """Task 0 fails; task 1 would run for an hour."""
    if task == 0:
        time.sleep(0.5)
        raise ValueError("task 0 failed")
    time.sleep(3600)


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs SIGALRM for the hang guard")
def test_failed_task_stops_the_pool_without_waiting_for_running_tasks():
    """``executor_scope`` must not ``shutdown(wait=True)`` on an error or Ctrl-C, or the
    caller would wait for every running task (here an hour) before seeing it."""
    from rflite._core.parallel import map_tasks

    def hang(signum, frame):
        raise TimeoutError("map_tasks waited for the running task after the failure")

    # children already running (a test session's shared LocalCluster) are not the pool's
    before = _children(os.getpid())
    old = signal.signal(signal.SIGALRM, hang)
    signal.setitimer(signal.ITIMER_REAL, 120)
    try:
        with pytest.raises(ValueError, match="task 0 failed"):
            map_tasks(_fail_or_block, [0, 1], executor=2)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    # the worker that ran the hour-long task is gone
    left = {p for p in _children(os.getpid()) - before if "resource_tracker" not in _cmdline(p)}
    assert not left, f"worker processes left: {sorted(left)}"


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def test_cancelled_future_race_of_a_stopped_pool_prints_nothing(monkeypatch):
    """CPython < 3.12 (gh-107219): stopping a pool after cancelling its futures can
    make its manager thread raise InvalidStateError; the hook that executor_scope
    installs drops exactly that exception and passes every other one on (it made
    test_signal_during_pool_start_up_leaves_no_process fail once in ten runs)."""
    import threading
    import types
    from concurrent.futures import InvalidStateError
    from concurrent.futures.process import _ExecutorManagerThread

    from rflite._core import parallel as _parallel

    seen = []
    monkeypatch.setattr(threading, "excepthook", lambda args: seen.append(args.exc_type))
    monkeypatch.setattr(_parallel.sys, "version_info", (3, 11, 7))
    _parallel._ignore_cancelled_future_race()
    _parallel._ignore_cancelled_future_race()  # installed once
    manager = object.__new__(_ExecutorManagerThread)
    race = types.SimpleNamespace(exc_type=InvalidStateError, exc_value=InvalidStateError("x"),
                                 exc_traceback=None, thread=manager)
    threading.excepthook(race)
    assert seen == []
    other = types.SimpleNamespace(exc_type=ValueError, exc_value=ValueError("y"),
                                  exc_traceback=None, thread=manager)
    threading.excepthook(other)
    elsewhere = types.SimpleNamespace(exc_type=InvalidStateError,
                                      exc_value=InvalidStateError("z"), exc_traceback=None,
                                      thread=threading.current_thread())
    threading.excepthook(elsewhere)
    assert seen == [ValueError, InvalidStateError]


def test_terminated_pool_has_closed_its_wakeup_pipe_on_return():
    """``_terminate_pool`` returns only once the pool's manager thread has ended
    (and closed the pool's wakeup pipe).  Before, it could still be closing the
    pipe when the interpreter exited, while concurrent.futures' exit hook wrote
    to it: "Exception ignored ... OSError: [Errno 9] Bad file descriptor" on
    stderr after a SIGTERM during pool start-up (CPython < 3.12; seen once in
    ``test_signal_during_pool_start_up_leaves_no_process``)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from rflite._core import parallel as _parallel

    pool = ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("spawn"))
    futures = [pool.submit(time.sleep, 30) for _ in range(2)]
    deadline = time.monotonic() + 60
    while len(getattr(pool, "_processes", None) or {}) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    # (shutdown() drops the pool's references to both: keep them)
    thread, wakeup = pool._executor_manager_thread, pool._executor_manager_thread_wakeup
    _parallel._terminate_pool(pool)
    assert not thread.is_alive()
    assert wakeup._closed
    assert all(f.done() for f in futures)
