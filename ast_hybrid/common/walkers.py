"""Walks over gast trees that the transpiler and the linter share (gast and beniget only).

- :data:`SCOPES`: the node classes that open a new scope;
- :func:`children`: the child nodes worth walking (no contexts, no operators);
- :func:`own_statements`, :func:`walk_scope`: a scope's own statements, or nodes,
  never entering a nested scope;
- :func:`bound_names`: a function's locals by Python's rule (None when it holds a
  nested scope: then only def-use chains can tell);
- :func:`parameters`: the parameters of a function, in Python's order;
- :class:`QuietChains`: beniget's def-use chains, without its warnings.

>>> import gast
>>> fn = gast.parse('''
... def f(a, /, b, *args, c, **kw):
...     if a:
...         x = lambda: b
...     return x
... ''').body[0]
>>> [p.id for p in parameters(fn.args)], [p.id for p in parameters(fn.args, keyword_only=False, starred=False)]
(['a', 'b', 'c', 'args', 'kw'], ['a', 'b'])
>>> [type(s).__name__ for s in own_statements(fn)], bound_names(fn)
(['Return', 'If', 'Assign'], None)
"""

from __future__ import annotations

import beniget
import gast

__all__ = ["SCOPES", "children", "own_statements", "walk_scope", "bound_names", "parameters", "QuietChains"]

#: The node classes that open a new scope (test with ``node.__class__ in SCOPES``).
SCOPES = frozenset({gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef,
                    gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp})

_BLOCKS = (gast.stmt, gast.excepthandler, gast.match_case)   # what holds statements

#: fields that never hold a node worth walking: names, contexts, operators, flags
_LEAF_FIELDS = frozenset({"ctx", "op", "ops", "id", "attr", "arg", "kind", "type_comment", "is_async",
                          "level", "module", "conversion"})
_CHILD_FIELDS: dict = {}


def children(node) -> list:
    """The child nodes of ``node`` that can hold names or statements, in field order.

    :func:`ast.iter_child_nodes` less the nodes no analysis looks at (Load/Store
    contexts, operators): the walks of conversion run on it (about twice as fast).
    """
    cls = node.__class__
    fields = _CHILD_FIELDS.get(cls)
    if fields is None:
        fields = _CHILD_FIELDS[cls] = tuple(f for f in cls._fields if f not in _LEAF_FIELDS)
    out = []
    d = node.__dict__
    for f in fields:
        v = d.get(f)
        if v is None:
            continue
        if v.__class__ is list:
            for x in v:
                if isinstance(x, gast.AST):
                    out.append(x)
        elif isinstance(v, gast.AST):
            out.append(v)
    return out


def own_statements(fn):
    """Every statement of ``fn``'s own scope (nested blocks included, nested scopes not)."""
    todo = list(fn.body)
    while todo:
        n = todo.pop()
        if n.__class__ in SCOPES:
            continue
        yield n
        todo.extend(c for c in children(n) if isinstance(c, _BLOCKS))


def walk_scope(node):
    """Walk ``node`` without entering nested scopes (``node`` itself is yielded)."""
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        if n.__class__ in SCOPES:
            continue
        todo.extend(children(n))


def bound_names(fn):
    """The locals of ``fn`` by Python's rule, or None when ``fn`` holds a nested scope
    (then only def-use chains say which names inside it are ``fn``'s)."""
    names, declared = {a.id for a in parameters(fn.args)}, set()
    todo = list(fn.body)
    while todo:
        n = todo.pop()
        t = type(n)
        if t is gast.Name:
            if type(n.ctx) is not gast.Load:        # Store, Del, Param
                names.add(n.id)
            continue
        if t in SCOPES:
            return None
        if t is gast.Global or t is gast.Nonlocal:
            declared.update(n.names)
        elif t is gast.Import or t is gast.ImportFrom:
            names.update((a.asname or a.name).split(".")[0] for a in n.names)
        elif t is gast.MatchAs or t is gast.MatchStar:
            if n.name is not None:
                names.add(n.name)
        elif t is gast.MatchMapping and n.rest is not None:
            names.add(n.rest)
        todo.extend(children(n))
    return frozenset(names - declared)


def parameters(args, *, keyword_only: bool = True, starred: bool = True) -> list:
    """The parameter ``Name`` nodes of a gast ``arguments``, in Python's order (``co_varnames``').

    Positional ones first (positional-only included), then the keyword-only ones
    (unless ``keyword_only=False``), then ``*args`` and ``**kwargs`` (unless
    ``starred=False``).  Both False: what a call's positional arguments bind.
    """
    out = [*args.posonlyargs, *args.args]
    if keyword_only:
        out += args.kwonlyargs
    if starred:
        if args.vararg is not None:
            out.append(args.vararg)
        if args.kwarg is not None:
            out.append(args.kwarg)
    return out


class QuietChains(beniget.DefUseChains):
    """beniget's def-use chains, silent: the names it cannot resolve are globals of the
    real module, which the caller resolves itself."""

    def warn(self, msg, node):  # noqa: D102 - silence
        pass
