"""Canonicalisation of expressions whose evaluation depends on a truth value.

- ``a and b`` -> ``ah__.and_(a, lambda: b)`` (n-ary: nested, right to left);
- ``a or b`` -> ``ah__.or_(a, lambda: b)``;
- ``not a`` -> ``ah__.not_(a)``;
- ``x if c else y`` -> ``ah__.ifexp(c, lambda: x, lambda: y)``;
- ``a < b < c`` -> ``ah__.and_(a < b, lambda: b < c)`` when the middle
  operands are names or constants (evaluating them twice changes nothing);
  other chains evaluate each operand once, through a lambda's parameters:
  ``(lambda l, r: ah__.and_(l < r, lambda: r < c))(a, x[1])`` (a chain with a
  ``:=`` is left to Python).

The thunks keep Python's short-circuit evaluation for Python values; for a
traced value the runtime evaluates both sides (``logical_and``, ``lax.cond``).
The first operand, always evaluated, stays where it is, in the function's own
scope: a walrus in it (``while (k := k + 1) < n and ...``) assigns the function's
variable, not a lambda's.  A walrus in a later operand, or in a value of
``a if c else b``, would bind a lambda's own variable: there the operator stays
Python's, in the function's scope, with the operands before it (the condition)
checked by ``ah__.walrus_test``: a Python value passes through (Python's
short-circuit, exactly), a traced one is HY030 at the ``:=`` (whether it runs
would depend on a traced value, but tracing runs both sides)::

    a and (y := f(x))  ->  ah__.walrus_test(a, 'y', ...) and (y := f(x))
``elif`` chains need no rewriting: in the AST they already are an ``if``
nested in an ``else``.  The pass runs last, over the generated functions too:
the tests the jump passes write (``not flag and test``) are lowered like the
user's, and no earlier pass or analysis meets the thunks' scopes.  After this
pass no ``not`` remains, and a ``BoolOp`` or ``IfExp`` only around a walrus.

A comprehension's ``if``, a ``match`` subject that patterns compare (not only ``case _``
or a capture) and a ``case`` guard must be Python values: they go through
``ah__.python_value``, which passes a Python value on and makes a traced one HY032 at
the expression (before: JAX's TracerBoolConversionError).

>>> from ast_hybrid.transpiler.passdoc import show
>>> show(transform, '''
... def f(x, y):
...     s = x.sum()
...     return x if s > 0 and not y else -x
... ''')
def f(x, y):
    s = x.sum()
    return ah__.ifexp(ah__.and_(s > 0, lambda: ah__.not_(y)), lambda: x, lambda: -x)
"""

from __future__ import annotations

import gast

from ast_hybrid.common.walkers import children
from ast_hybrid.transpiler.ast_tools.templates import clone, replace_expr
from ast_hybrid.transpiler.ast_tools.transformer import Transformer

__all__ = ["transform"]

_SIMPLE = (gast.Name, gast.Constant)


def _walrus(node):
    """The first ``:=`` in ``node`` that binds in the enclosing function's scope, or None
    (one inside a ``lambda`` binds the lambda's own variable)."""
    found, todo = [], [node]
    while todo:
        n = todo.pop()
        if isinstance(n, gast.NamedExpr):
            found.append(n)
        if not isinstance(n, gast.Lambda):
            todo.extend(children(n))    # contexts and operators aside: they hold no `:=`
    return min(found, key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)), default=None)


_ORDINAL = {1: "second", 2: "third"}


def _wanted(node) -> bool:
    """The nodes this pass rewrites (the walk enters only the subtrees holding one)."""
    cls = node.__class__
    return (cls in _REWRITTEN or (cls is gast.UnaryOp and node.op.__class__ is gast.Not)
            or (cls is gast.Compare and len(node.ops) > 1))


_REWRITTEN = frozenset({gast.BoolOp, gast.IfExp, gast.comprehension, gast.Match})


class _Logical(Transformer):
    wants = staticmethod(_wanted)

    def __init__(self, ctx=None):
        self.ctx = ctx

    def _guard(self, test, walrus, part, when):
        """``ah__.walrus_test(test, ...)``: ``test`` itself when it is a Python value (the
        expression around it then runs as Python, the ``:=`` in the function's scope), HY030
        at ``walrus`` when it is traced."""
        const = lambda v: gast.Constant(value=v, kind=None)  # noqa: E731
        return replace_expr("ah__.walrus_test(t, name, part, when, span)", t=test, name=const(walrus.target.id),
                            part=const(part), when=const(when), span=self._span(walrus))

    def _span(self, node):
        """``(line, col, end_line, end_col)`` of ``node`` in the user's file, as an expression (None unknown)."""
        if self.ctx is None or not getattr(node, "lineno", None):
            return gast.Constant(value=None, kind=None)
        s = self.ctx.source.span(node)
        return gast.Tuple(elts=[gast.Constant(value=v, kind=None) for v in (s.line, s.col, s.end_line, s.end_col)],
                          ctx=gast.Load())

    def _chain(self, op, values, word):
        """``values[0] op values[1] op ...``: thunks, or plain Python where a later operand has a ``:=``."""
        fn = "ah__.and_" if op is gast.And else "ah__.or_"
        out = values[-1]
        for k, left in reversed(list(enumerate(values[:-1]))):
            walrus = _walrus(out)
            if walrus is None:
                out = replace_expr(f"{fn}(a, lambda: b)", a=left, b=out)
            else:    # a lambda would bind the := in its own scope: Python's operator, on a Python value
                j = next(j for j in range(k + 1, len(values)) if _walrus(values[j]) is not None)
                truth = "true" if op is gast.And else "false"
                when = f"the first operand is {truth}" if j == 1 else f"the operands before it are {truth}"
                part = f"the {_ORDINAL.get(j, f'{j + 1}th')} operand of `{word}`"
                out = gast.BoolOp(op=op(), values=[self._guard(left, walrus, part, when), out])
        return out

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        op = type(node.op)
        return self._chain(op, node.values, "and" if op is gast.And else "or")

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, gast.Not):
            return replace_expr("ah__.not_(a)", a=node.operand)
        return node

    def visit_IfExp(self, node):
        self.generic_visit(node)
        wa, wb = _walrus(node.body), _walrus(node.orelse)
        if wa is not None or wb is not None:   # plain Python on a Python condition (see _chain)
            part, when, w = (("the `if` value", "the condition is true", wa) if wa is not None else
                             ("the `else` value", "the condition is false", wb))
            node.test = self._guard(node.test, w, f"{part} of a conditional expression", when)
            return node
        return replace_expr("ah__.ifexp(c, lambda: a, lambda: b)", c=node.test, a=node.body, b=node.orelse)

    def visit_Compare(self, node):
        self.generic_visit(node)
        if len(node.ops) < 2:
            return node
        if not all(isinstance(c, _SIMPLE) for c in node.comparators[:-1]):
            return node if _walrus(node) is not None else self._bound_chain(node.left, node.ops, node.comparators)
        lefts = [node.left] + node.comparators[:-1]
        parts = [gast.Compare(left=clone(left) if i else left, ops=[op], comparators=[right])
                 for i, (left, op, right) in enumerate(zip(lefts, node.ops, node.comparators))]
        return self._chain(gast.And, parts, "and")

    def _bound_chain(self, left, ops, comparators):
        """``a < f(b) < c`` whose middle operands are evaluated once: each pair's operands are
        a lambda's parameters, called with them in Python's order (a, then f(b)), the rest of
        the chain a thunk: ``(lambda l, r: ah__.and_(l < r, lambda: r < c))(a, f(b))``."""
        if len(ops) == 1:
            return gast.Compare(left=left, ops=ops, comparators=comparators)
        new = self.ctx.namer.new if self.ctx is not None else (lambda base: f"ah__{base}_{id(left)}")
        lname, rname = new("cmp"), new("cmp")
        test = gast.Compare(left=gast.Name(id=lname, ctx=gast.Load(), annotation=None, type_comment=None),
                            ops=[ops[0]],
                            comparators=[gast.Name(id=rname, ctx=gast.Load(), annotation=None, type_comment=None)])
        rest = self._bound_chain(gast.Name(id=rname, ctx=gast.Load(), annotation=None, type_comment=None),
                                 ops[1:], comparators[1:])
        return replace_expr("(lambda l, r: ah__.and_(t, lambda: rest))(a, b)", l=lname, r=rname, t=test,
                            rest=rest, a=left, b=comparators[0])


    def _python_value(self, expr, what, why):
        """``ah__.python_value(expr, ...)``: ``expr`` as it is, HY032 at it when it is traced."""
        const = lambda v: gast.Constant(value=v, kind=None)  # noqa: E731
        return replace_expr("ah__.python_value(e, what, why, span)", e=expr, what=const(what), why=const(why),
                            span=self._span(expr))

    def visit_comprehension(self, node):
        self.generic_visit(node)
        node.ifs = [self._python_value(c, "the condition of a comprehension's `if`",
                                       "how many items the result has would depend on it") for c in node.ifs]
        return node

    def visit_Match(self, node):
        self.generic_visit(node)
        if any(not (isinstance(c.pattern, gast.MatchAs) and c.pattern.pattern is None) for c in node.cases):
            node.subject = self._python_value(node.subject, "the subject of `match`",
                                              "comparing it with the patterns needs its value")
        for c in node.cases:
            if c.guard is not None:
                c.guard = self._python_value(c.guard, "the guard of a `case`", "whether the case runs needs its value")
        return node


def transform(fn, ctx):
    return _Logical(ctx).transform_body(fn)
