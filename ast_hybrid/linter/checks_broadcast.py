"""HY017 (target mxnet): an operator between tensors whose shapes differ by construction.

NDArray's ``+ - * / % **`` and comparisons broadcast; a Symbol's are elementwise (``_plus``, ``_div``...:
``Check failed`` in shape inference at the first hybridized call, oracle).  Shapes are unknown statically,
so only two constructions are reported, where the shapes differ whatever the input:

- a tensor against a reduction of an expression that mentions it, taken over every axis (``F.sum(x)``,
  ``x.mean()``: shape ``(1,)``) or with ``keepdims=True`` (``x - x.max(axis=1, keepdims=True)``,
  ``x / F.sum(F.ones_like(x))``);
- two ``expand_dims`` of tensors on different axes (``F.expand_dims(x, 3) * F.expand_dims(x, 2)``: an outer
  product).

An operand may be a name bound once to such an expression.  A base of
:class:`~ast_hybrid.linter.checks.Checker`.
"""

from __future__ import annotations

import gast

from . import fixes
from .kinds import constant_int
from .module import dotted_name
from .tags import Tag, is_op, tensorish

__all__ = ["BroadcastChecks"]

#: reductions whose result keeps no axis unless asked (``axis=None``: shape ``(1,)`` in MXNet 1.x)
REDUCTIONS = frozenset({"sum", "mean", "max", "min", "prod", "nansum", "nanprod", "norm"})
#: operator -> (its text, the broadcasting op of ``F`` that computes it for Symbols too)
OPERATORS = {gast.Add: ("+", "broadcast_add"), gast.Sub: ("-", "broadcast_sub"), gast.Mult: ("*", "broadcast_mul"),
             gast.Div: ("/", "broadcast_div"), gast.Mod: ("%", "broadcast_mod"), gast.Pow: ("**", "broadcast_power"),
             gast.Eq: ("==", "broadcast_equal"), gast.NotEq: ("!=", "broadcast_not_equal"),
             gast.Lt: ("<", "broadcast_lesser"), gast.LtE: ("<=", "broadcast_lesser_equal"),
             gast.Gt: (">", "broadcast_greater"), gast.GtE: (">=", "broadcast_greater_equal")}


class BroadcastChecks:
    """The broadcasting rule of :class:`~ast_hybrid.linter.checks.Checker`."""

    def visit_BinOp(self, node):
        self.check_broadcast(node, node.left, node.right, node.op)

    def check_broadcast(self, node, a, b, op) -> None:
        """HY017: ``a op b`` where one side's shape differs from the other's by construction."""
        if self.target != "mxnet" or self.u.style != "F" or self.guard or type(op) not in OPERATORS:
            return
        if not (self._tensor(a) or self._tensor(b)):
            return
        what = self._differ(a, b) or self._differ(b, a) or (self._tensor(a) and self._tensor(b) and self._outer(a, b))
        if not what:
            return
        text, f_op = OPERATORS[type(op)]
        fix = fixes.broadcast_fix(self.u, self.src, node, a, b, f_op)
        self.add("HY017", node, what[0], fix=fix, op=text, f_op=f_op, of=what[1])

    def _tensor(self, node) -> bool:
        """Surely a tensor, or a child block's output (a tensor or a tuple: used here with an operator)."""
        if self.certain(node):
            return True
        k = self.kind(node)
        return Tag.TENSOR_OR_TUPLE in k and Tag.MIXED not in k and Tag.SEQUENCE_OF_TENSORS not in k

    def _bound(self, node):
        """The expression a name was bound to once (``s = F.sum(x)``), else ``node``."""
        if type(node) is gast.Name:
            defs = self.u.defs_of(node)
            if len(defs) == 1:
                parent = self.u.parents.get(defs[0])
                if type(parent) is gast.Assign and parent.targets == [defs[0]]:
                    return parent.value
        return node

    def _differ(self, reduced, other):
        """``("reduction", name)`` if ``reduced`` is a reduction over every axis or with ``keepdims=True``
        of an expression mentioning ``other`` (a name or ``self.a`` chain that is not itself reduced)."""
        whole = dotted_name(other)
        if whole is None or self._reduction(self._bound(other)) is not None:
            return None
        arg = self._reduction(self._bound(reduced))
        if arg is None or not self._tensor(reduced):
            return None
        # `other` is a tensor by its kind, or by being an argument of an F op in there (`F.ones_like(x)`)
        sure = self._tensor(other)
        for n in gast.walk(arg):
            if type(n) is gast.Call and not sure and is_op(self.kind(n.func)):
                sure = any(dotted_name(v) == whole for v in (*n.args, *(k.value for k in n.keywords)))
        if not sure:
            return None
        for n in gast.walk(arg):
            if type(n) in (gast.Name, gast.Attribute) and type(n.ctx) is gast.Load and dotted_name(n) == whole:
                return "reduction", whole
        return None

    def _reduction(self, node):
        """The reduced expression of ``F.sum(e)`` / ``e.sum()`` (every axis, or ``keepdims=True``), else None."""
        if type(node) is not gast.Call or type(node.func) is not gast.Attribute or node.func.attr not in REDUCTIONS:
            return None
        func = node.func
        if is_op(self.kind(func.value)):            # F.sum(e, axis=...), F.contrib...: the data first
            args = node.args[1:]
            data = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "data"), None)
        elif tensorish(self.kind(func.value)):      # e.sum(axis=...)
            args, data = node.args, func.value
        else:
            return None
        if data is None or any(type(a) is gast.Starred for a in node.args):
            return None
        keywords = {k.arg: k.value for k in node.keywords}
        if None in keywords:                        # **kwargs: unknown
            return None
        keep = keywords.get("keepdims")
        if type(keep) is gast.Constant and keep.value in (True, 1):   # `keepdims=1` too
            return data
        axis = keywords.get("axis", args[0] if args else None)
        if axis is None or (type(axis) is gast.Constant and axis.value is None and "exclude" not in keywords):
            return data
        return None

    def _outer(self, a, b):
        """``("outer", name)`` for ``expand_dims`` of tensors on two different constant axes."""
        axes = [self._expanded(self._bound(x)) for x in (a, b)]
        if None in axes or axes[0] == axes[1]:
            return None
        return "outer", dotted_name(a) or dotted_name(b) or "a tensor"

    def _expanded(self, node):
        if type(node) is not gast.Call or type(node.func) is not gast.Attribute or node.func.attr != "expand_dims":
            return None
        keywords = {k.arg: k.value for k in node.keywords}
        if is_op(self.kind(node.func.value)):
            axis = keywords.get("axis", node.args[1] if len(node.args) > 1 else None)
        elif tensorish(self.kind(node.func.value)):
            axis = keywords.get("axis", node.args[0] if node.args else None)
        else:
            return None
        return None if axis is None else constant_int(axis)
