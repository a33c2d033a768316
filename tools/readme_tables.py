"""The README's two results tables, rendered from the results files.

The README's "Reproduced results" and "Speed" tables hold no typed numbers:
this script renders both as Markdown from the machine-readable results files
(each carries the exact command that wrote it) and writes them between marker
comments of ``README.md``::

    python tools/readme_tables.py            # print both tables
    python tools/readme_tables.py --write    # rewrite README.md between the markers
    python tools/readme_tables.py --check    # exit 1 when README.md is not current

- "Reproduced results" (markers ``results-table``): one row per published
  table, declared in :data:`ROWS`; the paper's number and rflite's are read
  from the full run's file ``results/full/NAME.json`` (written by
  ``python -m rflite run NAME --results results/full``).  Without that file
  the row says so and shows no rflite number (the quick forms in
  ``results/quick/`` are not comparable with the papers); the paper's number
  then comes from the quick form's file when it holds that entry.
- "Speed" (markers ``speed-table``): one row per task of
  ``results/benchmarks.json`` (written by ``benchmarks/results.py``).

``tests/test_readme_tables.py`` fails when the README differs from what this
script renders from the committed files.  The script reads only the files
under ``results/``; it imports nothing from rflite.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Callable, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: Folder (under the results root) of the full runs' files, and of the quick forms'.
FULL, QUICK = "full", "quick"
#: Marker names: the README holds ``<!-- NAME:start -->`` ... ``<!-- NAME:end -->``.
RESULTS_MARK, SPEED_MARK = "results-table", "speed-table"
#: What a row says when its full run's file is missing.
NO_FULL_RUN = "full run not in `results/full`"


# ----------------------------------------------------------------- reading
class Results:
    """One results file: its rows addressed by column name."""

    def __init__(self, path: Path):
        self.path = path
        doc = json.loads(path.read_text(encoding="utf-8"))
        self.columns = list(doc["columns"])
        self.rows = [dict(zip(self.columns, r)) for r in doc["rows"]]
        self.note = doc.get("published") or ""

    def row(self, **where) -> dict:
        """The one row whose cells equal ``where`` (column names with spaces as ``_``)."""
        want = {k.replace("_", " "): v for k, v in where.items()}
        for key in want:
            if key not in self.columns:
                raise LookupError(f"{self.path.name}: no column {key!r} (has {self.columns})")
        found = [r for r in self.rows if all(r[k] == v for k, v in want.items())]
        if len(found) != 1:
            raise LookupError(f"{self.path.name}: {len(found)} rows with {want}, expected 1")
        return found[0]

    def cells(self, column: str, key: str, values, **where) -> list:
        """``column`` of the rows where ``key`` takes each of ``values`` (and ``where``)."""
        return [self.row(**{key: v}, **where)[column] for v in values]

    def noted(self, pattern: str) -> str:
        """The first group of ``pattern`` in the file's ``published`` note."""
        match = re.search(pattern, self.note)
        if match is None:
            raise LookupError(f"{self.path.name}: published note does not match {pattern!r}")
        return match.group(1)


def num(value) -> str:
    """A number as the papers print them: 3 significant digits, whole numbers from 100
    to 10^4, and a short exponent outside [1e-3, 1e4)."""
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    v = float(value)
    if v == 0 or 1e-3 <= abs(v) < 1e4:
        return f"{v:.0f}" if abs(v) >= 100 else f"{v:.3g}"
    mantissa, exponent = f"{v:.2e}".split("e")
    return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"


def nums(values) -> str:
    return " / ".join(num(v) for v in values)


# ------------------------------------------------------ reproduced results
class Row(NamedTuple):
    """A README row: which file, and how to read the paper's and rflite's numbers in it."""

    table: str
    experiment: str
    measure: str
    paper: Callable[[Results], str]
    rflite: Callable[[Results], str]


def _harfe1_rflite(r: Results) -> str:
    # the experiment's verdict: rflite / paper at most 2 ("better" or "within 2x")
    harfe = [row for row in r.rows if row["method"] == "HARFE"]
    close = sum(row["ratio"] is not None and row["ratio"] <= 2 for row in harfe)
    first = r.row(method="HARFE", q=1, function="1/sqrt(1+|x|^2)")["rflite"]
    return f"{num(first)} ({close} of {len(harfe)} cells within 2x)"


def _support_rflite(r: Results) -> str:
    best = r.row(t=int(r.noted(r"here: best t = (\d+)")))
    kind = "only correct columns" if best["only correct columns"] else "wrong columns kept"
    return f"{best['N_t']} ({kind})"


def _prop7_rflite(r: Results) -> str:
    bad = sum(row["status (9)"] == "VIOLATED" for row in r.rows)
    return f"violated in {bad} of {len(r.rows)} cells"


def _slopes(*labels):
    return lambda r: nums(r.cells(label, "K", ["slope"])[0] for label in labels)


FRIEDMAN = ("friedman1", "friedman2", "friedman3")
REAL = ("airfoil", "ccpp", "housing")

#: The README's rows: (published table, experiment, measure, paper's cell, rflite's cell).
ROWS = (
    Row("HARFE Table 1", "harfe-table1", "rel. test error %, q = 1, 1/sqrt(1+\\|x\\|^2)",
        lambda r: num(r.row(method="HARFE", q=1, function="1/sqrt(1+|x|^2)")["paper"]),
        _harfe1_rflite),
    Row("HARFE Table 2", "harfe-table2", "test MSE, Friedman 1 / 2 / 3",
        lambda r: nums(r.cells("paper", "data set", FRIEDMAN, method="HARFE")),
        lambda r: nums(r.cells("rflite (mean test MSE)", "data set", FRIEDMAN,
                               method="HARFE"))),
    Row("HARFE Tables 1-2, SRFE rows", "srfe-tables", "test MSE, Friedman 1 / 2 / 3",
        lambda r: nums(r.cells("SRFE paper", "entry", FRIEDMAN, table="harfe-table2")),
        lambda r: nums(r.cells("SRFE rflite", "entry", FRIEDMAN, table="harfe-table2"))),
    Row("HARFE Table 4", "harfe-real", "test MSE, airfoil / ccpp / housing",
        lambda r: nums(r.cells("paper", "data set", REAL)),
        lambda r: nums(r.cells("rflite (mean test MSE)", "data set", REAL))),
    Row("SHRIMP Table 2, low-dim", "shrimp-table2", "test MSE, f3 / f5 / f7",
        lambda r: nums(r.cells("SHRIMP paper", "function", ("f3", "f5", "f7"), setting="low")),
        lambda r: nums(r.cells("SHRIMP rflite", "function", ("f3", "f5", "f7"),
                               setting="low"))),
    Row("SHRIMP Table 2, high-dim", "shrimp-table2", "test MSE, f3 / f5 / f6",
        lambda r: nums(r.cells("SHRIMP paper", "function", ("f3", "f5", "f6"),
                               setting="high")),
        lambda r: nums(r.cells("SHRIMP rflite", "function", ("f3", "f5", "f6"),
                               setting="high"))),
    Row("SHRIMP Table 2, SRFE-S row", "srfe-tables", "test MSE, f3 / f5 / f7",
        lambda r: nums(r.cells("SRFE paper", "entry", ("shrimp3", "shrimp5", "shrimp7"),
                               table="shrimp-table2")),
        lambda r: nums(r.cells("SRFE rflite", "entry", ("shrimp3", "shrimp5", "shrimp7"),
                               table="shrimp-table2"))),
    Row("SHRIMP Table 3", "shrimp-real", "test MSE, airfoil / ccpp / housing",
        lambda r: nums(r.cells("paper", "data set", REAL)),
        lambda r: nums(r.cells("rflite test MSE", "data set", REAL))),
    Row("SHRIMP Fig. 4", "shrimp-support", "columns kept at the best step",
        lambda r: r.noted(r"best N_t = (\d+)"), _support_rflite),
    Row("ARFF Case 1 (Fig. 2)", "arff-case1", "slope of error vs K, Alg. 1 / Alg. 2 / fixed RFF",
        lambda r: r.noted(r"Fig\. 2: (.*)$"), _slopes("alg1", "alg2", "rff")),
    Row("ARFF Case 2 (Fig. 3)", "arff-case2", "slope of error vs K, Alg. 1 / fixed RFF",
        lambda r: r.noted(r"Fig\. 3: (.*)$"), _slopes("alg1", "rff")),
    Row("GFC Table 1", "gfc-synthetic", "RMSE x 100, friedman / breiman, 100 features",
        lambda r: nums(r.cells("paper", "data set", ("friedman", "breiman"), method="GFC",
                               n=100)),
        lambda r: nums(r.cells("RMSE x 100", "data set", ("friedman", "breiman"),
                               method="GFC", n=100))),
    # Prop. 7 states the bound; the experiment counts the cells where it fails
    Row("SHRIMP Prop. 7", "theory-prop7", "printed lower bound on E lambda_1",
        lambda r: "holds (the proposition)", _prop7_rflite),
)


def row_cells(row: Row, root: Path) -> list[str]:
    """The README cells of ``row`` from the files under the results root ``root``."""
    full = root / FULL / f"{row.experiment}.json"
    if full.is_file():
        res = Results(full)
        paper, ours = row.paper(res), row.rflite(res)
    else:
        quick = root / QUICK / f"{row.experiment}.json"
        try:
            paper = row.paper(Results(quick)) if quick.is_file() else "-"
        except LookupError:  # the quick form does not run that entry
            paper = "-"
        ours = NO_FULL_RUN
    return [row.table, f"`{row.experiment}`", row.measure, paper, ours]


def results_table(root: Path = ROOT / "results") -> str:
    """The "Reproduced results" table as Markdown."""
    lines = ["| published table | experiment | measure | paper | rflite |",
             "|---|---|---|---|---|"]
    lines += ["| " + " | ".join(row_cells(row, root)) + " |" for row in ROWS]
    return "\n".join(lines)


# -------------------------------------------------------------------- speed
def seconds(ms) -> str:
    """A time given in milliseconds, three significant digits, in ms or s."""
    if ms is None:
        return "-"
    return f"{ms / 1e3:.3g} s" if ms >= 1e3 else f"{ms:.3g} ms"


def speed_table(path: Path = ROOT / "results" / "benchmarks.json") -> str:
    """The "Speed" table as Markdown: one row per task of ``results/benchmarks.json``.

    Rows of one task and timing (one rflite case against several references)
    share a line.
    """
    res = Results(path)
    tasks: dict[tuple[str, str], list[dict]] = {}
    for row in res.rows:
        tasks.setdefault((row["task"], row["timing"]), []).append(row)
    lines = ["| task | rflite | reference | speed-up | floor: time, rflite / floor |",
             "|---|---|---|---|---|"]
    for (task, _), rows in tasks.items():
        paired = rows[0]["timing"].startswith("paired")
        refs = "; ".join(f"{r['reference']} {seconds(r['reference min (ms)'])}" for r in rows)
        speed = " / ".join(f"{r['speed-up (x)']:.3g}x" for r in rows)
        floor = rows[0]
        floor_cell = ("" if floor["floor"] is None else
                      f"{floor['floor']} {seconds(floor['floor min (ms)'])}, "
                      f"{floor['rflite / floor']:.3g}x")
        lines.append(f"| {task}{' (paired)' if paired else ''} | "
                     f"{seconds(rows[0]['rflite min (ms)'])} | {refs} | {speed} | {floor_cell} |")
    return "\n".join(lines)


# ------------------------------------------------------------------- README
def tables(root: Path = ROOT / "results") -> dict[str, str]:
    """``{marker name: Markdown table}`` rendered from the results root ``root``."""
    return {RESULTS_MARK: results_table(root), SPEED_MARK: speed_table(root / "benchmarks.json")}


def _block(name: str) -> re.Pattern:
    return re.compile(rf"(<!-- {name}:start -->\n)(.*?)(<!-- {name}:end -->)", re.S)


def marked(text: str, name: str) -> str:
    """The text between the ``name`` markers of ``text`` (without the final newline)."""
    found = _block(name).findall(text)
    if len(found) != 1:
        raise ValueError(f"README: expected one {name} block, found {len(found)}")
    return found[0][1].rstrip("\n")


def rewrite(text: str, rendered: dict[str, str]) -> str:
    """``text`` with every marked block replaced by its rendered table."""
    for name, table in rendered.items():
        marked(text, name)  # exactly one block
        text = _block(name).sub(lambda m: m.group(1) + table + "\n" + m.group(3), text)
    return text


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="rewrite README.md between markers")
    mode.add_argument("--check", action="store_true",
                      help="exit 1 when README.md differs from the rendered tables")
    parser.add_argument("--results", type=Path, default=ROOT / "results",
                        help="results root holding full/, quick/ and benchmarks.json")
    parser.add_argument("--readme", type=Path, default=README)
    args = parser.parse_args(argv)
    rendered = tables(args.results)
    if not (args.write or args.check):
        print("\n\n".join(rendered.values()))
        return 0
    text = args.readme.read_text(encoding="utf-8")
    new = rewrite(text, rendered)
    if args.check:
        stale = [name for name in rendered if marked(text, name) != rendered[name]]
        if stale:
            print(f"{args.readme}: tables not current: {', '.join(stale)}; run "
                  "python tools/readme_tables.py --write", file=sys.stderr)
            return 1
        return 0
    if new != text:
        args.readme.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
