"""``assert`` becomes a runtime call, so a traced test is checked when the program runs.

``assert test, msg`` -> ``ah__.assert_(test, lambda: msg)`` (the message stays
lazy, as in Python).  For a Python value the runtime does exactly what
``assert`` does; for a traced test it checks the value on every call of the
compiled program and raises ``AssertionError`` with the message there.

After this pass no ``assert`` statement remains.

>>> from ast_hybrid.transpiler.passdoc import show
>>> show(transform, '''
... def f(x):
...     assert x.sum() > 0, "x must be positive"
...     return x
... ''')
def f(x):
    ah__.assert_(x.sum() > 0, lambda: 'x must be positive')
    return x
"""

from __future__ import annotations

from ast_hybrid.transpiler.ast_tools.templates import replace
from ast_hybrid.transpiler.ast_tools.transformer import Transformer

__all__ = ["transform"]


class _Asserts(Transformer):
    statements_only = True

    def visit_Assert(self, node):
        if node.msg is None:
            return replace("ah__.assert_(test, None)", test=node.test)
        return replace("ah__.assert_(test, lambda: msg)", test=node.test, msg=node.msg)


def transform(fn, ctx):
    return _Asserts().transform_body(fn)
