"""Items and attributes with static keys carried through traced control flow (issue 13, item 1).

Each function runs as plain Python on concrete jax arrays (the oracle: Python's own
control flow on concrete values) and converted under ``jax.jit`` with every argument
traced; inputs are chosen so that each traced ``if`` takes both branches and each
traced loop runs zero, one and several times.  What cannot be carried is a diagnostic
naming the item or attribute and why.
"""

from __future__ import annotations

import sys

import jax.numpy as jnp
import numpy as np
import pytest
from helpers import load

import ast_hybrid
from ast_hybrid import ConversionError

SOURCE = '''
import jax.numpy as jnp


class State:
    def __init__(self, h):
        self.h = h


class Cell:
    def __init__(self):
        self.state = State(0.0)

    def step(self, x, n):
        self.state.h = x * 0.0
        for i in range(n):
            if self.state.h.sum() > 3.0:
                self.state.h = self.state.h * 0.5
            else:
                self.state.h = self.state.h + x
        return self.state.h


def dict_in_if(x, n):
    d = {"h": x, "c": x * 2.0}
    if x.sum() > 0:
        d["h"] = d["h"] + 1.0
    else:
        d["c"] = d["c"] - n
    return d["h"] * 3.0 + d["c"]


def dict_in_traced_range(x, n):
    st = {"a": x}
    for i in range(n):
        st["a"] = st["a"] * 0.5 + i
    return st["a"]


def list_items_in_scan(x, n):
    out = [x[0] * 0.0, x[0] * 0.0]
    for v in x:
        if v > 0:
            out[0] = out[0] + v
        else:
            out[-1] = out[-1] + v * n
    return out[0] - out[1]


def attribute_chain_in_while(x, n):
    cell = Cell()
    cell.state.h = x
    k = 0
    while k < n:
        cell.state.h = cell.state.h * 2.0
        k = k + 1
    return cell.state.h


def while_test_reads_the_item(x, n):
    d = {"h": jnp.abs(x) + 1.0}
    while d["h"].sum() < n * 10.0:
        d["h"] = d["h"] * 2.0
    return d["h"]


def key_new_in_both_branches(x, n):
    d = {}
    if x.sum() > n:
        d["a"] = x * 2.0
    else:
        d["a"] = x - 1.0
    return d["a"]


def key_from_a_variable(x, n):
    d = {"p": x, "q": x}
    for name in ("p", "q"):             # a Python loop: `name` is static in the traced one
        for i in range(n):
            d[name] = d[name] + 1.0
    return d["p"] - d["q"] * 2.0


def augmented_and_tuple_targets(x, n):
    d = {"s": x, "t": x}
    for i in range(n):
        d["s"] += x
        d["t"], extra = d["t"] * 0.5, i
    return d["s"] + d["t"]


def break_and_return(x, n):
    acc = {"v": x * 0.0}
    for i in range(n):
        acc["v"] = acc["v"] + x
        if acc["v"].sum() > 4.0:
            break
        if acc["v"].sum() < -4.0:
            return acc["v"] * 10.0
    return acc["v"]


def nested_if_in_loop(x, n):
    d = {"a": x * 0.0, "b": x * 0.0}
    for i in range(n):
        if x[0] > 0:
            if i > 1:
                d["a"] = d["a"] + 1.0
            else:
                d["b"] = d["b"] + i
        else:
            d["a"] = d["a"] - x
    return d["a"] + d["b"]


def method_state(x, n):
    return Cell().step(x, n)


def container_seen_through_another_name(x, n):
    d = {"h": x}
    alias = d
    if x.sum() > 0:
        alias["h"] = alias["h"] + n
    return d["h"]
'''

CASES = ["dict_in_if", "dict_in_traced_range", "list_items_in_scan", "attribute_chain_in_while",
         "while_test_reads_the_item", "key_new_in_both_branches", "key_from_a_variable",
         "augmented_and_tuple_targets", "break_and_return", "nested_if_in_loop", "method_state",
         "container_seen_through_another_name"]
INPUTS = [(np.array([1.0, -2.0, 3.0], np.float32), 3), (np.array([-1.0, -2.0, -3.0], np.float32), 0),
          (np.array([2.0, 0.5, 1.0], np.float32), 1), (np.array([-3.0, 2.0, -1.0], np.float32), 5)]


@pytest.fixture(scope="module")
def module():
    return sys.modules[load(SOURCE, "Cell").__module__]


@pytest.mark.parametrize("name", CASES)
def test_carried_items_and_attributes_equal_plain_python(module, name):
    f = getattr(module, name)
    g = ast_hybrid.jit(f)
    for x, n in INPUTS:
        want = np.asarray(f(jnp.asarray(x), n))
        got = np.asarray(g(jnp.asarray(x), jnp.asarray(n, jnp.int32)))
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=f"{name}{(x, n)}")


def test_the_container_holds_the_final_values_after_the_call():
    f = load('''
    def f(x, d):
        for i in range(3):
            if x.sum() > i:
                d["h"] = d["h"] + x
        return x
    ''')
    d = {"h": jnp.zeros(2)}
    ast_hybrid.convert(f)(jnp.ones(2), d)                 # converted, not jitted: the dict is the caller's
    want = {"h": jnp.zeros(2)}
    f(jnp.ones(2), want)
    np.testing.assert_array_equal(d["h"], want["h"])


def _diagnose(f, *args):
    with pytest.raises(ConversionError) as info:
        ast_hybrid.jit(f)(*args)
    return info.value.diagnostics


X = jnp.asarray([1.0, 2.0], jnp.float32)


@pytest.mark.parametrize("body,what,why", [
    ("d[i] = x", "d[i]", "its key `i` is assigned inside it"),
    ("d[i + 1] = x", "d[i + 1]", "its key `i + 1` is an expression"),
    ("lst[0:1] = [x]", "lst[0:1]", "its key `0:1` is a slice"),
    ("G['h'] = x", "G['h']", "`G` is not a variable of this function"),
    ("d = {}\n            d['h'] = x", "d['h']", "`d` itself is assigned inside it"),
    ("d['h'] = {}\n            d['h']['k'] = x", "d['h']['k']", "`d['h']` is assigned inside it too"),
])
def test_what_cannot_be_carried_is_hy032_saying_why(body, what, why):
    f = load(f'''
    G = {{}}

    def f(x, n):
        d, lst = {{"h": x}}, [x]
        for i in range(n):
            {body}
        return x
    ''')
    diags = _diagnose(f, X, jnp.asarray(2))
    assert [d.code for d in diags] == ["HY032"], diags
    assert f"`{what}` is assigned inside a `for` loop over a traced value" in diags[0].message
    assert why in diags[0].message
    assert diags[0].source_lines[diags[0].span.line].strip().startswith(what)


def test_a_traced_key_is_hy032_at_the_assignment():
    f = load('''
    def f(x, j):
        out = [x, x]
        if x.sum() > 0:
            out[j] = x * 2.0
        return out[0]
    ''')
    (d,) = _diagnose(f, X, jnp.asarray(1))
    assert d.code == "HY032" and "`out[j]`" in d.message and "traced value" in d.message
    assert d.source_lines[d.span.line][d.span.col - 1:].startswith("out[j]")


def test_a_key_set_in_one_traced_branch_only_is_hy030():
    f = load('''
    def f(x):
        d = {}
        if x.sum() > 0:
            d["a"] = x
        return x
    ''')
    (d,) = _diagnose(f, X)
    assert d.code == "HY030" and "`d['a']`" in d.message
    assert [label for _, label in d.related] == ["`d['a']` assigned here (`if` branch)"]


def test_a_carried_item_that_changes_shape_is_hy031():
    f = load('''
    def f(x, n):
        d = {"h": x}
        for i in range(n):
            d["h"] = jnp.concatenate([d["h"], x])
        return d["h"]
    ''')
    f.__globals__["jnp"] = jnp
    (d,) = _diagnose(f, X, jnp.asarray(2))
    assert d.code == "HY031" and "`d['h']`" in d.message


def test_python_conditions_leave_the_container_as_python_does():
    f = load('''
    def f(x, flag):
        d = {"h": x}
        if flag:
            d["new"] = x * 2.0
        for i in range(3):
            d["h"] = d["h"] + i
        return sorted(d)
    ''')
    g = ast_hybrid.convert(f)
    for flag in (True, False):
        assert g(X, flag) == f(X, flag)
