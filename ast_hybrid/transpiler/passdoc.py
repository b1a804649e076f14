"""Run one pass on a snippet and print the result: the before/after in each pass's docstring.

>>> from passes import logical
>>> show(logical, '''
... def f(a, b):
...     return a and not b
... ''')
def f(a, b):
    return ah__.and_(a, lambda: ah__.not_(b))
"""

from __future__ import annotations

import textwrap

import gast

__all__ = ["show", "run"]


def run(pass_module, source: str, class_name: str | None = None):
    """The gast FunctionDef of ``source``'s first statement after ``pass_module``
    (a pass module, or its ``transform`` function)."""
    from .ast_tools.naming import Namer
    from .pipeline import Context
    from ast_hybrid.common.source import SourceFile

    src = SourceFile.from_text(textwrap.dedent(source).strip() + "\n", "<doc>")
    fn = src.parse().body[0]
    taken = {n.id for n in gast.walk(fn) if isinstance(n, gast.Name)}
    ctx = Context(src, Namer(taken), class_name=class_name)
    return getattr(pass_module, "transform", pass_module)(fn, ctx)


def show(pass_module, source: str, class_name: str | None = None) -> None:
    print(gast.unparse(run(pass_module, source, class_name)).strip())
