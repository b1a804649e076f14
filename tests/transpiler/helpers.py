"""Test helpers: user code in real module files, and a few passes applied alone.

``load(source)`` writes the source to a real ``.py`` file and imports it, so
``inspect`` can read functions back as it does for users.  ``only(passes,
source)`` runs just the given passes on the first function of ``source``
(written to a file too), compiles the result with a fresh runtime, and returns
it: a per-pass behavioural test compares it with the original on concrete inputs.
"""

from __future__ import annotations

import sys
import textwrap
import types
from pathlib import Path

import gast

sys.path.insert(0, str(Path(__file__).parent))
import progen  # noqa: E402

from ast_hybrid.converter import _arguments, _class_name  # noqa: E402
from ast_hybrid.naming import RUNTIME, Namer  # noqa: E402
from ast_hybrid.origin import to_user_lines  # noqa: E402
from ast_hybrid.pipeline import Context  # noqa: E402
from ast_hybrid.runtime import Runtime  # noqa: E402
from ast_hybrid.source import SourceFile  # noqa: E402

__all__ = ["load", "only"]


def load(source: str, name: str = "f"):
    """``name`` from a fresh module made of ``source`` (dedented)."""
    return progen.load(textwrap.dedent(source), name)


def only(passes, source: str, name: str = "f", extra_globals=None):
    """``(original, converted)``: the function ``name`` of ``source``, and it after ``passes`` alone."""
    original = load(source, name)
    code = original.__code__
    src = SourceFile.from_code(code)
    fn = next(n for n in src.parse().body if isinstance(n, gast.FunctionDef))
    fn.decorator_list = []
    taken = {n.id for n in gast.walk(fn) if isinstance(n, gast.Name)}
    ctx = Context(src, Namer(taken), class_name=_class_name(code))
    for p in passes:
        fn = p.transform(fn, ctx)
        ctx.invalidate()
    freevars = [v for v in code.co_freevars if v != RUNTIME]
    factory = gast.FunctionDef(name="ah__factory", args=_arguments([RUNTIME, *freevars]),
                               body=[fn, gast.Return(value=gast.Name(id=fn.name, ctx=gast.Load(),
                                                                     annotation=None, type_comment=None))],
                               decorator_list=[], returns=None, type_comment=None, type_params=[])
    tree = gast.Module(body=[factory], type_ignores=[])
    to_user_lines(tree, src)
    compiled = compile(gast.gast_to_ast(tree), src.path, "exec")
    factory_code = next(c for c in compiled.co_consts if isinstance(c, types.CodeType))
    inner = next(c for c in factory_code.co_consts if isinstance(c, types.CodeType) and c.co_name == fn.name)
    rt = Runtime({}, src, ctx.sites, fn.name, converter=None)
    g = dict(original.__globals__)
    g.update(extra_globals or {})
    cells = dict(zip(code.co_freevars, original.__closure__ or ()))
    cells[RUNTIME] = types.CellType(rt)
    closure = tuple(cells[v] for v in inner.co_freevars)
    converted = types.FunctionType(inner, g, fn.name, original.__defaults__, closure)
    return original, converted
