"""Command line: ``python -m rflite [list | run NAME [--quick] [--out DIR] [--jobs N]]``.

With no arguments the showcase experiment runs with its built-in defaults.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rflite.experiments import Context, registry, run_experiment

#: What ``python -m rflite`` runs with no arguments.
SHOWCASE = "showcase"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m rflite", description=__doc__)
    sub = p.add_subparsers(dest="command")
    sub.add_parser("list", help="list the registered experiments")
    run = sub.add_parser("run", help="run one experiment, or 'all'")
    run.add_argument("name", help="experiment name (see 'list') or 'all'")
    run.add_argument("--quick", action="store_true", help="reduced sizes and repetitions")
    run.add_argument("--out", type=Path, default=Path("figures"), help="folder for figures")
    run.add_argument("--jobs", type=int, default=None, help="parallel workers")
    run.add_argument("--seed", type=int, default=0, help="random seed")
    return p


def main(argv=None) -> int:
    """Entry point; returns the process exit code."""
    args = _parser().parse_args(argv)
    if args.command == "list":
        for exp in registry().values():
            print(f"{exp.name:24s} {exp.description}\n{'':24s} run time: {exp.runtime}")
        return 0
    if args.command is None:
        run_experiment(SHOWCASE, Context())
        return 0
    ctx = Context(quick=args.quick, out=args.out, jobs=args.jobs, seed=args.seed)
    reg = registry()
    if args.name != "all" and args.name not in reg:
        print(f"error: unknown experiment {args.name!r}; known: {', '.join(reg)}", file=sys.stderr)
        return 2
    for name in reg if args.name == "all" else [args.name]:
        run_experiment(name, ctx)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
