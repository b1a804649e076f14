"""Regressions found by the random program generators (``progen``, ``progen_constructs``).

Each function runs as plain Python on concrete values (the oracle) and converted under
``ast_hybrid.jit`` with every argument traced, on inputs that take every branch.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from helpers import load

import ast_hybrid

SOURCE = '''
def walrus_if_in_traced_if(x, y):
    a = y * 0.5
    if y < 0.25:
        if (t := a * 0.5 + 0.25) > y:
            a = t
        else:
            a = t - 0.5
    else:
        a = a + 1.0
    return a + x.sum()


def walrus_if_in_traced_loop(x, y):
    a = y * 0.5
    for v in x:
        if (t := a * 0.5 + v) > y:
            a = t
        else:
            a = t - 0.5
    return a


def walrus_first_operand_in_traced_if(x, y):
    a = y * 0.5
    if x.sum() > 0.0:
        if (t := a * 0.5) > y or a > 0.0:
            a = t + 1.0
    return a
'''

CASES = ["walrus_if_in_traced_if", "walrus_if_in_traced_loop", "walrus_first_operand_in_traced_if"]
INPUTS = [(np.asarray([1.0, -2.0, 0.5, 0.25], np.float32), np.float32(y)) for y in (-1.0, 0.1, 1.0)] + [
    (np.asarray([-1.0, -2.0, 0.5, 0.25], np.float32), np.float32(y)) for y in (-1.0, 0.1, 1.0)]


@pytest.mark.parametrize("name", CASES)
def test_walrus_in_an_if_test_defines_its_name_in_both_branches(name):
    """Found by progen_constructs: a name a nested if's test assigns (:=) counted as read before that
    if (liveness and definite assignment ignored the test's own assignment), so the enclosing traced
    if or loop refused it as HY030 ('assigned in one branch, used after')."""
    f = load(SOURCE, name)
    g = ast_hybrid.jit(f)
    for x, y in INPUTS:
        np.testing.assert_allclose(np.asarray(g(jnp.asarray(x), jnp.asarray(y))), f(x, y), rtol=1e-6)


CHAINS = '''
calls = []


def middle(x):
    calls.append(1)
    return x[1]


def chain_with_subscript(x, n):
    return x * 2.0 if 0 < x[1] < n else x - 1.0


def chain_of_four(x, n):
    return x * 2.0 if x[0] < x.sum() <= n + 3 < x[3] * 10.0 else x - 1.0


def chain_in_or(x, n):
    c = x[0] > n or -1.0 < x[1] * 2.0 < n
    return x * 2.0 if c else x - 1.0


def chain_middle_once(x, n):
    return 1.0 if -10.0 < middle(x) < n else 0.0
'''


@pytest.mark.parametrize("name", ["chain_with_subscript", "chain_of_four", "chain_in_or", "chain_middle_once"])
def test_chained_comparison_with_any_middle_operand(name):
    """Found by README's construct table test: a chain whose middle operand is not a name or a constant
    (0 < x[1] < n) was left to Python, a raw TracerBoolConversionError on a traced value. Each operand is
    evaluated once, in Python's order, as Python does."""
    import sys

    f = load(CHAINS, name)
    calls = sys.modules[f.__module__].calls
    g = ast_hybrid.jit(f)
    for x in ([1.0, -2.0, 0.5, 3.0], [1.0, 0.5, 0.5, 3.0], [-1.0, 1.5, 0.5, 3.0], [0.0, 0.5, 2.0, 0.1]):
        x = np.asarray(x, np.float32)
        for n in (0, 1, 2):
            want = f(x, n)
            del calls[:]
            eager = ast_hybrid.convert(f)(jnp.asarray(x), n)
            assert len(calls) <= 1
            np.testing.assert_allclose(np.asarray(eager), want)
            np.testing.assert_allclose(np.asarray(g(jnp.asarray(x), jnp.int32(n))), want)


DELETES = '''
def del_in_if(x, n):
    t = x * 2.0
    if n > 1:
        x = x + t
        del t
    return x


def del_in_if_read_after(x, n):
    t = x * 2.0
    if n > 1:
        del t
    return x + t


def del_in_loop(x, n):
    for i in range(n):
        t = x * i
        x = x + t
        del t
    return x
'''


@pytest.mark.parametrize("name", ["del_in_if", "del_in_if_read_after", "del_in_loop"])
def test_del_inside_python_control_flow(name):
    """Found by README's construct table test: a `del` inside an if or loop on a Python value made the
    converted statement hand back a deleted variable (UnboundLocalError inside the generated code). Now
    as Python: the variable is gone after the statement, and reading it is Python's UnboundLocalError."""
    f = load(DELETES, name)
    x = np.asarray([1.0, -2.0, 0.5, 3.0], np.float32)
    for n in (0, 1, 2, 3):
        try:
            want = f(x, n)
        except UnboundLocalError:
            with pytest.raises(UnboundLocalError):
                ast_hybrid.convert(f)(jnp.asarray(x), n)
            continue
        np.testing.assert_allclose(np.asarray(ast_hybrid.convert(f)(jnp.asarray(x), n)), want)


PYTHON_ONLY = '''
def comprehension_if(x, n):
    ys = [v * 2.0 for v in x if v > n]
    return len(ys)


def match_subject(x, n):
    match n:
        case 1:
            return x + 1.0
        case _:
            return x


def match_guard(x, n):
    match n:
        case k if k > 1:
            return x * k
    return x


def match_capture_only(x, n):
    match x.sum() + n:
        case s:
            return x * s
'''


@pytest.mark.parametrize("name, line, col, what", [("comprehension_if", 3, 33, "comprehension's `if`"),
                                                    ("match_subject", 8, 11, "subject of `match`"),
                                                    ("match_guard", 17, 19, "guard of a `case`")])
def test_traced_comprehension_if_and_match_are_hy032(name, line, col, what):
    """Found by README's construct table test: a comprehension's `if` or a `match` on a traced value was
    JAX's TracerBoolConversionError; now HY032 at the expression, and plain Python on Python values."""
    from ast_hybrid import ConversionError

    f = load(PYTHON_ONLY, name)
    x = np.asarray([1.0, -2.0, 0.5, 3.0], np.float32)
    for n in (0, 1, 2):
        want = f(x, n)
        np.testing.assert_allclose(np.asarray(ast_hybrid.convert(f)(jnp.asarray(x), n)), np.asarray(want))
    with pytest.raises(ConversionError) as info:
        ast_hybrid.jit(f)(jnp.asarray(x), jnp.int32(1))
    (d,) = info.value.diagnostics
    assert (d.code, d.span.line, d.span.col) == ("HY032", line, col), str(info.value)
    assert what in d.message and d.path == f.__code__.co_filename


def test_match_with_only_a_capture_runs_traced():
    f = load(PYTHON_ONLY, "match_capture_only")
    x = np.asarray([1.0, -2.0, 0.5, 3.0], np.float32)
    np.testing.assert_allclose(np.asarray(ast_hybrid.jit(f)(jnp.asarray(x), jnp.int32(2))), f(x, 2), rtol=1e-6)
