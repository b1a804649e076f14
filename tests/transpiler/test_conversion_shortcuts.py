"""The shortcuts conversion takes for speed (bench/control_flow.py, 'convert a 106-line function') give
exactly what the long way gives.

- A pass that names the nodes it rewrites (``Transformer.wants``) walks only to them: the tree it leaves
  equals the one a full walk leaves.
- The linter is not run on a file that never says ``forward`` (converter._file_findings): its answer
  for such a file is empty, whatever the file holds.
- The composite-state pass looks for an item or attribute assigned only among statements' targets,
  not in every expression: the same answer as the walk over every node.
- The statements control_flow makes for every converted statement are built directly
  (templates.make_function, return_of, runtime_call): node for node what :func:`replace` makes of
  their templates, locations (None) included.
"""

from __future__ import annotations

import textwrap

import gast
import pytest

from ast_hybrid.common.source import SourceFile
from ast_hybrid.linter import check_source
from ast_hybrid.transpiler import pipeline
from ast_hybrid.transpiler.ast_tools.naming import Namer
from ast_hybrid.transpiler.ast_tools.templates import (clone, make_function, replace, return_of, runtime_call,
                                                       tuple_of)
from ast_hybrid.transpiler.converter import PRECHECK_CODES, _file_findings
from ast_hybrid.common.walkers import walk_scope
from passes import call_trees, composite_state, logical

SOURCE = '''
def f(x, h, n, d):
    acc = x * 0.0
    if x.sum() > 1.0 and not (0 < n < 3):
        acc = acc + x
    t = jnp.tanh(acc) if h.mean() > 0 else jnp.maximum(acc, 0.0)
    ys = [y * 2 for y in h if y is not None]
    k = (lambda a: a or n)(n)
    match n:
        case 1 if d["a"] > 0:
            acc = -acc
        case _:
            pass
    while acc.max() > 0.0 and not d.get("stop"):
        acc = acc * 0.5
        f(g(h(x)), key=[z for z in ys if z])
    return acc + t + k + -n + sum(ys)
'''


def _converted(passes, wants_off=()):
    src = SourceFile.from_text(textwrap.dedent(SOURCE), "shortcut.py")
    fn = src.parse().body[0]
    ctx = pipeline.Context(src, Namer(set()))
    saved = {cls: cls.__dict__.get("wants") for cls in wants_off}
    try:
        for cls in wants_off:
            cls.wants = None          # the full walk
        return gast.dump(pipeline.transform(fn, ctx, passes), include_attributes=True)
    finally:
        for cls, w in saved.items():
            cls.wants = w


@pytest.mark.parametrize("passes", [pipeline.PASSES, (call_trees,), (logical,)],
                         ids=["pipeline", "call_trees", "logical"])
def test_a_walk_to_the_wanted_nodes_leaves_what_a_full_walk_leaves(passes):
    sparse = _converted(passes)
    full = _converted(passes, wants_off=(logical._Logical, call_trees._CallTrees))
    assert sparse == full
    assert "converted_call" in sparse or passes == (logical,)
    assert "ah__" in sparse                           # the passes did rewrite something


def test_the_linter_finds_nothing_to_refuse_in_a_file_without_forward():
    text = textwrap.dedent('''
        import jax.numpy as jnp

        def f(x):
            x[0] += 1          # an in-place op, and a host sync below
            y = float(x.sum())
            return x.asnumpy(), y
        ''')
    assert "forward" not in text
    found = [d for d in check_source(SourceFile.from_text(text, "nofwd.py"), target="jax")
             if d.code in PRECHECK_CODES and d.severity.value == "error"]
    assert found == [] and _file_findings("nofwd.py", text) == ()
    with_forward = text.replace("def f(x):", "def hybrid_forward(self, F, x):").replace("import jax", "import mxnet")
    with_forward = "from mxnet import gluon\n\nclass B(gluon.HybridBlock):\n" + textwrap.indent(
        with_forward.split("\n", 2)[2], "    ")
    assert {d.code for d in _file_findings("fwd.py", with_forward)} & PRECHECK_CODES   # the linter ran


def _same(a, b, path="node"):
    """``a`` and ``b`` equal node for node: classes, every field and location attribute."""
    if isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{path}[{i}]")
        return
    assert type(a) is type(b), path
    if not isinstance(a, gast.AST):
        assert a == b, path
        return
    for f in a._fields:
        assert (f in a.__dict__) == (f in b.__dict__), f"{path}.{f}"
        _same(getattr(a, f, None), getattr(b, f, None), f"{path}.{f}")
    for f in a._attributes:     # a location is read as getattr(node, f, None): missing is None
        assert getattr(a, f, None) == getattr(b, f, None), f"{path}.{f}"


def _expr(text):
    return gast.parse(text).body[0].value


@pytest.mark.parametrize("state", [(), ("x",), ("x", "ah__brk_0", "y")])
def test_statements_built_directly_equal_their_templates(state):
    names = gast.Tuple(elts=[gast.Constant(value=v, kind=None) for v in state], ctx=gast.Load())
    for method, operands, holders in [("if_stmt", [_expr("x.sum() > (k := 0)"), "t", "f"], "test, t, f"),
                                      ("while_stmt", ["test", "body"], "test, body"),
                                      ("for_stmt", [_expr("range(n)"), gast.Constant(value=None, kind=None), "b"],
                                       "it, test, body")]:
        template = f"ah__.{method}({holders}, args, names)"
        given = dict(zip([h.strip() for h in holders.split(",")], [clone(o) for o in operands]))
        if state:
            want = replace("out = " + template, out=tuple_of(state), args=tuple_of(state), names=names, **given)
        else:
            want = replace(template, args=tuple_of(()), names=names, **given)
        got = runtime_call(method, [*operands, tuple_of(state), names], tuple_of(state) if state else None)
        _same([got], want)
    _same([return_of(tuple_of(state))], replace("return out", out=tuple_of(state)))
    _same([return_of(_expr("a and b"))], replace("return test", test=_expr("a and b")))
    body = [gast.Pass()]
    for declared in (None, {"global": ["g"], "nonlocal": []}):
        _same(make_function("fn", ["p", *state], body, declared),
              replace("def fname(params):\n    body", fname="fn", params=["p", *state],
                      body=([gast.Global(names=["g"])] if declared else []) + body)[0])


@pytest.mark.parametrize("body", [
    "y = x + 1", "d['a'] = 1", "self.x = 2", "a, (b, d[0]) = t", "[*rest, o.p] = t", "d['n'] += 1",
    "o.a: int = 3", "for o.i in range(3): pass", "with ctx() as w.v: pass", "with ctx() as (u, w[1]): pass",
    "if x:\n    while y:\n        d[k] = 1", "try:\n    pass\nexcept E as e:\n    o.e = e",
    "match x:\n    case 1:\n        d[1] = 2", "del d['a']", "ys = [d for d[0] in xs]",
    "def g():\n    d['a'] = 1", "lambda: (y := 1)", "print(o.a, d[1])"])
def test_containers_stored_found_from_targets_alone(body):
    fn = gast.parse("def f(x, d, o, t, xs):\n" + textwrap.indent(body, "    ")).body[0]
    every_node = any(n.__class__ in (gast.Subscript, gast.Attribute) and n.ctx.__class__ is gast.Store
                     for top in fn.body for n in walk_scope(top))
    assert composite_state._stores_into_containers(fn) == every_node
