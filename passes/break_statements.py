"""``break`` becomes a flag that ends the loop; a loop's ``else`` becomes a guarded ``if``.

For each loop whose body breaks (nested loops handle their own), a fresh flag
is cleared before the loop; ``break`` sets it, the rest of the body is guarded
by ``if not flag``, and the loop stops once it is set: a ``while`` tests it
first (``not flag and test``), a ``for`` gets it as an extra test checked
before each iteration (annotation ``EXTRA_TEST``, used by the loops pass).
The ``else`` clause of a loop runs after it, guarded by ``not flag`` when the
loop can break.

After this pass no ``break`` remains and no loop has an ``else`` clause.

>>> from ast_hybrid.transpiler.passdoc import show
>>> show(transform, '''
... def f(x, t):
...     while x > 0:
...         x = x - 1
...         if x < t:
...             break
...     else:
...         x = -1
...     return x
... ''')
def f(x, t):
    ah__brk_0 = False
    while not ah__brk_0 and x > 0:
        x = x - 1
        if x < t:
            ah__brk_0 = True
    if not ah__brk_0:
        x = -1
    return x
"""

from __future__ import annotations

import gast

from ast_hybrid.transpiler.ast_tools.jumps import add_loop_test, contains_jump, guard, lower_block
from ast_hybrid.transpiler.ast_tools.origin import copy_origin
from ast_hybrid.transpiler.ast_tools.templates import replace
from ast_hybrid.transpiler.ast_tools.transformer import Transformer

__all__ = ["transform"]


def _is_break(stmt) -> bool:
    return isinstance(stmt, gast.Break)


class _Break(Transformer):
    skip_scopes = True
    statements_only = True

    def __init__(self, ctx):
        self.ctx = ctx

    def _loop(self, node):
        self.generic_visit(node)
        orelse, node.orelse = node.orelse, []
        if not any(contains_jump(s, _is_break) for s in node.body):
            return [node, *orelse]
        flag = self.ctx.namer.new("brk")
        node.body, _ = lower_block(node.body, _is_break, lambda s: replace("flag = True", flag=flag), flag)
        add_loop_test(node, flag)
        out = [*copy_origin(node, replace("flag = False", flag=flag)), node]
        if orelse:
            out.append(guard(flag, orelse, orelse[0]))
        return out

    visit_For = visit_While = visit_AsyncFor = _loop


def transform(fn, ctx):
    return _Break(ctx).transform_body(fn)
