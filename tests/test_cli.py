"""The command line and the experiment registry."""

import subprocess
import sys

import pytest

from rflite import cli
from rflite.experiments import Context, get, registry, run_experiment


def test_list_shows_every_experiment(capsys):
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    for name in registry():
        assert name in out


def test_unknown_experiment_is_an_error(capsys):
    assert cli.main(["run", "no-such-thing"]) == 2
    assert "unknown experiment" in capsys.readouterr().err
    with pytest.raises(ValueError, match="unknown experiment"):
        get("no-such-thing")


def test_every_registered_experiment_has_a_description():
    for exp in registry().values():
        assert exp.description and exp.runtime


def test_rf_ridge_quick_run_writes_figure(tmp_path, capsys):
    result = run_experiment("rf-ridge-friedman", Context(quick=True, out=tmp_path))
    assert (tmp_path / "rf_ridge_friedman.png").stat().st_size > 1000
    # the additive structure: sparse weights beat dense ones on this target
    assert result[2]["test_mse"] < result[20]["test_mse"]
    assert "test MSE" in capsys.readouterr().out


def test_module_entry_point_runs():
    out = subprocess.run([sys.executable, "-m", "rflite", "list"], capture_output=True,
                         text=True, check=True).stdout
    assert "rf-ridge-friedman" in out


def test_showcase_quick_runs_every_method(tmp_path, capsys):
    rows = run_experiment("showcase", Context(quick=True, out=tmp_path))
    methods = {r["method"] for r in rows}
    assert methods == {"RF ridge (baseline)", "HARFE", "SHRIMP", "SRFE", "ARFF", "GFC"}
    assert {r["problem"] for r in rows} == {"friedman1-d20", "airfoil+36 noise"}
    for name in ("showcase_comparison.png", "showcase_importance.png"):
        assert (tmp_path / name).stat().st_size > 1000
    out = capsys.readouterr().out
    assert "[12/12]" in out and "test MSE" in out


def test_no_arguments_runs_the_showcase(monkeypatch):
    called = []
    monkeypatch.setattr(cli, "run_experiment", lambda name, ctx: called.append((name, ctx)))
    assert cli.main([]) == 0
    assert called[0][0] == "showcase" and not called[0][1].quick
