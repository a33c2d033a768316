"""SHRIMP pruning paths: rflite against NumPy transcriptions of the same maths.

Group ``shrimp-lowdim-f3-path``: SHRIMP Table 2 low-dimensional f3
(m = 126 training rows, d = 10, q = 2, N = 10^4 -> 19980 columns, p = 0.2,
pruned to one column):

- ``rflite``: :func:`rflite.imp.shrimp_path` (orthogonal LQ downdates with
  refined semi-normal solves, QR column deletion once N_t < m);
- ``numpy-pinv-eig``: the published approach: a fresh ``numpy.linalg.pinv``
  and all eigenvalues of the Gram matrix at every step;
- ``numpy-lstsq``: ``numpy.linalg.lstsq`` (SVD) on ``A[:, P_t]`` per step.

All three must select the same supports while the path is well conditioned
(the first steps; later steps of these smooth dictionaries have condition
numbers near 1e12, where any two solvers differ in the last digits and the
supports may diverge).

Group ``shrimp-lowdim-f2-path``: the same three on low-dimensional f2
(q = 1: 20000 columns on 10 one-dimensional subsets, condition numbers 1e12
from the first step and numerically rank deficient from N_t ~ 5000, where
the path falls back to fresh Householder LQ and ``gelsd`` solves).

Group ``shrimp-select-grid``: :func:`rflite.imp.select_shrimp` against
``per-point``, one independent :class:`~rflite.imp.SHRIMPRegressor` fit per
(q, p) (the baseline: select_shrimp shares the split, the features, their
transposed copies and the t = 0 solve between the p of one q and refits
only each q's best p), on a
1700 x 18 set with N = 1000 weights, q in {1, 2, 3}, p in {15, 25, 35} %;
both at one BLAS thread, and both must give the same scores.

Group ``shrimp-highdim-f7-path``: the high-dimensional f7 path (m = 1260
training rows, d = 100, q = 2 -> 19800 columns); the published code needs
about a minute and over 1 GB per fit.  rflite alone (a NumPy per-step baseline takes
minutes), timed once, with the tracemalloc peak in ``extra_info``.

Smoke mode (default suite) shrinks both problems.  The last test prints the
medians and ratios of a timed run.  Timings on the shared 2-core machine are
noisy.
"""

import tracemalloc

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from rflite import datasets
from rflite.features import Normal, random_feature_map
from rflite.imp import _blas_threads, _fit_candidate, prune_counts, select_shrimp, shrimp_path

LOW_FULL = dict(m=140, d=10, q=2, N=10_000, name="shrimp3")
LOW_SMOKE = dict(m=140, d=10, q=2, N=1000, name="shrimp3")
F2_FULL = dict(m=140, d=10, q=1, N=10_000, name="shrimp2")
F2_SMOKE = dict(m=140, d=10, q=1, N=1000, name="shrimp2")
HIGH_FULL = dict(m=1400, d=100, q=2, N=10_000, name="shrimp7")
HIGH_SMOKE = dict(m=300, d=30, q=2, N=1000, name="shrimp7")
P = 0.2
#: Steps over which the baselines must pick the same supports as rflite.
CHECK_STEPS = 12
LOW, HIGH = "shrimp-lowdim-f3-path", "shrimp-highdim-f7-path"
GROUPS = {"low": LOW, "f2": "shrimp-lowdim-f2-path"}
SELECT = "shrimp-select-grid"
_medians = {}
_extra = {}


def _problem(m, d, q, N, name):
    rng = np.random.default_rng(0)
    spec = datasets.SYNTHETIC_DATASETS[name]
    X, y = spec.make(m, d=d, rng=rng)
    fmap = random_feature_map(d, N, q=q, subsets="all", distribution=Normal(1 / np.sqrt(q)),
                              bias="none", activation="fourier", rng=rng)
    n_val = m // 10
    return np.ascontiguousarray(fmap.transform(X[n_val:])), y[n_val:]


@pytest.fixture(scope="module")
def problems():
    shrimp_path(np.eye(3, 6), np.ones(3))  # compile the kernel outside the timings
    return {}


def _get(problems, benchmark, which):
    full = not benchmark.disabled
    key = (which, full)
    if key not in problems:
        size = {("low", True): LOW_FULL, ("low", False): LOW_SMOKE,
                ("high", True): HIGH_FULL, ("high", False): HIGH_SMOKE,
                ("f2", True): F2_FULL, ("f2", False): F2_SMOKE}[key]
        problems[key] = _problem(**size)
    return problems[key]


# ---------------------------------------------------------------- baselines
def path_pinv_eig(A, y, p=P):
    """The published approach: pinv and all Gram eigenvalues at every step.

    Run with the same BLAS threading as rflite (single-threaded below 1000 rows)
    so that only the algorithms differ.
    """
    with _blas_threads(A.shape[0]):
        return _path_pinv_eig(A, y, p)


def _path_pinv_eig(A, y, p):
    m = A.shape[0]
    idx = np.arange(A.shape[1])
    supports, eigs, c = [], [], None
    for n_t in prune_counts(A.shape[1], p):
        if n_t < idx.size:
            drop = np.argsort(np.abs(c), kind="stable")[: idx.size - n_t]
            idx = np.delete(idx, drop)
        As = A[:, idx]
        c = np.linalg.pinv(As) @ y
        G = As @ As.T if n_t >= m else As.T @ As
        eigs.append(np.linalg.eigvalsh(G)[[0, -1]] / n_t)
        supports.append(idx)
    return supports, eigs


def path_lstsq(A, y, p=P):
    """Straightforward NumPy: ``numpy.linalg.lstsq`` on the kept columns per step."""
    with _blas_threads(A.shape[0]):
        return _path_lstsq(A, y, p)


def _path_lstsq(A, y, p):
    idx = np.arange(A.shape[1])
    supports, c = [], None
    for n_t in prune_counts(A.shape[1], p):
        if n_t < idx.size:
            drop = np.argsort(np.abs(c), kind="stable")[: idx.size - n_t]
            idx = np.delete(idx, drop)
        c = np.linalg.lstsq(A[:, idx], y, rcond=None)[0]
        supports.append(idx)
    return supports


def _record(benchmark, name):
    if not benchmark.disabled and benchmark.stats is not None:
        _medians[name] = benchmark.stats.stats.median


def _same_start(supports, reference, n=CHECK_STEPS):
    for a, b in zip(supports[:n], reference[:n]):
        np.testing.assert_array_equal(a, b)


# --------------------------------------------------------------- benchmarks
@pytest.mark.parametrize("which", ["low", "f2"])
def bench_low_rflite(benchmark, problems, which):
    benchmark.group = GROUPS[which]
    A, y = _get(problems, benchmark, which)
    path = benchmark(shrimp_path, A, y, prune_rate=P)
    _record(benchmark, f"{which} rflite")
    problems[f"{which}-ref"] = path.supports
    assert path.n_kept[-1] == 1


@pytest.mark.parametrize("which", ["low", "f2"])
def bench_low_numpy_pinv_eig(benchmark, problems, which):
    benchmark.group = GROUPS[which]
    A, y = _get(problems, benchmark, which)
    kwargs = dict(rounds=2, iterations=1) if not benchmark.disabled else None
    if kwargs:
        supports, _ = benchmark.pedantic(path_pinv_eig, (A, y), **kwargs)
    else:
        supports, _ = benchmark(path_pinv_eig, A, y)
    _record(benchmark, f"{which} numpy-pinv-eig")
    ref = problems.get(f"{which}-ref") or shrimp_path(A, y, prune_rate=P).supports
    _same_start(supports, ref, 1 if which == "f2" else CHECK_STEPS)


@pytest.mark.parametrize("which", ["low", "f2"])
def bench_low_numpy_lstsq(benchmark, problems, which):
    benchmark.group = GROUPS[which]
    A, y = _get(problems, benchmark, which)
    kwargs = dict(rounds=2, iterations=1) if not benchmark.disabled else None
    if kwargs:
        supports = benchmark.pedantic(path_lstsq, (A, y), **kwargs)
    else:
        supports = benchmark(path_lstsq, A, y)
    _record(benchmark, f"{which} numpy-lstsq")
    ref = problems.get(f"{which}-ref") or shrimp_path(A, y, prune_rate=P).supports
    _same_start(supports, ref, 1 if which == "f2" else CHECK_STEPS)


def _select_problem(full):
    rng = np.random.default_rng(0)
    m, d = (1700, 18) if full else (200, 6)
    X = rng.uniform(-1, 1, (m, d))
    y = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.01 * rng.standard_normal(m)
    kw = dict(qs=(1, 2, 3), prune_rates=(0.15, 0.25, 0.35),
              n_features=1000 if full else 100, random_state=0)
    return X, y, kw


def select_per_point(X, y, qs, prune_rates, n_features, random_state):
    """The previous select_shrimp: one independent fit per (q, p), one BLAS thread."""
    seed = int(np.random.default_rng(random_state).integers(0, 2**63 - 1))
    with threadpool_limits(1):
        return np.array([[_fit_candidate((X, y, dict(
            n_features=n_features, q=q, prune_rate=p, validation_fraction=0.1,
            random_state=seed))).validation_mse_ for p in prune_rates] for q in qs])


def _select_rflite(X, y, kw):
    # the paper's hold-out protocol, which select_per_point transcribes
    # (select_shrimp's default is K-fold)
    with threadpool_limits(1):
        return select_shrimp(X, y, cv="holdout", **kw)


@pytest.mark.benchmark(group=SELECT)
def bench_select_rflite(benchmark, problems):
    X, y, kw = _select_problem(not benchmark.disabled)
    kwargs = dict(rounds=2, iterations=1) if not benchmark.disabled else None
    if kwargs:
        sel = benchmark.pedantic(_select_rflite, (X, y, kw), **kwargs)
    else:
        sel = benchmark(_select_rflite, X, y, kw)
    _record(benchmark, "select rflite")
    problems["select"] = sel.val_mse


@pytest.mark.benchmark(group=SELECT)
def bench_select_per_point(benchmark, problems):
    X, y, kw = _select_problem(not benchmark.disabled)
    kwargs = dict(rounds=1, iterations=1) if not benchmark.disabled else None
    if kwargs:
        scores = benchmark.pedantic(select_per_point, (X, y), kw, **kwargs)
    else:
        scores = benchmark(select_per_point, X, y, **kw)
    _record(benchmark, "select per-point")
    ref = problems.get("select")
    if ref is None:
        ref = _select_rflite(X, y, kw).val_mse
    np.testing.assert_array_equal(scores, ref)


@pytest.mark.benchmark(group=HIGH)
def bench_high_rflite(benchmark, problems):
    A, y = _get(problems, benchmark, "high")
    tracemalloc.start()
    try:
        path = shrimp_path(A, y, prune_rate=P)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    benchmark.extra_info["peak_MB_tracemalloc"] = peak / 2**20
    benchmark.extra_info["A_MB"] = A.nbytes / 2**20
    _extra["high peak MB (tracemalloc, incl. working copy of A)"] = peak / 2**20
    _extra["high A MB"] = A.nbytes / 2**20
    kwargs = dict(rounds=2, iterations=1) if not benchmark.disabled else None
    if kwargs:
        path = benchmark.pedantic(shrimp_path, (A, y), dict(prune_rate=P), **kwargs)
    else:
        path = benchmark(shrimp_path, A, y, prune_rate=P)
    _record(benchmark, "high rflite")
    assert path.n_kept[-1] == 1


def bench_ratio_report(capsys):
    """Print medians and speed-ups of the timed run (nothing in smoke mode)."""
    if not _medians:
        return
    with capsys.disabled():
        print(f"\nSHRIMP paths: low-dim f3 {LOW_FULL}, high-dim f7 {HIGH_FULL}")
        for name, t in _medians.items():
            base = _medians.get(name.split()[0] + " rflite")
            ratio = f"   {t / base:6.1f}x rflite's time" if base else ""
            print(f"  {name:22s} {t:8.3f} s{ratio}")
        for name, v in _extra.items():
            print(f"  {name}: {v:.0f}")
