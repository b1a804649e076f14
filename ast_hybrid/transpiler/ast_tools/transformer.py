"""The base of every pass: a gast ``NodeTransformer`` that keeps the user's locations.

- A node returned in place of another (or a list of statements) inherits the
  replaced node's location wherever it has none (:func:`~ast_hybrid.transpiler.ast_tools.origin.copy_origin`),
  so everything a pass creates points back at the user's source.
- ``skip_scopes = True`` makes the pass leave nested functions, lambdas,
  classes and comprehensions alone (a ``break`` inside a nested function is
  that function's business).
- ``statements_only = True`` makes the walk enter only the statement lists of
  statements (bodies, ``else`` clauses, handlers, match cases), never an
  expression: for passes that rewrite statements and nothing else.
- :meth:`transform_body` runs the pass over a function's statements,
  splicing statements that became lists.

The walk is :class:`ast.NodeTransformer`'s, made cheaper where conversion time
goes (``bench/control_flow.py``): the ``visit_*`` method of each node class is
looked up once per pass class, and Load/Store contexts (leaves that no pass
rewrites) are never visited.
"""

from __future__ import annotations

import gast

from ast_hybrid.common.walkers import SCOPES
from .origin import copy_origin

__all__ = ["Transformer"]

_AST = gast.AST
_LEAVES = frozenset({gast.Load, gast.Store, gast.Del, gast.Param})
#: the fields of a statement (or handler, or match case) that hold statements
_BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


class Transformer(gast.NodeTransformer):
    skip_scopes = False
    statements_only = False
    _methods: dict = {}

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        cls._methods = {}

    def visit(self, node):
        cls = node.__class__
        if self.skip_scopes and cls in SCOPES:
            return node
        try:
            method = self._methods[cls]
        except KeyError:
            method = self._methods[cls] = getattr(type(self), "visit_" + cls.__name__, None)
        new = self.generic_visit(node) if method is None else method(self, node)
        if new is not node and new is not None:
            copy_origin(node, new)
        return new

    def generic_visit(self, node):
        if self.statements_only:
            fields = [f for f in _BLOCK_FIELDS if f in node._fields]
        else:
            fields = node._fields
        for field in fields:
            old = getattr(node, field, None)
            if old.__class__ is list:
                if not old:
                    continue
                new_values = []
                for value in old:
                    if isinstance(value, _AST):
                        value = self.visit(value)
                        if value is None:
                            continue
                        if not isinstance(value, _AST):
                            new_values.extend(value)
                            continue
                    new_values.append(value)
                old[:] = new_values
            elif isinstance(old, _AST) and old.__class__ not in _LEAVES:
                new = self.visit(old)
                if new is None:
                    delattr(node, field)
                else:
                    setattr(node, field, new)
        return node

    def visit_block(self, stmts) -> list:
        out = []
        for s in stmts:
            new = self.visit(s)
            if isinstance(new, list):
                out.extend(new)
            elif new is not None:
                out.append(new)
        return out

    def transform_body(self, fn):
        """Run over ``fn``'s own statements (not its signature); returns ``fn``."""
        fn.body = self.visit_block(fn.body) or [gast.Pass()]
        return fn
