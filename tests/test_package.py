"""The package namespace: everything ``rflite.__all__`` promises is importable."""

import rflite


def test_all_names_exist():
    missing = [name for name in rflite.__all__ if not hasattr(rflite, name)]
    assert missing == []


def test_sources_compile_without_warnings():
    """No invalid escape sequences (a docstring with LaTeX and no ``r`` prefix):
    Python warns on each import from source and will make them errors."""
    import pathlib
    import warnings

    root = pathlib.Path(__file__).resolve().parents[1]
    files = [p for d in ("rflite", "tests", "benchmarks") for p in (root / d).rglob("*.py")]
    assert files
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for path in files:
            compile(path.read_text(encoding="utf-8"), str(path), "exec")
