"""Every call goes through the runtime, which converts user functions recursively.

``f(a, *b, k=v, **kw)`` -> ``ah__.converted_call(f, (a, *b), {'k': v, **kw})``
(``None`` when there are no keyword arguments).  At run time
``converted_call`` converts user functions and methods (helpers given ``F``,
``super().hybrid_forward``, child blocks' forwards) through the same cache as
``ast_hybrid.convert``, maps ``print`` to the run-time print and ``range`` to
a range that may have a traced bound, and calls everything else (builtins,
jax, numpy, ast_hybrid's own ops, functions marked ``do_not_convert``) as is.

Left alone: calls of the runtime itself (``ah__.*``) and of the builtins that
look at their caller's frame (``locals``, ``globals``, ``vars``, ``eval``,
``exec``, ``dir``), which must stay direct calls.

After this pass every user call is a ``converted_call``.

>>> from ast_hybrid.transpiler.passdoc import show
>>> show(transform, '''
... def f(self, F, x):
...     y = self.helper(F, x, scale=2)
...     print(y)
...     return F.relu(*[y])
... ''')
def f(self, F, x):
    y = ah__.converted_call(self.helper, (F, x), {'scale': 2})
    ah__.converted_call(print, (y,), None)
    return ah__.converted_call(F.relu, (*[y],), None)
"""

from __future__ import annotations

import gast

from ast_hybrid.transpiler.ast_tools.naming import RUNTIME
from ast_hybrid.transpiler.ast_tools.transformer import Transformer

__all__ = ["transform"]

_FRAME_BUILTINS = frozenset({"locals", "globals", "vars", "eval", "exec", "dir"})


def _direct(func) -> bool:
    if isinstance(func, gast.Name):
        return func.id in _FRAME_BUILTINS
    return isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) and func.value.id == RUNTIME


class _CallTrees(Transformer):
    wants = staticmethod(lambda node: node.__class__ is gast.Call)

    def visit_Call(self, node):
        self.generic_visit(node)
        if _direct(node.func):
            return node
        args = gast.Tuple(elts=node.args, ctx=gast.Load())
        if node.keywords:
            keys = [None if k.arg is None else gast.Constant(value=k.arg, kind=None) for k in node.keywords]
            kwargs = gast.Dict(keys=keys, values=[k.value for k in node.keywords])
        else:
            kwargs = gast.Constant(value=None, kind=None)
        func = gast.Attribute(value=gast.Name(id=RUNTIME, ctx=gast.Load(), annotation=None, type_comment=None),
                              attr="converted_call", ctx=gast.Load())
        return gast.Call(func=func, args=[node.func, args, kwargs], keywords=[])


def transform(fn, ctx):
    return _CallTrees().transform_body(fn)
