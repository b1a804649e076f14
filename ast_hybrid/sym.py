"""``from ast_hybrid import sym``: the op namespace (``ast_hybrid.ops``) plus ``var``/``Variable``.

In MXNet, ``sym`` builds graphs; here a hybridized block is traced by JAX, so
``sym`` offers the same ops as ``nd``'s ``F`` and ``var`` placeholders that
name an input (with optional shape/dtype), as ``SymbolBlock`` inputs do.

    >>> var('data', shape=(1, 512))
    Variable(data, shape=(1, 512), dtype=None)
"""

from __future__ import annotations

__all__ = ["var", "Variable"]


class Variable:
    """A named input placeholder (``sym.var('data')``)."""

    def __init__(self, name, shape=None, dtype=None, **attrs):
        self.name, self.shape, self.dtype, self.attrs = name, shape, dtype, attrs

    def __repr__(self):
        return f"Variable({self.name}, shape={self.shape}, dtype={self.dtype})"

    def list_arguments(self):
        return [self.name]


def var(name, shape=None, dtype=None, **attrs):
    return Variable(name, shape=shape, dtype=dtype, **attrs)


def __getattr__(name):
    from ast_hybrid import ops

    try:
        return getattr(ops, name)
    except AttributeError:
        raise AttributeError(f"module 'ast_hybrid.sym' has no attribute {name!r}") from None
