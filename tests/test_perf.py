"""The perf-scaling experiment (rflite/experiments/perf.py) in quick mode, and its SHRIMP flop model."""

import numpy as np
import pytest

from rflite.experiments import Context, get, run_experiment
from rflite.experiments.perf import shrimp_flops


@pytest.mark.slow(reason="experiment in its quick form")
def test_perf_scaling_quick_runs_every_method(tmp_path, capsys):
    assert get("perf-scaling").uses_jobs is False
    res = run_experiment("perf-scaling", Context(quick=True, out=tmp_path))
    assert (tmp_path / "perf_scaling.png").stat().st_size > 1000
    out = capsys.readouterr().out
    for name in ("HARFE per iteration", "SRFE per product", "SHRIMP per path"):
        assert name in out
        assert all(np.isfinite(res["slopes"][name])), name
    for table in (res["by_n"], res["by_m"]):
        for row in table.values():
            assert row["harfe-iters"] >= 1 and row["srfe-products"] >= 1
            assert row["srfe-stop"] in ("homotopy", "polished", "optimal", "root_found")
            assert row["harfe-iter"] > 0 and row["srfe-product"] > 0


def test_shrimp_flop_model_orders():
    """Slope 1 in N at m << N; in m below 2 while the O(mN/p) refinement products
    still count, steeper (towards 3) as m approaches N."""
    n = np.array([20_000, 40_000, 80_000])
    slope_n = np.polyfit(np.log(n), np.log([shrimp_flops(100, k) for k in n]), 1)[0]
    assert 0.95 < slope_n < 1.1
    m_small = np.array([50, 100, 200])
    slope_small = np.polyfit(np.log(m_small),
                             np.log([shrimp_flops(k, 100_000) for k in m_small]), 1)[0]
    m_big = np.array([2000, 4000, 8000])
    slope_big = np.polyfit(np.log(m_big), np.log([shrimp_flops(k, 10_000) for k in m_big]), 1)[0]
    assert 1.5 < slope_small < 2.05
    assert slope_big > slope_small + 0.2
    # the initial Gram matrix alone is m^2 N: the model is never below it
    assert shrimp_flops(300, 5000) >= 300**2 * 5000
