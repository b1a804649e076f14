"""Each pass alone keeps the function's behaviour on concrete Python values.

The docstring of each pass shows its rewrite (run as a doctest); here each
pass is applied alone to small programs and the result must give the
original's results, side effects and exceptions on concrete inputs.  The
break and return passes stop a ``for`` loop through an extra test that only
the control-flow pass turns into code, so on ``for`` loops they are checked
together with it.  ``test_pipeline_*`` then check the whole pipeline.
"""

from __future__ import annotations

import itertools

import pytest
from helpers import only

from passes import (asserts, break_statements, call_trees, class_scope, composite_state, continue_statements,
                    control_flow, logical, return_statements, variables)


def same(original, converted, *argsets):
    for args in argsets:
        want = _outcome(original, args)
        got = _outcome(converted, args)
        assert got == want, f"args={args}: converted gave {got}, original {want}"


def _outcome(fn, args):
    try:
        return ("ok", fn(*args))
    except Exception as exc:  # the same exception type and message
        return ("raised", type(exc).__name__, str(exc))


SMALL = [(a, b) for a in (-2, 0, 3) for b in (-1, 0, 2)]


# -- class_scope ---------------------------------------------------------------------

CLASS_SRC = '''
class Base:
    def f(self, x):
        return x + 1

class Child(Base):
    def __init__(self):
        self.__k = 10

    def f(self, x):
        return super().f(x) * self.__k + self.__helper()

    def __helper(self):
        return 7

f = Child.f
'''


def test_class_scope_super_and_private_names():
    original, converted = only([class_scope], CLASS_SRC)
    obj = original.__globals__["Child"]()
    assert converted(obj, 3) == original(obj, 3) == 47


# -- asserts -------------------------------------------------------------------------

def test_asserts_python_values():
    original, converted = only([asserts], '''
    def f(a, b):
        assert a > b, f"{a} <= {b}"
        assert a
        return a - b
    ''')
    same(original, converted, *SMALL)


# -- logical -------------------------------------------------------------------------

LOGICAL_SRC = '''
log = []

def t(name, value):
    log.append(name)
    return value

def f(a, b):
    log.clear()
    r1 = t("a", a) and t("b", b) and t("c", a + b)
    r2 = t("d", a) or t("e", b) or t("f", 0)
    r3 = not t("g", a)
    r4 = t("h", a) if t("i", b) else t("j", -a)
    r5 = a < b <= 2
    r6 = -1 < a + b < 3
    return r1, r2, r3, r4, r5, r6, tuple(log)
'''


def test_logical_keeps_values_and_short_circuit():
    original, converted = only([logical], LOGICAL_SRC)
    same(original, converted, *SMALL)


# -- call_trees ----------------------------------------------------------------------

def test_call_trees_arguments_of_every_kind():
    original, converted = only([call_trees], '''
    def g(a, b=2, *rest, c, d=4, **kw):
        return (a, b, rest, c, d, sorted(kw.items()))

    def f(a, b):
        args = [a, b, 9]
        kws = {"z": a}
        out = [g(a, c=b), g(*args, c=1, **kws), g(a, b, d=a, c=b, e=1), sorted([b, a])]
        print(out[:1], sep="|")
        return out
    ''')
    same(original, converted, *SMALL)


# -- continue / break / return -------------------------------------------------------

JUMPS = '''
def f(a, b):
    out = []
    for i in range(5):
        if i == a:
            continue
        j = 0
        while j < 4:
            j += 1
            if j == b:
                break
            if i + j == 5:
                continue
            out.append((i, j))
        else:
            out.append("while-else")
        if len(out) > 6 + a:
            break
    else:
        out.append("for-else")
    return out
'''


STOP_FOR = [variables, control_flow]   # what turns a `for`'s extra test into code


@pytest.mark.parametrize("passes", [[continue_statements], [continue_statements, break_statements, *STOP_FOR]],
                         ids=["continue", "continue+break"])
def test_continue_and_break(passes):
    original, converted = only(passes, JUMPS)
    same(original, converted, *SMALL)


def test_break_in_for_loops():
    original, converted = only([break_statements, *STOP_FOR], '''
    def f(a, b):
        out = []
        for i in range(6):
            for j in range(3):
                if j == b:
                    break
                out.append((i, j))
            else:
                out.append("inner-else")
            if i == a:
                break
        else:
            out.append("else")
        return out
    ''')
    same(original, converted, *SMALL)


def test_break_alone_in_while_loops():
    original, converted = only([break_statements], '''
    def f(a, b):
        out = []
        while a < 6:
            a += 1
            if a == b + 3:
                break
            out.append(a)
        else:
            out.append("else")
        return out
    ''')
    same(original, converted, *SMALL)


RETURNS = '''
def f(a, b):
    if a > 2:
        return "big"
    for i in range(4):
        while b > i:
            if b == 2:
                return ("inner", i)
            b -= 1
        if i == a:
            return i * 10
    if b < 0:
        return
    return a + b
'''


def test_return_statements():
    original, converted = only([return_statements, *STOP_FOR], RETURNS)
    same(original, converted, *SMALL)


def test_all_jumps_together():
    original, converted = only([continue_statements, break_statements, return_statements, *STOP_FOR], JUMPS)
    same(original, converted, *SMALL)
    original, converted = only([continue_statements, break_statements, return_statements, *STOP_FOR], RETURNS)
    same(original, converted, *SMALL)


def test_return_only_at_the_end_is_left_alone():
    from ast_hybrid.transpiler.passdoc import run
    fn = run(return_statements, "def f(x):\n    y = x + 1\n    return y\n")
    assert [type(s).__name__ for s in fn.body] == ["Assign", "Return"]


# -- variables -----------------------------------------------------------------------

def test_variables_unbound_reads_raise_as_python():
    original, converted = only([variables], '''
    def f(a, b):
        if a > 0:
            y = a
        for i in range(b):
            z = i
        return y + z
    ''')
    same(original, converted, *SMALL)


# -- control_flow --------------------------------------------------------------------

CONTROL = '''
def f(a, b):
    acc = 0
    if a > 0:
        first = a
    else:
        first = -a
    for i in range(3):
        if i == b:
            hit = i
        acc = acc + i * first
    k = 0
    while k < a:
        k = k + 1
        if k > 1:
            acc = acc - k
    total = acc + k
    return total, first, i
'''


def test_control_flow_python_values():
    original, converted = only([variables, control_flow], CONTROL)
    same(original, converted, *SMALL)


def test_control_flow_undefined_after_branch_raises_as_python():
    original, converted = only([variables, control_flow], '''
    def f(a, b):
        for i in range(a):
            if i == b:
                hit = i
        return hit
    ''')
    same(original, converted, *SMALL)


def test_control_flow_nested_scopes_get_their_own_placeholders():
    # a variable first assigned inside an `if` nested in a branch, read only in that branch
    original, converted = only([variables, control_flow], '''
    def f(a, b):
        out = 0
        if a > 0:
            if b > 0:
                v = 1
            else:
                v = 2
            out = v
            for i in range(b):
                w = i
            if b > 0:
                out = out + w
        return out
    ''')
    same(original, converted, *SMALL)


# -- composite_state -----------------------------------------------------------------

COMPOSITES = '''
class Box:
    pass


def f(a, b):
    d = {"h": a}
    box = Box()
    box.inner = Box()
    box.inner.v = 0
    out = [0, 0]
    k = "h"
    for i in range(3):
        if i == b:
            d["new"] = i                # a key first set inside: absent on other paths
        d[k] = d[k] + i
        box.inner.v += a
        if a > i:
            out[0] = out[0] + 1
        else:
            out[-1] = out[-1] - 1
    while box.inner.v < 10 and a > 0:
        box.inner.v = box.inner.v * 2
    if b > 0:
        box.extra = b                   # an attribute set on one path only
    return sorted(d.items()), box.inner.v, out, getattr(box, "extra", None)
'''


def test_composite_state_python_values():
    for passes in ([composite_state], [composite_state, variables, control_flow]):
        original, converted = only(passes, COMPOSITES)
        same(original, converted, *SMALL)


def test_composite_state_refused_targets_are_left_as_written():
    # a key the loop assigns, an expression key, a slice: not carried, and still plain Python on Python values
    original, converted = only([composite_state, variables, control_flow], '''
    def f(a, b):
        d, lst = {}, [0, 1, 2, 3]
        for i in range(a):
            d[i] = i * b
            d[i + 100] = b
            lst[1:3] = [b, b]
        return sorted(d.items()), lst
    ''')
    same(original, converted, *SMALL)


def test_composite_state_annotates_what_it_carries_and_why_not():
    import gast
    from ast_hybrid.transpiler.ast_tools.annotations import Anno, anno_get
    from ast_hybrid.transpiler.ast_tools.composites import Refused
    from ast_hybrid.transpiler.ast_tools.naming import Namer
    from ast_hybrid.transpiler.pipeline import Context
    from ast_hybrid.common.source import SourceFile

    text = "def f(x, n):\n    d = {}\n    for i in range(n):\n        d['a'] = x\n        d[i] = x\n        G[0] = x\n"
    fn = gast.parse(text).body[0]
    loop = fn.body[1]
    ctx = Context(SourceFile.from_text(text), Namer())
    composite_state.transform(fn, ctx)
    notes = anno_get(loop, Anno.COMPOSITES)
    carried = [v for v in notes.values() if isinstance(v, str)]
    refused = sorted((v.text, v.reason) for v in notes.values() if isinstance(v, Refused))
    assert [ctx.display[v] for v in carried] == ["d['a']"]
    assert refused == [("G[0]", "`G` is not a variable of this function (a global or closure variable)"),
                       ("d[i]", "its key `i` is assigned inside it")]


def test_pipeline_on_python_values_equals_plain_python():
    """The whole pipeline, applied to the jump programs, on plain Python values."""
    from ast_hybrid.transpiler.pipeline import PASSES
    for src in (JUMPS, RETURNS, CONTROL, LOGICAL_SRC, COMPOSITES):
        original, converted = only(PASSES, src)
        same(original, converted, *SMALL)


def test_every_pass_is_in_the_pipeline_once():
    from ast_hybrid.transpiler.pipeline import PASSES
    import passes
    import pkgutil
    modules = {m.name for m in pkgutil.iter_modules(passes.__path__) if not m.name.startswith("_")}
    assert sorted(p.__name__.rsplit(".", 1)[1] for p in PASSES) == sorted(modules)
    assert len(set(PASSES)) == len(PASSES)


def test_pass_order_permutations_of_jumps_agree():
    for order in itertools.permutations([continue_statements, break_statements, return_statements]):
        original, converted = only([*order, *STOP_FOR], JUMPS)
        same(original, converted, *SMALL[:3])
