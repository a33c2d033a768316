"""The ratio benchmark gate (benchmarks/gate.py) on small synthetic pytest-benchmark JSON files."""

import importlib.util
import json
import statistics
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


gate = _load("rflite_bench_gate", BENCH / "gate.py")

# group -> {name: min time}; one group with two rflite variants and two references,
# one plain pair, one group with no reference (not gateable).
BASE = {
    "features": {"bench_rflite[rflite]": 0.07, "bench_rflite[rflite-1thread]": 0.12,
                 "bench_numpy_dense": 0.70, "bench_numpy_sin_floor": 0.60},
    "harfe": {"bench_rflite": 0.068, "bench_numpy_solve": 0.18},
    "compile": {"bench_compile_cold": 6.6, "bench_compile_cached": 0.7},
}


def _write(path, groups, scale=None, stat_noise=None):
    """A pytest-benchmark-like JSON; ``scale(group, name)`` multiplies the times."""
    benchmarks = []
    for group, cases in groups.items():
        for name, t in cases.items():
            t = t * (scale(group, name) if scale else 1.0)
            benchmarks.append({"group": group, "name": name, "fullname": f"x.py::{name}",
                               "stats": {"min": t, "median": 1.3 * t, "mean": 1.4 * t,
                                         "rounds": 5}})
    path.write_text(json.dumps({"machine_info": {}, "benchmarks": benchmarks}))
    return path


@pytest.fixture
def base(tmp_path):
    return _write(tmp_path / "base.json", BASE)


def _run(capsys, new, base, *extra):
    code = gate.main([str(new), "--baseline", str(base), "--margin", "0.5", *extra])
    return code, capsys.readouterr().out


def test_identical_run_passes(tmp_path, base, capsys):
    code, out = _run(capsys, _write(tmp_path / "new.json", BASE), base)
    assert code == 0
    assert "PASS: 5 pairs, 0 regressed, 0 missing" in out
    # the group without a reference is reported, not silently dropped
    assert "unpaired group (not gated) 'compile': no rflite case" in out


def test_rflite_2x_slowdown_fails_only_its_group(tmp_path, base, capsys):
    new = _write(tmp_path / "new.json", BASE,
                 scale=lambda g, n: 2.0 if (g == "harfe" and "rflite" in n) else 1.0)
    code, out = _run(capsys, new, base)
    assert code == 1
    rows, _ = gate.compare(gate.load_times(base), gate.load_times(new), 0.5)
    verdicts = {(r.group, r.reference): r.verdict for r in rows}
    assert verdicts[("harfe", "bench_numpy_solve")] == "REGRESSED"
    assert {v for (g, _), v in verdicts.items() if g != "harfe"} == {"ok"}
    harfe = next(r for r in rows if r.group == "harfe")
    assert harfe.change == pytest.approx(1.0)
    assert "+100%" in out and "FAIL: 5 pairs, 1 regressed" in out


def test_both_sides_3x_slower_passes(tmp_path, base, capsys):
    # a loaded machine: every case 3x slower, rflite and references together
    new = _write(tmp_path / "new.json", BASE, scale=lambda g, n: 3.0)
    code, out = _run(capsys, new, base)
    assert code == 0, out
    rows, _ = gate.compare(gate.load_times(base), gate.load_times(new), 0.5)
    assert all(r.change == pytest.approx(0.0) for r in rows)


def test_uneven_load_within_margin_passes_and_beyond_fails(tmp_path, base, capsys):
    within = _write(tmp_path / "a.json", BASE, scale=lambda g, n: 1.4 if "rflite" in n else 1.0)
    assert _run(capsys, within, base)[0] == 0
    beyond = _write(tmp_path / "b.json", BASE, scale=lambda g, n: 1.6 if "rflite" in n else 1.0)
    assert _run(capsys, beyond, base)[0] == 1


def test_missing_cases_are_reported_and_fail_unless_allowed(tmp_path, base, capsys):
    groups = {g: dict(c) for g, c in BASE.items()}
    del groups["harfe"]  # e.g. a -k subset, or a benchmark renamed
    del groups["features"]["bench_numpy_sin_floor"]
    groups["new-group"] = {"bench_new_rflite": 1.0, "bench_new_numpy": 2.0}
    new = _write(tmp_path / "new.json", groups)
    code, out = _run(capsys, new, base)
    assert code == 1
    rows, _ = gate.compare(gate.load_times(base), gate.load_times(new), 0.5)
    missing = {(r.group, r.rflite, r.reference) for r in rows if r.verdict == "MISSING"}
    assert missing == {("harfe", "bench_rflite", "bench_numpy_solve"),
                       ("features", "bench_rflite[rflite]", "bench_numpy_sin_floor"),
                       ("features", "bench_rflite[rflite-1thread]", "bench_numpy_sin_floor")}
    assert [r.verdict for r in rows if r.group == "new-group"] == ["new"]
    assert "MISSING" in out and "3 missing" in out
    code, out = _run(capsys, new, base, "--allow-missing")
    assert code == 0 and "3 missing (allowed)" in out


def test_statistic_is_selectable(tmp_path, base, capsys):
    # rflite's median doubles (a noisy run) but its minimum is unchanged:
    # the default (min) passes, --stat median fails.
    data = json.loads(base.read_text())
    for b in data["benchmarks"]:
        if b["group"] == "harfe" and "rflite" in b["name"]:
            b["stats"]["median"] *= 2
    new = tmp_path / "new.json"
    new.write_text(json.dumps(data))
    assert _run(capsys, new, base)[0] == 0
    assert _run(capsys, new, base, "--stat", "median")[0] == 1


def test_bad_input_is_exit_2(tmp_path, base, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"not": "a benchmark file"}))
    assert gate.main([str(bad), "--baseline", str(base)]) == 2
    assert "not a pytest-benchmark JSON" in capsys.readouterr().err
    zero = _write(tmp_path / "zero.json", {"g": {"bench_rflite": 0.0, "bench_numpy": 1.0}})
    assert gate.main([str(zero), "--baseline", str(base)]) == 2
    with pytest.raises(ValueError, match="margin must be"):
        gate.compare({}, {}, -0.1)


def test_references_get_one_blas_thread_rflite_cases_keep_theirs(monkeypatch):
    threadpoolctl = pytest.importorskip("threadpoolctl")
    monkeypatch.syspath_prepend(str(BENCH))
    conftest = _load("rflite_bench_conftest", BENCH / "conftest.py")

    def blas_threads():
        return [m["num_threads"] for m in threadpoolctl.threadpool_info()
                if m["user_api"] == "blas"]

    if not blas_threads():
        pytest.skip("no BLAS library seen by threadpoolctl")
    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        outside = blas_threads()
        if set(outside) == {1}:
            pytest.skip("BLAS has one thread here: the limit cannot be observed")
        with conftest.blas_limit("bench_numpy_dense[d100-q2]", ["benchmark", "problem"]):
            assert set(blas_threads()) == {1}
        for name, fixtures in [("bench_rflite[d100-q2-rflite]", ["benchmark"]),
                               ("test_bpdn_summary", ["request", "problem"])]:
            with conftest.blas_limit(name, fixtures):
                assert blas_threads() == outside


def _write_paired(path, ratios):
    """A JSON with paired runs only: ``{case: median per-round ratio}``."""
    benchmarks = [{"group": f"paired:{case}", "name": f"bench_paired_rflite_vs_reference[{case}]",
                   "stats": {"min": 5.0, "median": 5.0, "mean": 5.0, "rounds": 1},
                   "extra_info": {"paired_ratio": r, "rounds": 15}}
                  for case, r in ratios.items()]
    path.write_text(json.dumps({"machine_info": {}, "benchmarks": benchmarks}))
    return path


def test_paired_sessions_are_gated_on_their_median_ratio(tmp_path, capsys):
    base = _write_paired(tmp_path / "b.json", {"harfe": 0.4, "features": 0.1})
    # the run's own (total) time is irrelevant; only the stored ratio counts
    same = _write_paired(tmp_path / "s.json", {"harfe": 0.45, "features": 0.12})
    code, out = _run(capsys, same, base)
    assert code == 0 and "reference, same rounds" in out and "unpaired" not in out
    slow = _write_paired(tmp_path / "x.json", {"harfe": 0.8, "features": 0.1})
    code, out = _run(capsys, slow, base)
    assert code == 1
    line = next(ln for ln in out.splitlines() if "[harfe]" in ln)
    assert "REGRESSED" in line and "+100%" in line


def test_paired_only_ignores_the_unpaired_timings(tmp_path, capsys):
    mixed = json.loads(_write(tmp_path / "m.json", BASE).read_text())
    paired = json.loads(_write_paired(tmp_path / "p.json", {"harfe": 0.4}).read_text())
    mixed["benchmarks"] += paired["benchmarks"]
    (tmp_path / "base.json").write_text(json.dumps(mixed))
    slow = json.loads(_write(tmp_path / "n.json", BASE,
                             scale=lambda g, n: 3.0 if "rflite" in n else 1.0).read_text())
    slow["benchmarks"] += paired["benchmarks"]
    (tmp_path / "new.json").write_text(json.dumps(slow))
    code, _ = _run(capsys, tmp_path / "new.json", tmp_path / "base.json")
    assert code == 1  # the min-time pairs regressed
    code, out = _run(capsys, tmp_path / "new.json", tmp_path / "base.json", "--paired-only")
    assert code == 0 and "1 pairs" in out


def test_paired_rounds_alternate_and_take_the_median():
    sys.path.insert(0, str(BENCH))
    try:
        import bench_paired
    finally:
        sys.path.remove(str(BENCH))
    calls = []
    info = bench_paired.paired_rounds(lambda: calls.append("r"), lambda: calls.append("n"), 4)
    assert calls == ["r", "n", "n", "r", "r", "n", "n", "r"]
    assert info["rounds"] == 4 and len(info["ratios"]) == 4
    assert info["paired_ratio"] == statistics.median(info["ratios"])
