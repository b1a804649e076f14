"""``mxnet.sym``/``mxnet.symbol``: ``Symbol``, ``Group``, ``var``/``Variable`` and the op namespace.

A block called with Symbols, and ``sym`` ops given Symbols, build MXNet's graph (``ast_hybrid.gluon.symbolic``:
names, arguments, ``get_internals``, ``infer_shape``, ``eval``; ``gluon.SymbolBlock(outputs, inputs, params)``
runs one).  Inside a forward run on arrays (hybridized or not) ``F`` is ``mxnet.nd``, so MXNet-era code takes
its NDArray branches there.  No MXNet graph JSON is read or written (``load``, ``tojson``).
"""

from __future__ import annotations

from ast_hybrid.mxnet._missing import unsupported
from ast_hybrid.gluon.symbolic import Symbol
from ast_hybrid.sym import Group, Variable, var

__all__ = ["Symbol", "Group", "Variable", "var"]

_NO_JSON = "ast-hybrid reads no MXNet graph JSON: HybridBlock.export writes a program SymbolBlock.imports reads"


def load(fname):
    raise unsupported("mxnet.symbol", "load", _NO_JSON)


def load_json(json_str):
    raise unsupported("mxnet.symbol", "load_json", _NO_JSON)


def __getattr__(name):
    """The ops (``mx.sym.relu``) are ``ast_hybrid.sym``'s; a name MXNet has and we do not names the API."""
    from ast_hybrid import sym
    from ast_hybrid.mxnet._missing import module_getattr

    if not name.startswith("__"):
        try:
            return getattr(sym, name)
        except AttributeError:
            pass
    return module_getattr("mxnet.symbol", __name__)(name)
