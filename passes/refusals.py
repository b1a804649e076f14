"""In-place ops and host syncs the linter found become run-time refusals, at their own statements.

The linter's HY001-HY004 (``x += y``, ``x[i] = v``, ``out=``, ``.asnumpy()``
on a tensor) cannot be traced, but MXNet refused them only when they *ran*
while hybridizing: ``PoissonNLLLoss`` hybridizes fine unless
``compute_full=True`` takes the branch with ``*=``.  So each statement the
linter flagged (``ctx.refusals``, a list of diagnostics) gets, just before it,

    ah__.refuse_if_traced(k, (name, ...))

over the variables the statement reads: when one of them is traced, the
runtime raises :class:`~ast_hybrid.ConversionError` with diagnostic ``k``;
with concrete values the statement runs as written (MXNet's imperative
semantics).

After this pass every flagged statement is guarded.

>>> from ast_hybrid.transpiler.passdoc import show
>>> from ast_hybrid.common.diagnostics import Diagnostic
>>> from ast_hybrid.common.source import Span
>>> def pass_(fn, ctx):
...     ctx.refusals = [Diagnostic("HY001", "in-place", "<doc>", Span(3, 5, 3, 11))]
...     return transform(fn, ctx)
>>> show(pass_, '''
... def f(self, F, x, y):
...     h = F.relu(x)
...     h += y
...     return h
... ''')
def f(self, F, x, y):
    h = F.relu(x)
    ah__.refuse_if_traced(0, (h, y))
    h += y
    return h
"""

from __future__ import annotations

import gast

from ast_hybrid.common.walkers import SCOPES, children
from ast_hybrid.transpiler.ast_tools.templates import name, replace
from ast_hybrid.transpiler.ast_tools.transformer import Transformer

__all__ = ["transform"]


def _reads(node):
    """The variables ``node`` reads, in order (nested scopes not entered)."""
    seen = [node.target.id] if isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name) else []
    todo = [node]
    while todo:
        n = todo.pop(0)
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id not in seen:
            seen.append(n.id)
        if n is node or n.__class__ not in SCOPES:
            todo.extend(children(n))
    return seen


class _Refusals(Transformer):
    statements_only = True

    def __init__(self, ctx, lines):
        self.ctx, self.lines = ctx, lines     # user line -> indices of the findings on it

    def visit(self, node):
        if isinstance(node, gast.stmt) and node.__class__ not in SCOPES:
            found = self.lines.pop(self.ctx.source.span(node).line, None)
            if found is not None:
                header = _HEADERS.get(type(node))
                read = _reads(getattr(node, header) if header else node)
                if isinstance(node, gast.With):
                    read = [v for item in node.items for v in _reads(item.context_expr)]
                values = gast.Tuple(elts=[name(v) for v in read], ctx=gast.Load())
                checks = [s for k in found for s in replace("ah__.refuse_if_traced(k, values)",
                                                            k=gast.Constant(value=k, kind=None), values=values)]
                return checks + [super().visit(node)]
        return super().visit(node)


#: compound statements: the flagged expression is in their header
_HEADERS = {gast.If: "test", gast.While: "test", gast.For: "iter", gast.Try: None, gast.With: None}


def transform(fn, ctx):
    refusals = getattr(ctx, "refusals", None) or []
    if not refusals:
        return fn
    lines: dict = {}
    for k, d in enumerate(refusals):
        lines.setdefault(d.span.line, []).append(k)
    return _Refusals(ctx, lines).transform_body(fn)
