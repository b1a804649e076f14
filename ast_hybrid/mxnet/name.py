"""``mxnet.name``: MXNet's ``NameManager`` and ``Prefix``, the name managers of graph nodes.

Entered (``with mx.name.NameManager():``, ``with mx.name.Prefix('net_'):``), one names the ``mx.sym`` nodes
made inside it in this thread, as MXNet's does (``convolution0``, ``net_dense0``); blocks' ``name_scope()``
enter their own (``ast_hybrid/symbol/graph.py``, where the managers live).
"""

from __future__ import annotations

from ast_hybrid.symbol import graph as _graph

__all__ = ["NameManager", "Prefix"]


class NameManager:
    """Names a node ``name`` if given, else ``hint`` and a counter per hint (``relu0``, ``relu1``...)."""

    def __init__(self):
        self._counter = {}
        self._old_manager = None

    def get(self, name, hint):
        if name:
            return name
        n = self._counter.get(hint, 0)
        self._counter[hint] = n + 1
        return f"{hint}{n}"

    def __enter__(self):
        _graph.enter_manager(self)
        return self

    def __exit__(self, ptype, value, trace):
        _graph.exit_prefix()


class Prefix(NameManager):
    """A ``NameManager`` that puts ``prefix`` before every name it gives."""

    def __init__(self, prefix):
        super().__init__()
        self._prefix = prefix

    def get(self, name, hint):
        return self._prefix + super().get(name, hint)
