"""The source of a code object without tokenizing (``source._def_lines``) agrees with :mod:`inspect`."""

from __future__ import annotations

import ast
import importlib.util
import inspect
import textwrap

import pytest

from ast_hybrid.source import SourceFile, _def_lines

MODULE = '''
import functools


def plain(x):
    return x + 1


@functools.lru_cache(maxsize=None)
@functools.lru_cache(maxsize=8)
def decorated(x):
    y = x * 2
    return y


def black_style(
    x,
    y=2,
):
    return x + y


def trailing_pass(x):
    if x:
        return 1
    else:
        pass
    # a comment at the end of the body


def nested(x):
    def inner(y):
        return [
            y
        ]
    return inner(x)


def column_zero_string(x):
    s = """
a line at column 0
"""
    return s


def dead_string_at_end(x):
    return x
    """
column 0, no instruction: the fast path cannot see this line
"""


class Net:
    def method(self, x):
        return x   # same-indent code follows

    def after(self):
        return 0


def lambdas():
    return lambda v: v + 1


def last_in_file(x):
    return x
'''

NAMES = ["plain", "decorated", "black_style", "trailing_pass", "nested", "column_zero_string",
         "dead_string_at_end", "Net.method", "Net.after", "last_in_file"]


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path = tmp_path_factory.mktemp("src") / "shapes.py"
    path.write_text(MODULE)
    spec = importlib.util.spec_from_file_location("ah_source_shapes", path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def _code(mod, qualname):
    obj = mod
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return inspect.unwrap(obj).__code__


def _shape(text):
    return ast.dump(ast.parse(textwrap.dedent(text)).body[0])


@pytest.mark.parametrize("qualname", NAMES)
def test_same_function_as_inspect(mod, qualname):
    code = _code(mod, qualname)
    lines, first = inspect.getsourcelines(code)
    src = SourceFile.from_code(code)
    assert src.first_line == first
    assert _shape(src.text) == _shape("".join(lines))
    assert src.indent == (4 if "." in qualname else 0)


def test_fast_path_taken_where_it_can_be(mod):
    taken = {q for q in NAMES if _def_lines(_code(mod, q)) is not None}
    # a string constant with no instruction reaching column 0 makes the excerpt unparsable: inspect decides
    assert taken == set(NAMES) - {"dead_string_at_end"}


def test_lambda_goes_to_inspect(mod):
    assert _def_lines(mod.lambdas().__code__) is None


@pytest.mark.parametrize("qualname", NAMES)
def test_user_ast_is_the_files_own_tree(mod, qualname):
    """An excerpt parsed by gast and moved back by ``user_ast`` equals Python's parse of the whole
    file at that ``def``: same nodes, same lines and columns (decorators aside: conversion drops them)."""
    from ast_hybrid.origin import user_ast

    code = _code(mod, qualname)
    src = SourceFile.from_code(code)
    fn = src.parse().body[0]
    fn.decorator_list = []
    ours = user_ast(fn, src)
    whole = ast.parse(MODULE)
    (theirs,) = [n for n in ast.walk(whole) if isinstance(n, ast.FunctionDef)
                 and n.name == code.co_name and n.lineno == src.first_line + len(
                     [ln for ln in src.text.splitlines() if ln.lstrip().startswith("@")])]
    theirs.decorator_list = []
    assert ast.dump(ours, include_attributes=True) == ast.dump(theirs, include_attributes=True)


def test_user_ast_fills_missing_locations_from_the_parent():
    import gast

    from ast_hybrid.origin import user_ast

    src = SourceFile(text="def f(x):\n    return x\n", path="m.py", first_line=7, indent=4)
    fn = src.parse().body[0]
    ret = fn.body[0]
    ret.value = gast.Call(func=gast.Name(id="g", ctx=gast.Load(), annotation=None, type_comment=None),
                          args=[ret.value], keywords=[])
    out = user_ast(fn, src)
    call = out.body[0].value
    assert (call.lineno, call.col_offset, call.func.lineno) == (8, 8, 8)
    assert (call.args[0].lineno, call.args[0].col_offset) == (8, 15)
    compile(ast.Module(body=[out], type_ignores=[]), "m.py", "exec")
