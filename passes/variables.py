"""Variables that may be undefined, and declarations that must reach generated functions.

Python raises ``UnboundLocalError`` when a variable is read before it is
assigned.  The control-flow pass gives such a variable the placeholder
``ah__.Undefined`` so it can pass it between functions; so that reading it
still fails where Python's read would:

- every read that may run before its variable is assigned (definite
  assignment, :mod:`ast_hybrid.transpiler.ast_tools.analysis`) becomes ``ah__.ld(name)``, which
  raises ``UnboundLocalError`` on the placeholder;
- a ``del name`` inside an ``if``/``while``/``for`` is followed by ``name =
  ah__.Undefined('name')``: the statement's function hands its state back, and the
  deleted variable is part of it (a read after it is checked, as above);
- ``global``/``nonlocal`` declarations move to the top of the function and are
  recorded in ``ctx.declared``, so the functions the next pass creates can
  declare them too.

After this pass every possibly-undefined read is checked, and the function's
declarations are its first statements.

>>> from ast_hybrid.transpiler.passdoc import show
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

from ast_hybrid.common.walkers import own_statements
from ast_hybrid.transpiler.ast_tools.analysis import CONTROL_FLOW
from ast_hybrid.transpiler.ast_tools.origin import copy_origin
from ast_hybrid.transpiler.ast_tools.templates import replace, replace_expr
from ast_hybrid.transpiler.ast_tools.transformer import Transformer

__all__ = ["transform", "PRESERVES_ANALYSIS"]

#: The analysis this pass computes (after hoisting) stays valid: wrapping a read
#: in ``ah__.ld`` changes no variable's activity, so the next pass reuses it.
PRESERVES_ANALYSIS = True


class _Loads(Transformer):
    skip_scopes = True

    def __init__(self, analysis):
        self.a = analysis

    def visit_Name(self, node):
        if isinstance(node.ctx, gast.Load) and self.a.is_maybe_undefined(node):
            return replace_expr("ah__.ld(v)", v=node)
        return node


class _Hoist(Transformer):
    skip_scopes = True
    statements_only = True

    def __init__(self):
        self.found = {"global": [], "nonlocal": []}

    def _decl(self, node):
        kind = "global" if isinstance(node, gast.Global) else "nonlocal"
        self.found[kind].extend(n for n in node.names if n not in self.found[kind])
        return None

    visit_Global = visit_Nonlocal = _decl


def transform(fn, ctx):
    hoist = _Hoist()
    hoist.transform_body(fn)
    ctx.declared = {k: v for k, v in hoist.found.items() if v}
    decls = [gast.Global(names=list(v)) if k == "global" else gast.Nonlocal(names=list(v))
             for k, v in ctx.declared.items()]

    fn.body = decls + fn.body
    if not any(isinstance(s, CONTROL_FLOW) for s in own_statements(fn)):
        return fn       # straight-line code: Python itself raises where a read is unbound
    analysis = ctx.analysis(fn)
    if analysis.any_maybe_undefined():   # else every read is of a variable assigned on every path to it
        fn = _Loads(analysis).transform_body(fn)
    fn.body = _undefine_deleted(fn.body, False)     # after the analysis: it must see the del alone
    return fn


_BLOCKS = ("body", "orelse", "finalbody")


def _undefine_deleted(block, inside):
    """``block`` with ``name = ah__.Undefined('name')`` after each ``del name`` inside control flow."""
    out = []
    for s in block:
        out.append(s)
        t = type(s)
        if t is gast.Delete and inside:
            for target in s.targets:
                if isinstance(target, gast.Name):
                    out += [copy_origin(s, n) for n in replace("v = ah__.Undefined(label)", v=target.id,
                                                               label=gast.Constant(value=target.id, kind=None))]
        if t in (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef, gast.Lambda):
            continue
        deeper = inside or t in CONTROL_FLOW
        for name in _BLOCKS:
            sub = getattr(s, name, None)
            if isinstance(sub, list) and sub and isinstance(sub[0], gast.stmt):
                setattr(s, name, _undefine_deleted(sub, deeper))
        for h in getattr(s, "handlers", ()):
            h.body = _undefine_deleted(h.body, deeper)
        for c in getattr(s, "cases", ()):
            c.body = _undefine_deleted(c.body, deeper)
    return out
