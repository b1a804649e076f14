"""Conversion diagnostics (HY001-HY004 refused, HY030-HY034) point at the user's file, line and column.

Each program is a real file; the expected line and column are found in its
text (the marker comment), never typed by hand.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from helpers import load

import ast_hybrid
from ast_hybrid import ConversionError
from ast_hybrid.common.render import render_text

X = jnp.array([1.0, 2.0], jnp.float32)


def where(fn, marker, word):
    """(line, col) of ``word`` on the line of fn's file that carries ``# <marker>``."""
    path = fn.__code__.co_filename
    for n, text in enumerate(open(path).read().splitlines(), 1):
        if f"# {marker}" in text:
            return n, text.index(word) + 1
    raise AssertionError(marker)


def diagnose(fn, *args, **options):
    with pytest.raises(ConversionError) as info:
        ast_hybrid.jit(fn, **options)(*args)
    return info.value


def test_hy030_names_the_variable_and_both_lines():
    f = load('''
    def f(x):
        if x.sum() > 0:  # if
            z = x * 2.0  # assign
        return z  # use
    ''')
    err = diagnose(f, X)
    (d,) = err.diagnostics
    assert d.code == "HY030" and "`z`" in d.message and d.path == f.__code__.co_filename
    assert (d.span.line, d.span.col) == where(f, "if", "if")
    assert [(s.line, s.col) for s, _ in d.related] == [where(f, "assign", "z"), where(f, "use", "z")]
    text = str(err)
    assert f"{d.path}:{d.span.line}:{d.span.col}: HY030" in text and "help:" in text
    assert "if x.sum() > 0:" in text and "^" in text


def test_hy030_inside_a_method_with_dedent():
    Net = load('''
    class Net:
        def forward(self, x):
            if x.sum() > 0:  # if
                out = x  # assign
            y = x + 1
            return out  # use
    ''', "Net")
    (d,) = diagnose(Net().forward, X).diagnostics
    assert (d.code, d.span.line, d.span.col) == ("HY030", *where(Net.forward, "if", "if"))
    assert [(s.line, s.col) for s, _ in d.related] == [where(Net.forward, "assign", "out"),
                                                       where(Net.forward, "use", "out")]


def test_hy031_names_the_shapes_and_the_loop():
    f = load('''
    import jax.numpy as jnp

    def f(x):
        while x.sum() < 100.0:  # loop
            x = jnp.concatenate([x, x])
        return x
    ''')
    (d,) = diagnose(f, X).diagnostics
    assert d.code == "HY031" and "`x`" in d.message and "float32[2]" in d.message and "float32[4]" in d.message
    assert (d.span.line, d.span.col) == where(f, "loop", "while")


def test_hy031_dtype_change_in_a_scan():
    f = load('''
    def f(x):
        acc = x[0]
        for v in x:  # loop
            acc = (acc + v).astype("int32")
        return acc
    ''')
    (d,) = diagnose(f, X).diagnostics
    assert d.code == "HY031" and "int32" in d.message and (d.span.line, d.span.col) == where(f, "loop", "for")


@pytest.mark.parametrize("stmt,what", [
    ("try:\n                x = x + 1\n            except ValueError:\n                pass", "try"),
    ("with open('/dev/null'):\n                x = x + 1", "with"),
    ("del y", "del"),
    ("raise ValueError('negative')", "raise"),
    ("G = x", "assignment to global/nonlocal `G`"),
    ("box.value = x", "box.value"),
])
def test_hy032_constructs_inside_traced_control_flow(stmt, what):
    f = load(f'''
    import types

    G = None
    box = types.SimpleNamespace(value=None)

    def f(x):
        global G
        y = x
        if x.sum() > 0:  # if
            {stmt}  # here
        return x
    ''')
    (d,) = diagnose(f, X).diagnostics
    assert d.code == "HY032" and f"`{what}`" in d.message
    if_line, if_col = where(f, "if", "if")
    assert (d.span.line, d.span.col) == (if_line + 1, if_col + 4)     # the statement right under the `if`
    assert [(s.line, s.col) for s, _ in d.related] == [where(f, "if", "if")]


def test_hy032_not_reported_for_a_python_condition():
    f = load('''
    def f(x, flag=True):
        if flag:
            try:
                x = x + 1
            except ValueError:
                pass
        return x
    ''')
    assert float(ast_hybrid.jit(f)(X)[0]) == 2.0


def test_hy033_branches_of_different_structure():
    f = load('''
    def f(x):
        if x.sum() > 0:  # if
            y = x
        else:
            y = (x, x)
        return y
    ''')
    (d,) = diagnose(f, X).diagnostics
    assert d.code == "HY033" and "`y`" in d.message and (d.span.line, d.span.col) == where(f, "if", "if")


def test_hy033_shape_mismatch_in_a_conditional_expression():
    f = load('''
    def f(x):
        return x if x.sum() > 0 else x[:1]
    ''')
    (d,) = diagnose(f, X).diagnostics
    assert d.code == "HY033" and "float32[2]" in d.message and "float32[1]" in d.message


def test_inplace_ops_and_host_syncs_are_refused_where_they_meet_a_traced_value():
    Net = load('''
    import jax.numpy as jnp
    from ast_hybrid.gluon import HybridBlock

    class Net(HybridBlock):
        def __init__(self, full=False, **kwargs):
            super().__init__(**kwargs)
            self.full = full

        def hybrid_forward(self, F, x):
            h = F.relu(x)
            if self.full:
                h += x  # aug
                v = h.asnumpy()  # sync
            return h
    ''', "Net")
    from ast_hybrid import nd
    x = nd.array([1.0, -2.0])
    # the flagged lines are only in a branch that a Python condition skips: nothing to refuse
    net = Net()
    net.hybridize()
    assert net(x).asnumpy().tolist() == [1.0, 0.0]
    # taken while hybridized: refused with the linter's diagnostic at the user's line
    net = Net(full=True)
    assert net(x).asnumpy().tolist() == [2.0, -2.0]           # op by op: MXNet's in-place semantics
    net.hybridize()
    with pytest.raises(ConversionError) as info:
        net(x)
    (d,) = info.value.diagnostics
    assert (d.code, d.span.line, d.span.col) == ("HY001", *where(Net.hybrid_forward, "aug", "h"))
    # the generated code guards the flagged statements
    source = ast_hybrid.to_source(Net.hybrid_forward)
    assert "ah__.refuse_if_traced(0, (h, x))" in source and "ah__.refuse_if_traced(1, (h,))" in source


def test_runtime_error_shows_the_users_line():
    f = load('''
    def f(x):
        y = x * 2
        if x.sum() > 0:
            y = y + 1
        return y.reshape(7)  # bad
    ''')
    with pytest.raises(TypeError) as info:
        ast_hybrid.jit(f)(X)
    import traceback
    frames = [(fr.filename, fr.lineno) for fr in traceback.extract_tb(info.tb)]
    assert (f.__code__.co_filename, where(f, "bad", "return")[0]) in frames


def test_diagnostics_render_in_every_format():
    f = load('''
    def f(x):
        if x.sum() > 0:
            z = x
        return z
    ''')
    err = diagnose(f, X)
    from ast_hybrid.common.render import render
    for fmt in ("text", "json", "sarif", "github"):
        assert "HY030" in render(err.diagnostics, fmt)
    assert render_text(err.diagnostics, color=False) in str(err)


def test_traced_while_is_not_reverse_differentiable_but_bounded_is():
    f = load('''
    def f(x):
        while x.sum() < 10.0:
            x = x * 2.0
        return x.sum()
    ''')
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work for lax.while_loop"):
        jax.jit(jax.grad(ast_hybrid.convert(f)))(X)
    g = jax.jit(jax.grad(ast_hybrid.convert(f, max_iterations=8)))(X)
    assert g.tolist() == [4.0, 4.0]


# -- never a silent wrong value, never a raw JAX error (issue 13, item 4) ---------------------------

@pytest.mark.parametrize("body", [
    "if x.sum() > 0:  # if\n            return x * 2",
    "if x.sum() > 0:  # if\n            y = x\n        else:\n            return x * 2",
    "for v in x:  # if\n            if v > 1.5:\n                return x",
])
def test_falling_off_the_end_on_a_traced_path_is_hy033(body):
    f = load(f'''
    def f(x):
        {body}
    ''')
    assert f(X) is not None or f(-X) is not None      # Python: None on one path, an array on the other
    (d,) = diagnose(f, X).diagnostics
    assert d.code == "HY033" and "None" in d.message and "float32[2]" in d.message
    assert d.span.line == where(f, "if", "if")[0]


def test_every_path_returns_is_not_hy033():
    f = load('''
    def f(x, c):
        if x.sum() > 0:
            return x
        if c:
            return -x
    ''')
    assert jax.jit(ast_hybrid.convert(f), static_argnums=1)(-X, True).tolist() == [1.0, 2.0]
    assert ast_hybrid.convert(f)(-X, False) is None                  # concrete: as Python
    assert diagnose(f, X, False, static_argnums=1).diagnostics[0].code == "HY033"


@pytest.mark.parametrize("stmt,call", [
    ("out.append(x)", "out.append"),
    ("out.extend([x])", "out.extend"),
    ("seen.update({'k': x})", "seen.update"),
    ("out.insert(0, x)", "out.insert"),
    ("y = seen.pop('k', x)", "seen.pop"),
])
@pytest.mark.parametrize("head", ["if x.sum() > 0:  # if", "while x.sum() < 10.0:  # if", "for v in x:  # if"])
def test_mutating_an_outside_object_in_traced_control_flow_is_hy032(stmt, call, head):
    f = load(f'''
    def f(x):
        out, seen = [], {{}}
        {head}
            {stmt}  # here
            x = x + 4.0
        return x, out, seen
    ''')
    (d,) = diagnose(f, X).diagnostics
    assert d.code == "HY032" and f"`{call}(...)`" in d.message, d.message
    assert (d.span.line, d.span.col) == where(f, "here", call)


def test_mutating_an_object_made_inside_the_body_is_fine():
    f = load('''
    import jax.numpy as jnp

    def f(x):
        total = x * 0
        for v in x:
            parts = []
            parts.append(v)
            parts.append(v * 2)
            total = total + jnp.stack(parts).sum()
        return total
    ''')
    assert ast_hybrid.jit(f)(X).tolist() == f(X).tolist()


@pytest.mark.parametrize("expr,name", [
    ("int(x.sum())", "int"), ("float(x[0])", "float"), ("bool(x.sum() > 0)", "bool"),
    ("x.sum().item()", ".item"), ("complex(x[1])", "complex"),
])
def test_host_sync_of_a_traced_value_is_hy004_at_the_users_line(expr, name):
    f = load(f'''
    def f(x):
        y = x + 1
        z = {expr}  # here
        return y
    ''')
    assert f(X) is not None
    assert ast_hybrid.convert(f)(X) is not None                      # concrete: runs as written
    (d,) = diagnose(f, X).diagnostics
    assert d.code == "HY004" and f"`{name}" in d.message and d.path == f.__code__.co_filename
    assert (d.span.line, d.span.col) == where(f, "here", expr.split("(")[0] if name != "item" else expr)


# -- a variable first assigned inside a traced loop that may run zero times (HY030, "loop") ----------

FIRST_IN_LOOP = '''
def for_range(x, n):
    for i in range(n):  # f-loop
        z = x * i  # f-assign
    return z  # f-use

def while_loop(x, n):
    k = 0
    while k < n:  # w-loop
        z = x * k  # w-assign
        k = k + 1
    return z + 1.0  # w-use

def defined_before(x, n):
    z = x
    for i in range(n):
        z = x * i
    k = 0
    while k < n:
        w = z + k
        z = w
        k = k + 1
    return z

def not_used_after(x, n):
    out = x
    for i in range(n):
        t = x * i
        out = out + t
    return out

def over_rows(xs):
    for r in xs:
        z = r * 2.0
    return z
'''


@pytest.fixture(scope="module")
def first_in_loop():
    return load(FIRST_IN_LOOP, "for_range").__globals__


@pytest.mark.parametrize("name", ["for_range", "while_loop"])
def test_hy030_variable_first_assigned_in_a_traced_loop(first_in_loop, name):
    f = first_in_loop[name]
    err = diagnose(f, X, jnp.asarray(3))
    (d,) = err.diagnostics
    assert d.code == "HY030" and "`z`" in d.message and "zero times" in d.message
    assert d.path == f.__code__.co_filename
    kw, m = ("for", "f") if name == "for_range" else ("while", "w")
    line, col = where(f, f"{m}-loop", kw)
    assert (d.span.line, d.span.col) == (line, col)
    assert [(s.line, s.col) for s, _ in d.related] == [where(f, f"{m}-assign", "z"), where(f, f"{m}-use", "z")]
    assert "give `z` a value before the loop" in d.help
    text = render_text([d])
    assert f"{d.path}:{line}:{col}: HY030" in text and "^" in text and "help:" in text


@pytest.mark.parametrize("name", ["for_range", "while_loop"])
def test_first_assigned_in_a_static_loop_keeps_python_semantics(first_in_loop, name):
    f = first_in_loop[name]
    for n in (1, 3):     # a Python bound: the loop is plain Python
        want = f(X, n)
        got = ast_hybrid.jit(f, static_argnames=["n"])(X, n=n)
        assert jnp.allclose(got, want)
    with pytest.raises(UnboundLocalError):
        f(X, 0)
    with pytest.raises(UnboundLocalError, match="z"):
        ast_hybrid.jit(f, static_argnames=["n"])(X, n=0)


@pytest.mark.parametrize("name", ["defined_before", "not_used_after"])
@pytest.mark.parametrize("n", [0, 1, 4])
def test_traced_loops_whose_variables_are_defined_equal_python(first_in_loop, name, n):
    f = first_in_loop[name]
    got = ast_hybrid.jit(f)(X, jnp.asarray(n))
    assert jnp.allclose(got, f(X, n))


def test_for_over_array_rows_has_a_static_length(first_in_loop):
    f = first_in_loop["over_rows"]
    xs = jnp.arange(6.0).reshape(3, 2)
    assert jnp.allclose(ast_hybrid.jit(f)(xs), f(xs))
    empty = jnp.zeros((0, 2))
    with pytest.raises(UnboundLocalError):
        f(empty)
    with pytest.raises(UnboundLocalError, match="z"):     # no rows: the body never runs, as in Python
        ast_hybrid.jit(f)(empty)


@pytest.mark.parametrize("expr,part", [
    ("r = (x.sum() > 0) and (y := x * 2.0).sum() > 0  # walrus", "the second operand of `and`"),
    ("r = (x.sum() > 0) or (y := x * 2.0).sum() > 0  # walrus", "the second operand of `or`"),
    ("r = (y := x * 2.0) if x.sum() > 0 else x  # walrus", "the `if` value of a conditional expression"),
    ("r = x if x.sum() > 0 else (y := x * 2.0)  # walrus", "the `else` value of a conditional expression"),
])
def test_hy030_walrus_whose_evaluation_a_traced_value_decides(expr, part):
    f = load(f'''
    def f(x):
        y = x
        {expr}
        return y + r
    ''')
    (d,) = diagnose(f, X).diagnostics
    assert d.code == "HY030" and "`y := ...`" in d.message and part in d.message
    assert d.path == f.__code__.co_filename
    assert (d.span.line, d.span.col) == where(f, "walrus", "y :=")
    text = render_text([d])
    assert f"{d.path}:{d.span.line}:{d.span.col}: HY030" in text and "^^^" in text and "help:" in text
