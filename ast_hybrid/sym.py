"""``from ast_hybrid import sym``: the op namespace (``ast_hybrid.ops``) plus ``var``/``Variable``.

In MXNet, ``sym`` builds graphs; here a hybridized block is traced by JAX, so
``sym`` offers the same ops as ``nd``'s ``F`` and ``var`` placeholders that
name an input (with optional shape/dtype), as ``SymbolBlock`` inputs do.

    >>> var('data', shape=(1, 512))
    Variable(data, shape=(1, 512), dtype=None)
"""

from __future__ import annotations

import functools
import types

__all__ = ["var", "Variable", "PlaceholderGiven"]


class PlaceholderGiven(TypeError):
    """An op of ``sym`` was given a ``var`` placeholder, as MXNet's graph-building code does."""


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
        op = getattr(ops, name)
    except AttributeError:
        raise AttributeError(f"module 'ast_hybrid.sym' has no attribute {name!r}") from None
    return _guarded(op, name)


def _guarded(op, name):
    if isinstance(op, types.ModuleType):          # sym.contrib, sym.linalg, sym.random...
        return _Namespace(op, name)
    if name.rpartition(".")[2] in _OWN_MESSAGE or not callable(op) or isinstance(op, type):
        return op
    return _refusing_placeholders(op, name)


class _Namespace:
    """``sym.contrib`` and the like: the op module, its ops refusing placeholders as ``sym``'s own."""

    def __init__(self, module, name):
        self._module, self._name = module, name

    def __getattr__(self, attr):
        return _guarded(getattr(self._module, attr), f"{self._name}.{attr}")

    def __dir__(self):
        return dir(self._module)

    def __repr__(self):
        return f"<sym.{self._name}: {self._module.__name__}>"


_OWN_MESSAGE = {"Custom"}      # says itself what a sym.var given to it means (ast_hybrid/operator.py)


def _refusing_placeholders(op, name):
    """``op`` as it is on arrays; given a :class:`Variable` (MXNet's ``sym.relu(sym.var('x'))``, building a
    graph), a :class:`PlaceholderGiven` that says what to write instead, not JAX's TypeError about the
    argument's type."""

    @functools.wraps(op)
    def call(*args, **kwargs):
        given = next((a for a in (*args, *kwargs.values()) if isinstance(a, Variable)), None)
        if given is not None:
            raise PlaceholderGiven(
                f"sym.{name} was given the placeholder {given!r}: ast-hybrid builds no symbolic graphs, "
                f"so a sym.var has no value to compute with. Write the computation in a HybridBlock's "
                f"hybrid_forward (F.{name}(x, ...)) and hybridize() it, or call nd.{name} on arrays; "
                f"to run a graph MXNet exported, use gluon.SymbolBlock.imports")
        return op(*args, **kwargs)

    return call
