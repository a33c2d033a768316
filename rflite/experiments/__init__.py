"""Registry of reproducible experiments run by ``python -m rflite run NAME``.

Every module in this package is imported on first use; each experiment in it
is a function ``run(ctx) -> dict`` registered with
:func:`register`.  It prints its numbers beside the published ones as it goes
and may write figures to ``ctx.out``.  ``ctx.quick`` asks for a reduced version
(fewer repetitions, smaller sizes) that still exercises every code path; the
tests run every experiment in quick mode.

Every experiment also writes the table it prints as a machine-readable
results file, ``<results>/<name>.json`` (``ctx.results``, by default
``ctx.out``), through :func:`write_results`: a dict with the keys
``experiment``, ``command`` (the exact command line that produced it, with
``--quick`` for the quick form), ``columns``, ``rows`` and, where the table
stands beside a paper's numbers, ``published`` (where those come from).  The
documentation renders these files; nothing in them is typed by hand.

Outputs are written atomically: every file an experiment writes goes through
:func:`atomic_path` (figures through :meth:`Context.savefig`), which writes to a
hidden temporary name in the same folder and renames it onto the final name
only when the write completed, so an interrupted run (Ctrl-C, SIGTERM, a full
disk) never leaves a truncated figure under its real name.

An experiment that fans its work out with ``ctx.jobs`` is registered with
``uses_jobs=True`` (the default); one that always runs in a single process
says ``uses_jobs=False``, and the command line then tells the user that
``--jobs`` is ignored.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import math
import os
import pkgutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

__all__ = [
    "Experiment", "Context", "atomic_path", "check_out_dir", "register", "registry", "get",
    "run_experiment", "write_results", "command_line",
]

_REGISTRY: dict[str, Experiment] = {}


@dataclass(frozen=True)
class Experiment:
    """A registered experiment: name, one-line description, run time, whether it uses ``--jobs``."""

    name: str
    description: str
    runtime: str
    func: Callable
    uses_jobs: bool = True


@dataclass
class Context:
    """What an experiment is asked to do."""

    quick: bool = False
    out: Path = field(default_factory=lambda: Path("figures"))
    jobs: int | None = None
    seed: int = 0
    #: Dask scheduler for experiments on Dask arrays (``scale``): an address
    #: such as ``"tcp://host:8786"``, ``"synchronous"``, or None (a LocalCluster).
    scheduler: str | None = None
    #: Folder for the results files (:func:`write_results`); None: ``out``.
    results: Path | None = None

    def log(self, msg: str) -> None:
        """Progress and result lines go to standard output, flushed at once."""
        print(msg, flush=True)

    def partial_path(self, name: str) -> Path:
        """The file where experiment ``name`` keeps finished tasks of an unfinished run.

        Hidden, beside the results files, and named after the mode and the
        seed, so that a quick run never resumes a full one.
        """
        folder = Path(self.results if self.results is not None else self.out)
        mode = "quick" if self.quick else "full"
        return folder / f".{name}.{mode}.seed{self.seed}.partial.json"

    def map_resumable(self, name: str, func, tasks, keys) -> list:
        """:func:`rflite._core.parallel.map_tasks` that survives an interrupted run.

        Each finished task's JSON-serialisable result is saved under its
        ``keys`` entry in :meth:`partial_path` (atomically, as it arrives);
        a later run of the same experiment, mode and seed runs only the
        tasks not saved yet.  :meth:`finish_resumable` removes the file once
        the experiment has written its results.
        """
        from rflite._core.parallel import map_tasks

        path = self.partial_path(name)
        done = json.loads(path.read_text()) if path.exists() else {}
        keys = [str(k) for k in keys]
        todo = [i for i, k in enumerate(keys) if k not in done]
        if len(todo) < len(keys):
            self.log(f"  resuming: {len(keys) - len(todo)} of {len(keys)} tasks from {path}")

        def save(j, result):
            done[keys[todo[j]]] = result
            path.parent.mkdir(parents=True, exist_ok=True)
            with atomic_path(path) as tmp:
                tmp.write_text(json.dumps(done))

        map_tasks(func, [tasks[i] for i in todo], executor=self.jobs, on_result=save)
        return [done[k] for k in keys]

    def finish_resumable(self, name: str) -> None:
        """Remove the saved tasks of experiment ``name`` (its results are written)."""
        self.partial_path(name).unlink(missing_ok=True)

    def savefig(self, fig, name, **kwargs) -> Path:
        """Save a matplotlib figure as ``name`` (relative to ``ctx.out``) atomically.

        ``fig.savefig`` writes to a temporary file beside the target that is
        renamed onto it only when complete (:func:`atomic_path`).  The format
        is taken from the suffix of ``name``; ``kwargs`` go to ``fig.savefig``.
        Returns the final path.
        """
        path = Path(self.out) / name
        # the temporary name ends in the same suffix, but say it outright
        kwargs.setdefault("format", path.suffix.lstrip(".") or "png")
        with atomic_path(path) as tmp:
            fig.savefig(tmp, **kwargs)
        return path


@contextlib.contextmanager
def atomic_path(path):
    """Yield a temporary path beside ``path``; rename it onto ``path`` if the block succeeds.

    The temporary file is ``.<name>.<random>.part<suffix>`` in the same folder
    (same file system, so :func:`os.replace` is atomic, and the same suffix,
    so writers that infer the format from the name still work).  If the block
    raises (including ``KeyboardInterrupt`` and ``SystemExit`` from a signal)
    the temporary file is removed and ``path`` is left as it was: never empty
    or truncated.

    Example
    -------
    >>> with atomic_path(ctx.out / "table.json") as tmp:   # doctest: +SKIP
    ...     tmp.write_text(json.dumps(rows))
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=f".part{path.suffix}")
    os.close(fd)
    tmp = Path(tmp)
    try:
        yield tmp
        # mkstemp made the file 0600; give it the mode a plain open() would have
        # (the target's own, or 0666 less the umask) before it takes the name.
        try:
            mode = path.stat().st_mode & 0o7777
        except OSError:
            mask = os.umask(0)
            os.umask(mask)
            mode = 0o666 & ~mask
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def command_line(ctx, name: str) -> str:
    """The command that runs experiment ``name`` as ``ctx`` asks (quick form, seed)."""
    cmd = f"python -m rflite run {name}"
    if ctx.quick:
        cmd += " --quick"
    if ctx.seed:
        cmd += f" --seed {ctx.seed}"
    return cmd


#: Significant digits kept for floats in results files (what the tables print).
RESULT_DIGITS = 4


def _cell(value):
    """One table cell as plain JSON: numbers rounded, NaN as null, infinities as text."""
    if hasattr(value, "item") and getattr(value, "ndim", 0) == 0:  # NumPy scalar
        value = value.item()
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return float(f"{value:.{RESULT_DIGITS}g}")
    if isinstance(value, (list, tuple)) or hasattr(value, "tolist"):
        items = value.tolist() if hasattr(value, "tolist") else value
        return ", ".join(str(_cell(v)) for v in items)
    return str(value)


def write_results(ctx, name: str, columns, rows, published=None) -> Path:
    """Write the table an experiment printed as ``<ctx.results or ctx.out>/<name>.json``.

    ``name`` is the experiment's registered name; the file is a dict with
    ``experiment``, ``command`` (:func:`command_line`: the exact command,
    ``--quick`` included for the quick form), ``columns`` (names), ``rows``
    (lists of cells, one per column: numbers rounded to
    :data:`RESULT_DIGITS` significant digits, NaN as null) and, when given,
    ``published`` (a note on where the papers' numbers in the table come
    from).  Written atomically (:func:`atomic_path`).  Returns the path.
    """
    columns = [str(c) for c in columns]
    table = []
    for row in rows:
        row = list(row)
        if len(row) != len(columns):
            raise ValueError(f"{name}: a row has {len(row)} cells for {len(columns)} columns")
        table.append([_cell(v) for v in row])
    doc = {"experiment": name, "command": command_line(ctx, name),
           "columns": columns, "rows": table}
    if published:
        doc["published"] = published
    folder = check_out_dir(ctx.results if ctx.results is not None else ctx.out)
    path = folder / f"{name}.json"
    with atomic_path(path) as tmp:
        tmp.write_text(_dump(doc))
    return path


def _dump(doc) -> str:
    """JSON with one line per key and per table row (diffs show the cells that moved)."""
    lines = []
    for key, value in doc.items():
        if key == "rows":
            body = ",\n".join(f"  {json.dumps(row)}" for row in value)
            lines.append(f' "rows": [\n{body}\n ]' if value else ' "rows": []')
        else:
            lines.append(f" {json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def check_out_dir(out) -> Path:
    """Make sure ``out`` is a folder figures can be written to, before any computation.

    Creates it (with parents) if missing, then creates and removes a file in
    it.  Raises ``ValueError`` naming ``--out`` and the path when it, or a
    component above it, is a file, or when it cannot be created or written.
    """
    out = Path(out)
    try:
        for p in (out, *out.parents):
            if p.exists() and not p.is_dir():
                what = "is a file" if p == out else f"is under {str(p)!r}, which is a file"
                raise ValueError(f"--out {str(out)!r} {what}, not a folder")
        out.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=out).close()
    except OSError as exc:
        raise ValueError(f"--out {str(out)!r} is not writable: {exc.strerror or exc}") from None
    return out


def register(name: str, description: str, runtime: str, *, uses_jobs: bool = True):
    """Decorator adding ``func(ctx)`` to the registry under ``name``.

    ``uses_jobs=False`` declares that the experiment runs in one process
    whatever ``ctx.jobs`` is (the command line then says that ``--jobs`` is
    ignored).  ``tests/test_cli.py`` checks the flag against the source.
    """

    def deco(func):
        if name in _REGISTRY:
            raise ValueError(f"experiment {name!r} is registered twice")
        _REGISTRY[name] = Experiment(name, description, runtime, func, uses_jobs)
        return func

    return deco


def registry() -> dict[str, Experiment]:
    """All experiments, by name (importing every module of this package)."""
    for mod in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{mod.name}")
    return dict(sorted(_REGISTRY.items()))


def get(name: str) -> Experiment:
    """The experiment called ``name``; ``ValueError`` listing the names otherwise."""
    reg = registry()
    if name not in reg:
        raise ValueError(f"unknown experiment {name!r}; known: {', '.join(reg)}")
    return reg[name]


def run_experiment(name: str, ctx: Context) -> dict:
    """Run one experiment and report its wall time."""
    exp = get(name)
    check_out_dir(ctx.out)
    if ctx.results is not None:
        check_out_dir(ctx.results)
    ctx.log(f"== {exp.name}: {exp.description}{' (quick)' if ctx.quick else ''}")
    t0 = time.perf_counter()
    result = exp.func(ctx)
    ctx.log(f"== {exp.name} done in {time.perf_counter() - t0:.1f} s")
    return result
