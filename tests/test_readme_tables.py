"""The README's results tables are what tools/readme_tables.py renders from results/."""

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("readme_tables",
                                               ROOT / "tools" / "readme_tables.py")
rt = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rt)


def _write(path, columns, rows, published=None, name=None):
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"experiment": name or path.stem, "command": f"python -m rflite run {path.stem}",
           "columns": columns, "rows": rows}
    if published is not None:
        doc["published"] = published
    path.write_text(json.dumps(doc))


def test_readme_tables_are_current():
    """Fails when README.md differs from the tables rendered from the committed files."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for name, table in rt.tables().items():
        assert rt.marked(text, name) == table, (
            f"README's {name} is stale: run python tools/readme_tables.py --write")
    assert rt.main(["--check"]) == 0
    assert len(text.splitlines()) <= 200


def test_check_mode_notices_a_stale_table(tmp_path, capsys):
    readme = tmp_path / "README.md"
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    readme.write_text(text.replace("| paper | rflite |", "| paper | ours |"))
    assert rt.main(["--check", "--readme", str(readme)]) == 1
    assert "results-table" in capsys.readouterr().err
    assert rt.main(["--write", "--readme", str(readme)]) == 0
    assert readme.read_text() == text


def test_rewrite_touches_only_the_marked_blocks():
    text = ("# t\nbefore\n<!-- a:start -->\nold\nrows\n<!-- a:end -->\nafter\n"
            "<!-- b:start -->\n<!-- b:end -->\n")
    new = rt.rewrite(text, {"a": "| x |", "b": "| y |\n| z |"})
    assert new == ("# t\nbefore\n<!-- a:start -->\n| x |\n<!-- a:end -->\nafter\n"
                   "<!-- b:start -->\n| y |\n| z |\n<!-- b:end -->\n")
    with pytest.raises(ValueError, match="one c block"):
        rt.rewrite(text, {"c": "| x |"})


def test_missing_full_runs_are_named_not_filled_with_quick_numbers(tmp_path):
    shutil.copytree(ROOT / "results" / "quick", tmp_path / "quick")
    for row in rt.ROWS:
        cells = rt.row_cells(row, tmp_path)
        assert cells[-1] == rt.NO_FULL_RUN, row
    # the paper's number still shows when the quick form holds that entry
    harfe2 = next(r for r in rt.ROWS if r.experiment == "harfe-table2")
    assert rt.row_cells(harfe2, tmp_path)[3] == "1.52 / 1310 / 0.0109"
    assert rt.row_cells(harfe2, tmp_path / "nothing")[3] == "-"


def test_full_run_numbers_come_from_the_file(tmp_path):
    cols = ["method", "data set", "rflite (mean test MSE)", "rflite with hold-out m*lambda",
            "paper", "authors' code", "ratio"]
    _write(tmp_path / "full" / "harfe-table2.json", cols,
           [["HARFE", f"friedman{k}", 10.0 * k, None, 0.5 * k, None, 20.0] for k in (1, 2, 3)]
           + [["SRFE", "friedman1", 9.0, None, 9.0, None, 1.0]])
    _write(tmp_path / "full" / "theory-prop7.json", ["setting", "status (9)"],
           [["a", "held"], ["b", "VIOLATED"], ["c", "within noise"], ["d", "VIOLATED"]])
    _write(tmp_path / "full" / "shrimp-support.json",
           ["t", "N_t", "only correct columns"], [[0, 100, False], [1, 80, True]],
           published="SHRIMP Fig. 4: best N_t = 38 at t = 28 (here: best t = 1, ...)")
    rows = {r.experiment: r for r in rt.ROWS}
    assert rt.row_cells(rows["harfe-table2"], tmp_path)[3:] == ["0.5 / 1 / 1.5", "10 / 20 / 30"]
    assert rt.row_cells(rows["theory-prop7"], tmp_path)[4] == "violated in 2 of 4 cells"
    assert rt.row_cells(rows["shrimp-support"], tmp_path)[3:] == [
        "38", "80 (only correct columns)"]
    # a full-run file without the row a README entry needs is an error, not a blank
    _write(tmp_path / "full" / "harfe-real.json", ["data set", "rflite (mean test MSE)",
                                                   "paper"], [["airfoil", 1.0, 1.0]])
    with pytest.raises(LookupError, match="harfe-real.json: 0 rows"):
        rt.row_cells(rows["harfe-real"], tmp_path)


#: README rows whose entries the quick forms also run (the rest need a full run).
IN_QUICK = {"harfe-table1", "harfe-table2", "harfe-real", "shrimp-support", "arff-case1",
            "arff-case2", "gfc-synthetic", "theory-prop7"}


@pytest.mark.parametrize("row", rt.ROWS, ids=lambda r: f"{r.experiment}:{r.table}")
def test_rows_read_the_committed_quick_files(row):
    """The quick forms write the full runs' columns: each row's reading works on them."""
    res = rt.Results(ROOT / "results" / "quick" / f"{row.experiment}.json")
    if row.experiment in IN_QUICK or row.table.endswith("SRFE rows"):
        assert row.paper(res) and row.rflite(res)
    else:
        with pytest.raises(LookupError, match=row.experiment):
            row.rflite(res)


def test_speed_table_has_every_task_and_the_paired_floors():
    doc = json.loads((ROOT / "results" / "benchmarks.json").read_text())
    table = rt.speed_table().splitlines()[2:]
    tasks = {(dict(zip(doc["columns"], r))["task"], dict(zip(doc["columns"], r))["timing"])
             for r in doc["rows"]}
    assert len(table) == len(tasks)
    paired = [line for line in table if "(paired)" in line]
    assert paired and all(line.rstrip(" |").endswith("x") for line in paired)


@pytest.mark.parametrize("value, text", [
    (3.2, "3.2"), (1310.0, "1310"), (0.0109, "0.0109"), (4.98e-12, "4.98e-12"),
    (6.39e-4, "6.39e-4"), (12345.0, "1.23e4"), (0, "0"), (None, "-"), ("x", "x")])
def test_num(value, text):
    assert rt.num(value) == text
