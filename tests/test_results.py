"""Results files: every experiment writes its table; the committed ones under results/ are current."""

import inspect
import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from rflite import cli
from rflite.experiments import Context, registry, run_experiment, write_results

ROOT = Path(__file__).resolve().parents[1]
KEYS = {"experiment", "command", "columns", "rows"}


def _check_results_file(path, name, quick):
    doc = json.loads(path.read_text())
    assert KEYS <= set(doc) <= KEYS | {"published"}, sorted(doc)
    assert doc["experiment"] == name
    assert doc["command"] == f"python -m rflite run {name}" + (" --quick" if quick else "")
    assert all(isinstance(c, str) for c in doc["columns"])
    for row in doc["rows"]:
        assert len(row) == len(doc["columns"])
        assert all(v is None or isinstance(v, (str, int, float, bool)) for v in row)
    if "published" in doc:
        assert isinstance(doc["published"], str) and doc["published"]
    return doc


def test_write_results_format(tmp_path):
    ctx = Context(quick=True, out=tmp_path / "figs", results=tmp_path / "res")
    path = write_results(ctx, "demo", ["name", "value", "list"],
                         [["a", np.float64(1.23456789), [1, 2]], ["b", float("nan"), ()]],
                         published="Table 1 of the paper")
    assert path == tmp_path / "res" / "demo.json"
    doc = _check_results_file(path, "demo", quick=True)
    assert doc["rows"] == [["a", 1.235, "1, 2"], ["b", None, ""]]
    assert doc["published"] == "Table 1 of the paper"
    assert not (tmp_path / "figs").exists() or not list((tmp_path / "figs").iterdir())
    # the full form names no --quick; a seed other than 0 is part of the command
    ctx = Context(out=tmp_path, seed=3)
    doc = json.loads(write_results(ctx, "demo", ["x"], [[1]]).read_text())
    assert doc["command"] == "python -m rflite run demo --seed 3" and "published" not in doc
    with pytest.raises(ValueError, match="2 cells for 1 columns"):
        write_results(ctx, "demo", ["x"], [[1, 2]])


def test_every_experiment_writes_its_results():
    """Each experiment's module passes the experiment's own name to the results writer."""
    for name, exp in registry().items():
        source = inspect.getsource(sys.modules[exp.func.__module__])
        assert "write_results" in source, exp.func.__module__
        assert source.count(f'"{name}"') >= 2, f"{name}: registered but never written"


def test_results_option_reaches_the_context(monkeypatch, tmp_path, capsys):
    seen = []
    monkeypatch.setattr(cli, "run_experiment", lambda name, ctx: seen.append(ctx))
    assert cli.main(["run", "showcase", "--quick", "--out", str(tmp_path / "f"),
                     "--results", str(tmp_path / "r")]) == 0
    assert seen[0].results == tmp_path / "r" and (tmp_path / "r").is_dir()
    (tmp_path / "file").write_text("x")
    assert cli.main(["run", "showcase", "--out", str(tmp_path / "f"),
                     "--results", str(tmp_path / "file")]) == 2
    assert "--results" in capsys.readouterr().err


def test_compare_is_registered():
    exp = registry()["compare"]
    assert exp.uses_jobs and "RidgeCV" in exp.description


def test_compare_smallest_form(monkeypatch, tmp_path, capsys):
    """compare on one tiny problem: every scikit-learn regressor and one rflite default."""
    pytest.importorskip("sklearn")
    from rflite.datasets import make_friedman1, target_friedman1
    from rflite.experiments import compare

    X, y = make_friedman1(80, d=5, noise=1.0, rng=0)
    Xt, _ = make_friedman1(100, d=5, rng=1)
    monkeypatch.setattr(compare, "_problems",
                        lambda ctx: [("tiny", X, y, Xt, target_friedman1(Xt))])
    monkeypatch.setattr(compare, "RFLITE", [("RandomFeatureRidge", "rflite.ridge",
                                             "RandomFeatureRidge", {"n_features": 100})])
    rows = run_experiment("compare", Context(quick=True, out=tmp_path))
    assert [r["method"] for r in rows] == ["RandomFeatureRidge", *compare.SKLEARN]
    assert all(r["test_mse"] > 0 and r["fit_seconds"] >= 0 for r in rows), rows
    doc = _check_results_file(tmp_path / "compare.json", "compare", quick=True)
    assert doc["columns"] == ["data set", "method", "test MSE", "fit s"]
    assert [r[1] for r in doc["rows"]] == [r["method"] for r in rows]
    assert "GaussianProcess" in capsys.readouterr().out


def test_compare_without_sklearn_runs_the_rflite_rows(monkeypatch, tmp_path, capsys):
    from rflite.datasets import make_friedman1, target_friedman1
    from rflite.experiments import compare

    X, y = make_friedman1(60, d=5, noise=1.0, rng=0)
    Xt, _ = make_friedman1(50, d=5, rng=1)
    monkeypatch.setattr(compare, "_problems",
                        lambda ctx: [("tiny", X, y, Xt, target_friedman1(Xt))])
    monkeypatch.setattr(compare, "RFLITE", [("RandomFeatureRidge", "rflite.ridge",
                                             "RandomFeatureRidge", {"n_features": 50})])
    monkeypatch.setitem(sys.modules, "sklearn", None)  # import sklearn now fails
    rows = run_experiment("compare", Context(quick=True, out=tmp_path))
    assert [r["method"] for r in rows] == ["RandomFeatureRidge"]
    assert "scikit-learn is not installed" in capsys.readouterr().out


def test_committed_quick_results_are_current():
    """results/quick holds one file per registered experiment, written by its quick form."""
    folder = ROOT / "results" / "quick"
    files = {p.stem: p for p in folder.glob("*.json")}
    assert set(files) == set(registry()), set(files) ^ set(registry())
    for name, path in files.items():
        _check_results_file(path, name, quick=True)


def test_committed_full_results_are_full_runs():
    """results/full holds files of registered experiments, each written by its full form."""
    names = set(registry())
    for path in (ROOT / "results" / "full").glob("*.json"):
        assert path.stem in names, path
        _check_results_file(path, path.stem, quick=False)


def test_results_folder_holds_only_results_files():
    """The documentation renders every JSON under results/: nothing else may live there."""
    for path in (ROOT / "results").rglob("*.json"):
        doc = json.loads(path.read_text())
        assert KEYS <= set(doc), path
        command = (r"python -m pytest benchmarks/bench_paired\.py .* && "
                   r"python benchmarks/results\.py \S+( \S+)?" if doc["experiment"] == "benchmarks"
                   else r"python -m rflite run [\w-]+( --quick)?( --seed \d+)?")
        assert re.fullmatch(command, doc["command"]), path


def _square_or_stop(x):
    if x == 3:
        raise KeyboardInterrupt  # the run is interrupted at the fourth task
    return [x * x, 0.5 * x]


def test_an_interrupted_run_resumes_from_its_saved_tasks(tmp_path):
    ctx = Context(out=tmp_path, results=tmp_path, quick=True)
    keys = [f"t{x}" for x in range(6)]
    with pytest.raises(KeyboardInterrupt):
        ctx.map_resumable("demo", _square_or_stop, list(range(6)), keys)
    saved = json.loads(ctx.partial_path("demo").read_text())
    assert saved == {f"t{x}": [x * x, 0.5 * x] for x in range(3)}
    # the rerun computes only the missing tasks (3 is now a valid input: 9 would
    # show that the saved ones were recomputed with another function)
    out = ctx.map_resumable("demo", lambda x: [x * x, 0.5 * x + (x < 3)], list(range(6)), keys)
    assert out == [[x * x, 0.5 * x] for x in range(6)]
    # a full run with the same name and seed does not see the quick one's tasks
    assert not Context(out=tmp_path, results=tmp_path).partial_path("demo").exists()
    ctx.finish_resumable("demo")
    assert not ctx.partial_path("demo").exists()
