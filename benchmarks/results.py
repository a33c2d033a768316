"""A pytest-benchmark run of the paired cases as a results file the docs render.

``python benchmarks/results.py RUN.json [OUT.json]`` reads a run of
``benchmarks/bench_paired.py`` (``python -m pytest benchmarks/bench_paired.py
--benchmark-enable --benchmark-json=RUN.json``) and writes ``OUT.json``
(default ``results/benchmarks.json``) in the results format of
``rflite.experiments.write_results``: one row per case with rflite's and the
reference's fastest round, the median of the per-round ratios (each round
times the two back to back, so machine load cancels) and the speed-up.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

COLUMNS = ["case", "rflite min (ms)", "reference min (ms)", "median paired ratio",
           "speed-up (x)", "rounds"]


def rows_of(run: dict) -> list[list]:
    """The table of the paired cases of a pytest-benchmark run (others skipped)."""
    rows = []
    for bench in run["benchmarks"]:
        info = bench.get("extra_info", {})
        if "paired_ratio" not in info:
            continue
        case = bench["name"].split("[", 1)[-1].rstrip("]")
        ratio = float(info["paired_ratio"])
        rows.append([case, round(1e3 * info["rflite_min"], 4),
                     round(1e3 * info["reference_min"], 4), round(ratio, 4),
                     round(1.0 / ratio, 2), int(info["rounds"])])
    return rows


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not 1 <= len(argv) <= 2:
        print(__doc__.splitlines()[2], file=sys.stderr)
        return 2
    run = json.loads(Path(argv[0]).read_text())
    out = Path(argv[1] if len(argv) == 2 else "results/benchmarks.json")
    table = {
        "experiment": "benchmarks",
        "command": ("python -m pytest benchmarks/bench_paired.py --benchmark-enable "
                    "--benchmark-json=run.json && python benchmarks/results.py run.json"),
        "columns": COLUMNS,
        "rows": rows_of(run),
        "published": (f"Run of {run.get('datetime', 'unknown date')} on "
                      f"{run.get('machine_info', {}).get('cpu', {}).get('brand_raw', 'this')}"
                      " machine; the reference of each case is the papers' algorithm in "
                      "plain NumPy at one BLAS thread (benchmarks/bench_paired.py)."),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    head = json.dumps({k: v for k, v in table.items() if k != "rows"}, indent=1)[:-2]
    rows = ",\n".join("  " + json.dumps(r) for r in table["rows"])  # a row a line
    out.write_text(f'{head},\n "rows": [\n{rows}\n ]\n}}\n')
    return 0


if __name__ == "__main__":
    sys.exit(main())
