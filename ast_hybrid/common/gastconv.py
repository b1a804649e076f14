"""ast <-> gast, each in one table-driven walk: what ``gast.ast_to_gast``/``gast_to_ast`` give, faster.

Conversion time (``bench/control_flow.py``) went largely to gast's generic
translators (a visitor method lookup, a dict of fields and ``copy_location``
per node).  Here each node becomes the class of the same name on the other
side, with that class's fields (so one code serves every Python version gast
supports); the differences between the two trees are the three gast documents:

- a parameter is an ``ast.arg`` in :mod:`ast` and a ``Name`` with a ``Param``
  context in gast;
- an ``except ... as name`` binds a string in :mod:`ast` and a ``Name`` in gast;
- gast's ``Name`` carries ``annotation``/``type_comment`` fields, and its
  ``FunctionDef``/``ClassDef`` ``type_params`` on every Python.

:func:`to_ast` also moves every location by a line and column offset (a
method's dedented source back to its file) and gives a node without one its
parent's (as :func:`ast.fix_missing_locations`).  ``tests/transpiler/test_gastconv.py``
checks both against gast's own translators on every function of MXNet's Gluon.
"""

from __future__ import annotations

import ast

import gast

__all__ = ["to_gast", "to_ast"]

_TO_GAST: dict = {ast.arg: (gast.Name, (), True)}    # a parameter is a Name in gast
_TO_AST: dict = {}
_AST_CTX = {gast.Load: ast.Load(), gast.Store: ast.Store(), gast.Del: ast.Del()}


def _twin(cls, module, table):
    target = getattr(module, cls.__name__, None)
    if target is None:
        raise TypeError(f"{cls.__module__}.{cls.__name__} has no twin in {module.__name__} on this Python")
    fields = tuple(f for f in target._fields if f in cls._fields) if module is ast else target._fields
    table[cls] = got = (target, fields, "lineno" in target._attributes and "lineno" in cls._attributes)
    return got


def to_gast(tree):
    """The gast tree of an :mod:`ast` tree (new nodes; ``tree`` is not changed)."""
    table = _TO_GAST
    name_cls, param, store = gast.Name, gast.Param, gast.Store

    def conv(node):
        cls = node.__class__
        got = table.get(cls)
        if got is None:
            got = _twin(cls, gast, table)
        target, fields, located = got
        new = target.__new__(target)
        d = new.__dict__
        src = node.__dict__
        if cls is ast.arg:
            d.update(id=node.arg, ctx=param(), type_comment=src.get("type_comment"))
            d["annotation"] = conv(node.annotation) if node.annotation is not None else None
        elif cls is ast.Name:     # its context shared, as the parser shares its own (no pass changes one)
            d.update(id=src["id"], ctx=contexts.get(src["ctx"].__class__) or conv(src["ctx"]), annotation=None,
                     type_comment=None)
        else:
            for f in fields:
                v = src.get(f, _MISSING)
                if v is _MISSING:
                    v = getattr(node, f, None)
                if v.__class__ is list:
                    d[f] = [conv(x) if isinstance(x, ast.AST) else x for x in v]
                elif isinstance(v, ast.AST):
                    d[f] = conv(v)
                else:
                    d[f] = v
            if cls is ast.ExceptHandler and node.name is not None:
                d["name"] = name_cls(node.name, store(), None, None)
            elif "type_params" in fields and "type_params" not in cls._fields:
                d["type_params"] = []
        if located:
            for a in _LOCATION:
                if a in src:
                    d[a] = src[a]
        return new

    contexts = {ast.Load: gast.Load(), ast.Store: gast.Store(), ast.Del: gast.Del()}   # one set per tree
    return conv(tree)


_MISSING = object()
_LOCATION = ("lineno", "col_offset", "end_lineno", "end_col_offset")
_PLAIN = frozenset({str, int, float, bool, bytes, complex})   # field values copied as they are


def to_ast(tree, line_offset: int = 0, col_offset: int = 0, root_location=None):
    """The :mod:`ast` twin of gast ``tree``, every location moved by the offsets.

    A node without a location takes its parent's (``root_location``, a
    ``(lineno, col, end_lineno, end_col)`` tuple in the moved coordinates, for the root).
    """
    dl, dc = line_offset, col_offset
    table = _TO_AST
    name_cls = gast.Name

    def located(node, loc):
        ln = getattr(node, "lineno", None)
        if ln is None:
            return loc
        col, el, ec = node.col_offset + dc, node.end_lineno, node.end_col_offset
        return (ln + dl, col, (ln if el is None else el) + dl, col + 1 if ec is None else ec + dc)

    def conv(node, loc):
        cls = node.__class__
        got = table.get(cls)
        if got is None:
            got = _twin(cls, ast, table)
        target, fields, has_loc = got
        new = target.__new__(target)
        d = new.__dict__
        src = node.__dict__
        if has_loc:
            ln = src.get("lineno")
            if ln is not None:     # located(node, loc), inlined: this runs for every node
                col, el, ec = src["col_offset"] + dc, src.get("end_lineno"), src.get("end_col_offset")
                loc = (ln + dl, col, (ln if el is None else el) + dl, col + 1 if ec is None else ec + dc)
            d["lineno"], d["col_offset"], d["end_lineno"], d["end_col_offset"] = loc
        if cls is name_cls:        # the most frequent node: its two fields directly
            ctx = _AST_CTX.get(src["ctx"].__class__)
            if ctx is not None:
                d["id"], d["ctx"] = src["id"], ctx
                return new
        if cls is gast.arguments:
            for f in ("posonlyargs", "args", "kwonlyargs"):
                d[f] = [param(a, loc) for a in getattr(node, f)]
            d["vararg"] = param(node.vararg, loc) if node.vararg is not None else None
            d["kwarg"] = param(node.kwarg, loc) if node.kwarg is not None else None
            d["kw_defaults"] = [conv(v, loc) if v is not None else None for v in node.kw_defaults]
            d["defaults"] = [conv(v, loc) for v in node.defaults]
            return new
        for f in fields:
            v = src.get(f)
            if v is None or v.__class__ in _PLAIN:
                d[f] = v
            elif v.__class__ is list:
                d[f] = [conv(x, loc) if isinstance(x, gast.AST) else x for x in v]
            elif isinstance(v, gast.AST):
                twin = _AST_CTX.get(v.__class__)
                if twin is not None:
                    d[f] = twin
                elif cls is gast.ExceptHandler and f == "name":
                    d[f] = v.id
                else:
                    d[f] = conv(v, loc)
            else:
                d[f] = v
        return new

    def param(name, loc):
        arg = ast.arg.__new__(ast.arg)
        a = arg.__dict__
        a["lineno"], a["col_offset"], a["end_lineno"], a["end_col_offset"] = located(name, loc)
        a["arg"] = name.id
        a["annotation"] = conv(name.annotation, loc) if name.annotation is not None else None
        a["type_comment"] = name.type_comment
        return arg

    return conv(tree, root_location or (1 + dl, dc, 1 + dl, dc + 1))
