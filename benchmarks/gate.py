"""Benchmark gate on ratios rflite / reference, usable on a busy machine.

Absolute times are useless as a gate on a shared machine: under load every case
"regresses", the NumPy references included, and a real slowdown in rflite
drowns in that noise.  The load, however, slows both sides of a group alike, so
this script compares, for every benchmark group, the ratio

    ratio = t(rflite case) / t(reference case)

of a new pytest-benchmark run with the same ratio in a committed baseline run,
and fails when a ratio has grown by more than ``--margin`` (relative):

    change = new_ratio / baseline_ratio - 1  >  margin   ->  REGRESSED

Usage (from the repository root)::

    python -m pytest benchmarks --benchmark-enable --benchmark-json=new.json
    python benchmarks/gate.py new.json \\
        --baseline benchmarks/saved/Linux-CPython-3.11-64bit/0003_paired_baseline.json \\
        --margin 0.5

Exit status: 0 when every pair passes, 1 when a ratio regressed or a pair of
the baseline is missing from the new run (``--allow-missing`` tolerates missing
pairs, for a run restricted with ``-k``), 2 on unusable input.

Pairing.  A benchmark whose name (parameter id included, e.g.
``bench_rflite[d100-q2-rflite-1thread]``) contains ``rflite`` is the rflite
side of its group (pytest-benchmark's ``group``); every other benchmark of the
group is a reference.  Every (rflite case, reference case) pair of a group is
gated.  Groups with no rflite case or no reference cannot be gated and are
listed as "unpaired" (they do not fail the gate).  ``benchmarks/conftest.py``
runs the references with one BLAS thread so that they measure the algorithm,
not the thread pool.

Statistic.  By default the *minimum* over rounds (``--stat min``): load from
other processes only ever adds time, so the minimum is the round least
contaminated by it and the most reproducible estimate of the unloaded cost,
whereas the median still contains whatever fraction of the rounds was slowed,
and that fraction differs between the rflite and the reference measurement
(they run at different moments).  ``--stat median`` is available.  With a single
round (the slowest references) min and median coincide.

Limits of the min-time pairs: on a loaded shared 2-core machine two clean
runs recorded minutes apart can differ in a ratio by about as much as an
injected 2x slowdown of HARFE: rflite and
its reference are timed at different moments with different round counts, so
a change of load between the two moments moves the ratio.

Paired runs (``benchmarks/bench_paired.py``) remove that: each round
times rflite and its reference back to back, alternating which goes first,
and the run stores the median of the per-round ratios in
``extra_info["paired_ratio"]``, which this script gates directly.  The gate
that holds on a loaded machine is therefore::

    python -m pytest benchmarks/bench_paired.py --benchmark-enable \
        --benchmark-json=new.json
    python benchmarks/gate.py new.json --paired-only \
        --baseline benchmarks/saved/Linux-CPython-3.11-64bit/0003_paired_baseline.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass

#: Substring of a benchmark name that marks the rflite side of its group.
RFLITE_MARK = "rflite"
#: Statistics of pytest-benchmark's JSON the gate may use.
STATS = ("min", "median", "mean")
#: How a paired run's reference is named in the report.
PAIRED_REFERENCE = "reference, same rounds"


def is_rflite(name: str) -> bool:
    """True when the benchmark ``name`` is the rflite side of its group."""
    return RFLITE_MARK in name


@dataclass(frozen=True)
class Row:
    """One gated pair: baseline and new ratio rflite / reference and the verdict."""

    group: str
    rflite: str
    reference: str
    baseline: float | None
    new: float | None
    change: float | None
    verdict: str


def load_times(path, stat: str = "min") -> dict[str, dict[str, float]]:
    """``{group: {benchmark name: time}}`` from a pytest-benchmark JSON file.

    Raises ``ValueError`` naming the file when it is not a pytest-benchmark
    JSON or a time is missing or not positive.
    """
    if stat not in STATS:
        raise ValueError(f"stat must be one of {STATS}, got {stat!r}")
    with open(path) as fh:
        data = json.load(fh)
    if not isinstance(data, dict) or "benchmarks" not in data:
        raise ValueError(f"{path}: not a pytest-benchmark JSON (no 'benchmarks' key)")
    out: dict[str, dict[str, float]] = {}
    for bench in data["benchmarks"]:
        if "paired_ratio" in (bench.get("extra_info") or {}):
            continue  # a paired run: its ratio is read by load_paired
        name = bench["name"]
        group = bench.get("group") or "(no group)"
        t = (bench.get("stats") or {}).get(stat)
        if t is None or not (isinstance(t, (int, float)) and math.isfinite(t) and t > 0):
            raise ValueError(f"{path}: benchmark {name!r} has no positive {stat} time ({t!r})")
        out.setdefault(group, {})[name] = float(t)
    return out


def load_paired(path) -> dict[tuple[str, str, str], float]:
    """``{(group, name, "reference, same rounds"): ratio}`` of the paired runs in ``path``.

    A paired run (``benchmarks/bench_paired.py``) timed rflite and its
    reference round by round under the same load; its ``extra_info`` holds
    the median of the per-round ratios, ``paired_ratio``, which is gated as
    it is (``--stat`` does not apply).
    """
    with open(path) as fh:
        data = json.load(fh)
    out = {}
    for bench in data.get("benchmarks", []) if isinstance(data, dict) else []:
        r = (bench.get("extra_info") or {}).get("paired_ratio")
        if r is None:
            continue
        if not (isinstance(r, (int, float)) and math.isfinite(r) and r > 0):
            raise ValueError(f"{path}: paired session {bench['name']!r} has ratio {r!r}")
        out[(bench.get("group") or "(no group)", bench["name"], PAIRED_REFERENCE)] = float(r)
    return out


def ratios(times: dict[str, dict[str, float]]):
    """Ratios rflite / reference per pair, and the groups that cannot be paired.

    Returns ``({(group, rflite name, reference name): ratio}, {group: reason})``.
    """
    pairs, unpaired = {}, {}
    for group, cases in times.items():
        ours = sorted(n for n in cases if is_rflite(n))
        refs = sorted(n for n in cases if not is_rflite(n))
        if not ours or not refs:
            reason = "no rflite case" if not ours else "no reference"
            unpaired[group] = f"{reason}: {', '.join(sorted(cases))}"
            continue
        for a in ours:
            for b in refs:
                pairs[(group, a, b)] = cases[a] / cases[b]
    return pairs, unpaired


def compare(baseline_times, new_times, margin: float, baseline_paired=None, new_paired=None):
    """Gate the new ratios against the baseline's.

    Returns ``(rows, unpaired)``: one :class:`Row` per pair seen in either run,
    verdict ``ok``, ``REGRESSED`` (``new / baseline - 1 > margin``),
    ``MISSING`` (pair in the baseline, absent from the new run) or ``new``
    (absent from the baseline: reported, not gated); ``unpaired`` maps the
    groups of either run that have no pair to the reason.
    """
    if not (isinstance(margin, (int, float)) and math.isfinite(margin) and margin >= 0):
        raise ValueError(f"margin must be a finite number >= 0, got {margin!r}")
    base, base_unpaired = ratios(baseline_times)
    new, new_unpaired = ratios(new_times)
    base.update(baseline_paired or {})
    new.update(new_paired or {})
    rows = []
    for key in sorted(set(base) | set(new)):
        b, n = base.get(key), new.get(key)
        if b is None:
            rows.append(Row(*key, None, n, None, "new"))
        elif n is None:
            rows.append(Row(*key, b, None, None, "MISSING"))
        else:
            change = n / b - 1.0
            rows.append(Row(*key, b, n, change, "REGRESSED" if change > margin else "ok"))
    return rows, {**base_unpaired, **new_unpaired}


def failed(rows, allow_missing: bool = False) -> bool:
    """True when a pair regressed, or is missing and that is not allowed."""
    bad = {"REGRESSED"} if allow_missing else {"REGRESSED", "MISSING"}
    return any(r.verdict in bad for r in rows)


def format_table(rows, unpaired, margin: float, stat: str) -> str:
    """The gate's report: one line per pair, then the unpaired groups."""
    def num(x, fmt):
        return "-" if x is None else format(x, fmt)

    head = ("group", "pair (rflite / reference)", "baseline", "new", "change", "verdict")
    lines = [(r.group, f"{r.rflite} / {r.reference}", num(r.baseline, ".4g"),
              num(r.new, ".4g"), "-" if r.change is None else f"{100 * r.change:+.0f}%",
              r.verdict) for r in rows]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *lines)]
    out = [f"ratio gate: t(rflite) / t(reference), statistic = {stat}, "
           f"fail when a ratio grows by more than {100 * margin:.0f}%"]
    for i, line in enumerate([head] + lines):
        out.append("  ".join(str(x).ljust(w) if j < 2 else str(x).rjust(w)
                             for j, (x, w) in enumerate(zip(line, widths))))
        if i == 0:
            out.append("  ".join("-" * w for w in widths))
    for group, reason in sorted(unpaired.items()):
        out.append(f"unpaired group (not gated) {group!r}: {reason}")
    return "\n".join(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description="Fail when a ratio rflite/reference of a pytest-benchmark run "
                    "worsened against the baseline by more than a margin.")
    parser.add_argument("new", help="pytest-benchmark JSON of the new run (--benchmark-json)")
    parser.add_argument("--baseline", required=True, help="pytest-benchmark JSON of the baseline")
    parser.add_argument("--margin", type=float, default=0.5,
                        help="allowed relative growth of a ratio (default 0.5 = +50%%)")
    parser.add_argument("--stat", choices=STATS, default="min",
                        help="statistic of the rounds (default min: least affected by load)")
    parser.add_argument("--allow-missing", action="store_true",
                        help="do not fail on baseline pairs absent from the new run (-k subsets)")
    parser.add_argument("--paired-only", action="store_true",
                        help="gate only the paired sessions (bench_paired.py), the pairs that "
                             "hold on a loaded machine")
    args = parser.parse_args(argv)
    try:
        rows, unpaired = compare(load_times(args.baseline, args.stat),
                                 load_times(args.new, args.stat), args.margin,
                                 load_paired(args.baseline), load_paired(args.new))
        if args.paired_only:
            rows = [r for r in rows if r.reference == PAIRED_REFERENCE]
            unpaired = {}
    except (OSError, ValueError, KeyError, json.JSONDecodeError) as exc:
        print(f"gate: {exc}", file=sys.stderr)
        return 2
    stat = "median of per-round ratios (paired sessions)" if args.paired_only else args.stat
    print(format_table(rows, unpaired, args.margin, stat))
    bad = failed(rows, args.allow_missing)
    n_reg = sum(r.verdict == "REGRESSED" for r in rows)
    n_miss = sum(r.verdict == "MISSING" for r in rows)
    print(f"{'FAIL' if bad else 'PASS'}: {len(rows)} pairs, {n_reg} regressed, "
          f"{n_miss} missing{' (allowed)' if args.allow_missing and n_miss else ''}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
