"""What a method's body means only inside its class: zero-argument ``super()`` and ``__private`` names.

A converted method is compiled outside its ``class`` statement, where Python
would neither give ``super()`` its implicit ``__class__`` cell nor mangle
``self.__x`` into ``self._Net__x``.  This pass makes both explicit:

- ``super()`` becomes ``super(__class__, <first parameter>)``; ``__class__`` is
  then an ordinary free variable, bound to the original method's cell;
- with ``ctx.class_name`` known, every ``__name`` (two leading underscores, not
  a dunder) is mangled as Python would (``_Net__name``).

After this pass the function means the same when compiled at module level.

>>> from ast_hybrid.transpiler.passdoc import show
>>> show(transform, '''
... def hybrid_forward(self, F, x):
...     y = super().hybrid_forward(F, x)
...     return y + self.__scale
... ''', class_name='Net')
def hybrid_forward(self, F, x):
    y = super(__class__, self).hybrid_forward(F, x)
    return y + self._Net__scale
"""

from __future__ import annotations

import gast

from ast_hybrid.common.walkers import parameters
from ast_hybrid.transpiler.ast_tools.templates import name
from ast_hybrid.transpiler.ast_tools.transformer import Transformer

__all__ = ["transform"]


def _mangle(identifier: str, class_name: str) -> str:
    if not identifier.startswith("__") or identifier.endswith("__") or "." in identifier:
        return identifier
    stripped = class_name.lstrip("_")
    return f"_{stripped}{identifier}" if stripped else identifier


class _ClassScope(Transformer):
    def __init__(self, first_param, class_name):
        self.first_param = first_param
        self.class_name = class_name

    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        if (isinstance(f, gast.Name) and f.id == "super" and not node.args and not node.keywords
                and self.first_param is not None):
            node.args = [name("__class__"), name(self.first_param)]
        return node

    def _m(self, identifier):
        return _mangle(identifier, self.class_name) if self.class_name else identifier

    def visit_Name(self, node):
        node.id = self._m(node.id)
        return node

    def visit_Attribute(self, node):
        self.generic_visit(node)
        node.attr = self._m(node.attr)
        return node

    def visit_keyword(self, node):
        self.generic_visit(node)
        if node.arg is not None:
            node.arg = self._m(node.arg)
        return node

    def visit_FunctionDef(self, node):
        node.name = self._m(node.name)
        return self.generic_visit(node)

    def visit_Global(self, node):
        node.names = [self._m(n) for n in node.names]
        return node

    visit_Nonlocal = visit_Global


def transform(fn, ctx):
    text = ctx.source.text
    if "super" not in text and (ctx.class_name is None or "__" not in text):
        return fn       # neither super() nor a name to mangle can be in the function: no walk
    params = parameters(fn.args, keyword_only=False, starred=False)
    first = params[0].id if params else None
    t = _ClassScope(first, ctx.class_name)
    fn.args = t.visit(fn.args)
    return t.transform_body(fn)
