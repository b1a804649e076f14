"""A ``while`` whose test assigns a name (``:=``) evaluates the test at the top of its body.

``while (y := f(x)) > 0: body`` assigns ``y`` on every test; the control-flow pass
moves a loop's test into a function of its own, where ``y`` would be local and
lost.  So such a loop becomes ``while True:`` whose body first evaluates the test,
runs the loop's ``else`` and leaves when it is false, then runs the old body:
``y`` is assigned where the body's other assignments are, and becomes loop state
like them.  Python's ``while ... else`` is kept exactly: the ``else`` runs when the
test is false, never after a ``break`` of the body.

After this pass no ``while`` test contains ``:=``.  Runs before the jump passes,
which lower the ``break`` it adds.

>>> from ast_hybrid.transpiler.passdoc import show
>>> show(transform, '''
... def f(x):
...     while (y := x * 2) < 10:
...         x = y
...     else:
...         x = -x
...     return x
... ''')
def f(x):
    while True:
        if not (y := (x * 2)) < 10:
            x = -x
            break
        x = y
    return x
"""

from __future__ import annotations

import gast

from ast_hybrid.transpiler.ast_tools.origin import copy_origin
from ast_hybrid.transpiler.ast_tools.templates import replace
from ast_hybrid.transpiler.ast_tools.transformer import Transformer

__all__ = ["transform"]


class _LoopTests(Transformer):
    skip_scopes = True
    statements_only = True

    def visit_While(self, node):
        self.generic_visit(node)
        if not any(isinstance(n, gast.NamedExpr) for n in gast.walk(node.test)):
            return node
        exit_ = copy_origin(node, replace("if not test:\n    orelse\n    break", test=node.test,
                                          orelse=node.orelse))
        loop = copy_origin(node, replace("while True:\n    body", body=[*exit_, *node.body]))
        return loop


def transform(fn, ctx):
    return _LoopTests().transform_body(fn)
