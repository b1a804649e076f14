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
- A pass that rewrites only some nodes says which (``wants(node)``): :meth:`transform_body`
  then finds them first in one cheap walk (:func:`~ast_hybrid.common.walkers.children`) and the
  pass enters only the subtrees that hold one; every other node is left as it is, as a full walk
  that visits it would leave it.

The walk is :class:`ast.NodeTransformer`'s, made cheaper where conversion time
goes (``bench/control_flow.py``): the ``visit_*`` method of each node class is
looked up once per pass class, and the fields of each node class that can
hold a node to rewrite are listed once: contexts, operators, names and flags
(leaves no pass rewrites) are never visited.
"""

from __future__ import annotations

import gast

from ast_hybrid.common.walkers import SCOPES, children
from .origin import copy_origin

__all__ = ["Transformer"]

_AST = gast.AST
_NAME, _CONSTANT = gast.Name, gast.Constant
_LEAVES = frozenset({gast.Load, gast.Store, gast.Del, gast.Param})
#: the fields of a statement (or handler, or match case) that hold statements
_BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")
#: fields that never hold a node a pass rewrites: contexts, operators, identifiers, flags
_LEAF_FIELDS = frozenset({"ctx", "op", "ops", "id", "attr", "arg", "kind", "type_comment", "is_async",
                          "level", "module", "conversion"})
_FIELDS: dict = {}          # (node class, statements_only) -> the fields generic_visit walks


def _fields(cls, statements_only):
    if statements_only:
        got = tuple(f for f in _BLOCK_FIELDS if f in cls._fields)
    else:
        got = tuple(f for f in cls._fields if f not in _LEAF_FIELDS)
    _FIELDS[cls, statements_only] = got
    return got


def _holding(stmts, wants, skip_scopes) -> set:
    """The ids of the nodes under ``stmts`` (those included) whose subtree holds a node ``wants``."""
    held = set()

    def walk(node):
        hit = wants(node)
        if not (skip_scopes and node.__class__ in SCOPES):
            for child in children(node):
                cls = child.__class__
                if cls is _CONSTANT or (cls is _NAME and child.annotation is None):   # nothing under it
                    if wants(child):
                        held.add(id(child))
                        hit = True
                elif walk(child):
                    hit = True
        if hit:
            held.add(id(node))
        return hit

    for s in stmts:
        walk(s)
    return held


class Transformer(gast.NodeTransformer):
    skip_scopes = False
    statements_only = False
    #: ``wants(node) -> bool``: the only nodes the pass changes (then it walks only to them), or None
    wants = None
    _holding = None
    _methods: dict = {}

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        cls._methods = {}

    def visit(self, node):
        cls = node.__class__
        if self.skip_scopes and cls in SCOPES:
            return node
        if self._holding is not None and id(node) not in self._holding:
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
        key = (node.__class__, self.statements_only)
        fields = _FIELDS.get(key)
        if fields is None:
            fields = _fields(*key)
        d = node.__dict__
        for field in fields:
            old = d.get(field)
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
        if self.wants is not None:
            self._holding = _holding(fn.body, type(self).wants, self.skip_scopes)
        try:
            fn.body = self.visit_block(fn.body) or [gast.Pass()]
        finally:
            self._holding = None
        return fn
