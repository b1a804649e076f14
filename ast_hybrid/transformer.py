"""The base of every pass: a gast ``NodeTransformer`` that keeps the user's locations.

- A node returned in place of another (or a list of statements) inherits the
  replaced node's location wherever it has none (:func:`~ast_hybrid.origin.copy_origin`),
  so everything a pass creates points back at the user's source.
- ``skip_scopes = True`` makes the pass leave nested functions, lambdas,
  classes and comprehensions alone (a ``break`` inside a nested function is
  that function's business).
- :meth:`transform_body` runs the pass over a function's statements,
  splicing statements that became lists.
"""

from __future__ import annotations

import gast

from .analysis import SCOPES
from .origin import copy_origin

__all__ = ["Transformer"]


class Transformer(gast.NodeTransformer):
    skip_scopes = False

    def visit(self, node):
        if self.skip_scopes and isinstance(node, SCOPES):
            return node
        new = super().visit(node)
        if new is not node and new is not None:
            copy_origin(node, new)
        return new

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
