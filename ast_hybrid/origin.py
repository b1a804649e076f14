"""Origin tracking: every node the passes create carries the user's location.

Passes build new nodes (runtime calls, nested functions, flag assignments);
:func:`copy_origin` stamps them with the location of the user node they stand
for, so that diagnostics (through :meth:`SourceFile.span`) and runtime errors
point at the user's line.  :func:`user_ast` then moves the whole tree to
the user's file coordinates as it turns it into :mod:`ast` for compiling, so
the converted code object's line numbers *are* the user's: a traceback through converted code shows the
user's file, line and source text with no mapping table at all.

>>> import gast
>>> from ast_hybrid.source import SourceFile
>>> src = SourceFile.from_text("x = 1\\nif x:\\n    y = 2\\n", "m.py")
>>> if_node = src.parse().body[1]
>>> new = gast.Expr(value=gast.Constant(value=0, kind=None))
>>> copy_origin(if_node, new).lineno, new.value.lineno
(2, 2)
"""

from __future__ import annotations

import ast

import gast

__all__ = ["copy_origin", "user_ast", "origin_span"]

_ATTRS = ("lineno", "col_offset", "end_lineno", "end_col_offset")


def copy_origin(src, dst):
    """Give ``dst`` and the nodes under it that have no location ``src``'s location.

    A node that already has one is the user's (or was stamped before) and so is
    its subtree: the walk stops there.  Returns ``dst`` (a node or a list of nodes).
    """
    if src is None or getattr(src, "lineno", None) is None:
        return dst
    loc = _first_line(src)
    todo = list(dst) if isinstance(dst, list) else [dst]
    while todo:
        node = todo.pop()
        if "lineno" in node._attributes:
            if getattr(node, "lineno", None) is not None:
                continue
            node.lineno, node.col_offset, node.end_lineno, node.end_col_offset = loc
        todo.extend(gast.iter_child_nodes(node))
    return dst


def _first_line(src):
    """``src``'s location, cut to its first line (a statement's header).

    Generated code stands on one line: CPython 3.11 puts a method call at the
    line where its attribute *ends*, so a node copying a whole ``if``
    statement's span would make ``ah__.if_stmt(...)`` run at the ``if``'s last line.
    """
    line, col = src.lineno, src.col_offset
    end_line = getattr(src, "end_lineno", None) or line
    end_col = getattr(src, "end_col_offset", None)
    if end_line == line and end_col is not None:
        return line, col, line, end_col
    head = getattr(src, "test", None) or getattr(src, "iter", None)
    if head is not None and getattr(head, "end_lineno", None) == line:
        return line, col, line, head.end_col_offset
    return line, col, line, col + 1


def origin_span(source, node):
    """The user-file :class:`~ast_hybrid.source.Span` of ``node`` (text coordinates)."""
    return source.span(node)


def user_ast(tree, source):
    """The standard-library :mod:`ast` twin of gast ``tree``, located in the user's file.

    What :func:`gast.gast_to_ast` followed by shifting every location would give, in one
    walk (conversion time, ``bench/control_flow.py``: 7 -> 2 ms on the dense
    100-line function): every node becomes the :mod:`ast` class of the same name with
    that class's fields (so the same code serves every Python version gast does);
    gast's parameter ``Name`` becomes an ``arg`` and an ``except ... as`` name a
    string; locations are shifted from ``source.text`` to the file, and a node
    without one takes its parent's (as :func:`ast.fix_missing_locations`).
    """
    dl, dc = source.first_line - 1, source.indent
    table = _AST_CLASSES

    def conv(node, loc):
        cls = node.__class__
        got = table.get(cls)
        if got is None:
            got = table[cls] = _ast_class(cls)
        target, fields, located = got
        if located:
            ln = getattr(node, "lineno", None)
            if ln is None:
                lineno, col, end_lineno, end_col = loc
            else:
                col = node.col_offset
                el = node.end_lineno
                ec = node.end_col_offset
                lineno, col = ln + dl, col + dc
                end_lineno = (ln if el is None else el) + dl
                end_col = (col + 1 if ec is None else ec + dc)
            loc = (lineno, col, end_lineno, end_col)
        new = target.__new__(target)
        d = new.__dict__
        if located:
            d["lineno"], d["col_offset"], d["end_lineno"], d["end_col_offset"] = loc
        if cls is gast.arguments:
            for f in ("posonlyargs", "args", "kwonlyargs"):
                d[f] = [param(a, loc) for a in getattr(node, f)]
            d["vararg"] = param(node.vararg, loc) if node.vararg is not None else None
            d["kwarg"] = param(node.kwarg, loc) if node.kwarg is not None else None
            d["kw_defaults"] = [conv(v, loc) if v is not None else None for v in node.kw_defaults]
            d["defaults"] = [conv(v, loc) for v in node.defaults]
            return new
        for f in fields:
            v = getattr(node, f, None)
            if v.__class__ is list:
                d[f] = [conv(x, loc) if isinstance(x, gast.AST) else x for x in v]
            elif isinstance(v, gast.AST):
                if v.__class__ in _CTX_TWINS:
                    d[f] = _CTX_TWINS[v.__class__]
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
        ln = getattr(name, "lineno", None)
        if ln is None:
            a["lineno"], a["col_offset"], a["end_lineno"], a["end_col_offset"] = loc
        else:
            el, ec = name.end_lineno, name.end_col_offset
            a["lineno"], a["col_offset"] = ln + dl, name.col_offset + dc
            a["end_lineno"] = (ln if el is None else el) + dl
            a["end_col_offset"] = name.col_offset + dc + 1 if ec is None else ec + dc
        a["arg"] = name.id
        a["annotation"] = conv(name.annotation, loc) if name.annotation is not None else None
        a["type_comment"] = name.type_comment
        return arg

    return conv(tree, (source.first_line, dc, source.first_line, dc + 1))


def _ast_class(cls):
    target = getattr(ast, cls.__name__, None)
    if target is None:
        raise TypeError(f"gast node {cls.__name__} has no ast twin on this Python")
    return target, target._fields, "lineno" in target._attributes


_AST_CLASSES: dict = {}
_CTX_TWINS = {gast.Load: ast.Load(), gast.Store: ast.Store(), gast.Del: ast.Del()}
