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
from pathlib import Path

import gast

sys.path.insert(0, str(Path(__file__).parent))
import progen  # noqa: E402

from ast_hybrid.transpiler.converter import (bind, compile_tree, enclosing_class_name, inner_code,  # noqa: E402
                                             transform_function)
from ast_hybrid.transpiler.runtime import Runtime  # noqa: E402
from ast_hybrid.common.source import SourceFile  # noqa: E402

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
    tree, sites = transform_function(fn, src, enclosing_class_name(code), code.co_freevars, passes=passes)
    inner = inner_code(compile_tree(tree, src), fn.name)
    g = dict(original.__globals__)
    g.update(extra_globals or {})
    return original, bind(inner, original, Runtime({}, src, sites, fn.name, converter=None), g)
