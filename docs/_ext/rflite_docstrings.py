"""Docstring preprocessing for the rflite API pages.

* **Sections numpydoc does not know** (``The default``, ``Cost``,
  ``Reproducibility`` ... in class and function docstrings) would be dropped
  by numpydoc with a warning.  :func:`keep_unknown_sections` moves each of them
  into the ``Notes`` section under a rubric of the same title, before numpydoc
  runs, so their text reaches the page.
* **Attribute names in running text** (``support_`` without backquotes) are
  hyperlink references in reStructuredText and fail the build for want of a
  target; :func:`escape_trailing_underscores` escapes them (``support\\_``)
  outside literals, roles, math and literal blocks, after numpydoc ran.
* **Summary lines** whose inline literals contain ". " (``t = 0 .. T``) are cut
  there by autosummary's sentence splitter; :func:`protect_summary` puts a
  zero-width space after such dots, for autosummary's tables only.
* **"\\n" in a non-raw docstring** (``:math:`\\nu``` written in a plain string
  is ``:math:`` + newline + ``u```) breaks the line and the docstring's
  indentation; :func:`repair_newline_escapes` joins such lines back and
  dedents.  A stop-gap for the docstring, reported by ``tests/test_docs.py``.
* **A role whose content ends in a space** (``:math:`f = ```) is not inline
  markup; :func:`repair_role_spaces` strips the space.  Also a stop-gap
  reported by the tests.
* **Module constants** (``rflite.imp.GUARD_RATIO`` ...) are documented by
  ``#:`` comments where they are defined, which is often a private module
  whose value the public module re-exports.  :func:`constant_doc` finds that
  comment (autodoc would otherwise show the docstring of ``tuple`` or
  ``float``) and appends the value, shortened.

The test suite (``tests/test_docs.py``) imports this file to render every
public docstring the way the build does.
"""

from __future__ import annotations

import importlib
import pkgutil
import re

#: Section titles numpydoc parses (``NumpyDocString.sections``).
NUMPYDOC_SECTIONS = {
    "Signature", "Summary", "Extended Summary", "Parameters", "Returns", "Yields",
    "Receives", "Raises", "Warns", "Other Parameters", "Attributes", "Methods",
    "See Also", "Notes", "Warnings", "References", "Examples", "index",
}

_UNDERLINE = re.compile(r"^\s*-{3,}\s*$")

#: Longest ``repr`` of a constant's value shown on its page.
VALUE_REPR_MAX = 200


def _canonical(title: str) -> str:
    # numpydoc's own normalisation of a section title
    return " ".join(s.capitalize() for s in title.strip().split(" "))


def _split_sections(lines):
    """``[(title or None, header_lines, body_lines)]`` in order."""
    blocks = [[None, [], []]]
    i = 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if (line.strip() and not line.startswith((" ", "\t")) and _UNDERLINE.match(nxt)
                and len(nxt.strip()) >= len(line.strip()) - 1):
            blocks.append([line.strip(), [line, nxt], []])
            i += 2
            continue
        blocks[-1][2].append(line)
        i += 1
    return blocks


def keep_unknown_sections(lines: list[str]) -> list[str]:
    """Move the sections numpydoc does not know into ``Notes`` as rubrics."""
    blocks = _split_sections(lines)
    known, moved = [], []
    for title, header, body in blocks:
        if title is None or _canonical(title) in NUMPYDOC_SECTIONS or title in NUMPYDOC_SECTIONS:
            known.append([title, header, body])
        else:
            moved.append((title, body))
    if not moved:
        return list(lines)
    extra = []
    for title, body in moved:
        while body and not body[-1].strip():
            body = body[:-1]
        extra += ["", f".. rubric:: {title}", ""] + body
    notes = next((b for b in known if b[0] is not None and _canonical(b[0]) == "Notes"), None)
    if notes is None:
        known.append(["Notes", ["Notes", "-----"], extra[1:]])
    else:
        while notes[2] and not notes[2][-1].strip():
            notes[2].pop()
        notes[2].extend(extra)
    out = []
    for title, header, body in known:
        if title is not None and out and out[-1].strip():
            out.append("")
        out += header + body
    return out


# inline markup that must be left alone: literals, roles, interpreted text,
# hyperlink references, strong and emphasis
_SPANS = re.compile(r"``.+?``|:[\w:+.-]+:`.+?`|`[^`]+`_{0,2}|\*\*.+?\*\*|\*[^*\s][^*]*\*", re.S)
_BARE_REF = re.compile(r"(?<![\w\\`*|])([A-Za-z][\w.]*[A-Za-z0-9])_(?![\w`])")


def _escape_text(text: str) -> str:
    out, pos = [], 0
    for m in _SPANS.finditer(text):
        out.append(_BARE_REF.sub(r"\1\\_", text[pos:m.start()]))
        out.append(m.group(0))
        pos = m.end()
    out.append(_BARE_REF.sub(r"\1\\_", text[pos:]))
    return "".join(out)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def escape_trailing_underscores(lines: list[str]) -> list[str]:
    """Escape ``name_`` outside inline markup and literal / directive blocks."""
    out: list[str] = []
    chunk: list[str] = []
    block = None  # indentation of the line opening a literal or directive block
    doctest = False

    def flush():
        if chunk:
            out.extend(_escape_text("\n".join(chunk)).split("\n"))
            chunk.clear()

    for line in lines:
        stripped = line.strip()
        if block is not None:
            if not stripped or _indent(line) > block:
                out.append(line)
                continue
            block = None
        if doctest:
            if stripped:
                out.append(line)
                continue
            doctest = False
        if stripped.startswith(">>>"):
            flush()
            doctest = True
            out.append(line)
            continue
        if stripped.endswith("::") or stripped.startswith(".. "):
            flush()
            out.append(_escape_text(line) if not stripped.startswith(".. ") else line)
            block = _indent(line)
            continue
        if not stripped:
            flush()
            out.append(line)
            continue
        chunk.append(line)
    flush()
    return out


_BROKEN_ROLE = re.compile(r":[\w:+.-]+:`$")


def repair_newline_escapes(lines: list[str]) -> list[str]:
    """Join ``...:math:``` + newline + ``u`...`` back into ``...:math:`\\nu`...``."""
    if not any(_BROKEN_ROLE.search(line) for line in lines):
        return list(lines)
    out: list[str] = []
    i = 0
    changed = False
    while i < len(lines):
        line = lines[i]
        if (_BROKEN_ROLE.search(line) and i + 1 < len(lines)
                and re.match(r"[A-Za-z]+`", lines[i + 1])):
            out.append(line + "\\n" + lines[i + 1])
            changed = True
            i += 2
            continue
        out.append(line)
        i += 1
    if not changed:
        return out
    margin = min((_indent(line) for line in out[1:] if line.strip()), default=0)
    return out[:1] + [line[margin:] for line in out[1:]]


_ROLE_SPACE = re.compile(r"(:[\w:+.-]+:`[^`]*?[^`\s])\s+`")


def repair_role_spaces(lines: list[str]) -> list[str]:
    """``:math:`f = ``` -> ``:math:`f =```."""
    text = "\n".join(lines)
    fixed = _ROLE_SPACE.sub(r"\1`", text)
    return list(lines) if fixed == text else fixed.split("\n")


def protect_summary(lines: list[str]) -> list[str]:
    """Keep autosummary from cutting the summary inside an inline literal."""
    lines = list(lines)
    start = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    stanza = "\n".join(lines[start:end])
    # a zero-width space between the dot and the space: autosummary's sentence
    # splitter (``\.\s+``) no longer matches, and the text looks the same
    stanza = re.sub(r"``.+?``", lambda m: m.group(0).replace(". ", ".\u200b "), stanza, flags=re.S)
    return lines[:start] + stanza.split("\n") + lines[end:]


_COMMENTS: dict[tuple[str, str], list[str]] | None = None


def _module_comments() -> dict[tuple[str, str], list[str]]:
    """``(module, NAME) -> #: comment lines`` for every importable rflite module."""
    global _COMMENTS
    if _COMMENTS is None:
        from sphinx.pycode import ModuleAnalyzer

        import rflite

        names = ["rflite"] + [m.name for m in pkgutil.walk_packages(rflite.__path__, "rflite.")
                              if not m.name.startswith(("rflite.experiments", "rflite.__main__",
                                                        "rflite.cli"))]
        _COMMENTS = {}
        for name in names:
            try:
                docs = ModuleAnalyzer.for_module(name).find_attr_docs()
            except Exception:  # a module without source: nothing to find
                continue
            for (cls, attr), doc in docs.items():
                if not cls:
                    _COMMENTS[(name, attr)] = [line for line in doc if line is not None]
    return _COMMENTS


def constant_doc(module: str, name: str, obj) -> list[str]:
    """The ``#:`` comment of constant ``module.name`` (public or where it is defined)."""
    comments = _module_comments()
    if (module, name) in comments:
        return list(comments[(module, name)])
    for (home, attr), doc in sorted(comments.items()):
        if attr != name:
            continue
        try:
            if getattr(importlib.import_module(home), name) is obj:
                return list(doc)
        except Exception:
            continue
    return []


def _short_repr(obj) -> str:
    text = " ".join(repr(obj).split())
    return text if len(text) <= VALUE_REPR_MAX else text[: VALUE_REPR_MAX - 4] + " ..."


def _process(app, what, name, obj, options, lines):
    if what in ("data", "attribute") and "." in name and name.startswith("rflite"):
        module, attr = name.rsplit(".", 1)
        # the #: comment of the constant (autodoc falls back on the docstring
        # of its type, e.g. numpy.ndarray's, when the public module has none)
        lines[:] = constant_doc(module, attr, obj) + ["", f"Value: ``{_short_repr(obj)}``", ""]
        return
    if what in ("class", "exception", "function", "method", "property"):
        lines[:] = keep_unknown_sections(repair_role_spaces(repair_newline_escapes(lines)))


def _after_numpydoc(app, what, name, obj, options, lines):
    lines[:] = escape_trailing_underscores(lines)


def _patch_autosummary_summary():
    """autosummary cuts a summary at ". " even inside an inline literal (it
    checks the cut by reparsing the whole stanza, not the cut text); protect
    such literals first."""
    from sphinx.ext import autosummary

    original = autosummary.extract_summary
    if getattr(original, "_rflite", False):
        return

    def extract_summary(doc, settings):
        return original(protect_summary(list(doc)) if doc else doc, settings)

    extract_summary._rflite = True
    autosummary.extract_summary = extract_summary


def setup(app):
    _patch_autosummary_summary()
    # before numpydoc's handler (priority 500), which drops unknown sections
    app.connect("autodoc-process-docstring", _process, priority=400)
    app.connect("autodoc-process-docstring", _after_numpydoc, priority=600)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
