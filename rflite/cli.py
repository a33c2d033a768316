"""Command line: ``python -m rflite [list | run NAME [--quick] [--out DIR] [--results DIR] [--jobs N] [--seed S] [--scheduler ADDRESS]]``.

With no arguments the showcase experiment runs with its built-in defaults.
Figures go to ``--out`` (default ``./figures``, an untracked output folder);
every experiment also writes its table as ``NAME.json`` to ``--results``
(default: the ``--out`` folder), see :func:`rflite.experiments.write_results`.

Exit codes: 0 done; 2 bad arguments (one line on standard error, before any
computation: ``--jobs`` below 1, a negative ``--seed``, an ``--out`` or
``--results`` that is a file, lies under a file or cannot be written); 130
after Ctrl-C (SIGINT) and 143 after SIGTERM, once worker processes are stopped
and no partial output is left (see :func:`rflite.experiments.atomic_path`).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path

from rflite.experiments import Context, check_out_dir, registry, run_experiment

#: What ``python -m rflite`` runs with no arguments.
SHOWCASE = "showcase"


class Terminated(KeyboardInterrupt):
    """Raised in the main thread by the SIGTERM handler of :func:`main`.

    A subclass of ``KeyboardInterrupt`` so that every clean-up path written
    for Ctrl-C (cancelling futures, stopping pool workers, removing temporary
    outputs) runs for SIGTERM too.
    """


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, no usage block: the argument and what is wrong
        self.exit(2, f"{self.prog}: error: {message}\n")


def _int_at_least(lo: int, name: str):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer, got {text!r}") from None
        if value < lo:
            raise argparse.ArgumentTypeError(f"{name} must be >= {lo}, got {value}")
        return value

    return parse


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m rflite", description=__doc__,
                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", parser_class=_Parser)
    sub.add_parser("list", help="list the registered experiments")
    run = sub.add_parser("run", help="run one experiment, or 'all'")
    run.add_argument("name", help="experiment name (see 'list') or 'all'")
    run.add_argument("--quick", action="store_true", help="reduced sizes and repetitions")
    run.add_argument("--out", type=Path, default=Path("figures"), help="folder for figures")
    run.add_argument("--results", type=Path, default=None, metavar="DIR",
                     help="folder for the results files NAME.json (default: the --out folder)")
    run.add_argument("--jobs", type=_int_at_least(1, "--jobs"), default=None,
                     help="worker processes, >= 1 (experiments that cannot use them say so)")
    run.add_argument("--seed", type=_int_at_least(0, "--seed"), default=0,
                     help="random seed, >= 0")
    run.add_argument("--scheduler", default=None, metavar="ADDRESS",
                     help="Dask scheduler for experiments on Dask arrays (scale): an address "
                          "such as tcp://host:8786, or 'synchronous'; default a LocalCluster")
    return p


def _on_sigterm(signum, frame):
    # Further SIGTERMs during the clean-up must not interrupt it half-way.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise Terminated(f"signal {signum}")


def main(argv=None) -> int:
    """Entry point; returns the process exit code.

    SIGTERM is turned into :class:`Terminated` (a ``KeyboardInterrupt``) for
    the duration of the call, when called from the main thread, so that a
    terminated run shuts its process pool down and removes partial outputs
    exactly as Ctrl-C does; the previous handler is restored afterwards.
    """
    args = _parser().parse_args(argv)
    if args.command == "list":
        for exp in registry().values():
            jobs = "" if exp.uses_jobs else "; ignores --jobs"
            print(f"{exp.name:24s} {exp.description}\n{'':24s} run time: {exp.runtime}{jobs}")
        return 0
    reg = registry()
    if args.command is None:
        names, ctx = [SHOWCASE], Context()
    else:
        if args.name != "all" and args.name not in reg:
            print(f"error: unknown experiment {args.name!r}; known: {', '.join(reg)}",
                  file=sys.stderr)
            return 2
        names = list(reg) if args.name == "all" else [args.name]
        ctx = Context(quick=args.quick, out=args.out, jobs=args.jobs, seed=args.seed,
                      scheduler=args.scheduler, results=args.results)
    try:  # before any computation: a bad --out must not cost the run
        check_out_dir(ctx.out)
    except ValueError as exc:
        print(f"python -m rflite: error: {exc}", file=sys.stderr)
        return 2
    if ctx.results is not None:
        try:
            check_out_dir(ctx.results)
        except ValueError as exc:
            msg = str(exc).replace("--out", "--results", 1)
            print(f"python -m rflite: error: {msg}", file=sys.stderr)
            return 2
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _on_sigterm) if main_thread else None
    try:
        for name in names:
            if ctx.jobs is not None and not reg[name].uses_jobs:
                print(f"note: {name} runs in one process; --jobs {ctx.jobs} is ignored",
                      file=sys.stderr, flush=True)
            run_experiment(name, ctx)
    except Terminated:
        print("python -m rflite: terminated (SIGTERM); partial outputs removed", file=sys.stderr)
        return 128 + signal.SIGTERM
    except KeyboardInterrupt:
        print("python -m rflite: interrupted; partial outputs removed", file=sys.stderr)
        return 128 + signal.SIGINT
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
