"""Registry of reproducible experiments run by ``python -m rflite run NAME``.

Every module in this package is imported on first use; each experiment in it
is a function ``run(ctx) -> dict`` registered with
:func:`register`.  It prints its numbers beside the published ones as it goes
and may write figures to ``ctx.out``.  ``ctx.quick`` asks for a reduced version
(fewer repetitions, smaller sizes) that still exercises every code path; the
tests run every experiment in quick mode.
"""

from __future__ import annotations

import importlib
import pkgutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

__all__ = ["Experiment", "Context", "register", "registry", "get", "run_experiment"]

_REGISTRY: dict[str, Experiment] = {}


@dataclass(frozen=True)
class Experiment:
    """A registered experiment: its name, one-line description and run time."""

    name: str
    description: str
    runtime: str
    func: Callable


@dataclass
class Context:
    """What an experiment is asked to do."""

    quick: bool = False
    out: Path = field(default_factory=lambda: Path("figures"))
    jobs: int | None = None
    seed: int = 0

    def log(self, msg: str) -> None:
        """Progress and result lines go to standard output, flushed at once."""
        print(msg, flush=True)


def register(name: str, description: str, runtime: str):
    """Decorator adding ``func(ctx)`` to the registry under ``name``."""

    def deco(func):
        if name in _REGISTRY:
            raise ValueError(f"experiment {name!r} is registered twice")
        _REGISTRY[name] = Experiment(name, description, runtime, func)
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
    ctx.out.mkdir(parents=True, exist_ok=True)
    ctx.log(f"== {exp.name}: {exp.description}{' (quick)' if ctx.quick else ''}")
    t0 = time.perf_counter()
    result = exp.func(ctx)
    ctx.log(f"== {exp.name} done in {time.perf_counter() - t0:.1f} s")
    return result
