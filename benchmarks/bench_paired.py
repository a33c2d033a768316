"""Paired timings: rflite and its reference alternated round by round (the gate's input).

The other benchmark files time rflite and its reference at different moments
with different round counts, so a change of load between the two moments
moves their ratio (about as much as a 2x slowdown between two clean runs on
a loaded machine; see ``gate.py``).  Here each case runs ``ROUNDS`` rounds; a round
times the rflite call and the reference call back to back, in alternating
order (rflite first in even rounds, the reference first in odd ones, so that
a steady drift of the load favours neither), and the case's ratio is the
**median of the per-round ratios** t(rflite) / t(reference): both sides of a
round saw nearly the same load, and the median discards the rounds a burst
of load hit between the two calls.

Each case also times a **floor** in the same rounds: the one operation of
the case's maths that no implementation avoids, run with the same BLAS
thread limit.  Its fastest call is ``floor_min`` and the median of the
per-round ratios t(rflite) / t(floor) is ``floor_ratio`` (both in
``extra_info``): how far rflite is from the cost of the work itself, read
under the same load as the paired ratio.  The floors:

- ``features-d100-q2``: writing the fresh m x N output once
  (``bench_features.write_fresh``): a transform that returns the feature
  matrix writes each entry at least once;
- ``harfe-fit``: the ``n_iter`` products ``A.T @ r`` of the fit: every HTP
  iteration chooses its support from the gradient over all N columns, so
  it reads A once (rflite makes exactly this one pass per iteration);
- ``shrimp-lowdim-path``: one Gram matrix ``A A^T`` of the starting
  dictionary by BLAS ``dsyrk``: the path's first step is the minimum-norm
  solution on every column, which needs a factorisation of A (Gram or QR),
  and ``dsyrk`` is the cheapest form of that O(m^2 N) work;
- ``metropolis-iteration``: the ``zherk`` Gram matrix of the proposal
  features and its Cholesky factorisation (``bench_metropolis.zherk_cholesky``),
  the amplitude solve every exact iteration makes;
- ``gfc-objective``: one pass over X, ``X @ w``: the objective's features
  are ``sin`` / ``cos`` of ``X w``.

The floor does not enter the gate: ``paired_ratio`` is still rflite against
the reference, and the floor is timed in a slot of its own (first in even
rounds, last in odd ones, with rflite always in the middle), so that rflite
and its reference stay back to back in alternating order.

Both sides run on one thread (one BLAS thread, and rflite's feature kernel
with ``n_threads=1``): with threads, the rflite side's per-round ratio varies
several times more under load than single-threaded.  The gate is for regressions of the algorithms;
thread scaling is measured by the other benchmark files.  Each case is one pytest-benchmark entry
(the whole paired run is its single timed round) whose ``extra_info``
holds ``paired_ratio`` (the median), the per-round ratios and the minimum
times of both sides, and the floor's ``floor_min`` and ``floor_ratio``;
``gate.py`` gates on ``paired_ratio`` when it is there.

``RFLITE_BENCH_INJECT_2X=harfe-fit`` (comma-separated case names) runs the
rflite side of those cases twice per round: a 2x slowdown to check the gate.

Sizes: each call takes tens to hundreds of milliseconds, so a case costs a few seconds.  In the
default suite (timing disabled) the cases run one round on smaller inputs,
as smoke tests that the two sides still agree.
"""

from __future__ import annotations

import contextlib
import os
import statistics
import time
from typing import Callable, NamedTuple

import numpy as np
import pytest
from scipy.linalg import blas

import bench_features
import bench_greedy
import bench_htp
import bench_imp
import bench_metropolis
from rflite import htp, imp
from rflite._arff import kernels as kern
from rflite import metropolis as mp
from rflite.features import random_feature_map

#: Rounds per case when timing (the default suite runs one).
ROUNDS = 11
#: Environment variable naming cases whose rflite side is run twice per round: the
#: injected 2x slowdown that shows the gate catches a real regression.
INJECT = "RFLITE_BENCH_INJECT_2X"


def _one_blas_thread():
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn
        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")


#: Shortest time of one side of a round, seconds: shorter calls are repeated
#: (both sides the same number of times) so that timer resolution and
#: scheduler ticks stay below a percent of a measurement.
MIN_ROUND_SECONDS = 0.1


def paired_rounds(ours, reference, rounds: int, min_seconds: float = 0.0,
                  floor=None) -> dict:
    """Time ``ours()`` and ``reference()`` back to back ``rounds`` times, alternating order.

    Each side of a round calls its function ``repeat`` times, the smallest
    count with which the faster side's first call, repeated, lasts at least
    ``min_seconds``.  Returns ``{"paired_ratio": median ratio, "ratios": [...],
    "rflite_min": s, "reference_min": s (per call), "rounds": n, "repeat": r}``;
    the reference runs with one BLAS thread.

    With ``floor`` (a function), every round also times it (``floor_repeat``
    calls, counted like ``repeat`` from the floor alone), first in even rounds
    and last in odd ones, and the result adds ``floor_min`` (per call),
    ``floor_ratio`` (median of the per-round t(ours) / t(floor)),
    ``floor_ratios`` and ``floor_repeat``.
    """
    t_ours, t_ref, t_floor = [], [], []
    counts = {"ours": 1, "floor": 1}

    def timed(fn, limit, repeat):
        with limit():
            t0 = time.perf_counter()
            for _ in range(repeat):
                fn()
            return (time.perf_counter() - t0) / repeat

    def count(*fns):
        fastest = min(timed(fn, _one_blas_thread, 1) for fn in fns)
        return max(1, int(np.ceil(min_seconds / max(fastest, 1e-9))))

    if min_seconds > 0:
        counts["ours"] = count(ours, reference)
        if floor is not None:
            counts["floor"] = count(floor)
    repeat = counts["ours"]

    def floor_slot():
        if floor is not None:
            t_floor.append(timed(floor, _one_blas_thread, counts["floor"]))

    for k in range(rounds):
        if k % 2 == 0:
            floor_slot()
            a = timed(ours, _one_blas_thread, repeat)
            b = timed(reference, _one_blas_thread, repeat)
        else:
            b = timed(reference, _one_blas_thread, repeat)
            a = timed(ours, _one_blas_thread, repeat)
            floor_slot()
        t_ours.append(a)
        t_ref.append(b)
    ratios = [a / b for a, b in zip(t_ours, t_ref)]
    out = {"paired_ratio": statistics.median(ratios), "ratios": ratios,
           "rflite_min": min(t_ours), "reference_min": min(t_ref), "rounds": rounds,
           "repeat": repeat}
    if floor is not None:
        floor_ratios = [a / f for a, f in zip(t_ours, t_floor)]
        out.update(floor_min=min(t_floor), floor_ratio=statistics.median(floor_ratios),
                   floor_ratios=floor_ratios, floor_repeat=counts["floor"])
    return out


class Case(NamedTuple):
    """One paired case: rflite, its reference, the floor and an optional agreement check."""

    ours: Callable[[], object]
    reference: Callable[[], object]
    floor: Callable[[], object]
    check: Callable[[], None] | None = None


# ------------------------------------------------------------------- cases
def _features(full):
    d, q, m, n = (100, 2, 2000, 5000) if full else (20, 2, 200, 500)
    fmap = random_feature_map(d, n, q=q, activation="sin", rng=1)
    X = np.random.default_rng(0).uniform(-1, 1, (m, d))
    W, b = fmap.dense_weights(), fmap.bias
    shape = (m, fmap.n_columns)
    return Case((lambda: fmap.transform(X, n_threads=1)), (lambda: np.sin(X @ W.T + b)),
                lambda: bench_features.write_fresh(shape),
                lambda: np.testing.assert_allclose(fmap.transform(X[:20]),
                                                   np.sin(X[:20] @ W.T + b), rtol=0, atol=1e-12))


def _harfe(full):
    htp._warmup()
    A, y, s = bench_htp._problem(**(bench_htp.FULL if full else dict(m=100, N=500, s=50)))
    shift = bench_htp.M_LAM
    kw = dict(s=s, lam=shift / A.shape[0], mu=bench_htp.MU, max_iter=bench_htp.MAX_ITER,
              tol=bench_htp.TOL)
    n_iter = htp.harfe(A, y, **kw).n_iter
    r = y - y.mean()

    def floor():  # the fit's n_iter gradient passes over A
        for _ in range(n_iter):
            A.T @ r

    return Case((lambda: htp.harfe(A, y, **kw)),
                (lambda: bench_htp.harfe_numpy_solve(A, y, s, shift)), floor)


def _shrimp(full):
    imp.shrimp_path(np.eye(3, 6), np.ones(3))
    A, y = bench_imp._problem(**(bench_imp.LOW_SMOKE if full else dict(
        m=60, d=10, q=2, N=300, name="shrimp3")))
    p = bench_imp.P
    return Case((lambda: imp.shrimp_path(A, y, prune_rate=p)),
                (lambda: bench_imp._path_lstsq(A, y, p)),
                lambda: blas.dsyrk(1.0, A.T, trans=1))  # A A^T (upper triangle), no copy


def _metropolis(full):
    N, K = (10_000, 256) if full else (500, 64)
    X, y, omega, omega_p, u = bench_metropolis._problem(N, K)
    gamma = 3 * bench_metropolis.D - 2
    lam = bench_metropolis.LAM
    mp._warmup()
    chain = mp._Chain(X, y.reshape(-1, 1), K, lam * N, "exp")
    chain.omega[:] = omega
    chain.S = kern._features(X, omega, "exp")
    chain.G = kern._gram(chain.S)
    chain.rhs = kern._herm_t(chain.S) @ chain.Y
    chain.beta = kern._solve(chain.G, chain.rhs, chain.shift)
    state = (chain.omega.copy(), chain.S.copy(), chain.G.copy(), chain.rhs.copy(),
             chain.beta.copy())
    S = np.exp(1j * (X @ omega.T))
    beta = np.linalg.solve(S.conj().T @ S + lam * N * np.eye(K), S.conj().T @ y)
    S_p = kern._features(X, omega_p, "exp")
    shift = lam * N * np.eye(K)

    def ours():
        # the same proposal from the same state every round
        chain.omega, chain.S, chain.G, chain.rhs, chain.beta = (a.copy() for a in state)
        with _one_blas_thread():  # as bench_metropolis: the floor is zherk at one thread
            chain.step(omega_p, u, gamma, np.inf)

    return Case(ours, (lambda: bench_metropolis.numpy_iteration(
        X, y, omega.copy(), beta.copy(), omega_p, u, gamma)),
        lambda: bench_metropolis.zherk_cholesky(S_p, shift))


def _gfc_objective(full):
    from rflite.greedy import _hyper_objective

    rng = np.random.default_rng(0)
    m = bench_greedy.M if full else 400
    X = rng.uniform(0, 1, (m, bench_greedy.D))
    y, f = rng.standard_normal(m), rng.standard_normal(m)
    w = rng.standard_normal(bench_greedy.D) / np.sqrt(bench_greedy.D)
    folds = bench_greedy.fold_ids(m, bench_greedy.K, 0)
    k = bench_greedy.K
    return Case((lambda: _hyper_objective(X, y, f, w, 1e-4, folds, k)),
                (lambda: bench_greedy.numpy_objective(X, y, f, w, 1e-4, folds, k)),
                lambda: X @ w)


CASES = {
    "features-d100-q2": _features,
    "harfe-fit": _harfe,
    "shrimp-lowdim-path": _shrimp,
    "metropolis-iteration": _metropolis,
    "gfc-objective": _gfc_objective,
}


@pytest.mark.parametrize("case", list(CASES))
def bench_paired_rflite_vs_reference(benchmark, case):
    """One paired run per case; its median per-round ratio goes to the gate."""
    full = not benchmark.disabled
    ours, reference, floor, check = CASES[case](full)
    if case in os.environ.get(INJECT, "").split(","):
        once = ours

        def ours():
            once()
            once()

    if check is not None:
        check()
    benchmark.group = f"paired:{case}"
    rounds = ROUNDS if full else 1
    ours()  # warm caches and any lazy compilation outside the rounds
    reference()
    floor()
    info = benchmark.pedantic(paired_rounds, args=(ours, reference, rounds,
                                                   MIN_ROUND_SECONDS if full else 0.0),
                              kwargs={"floor": floor}, rounds=1, iterations=1)
    benchmark.extra_info.update(info)
    assert info["paired_ratio"] > 0 and info["floor_ratio"] > 0
