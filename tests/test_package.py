"""The package namespace: everything ``rflite.__all__`` promises is importable."""

import rflite


def test_all_names_exist():
    missing = [name for name in rflite.__all__ if not hasattr(rflite, name)]
    assert missing == []
