"""Benchmark runs as the results file the docs and the README's Speed table render.

``python benchmarks/results.py PAIRED.json [PEERS.json] [--out OUT.json]``
reads pytest-benchmark JSON files and writes ``OUT.json`` (default
``results/benchmarks.json``) in the results format of
``rflite.experiments.write_results``:

- one row per case of ``benchmarks/bench_paired.py`` (``PAIRED.json``, from
  ``python -m pytest benchmarks/bench_paired.py --benchmark-enable
  --benchmark-json=PAIRED.json``): rflite's, the reference's and the floor's
  fastest call, the median of the per-round ratios rflite / reference (each
  round times them back to back, so machine load cancels), the speed-up and
  the median per-round ratio rflite / floor;
- one row per entry of :data:`PEERS` found in ``PEERS.json``, a run of the
  other benchmark files' cases that :data:`PEERS` names (the command is
  ``python benchmarks/results.py --peer-command``): rflite against a peer
  library or the papers' approach, with the ratio of the fastest rounds of
  two separate measurements (not paired: load between them moves it).

A *floor* is the cost of one operation that no implementation of the
maths avoids (writing the output once, one pass over the data, the one
factorisation every exact solve makes); each benchmark file's docstring says
what its floor is.  rflite / floor says how far rflite is from the work itself.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import NamedTuple

#: The default output file, relative to the repository root.
OUT = "results/benchmarks.json"

COLUMNS = ["task", "case", "reference", "floor", "rflite min (ms)", "reference min (ms)",
           "floor min (ms)", "rflite / reference", "speed-up (x)", "rflite / floor",
           "rounds (rflite / reference)", "timing"]

#: The task, the reference and the floor of each paired case (bench_paired.py's docstring).
PAIRED = {
    "features-d100-q2": ("q-sparse sin features, 2000 x 5000, q = 2, one thread",
                         "np.sin(X @ W.T + b)", "writing the output once"),
    "harfe-fit": ("HARFE Table 1 fit, m = 500, N = 10^4",
                  "NumPy HTP (A c, A.T r, solve per iteration)", "the fit's A.T @ r passes"),
    "shrimp-lowdim-path": ("SHRIMP low-dim f3 path, 126 x 1980",
                           "NumPy lstsq per pruning step", "one Gram A A^T (dsyrk)"),
    "metropolis-iteration": ("Metropolis iteration, N = 10^4, K = 256",
                             "NumPy (general product, LU, Python accept loop)",
                             "zherk + Cholesky"),
    "gfc-objective": ("GFC objective + gradient, m = 2000, d = 10",
                      "NumPy fold loop", "one pass X @ w"),
}


class Peer(NamedTuple):
    """A row comparing rflite with a peer library or the papers' approach.

    The names are pytest node ids under ``benchmarks/`` (file::test[params]);
    ``floor`` is ``None`` when the benchmark file defines none.
    """

    task: str
    rflite: str
    reference: str
    reference_label: str
    floor: str | None
    floor_label: str | None


#: The rows "rflite vs peer / paper code": the other benchmark files' cases.
PEERS = (
    Peer("RandomFeatures, m = 2000, N = 20000, d = 100",
         "bench_transformer.py::bench_rflite[rflite-dense]",
         "bench_transformer.py::bench_rbfsampler_one_blas_thread",
         "scikit-learn RBFSampler", "bench_transformer.py::bench_product_floor",
         "X @ W.T alone"),
    Peer("q-sparse sin features, 2000 x 20000, q = 2",
         "bench_features.py::bench_rflite[d100-q2-rflite]",
         "bench_features.py::bench_numpy_dense[d100-q2]", "np.sin(X @ W.T + b)",
         "bench_features.py::bench_write_floor_fresh[d100-q2]", "writing the output once"),
    Peer("BPDN, 500 x 10000",
         "bench_bp.py::test_bench_bpdn_rflite",
         "bench_bp.py::test_bench_bpdn_spgl1_package", "spgl1", None, None),
    Peer("HARFE Table 1 fit, m = 500, N = 10^4",
         "bench_htp.py::bench_rflite", "bench_htp.py::bench_numpy_gram_pinv",
         "the published approach (N x N Gram, pinv)", None, None),
    Peer("SHRIMP low-dim f2 path (q = 1), 126 x 20000",
         "bench_imp.py::bench_low_rflite[f2]", "bench_imp.py::bench_low_numpy_lstsq[f2]",
         "NumPy lstsq per step", None, None),
    Peer("SHRIMP low-dim f2 path (q = 1), 126 x 20000",
         "bench_imp.py::bench_low_rflite[f2]", "bench_imp.py::bench_low_numpy_pinv_eig[f2]",
         "the published approach (pinv + eig per step)", None, None),
    Peer("Metropolis iteration, N = 10^4, K = 1024",
         "bench_metropolis.py::bench_rflite_iteration[1024]",
         "bench_metropolis.py::bench_numpy_iteration[1024]", "NumPy",
         "bench_metropolis.py::bench_floor_zherk_cholesky[1024]", "zherk + Cholesky"),
)

PAIRED_COMMAND = ("python -m pytest benchmarks/bench_paired.py --benchmark-enable "
                  "--benchmark-json=paired.json")


def peer_command(json_name: str = "peers.json") -> str:
    """The pytest command that times every benchmark :data:`PEERS` names, once each."""
    ids = []
    for peer in PEERS:
        for name in (peer.rflite, peer.reference, peer.floor):
            if name is not None and f"benchmarks/{name}" not in ids:
                ids.append(f"benchmarks/{name}")
    return ("python -m pytest --runslow " + " ".join(f"'{i}'" for i in ids)
            + f" --benchmark-enable --benchmark-json={json_name}")


def _ms(seconds):
    return None if seconds is None else round(1e3 * seconds, 4)


def _round(x, digits):
    return None if x is None else round(float(x), digits)


def paired_rows(run: dict) -> list[list]:
    """The rows of the paired cases of a pytest-benchmark run (other benchmarks skipped).

    A run made before the floors existed (no ``floor_min``) gives empty floor cells.
    """
    rows = []
    for bench in run["benchmarks"]:
        info = bench.get("extra_info", {})
        if "paired_ratio" not in info:
            continue
        case = bench["name"].split("[", 1)[-1].rstrip("]")
        task, reference, floor = PAIRED.get(case, (case, "NumPy reference", None))
        ratio = float(info["paired_ratio"])
        rounds = int(info["rounds"])
        rows.append([task, case, reference, floor if "floor_min" in info else None,
                     _ms(info["rflite_min"]), _ms(info["reference_min"]),
                     _ms(info.get("floor_min")), round(ratio, 4), round(1.0 / ratio, 2),
                     _round(info.get("floor_ratio"), 3), f"{rounds} / {rounds}",
                     "paired rounds, median ratio"])
    return rows


def _by_node(runs) -> dict[str, dict]:
    """``{file::name: benchmark}`` over the runs (node ids relative to ``benchmarks/``)."""
    out = {}
    for run in runs:
        for bench in run["benchmarks"]:
            node = bench.get("fullname", bench["name"]).replace("\\", "/")
            out[node.split("benchmarks/", 1)[-1]] = bench
    return out


def peer_rows(runs) -> list[list]:
    """The rows of :data:`PEERS` whose rflite and reference benchmarks are in ``runs``."""
    found = _by_node(runs)
    rows = []
    for peer in PEERS:
        ours, ref = found.get(peer.rflite), found.get(peer.reference)
        if ours is None or ref is None:
            continue
        floor = found.get(peer.floor) if peer.floor else None
        t_ours, t_ref = ours["stats"]["min"], ref["stats"]["min"]
        t_floor = floor["stats"]["min"] if floor else None
        rows.append([peer.task, peer.rflite, peer.reference_label,
                     peer.floor_label if floor else None,
                     _ms(t_ours), _ms(t_ref), _ms(t_floor), round(t_ours / t_ref, 4),
                     round(t_ref / t_ours, 2),
                     None if t_floor is None else round(t_ours / t_floor, 3),
                     f"{ours['stats']['rounds']} / {ref['stats']['rounds']}",
                     "separate runs, fastest rounds"])
    return rows


def table(paired: dict, peers=()) -> dict:
    """The results table of a paired run and optional peer runs."""
    command = f"{PAIRED_COMMAND} && "
    if peers:
        command += f"{peer_command()} && python benchmarks/results.py paired.json peers.json"
    else:
        command += "python benchmarks/results.py paired.json"
    machine = paired.get("machine_info", {}).get("cpu", {}).get("brand_raw", "this")
    return {
        "experiment": "benchmarks",
        "command": command,
        "columns": COLUMNS,
        "rows": paired_rows(paired) + peer_rows(peers),
        "published": (f"Run of {paired.get('datetime', 'unknown date')} on {machine} "
                      "machine; references at one BLAS thread.  Paired rows: each round "
                      "times rflite, the reference and the floor back to back "
                      "(benchmarks/bench_paired.py).  Other rows: fastest rounds of "
                      "separate measurements (benchmarks/results.py, PEERS).  A floor is "
                      "an operation no implementation of the maths avoids."),
    }


def write(doc: dict, out: Path) -> None:
    """Write ``doc`` with one row per line (diffs of a new run stay readable)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    head = json.dumps({k: v for k, v in doc.items() if k != "rows"}, indent=1)[:-2]
    rows = ",\n".join("  " + json.dumps(r) for r in doc["rows"])
    out.write_text(f'{head},\n "rows": [\n{rows}\n ]\n}}\n')


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paired", nargs="?", help="pytest-benchmark JSON of bench_paired.py")
    parser.add_argument("peers", nargs="?", help="pytest-benchmark JSON of the PEERS cases")
    parser.add_argument("--out", default=OUT, help=f"results file to write (default {OUT})")
    parser.add_argument("--peer-command", action="store_true",
                        help="print the command that times the PEERS cases and exit")
    args = parser.parse_args(argv)
    if args.peer_command:
        print(peer_command())
        return 0
    if args.paired is None:
        parser.error("the paired run (PAIRED.json) is required")
    paired = json.loads(Path(args.paired).read_text())
    peers = [json.loads(Path(args.peers).read_text())] if args.peers else []
    write(table(paired, peers), Path(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
