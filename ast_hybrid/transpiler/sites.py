"""What the runtime needs to know about each converted statement, to explain failures.

The control-flow passes record one :class:`Site` per converted ``if``/``while``/
``for`` (keyed by the user's line, which is also the line the converted code
runs at, since it is compiled with the user's line numbers).  When the runtime
finds at trace time that a traced branch leaves a variable undefined (HY030),
changes a loop variable's shape (HY031), contains a statement that cannot be
traced (HY032) or gives mismatched structures (HY033), it builds the
:class:`~ast_hybrid.common.diagnostics.Diagnostic` from the site: the statement's span,
and where each variable is assigned in each branch.  No jax here.
"""

from __future__ import annotations

import ast
import bisect
from dataclasses import dataclass, field

import gast

from ast_hybrid.common.walkers import SCOPES, children
from ast_hybrid.common.source import Span
from .ast_tools.annotations import Anno, anno_get
from .ast_tools.naming import RUNTIME

__all__ = ["Site", "LoadIndex", "build_site"]

_KIND_TEXT = {"if": "an `if` on a traced value", "while": "a `while` loop on a traced value",
              "for": "a `for` loop over a traced value"}


@dataclass
class Site:
    kind: str                      # "if", "while", "for"
    span: Span                     # the statement's header (`if test`, `while test`, `for t in it`)
    #: name -> [(span, label)] of assignments, label "`if` branch"/"`else` branch"/"loop body"
    assigns: dict = field(default_factory=dict)
    #: (what, span[, variant of HY032[, values of its message]]) of what cannot live inside traced control flow
    unsupported: list = field(default_factory=list)
    #: the function's :class:`LoadIndex` and where the statement ends (text coordinates)
    loads: "LoadIndex | None" = field(default=None, repr=False)
    end: tuple = (0, 0)
    #: the variables live after the statement (a loop's variable first assigned inside it that is
    #: live after it is HY030 when the loop is traced: it may run zero times)
    live_after: frozenset = frozenset()

    def read_after(self, name):
        """The span of the first read of ``name`` after the statement (for HY030), or None."""
        read = self.loads.first_after(name, self.end) if self.loads is not None else None
        return None if read is None else self.loads.source.span(read)

    def kind_text(self) -> str:
        return _KIND_TEXT.get(self.kind, f"a traced `{self.kind}`")


def _walk(stmts):
    todo = list(stmts)
    while todo:
        n = todo.pop()
        yield n
        if n.__class__ not in SCOPES:
            todo.extend(children(n))


def _pos(node):
    return (node.lineno, node.col_offset)


def _end(node):
    return (getattr(node, "end_lineno", None) or node.lineno, getattr(node, "end_col_offset", None) or 0)


def _keyword_span(span: Span, keyword: str) -> Span:
    """A multi-line statement is shown by its keyword (`try`, `with`), a one-line one whole."""
    if span.end_line == span.line:
        return span
    return Span(span.line, span.col, span.line, span.col + len(keyword))


class LoadIndex:
    """Where each name is read in a function, by position.

    Built on first use, which is a diagnostic's (conversion itself never asks),
    from a fresh parse of the user's source: the tree being converted is
    rewritten as it goes, and only the user's own reads matter.
    """

    def __init__(self, source, fn):
        self.source = source
        self._within = (_pos(fn), _end(fn))     # the function, in text coordinates
        self._by_name: dict | None = None

    def _index(self) -> dict:
        by_name: dict = {}
        start, end = self._within
        for n in ast.walk(self.source.parse_ast()):
            if type(n) is ast.Name and type(n.ctx) is ast.Load and start <= _pos(n) <= end:
                by_name.setdefault(n.id, []).append((_pos(n), n))
        for reads in by_name.values():
            reads.sort(key=lambda r: r[0])
        return by_name

    def first_after(self, name, pos):
        """The first read of ``name`` at or after ``pos`` (line, col), or None."""
        if self._by_name is None:
            self._by_name = self._index()
        reads = self._by_name.get(name, ())
        i = bisect.bisect_left(reads, pos, key=lambda r: r[0])
        return reads[i][1] if i < len(reads) else None


def build_site(kind, stmt, header, blocks, state, loads, source, declared, display=None) -> Site:
    """The site of ``stmt``: ``header`` is its test/iterable, ``blocks`` ``[(label, stmts)]``,
    ``loads`` the function's :class:`LoadIndex`, ``display`` the names diagnostics give variables
    that carry an item or attribute (the composite_state pass)."""
    display = display or {}
    composites = anno_get(stmt, Anno.COMPOSITES, {})
    start, end = source.span(stmt), source.span(header)
    site = Site(kind, Span(start.line, start.col, end.end_line, end.end_col), loads=loads, end=_end(stmt))
    wanted = set(state)
    names = {n for names in declared.values() for n in names}
    bound, calls = set(), []
    for label, stmts in blocks:
        for n in _walk(stmts):
            if n.__class__ is gast.Attribute and n.attr in _MUTATORS and n.ctx.__class__ is gast.Load:
                calls.append(n)           # `out.append` (called, or taken to be called)
            elif n.__class__ is gast.Expr and n.value.__class__ is gast.Call:
                f = _called(n.value)       # `lst.sort()` for its effect (an array's `.sort()` returns)
                if f.__class__ is gast.Attribute and f.attr in _EFFECT_ONLY:
                    calls.append(f)
            if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)):
                bound.add(n.id)
                if n.id in wanted and getattr(n, "lineno", None):
                    site.assigns.setdefault(n.id, []).append((source.span(n), label))
                if n.id in names:
                    site.unsupported.append((f"assignment to global/nonlocal `{n.id}`", source.span(n)))
            if isinstance(n, (gast.Attribute, gast.Subscript)) and isinstance(n.ctx, gast.Store):
                done = composites.get(id(n))
                if isinstance(done, str):        # carried as state by the variable `done`
                    if done in wanted and getattr(n, "lineno", None):
                        site.assigns.setdefault(display.get(done, done), []).append((source.span(n), label))
                    continue
                target = _short(gast.unparse(n).strip())
                why = done.reason if done is not None else "it changes an object made outside"
                site.unsupported.append((target, source.span(n), "composite", {"why": why}))
            what = _UNSUPPORTED.get(type(n))
            if what is not None:
                site.unsupported.append((what, _keyword_span(source.span(n), what)))
    for f in calls:        # a method that changes an object made outside the branch or body
        root = _root(f.value)
        if root is not None and root not in bound:
            site.unsupported.append((_short(gast.unparse(f).strip()), source.span(f), "mutation"))
    for spans in site.assigns.values():
        spans.sort()
    site.unsupported.sort(key=lambda u: u[1])
    return site


#: methods that change the object they are called on (lists, dicts, sets, deques): inside traced
#: control flow each runs once while tracing, whatever the values (HY032)
_MUTATORS = frozenset({"append", "extend", "insert", "remove", "pop", "clear", "update", "setdefault",
                       "popitem", "add", "discard", "appendleft", "extendleft", "popleft", "reverse",
                       "intersection_update", "difference_update", "symmetric_difference_update",
                       "__setitem__", "__delitem__"})
#: mutators only when called for their effect (an array's method of that name returns a new array)
_EFFECT_ONLY = frozenset({"sort"})


def _short(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."


def _called(call):
    """What ``call`` calls (the call-trees pass has made it ``ah__.converted_call(f, ...)``)."""
    f = call.func
    if (f.__class__ is gast.Attribute and f.attr == "converted_call" and f.value.__class__ is gast.Name
            and f.value.id == RUNTIME and call.args):
        return call.args[0]
    return f


def _root(node):
    """The variable an ``a.b[c].d`` chain starts from, or None."""
    while node.__class__ in (gast.Attribute, gast.Subscript):
        node = node.value
    return node.id if node.__class__ is gast.Name else None


_UNSUPPORTED = {gast.Try: "try", gast.With: "with", gast.AsyncWith: "async with", gast.Delete: "del",
                gast.Raise: "raise", gast.Yield: "yield", gast.YieldFrom: "yield from"}
