"""Fan independent tasks out to any :class:`concurrent.futures.Executor`.

Every repeated computation in rflite (the workers of greedy feature
construction, the repetitions of an experiment, a hyper-parameter sweep) is a
list of independent tasks ``func(task)``.  :func:`map_tasks` runs them

* in this process, one after the other (``executor=None`` or ``1``);
* on a local process pool (``executor=n`` with ``n >= 2``, or ``-1`` for one
  worker per CPU), created with the ``"spawn"`` start method and shut down
  afterwards;
* on any object with an executor's ``submit`` method, which is left running:
  :class:`concurrent.futures.ProcessPoolExecutor`,
  ``distributed.Client(...).get_executor()`` (a Dask cluster),
  ``mpi4py.futures.MPIPoolExecutor()`` (MPI, as the GFC paper ran its workers).

Results come back in task order.  Randomness must not depend on which worker
runs a task: draw one :class:`numpy.random.SeedSequence` per *task* with
:func:`spawn_seeds` in the calling process and pass it inside the task, so the
results are identical whatever executor and however many workers run them.
``func`` and the tasks must be picklable for the process and cluster
executors (``func`` a module-level function).

Example
-------
>>> from rflite._core.parallel import map_tasks, spawn_seeds
>>> seeds = spawn_seeds(0, 3)
>>> map_tasks(_draw_one, seeds)          # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import multiprocessing
import numbers
import os
import signal
import sys
import threading
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from rflite._core.blas import blas_threads
from rflite._core.random import check_rng

__all__ = [
    "START_METHOD", "check_executor", "executor_scope", "map_tasks", "one_blas_thread",
    "spawn_seeds",
]

#: Start method of the local process pools made for ``executor=int``.  "spawn"
#: is safe with threads (numba, BLAS) in the parent, unlike "fork".
START_METHOD = "spawn"


def check_executor(executor, name: str = "executor"):
    """Validate ``executor``: None, an int ``n_jobs`` (``>= 1`` or ``-1``), or an executor.

    Returns the int (with ``-1`` replaced by the CPU count), ``None`` or the
    executor unchanged.

    Raises
    ------
    ValueError
        Naming the parameter (``name``: ``executor``, or ``n_jobs`` where the
        estimator calls it that), for anything else (including ``0``, ``-2``
        and ``True``).
    """
    if executor is None:
        return None
    if isinstance(executor, numbers.Integral) and not isinstance(executor, bool):
        n = int(executor)
        if n == -1:
            return os.cpu_count() or 1
        if n < 1:
            raise ValueError(f"{name} must be None, an int >= 1 or -1, or an Executor, got {n}")
        return n
    if callable(getattr(executor, "submit", None)):
        return executor
    raise ValueError(
        f"{name} must be None, an int n_jobs or an object with a submit method "
        f"(a concurrent.futures.Executor), got {type(executor).__name__}"
    )


@contextlib.contextmanager
def executor_scope(executor, n_tasks: int | None = None):
    """Context manager yielding an executor, or ``None`` for serial execution.

    An int ``n_jobs >= 2`` makes a local spawn-context process pool of
    ``min(n_jobs, n_tasks)`` workers, each limited to one BLAS thread, that is
    shut down on exit: normally after its tasks, and at once (workers
    terminated, pending tasks cancelled) when the block raises, including
    ``KeyboardInterrupt`` from Ctrl-C or SIGTERM under ``python -m rflite``;
    an executor
    passed in is yielded as it is and left running (its owner closes it).
    """
    executor = check_executor(executor)
    if isinstance(executor, int):
        n = executor if n_tasks is None else min(executor, max(n_tasks, 1))
        if n <= 1:
            yield None
            return
        _ignore_cancelled_future_race()
        pool = ProcessPoolExecutor(
            max_workers=n, mp_context=multiprocessing.get_context(START_METHOD),
            initializer=_pool_worker_init,
        )
        try:
            # Start every worker now, with Ctrl-C/SIGTERM held back meanwhile: a
            # signal in the middle of a spawn cuts the start-up data the child is
            # reading (it then dies with "EOFError: Ran out of input" on stderr).
            # Held back for the few tens of ms the spawns take, then delivered.
            with _signals_deferred(), _sigint_blocked_in_children():
                for _ in range(n):
                    pool.submit(int)
            yield pool
        except BaseException:
            # An error, Ctrl-C or SIGTERM: do not wait for running tasks (or for
            # workers still importing at start-up); stop the workers now.
            _terminate_pool(pool)
            raise
        else:
            pool.shutdown(wait=True, cancel_futures=True)
    else:
        yield executor


def _cancelled_future_race(args) -> bool:
    """Is this uncaught thread exception CPython 3.11's ``terminate_broken`` race?

    A pool whose workers are stopped after its pending futures were
    cancelled (:func:`_terminate_pool` on Ctrl-C) makes its manager thread
    call ``set_exception`` on a cancelled future, which raises
    ``InvalidStateError`` there and prints a traceback (gh-107219, fixed in
    3.12 by ignoring exactly this error).
    """
    from concurrent.futures import InvalidStateError
    from concurrent.futures.process import _ExecutorManagerThread

    return (isinstance(args.exc_value, InvalidStateError)
            and isinstance(args.thread, _ExecutorManagerThread))


def _ignore_cancelled_future_race():
    """Install (once, before Python 3.12) a ``threading.excepthook`` dropping that race."""
    if sys.version_info >= (3, 12) or getattr(threading.excepthook, "_rflite", False):
        return
    previous = threading.excepthook

    def hook(args):
        if not _cancelled_future_race(args):
            previous(args)

    hook._rflite = True
    threading.excepthook = hook


@contextlib.contextmanager
def _signals_deferred():
    """Hold SIGINT and SIGTERM back for the block; deliver the first one after it.

    Python runs signal handlers in the main thread only, so elsewhere (and
    where handlers cannot be set) this does nothing.  The signal is re-raised
    with :func:`signal.raise_signal` once the previous handlers are back, so
    it has exactly the effect it would have had, only later.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending = []

    def hold(signum, frame):
        pending.append(signum)

    sigs = (signal.SIGINT, signal.SIGTERM)
    old = {}
    try:
        for sig in sigs:
            old[sig] = signal.signal(sig, hold)
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)
        if pending:
            signal.raise_signal(pending[0])


#: Seconds to wait for a terminated worker before killing it.
_TERMINATE_GRACE = 1.0


@contextlib.contextmanager
def _sigint_blocked_in_children():
    """Spawn workers with SIGINT blocked (the mask survives fork and exec).

    A terminal's Ctrl-C reaches the whole process group; a worker still
    importing when it arrives (before :func:`_pool_worker_init` ignores
    SIGINT) printed a KeyboardInterrupt traceback from its bootstrap.  The
    parent gets the blocked signal as soon as the mask is restored.
    """
    if not hasattr(signal, "pthread_sigmask") or \
            threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _terminate_pool(pool: ProcessPoolExecutor) -> None:
    """Cancel pending work and stop ``pool``'s worker processes without waiting for tasks.

    ``shutdown(cancel_futures=True)`` alone still waits for the running tasks
    (minutes for an experiment's repetition) and for workers that are still
    starting; here every worker is sent SIGTERM, joined for at most
    :data:`_TERMINATE_GRACE` seconds and then killed.  The pool's own
    management thread then sees its workers gone and exits, and the
    multiprocessing resource tracker exits once this process does.
    """
    terminate_workers = getattr(pool, "terminate_workers", None)  # Python >= 3.14
    # Snapshot first: shutdown() clears the table of processes and the
    # reference to the manager thread.
    procs = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    if terminate_workers is not None:
        try:
            terminate_workers()
        except Exception:  # already shut down: fall through to the manual stop
            pass
    for p in procs:
        try:
            p.terminate()
        except (OSError, ValueError, AttributeError):  # already gone or closed
            pass
    for p in procs:
        try:
            p.join(_TERMINATE_GRACE)
            if p.is_alive():
                p.kill()
                p.join(_TERMINATE_GRACE)
        except (OSError, ValueError, AttributeError):
            pass
    # Wait for the pool's manager thread, which closes the pool's wakeup pipe
    # when it sees its workers gone: otherwise it may still be closing it at
    # interpreter exit, while concurrent.futures' exit hook writes to it
    # (CPython < 3.12: "Exception ignored ... OSError: [Errno 9] Bad file
    # descriptor" printed after a SIGTERM during pool start-up).
    if manager is not None and manager is not threading.current_thread():
        manager.join(_TERMINATE_GRACE)


_WORKER_BLAS_LIMIT = None


def one_blas_thread():
    """Pool-worker initializer: one BLAS thread per process.

    Pass it to your own pools too:
    ``ProcessPoolExecutor(2, initializer=one_blas_thread)``.

    n worker processes each starting OpenBLAS's own threads oversubscribe the
    cores, so that 2 workers can be slower than a serial run; with one BLAS
    thread per worker they are faster than either.  The limit is kept
    for the life of the worker.
    """
    global _WORKER_BLAS_LIMIT
    _WORKER_BLAS_LIMIT = blas_threads(1).__enter__()


def _pool_worker_init():
    """Initializer of the pools rflite makes: one BLAS thread, and Ctrl-C left to the parent.

    A Ctrl-C in a terminal reaches the whole process group; workers that
    ignore it let the parent cancel the work and terminate them
    (:func:`_terminate_pool`) instead of each printing a traceback.
    """
    one_blas_thread()
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def map_tasks(func, tasks, *, executor=None, on_result=None) -> list:
    """``[func(t) for t in tasks]``, possibly in parallel; results in task order.

    Parameters
    ----------
    func : callable
        Module-level (picklable) function of one argument.
    tasks : iterable
        One argument per task (a tuple or a small NamedTuple for several).
    executor : None, int or Executor
        See the module notes: ``None``/``1`` serial, ``n`` a local process pool,
        ``-1`` one process per CPU, or any object with ``submit``.
    on_result : callable, optional
        ``on_result(i, result)`` as each result is collected, in task order
        (a long run can save its results as they come).

    Returns
    -------
    list
        ``func(task)`` for every task, in order.  The first exception raised by
        a task is re-raised after the pending tasks are cancelled.
    """
    tasks = list(tasks)

    def collect(i, result):
        if on_result is not None:
            on_result(i, result)
        return result

    with executor_scope(executor, len(tasks)) as ex:
        if ex is None:
            return [collect(i, func(t)) for i, t in enumerate(tasks)]
        futures = [ex.submit(func, t) for t in tasks]
        try:
            return [collect(i, fut.result()) for i, fut in enumerate(futures)]
        except BaseException:
            for fut in futures:
                fut.cancel()
            raise


def spawn_seeds(rng, n: int) -> list[np.random.SeedSequence]:
    """``n`` independent, picklable seed sequences, one per task.

    One draw is taken from ``rng`` (None, int or Generator) whatever ``n`` is,
    exactly as :func:`rflite._core.random.spawn_streams` does, so
    ``np.random.default_rng(spawn_seeds(g, n)[i])`` is the ``i``-th stream of
    ``spawn_streams(g, n)`` for generators in the same state.
    """
    rng = check_rng(rng)
    seed = int(rng.integers(0, 2**63 - 1))
    return np.random.SeedSequence(seed).spawn(n)
