"""The command line and the experiment registry."""

import ast
import inspect
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from rflite import cli
from rflite.experiments import Context, atomic_path, get, registry, run_experiment

ROOT = Path(__file__).resolve().parents[1]


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


@pytest.mark.slow(reason="experiment in its quick form")
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


@pytest.mark.slow(reason="paper showcase in its quick form")
def test_showcase_quick_runs_every_method(tmp_path, capsys):
    rows = run_experiment("showcase", Context(quick=True, out=tmp_path))
    methods = {r["method"] for r in rows}
    assert methods == {"RF ridge (baseline)", "HARFE", "SHRIMP", "SRFE", "ARFF", "GFC"}
    assert {r["problem"] for r in rows} == {"friedman1-d20", "airfoil+36 noise"}
    for name in ("showcase_comparison.png", "showcase_importance.png"):
        assert (tmp_path / name).stat().st_size > 1000
    out = capsys.readouterr().out
    assert "[12/12]" in out and "test MSE" in out


def test_no_arguments_runs_the_showcase(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # the default --out, ./figures, is created up front
    called = []
    monkeypatch.setattr(cli, "run_experiment", lambda name, ctx: called.append((name, ctx)))
    assert cli.main([]) == 0
    assert called[0][0] == "showcase" and not called[0][1].quick


# ------------------------------------------------------------------ bad arguments

@pytest.mark.parametrize("args, message", [
    (["--jobs", "0"], "--jobs must be >= 1, got 0"),
    (["--jobs", "-3"], "--jobs must be >= 1, got -3"),
    (["--jobs", "two"], "--jobs must be an integer"),
    (["--seed", "-1"], "--seed must be >= 0, got -1"),
])
def test_bad_numbers_exit_2_with_one_line(args, message, monkeypatch, capsys):
    called = []
    monkeypatch.setattr(cli, "run_experiment", lambda name, ctx: called.append(name))
    with pytest.raises(SystemExit) as exc:
        cli.main(["run", "theory-coherence", *args])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err
    assert not called


def test_out_naming_a_file_or_a_path_under_a_file_exits_2(tmp_path, monkeypatch, capsys):
    called = []
    monkeypatch.setattr(cli, "run_experiment", lambda name, ctx: called.append(name))
    f = tmp_path / "afile"
    f.write_text("x")
    for out, what in [(f, "is a file"), (f / "sub" / "dir", "which is a file")]:
        assert cli.main(["run", "theory-coherence", "--quick", "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert what in err and "--out" in err and err.count("\n") == 1, err
    assert not called and f.read_text() == "x"


@pytest.mark.slow(reason="runs in a subprocess")
def test_bad_arguments_in_a_subprocess_give_no_traceback(tmp_path):
    (tmp_path / "afile").write_text("x")
    for args in (["--jobs", "0"], ["--seed", "-1"], ["--out", str(tmp_path / "afile")]):
        proc = subprocess.run([sys.executable, "-m", "rflite", "run", "theory-rip", *args],
                              capture_output=True, text=True, cwd=ROOT)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


@pytest.fixture
def shared_tmp():
    """A temporary folder other users may enter (pytest's tmp_path is 0700)."""
    d = Path(tempfile.mkdtemp(prefix="rflite-cli-"))
    d.chmod(0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def _unwritable_folder(shared_tmp: Path) -> tuple[list[str], Path]:
    """A command prefix and a folder the command cannot write into.

    A normal user gets a chmod 555 folder.  Root ignores file modes, so root
    runs the command as uid 65534 through setpriv when that user can import
    rflite's dependencies, and otherwise (root's Python is often unreadable to
    others) points at ``/proc``, where nobody can create files.
    """
    ro = shared_tmp / "ro"
    ro.mkdir(mode=0o755)
    if os.geteuid() != 0:
        ro.chmod(0o555)
        return [], ro
    setpriv = shutil.which("setpriv")
    if setpriv is not None:
        prefix = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
        probe = [*prefix, sys.executable, "-c", "import numpy, numba, scipy, matplotlib"]
        if subprocess.run(probe, capture_output=True, cwd=ROOT).returncode == 0:
            return prefix, ro
    try:
        tempfile.TemporaryFile(dir="/proc").close()
    except OSError:
        return [], Path("/proc")
    pytest.skip("root, no usable setpriv and /proc is writable: no unwritable folder here")


@pytest.mark.slow(reason="runs in a subprocess")
def test_read_only_out_is_refused_before_computing(shared_tmp):
    """A read-only --out is refused up front, not found only when the figure is saved."""
    prefix, ro = _unwritable_folder(shared_tmp)
    proc = subprocess.run([*prefix, sys.executable, "-m", "rflite", "run", "theory-coherence",
                           "--quick", "--out", str(ro)], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "is not writable" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert "==" not in proc.stdout  # no experiment was started


def test_experiment_that_ignores_jobs_says_so(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(cli, "run_experiment", lambda name, ctx: None)
    assert cli.main(["run", "showcase", "--jobs", "2", "--out", str(tmp_path)]) == 0
    assert "--jobs 2 is ignored" in capsys.readouterr().err
    assert cli.main(["run", "theory-coherence", "--jobs", "2", "--out", str(tmp_path)]) == 0
    assert "ignored" not in capsys.readouterr().err
    assert cli.main(["list"]) == 0
    assert "ignores --jobs" in capsys.readouterr().out


def _reads_ctx_jobs(module, func, seen=None) -> bool:
    """Whether ``func`` reads ``ctx.jobs``, itself or through a function of its module it passes ctx to."""
    seen = set() if seen is None else seen
    if func.__name__ in seen:
        return False
    seen.add(func.__name__)
    tree = ast.parse(inspect.getsource(func))
    for node in ast.walk(tree):
        # Context.map_resumable runs its tasks on ctx.jobs
        if isinstance(node, ast.Attribute) and node.attr in ("jobs", "map_resumable"):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            callee = getattr(module, node.func.id, None)
            passes_ctx = any(isinstance(a, ast.Name) and a.id == "ctx"
                             for a in [*node.args, *(k.value for k in node.keywords)])
            if passes_ctx and inspect.isfunction(callee) and callee.__module__ == module.__name__:
                if _reads_ctx_jobs(module, callee, seen):
                    return True
    return False


def test_uses_jobs_flag_matches_the_source():
    """The registry's ``uses_jobs`` agrees with whether the experiment reads ``ctx.jobs``."""
    for exp in registry().values():
        module = sys.modules[exp.func.__module__]
        assert exp.uses_jobs == _reads_ctx_jobs(module, exp.func), exp.name


# ----------------------------------------------------------------- atomic outputs

def test_atomic_path_keeps_the_old_file_when_interrupted(tmp_path):
    target = tmp_path / "fig.png"
    target.write_bytes(b"old")
    with pytest.raises(KeyboardInterrupt):
        with atomic_path(target) as tmp:
            assert tmp.parent == tmp_path and tmp.suffix == ".png"
            tmp.write_bytes(b"half")
            raise KeyboardInterrupt
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fig.png"]
    with atomic_path(target) as tmp:
        tmp.write_bytes(b"new")
    assert target.read_bytes() == b"new"
    fresh = tmp_path / "fresh.txt"
    with atomic_path(fresh) as tmp:
        tmp.write_text("x")
    mask = os.umask(0)
    os.umask(mask)
    assert fresh.stat().st_mode & 0o777 == 0o666 & ~mask  # as open() would make it
    fresh.unlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fig.png"]


def test_interrupted_figure_save_leaves_no_partial_png(tmp_path, monkeypatch):
    """A signal while a figure is saved leaves no truncated PNG under its name."""
    from matplotlib.backends import backend_agg

    original = backend_agg.FigureCanvasAgg._print_pil

    def interrupted(self, filename_or_obj, *args, **kwargs):
        if not isinstance(filename_or_obj, (str, os.PathLike)):  # an in-memory dry run
            return original(self, filename_or_obj, *args, **kwargs)
        with open(filename_or_obj, "wb") as f:
            f.write(b"\x89PNG\r\n")  # the first bytes, then the signal arrives
        raise KeyboardInterrupt

    monkeypatch.setattr(backend_agg.FigureCanvasAgg, "_print_pil", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_experiment("theory-coherence", Context(quick=True, out=tmp_path))
    assert list(tmp_path.iterdir()) == []


def test_experiments_save_figures_atomically():
    """No experiment writes a figure straight to its final name."""
    import re

    folder = ROOT / "rflite" / "experiments"
    bare = []
    for path in sorted(folder.glob("*.py")):
        if path.name == "__init__.py":
            continue
        for lineno, line in enumerate(path.read_text().splitlines(), 1):
            m = re.search(r"\bfig\.savefig\((\w+)", line)
            if m and m.group(1) != "tmp":
                bare.append(f"{path.name}:{lineno}: {line.strip()}")
    assert not bare, "use ctx.savefig(fig, name) or atomic_path(path):\n" + "\n".join(bare)


def test_defaults_real_table_marks_misses(monkeypatch, tmp_path, capsys):
    """The defaults' acceptance table on one small problem and two estimators."""
    pytest.importorskip("sklearn")
    from rflite.datasets import make_friedman1, target_friedman1
    from rflite.experiments import defaults

    X, y = make_friedman1(120, d=5, noise=1.0, rng=0)
    Xt, _ = make_friedman1(200, d=5, rng=1)
    monkeypatch.setattr(defaults, "_problems",
                        lambda quick, seed: [("tiny", X, y, Xt, target_friedman1(Xt))])
    monkeypatch.setattr(defaults, "ESTIMATORS", [("rflite.ridge", "RandomFeatureRidge"),
                                                 ("rflite.nowhere", "Missing")])
    rows = run_experiment("defaults-real", Context(quick=True, out=tmp_path))
    ok = rows[0]
    assert ok["estimator"] == "RandomFeatureRidge" and ok["test_mse"] > 0
    assert ok["ok"] == (ok["test_mse"] <= 1.1 * ok["RidgeCV"] and ok["test_mse"] <= ok["mean"])
    assert "not available" in rows[1]["error"]
    out = capsys.readouterr().out
    assert "| RandomFeatureRidge |" in out and "| Missing | n/a |" in out
    assert (tmp_path / "defaults_real.json").exists()
