"""``continue`` becomes a flag that skips the rest of the loop body.

For each loop whose body continues (nested loops handle their own), a fresh
flag is cleared at the top of the body; ``continue`` sets it, and the
statements after anything that may set it are guarded by ``if not flag``.

After this pass no ``continue`` remains.

>>> from ast_hybrid.transpiler.passdoc import show
>>> show(transform, '''
... def f(x):
...     for v in x:
...         if v < 0:
...             continue
...         x = x + v
...     return x
... ''')
def f(x):
    for v in x:
        ah__cont_0 = False
        if v < 0:
            ah__cont_0 = True
        if not ah__cont_0:
            x = x + v
    return x
"""

from __future__ import annotations

import gast

from ast_hybrid.transpiler.ast_tools.jumps import contains_jump, lower_block
from ast_hybrid.transpiler.ast_tools.origin import copy_origin
from ast_hybrid.transpiler.ast_tools.templates import replace
from ast_hybrid.transpiler.ast_tools.transformer import Transformer

__all__ = ["transform"]


def _is_continue(stmt) -> bool:
    return isinstance(stmt, gast.Continue)


class _Continue(Transformer):
    skip_scopes = True
    statements_only = True

    def __init__(self, ctx):
        self.ctx = ctx

    def _loop(self, node):
        self.generic_visit(node)
        if not any(contains_jump(s, _is_continue) for s in node.body):
            return node
        flag = self.ctx.namer.new("cont")
        body, _ = lower_block(node.body, _is_continue, lambda s: replace("flag = True", flag=flag), flag)
        node.body = copy_origin(node, replace("flag = False", flag=flag)) + body
        return node

    visit_For = visit_While = visit_AsyncFor = _loop


def transform(fn, ctx):
    return _Continue(ctx).transform_body(fn)
