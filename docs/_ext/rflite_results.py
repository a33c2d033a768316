"""Render experiment results (JSON files) as tables when the docs are built.

Two directives:

``.. rflite-results::``
    One table per JSON file found in ``rflite_results_dir`` (``results/`` at
    the repository root).  Each file holds a dict with the keys
    ``experiment`` (name), ``command`` (the command that wrote it),
    ``columns`` (list of column names) and ``rows`` (list of lists), and
    optionally ``published`` (notes on the published numbers: a string, a list
    of strings or a dict).  Options:

    ``:experiments:``  space-separated experiment names or glob patterns
                       (matched against ``experiment`` and the file stem);
                       default: every file.
    ``:command:``      command shown when no file matches (default:
                       ``python -m rflite run NAME`` for each name given).

    With no matching file the directive shows "Not generated yet: run ...".
    Files of full runs (``results/full/``) come first and their titles say
    "full run"; those of the quick forms (``results/quick/``) follow,
    titled "quick form" (their numbers are not comparable with the papers').

``.. rflite-generated:: NAME.rst``
    Includes ``rflite_generated_dir/NAME.rst`` when it exists and shows
    "Not generated yet" (with the ``:command:`` option) otherwise, so a page
    can refer to an optional generated include without failing the build.

Pages using either directive are re-read on every build, so new or changed
result files show up without a clean build.
"""

from __future__ import annotations

import fnmatch
import json
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive, directives
from docutils.statemachine import StringList
from sphinx.util import logging

logger = logging.getLogger(__name__)

REQUIRED_KEYS = ("experiment", "command", "columns", "rows")
#: Subfolders of the results folder: (order on a page, what a table's title says).
FORMS = {"full": (0, "full run"), "quick": (2, "quick form, not comparable with the papers")}


def _form(path: Path, folder: Path) -> tuple[int, str | None]:
    """Where a results file goes on a page and how its title labels it."""
    parts = path.relative_to(folder).parts
    return FORMS.get(parts[0], (1, None)) if len(parts) > 1 else (1, None)


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _table(columns, rows) -> nodes.table:
    table = nodes.table(classes=["rflite-results"])
    group = nodes.tgroup(cols=len(columns))
    table += group
    for _ in columns:
        group += nodes.colspec(colwidth=1)
    head = nodes.thead()
    group += head
    row = nodes.row()
    for name in columns:
        row += nodes.entry("", nodes.paragraph(text=str(name)))
    head += row
    body = nodes.tbody()
    group += body
    for values in rows:
        row = nodes.row()
        values = list(values) + [None] * (len(columns) - len(values))
        for value in values[: len(columns)]:
            row += nodes.entry("", nodes.paragraph(text=_cell(value)))
        body += row
    return table


def _published(notes) -> list[nodes.Node]:
    if notes is None or notes == "" or notes == [] or notes == {}:
        return []
    para = nodes.paragraph()
    para += nodes.strong(text="Published: ")
    if isinstance(notes, str):
        para += nodes.Text(notes)
        return [para]
    items = nodes.bullet_list()
    if isinstance(notes, dict):
        for key, value in notes.items():
            items += nodes.list_item("", nodes.paragraph(text=f"{key}: {_cell(value)}"))
    else:
        for value in notes:
            items += nodes.list_item("", nodes.paragraph(text=_cell(value)))
    return [para, items]


def _not_generated(commands) -> nodes.Node:
    note = nodes.note()
    para = nodes.paragraph()
    para += nodes.Text("Not generated yet: run ")
    for i, command in enumerate(commands):
        if i:
            para += nodes.Text(" and " if i == len(commands) - 1 else ", ")
        para += nodes.literal(text=command)
    para += nodes.Text(" (the tables appear here at the next docs build).")
    note += para
    return note


def _mark_always_read(env) -> None:
    if not hasattr(env, "rflite_results_docs"):
        env.rflite_results_docs = set()
    env.rflite_results_docs.add(env.docname)


class ResultsDirective(Directive):
    has_content = False
    option_spec = {"experiments": directives.unchanged, "command": directives.unchanged}

    def run(self):
        env = self.state.document.settings.env
        _mark_always_read(env)
        folder = Path(env.config.rflite_results_dir)
        patterns = (self.options.get("experiments") or "").split()
        commands = ([self.options["command"]] if self.options.get("command")
                    else [f"python -m rflite run {p}" for p in patterns]
                    or ["python -m rflite run NAME"])
        out: list[nodes.Node] = []
        paths = sorted(folder.glob("**/*.json")) if folder.is_dir() else []
        for path in sorted(paths, key=lambda p: (_form(p, folder)[0], p)):
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                logger.warning("rflite-results: cannot read %s: %s", path, exc,
                               location=(env.docname, self.lineno))
                continue
            if not isinstance(data, dict) or any(k not in data for k in REQUIRED_KEYS):
                # not a results table (another tool's JSON): skip silently
                continue
            name = str(data["experiment"])
            if patterns and not any(fnmatch.fnmatchcase(name, p)
                                    or fnmatch.fnmatchcase(path.stem, p) for p in patterns):
                continue
            env.note_dependency(str(path))
            columns = list(data["columns"])
            rows = list(data["rows"])
            if any(not isinstance(r, (list, tuple)) for r in rows):
                logger.warning("rflite-results: %s: rows must be lists", path,
                               location=(env.docname, self.lineno))
                continue
            label = _form(path, folder)[1]
            out.append(nodes.rubric(text=f"{name} ({label})" if label else name))
            para = nodes.paragraph()
            para += nodes.Text("Produced by ")
            para += nodes.literal(text=str(data["command"]))
            para += nodes.Text(f" ({path.relative_to(folder.parent).as_posix()}).")
            out.append(para)
            out.append(_table(columns, rows))
            out.extend(_published(data.get("published")))
        if not out:
            out.append(_not_generated(commands))
        return out


class GeneratedDirective(Directive):
    required_arguments = 1
    has_content = False
    option_spec = {"command": directives.unchanged}

    def run(self):
        env = self.state.document.settings.env
        _mark_always_read(env)
        path = Path(env.config.rflite_generated_dir) / self.arguments[0]
        if not path.is_file():
            command = self.options.get("command", "python -m rflite run NAME")
            return [_not_generated([command])]
        env.note_dependency(str(path))
        lines = path.read_text(encoding="utf-8").splitlines()
        container = nodes.container(classes=["rflite-generated"])
        self.state.nested_parse(StringList(lines, source=str(path)), 0, container)
        return container.children


def _outdated(app, env, added, changed, removed):
    return sorted(getattr(env, "rflite_results_docs", set()) - set(removed))


def _purge(app, env, docname):
    getattr(env, "rflite_results_docs", set()).discard(docname)


def _merge(app, env, docnames, other):
    _mark = getattr(other, "rflite_results_docs", set())
    if not hasattr(env, "rflite_results_docs"):
        env.rflite_results_docs = set()
    env.rflite_results_docs |= _mark


def setup(app):
    app.add_config_value("rflite_results_dir", "results", "env")
    app.add_config_value("rflite_generated_dir", "_generated", "env")
    app.add_directive("rflite-results", ResultsDirective)
    app.add_directive("rflite-generated", GeneratedDirective)
    app.connect("env-get-outdated", _outdated)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True,
            "env_version": 1}
