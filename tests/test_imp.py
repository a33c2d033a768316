"""Tests of rflite.imp (SHRIMP): path against a pinv transcription, kernels
against NumPy references, pruning schedule, baselines, published behaviour,
bad input."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from rflite import datasets as D
from rflite import imp
from rflite._imp import factor as _imp_factor
from rflite._imp import path as _imp_path
from rflite.features import Normal, random_feature_map
from rflite._imp.factor import (
    _compact_rows,
    _householder_min_norm,
    _lq_downdate,
    _qr_delete_columns,
    _refined_min_norm,
)
from rflite._imp.path import _extreme_eigs
from rflite.imp import (
    SHRIMPRegressor,
    prune_counts,
    select_shrimp,
    shrimp_path,
)

#: Agreement with the pinv transcription on well-conditioned problems.
RTOL_PINV = 1e-8


# ----------------------------------------------------------- naive references
def naive_counts(n0, p, *, schedule="paper", min_features=1):
    """Schedule sizes in exact rational arithmetic, ``p`` read as the decimal it prints as.

    paper: N_t = floor(N_0 (1-p)^t) (SHRIMP Sec. 3, Fig. 4); recursive:
    N_t = N_{t-1} - floor(p N_{t-1}); both remove at least one column per step
    and stop at ``min_features``.
    """
    q = Fraction(repr(p))
    counts, t = [n0], 0
    while counts[-1] > min_features:
        t += 1
        prev = counts[-1]
        if schedule == "paper":
            nxt = min(prev - 1, math.floor(n0 * (1 - q) ** t))
        else:
            nxt = prev - max(1, math.floor(q * prev))
        counts.append(max(min_features, nxt))
    return counts


def pinv_path(A, y, p, *, min_features=1, A_val=None, y_val=None, schedule="paper"):
    """Algorithm 1 transcribed literally: a fresh ``pinv`` per step."""
    idx = np.arange(A.shape[1])
    c = np.linalg.pinv(A) @ y
    supports, coefs, val = [idx.copy()], [c], []
    for n_t in naive_counts(A.shape[1], p, schedule=schedule,
                            min_features=min_features)[1:]:
        k = idx.size - n_t
        drop = np.argsort(np.abs(c), kind="stable")[:k]
        idx = np.delete(idx, drop)
        c = np.linalg.pinv(A[:, idx]) @ y
        supports.append(idx.copy())
        coefs.append(c)
    if A_val is not None:
        val = [np.mean((A_val[:, s] @ c - y_val) ** 2) for s, c in zip(supports, coefs)]
    return supports, coefs, np.array(val)


def well_conditioned(m, n, seed):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, n))
    y = rng.standard_normal(m)
    return A, y


# --------------------------------------------------------------- the path
@pytest.mark.parametrize("mode", ["gram", "lq"])
@pytest.mark.parametrize("m, n, p", [(12, 90, 0.2), (15, 40, 0.35)])
def test_path_matches_pinv_transcription(m, n, p, mode, monkeypatch):
    if mode == "lq":  # reject every Gram factor: Householder LQ + orthogonal downdates
        monkeypatch.setattr(_imp_factor, "GRAM_RCOND", 1.0)
    A, y = well_conditioned(m + 5, n, m)
    Atr, ytr, Aval, yval = A[:m], y[:m], A[m:], y[m:]
    path = shrimp_path(Atr, ytr, prune_rate=p, A_val=Aval, y_val=yval)
    sup, coef, val = pinv_path(Atr, ytr, p, A_val=Aval, y_val=yval)
    assert len(path.supports) == len(sup)
    for t, (s, c) in enumerate(zip(sup, coef)):
        assert_array_equal(path.supports[t], s)
        assert_allclose(path.coefs[t], c, rtol=RTOL_PINV, atol=RTOL_PINV * np.abs(c).max())
    assert_allclose(path.val_mse, val, rtol=1e-7)
    assert path.best_step == int(np.argmin(val))
    # both regimes and the downdate were exercised
    assert f"{mode}-downdate" in path.solver and "qr-ls" in path.solver
    for t, s in enumerate(path.supports):
        r = Atr[:, s] @ path.coefs[t] - ytr
        assert path.train_mse[t] == pytest.approx(r @ r / m, rel=1e-6, abs=1e-24)


def test_ill_conditioned_path_matches_pinv():
    # kappa(A) = 1e6: Gram factors are rejected, the LQ path must still agree
    rng = np.random.default_rng(13)
    m, n = 10, 80
    Q1 = np.linalg.qr(rng.standard_normal((m, m)))[0]
    Q2 = np.linalg.qr(rng.standard_normal((n, m)))[0]
    A = Q1 @ np.diag(np.logspace(0, -6, m)) @ Q2.T
    y = rng.standard_normal(m)
    path = shrimp_path(A, y, n_steps=8)
    sup, coef, _ = pinv_path(A, y, 0.2)
    assert path.solver[0] == "lq" and "lq-downdate" in path.solver
    for t in range(len(path.supports)):
        assert_array_equal(path.supports[t], sup[t])
        assert_allclose(path.coefs[t], coef[t], rtol=RTOL_PINV,
                        atol=RTOL_PINV * np.abs(coef[t]).max())


def test_path_on_fourier_dictionary_matches_pinv():
    # the paper's dictionary at small size, wide inputs so it is well conditioned
    X, y = D.make_shrimp3(40, d=4, rng=0)
    fmap = random_feature_map(4, 150, q=2, subsets="all", distribution=Normal(3.0),
                              bias="none", activation="fourier", rng=1)
    A = fmap.transform(X)
    assert np.linalg.cond(A) < 1e4
    path = shrimp_path(A, y, prune_rate=0.2, n_steps=12)
    sup, coef, _ = pinv_path(A, y, 0.2)
    for t in range(len(path.supports)):
        assert_array_equal(path.supports[t], sup[t])
        assert_allclose(path.coefs[t], coef[t], rtol=RTOL_PINV,
                        atol=RTOL_PINV * np.abs(coef[t]).max())


def test_prune_counts_floor_and_never_empty():
    counts = prune_counts(20000, 0.2, schedule="recursive")
    for a, b in zip(counts[:-1], counts[1:]):
        assert a - b == max(1, math.floor(0.2 * a))
    assert counts[-1] == 1 and counts.min() >= 1
    for schedule in imp.SCHEDULES:
        assert prune_counts(50, 0.5, min_features=7, schedule=schedule)[-1] == 7
        assert len(prune_counts(50, 0.5, n_steps=2, schedule=schedule)) == 3
        assert np.all(np.diff(prune_counts(20000, 0.2, schedule=schedule)) <= -1)
    A, y = well_conditioned(8, 30, 3)
    path = shrimp_path(A, y, prune_rate=0.9, min_features=5)
    assert_array_equal(path.n_kept, [30, 5])  # floor(.9 * 30) = 27, capped at 25
    assert_array_equal(shrimp_path(A, y, prune_rate=0.9).n_kept, [30, 3, 1])
    assert_array_equal(path.n_kept, [s.size for s in path.supports])


def test_paper_schedule_matches_fig4():
    # SHRIMP Fig. 4: N = 10000 weights -> N_0 = 20000 [cos, sin] columns, p = 0.2;
    # the figure prints N_t = 20000, 8192, 879, 38, 12 at t = 0, 4, 14, 28, 33
    t = [0, 4, 14, 28, 33]
    assert_array_equal(prune_counts(20000, 0.2)[t], [20000, 8192, 879, 38, 12])
    assert_array_equal(prune_counts(20000, 0.2, schedule="paper")[t],
                       [20000, 8192, 879, 38, 12])
    # Algorithm 1 read recursively compounds the floors
    assert_array_equal(prune_counts(20000, 0.2, schedule="recursive")[t],
                       [20000, 8192, 881, 40, 14])


@pytest.mark.parametrize("schedule", ["paper", "recursive"])
@pytest.mark.parametrize("n0, p, mf", [(20000, 0.15, 1), (20000, 0.25, 1), (20000, 0.35, 1),
                                       (19800, 0.2, 1), (1000, 0.1, 3), (97, 0.03, 1),
                                       (500, 0.5, 9), (100, 0.9, 1), (64, 0.5, 1)])
def test_prune_counts_match_exact_rational_reference(n0, p, mf, schedule):
    got = prune_counts(n0, p, min_features=mf, schedule=schedule)
    assert_array_equal(got, naive_counts(n0, p, schedule=schedule, min_features=mf))
    # closed-form step count (exact for the paper's schedule up to a step at a
    # phase boundary; a lower bound for the recursive one)
    T = _imp_path._paper_step_count(n0, p, mf)
    if schedule == "paper":
        assert abs(T - (len(got) - 1)) <= 1
    else:
        assert T <= len(got) - 1 + 1


def test_paper_schedule_is_the_default_everywhere():
    A, y = well_conditioned(12, 90, 1)
    assert_array_equal(shrimp_path(A, y, prune_rate=0.2).n_kept, naive_counts(90, 0.2))
    assert SHRIMPRegressor().schedule == "paper"
    model = SHRIMPRegressor(n_features=45, q=1, random_state=0).fit(
        *D.make_shrimp2(30, d=3, rng=0)[:2])
    assert_array_equal(model.path_.n_kept, naive_counts(90, 0.2))
    rec = SHRIMPRegressor(n_features=45, q=1, schedule="recursive", random_state=0).fit(
        *D.make_shrimp2(30, d=3, rng=0)[:2])
    assert_array_equal(rec.path_.n_kept, naive_counts(90, 0.2, schedule="recursive"))


def test_prune_counts_refuses_huge_schedules_up_front():
    # a million steps is over the limit (counting them in a loop would take ~1 s)
    with pytest.raises(ValueError, match="999999 pruning steps"):
        prune_counts(10**6, 1e-9)
    # ~1e9 steps: refused before any counting (a loop would take ~20 min)
    with pytest.raises(ValueError, match=r"n_columns=1000000000.*prune_rate=1e-12.*"
                                         r"MAX_PRUNE_STEPS"):
        prune_counts(10**9, 1e-12)
    with pytest.raises(ValueError, match="at least"):
        prune_counts(10**6, 1e-9, schedule="recursive")
    with pytest.raises(ValueError, match="MAX_PRUNE_STEPS"):  # no OverflowError
        prune_counts(10**6, 5e-324)
    # ... unless the number of steps is capped
    assert_array_equal(prune_counts(10**6, 1e-9, n_steps=3),
                       [10**6, 10**6 - 1, 10**6 - 2, 10**6 - 3])
    A, y = well_conditioned(3, 5, 2)
    with pytest.raises(ValueError, match="prune_rate"):
        shrimp_path(np.tile(A, (1, 30000)), y, prune_rate=1e-9)
    for bad, name in [(dict(n_columns=0), "n_columns"), (dict(prune_rate=1.0), "prune_rate"),
                      (dict(min_features=0), "min_features"), (dict(n_steps=-1), "n_steps"),
                      (dict(schedule="quantile"), "schedule")]:
        kw = dict(n_columns=100, prune_rate=0.2) | bad
        with pytest.raises(ValueError, match=name):
            prune_counts(kw.pop("n_columns"), kw.pop("prune_rate"), **kw)


def test_prune_order_ignores_last_bit_perturbations():
    """Near-ties at the cut are decided by column index, not by rounding noise."""
    rng = np.random.default_rng(0)
    old_flips = 0
    for trial in range(50):
        # magnitudes on a coarse lattice: many exact ties, some at the cut
        c = rng.integers(1, 8, size=40) * rng.choice([-1.0, 1.0], size=40) * 0.1
        k = 13
        ref = np.sort(_imp_path._prune_order(c, k))
        # perturb each coefficient by at most 2 ulp, as another BLAS would
        cp = c.copy()
        for _ in range(2):
            cp = np.nextafter(cp, rng.choice([-np.inf, np.inf], size=c.size))
        assert_array_equal(np.sort(_imp_path._prune_order(cp, k)), ref)
        old = lambda v: np.sort(np.argsort(np.abs(v), kind="stable")[:k])  # noqa: E731
        old_flips += not np.array_equal(old(c), old(cp))
    assert old_flips > 0  # the inputs are adversarial for an exact sort


def test_prune_order_is_the_exact_order_when_magnitudes_are_apart():
    rng = np.random.default_rng(1)
    for _ in range(20):
        c = rng.standard_normal(200) * np.exp(rng.uniform(-20, 5, 200))
        c[rng.integers(200)] = 0.0
        k = int(rng.integers(0, 200))
        a = np.abs(c)
        gaps = np.diff(np.sort(a))
        # the grid cannot merge magnitudes more than TIE_RTOL * 2 max|c| apart
        if gaps.size and gaps.min() > 2 * imp.TIE_RTOL * 2 * a.max():
            assert_array_equal(_imp_path._prune_order(c, k), np.argsort(a, kind="stable")[:k])
    assert imp.TIE_RTOL == 2.0 ** -_imp_path._TIE_BITS  # the grid scaling stays exact
    # all-zero and exactly tied coefficients: lowest positions first
    assert_array_equal(_imp_path._prune_order(np.zeros(5), 3), [0, 1, 2])
    assert_array_equal(_imp_path._prune_order(np.array([2.0, -1.0, 1.0, 1.0, 3.0]), 2), [1, 2])
    # tiny magnitudes (below TIE_RTOL * max) are ties, pruned by position
    assert_array_equal(_imp_path._prune_order(np.array([1.0, 3e-12, 1e-12, 2e-12]), 2), [1, 2])


_THREADS_SCRIPT = """
import sys, numpy as np
from rflite import datasets as D
from rflite.imp import SHRIMPRegressor
X, y = D.make_shrimp7(300, d=20, rng=0)[:2]
Xt = np.random.default_rng(9).uniform(-1, 1, (200, 20))
model = SHRIMPRegressor(n_features=400, q=1, random_state=0).fit(X, y)
np.savez(sys.argv[1], support=model.support_, pred=model.predict(Xt))
"""


@pytest.mark.slow(reason="runs in a subprocess")
def test_same_model_with_one_or_two_blas_threads(tmp_path):
    """Same seed, same model whatever OPENBLAS_NUM_THREADS / OMP_NUM_THREADS say.

    On this problem the chosen support is numerically rank deficient and its
    minimum-norm refit has coefficients ~1e12: the refit run with the
    environment's BLAS threads gave predictions 2.4e-2 apart between 1 and 2
    threads.  Supports must be equal and predictions agree to 1e-12 relative.
    """
    import os
    import subprocess
    import sys

    import rflite

    script = tmp_path / "fit.py"
    script.write_text(_THREADS_SCRIPT)
    root = os.path.dirname(os.path.dirname(os.path.abspath(rflite.__file__)))
    out = {}
    for n in (1, 2):
        env = dict(os.environ, OPENBLAS_NUM_THREADS=str(n), OMP_NUM_THREADS=str(n),
                   MKL_NUM_THREADS=str(n),
                   PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
        subprocess.run([sys.executable, str(script), str(tmp_path / f"t{n}.npz")], env=env,
                       check=True, cwd=tmp_path, timeout=300)
        out[n] = np.load(tmp_path / f"t{n}.npz")
    assert_array_equal(out[1]["support"], out[2]["support"])
    p1, p2 = out[1]["pred"], out[2]["pred"]
    assert_allclose(p2, p1, rtol=1e-12, atol=1e-12 * np.abs(p1).max())


def test_supports_nested_and_sorted():
    A, y = well_conditioned(10, 60, 4)
    for method in ("magnitude", "random", "naive"):
        path = shrimp_path(A, y, method=method, rng=0)
        for a, b in zip(path.supports[:-1], path.supports[1:]):
            assert np.all(np.diff(b) > 0) and np.all(np.isin(b, a))


def test_random_pruning_seeded_and_refits():
    A, y = well_conditioned(10, 60, 5)
    p1 = shrimp_path(A, y, method="random", rng=7)
    p2 = shrimp_path(A, y, method="random", rng=np.random.default_rng(7))
    p3 = shrimp_path(A, y, method="random", rng=8)
    for a, b in zip(p1.supports, p2.supports):
        assert_array_equal(a, b)
    assert any(not np.array_equal(a, b) for a, b in zip(p1.supports, p3.supports))
    for s, c in zip(p1.supports, p1.coefs):
        assert_allclose(c, np.linalg.pinv(A[:, s]) @ y, rtol=RTOL_PINV, atol=1e-10)


def test_naive_pruning_keeps_initial_coefficients():
    A, y = well_conditioned(10, 60, 6)
    path = shrimp_path(A, y, method="naive")
    c0 = np.linalg.pinv(A) @ y
    for s, c in zip(path.supports, path.coefs):
        assert_allclose(c, c0[s], rtol=1e-9, atol=1e-12)
        # the kept ones are the largest |c0|
        assert np.abs(c0[s]).min() >= np.abs(np.delete(c0, s)).max(initial=0.0)
    assert set(path.solver[1:]) == {"none"}


def test_subset_baseline_fresh_random_columns():
    A, y = well_conditioned(14, 60, 7)
    A, y, A_val, y_val = A[:10], y[:10], A[10:], y[10:]
    path = shrimp_path(A, y, method="subset", rng=1, A_val=A_val, y_val=y_val)
    assert_array_equal(path.n_kept, prune_counts(60, 0.2))
    for t, (s, c) in enumerate(zip(path.supports, path.coefs)):
        assert_allclose(c, np.linalg.pinv(A[:, s]) @ y, rtol=RTOL_PINV, atol=1e-10)
        assert path.val_mse[t] == pytest.approx(np.mean((A_val[:, s] @ c - y_val) ** 2))


def test_spectrum_matches_numpy():
    A, y = well_conditioned(10, 40, 8)
    path = shrimp_path(A, y, track_spectrum=True, n_steps=8)
    for t, s in enumerate(path.supports):
        As = A[:, s]
        G = As @ As.T if s.size >= 10 else As.T @ As
        w = np.linalg.eigvalsh(G) / s.size
        assert_allclose([path.eig_min[t], path.eig_max[t]], [w[0], w[-1]], rtol=1e-8)
    off = shrimp_path(A, y, n_steps=2)
    assert off.eig_min.shape == (0,) and off.val_mse.shape == (0,) and off.best_step is None
    assert off._fields == path._fields


def test_feature_operator_matches_dense():
    X, y = D.make_shrimp2(30, d=3, rng=0)
    fmap = random_feature_map(3, 60, q=1, subsets="all", distribution=Normal(2.0),
                              bias="none", activation="fourier", rng=2)
    p_op = shrimp_path(fmap.operator(X), y, n_steps=10)
    p_dense = shrimp_path(fmap.transform(X), y, n_steps=10)
    for a, b, ca, cb in zip(p_op.supports, p_dense.supports, p_op.coefs, p_dense.coefs):
        assert_array_equal(a, b)
        assert_allclose(ca, cb, rtol=1e-12, atol=1e-14)


def test_inputs_not_modified_and_readonly_ok():
    A, y = well_conditioned(10, 40, 9)
    A0 = A.copy()
    A.flags.writeable = False
    y.flags.writeable = False
    shrimp_path(A, y)
    shrimp_path(np.asfortranarray(A0), y)
    assert_array_equal(A, A0)


def test_exactly_representable_f2_reaches_machine_precision():
    # reduced SHRIMP Table 2 setting (m = 140, d = 10, q = 1): the paper reports
    # test MSE 7.9e-32; below 1e-15 is required
    model = SHRIMPRegressor(n_features=2000, q=1, random_state=0)
    X, y = D.make_shrimp2(140, d=10, rng=1)
    model.fit(X, y)
    Xt, _ = D.make_shrimp2(500, d=10, rng=2)
    mse = np.mean((model.predict(Xt) - D.target_shrimp2(Xt)) ** 2)
    assert mse < 1e-15
    assert np.all(model.variable_importance()[2:] == 0)


def test_support_recovery_odd_even():
    # SHRIMP Fig. 4, reduced: f = 3 cos(x3) + 4 sin(x4) + 2 sin(x2), q = 1
    N = 1000
    X, y = D.make_shrimp_support(200, d=5, rng=0)
    model = SHRIMPRegressor(n_features=N, q=1, random_state=0).fit(X, y)
    path, fmap = model.path_, model.feature_map_
    for t in range(model.best_step_, len(path.supports)):
        cols = path.supports[t]
        var = fmap.supports[cols % N, 0]
        is_sin = cols >= N
        assert set(var.tolist()) <= {1, 2, 3}
        assert not is_sin[var == 2].any()  # cos only on x3
        assert is_sin[var != 2].all()  # sin only on x2, x4
    assert set(fmap.supports[model.support_ % N, 0].tolist()) == {1, 2, 3}
    assert model.validation_mse_ < 1e-20


# ------------------------------------------------------------------ kernels
def test_compact_rows_matches_numpy():
    rng = np.random.default_rng(0)
    At = rng.standard_normal((12, 5))
    keep = np.array([0, 2, 3, 7, 11])
    expected = At[keep].copy()
    _compact_rows(At, keep)
    assert_array_equal(At[: keep.size], expected)


def test_lq_downdate_matches_fresh_factor():
    A, _ = well_conditioned(8, 50, 10)
    At = np.ascontiguousarray(A.T)
    _, U = _householder_min_norm(At, np.ones(8))
    drop = np.arange(0, 50, 4)
    keep = np.setdiff1d(np.arange(50), drop)
    U2 = _lq_downdate(U, At[drop])
    # U2^T U2 = A_K A_K^T, the same Gram as a fresh factor
    assert_allclose(U2.T @ U2, A[:, keep] @ A[:, keep].T, rtol=1e-12, atol=1e-12)
    assert_allclose(U2, np.triu(U2))


def test_qr_delete_columns_solves_least_squares():
    rng = np.random.default_rng(1)
    A = rng.standard_normal((20, 9))
    y = rng.standard_normal(20)
    Q, R = np.linalg.qr(A)
    keep = np.array([0, 1, 4, 5, 8])
    R2, z2 = _qr_delete_columns(R, Q.T @ y, keep)
    c = np.linalg.solve(R2, z2)
    assert_allclose(c, np.linalg.lstsq(A[:, keep], y, rcond=None)[0], rtol=1e-12)


def test_refined_min_norm_and_householder_match_pinv():
    A, y = well_conditioned(9, 70, 11)
    At = np.ascontiguousarray(A.T)
    ref = np.linalg.pinv(A) @ y
    c, U = _householder_min_norm(At, y)
    assert_allclose(c, ref, rtol=1e-12, atol=1e-14)
    assert_allclose(_refined_min_norm(At, y, U), ref, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("n,n_blocks", [(130, 4), (157, 5)])  # 130: a 2-row tail joins
def test_blocked_qr_routes_match_pinv(n, n_blocks, monkeypatch):
    """The blocked (TSQR) Householder and SVD routes for tall, thin ``At``:
    the same minimum-norm solution as ``pinv`` (well conditioned, and rank
    deficient with the SVD route), the same triangle as one ``dgeqrf`` up to
    row signs, and the routes are really taken."""
    import rflite._imp.factor as IF

    monkeypatch.setattr(IF, "BLOCKED_QR_ROWS", 32)
    A, y = well_conditioned(9, n, 13)
    At = np.ascontiguousarray(A.T)
    assert IF._use_blocked_qr(At)
    blocks, _, U = IF._blocked_qr(At)
    assert len(blocks) == n_blocks
    U_ref = np.linalg.qr(At, mode="r")
    assert_allclose(np.abs(U), np.abs(U_ref), rtol=1e-12, atol=1e-12)
    ref = np.linalg.pinv(A) @ y
    c, _ = _householder_min_norm(At, y)
    assert_allclose(c, ref, rtol=1e-12, atol=1e-14)
    assert_allclose(IF._svd_step(At, y)[0], ref, rtol=1e-12, atol=1e-14)
    rng = np.random.default_rng(4)
    B = rng.standard_normal((9, 3)) @ rng.standard_normal((3, n))  # rank 3
    yb = B @ rng.standard_normal(n)
    Bt = np.ascontiguousarray(B.T)
    assert _householder_min_norm(Bt, yb) == (None, None)
    c, X, _ = IF._svd_step(Bt, yb)
    assert_allclose(c, np.linalg.pinv(B) @ yb, rtol=1e-8, atol=1e-10)
    assert X.shape == (9, 3)  # the numerical column space of B


def test_extreme_eigs_reference():
    A, _ = well_conditioned(6, 20, 12)
    lo, hi = _extreme_eigs(np.ascontiguousarray(A.T))
    w = np.linalg.eigvalsh(A @ A.T) / 20
    assert_allclose([lo, hi], [w[0], w[-1]], rtol=1e-10)


def test_rank_deficient_falls_back_like_pinv():
    rng = np.random.default_rng(2)
    B = rng.standard_normal((10, 3))
    A = B @ rng.standard_normal((3, 40))  # rank 3, wide
    y = A @ rng.standard_normal(40)
    path = shrimp_path(A, y, n_steps=3)
    assert path.solver[0] == "svd"
    assert_allclose(path.coefs[0], np.linalg.pinv(A) @ y, rtol=1e-8, atol=1e-10)


def _low_rank_columns(m, n, groups, rank, rng):
    """m x n with columns in ``groups`` blocks, each of ``rank``: a numerical rank that
    drops as whole blocks are pruned (like q = 1 features of a few inputs)."""
    blocks = [rng.standard_normal((m, rank)) @ rng.standard_normal((rank, n // groups))
              * rng.uniform(0.1, 10.0) for _ in range(groups)]
    return np.hstack(blocks)


@pytest.mark.parametrize("m,n", [(40, 300), (40, 36)])  # wide and tall starts
def test_reduced_basis_path_matches_pinv_at_every_step(m, n):
    """Once rank deficient the path solves in the shrinking basis V of A_P's
    column space: every step equals pinv on the same columns, through
    the wide and the tall steps, and the basis shrinks with the rank."""
    rng = np.random.default_rng(5)
    A = _low_rank_columns(m, n, 6, 3, rng)  # rank 18 < m
    y = A @ rng.standard_normal(n) + 0.1 * rng.standard_normal(m)  # not interpolable
    path = shrimp_path(A, y, prune_rate=0.3)
    assert path.solver[0] == "svd" and set(path.solver[1:]) == {"svd-reduced"}
    for S, c in zip(path.supports, path.coefs):
        ref = np.linalg.pinv(A[:, S], rcond=1e-10) @ y
        assert_allclose(A[:, S] @ c, A[:, S] @ ref, rtol=1e-9, atol=1e-9)
        assert_allclose(c, ref, rtol=1e-8, atol=1e-8 * np.abs(ref).max())


def test_reduced_basis_shrinks_with_the_rank():
    import rflite._imp.factor as IF

    rng = np.random.default_rng(6)
    A = _low_rank_columns(30, 240, 6, 3, rng)
    y = rng.standard_normal(30)
    At = np.ascontiguousarray(A.T)
    solver = IF._MinNormSolver(30)
    c, label = solver.solve(At, y)
    assert label == "svd" and solver.V.shape == (30, 18)
    keep = np.arange(80, 240)  # drops the first two blocks: rank 12
    solver.prune(keep, At[:80])
    c, label = solver.solve(At[keep], y)
    assert label == "svd-reduced" and solver.V.shape == (30, 12)
    assert_allclose(solver.V.T @ solver.V, np.eye(12), atol=1e-12)
    assert_allclose(c, np.linalg.pinv(A[:, keep], rcond=1e-10) @ y, rtol=1e-8, atol=1e-10)


# ------------------------------------------------------------------- model
def test_model_reproducible_and_sklearn_conventions():
    X, y = D.make_shrimp3(80, d=4, rng=0)
    kw = dict(n_features=300, q=2, random_state=3)
    m1 = SHRIMPRegressor(**kw).fit(X, y)
    m2 = SHRIMPRegressor(**kw).fit(X, y)
    assert_array_equal(m1.support_, m2.support_)
    assert_allclose(m1.coef_, m2.coef_)
    assert m1.get_params()["prune_rate"] == 0.2
    assert m1.predict(X[:5]).shape == (5,)
    assert m1.validation_indices_.size == 8
    assert m1.feature_map_.n_columns == 2 * 300 // 6 * 6
    assert m1.variable_importance().sum() == pytest.approx(1.0)
    m3 = SHRIMPRegressor(refit=False, **kw).fit(X, y)
    assert_allclose(m3.coef_, m3.path_.coefs[m3.best_step_][m3.path_.coefs[m3.best_step_] != 0])
    # default rho = N(0, I/q)
    assert m1.feature_map_.values.std() == pytest.approx(1 / math.sqrt(2), rel=0.15)


def test_select_shrimp_picks_lowest_validation():
    X, y = D.make_shrimp2(60, d=3, rng=0)
    # the paper's protocol (one validation split); K-fold is tested in test_shrimp_robust
    sel = select_shrimp(X, y, qs=[1, 2], prune_rates=(0.2, 0.4), n_features=150,
                        cv="holdout", random_state=0)
    assert sel.val_mse.shape == (2, 2)
    i, j = np.unravel_index(np.argmin(sel.val_mse), sel.val_mse.shape)
    assert (sel.q, sel.prune_rate) == (sel.qs[i], sel.prune_rates[j])
    assert sel.model.q == sel.q and sel.model.validation_mse_ == sel.val_mse[i, j]


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("p", [0.0, 1.0, -0.2, 1.5, float("nan")])
def test_bad_prune_rate(p):
    A, y = well_conditioned(5, 10, 0)
    with pytest.raises(ValueError, match="prune_rate"):
        shrimp_path(A, y, prune_rate=p)


def test_bad_inputs_name_the_parameter():
    A, y = well_conditioned(5, 10, 0)
    with pytest.raises(ValueError, match="y"):
        shrimp_path(A, y[:4])
    bad = A.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="A"):
        shrimp_path(bad, y)
    with pytest.raises(ValueError, match="y"):
        shrimp_path(A, np.r_[np.nan, y[1:]])
    with pytest.raises(ValueError, match="method"):
        shrimp_path(A, y, method="largest")
    with pytest.raises(ValueError, match="A_val"):
        shrimp_path(A, y, A_val=A)
    with pytest.raises(ValueError, match="A_val"):
        shrimp_path(A, y, A_val=A[:, :5], y_val=y)
    with pytest.raises(ValueError, match="A"):
        shrimp_path(A + 1j, y)
    with pytest.raises(ValueError, match="min_features"):
        shrimp_path(A, y, min_features=0)
    with pytest.raises(ValueError, match="validation_fraction"):
        SHRIMPRegressor(n_features=20, validation_fraction=1.0).fit(np.zeros((10, 2)),
                                                                      np.zeros(10))
    with pytest.raises(ValueError, match="q"):
        SHRIMPRegressor(n_features=20, q=0).fit(np.zeros((10, 2)), np.zeros(10))


@pytest.mark.slow(reason="starts a process pool")
def test_select_shrimp_same_choice_on_a_process_pool():
    from rflite.datasets import make_shrimp_support
    from rflite.imp import select_shrimp

    X, y = make_shrimp_support(120, rng=0)
    kw = dict(qs=(1, 2), prune_rates=(0.2, 0.35), n_features=200, random_state=3)
    serial = select_shrimp(X, y, **kw)
    pooled = select_shrimp(X, y, executor=2, **kw)
    np.testing.assert_array_equal(serial.val_mse, pooled.val_mse)
    assert (serial.q, serial.prune_rate) == (pooled.q, pooled.prune_rate)
    np.testing.assert_array_equal(serial.model.predict(X), pooled.model.predict(X))



# ------------------------------------------------------------ q = "auto"
def test_auto_q_is_the_better_validated_fit_of_q_1_and_2():
    """The default q="auto" fits q = 1 and q = 2 with one seed and keeps the lower
    validation MSE: bit for bit the fit of SHRIMPRegressor(q=q_) with that seed,
    on the same validation rows; on an interaction target (Friedman 1) it is
    q = 2, whose test error is a fraction of the additive model's."""
    X, y = D.make_friedman1(300, d=10, noise=0.5, rng=0)
    Xt, yt = D.make_friedman1(500, d=10, rng=1)
    auto = SHRIMPRegressor(random_state=0).fit(X, y)
    fixed = {q: SHRIMPRegressor(q=q, random_state=0).fit(X, y) for q in (1, 2)}
    assert auto.q == "auto" and auto.random_state == 0  # parameters untouched
    assert auto.q_scores_ == {q: fixed[q].validation_mse_ for q in (1, 2)}
    assert auto.q_ == 2 and auto.q_scores_[2] < auto.q_scores_[1]
    chosen = fixed[2]
    assert_array_equal(auto.support_, chosen.support_)
    assert_array_equal(auto.coef_, chosen.coef_)
    assert auto.intercept_ == chosen.intercept_
    assert_array_equal(auto.validation_indices_, chosen.validation_indices_)
    assert_array_equal(fixed[1].validation_indices_, chosen.validation_indices_)
    mse = {q: float(np.mean((m.predict(Xt) - yt) ** 2)) for q, m in fixed.items()}
    assert mse[2] < 0.3 * mse[1], mse


def test_auto_q_single_input_and_any_random_state():
    """d = 1 leaves one candidate (no clipping warning); a Generator seed is
    reproducible and is not replaced in the parameters."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (80, 1))
    y = np.sin(3 * X[:, 0]) + 0.01 * rng.standard_normal(80)
    import warnings

    from rflite._core.exceptions import QClippedWarning

    with warnings.catch_warnings():
        warnings.simplefilter("error", QClippedWarning)
        one = SHRIMPRegressor(n_features=60, random_state=0).fit(X, y)
    assert list(one.q_scores_) == [1] and one.q_ == 1
    gen = np.random.default_rng(7)
    a = SHRIMPRegressor(n_features=60, random_state=gen).fit(X, y)
    b = SHRIMPRegressor(n_features=60, random_state=np.random.default_rng(7)).fit(X, y)
    assert a.random_state is gen
    assert_array_equal(a.coef_, b.coef_)


def test_verbose_prints_one_line_per_step_and_candidate(capsys):
    """verbose=1: a line per pruning step of every q candidate, one per candidate
    and one for the refit, on stderr only; the model is the silent one."""
    X, y = D.make_friedman1(120, d=5, noise=0.3, rng=0)
    quiet = SHRIMPRegressor(n_features=60, n_steps=4, random_state=0).fit(X, y)
    out = capsys.readouterr()
    assert out.err == "" and out.out == ""
    loud = SHRIMPRegressor(n_features=60, n_steps=4, verbose=1, random_state=0).fit(X, y)
    out = capsys.readouterr()
    assert out.out == ""
    lines = out.err.splitlines()
    assert all(line.startswith("[SHRIMPRegressor] ") for line in lines)
    assert sum(" columns (" in line for line in lines) == 2 * 5  # steps 0..4, q = 1 and 2
    assert sum("candidate" in line for line in lines) == 2
    assert sum("refitted on all rows" in line for line in lines) == 2
    assert lines[-1].startswith(f"[SHRIMPRegressor] q={loud.q_} kept")
    assert_array_equal(loud.coef_, quiet.coef_)
    with pytest.raises(ValueError, match="verbose"):
        SHRIMPRegressor(n_features=60, q=1, verbose=-1).fit(X, y)


def test_public_names_defined_in_private_modules_report_rflite_imp():
    # SHRIMPPath and prune_counts live in rflite._imp.path, SHRIMPSelection in
    # rflite._imp.select (select_shrimp, which fits the estimators, in
    # rflite.imp itself); users (help(), pickle) see rflite.imp
    import pickle

    from rflite._imp import path as _imp_path
    from rflite._imp import select as _imp_select

    assert imp.select_shrimp.__module__ == "rflite.imp"
    for name in ("SHRIMPPath", "prune_counts", "SHRIMPSelection"):
        obj = getattr(imp, name)
        assert obj.__module__ == "rflite.imp"
        assert obj is getattr(_imp_path if hasattr(_imp_path, name) else _imp_select, name)
    rng = np.random.default_rng(0)
    path = shrimp_path(rng.standard_normal((8, 20)), rng.standard_normal(8), n_steps=2)
    blob = pickle.dumps(path)
    assert b"rflite._imp.path" not in blob
    back = pickle.loads(blob)
    assert type(back) is imp.SHRIMPPath
    assert_array_equal(back.n_kept, path.n_kept)


def test_rank_deficient_steps_cut_like_the_authors_pinv():
    """A singular value of 5e-16 s_max lies between LAPACK gelsd's eps cut (which
    keeps it: coefficients of ~1e15 along it) and numpy's pinv's 1e-15 (the SHRIMP
    authors' code: dropped).  The path's rank-deficient solves and SHRIMP's
    minimum-norm refit cut where pinv does."""
    from rflite._imp.factor import min_norm_lstsq

    rng = np.random.default_rng(3)
    U, _ = np.linalg.qr(rng.standard_normal((20, 11)))
    V, _ = np.linalg.qr(rng.standard_normal((60, 11)))
    s = np.append(np.logspace(0, -3, 10), 5e-16)
    A = (U * s) @ V.T
    y = U @ rng.standard_normal(11)
    ref = np.linalg.pinv(A) @ y
    assert np.linalg.norm(ref) < 1e4
    path = shrimp_path(A, y, n_steps=2)
    assert path.solver[0] == "svd"
    assert_allclose(path.coefs[0], ref, rtol=1e-8, atol=1e-8 * np.abs(ref).max())
    assert_allclose(min_norm_lstsq(A, y), ref, rtol=1e-8, atol=1e-8 * np.abs(ref).max())
