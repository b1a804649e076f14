"""``mxnet.sym``/``mxnet.symbol``: ``Symbol``, ``Group``, ``var``/``Variable`` and the op namespace.

There are no symbolic graphs here: a hybridized block is traced by JAX and ``F`` is ``mxnet.nd`` in both
modes, so inside a forward nothing is ever a ``Symbol`` (``isinstance(x, mx.sym.Symbol)`` is False and
MXNet-era code takes its NDArray branches).  ``var`` names an input (``SymbolBlock``); a block called with
``var`` placeholders gives a ``Symbol`` (``ast_hybrid.gluon.symbolic``: names, arguments, ``infer_shape``,
``eval``, as MXNet's chapter uses it); the ops are ``ast_hybrid.sym``'s.
"""

from __future__ import annotations

from ast_hybrid.mxnet._missing import unsupported
from ast_hybrid.gluon.symbolic import Symbol
from ast_hybrid.sym import Variable, var

__all__ = ["Symbol", "Group", "Variable", "var"]

_NO_GRAPHS = "ast-hybrid builds no symbolic graphs: a hybridized block is one jax program " \
             "(HybridBlock.export writes it; SymbolBlock.imports reads MXNet's -symbol.json)"



def Group(symbols):  # noqa: N802  (MXNet's name)
    raise unsupported("mxnet.symbol", "Group", _NO_GRAPHS)


def load(fname):
    raise unsupported("mxnet.symbol", "load", _NO_GRAPHS)


def load_json(json_str):
    raise unsupported("mxnet.symbol", "load_json", _NO_GRAPHS)


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
