"""``from ast_hybrid import sym``: MXNet's ``mx.sym``: ``var``/``Variable``, ``Group`` and the op namespace.

Given a Symbol, an op builds a graph node (``symbol/recorder.py``), as in MXNet::

    >>> from ast_hybrid import sym
    >>> x = sym.var('data')
    >>> y = sym.Convolution(x, num_filter=8, kernel=(3, 3), name='conv')
    >>> y.list_arguments()
    ['data', 'conv_weight', 'conv_bias']

Given arrays, an op computes as ``nd``'s does (MXNet would build a graph of constants; code that calls
``sym`` ops on NDArrays wants their values).
"""

from __future__ import annotations

import types

from ast_hybrid.symbol.graph import Symbol, group, variable
from ast_hybrid.symbol.recorder import op_recorder

__all__ = ["var", "Variable", "Group", "Symbol"]


def var(name, attr=None, shape=None, lr_mult=None, wd_mult=None, dtype=None, init=None, stype=None, **kwargs):
    """A placeholder named ``name`` (MXNet's ``sym.var``), optionally with its shape and dtype."""
    attrs = dict(attr or {})
    attrs.update({f"__{k}__": v for k, v in kwargs.items()})
    if lr_mult is not None:
        attrs["__lr_mult__"] = str(lr_mult)
    if wd_mult is not None:
        attrs["__wd_mult__"] = str(wd_mult)
    if init is not None:
        attrs["__init__"] = init if isinstance(init, str) else init.dumps()
    if stype is not None:
        attrs["__storage_type__"] = str({"default": 0, "row_sparse": 1, "csr": 2}[stype])
    return variable(name, shape=shape, dtype=dtype, **attrs)


Variable = var


def Group(symbols):  # noqa: N802  (MXNet's name)
    return group(symbols)


_ALIASES = {"pow": "power"}      # mx.sym's own names (symbol.py: ``pow`` is ``power``, being deprecated)


def __getattr__(name):
    from ast_hybrid import ops

    try:
        op = getattr(ops, _ALIASES.get(name, name))
    except AttributeError:
        raise AttributeError(f"module 'ast_hybrid.sym' has no attribute {name!r}") from None
    return _guarded(op, name, ())


def _guarded(op, name, path):
    if isinstance(op, types.ModuleType):          # sym.contrib, sym.linalg, sym.random...
        return _Namespace(op, (*path, name))
    if name in _OWN_MESSAGE:
        from ast_hybrid.symbol.recorder import custom_recorder

        return custom_recorder(op)
    if not callable(op) or isinstance(op, type):
        return op
    return op_recorder(op, name, path)


class _Namespace:
    """``sym.contrib`` and the like: the op module, its ops building nodes when given Symbols."""

    __slots__ = ("_module", "_path")

    def __init__(self, module, path):
        self._module, self._path = module, path

    @property
    def __dict__(self):
        """The namespace's names, as MXNet's module's (``'box_decode' in F.contrib.__dict__``)."""
        return dict(self._module.__dict__)     # a copy: GluonCV's export_block pops from it

    def __getattr__(self, attr):
        return _guarded(getattr(self._module, attr), attr, self._path)

    def __dir__(self):
        return dir(self._module)

    def __repr__(self):
        return f"<sym.{'.'.join(self._path)}: {self._module.__name__}>"


OpNamespace = _Namespace      # (the door's mx.sym.image is one)

_OWN_MESSAGE = {"Custom"}      # its node's inputs and outputs are its CustomOpProp's (symbol/recorder.py)


class NumpyNamespace(_Namespace):
    """``mx.sym.np``: ``mx.np``'s functions (a module given by the caller) building nodes when given Symbols
    (``_Symbol``: MXNet's numpy-flavoured Symbol class, here the one Symbol class)."""

    _Symbol = Symbol
