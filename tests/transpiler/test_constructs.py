"""Python constructs the pipeline must keep exact, under ``ast_hybrid.jit``, with traced values.

Each function runs as plain Python on concrete arrays (the oracle) and
converted under ``jax.jit``; both must agree.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import load

import ast_hybrid
from ast_hybrid import ConversionError

SOURCE = '''
import contextlib
import jax.numpy as jnp


def with_match(x, mode):
    match mode:
        case "double":
            y = x * 2
        case _:
            y = x
    if y.sum() > 0:
        y = y + 1
    return y


def walrus(x):
    if (s := x.sum()) > 0:
        return x * s
    return x


def try_in_loop(x):
    for i in range(3):
        try:
            if i == 1:
                continue
            x = x + i
        finally:
            x = x * 1.0
    return x


def with_return(x):
    with contextlib.nullcontext():
        if x.sum() > 0:
            return x
    return -x


def comprehension(x):
    ys = [x * i for i in range(3) if i != 1]
    total = sum(y.sum() for y in ys)
    return total if total > 0 else -total


def star(x, *args, **kw):
    a, *rest = args
    for k, v in kw.items():
        x = x + v
    return x + a + len(rest)


def while_else(x):
    n = 0
    while n < 3:
        n += 1
        if x.sum() > 100:
            break
    else:
        x = x + 1
    return x


def dict_state(x):
    d = {"a": x, "b": x * 2}
    if x.sum() > 0:
        d = {"a": x + 1, "b": x}
    return d["a"] + d["b"]


def aug_in_loop(x, n):
    i = 0
    while i < n:
        i += 1
        x += 1.0
    return x


def nested_loops_break(x, n):
    total = x * 0
    for i in range(n):
        for j in range(n):
            if j > i:
                break
            total = total + x * j
        if total.sum() > 50:
            break
    return total


def first_assigned_in_loop(x, n):
    for i in range(n):
        last = x * i
    return last


def loop_target_after(x):
    for v in x:
        pass
    return v * 2


def python_number_promoted(x, n):
    k = 0
    for i in range(n):
        k = k + 0.5
    return x * k


def elif_chain(x):
    s = x.sum()
    if s > 10:
        r = x * 3
    elif s > 0:
        r = x * 2
    elif s > -10:
        r = x
    else:
        r = -x
    return r


def early_return_in_while(x):
    while x.sum() < 100:
        if x.max() > 20:
            return x * 0
        x = x * 3
    return x


def walrus_in_while_test(x):
    n = x[0] * 0
    while (y := x * 2).sum() < 100:
        x = y
        n = n + 1
    else:
        n = n + 1000
    return x + n + y


def walrus_while_break_continue(x):
    total = x * 0
    while (v := x - 1).sum() > 0:
        x = v
        if v.sum() > 30:
            break
        if v.sum() % 4 < 2:
            continue
        total = total + v
    else:
        total = -total
    return total + x


def walrus_first_in_and(x, n):
    k = 0
    while (k := k + 1) <= n and x.sum() > 0:
        x = x * 0.5
    if (s := x.sum()) > 1.0 or n > 2:
        x = x + s
    return x + k


# issue 13, item 3: constructs that need no pass of their own, each against plain Python

def enum_traced(x, n):
    acc = x[0] * 0.0
    for i, v in enumerate(x):
        if v > 0:
            acc = acc + v * i
    return acc

def zip_traced(x, n):
    y = x[::-1]
    acc = x[0] * 0.0
    for a, b in zip(x, y):
        if a > b:
            acc = acc + a - b
    return acc

def enum_static_in_traced_range(x, n):
    acc = x * 0.0
    for k in range(n):
        for i, v in enumerate([x, x * 2.0]):
            acc = acc + v * i
    return acc

def del_after(x, n):
    y = x * 2.0
    if x.sum() > n:
        z = y + 1.0
    else:
        z = y - 1.0
    del y
    return z

def try_finally(x, n):
    log = []
    try:
        for i in range(n):
            x = x * 0.5 + i
    finally:
        log.append(1)
    return x + len(log)

def nested_def(x, n):
    acc = x
    for i in range(n):
        def scale(v, i=i):
            return v * 0.5 + i
        acc = scale(acc)
    return acc

def lambda_branch(x, n):
    if x.sum() > n:
        f = lambda v: v * 2.0
        y = f(x)
    else:
        y = (lambda v: v - 1.0)(x)
    return y

def comp_branch(x, n):
    if x.sum() > n:
        y = sum([v * 2.0 for v in [x, x + 1.0] if True])
    else:
        y = sum(v for v in (x, -x))
    return y

def comp_traced_cond(x, n):
    ys = [jnp.where(v > 0, v, -v) for v in x]
    return sum(ys) + (x.sum() if x.sum() > n else -x.sum())
'''

X = np.array([1.0, 2.0], np.float32)
CASES = [
    ("with_match", (X,), {"mode": "double"}), ("with_match", (-X,), {"mode": "other"}),
    ("walrus", (X,), {}), ("walrus", (-X,), {}),
    ("try_in_loop", (X,), {}), ("with_return", (X,), {}), ("with_return", (-X,), {}),
    ("comprehension", (X,), {}), ("star", (X, 1.0, 2.0), {"k": 3.0}),
    ("while_else", (X,), {}), ("dict_state", (X,), {}), ("dict_state", (-X,), {}),
    ("aug_in_loop", (X, 3), {}), ("nested_loops_break", (X, 4), {}), ("nested_loops_break", (X * 9, 4), {}),
    ("loop_target_after", (X,), {}),
    ("python_number_promoted", (X, 3), {}),
    ("elif_chain", (X * 6,), {}), ("elif_chain", (X,), {}), ("elif_chain", (-X,), {}), ("elif_chain", (-X * 6,), {}),
    ("early_return_in_while", (X,), {}), ("early_return_in_while", (X * 7,), {}),
    ("walrus_in_while_test", (X,), {}), ("walrus_in_while_test", (X * 60,), {}),
    ("walrus_while_break_continue", (X * 9,), {}), ("walrus_while_break_continue", (X * 30,), {}),
    *[(name, (x, n), {}) for name in ("walrus_first_in_and", "enum_traced", "zip_traced", "enum_static_in_traced_range", "del_after",
                                       "try_finally", "nested_def", "lambda_branch", "comp_branch",
                                       "comp_traced_cond")
      for x, n in ((np.array([1.0, -2.0, 3.0], np.float32), 1), (np.array([-1.0, -2.0, -3.0], np.float32), 0),
                   (np.array([2.0, 3.0, 1.0], np.float32), 3))],
]


@pytest.fixture(scope="module")
def mod():
    return load(SOURCE, "walrus").__globals__


@pytest.mark.parametrize("name,args,kwargs", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_jit_equals_python(mod, name, args, kwargs):
    f = mod[name]
    want = f(*(a.copy() if isinstance(a, np.ndarray) else a for a in args), **kwargs)   # (`x += 1` mutates numpy)
    traced = tuple(jnp.asarray(a) if isinstance(a, (np.ndarray, int)) else a for a in args)
    got = ast_hybrid.jit(f, static_argnames=list(kwargs) if name == "with_match" else ())(*traced, **kwargs)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


def test_unbound_after_a_loop_that_did_not_run(mod):
    f = mod["first_assigned_in_loop"]
    with pytest.raises(UnboundLocalError):
        f(X, 0)
    with pytest.raises(UnboundLocalError, match="last"):
        ast_hybrid.convert(f)(jnp.asarray(X), 0)


def test_returning_none_on_a_traced_path_is_hy033():
    f = load('''
    def f(x):
        if x.sum() > 0:
            return
        return x
    ''')
    with pytest.raises(ConversionError) as info:
        ast_hybrid.jit(f)(jnp.asarray(X))
    (d,) = info.value.diagnostics
    assert d.code == "HY033" and "returns float32[2] on one path and None on another" in d.message


def test_print_runs_on_every_call_with_real_values(capfd):
    f = load('''
    def f(x):
        s = x.sum()
        print("sum is", s, "of", len(x))
        return s * 2.0
    ''')
    g = ast_hybrid.jit(f)
    capfd.readouterr()
    for k in (1.0, 2.0, 3.0):
        g(jnp.asarray(X) * k).block_until_ready()
    out = capfd.readouterr().out.splitlines()
    assert out == ["sum is 3.0 of 2", "sum is 6.0 of 2", "sum is 9.0 of 2"]


def test_traced_assert_checks_every_call():
    f = load('''
    def f(x):
        assert x.sum() > 0, "x must sum to a positive number"
        return x * 2
    ''')
    g = ast_hybrid.jit(f)
    np.testing.assert_allclose(g(jnp.asarray(X)), X * 2)
    with pytest.raises(Exception, match="x must sum to a positive number"):
        g(jnp.asarray(-X)).block_until_ready()


# -- recursion (issue 13, item 2) -------------------------------------------------------------------

RECURSIVE = '''
import jax.numpy as jnp


def fact(x, n):
    if n == 0:
        return x
    return fact(x * n, n - 1)


def even(x, n):
    if n == 0:
        return x
    return odd(x + 1.0, n - 1)


def odd(x, n):
    if n == 0:
        return -x
    return helper(x, n)


def helper(x, n):
    return even(x * 2.0, n - 1)


def branchy(x, n):
    if n == 0:
        return x
    if x.sum() > 0:            # traced, but the depth is n's
        return branchy(x - 1.0, n - 1)
    return branchy(x + 2.0, n - 1)


def traced_depth(x, n):
    if n <= 0:
        return x
    return traced_depth(x + 1.0, n - 1)  # here


def outer(x, k):
    def walk(v, m):
        return v if m == 0 else walk(v * 2.0, m - 1)
    return walk(x, k)
'''


@pytest.mark.parametrize("name,n", [("fact", 4), ("even", 5), ("even", 6), ("branchy", 3), ("outer", 3)])
def test_recursion_on_a_static_argument_is_python(name, n):
    f = load(RECURSIVE, name)
    want = f(np.asarray(X), n)
    got = jax.jit(ast_hybrid.convert(f), static_argnums=1)(X, n)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    assert "ah__" in ast_hybrid.to_source(f)


def test_recursion_whose_depth_is_traced_is_hy032():
    f = load(RECURSIVE, "traced_depth")
    with pytest.raises(ConversionError) as info:
        ast_hybrid.jit(f)(X, jnp.int32(3))
    (d,) = info.value.diagnostics
    assert d.code == "HY032" and "`traced_depth` calls itself" in d.message
    line = next(i for i, t in enumerate(open(f.__code__.co_filename).read().splitlines(), 1) if "# here" in t)
    assert d.span.line == line


# -- ranges with traced bounds (issue 13, item 3) -----------------------------------------------------

RANGES = '''
def rev(x, n):
    acc = x * 0
    for i in reversed(range(n)):
        acc = acc * 2 + i
    return acc


def rev_stepped(x, a, b):
    acc = x * 0
    for i in reversed(range(a, b, 3)):
        acc = acc * 2 + i
    return acc


def neg_step(x, n):
    acc = x * 0
    for i in range(n, 0, -2):
        acc = acc * 2 + i
    return acc
'''


@pytest.mark.parametrize("name,bounds", [("rev", (5,)), ("rev", (0,)), ("rev_stepped", (2, 11)),
                                         ("rev_stepped", (2, 12)), ("rev_stepped", (5, 1)),
                                         ("neg_step", (7,)), ("neg_step", (8,)), ("neg_step", (-1,))])
def test_reversed_and_negative_step_ranges_with_traced_bounds(name, bounds):
    f = load(RANGES, name)
    want = f(np.asarray(X), *bounds)
    got = ast_hybrid.jit(f)(X, *(jnp.int32(b) for b in bounds))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


# -- a walrus in a later operand of and/or, or in a value of `a if c else b` --------------------------

WALRUS_LATER = '''
def and_new(x, c):
    if c and (y := x * 2.0).sum() > 0:
        return y
    return x

def and_old(x, c):
    y = x
    r = c and (y := x * 3.0)
    return y + 1.0

def or_old(x, c):
    y = x
    r = c or (y := x * 3.0)
    return y

def ifexp_old(x, c):
    y = x
    r = (y := x * 5.0) if c else x
    return y - r

def ifexp_else(x, c):
    y = x
    r = x if c else (y := x * 5.0)
    return y - r

def chain3(x, a, b):
    y = x
    r = a and b and (y := x + 1.0)
    return y

def cmp_chain(x, a):
    y = x
    r = 0 < a < (y := 3)
    return y * x
'''


@pytest.fixture(scope="module")
def walrus_later():
    return load(WALRUS_LATER, "and_new").__globals__


@pytest.mark.parametrize("name", ["and_new", "and_old", "or_old", "ifexp_old", "ifexp_else"])
@pytest.mark.parametrize("c", [True, False, 0, 1])
def test_walrus_in_a_later_operand_binds_the_function_variable(walrus_later, name, c):
    f = walrus_later[name]      # `y` new, or with an older value that must change only when Python's does
    want = f(X, c)
    got = ast_hybrid.jit(f, static_argnames=["c"])(jnp.asarray(X), c=c)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(ast_hybrid.convert(f)(X, c)), np.asarray(want), rtol=1e-6)


@pytest.mark.parametrize("a,b", [(0, 0), (0, 1), (1, 0), (1, 1)])
def test_walrus_in_the_third_operand(walrus_later, a, b):
    f = walrus_later["chain3"]
    got = ast_hybrid.jit(f, static_argnames=["a", "b"])(jnp.asarray(X), a=a, b=b)
    np.testing.assert_allclose(np.asarray(got), np.asarray(f(X, a, b)), rtol=1e-6)


@pytest.mark.parametrize("a", [0, 1, 5])
def test_walrus_in_a_chained_comparison(walrus_later, a):
    f = walrus_later["cmp_chain"]
    got = ast_hybrid.jit(f, static_argnames=["a"])(jnp.asarray(X), a=a)
    np.testing.assert_allclose(np.asarray(got), np.asarray(f(X, a)), rtol=1e-6)


# -- a for over a Python range meeting a traced break: the rest of it as one loop -------------------

RANGE_BREAK = '''
import jax.numpy as jnp

def first_above(x, limit, n):
    s = x * 0.0
    for i in range(n):
        s = s + x
        if s.sum() > limit:
            break
    return s

def stepped(x, limit):
    s = x * 0.0
    c = 0
    for i in range(10, 0, -3):
        s = s + x * i
        c = c + 1
        if s.sum() > limit:
            break
    return s, c

def dtype_changes(x, limit, n):
    s = x * 0.0
    for i in range(n):
        s = s + x
        if i == 1:
            s = s.astype(jnp.float16)   # float32 until then
        if s.sum() > limit:
            break
    return s

def static_item(x, limit, n):
    s = x * 0.0
    for i in range(n):
        s = s + x[:i + 1].sum()   # a slice needs i as a Python int
        if s.sum() > limit:
            break
    return s
'''


@pytest.fixture(scope="module")
def range_break():
    return load(RANGE_BREAK, "first_above").__globals__


@pytest.mark.parametrize("n", [0, 1, 2, 7, 100])
@pytest.mark.parametrize("limit", [-1.0, 1.0, 5.5, 1e9])     # breaks at once, after 1, later, never
def test_range_with_a_traced_break_is_one_loop(range_break, n, limit):
    f = range_break["first_above"]
    jf = ast_hybrid.jit(f, static_argnames=["n"])
    got = jf(jnp.asarray(X), jnp.float32(limit), n=n)
    np.testing.assert_allclose(np.asarray(got), np.asarray(f(X, np.float32(limit), n)), rtol=1e-6)
    jaxpr = str(jax.make_jaxpr(lambda x, l: ast_hybrid.convert(f)(x, l, n))(jnp.asarray(X), jnp.float32(limit)))
    # iteration 0 runs as Python (the flag is a Python False); the rest is one while_loop that stops at the
    # break, with no lax.cond at all: `if ...: break` only sets a flag (a select), and the guarded scan
    # exists only in the loop's derivative rule (custom_jvp), not in the values' program
    assert jaxpr.count("while[") == (n >= 2) and "cond[" not in jaxpr and "scan[" not in jaxpr
    assert ("custom_jvp_call[" in jaxpr) == (n >= 2)


@pytest.mark.parametrize("limit", [-1.0, 20.0, 30.0, 1e9])
def test_stepped_range_with_a_traced_break(range_break, limit):
    f = range_break["stepped"]
    got = ast_hybrid.jit(f)(jnp.asarray(X), jnp.float32(limit))
    want = f(X, np.float32(limit))
    np.testing.assert_allclose(np.asarray(got[0]), np.asarray(want[0]), rtol=1e-6)
    assert int(got[1]) == want[1]


@pytest.mark.parametrize("n", [1, 3, 6])
@pytest.mark.parametrize("limit", [-1.0, 5.5, 1e9])
@pytest.mark.parametrize("name", ["dtype_changes", "static_item"])
def test_range_break_that_no_loop_can_carry_is_unrolled(range_break, name, n, limit):
    f = range_break[name]   # s changes dtype at i == 1 (cast back by the traced `if`); x[:i + 1] needs a Python i
    got = ast_hybrid.jit(f, static_argnames=["n"])(jnp.asarray(X), jnp.float32(limit), n=n)
    np.testing.assert_allclose(np.asarray(got), np.asarray(f(X, np.float32(limit), n)), rtol=1e-6)
    if name == "dtype_changes":
        return    # a traced i makes `if i == 1` a lax.cond that casts back to float32: one loop carries it
    jaxpr = str(jax.make_jaxpr(lambda x, l: ast_hybrid.convert(f)(x, l, n))(jnp.asarray(X), jnp.float32(limit)))
    assert "while[" not in jaxpr and "scan[" not in jaxpr


@pytest.mark.parametrize("limit", [-1.0, 5.5, 1e9])
def test_range_break_is_differentiable(range_break, limit):
    """A hybridized block with such a loop must still train: reverse mode through the compiled loop."""
    f = range_break["first_above"]
    g = jax.jit(jax.grad(lambda x: ast_hybrid.convert(f)(x, limit, 7).sum()))(jnp.asarray(X))
    want = jax.grad(lambda x: f(x, limit, 7).sum())(jnp.asarray(X))   # plain Python on concrete values
    np.testing.assert_allclose(np.asarray(g), np.asarray(want), rtol=1e-6)


def test_range_break_with_max_iterations_is_differentiable(range_break):
    f = range_break["first_above"]
    g = jax.jit(jax.grad(lambda x: ast_hybrid.convert(f, max_iterations=4)(x, 5.5, 100).sum()))(jnp.asarray(X))
    want = jax.grad(lambda x: f(x, 5.5, 100).sum())(jnp.asarray(X))   # plain Python on concrete values
    np.testing.assert_allclose(np.asarray(g), np.asarray(want), rtol=1e-6)
