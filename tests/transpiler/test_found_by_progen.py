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
