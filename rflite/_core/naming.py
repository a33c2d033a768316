"""The public name of an object defined in a private module."""

from __future__ import annotations


def publish(module_name: str, *objects) -> None:
    """Report ``module_name`` as the ``__module__`` of ``objects``.

    A public module re-exports functions, classes and result types that its
    private subpackage defines; they show as the public module's in ``help()``
    and the documentation, and pickles name the module users import them
    from, which outlives a later move of the definition.
    """
    for obj in objects:
        obj.__module__ = module_name
