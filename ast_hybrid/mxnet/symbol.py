"""``mxnet.sym``/``mxnet.symbol``: ``Symbol``, ``Group``, ``var``/``Variable`` and the op namespace.

A block called with Symbols, and ``sym`` ops given Symbols, build MXNet's graph (``ast_hybrid.symbol.graph``:
names, arguments, ``get_internals``, ``infer_shape``, ``eval``; ``gluon.SymbolBlock(outputs, inputs, params)``
runs one).  Inside a forward run on arrays (hybridized or not) ``F`` is ``mxnet.nd``, so MXNet-era code takes
its NDArray branches there.  ``load``/``load_json`` read MXNet's graph JSON; ``tojson`` is not there.
"""

from __future__ import annotations

from ast_hybrid.symbol.graph import Symbol
from ast_hybrid.sym import Group, Variable, var

__all__ = ["Symbol", "Group", "Variable", "var"]


def load(fname):
    """MXNet's ``-symbol.json`` file as a Symbol (``symbol.graph.load_json``)."""
    with open(fname) as f:
        return load_json(f.read(), where=str(fname))


def load_json(json_str, where="the graph JSON"):
    from ast_hybrid.symbol.graph import load_json as _load

    return _load(json_str, where)


def __getattr__(name):
    """The ops (``mx.sym.relu``) are ``ast_hybrid.sym``'s; a name MXNet has and we do not names the API."""
    from ast_hybrid import sym
    from ast_hybrid.mxnet._missing import module_getattr

    if name in ("np", "numpy"):       # mx.sym.np: mx.np's functions, recording nodes when given Symbols
        from ast_hybrid import mxnp

        return sym.NumpyNamespace(mxnp, ("np",))
    if name == "image":      # mx.sym.image: mx.nd.image's operators, recording nodes when given Symbols
        from ast_hybrid.image import nd_image

        return sym.OpNamespace(nd_image, ("image",))
    if not name.startswith("__"):
        try:
            return getattr(sym, name)
        except AttributeError:
            pass
    return module_getattr("mxnet.symbol", __name__)(name)
