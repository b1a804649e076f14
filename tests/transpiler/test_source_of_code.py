"""The source of a code object without tokenizing (``source._def_lines``) agrees with :mod:`inspect`."""

from __future__ import annotations

import ast
import importlib.util
import inspect

import gast
import pytest

from ast_hybrid.common.source import SourceFile, _def_lines

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

    def column_zero_in_a_method(self):
        s = """
column 0 inside a method: nothing to dedent
    an indented line of the string
"""
        return s


def lambdas():
    return lambda v: v + 1


def last_in_file(x):
    return x
'''

NAMES = ["plain", "decorated", "black_style", "trailing_pass", "nested", "column_zero_string",
         "dead_string_at_end", "Net.method", "Net.after", "Net.column_zero_in_a_method", "last_in_file"]


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


def _files_def(code):
    """The file's own ast ``FunctionDef`` of ``code`` (parsed whole, as Python does)."""
    (node,) = [n for n in ast.walk(ast.parse(MODULE)) if isinstance(n, ast.FunctionDef)
               and n.name == code.co_name and (n.decorator_list[0].lineno if n.decorator_list else n.lineno)
               == code.co_firstlineno]
    return node


@pytest.mark.parametrize("qualname", NAMES)
def test_same_function_as_the_file(mod, qualname):
    code = _code(mod, qualname)
    _, first = inspect.getsourcelines(code)
    src = SourceFile.from_code(code)
    assert src.first_line + src.wrapped == first
    (fn,) = src.parse().body
    assert ast.dump(gast.gast_to_ast(fn)) == ast.dump(_files_def(code))
    assert src.indent == (4 if "." in qualname and not src.wrapped else 0)
    assert src.wrapped == (qualname == "Net.column_zero_in_a_method")


def test_fast_path_taken_where_it_can_be(mod):
    taken = {q for q in NAMES if _def_lines(_code(mod, q)) is not None}
    # a string constant with no instruction reaching column 0 makes the excerpt unparsable: inspect decides;
    # a string reaching column 0 in a method leaves nothing to dedent: the excerpt is wrapped instead
    assert taken == set(NAMES) - {"dead_string_at_end", "Net.column_zero_in_a_method"}


def test_column_zero_string_in_a_method_converts_with_its_value(mod):
    import ast_hybrid

    net = mod.Net()
    assert ast_hybrid.convert(net.column_zero_in_a_method)() == net.column_zero_in_a_method()


def test_lambda_goes_to_inspect(mod):
    assert _def_lines(mod.lambdas().__code__) is None


@pytest.mark.parametrize("qualname", NAMES)
def test_user_ast_is_the_files_own_tree(mod, qualname):
    """An excerpt parsed by gast and moved back by ``user_ast`` equals Python's parse of the whole
    file at that ``def``: same nodes, same lines and columns (decorators aside: conversion drops them)."""
    from ast_hybrid.transpiler.ast_tools.origin import user_ast

    code = _code(mod, qualname)
    src = SourceFile.from_code(code)
    fn = src.parse().body[0]
    fn.decorator_list = []
    theirs = _files_def(code)
    theirs.decorator_list = []
    assert ast.dump(user_ast(fn, src), include_attributes=True) == ast.dump(theirs, include_attributes=True)


def test_user_ast_fills_missing_locations_from_the_parent():
    import gast

    from ast_hybrid.transpiler.ast_tools.origin import user_ast

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
