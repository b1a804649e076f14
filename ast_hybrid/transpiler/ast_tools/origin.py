"""Origin tracking: every node the passes create carries the user's location.

Passes build new nodes (runtime calls, nested functions, flag assignments);
:func:`copy_origin` stamps them with the location of the user node they stand
for, so that diagnostics (through :meth:`SourceFile.span`) and runtime errors
point at the user's line.  :func:`user_ast` then moves the whole tree to
the user's file coordinates as it turns it into :mod:`ast` for compiling, so
the converted code object's line numbers *are* the user's: a traceback through converted code shows the
user's file, line and source text with no mapping table at all.

>>> import gast
>>> from ast_hybrid.common.source import SourceFile
>>> src = SourceFile.from_text("x = 1\\nif x:\\n    y = 2\\n", "m.py")
>>> if_node = src.parse().body[1]
>>> new = gast.Expr(value=gast.Constant(value=0, kind=None))
>>> copy_origin(if_node, new).lineno, new.value.lineno
(2, 2)
"""

from __future__ import annotations

from ast_hybrid.common.gastconv import to_ast
from ast_hybrid.common.walkers import children

__all__ = ["copy_origin", "user_ast", "origin_span"]


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
        todo.extend(children(node))
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
    """The user-file :class:`~ast_hybrid.common.source.Span` of ``node`` (text coordinates)."""
    return source.span(node)


def user_ast(tree, source):
    """The standard-library :mod:`ast` twin of gast ``tree``, located in the user's file.

    Locations move from ``source.text`` to the file (the dedent undone); a node
    without one takes its parent's (:func:`ast_hybrid.common.gastconv.to_ast`).
    """
    dl, dc = source.first_line - 1, source.indent
    return to_ast(tree, dl, dc, (source.first_line, dc, source.first_line, dc + 1))
