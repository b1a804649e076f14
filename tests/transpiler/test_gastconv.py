"""``ast_hybrid.common.gastconv`` gives exactly what gast's own translators give, on real code."""

from __future__ import annotations

import ast

import gast
import pytest

from ast_hybrid.common.gastconv import to_ast, to_gast

SNIPPETS = [
    "def f(a, /, b: int = 1, *args, c, d=2, **kw) -> int:\n    return a\n",
    "async def g():\n    async with a as b:\n        pass\n    async for x in y:\n        await x\n",
    "class C(B, metaclass=M):\n    x: int = 1\n    def m(self):\n        return super().m()\n",
    "try:\n    pass\nexcept (A, B) as err:\n    raise X from err\nexcept C:\n    pass\n"
    "else:\n    pass\nfinally:\n    pass\n",
    "match p:\n    case [1, *rest]:\n        pass\n    case {'k': v, **others}:\n        pass\n"
    "    case Point(x=px) as pt if px > 0:\n        pass\n",
    "x = [i for i in range(3) if i if not i]\ny = {k: v for k, v in d.items()}\ndef gen():\n    z = (yield)\n",
    "f'{a!r:>{width}} {b}'\nlambda *a, k=1, **kw: (a, k)\ndel a[1:2, ::3], b.c\nglobal g\n",
    "with open(p) as (a, b), q:\n    x @= y ** -z\n    w = (v := 3)\n",
]


def _same(a, b):
    return ast.dump(a, include_attributes=True) == ast.dump(b, include_attributes=True)


@pytest.mark.parametrize("text", SNIPPETS)
def test_both_ways_on_every_construct(text):
    tree = ast.parse(text)
    ours, theirs = to_gast(tree), gast.ast_to_gast(tree)
    assert _same(ours, theirs)
    assert _same(to_ast(ours), gast.gast_to_ast(theirs))
    compile(to_ast(ours), "<t>", "exec")


def test_offsets_move_every_location():
    tree = to_gast(ast.parse("def f(x):\n    return x\n"))
    moved = to_ast(tree, 9, 4)
    ret = moved.body[0].body[0]
    assert (moved.body[0].lineno, moved.body[0].col_offset) == (10, 4)
    assert (ret.lineno, ret.col_offset, ret.end_col_offset) == (11, 8, 16)
    assert (moved.body[0].args.args[0].lineno, moved.body[0].args.args[0].col_offset) == (10, 10)


@pytest.mark.corpus
def test_every_file_of_mxnet_gluon(gluon_tree):
    files = sorted(gluon_tree.rglob("*.py"))
    for path in files:
        tree = ast.parse(path.read_text())
        ours, theirs = to_gast(tree), gast.ast_to_gast(tree)
        assert _same(ours, theirs), path
        assert _same(to_ast(ours), gast.gast_to_ast(theirs)), path
    assert len(files) > 40
