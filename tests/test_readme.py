"""Every Python example in README.md runs as written."""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
# the Dask example needs a running cluster
RUNNABLE = [b for b in BLOCKS if "scheduler-address" not in b]


def test_readme_has_examples():
    assert len(RUNNABLE) >= 8


@pytest.mark.slow(reason="README examples at full size, about 10 s")
@pytest.mark.parametrize("code", RUNNABLE, ids=lambda c: c.split("import")[1].split()[0])
def test_readme_example_runs(code, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    exec(compile(code, str(README), "exec"), {"__name__": "readme_example"})
    assert capsys.readouterr().out.strip()  # every example prints something


def test_quick_start_is_two_commands_and_ci_runs_the_second_verbatim():
    """The Quick start's second command is the fast lane CI runs, character for character."""
    text = README.read_text()
    block = re.search(r"## Quick start\s+```bash\n(.*?)```", text, flags=re.S)
    assert block is not None
    commands = [line for line in block.group(1).splitlines() if line.strip()]
    assert len(commands) == 2
    assert commands[1].startswith('python -m pip install ".[test]"')
    ci = (README.parent / ".ci" / "run").read_text().splitlines()
    assert commands[1] in ci
