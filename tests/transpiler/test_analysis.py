"""The analysis' two ways of finding a function's locals agree: Python's rule (no nested scope) and beniget's chains."""

from __future__ import annotations

import gast
import pytest

from ast_hybrid.common.walkers import QuietChains, bound_names
from ast_hybrid.transpiler.ast_tools.analysis import FunctionAnalysis
from ast_hybrid.cli.convert import functions
from ast_hybrid.common.source import read_file


def _beniget_locals(fn):
    chains = QuietChains()
    chains.visit(gast.Module(body=[fn], type_ignores=[]))
    return frozenset(d.name() for d in chains.locals[fn])


SHAPES = '''
def binds_everything(a, /, b, *args, c, d=1, **kw):
    import os.path
    from math import sqrt as root
    x = y = 0
    p, (q, *r) = 1, (2, 3, 4)
    x += 1
    del y
    if (w := x) > 0:
        pass
    for i, j in kw.items():
        pass
    with open(a) as (f, g):
        pass
    try:
        pass
    except ValueError as err:
        pass
    match b:
        case [1, *rest]:
            pass
        case {"k": v, **others}:
            pass
        case Point(x=px) as pt:
            pass
    return root


def declares(x):
    global counter
    counter = x
    return counter


def outer():
    n = 0

    def inner():
        nonlocal n
        n = n + 1
        return n
    return inner


def reads_only(x):
    return x.sum() + y
'''


def _fns(text):
    return [n for n in gast.walk(gast.parse(text)) if isinstance(n, gast.FunctionDef)]


@pytest.mark.parametrize("fn", _fns(SHAPES), ids=lambda f: f.name)
def test_python_rule_equals_chains(fn):
    ours = bound_names(fn)
    if fn.name == "outer":
        assert ours is None         # a nested def: chains decide
        return
    if fn.name == "inner":
        # analysed alone, beniget has no enclosing scope for `nonlocal n` and binds it here
        assert ours == frozenset() and _beniget_locals(fn) == {"n"}
        return
    assert ours == _beniget_locals(fn)


def test_declared_names_are_not_locals():
    (fn,) = [f for f in _fns(SHAPES) if f.name == "declares"]
    assert "counter" not in bound_names(fn) and "counter" not in _beniget_locals(fn)


def test_nested_scope_reads_still_come_from_chains():
    (fn,) = _fns('''
def f(x, c):
    if c:
        y = x
    g = lambda: y
    return g
''')
    a = FunctionAnalysis(fn)
    assert "y" in a.live_after(fn.body[0])       # read inside the lambda, where it is defined


@pytest.mark.corpus
def test_python_rule_equals_chains_on_mxnet_gluon(gluon_tree):
    checked = 0
    for path in sorted(gluon_tree.rglob("*.py")):
        for _, fn, _ in list(functions(read_file(path).parse())):
            ours = bound_names(fn)
            if ours is not None:
                assert ours == _beniget_locals(fn), f"{path}::{fn.name}"
                checked += 1
    assert checked > 400
