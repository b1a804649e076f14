"""Loops that stop early and branches that only pick values: what the compiled program holds.

A ``for`` over a Python ``range`` whose ``break`` test becomes traced, and a ``while`` under
``max_iterations``, are one ``lax.while_loop`` that stops at the exit (bench/control_flow.py's
``first_above`` against a hand-written ``while_loop``), with the guarded ``scan`` only in the derivative
rule; a traced ``if`` whose branches compute nothing (``if t: done = True``) is a select, not a
``lax.cond``.  Every value and derivative is checked against plain Python on concrete values.
"""

from __future__ import annotations

import ast
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import load

import ast_hybrid


def _bench_source():
    """bench/control_flow.py's USER_SRC (its first_above is the case timed against hand_break), read
    without importing the bench (not a package the tests can import from every directory)."""
    tree = ast.parse((Path(__file__).resolve().parents[2] / "bench" / "control_flow.py").read_text())
    return next(ast.literal_eval(n.value) for n in tree.body
                if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", None) == "USER_SRC")


SOURCE = _bench_source() + '''

def halve_while(x, limit):
    k = 0
    while x.sum() > limit:
        x = x * 0.5
        k = k + 1
    return x, k


def assert_in_loop(x, limit):
    s = x * 0.0
    for i in range(10):
        assert s.sum() < 1e6, "too big"
        s = s + x
        if s.sum() > limit:
            break
    return s


def pick(x, y, t):
    a = x * 2.0
    b = y + 1.0
    if t.sum() > 0:
        c = a
        k = 1.0
    else:
        c = b
        k = 2.0
    return c, k


def compute_one(x, t):
    a = x * 2.0
    if t > 0:
        a = a + 1.0     # computes: stays a lax.cond
    return a


def pick_half(x16, t):
    if t > 0:
        k = 1.0
    else:
        k = 2.0
    return x16 * k
'''

X = np.linspace(0.1, 1.0, 8).astype(np.float32)   # sum 4.4: s.sum() after i steps is 4.4 * (i + 1)


@pytest.fixture(scope="module")
def fns():
    return load(SOURCE, "first_above").__globals__


def jaxpr_of(f, *args, **kw):
    return str(jax.make_jaxpr(lambda *a: ast_hybrid.convert(f, **kw)(*a))(*args))


@pytest.mark.parametrize("limit", [-1.0, 0.0, 100.0, 1e9])   # at the first step, the second, the 23rd, never
def test_for_with_a_traced_break_is_one_while_loop(fns, limit):
    f = fns["first_above"]
    got = ast_hybrid.jit(f)(jnp.asarray(X), jnp.float32(limit))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(f(jnp.asarray(X), jnp.float32(limit))))
    jaxpr = jaxpr_of(f, jnp.asarray(X), jnp.float32(limit))
    assert jaxpr.count("while[") == 1 and "cond[" not in jaxpr and "scan[" not in jaxpr


@pytest.mark.parametrize("limit", [-1.0, 100.0, 1e9])
def test_early_exit_derivatives_equal_python(fns, limit):
    f = fns["first_above"]
    x, lim = jnp.asarray(X), jnp.float32(limit)
    want = jax.jacfwd(lambda x: f(x, lim))(x)                 # plain Python on concrete values
    loss = lambda g: lambda x: (g(x, lim) ** 2).sum()          # noqa: E731
    np.testing.assert_allclose(np.asarray(jax.grad(loss(ast_hybrid.jit(f)))(x)),     # grad outside jit
                               np.asarray(jax.grad(loss(f))(x)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.jit(jax.grad(loss(ast_hybrid.convert(f))))(x)),  # inside jit
                               np.asarray(jax.grad(loss(f))(x)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jax.jit(jax.jacfwd(lambda x: ast_hybrid.convert(f)(x, lim)))(x)),
                               np.asarray(want), rtol=1e-6)                           # forward mode
    np.testing.assert_allclose(np.asarray(jax.jit(jax.hessian(loss(ast_hybrid.convert(f))))(x)),
                               np.asarray(jax.hessian(loss(f))(x)), rtol=1e-6)        # second order


def test_early_exit_under_vmap(fns):
    f = fns["first_above"]
    limits = jnp.asarray([-1.0, 10.0, 100.0, 1e9], jnp.float32)
    got = jax.jit(jax.vmap(ast_hybrid.convert(f), in_axes=(None, 0)))(jnp.asarray(X), limits)
    for row, lim in zip(np.asarray(got), limits):
        np.testing.assert_array_equal(row, np.asarray(f(jnp.asarray(X), lim)))


@pytest.mark.parametrize("limit", [100.0, 1.0, 0.01])    # 0, 3 and 9 halvings; max_iterations 8 cuts the last
def test_while_with_max_iterations_stops_early_and_differentiates(fns, limit):
    f = fns["halve_while"]
    x, lim = jnp.asarray(X), jnp.float32(limit)
    got, k = ast_hybrid.jit(f, max_iterations=8)(x, lim)
    want, wk = f(x, lim)
    if wk <= 8:
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
        assert int(k) == wk
        g = jax.jit(jax.grad(lambda x: ast_hybrid.convert(f, max_iterations=8)(x, lim)[0].sum()))(x)
        np.testing.assert_allclose(np.asarray(g), np.asarray(jax.grad(lambda x: f(x, lim)[0].sum())(x)))
    else:
        assert int(k) == 8   # the documented bound: at most max_iterations steps
    jaxpr = jaxpr_of(f, x, lim, max_iterations=8)
    assert jaxpr.count("while[") == 1 and "scan[" not in jaxpr


@pytest.mark.parametrize("limit", [-1.0, 10.0, 1e9])
def test_a_loop_with_a_traced_assert_keeps_it(fns, limit):
    """The assert's ordered callback is an effect custom_jvp refuses: that loop stays a guarded scan."""
    f = fns["assert_in_loop"]
    x, lim = jnp.asarray(X), jnp.float32(limit)
    np.testing.assert_array_equal(np.asarray(ast_hybrid.jit(f)(x, lim)), np.asarray(f(x, lim)))
    g = jax.jit(jax.grad(lambda x: ast_hybrid.convert(f)(x, lim).sum()))(x)
    np.testing.assert_allclose(np.asarray(g), np.asarray(jax.grad(lambda x: f(x, lim).sum())(x)))
    with pytest.raises(Exception, match="too big"):
        jax.block_until_ready(ast_hybrid.jit(f)(x * 1e6, jnp.float32(1e12)))


@pytest.mark.parametrize("t", [1.0, -1.0])
def test_an_if_that_only_picks_values_is_a_select(fns, t):
    f = fns["pick"]
    x, y, tt = jnp.asarray(X), jnp.asarray(X[::-1]), jnp.float32(t)
    c, k = ast_hybrid.jit(f)(x, y, tt)
    wc, wk = f(x, y, tt)
    np.testing.assert_array_equal(np.asarray(c), np.asarray(wc))
    assert float(k) == wk
    jaxpr = jaxpr_of(f, x, y, tt)
    assert "cond[" not in jaxpr and "select_n" in jaxpr
    for argnum in (0, 1):
        g = jax.grad(lambda *a: ast_hybrid.jit(f)(*a)[0].sum(), argnums=argnum)(x, y, tt)
        np.testing.assert_array_equal(np.asarray(g), np.asarray(jax.grad(lambda *a: f(*a)[0].sum(),
                                                                         argnums=argnum)(x, y, tt)))


def test_a_select_between_python_numbers_keeps_them_weak(fns):
    """`k = 1.0` / `k = 2.0` in a traced if: k stays a weakly typed float, so float16 * k is float16."""
    f = fns["pick_half"]
    x16 = jnp.asarray(X, jnp.float16)
    got = ast_hybrid.jit(f)(x16, jnp.float32(-1.0))
    assert got.dtype == jnp.float16
    np.testing.assert_array_equal(np.asarray(got), np.asarray(x16 * 2.0))


def test_a_branch_that_computes_stays_a_cond(fns):
    f = fns["compute_one"]
    x = jnp.asarray(X)
    for t in (1.0, -1.0):
        np.testing.assert_array_equal(np.asarray(ast_hybrid.jit(f)(x, jnp.float32(t))),
                                      np.asarray(f(x, jnp.float32(t))))
    assert "cond[" in jaxpr_of(f, x, jnp.float32(1.0))


def test_what_counts_as_computing_nothing():
    from ast_hybrid.transpiler.runtime.conditionals import _moves_only
    g = 3

    def moves(a, b):
        a = b
        c = True
        return (a, c, g)

    def calls(a):
        return (len(a),)

    def attribute(a):      # a property runs code
        return (a.shape,)

    def item(a):
        return (a[0],)

    def unpacks(a):        # iterating runs code
        x, y = a
        return (x,)

    assert _moves_only(moves)
    assert not any(_moves_only(f) for f in (calls, attribute, item, unpacks))
