"""Fixes: applied edits give valid code, re-linting finds no fix for the same thing, safety is right."""

import pytest

from lint_helpers import apply_edits, check, model


def fixes(src, target="jax"):
    return [(d.code, d.fix.edits[0].content, d.fix.applicability) for d in check(src, target) if d.fix]


@pytest.mark.parametrize("stmt,expected", [
    ("z += y", "z = z + y"),
    ("z -= y - 1", "z = z - (y - 1)"),
    ("z *= y + 1", "z = z * (y + 1)"),
    ("z += y * 2", "z = z + y * 2"),
    ("z /= F.sum(y)", "z = z / F.sum(y)"),
    ("z **= 2", "z = z ** 2"),
    ("z -= -y", "z = z - -y"),
    ("z //= y if True else 1", "z = z // (y if True else 1)"),
])
def test_hy001_fix_text_and_precedence(stmt, expected):
    src = model(f"z = F.relu(x)\n{stmt}\nreturn z")
    assert fixes(src) == [("HY001", expected, "safe")]


@pytest.mark.parametrize("body", [
    "x += y\nreturn x",                            # a parameter: the caller's array
    "z = x\nz += 1\nreturn z",                      # a copy of another reference
    "z = F.relu(x)\nw = z\nz += 1\nreturn w",       # aliased by a later name... before the update
    "z = F.relu(x)\nkeep = [z]\nz += 1\nreturn z",  # stored in a container
    "z = F.relu(x)\nv = z.reshape((-1,))\nz += 1\nreturn v",  # a view
    "z = F.relu(x)\nself.helper(z)\nz += 1\nreturn z",        # escapes into a non-F call
    "for z in F.split(x, num_outputs=2):\n    z += 1\nreturn x",
])
def test_hy001_unsafe_when_aliased(body):
    [(code, _, appl)] = fixes(model(body))
    assert (code, appl) == ("HY001", "unsafe")


def test_hy001_safe_when_only_f_ops_see_it():
    src = model("z = F.relu(x)\na = F.sum(z)\nz += a\nreturn F.relu(z, name='r')")
    assert [a for _, _, a in fixes(src)] == ["safe"]


def test_hy007_fix_uses_f_and_is_unsafe():
    src = model("a = nd.relu(x)\nb = mx.nd.random.uniform(shape=(2,))\nreturn a + b",
                header="import mxnet as mx")
    assert fixes(src, "mxnet") == [("HY007", "F", "unsafe"), ("HY007", "F", "unsafe")]
    fixed = apply_edits(src, check(src, "mxnet"), unsafe=True)
    assert "F.relu(x)" in fixed and "F.random.uniform(shape=(2,))" in fixed


def test_hy007_no_fix_without_f():
    # a helper the forward gives its tensors but not F: nothing to call instead
    src = ("from mxnet import nd\nfrom mxnet.gluon import HybridBlock\n"
           "def act(x):\n    return nd.relu(x)\n"
           "class N(HybridBlock):\n    def hybrid_forward(self, F, x):\n        return act(x)\n")
    [d] = check(src, "mxnet")
    assert d.code == "HY007" and d.fix is None


@pytest.mark.parametrize("target", ["jax", "mxnet"])
@pytest.mark.parametrize("unsafe", [False, True])
def test_fixes_are_idempotent_on_the_example(target, unsafe):
    from pathlib import Path
    text = (Path(__file__).resolve().parents[2] / "examples" / "lint_model.py").read_text()
    before = check(text, target)
    once = apply_edits(text, before, unsafe=unsafe)
    after = check(once, target)
    applied = [d for d in before if d.fix and (unsafe or d.fix.applicability == "safe")]
    assert applied, "the example must have fixes"
    # nothing fixed comes back; nothing new appears
    left = [d for d in after if d.fix and (unsafe or d.fix.applicability == "safe")]
    assert left == []
    assert {d.code for d in after} <= {d.code for d in before}
    assert len(after) == len(before) - len(applied)
    twice = apply_edits(once, after, unsafe=unsafe)
    assert twice == once


def test_multiline_value_fix_is_valid_python():
    src = model("z = F.relu(x)\nz += (y +\n      1)\nreturn z")
    out = apply_edits(src, check(src), unsafe=False)
    assert "z = z + (y +\n              1)" in out
    assert [d.code for d in check(out)] == []
