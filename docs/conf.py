"""Sphinx configuration of the rflite documentation.

Build (from the repository root)::

    sphinx-build -W --keep-going -b html docs docs/_build/html

``RFLITE_DOCS_GALLERY=0`` builds the gallery pages without running the
examples (sphinx-gallery's ``plot_gallery = False``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(DOCS / "_ext"))

import rflite  # noqa: E402

# -- project -----------------------------------------------------------------
project = "rflite"
author = "rflite developers"
copyright = "rflite developers"
version = release = rflite.__version__

# -- extensions --------------------------------------------------------------
extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
    "rflite_results",
    "rflite_docstrings",
]

templates_path = ["_templates"]
exclude_patterns = [
    "_build",
    "examples",
    "runs",
    "README.txt",
    "auto_examples/*.ipynb",
    "auto_examples/*.py",
    "auto_examples/*.zip",
    "auto_examples/*.md5",
    "auto_examples/*.pickle",
    "**/*.codeobj.json",
    "sg_execution_times.rst",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"

# -- autodoc / autosummary / numpydoc -----------------------------------------
autosummary_generate = True
autosummary_imported_members = False
autodoc_typehints = "none"
autodoc_inherit_docstrings = False
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False

# -- HTML --------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"rflite {release}"
html_static_path = []
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_sidebars = {"changelog": []}

# -- MyST (the changelog is Markdown) ------------------------------------------
myst_heading_anchors = 3
suppress_warnings = ["myst.header"]

# -- sphinx-gallery --------------------------------------------------------------
_run_gallery = os.environ.get("RFLITE_DOCS_GALLERY", "1").strip().lower() not in {
    "0", "false", "no", "off", ""}

sphinx_gallery_conf = {
    "examples_dirs": ["examples"],
    "gallery_dirs": ["auto_examples"],
    "filename_pattern": r"/plot_",
    "plot_gallery": _run_gallery,
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "abort_on_example_error": True,
    "reset_modules": ("matplotlib",),
}

# Results tables (docs/_ext/rflite_results.py): JSON files under results/ at the
# repository root, and optional hand-made includes under docs/_generated/.
# RFLITE_DOCS_RESULTS points elsewhere (e.g. to try a set of result files).
rflite_results_dir = os.environ.get("RFLITE_DOCS_RESULTS", str(ROOT / "results"))
rflite_generated_dir = str(DOCS / "_generated")
