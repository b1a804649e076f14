"""docs/convert.md's table of Python constructs, row by row, against what conversion does.

docs/convert.md (the README's section Convert until the docs were split) has one row per
construct with what happens when its condition, bound, key or argument is a Python value and
when it is traced.  Here each row
has a small program ``f(x, n)`` (``SNIPPETS``, keyed by the row's first cell; the rows and
the keys must be the same set), run

- with Python values: ``ast_hybrid.convert(f)`` called on a concrete array and a Python int;
- traced: ``ast_hybrid.jit(f)`` on a jax array and an int32 array;

and each cell is checked: ``plain Python`` and ``converted`` give plain Python's value
(``converted: lax.X`` also finds X's primitive in the jaxpr); a code ``HYnnn`` is a
``ConversionError`` with that code, which the rule catalogue has, as a conversion rule.
"""

from __future__ import annotations

import re
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import progen_constructs
from helpers import load

import ast_hybrid
from ast_hybrid import ConversionError
from ast_hybrid.common.rules import RULES

DOC = Path(__file__).resolve().parents[2] / "docs" / "convert.md"
HEADER = "| construct | Python value | traced value |"

#: the primitives a "converted: lax.X" cell names, as they appear in a jaxpr
PRIMITIVES = {"lax.cond": {"cond"}, "lax.while_loop": {"while"}, "lax.scan": {"scan"},
              "lax.fori_loop": {"while", "scan"}, "jax.debug.print": {"debug_print", "debug_callback"}}

#: Box and rec (recursion on its second argument) as the random programs have them
HELPERS = "import contextlib\n\nG = 0\n\n\n" + progen_constructs.HELPERS

SNIPPETS = {
    "`if` / `elif` / `else`": ['''
def f(x, n):
    if x.sum() > n:
        x = x * 2.0
    elif x[0] > 0:
        x = x + 1.0
    else:
        x = x - 1.0
    return x
'''],
    "`a if c else b`, `and`, `or`, `not`, chained comparisons": ['''
def f(x, n):
    c = (x.sum() > n and not x[0] > 1.0) or 0 < x[1] < n
    return x * 2.0 if c else x - 1.0
'''],
    "`while`": ['''
def f(x, n):
    while x.sum() < 100.0:
        x = x * 2.0 + n
    return x
'''],
    "`for i in range(n)`": ['''
def f(x, n):
    for i in range(n):
        x = x * 0.5 + i
    return x
'''],
    "`reversed(range(n))`, `range(a, b, -k)`": ['''
def f(x, n):
    for i in reversed(range(n)):
        x = x * 0.5 + i
    for i in range(n + 3, 0, -2):
        x = x - i
    return x
'''],
    "`for v in x`, `enumerate(x)`, `zip(x, y)` over arrays": ['''
def f(x, n):
    s = x[0] * 0.0
    for v in x:
        s = s + v * n
    for j, v in enumerate(x):
        s = s + v * j
    for v, w in zip(x, x * 2.0):
        s = s - v * w
    return s
'''],
    "`break`, `continue`, early `return`": ['''
def f(x, n):
    s = x[0] * 0.0
    for i in range(n + 2):
        if x[i] < 0:
            continue
        if s > 2.0:
            break
        s = s + x[i]
    if s > 100.0:
        return -s
    return s
'''],
    "`while ... else`, `for ... else`": ['''
def f(x, n):
    k = 0
    while k < n:
        k = k + 1
        if x.sum() > 100.0:
            break
    else:
        x = x + 1.0
    for i in range(n):
        if x[i] > 1.5:
            break
    else:
        x = x * 3.0
    return x
'''],
    "`:=` in an `if` or `while` test": ['''
def f(x, n):
    k = 0
    while (k := k + 1) <= n:
        x = x * 0.5
    if (s := x.sum()) > 0:
        x = x + s
    return x
'''],
    "`d['k'] = v`, `lst[0] = v`, `obj.attr = v` (static key) inside control flow": ['''
def f(x, n):
    d, lst, box = {"h": x}, [x, x * 2.0], Box(x[0])
    for i in range(n):
        d["h"] = d["h"] * 0.5 + i
        if d["h"].sum() > 0:
            lst[0] = lst[0] + 1.0
        else:
            box.v = box.v * 2.0
    return d["h"] + lst[0] + box.v
'''],
    "`d[i] = v` with the key `i` traced, inside control flow": ['''
def f(x, n):
    d = [x, x]
    if x.sum() > 0:
        d[n - 1] = x + 1.0
    return d[0] + d[1]
'''],
    "`out.append(v)` on a list made outside the control flow": ['''
def f(x, n):
    out = [x]
    for i in range(n):
        out.append(x * i)
    return out[-1]
'''],
    "`try`, `with`, `raise`, `del`, `global`/`nonlocal` assignment inside control flow": ['''
def f(x, n):
    if x.sum() > n:
        try:
            x = x + 1.0
        finally:
            x = x * 2.0
    return x
''', '''
def f(x, n):
    if x.sum() > n:
        with contextlib.nullcontext():
            x = x + 1.0
    return x
''', '''
def f(x, n):
    if x.sum() > 100.0 * n:
        raise ValueError("too big")
    return x
''', '''
def f(x, n):
    t = x * 2.0
    if x.sum() > n:
        x = x + t
        del t
    return x
''', '''
def f(x, n):
    global G
    if x.sum() > n:
        G = 1
    return x
'''],
    "`try` / `with` around control flow": ['''
def f(x, n):
    try:
        with contextlib.nullcontext():
            for i in range(n):
                x = x * 0.5 + i
    finally:
        x = x * 2.0
    return x
'''],
    "a variable assigned in one branch only and read after": ['''
def f(x, n):
    if x.sum() > n:
        z = x * 2.0
    return z
'''],
    "a variable first assigned inside a loop and read after": ['''
def f(x, n):
    for i in range(n):
        z = x * i
    return z
'''],
    "a loop variable that changes shape or dtype": ['''
def f(x, n):
    h = x[0]
    for i in range(n):
        h = x * h
    return h
'''],
    "one branch returns a value, the other falls off the end": ['''
def f(x, n):
    if x.sum() > n:
        return x
'''],
    "`int(x)`, `float(x)`, `bool(x)`, `x.item()`": ['''
def f(x, n):
    return x * int(x.sum() + n)
''', '''
def f(x, n):
    return x * (x.sum() + n).item()
'''],
    "recursion (depth from an argument)": ['''
def f(x, n):
    return rec(x, n)
'''],
    "nested `def`, `lambda`, closures, comprehensions over Python values": ['''
def f(x, n):
    scale = 2.0

    def g(v):
        return v * scale if v.sum() > n else v

    h = lambda v: v + 1.0
    ys = [g(x) * i for i in range(3) if i != 1]
    return h(ys[0] + ys[1])
'''],
    "a comprehension's `if`": ['''
def f(x, n):
    ys = [v * 2.0 for v in x if v > 0]
    return x + len(ys) + n
'''],
    "`match` (a subject compared with patterns, `case` guards)": ['''
def f(x, n):
    match n:
        case 1:
            x = x + 1.0
        case _:
            x = x - 1.0
    return x
''', '''
def f(x, n):
    match x.sum():
        case s if s > n:
            x = x * s
        case _:
            x = x - 1.0
    return x
'''],
    "`assert`": ['''
def f(x, n):
    assert x.sum() > -100.0 * (n + 1), "x too small"
    return x
'''],
    "`print`": ['''
def f(x, n):
    print("sum", x.sum() + n)
    return x
'''],
    "generator function, `async def`, a function without source": ['''
def f(x, n):
    yield x
'''],
}

X = np.asarray([1.0, -2.0, 0.5, 3.0], np.float32)   # sum 2.5
N = 2


def readme_rows():
    """``[(construct, python_cell, traced_cell)]`` of docs/convert.md's construct table."""
    lines = DOC.read_text().splitlines()
    start = lines.index(HEADER) + 2
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        assert len(cells) == 3, line
        rows.append(tuple(cells))
    return rows


def test_every_row_has_programs_and_every_program_a_row():
    assert {r[0] for r in readme_rows()} == set(SNIPPETS)


def test_codes_are_conversion_rules_of_the_catalogue():
    codes = {c for r in readme_rows() for c in r[1:] if re.fullmatch(r"HY\d{3}", c)}
    assert codes
    for c in codes:
        assert c in RULES, c
        assert RULES[c].jax is not None and RULES[c].origin in ("convert", "internal", "lint"), c
    cells = {c for r in readme_rows() for c in r[1:]}
    bad = {c for c in cells if not (c in ("plain Python", "converted") or c.startswith("converted: ")
                                    or re.fullmatch(r"HY\d{3}", c))}
    assert not bad, bad


def _expect(cell, run, f, jaxpr_of=None):
    if re.fullmatch(r"HY\d{3}", cell):
        with pytest.raises(ConversionError) as info:
            run()
        assert cell in {d.code for d in info.value.diagnostics}, str(info.value)
        return
    want = f(X.copy(), N)
    np.testing.assert_allclose(np.asarray(run()), want, rtol=1e-5)
    names = re.findall(r"`([\w.]+)`", cell)
    if jaxpr_of is not None and names:
        text = str(jaxpr_of())
        found = [n for n in names if any(re.search(rf"\b{p}\[", text) for p in PRIMITIVES[n])]
        assert found, f"none of {names} in\n{text}"


@pytest.mark.parametrize("row", readme_rows(), ids=lambda r: r[0][:40])
def test_row(row):
    construct, python_cell, traced_cell = row
    for snippet in SNIPPETS[construct]:
        f = load(HELPERS + snippet)
        _expect(python_cell, lambda: ast_hybrid.convert(f)(jnp.asarray(X), N), f)
        _expect(traced_cell, lambda: ast_hybrid.jit(f)(jnp.asarray(X), jnp.int32(N)), f,
                lambda: jax.make_jaxpr(ast_hybrid.convert(f))(jnp.asarray(X), jnp.int32(N)))
