r"""HARFE, SHRIMP and ridge on Dask arrays at growing m: time per pass, total time, peak memory.

``scale`` fits :class:`rflite.htp.HARFERegressor` (N = 1000 features, s = 100,
q = 2, d = 20), :class:`rflite.imp.SHRIMPRegressor` (N = 100 weights, 200
``[cos, sin]`` columns, q = 2: one TSQR, the pruning path on the client, one
TSQR refit) and :class:`rflite.ridge.RandomFeatureRidge` (N = 300, one Gram
pass) on
Friedman-1 data (HARFE's Fig. 4 target on :math:`[0, 1]^{20}`, noise 0.1)
generated lazily by ``dask.array.random.default_rng(seed)``: ``X`` and ``y``
are never materialised, each pass regenerates its chunks on the workers (the
HARFE feature matrix at m = 10^7 would be 80 GB).  The fits run on the Dask
scheduler named by ``--scheduler`` (an address such as ``tcp://host:8786``,
or ``synchronous`` for the local single-process scheduler); by default on a
``distributed.LocalCluster`` with ``--jobs`` worker processes (default 2),
one thread each.

For every m it prints

* the time of one full pass (the HARFE gradient :math:`A^*(y - A_S c_S)`,
  median over the iterations) and its overhead against the feature kernel:
  ``pass / (m N t_kernel / workers)``, where ``t_kernel`` is the time per
  entry of building a 2000-row block of features and multiplying it by a
  vector, measured on every worker at once (:func:`_kernel_floor`; 1.0
  would be no distribution cost at all);
* the times of the other passes (validation + means + column sums of
  squares in one, support Gram rows, and ridge's Gram pass);
* the total fit time and the peak memory per worker (process memory of the
  whole cluster sampled every 0.1 s by ``distributed``'s ``MemorySampler``,
  divided by the number of workers; the resident size of this process on the
  synchronous scheduler), which stays flat in m because a task holds one
  chunk of ``X`` and one 32 MB row block of its features at a time
  (:data:`rflite._dask.backend.BLOCK_ENTRIES`), and how far the fit raised it above
  the workers' memory at its start ("added": the workers' resident memory
  rarely shrinks, so the absolute peak of a later m also carries what the
  earlier fits left behind);
* the training MSE from the lazy ``predict`` (one more pass).

and finally the log-log slope of the HARFE fit time against m (1 expected).
The estimators' self-tuning defaults are pinned where they would change
what is timed: HARFE's ``s`` and ``lam`` (``m * lam = 1e-3``; ``"auto"``
would time a 15-point grid search), SHRIMP's and ridge's ``n_features``
(``n_features=None`` would give SHRIMP 10^4 weights, a 2 x 10^4-column
TSQR) and ridge's ``lam`` (1e-6; ``"auto"`` adds one pass of five fold
Gram matrices); SHRIMP keeps its default guarded ``refit="auto"``.
HARFE runs ``MAX_ITER`` = 10 iterations (each is one full pass; the paper's
50 would take 5x as long and say nothing more about scaling).

Sizes: m = 10^5, 10^6, 10^7, about 20 minutes on 2 cores; quick: m = 4000
and 16000 with N = 400, s = 40, SHRIMP N = 50, ridge N = 100.  The feature
counts are chosen so that m = 10^7 (10^10 HARFE feature entries per pass,
80 GB if materialised) runs on a 2-core machine; the wide HARFE shape
(N = 10^4, s = 500) at m = 10^5 is ``benchmarks/bench_dask.py``, and at
m = 10^5 .. 10^7 (800 GB if materialised) the experiment ``scale-wide``
(HARFE only, :data:`WIDE_ITER` iterations; about 1 hour on 2 cores, most
of it at m = 10^7); the cost per
pass is linear in N as well (one ``A^* r`` over m x N entries).
"""

from __future__ import annotations

import contextlib
import json
import math
import resource
import time
import tracemalloc

import numpy as np

from rflite.experiments import atomic_path, register, write_results

SIZES = (10**5, 10**6, 10**7)
QUICK_SIZES = (4000, 16000)
D, Q = 20, 2
HARFE_N, HARFE_S, MAX_ITER = 1000, 100, 10
#: ``scale-wide``: HARFE at N = 10^4, s = 500, fewer iterations (a pass at m = 10^7
#: builds 10^11 feature entries: about 650 s on 2 cores, the fit about 1 hour)
WIDE_N, WIDE_S, WIDE_ITER = 10_000, 500, 3
#: HARFE's ridge shift m * lam (HARFE Table 2's 1e-3), pinned like ``s``
HARFE_SHIFT = 1e-3
RIDGE_N = 300
#: SHRIMP weights (``[cos, sin]``: 2x as many columns, one TSQR of m x 200)
SHRIMP_N = 100
QUICK = dict(n=400, s=40, ridge_n=100, shrimp_n=50)
#: Feature entries per chunk at most (chunk rows <= CHUNK_ENTRIES // N): a
#: task builds its features in 32 MB row blocks (``_State.blocks``), so its
#: memory is one block and the chunk of X whatever the chunk size, and a
#: chunk is about a second of kernel time.  Smaller chunks cost more than
#: they give: a distributed task costs tens of milliseconds of scheduling on
#: top of its kernel, so small chunks spend much of their time scheduled
#: rather than computing.
CHUNK_ENTRIES = 1 << 27
#: ... and at least this many chunks per worker at the smallest m (load
#: balance).  Every m of a run uses the same chunk rows, so that a worker's
#: memory can be compared across m (a SHRIMP TSQR task holds its chunk's
#: features at once: 265 MB a worker at 6,250-row chunks, 1.1 GB at 134,217).
CHUNKS_PER_WORKER = 2
MIN_CHUNK_ROWS = 1000
NOISE = 0.1


def _data(m, rows, seed):
    """Lazy Friedman-1 data on [0, 1]^D (HARFE Fig. 4), row chunks of ``rows``."""
    import dask.array as da

    rng = da.random.default_rng(seed)
    X = rng.uniform(0.0, 1.0, size=(m, D), chunks=(rows, D))
    noise = rng.normal(0.0, NOISE, size=m, chunks=rows)
    y = (10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2
         + 10 * X[:, 3] + 5 * X[:, 4] + noise)
    return X, y


@contextlib.contextmanager
def _scheduler(ctx):
    """Yield ``(client or None, n_workers)`` for the scheduler ``ctx.scheduler`` names."""
    import dask

    address = getattr(ctx, "scheduler", None)
    if address in ("synchronous", "sync"):
        with dask.config.set(scheduler="synchronous"):
            yield None, 1
        return
    from distributed import Client, LocalCluster

    with contextlib.ExitStack() as stack:
        if address is None:
            workers = ctx.jobs or 2
            cluster = stack.enter_context(LocalCluster(
                n_workers=workers, processes=True, threads_per_worker=1,
                dashboard_address=None))
            client = stack.enter_context(Client(cluster, set_as_default=False))
        else:
            client = stack.enter_context(Client(address, set_as_default=False))
        stack.enter_context(client.as_current())
        stack.enter_context(dask.config.set(scheduler=client))
        workers = len(client.scheduler_info()["workers"])
        yield client, workers


@contextlib.contextmanager
def _peak_memory(client, workers, out):
    """Record the peak memory per worker of the enclosed block into ``out["peak_mb"]``,
    and into ``out["added_mb"]`` how far it rose above the workers' memory at the
    start of the block (a worker process's resident memory rarely shrinks, so
    its absolute peak also carries what earlier fits left behind); and into
    ``out["client_mb"]`` the client's allocation peak in the block (tracemalloc,
    NumPy buffers included): what the fit holds outside the cluster, which
    must not grow with m."""
    ours = not tracemalloc.is_tracing()
    if ours:
        tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        with _worker_memory(client, workers, out):
            yield
        out["client_mb"] = tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        if ours:
            tracemalloc.stop()


@contextlib.contextmanager
def _worker_memory(client, workers, out):
    """The workers' part of :func:`_peak_memory`."""
    if client is None:
        yield
        out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        out["added_mb"] = float("nan")
        return
    from distributed.diagnostics import MemorySampler

    base = sum(client.run(_rss).values())
    sampler = MemorySampler()
    with sampler.sample("fit", client=client, measure="process", interval=0.1):
        yield
    values = [v for _, v in sampler.samples["fit"]]
    # a fit shorter than the sampling interval leaves no sample: measure once now
    rss = client.run(_rss)
    values.append(sum(rss.values()))
    out["peak_mb"] = max(values) / workers / 2**20
    out["added_mb"] = (max(values) - base) / workers / 2**20


def _rss():
    import psutil

    return psutil.Process().memory_info().rss


def _kernel_seconds_per_entry(n, rows, seed):
    """Single-thread time per feature entry of one block's features and ``A^T r`` (here)."""
    from rflite.features import random_feature_map

    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 1.0, (rows, D))
    r = rng.normal(size=rows)
    fmap = random_feature_map(D, n, q=Q, rng=seed)
    best = math.inf
    for _ in range(3):
        t0 = time.perf_counter()
        A = fmap._check_out(None, rows, n, np.float64)
        fmap._fill(X, None, A, 1)
        A.T @ r
        best = min(best, time.perf_counter() - t0)
    return best / (rows * n)


def _chunk_rows(m_min, n, workers):
    """Rows per chunk: :data:`CHUNK_ENTRIES` feature entries, but
    :data:`CHUNKS_PER_WORKER` chunks a worker at least at the smallest m,
    ``m_min`` (and :data:`MIN_CHUNK_ROWS` rows)."""
    return max(MIN_CHUNK_ROWS, min(CHUNK_ENTRIES // n, m_min // (CHUNKS_PER_WORKER * workers)))


def _kernel_floor(client, n, rows, seed):
    """Time per feature entry of the chunk kernel with every worker running it at once.

    On the workers themselves (``client.run``, all at the same time), since
    cores that share a chip's memory and clock do not each keep their
    single-core speed: two processes on a 2-core machine each build
    features markedly slower than one alone.  The mean over
    the workers; this process's single-thread time without a cluster.
    """
    if client is None:
        return _kernel_seconds_per_entry(n, rows, seed)
    times = client.run(_kernel_seconds_per_entry, n, rows, seed)
    return float(np.mean(list(times.values())))


def _summary(passes):
    by = {}
    for kind, sec in passes:
        by.setdefault(kind, []).append(sec)
    return {k: (len(v), float(np.median(v))) for k, v in by.items()}


@register("scale",
          "HARFE, SHRIMP and ridge on Dask arrays at growing m (lazy X, never materialised): time per "
          "pass, total time and peak worker memory against m, on --scheduler or a LocalCluster",
          "quick: ~30 s; full (m = 1e5, 1e6, 1e7, HARFE N = 1000): ~20 min on 2 cores")
def run(ctx):
    return _run(ctx, ("harfe", "shrimp", "ridge"), HARFE_N, HARFE_S, MAX_ITER, "scale.json",
                "scale")


@register("scale-wide",
          "HARFE at a wide shape (N = 1e4, s = 500, q = 2, d = 20) on Dask arrays at m = 1e5, "
          "1e6, 1e7 (the feature matrix would be 800 GB at 1e7): time per pass, total time, peak "
          "worker memory",
          f"quick: ~10 s; full ({WIDE_ITER} HARFE iterations): ~1 h on 2 cores, m = 1e7 "
          "53 min of it")
def run_wide(ctx):
    """``scale``'s HARFE rows at N = :data:`WIDE_N` features, s = :data:`WIDE_S`.

    ``scale`` keeps N = 1000 so that its three models at m = 10^7 fit in 20
    minutes; the cost of a pass is m N feature entries, so this run at the
    wide N = 10^4 shows the same linearity where one pass at m = 10^7 builds
    10^11 entries.  :data:`WIDE_ITER` iterations (the time per pass is their
    median); SHRIMP and ridge do not depend on HARFE's N and are left to
    ``scale``.
    """
    return _run(ctx, ("harfe",), WIDE_N, WIDE_S, WIDE_ITER, "scale_wide.json", "scale-wide")


def _run(ctx, models, n, s, max_iter, json_name, experiment):
    """The ``scale`` table for ``models`` (``"harfe"``, ``"shrimp"``, ``"ridge"``)."""
    from rflite._core.backend import fits_on_workers
    from rflite.htp import HARFERegressor
    from rflite.imp import SHRIMPRegressor
    from rflite.ridge import RandomFeatureRidge

    sizes = QUICK_SIZES if ctx.quick else SIZES
    n = QUICK["n"] if ctx.quick else n
    s = QUICK["s"] if ctx.quick else s
    ridge_n = QUICK["ridge_n"] if ctx.quick else RIDGE_N
    shrimp_n = QUICK["shrimp_n"] if ctx.quick else SHRIMP_N
    t_alone = _kernel_seconds_per_entry(n, 2000, ctx.seed)
    ctx.log(f"single-thread feature kernel + A^T r on the client: {t_alone * 1e9:.2f} ns "
            f"per entry (N = {n}, q = {Q}, d = {D})")
    rows_out = []
    with _scheduler(ctx) as (client, workers):
        t_entry = _kernel_floor(client, n, 2000, ctx.seed)
        ctx.log(f"the same kernel on every worker at once: {t_entry * 1e9:.2f} ns per entry "
                "(the floor the overhead column divides by)")
        where = "synchronous scheduler" if client is None else \
            f"{workers} workers at {client.scheduler.address}"
        settings = {"harfe": f"HARFE N = {n}, s = {s}, {max_iter} iterations",
                    "shrimp": f"SHRIMP N = {shrimp_n} ([cos, sin]: {2 * shrimp_n} columns, "
                              "one TSQR + refit)",
                    "ridge": f"ridge N = {ridge_n}"}
        rows = 1500 if ctx.quick else _chunk_rows(min(sizes), n, workers)
        chunking = f"chunk rows {rows}" + ("" if ctx.quick else (
            f" (at most {CHUNK_ENTRIES} feature entries, {CHUNKS_PER_WORKER} chunks a worker "
            f"at m = {min(sizes)})"))
        ctx.log(f"scheduler: {where}; {chunking}; "
                + "; ".join(settings[name] for name in models))
        ctx.log(f"{'m':>10} {'model':>6} {'chunks':>6} {'pass s':>8} {'overhead':>8} "
                f"{'total s':>8} {'peak MB/worker':>14} {'added MB':>8} {'client MB':>9} "
                f"{'train MSE':>10}  "
                "other passes")
        for m in sizes:
            X, y = _data(m, rows, ctx.seed)
            for name in models:
                if name == "harfe":
                    # s and lam pinned: the automatic choice would time a 15-point grid
                    est = HARFERegressor(n_features=n, s=s, lam=HARFE_SHIFT / m, q=Q,
                                         max_iter=max_iter, tol=0.0, random_state=ctx.seed,
                                         verbose=not ctx.quick)
                elif name == "shrimp":
                    est = SHRIMPRegressor(n_features=shrimp_n, q=Q, subsets="random",
                                          random_state=ctx.seed)
                else:
                    est = RandomFeatureRidge(n_features=ridge_n, q=Q, lam=1e-6,
                                             random_state=ctx.seed)
                mem = {}
                t0 = time.perf_counter()
                # the distributed fit is what is measured, at every m
                with fits_on_workers(), _peak_memory(client, workers, mem):
                    est.fit(X, y)
                total = time.perf_counter() - t0
                mse = float(((est.predict(X) - y) ** 2).mean().compute())
                summ = _summary(est.dask_passes_)
                full_kind = {"harfe": "gradient", "shrimp": "tsqr", "ridge": "full_gram"}[name]
                npass, pass_s = summ[full_kind]
                cols = {"harfe": n, "shrimp": 2 * shrimp_n, "ridge": ridge_n}[name]
                # ridge's Gram and SHRIMP's QR cost m N^2, not m N: no kernel-throughput unit
                overhead = pass_s / (m * cols * t_entry / workers) if name == "harfe" \
                    else float("nan")
                others = ", ".join(f"{k} {c}x{t:.3g}s" for k, (c, t) in summ.items()
                                   if k != full_kind)
                ctx.log(f"{m:>10d} {name:>6} {X.numblocks[0]:>6d} {pass_s:>8.3f} "
                        f"{overhead:>8.2f} {total:>8.2f} {mem['peak_mb']:>14.0f} "
                        f"{mem['added_mb']:>8.0f} {mem['client_mb']:>9.1f} {mse:>10.4g}  {others}")
                rows_out.append(dict(m=m, model=name, chunks=int(X.numblocks[0]),
                                     chunk_rows=rows, n_features=cols, pass_seconds=pass_s,
                                     n_full_passes=npass, overhead=overhead,
                                     total_seconds=total, peak_mb_per_worker=mem["peak_mb"],
                                     added_mb_per_worker=mem["added_mb"],
                                     client_peak_mb=mem["client_mb"],
                                     train_mse=mse, passes=summ, workers=workers))
    harfe_rows = [r for r in rows_out if r["model"] == "harfe"]
    if len(harfe_rows) >= 2:
        lm = np.log([r["m"] for r in harfe_rows])
        lt = np.log([r["total_seconds"] for r in harfe_rows])
        slope = float(np.polyfit(lm, lt, 1)[0])
        ctx.log(f"HARFE total time vs m: log-log slope {slope:.2f} (1 = linear; small m is "
                "dominated by per-task overhead)")
    result = dict(rows=rows_out, kernel_ns_per_entry=t_entry * 1e9, quick=ctx.quick)
    with atomic_path(ctx.out / json_name) as tmp:
        tmp.write_text(json.dumps(result, indent=1, default=float))
    write_results(ctx, experiment, ["m", "model", "chunks", "pass s", "overhead", "total s",
                              "peak MB/worker", "added MB", "client MB", "train MSE"],
                  [[r["m"], r["model"], r["chunks"], r["pass_seconds"], r["overhead"],
                    r["total_seconds"], r["peak_mb_per_worker"], r["added_mb_per_worker"],
                    r["client_peak_mb"], r["train_mse"]] for r in rows_out])
    return result
