"""Variables that may be undefined, and declarations that must reach generated functions.

Python raises ``UnboundLocalError`` when a variable is read before it is
assigned.  The control-flow pass gives such a variable the placeholder
``ah__.Undefined`` so it can pass it between functions; so that reading it
still fails where Python's read would:

- every read that may run before its variable is assigned (definite
  assignment, :mod:`ast_hybrid.analysis`) becomes ``ah__.ld(name)``, which
  raises ``UnboundLocalError`` on the placeholder;
- ``global``/``nonlocal`` declarations move to the top of the function and are
  recorded in ``ctx.declared``, so the functions the next pass creates can
  declare them too.

After this pass every possibly-undefined read is checked, and the function's
declarations are its first statements.

>>> from ast_hybrid.passdoc import show
>>> show(transform, '''
... def f(x):
...     global calls
...     if x > 0:
...         calls = calls + 1
...         y = x
...     return y
... ''')
def f(x):
    global calls
    if x > 0:
        calls = calls + 1
        y = x
    return ah__.ld(y)
"""

from __future__ import annotations

import gast

from ast_hybrid.analysis import SCOPES
from ast_hybrid.origin import copy_origin
from ast_hybrid.templates import replace_expr

__all__ = ["transform"]

class _Loads(gast.NodeTransformer):
    def __init__(self, analysis):
        self.a = analysis

    def visit_Name(self, node):
        if isinstance(node.ctx, gast.Load) and self.a.is_maybe_undefined(node):
            return copy_origin(node, replace_expr("ah__.ld(v)", v=node))
        return node

    def _scope(self, node):
        return node


for _t in SCOPES:
    setattr(_Loads, f"visit_{_t.__name__}", _Loads._scope)


class _Hoist(gast.NodeTransformer):
    def __init__(self):
        self.found = {"global": [], "nonlocal": []}

    def _decl(self, node):
        kind = "global" if isinstance(node, gast.Global) else "nonlocal"
        self.found[kind].extend(n for n in node.names if n not in self.found[kind])
        return None

    visit_Global = visit_Nonlocal = _decl

    def _scope(self, node):
        return node


for _t in SCOPES:
    setattr(_Hoist, f"visit_{_t.__name__}", _Hoist._scope)


def transform(fn, ctx):
    hoist = _Hoist()
    fn.body = [s for s in (hoist.visit(s) for s in fn.body) if s is not None] or [gast.Pass()]
    ctx.declared = {k: v for k, v in hoist.found.items() if v}
    decls = [gast.Global(names=list(v)) if k == "global" else gast.Nonlocal(names=list(v))
             for k, v in ctx.declared.items()]

    fn.body = decls + fn.body
    loads = _Loads(ctx.analysis(fn))
    fn.body = [loads.visit(s) for s in fn.body]
    return fn
