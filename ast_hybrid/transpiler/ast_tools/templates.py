"""Code from templates: Python text with named placeholders, as in tangent/AutoGraph.

A template is ordinary Python.  Every identifier that is a keyword argument of
:func:`replace` is a placeholder and gets substituted:

- a ``str`` becomes a name (or a function's or an argument's name);
- a gast expression node is inserted as is (copied if used twice);
- a list of statements replaces a placeholder used as a statement (``body``);
- a list of names/expressions replaces a placeholder standing alone in an
  argument list, a tuple or a function's parameters.

The template is parsed once (cached) and copied with its placeholders
substituted in one walk; a substituted expression takes the Load/Store/Param
context of the placeholder it replaces, so a name can be put on either side of
``=``.  Template nodes carry no location: :func:`~ast_hybrid.transpiler.ast_tools.origin.copy_origin`
gives them the user's.  A replacement that the template does
not use is an error: misspelt placeholders fail loudly instead of leaving a
stray name in generated code.

>>> import gast
>>> stmts = replace("target = ah__.not_(flag)", target="ah__brk_0", flag="ah__brk_0")
>>> print(gast.unparse(stmts[0]).strip())
ah__brk_0 = ah__.not_(ah__brk_0)
>>> type(stmts[0].targets[0].ctx).__name__, type(stmts[0].value.args[0].ctx).__name__
('Store', 'Load')
>>> replace("x = 1", y="z")
Traceback (most recent call last):
...
ValueError: template placeholders not found: y (template: 'x = 1')
"""

from __future__ import annotations

from functools import lru_cache

import gast

from .annotations import anno_copy

__all__ = ["replace", "replace_expr", "name", "tuple_of", "fix_ctx", "make_function", "return_of",
           "runtime_call", "clone"]

_LOCATION = ("lineno", "col_offset", "end_lineno", "end_col_offset")


@lru_cache(maxsize=256)
def _parsed(template: str):
    """The template's tree without locations: template nodes take the user's (``copy_origin``)."""
    tree = gast.parse(template)
    for node in gast.walk(tree):
        for attr in _LOCATION:
            if attr in node._attributes:
                setattr(node, attr, None)
    return tree


def clone(node):
    """A deep copy of a gast tree (much faster than :func:`copy.deepcopy` on ASTs)."""
    if isinstance(node, list):
        return [clone(n) for n in node]
    if not isinstance(node, gast.AST):
        return node
    new = node.__class__.__new__(node.__class__)
    for name in node._fields:
        setattr(new, name, clone(getattr(node, name, None)))
    for name in node._attributes:
        setattr(new, name, getattr(node, name, None))
    anno_copy(node, new)
    return new


def replace(template: str, **replacements) -> list:
    """The statements of ``template`` with placeholders substituted (fresh nodes)."""
    build = _Build(replacements)
    body = build.block(_parsed(template).body)
    missing = set(replacements) - build.used
    if missing:
        raise ValueError(f"template placeholders not found: {', '.join(sorted(missing))} "
                         f"(template: {template!r})")
    return body


def replace_expr(template: str, **replacements):
    """Like :func:`replace` for a template that is one expression; returns the expression."""
    (stmt,) = replace(template, **replacements)
    if not isinstance(stmt, gast.Expr):
        raise ValueError(f"template is not an expression: {template!r}")
    return stmt.value


def name(identifier: str, ctx=None):
    """A gast Name (Load unless ``ctx`` is given)."""
    return gast.Name(id=identifier, ctx=ctx or gast.Load(), annotation=None, type_comment=None)


def tuple_of(identifiers, ctx=None):
    """A tuple of names, e.g. the state of a loop (``()`` when empty)."""
    return gast.Tuple(elts=[name(i, ctx) for i in identifiers], ctx=ctx or gast.Load())


def _as_node(value):
    if isinstance(value, str):
        return name(value)
    if isinstance(value, gast.AST):
        return value
    raise TypeError(f"cannot put a {type(value).__name__} where an expression goes")


class _Build:
    """Copies a parsed template, substituting placeholders as it goes (one walk).

    Template nodes keep the contexts the parser gave them; a substituted
    expression takes the context of the placeholder it replaces.
    """

    def __init__(self, replacements):
        self.replacements = replacements
        self.used: set[str] = set()

    def _take(self, key):
        value = self.replacements[key]
        if key in self.used:
            value = clone(value)
        self.used.add(key)
        return value

    def block(self, items):
        """A list field: list-valued placeholders standing alone in it are spliced."""
        out = []
        for item in items:
            key = None
            if type(item) is gast.Name and item.id in self.replacements:
                key = item.id
            elif type(item) is gast.Expr and type(item.value) is gast.Name and item.value.id in self.replacements:
                key = item.value.id
            if key is not None and isinstance(self.replacements[key], (list, tuple)):
                value = self._take(key)
                if type(item) is gast.Expr:
                    out.extend(value)                      # statements, spliced whole
                elif type(item.ctx) is gast.Param:
                    out.extend(name(v, gast.Param()) if isinstance(v, str) else v for v in value)
                else:
                    out.extend(_with_ctx(_as_node(v), item.ctx) for v in value)
                continue
            out.append(self.node(item))
        return out

    def node(self, node):
        cls = type(node)
        if cls is gast.Name and node.id in self.replacements:
            value = self._take(node.id)
            if isinstance(value, str):
                return gast.Name(id=value, ctx=node.ctx, annotation=None, type_comment=None)
            return _with_ctx(_as_node(value), node.ctx)
        new = cls.__new__(cls)
        d, src = new.__dict__, node.__dict__
        for field in node._fields:
            old = src.get(field)
            if old.__class__ is list:
                old = self.block(old)
            elif isinstance(old, gast.AST) and old.__class__ not in _CTX:
                old = self.node(old)
            d[field] = old
        for attr in node._attributes:
            d[attr] = None
        if cls is gast.FunctionDef and node.name in self.replacements:
            new.name = self._take(node.name)
        return new


_CTX = frozenset({gast.Load, gast.Store, gast.Del, gast.Param})


def _with_ctx(node, ctx):
    """``node`` placed where a name of context ``ctx`` stood (tuples and starred recursively)."""
    if isinstance(node, (gast.Name, gast.Tuple, gast.List, gast.Starred, gast.Attribute, gast.Subscript)):
        fix_ctx(node, gast.Store() if type(ctx) is gast.Store else None)
    return node


_STORE_FIELDS = {
    gast.Assign: ("targets",), gast.AugAssign: ("target",), gast.AnnAssign: ("target",),
    gast.For: ("target",), gast.AsyncFor: ("target",), gast.comprehension: ("target",),
    gast.withitem: ("optional_vars",), gast.NamedExpr: ("target",),
}


def fix_ctx(node, ctx=None):
    """Set Load/Store contexts from position (targets Store, everything else Load)."""
    if isinstance(node, (gast.Name, gast.Tuple, gast.List, gast.Starred)):
        if ctx is not None and not isinstance(node.ctx, (gast.Param, gast.Del)):
            node.ctx = ctx
        elif ctx is None and isinstance(node.ctx, gast.Store):
            node.ctx = gast.Load()
        if isinstance(node, (gast.Tuple, gast.List)):
            for e in node.elts:
                fix_ctx(e, ctx)
        elif isinstance(node, gast.Starred):
            fix_ctx(node.value, ctx)
        return
    if isinstance(node, (gast.Attribute, gast.Subscript)):
        if ctx is not None:
            node.ctx = ctx
        elif isinstance(node.ctx, gast.Store):
            node.ctx = gast.Load()
        fix_ctx(node.value)
        if isinstance(node, gast.Subscript):
            fix_ctx(node.slice)
        return
    stores = _STORE_FIELDS.get(type(node), ())
    for field, value in gast.iter_fields(node):
        target_ctx = gast.Store() if field in stores else None
        if isinstance(value, list):
            for v in value:
                if isinstance(v, gast.AST):
                    fix_ctx(v, target_ctx)
        elif isinstance(value, gast.AST):
            fix_ctx(value, target_ctx)


def make_function(fname: str, params, body, declared=None):
    """``def fname(*params): body``, redeclaring ``declared`` (``{"global": [...], "nonlocal": [...]}``).

    Exactly ``replace("def fname(params):\\n    body", ...)``, built directly (every converted
    ``if``/``while``/``for`` makes two or three of them: a large part of conversion time).
    """
    decls = []
    for kind, names in (declared or {}).items():
        if names:
            decls.append(gast.Global(names=list(names)) if kind == "global" else gast.Nonlocal(names=list(names)))
    proto = _parsed("def fname(params):\n    body").body[0]
    args = _like(proto.args, args=[name(v, gast.Param()) if isinstance(v, str) else v for v in params])
    return _like(proto, name=fname, args=args, body=decls + list(body))


def return_of(value):
    """``return value``: exactly ``replace("return out", out=value)[0]``, built directly."""
    proto = _parsed("return out").body[0]
    return _like(proto, value=_with_ctx(_as_node(value), proto.value.ctx))


def runtime_call(method: str, args, out=None):
    """``out = ah__.method(*args)`` (a bare call when ``out`` is None): exactly what :func:`replace`
    makes of that template with ``args`` (names as strings, or expressions) put in, built directly."""
    holders = ", ".join(f"a{i}" for i in range(len(args)))
    proto = _parsed(f"out = ah__.{method}({holders})" if out is not None else f"ah__.{method}({holders})").body[0]
    call = proto.value
    built = []
    for value, holder in zip(args, call.args):
        if isinstance(value, str):
            built.append(gast.Name(id=value, ctx=holder.ctx, annotation=None, type_comment=None))
        else:
            built.append(_with_ctx(_as_node(value), holder.ctx))
    func = _like(call.func, value=_like(call.func.value))
    value = _like(call, func=func, args=built)
    if out is None:
        return _like(proto, value=value)
    return _like(proto, targets=[_with_ctx(_as_node(out), proto.targets[0].ctx)], value=value)


def _like(proto, **fields):
    """A copy of the template node ``proto`` as :class:`_Build` makes it (every field set, every location
    attribute None), with ``fields`` given; the other fields copied (lists fresh, contexts and plain
    values shared).  ``proto``'s other fields must hold no node but contexts: checked."""
    cls = proto.__class__
    new = cls.__new__(cls)
    d, src = new.__dict__, proto.__dict__
    for field in cls._fields:
        if field in fields:
            d[field] = fields[field]
            continue
        old = src.get(field)
        if old.__class__ is list:
            if old:
                raise ValueError(f"template field {cls.__name__}.{field} is not empty: give it")
            old = []
        elif isinstance(old, gast.AST) and old.__class__ not in _CTX:
            raise ValueError(f"template field {cls.__name__}.{field} holds a node: give it")
        d[field] = old
    for attr in cls._attributes:
        d[attr] = None
    return new
