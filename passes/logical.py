"""Canonicalisation of expressions whose evaluation depends on a truth value.

- ``a and b`` -> ``ah__.and_(a, lambda: b)`` (n-ary: nested, right to left);
- ``a or b`` -> ``ah__.or_(a, lambda: b)``;
- ``not a`` -> ``ah__.not_(a)``;
- ``x if c else y`` -> ``ah__.ifexp(c, lambda: x, lambda: y)``;
- ``a < b < c`` -> ``ah__.and_(a < b, lambda: b < c)`` when the middle
  operands are names or constants (evaluating them twice changes nothing);
  other chains are left alone.

The thunks keep Python's short-circuit evaluation for Python values; for a
traced value the runtime evaluates both sides (``logical_and``, ``lax.cond``).
The first operand, always evaluated, stays where it is, in the function's own
scope: a walrus in it (``while (k := k + 1) < n and ...``) assigns the function's
variable, not a lambda's.
``elif`` chains need no rewriting: in the AST they already are an ``if``
nested in an ``else``.  The pass runs last, over the generated functions too:
the tests the jump passes write (``not flag and test``) are lowered like the
user's, and no earlier pass or analysis meets the thunks' scopes.  After this
pass no ``BoolOp``, ``not`` or ``IfExp`` remains.

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

from ast_hybrid.transpiler.ast_tools.templates import clone, replace_expr
from ast_hybrid.transpiler.ast_tools.transformer import Transformer

__all__ = ["transform"]

_SIMPLE = (gast.Name, gast.Constant)


class _Logical(Transformer):
    def visit_BoolOp(self, node):
        self.generic_visit(node)
        fn = "ah__.and_" if isinstance(node.op, gast.And) else "ah__.or_"
        out = node.values[-1]
        for left in reversed(node.values[:-1]):
            out = replace_expr(f"{fn}(a, lambda: b)", a=left, b=out)
        return out

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, gast.Not):
            return replace_expr("ah__.not_(a)", a=node.operand)
        return node

    def visit_IfExp(self, node):
        self.generic_visit(node)
        return replace_expr("ah__.ifexp(c, lambda: a, lambda: b)", c=node.test, a=node.body, b=node.orelse)

    def visit_Compare(self, node):
        self.generic_visit(node)
        if len(node.ops) < 2 or not all(isinstance(c, _SIMPLE) for c in node.comparators[:-1]):
            return node
        lefts = [node.left] + node.comparators[:-1]
        parts = [gast.Compare(left=clone(left) if i else left, ops=[op], comparators=[right])
                 for i, (left, op, right) in enumerate(zip(lefts, node.ops, node.comparators))]
        out = parts[-1]
        for left in reversed(parts[:-1]):
            out = replace_expr("ah__.and_(a, lambda: b)", a=left, b=out)
        return out


def transform(fn, ctx):
    return _Logical().transform_body(fn)
